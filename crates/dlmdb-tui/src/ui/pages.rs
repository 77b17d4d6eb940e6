//! The page browser pane: breadcrumb in the title, the page header panel,
//! then the page's items or (`h`) its bytes in hex with the selected
//! node highlighted.

use super::entries::{show_item, shown_style};
use super::lists::{num, render_table, text, text_end, Col};
use super::{ellipsize_left, message_pane, pane};
use crate::app::{App, Focus};
use crate::pages::{ItemData, PageDump};
use dlmdb_format::PageKind;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

pub struct PagesPane<'a> {
    pub app: &'a App,
}

/// Lay `pieces` out in lines of at most `width` columns, never splitting
/// a piece (a piece wider than the line gets a line of its own).
pub fn flow(pieces: &[String], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for p in pieces {
        let need = if cur.is_empty() {
            p.chars().count()
        } else {
            cur.chars().count() + 2 + p.chars().count()
        };
        if !cur.is_empty() && need > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push_str("  ");
        }
        cur.push_str(p);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Screen row of the first item row of `p` drawn in `area`, and how many
/// item rows fit (border, header panel and column header above).
pub fn list_geometry(area: Rect, p: &PageDump) -> (u16, usize) {
    let inner_w = area.width.saturating_sub(2) as usize;
    let panel = flow(&header_pieces(p), inner_w).len() + p.problem.is_some() as usize;
    let top = area.y + 1 + panel as u16 + 1;
    let rows = (area.y + area.height).saturating_sub(1).saturating_sub(top) as usize;
    (top, rows.max(1))
}

/// The header panel's pieces for `p`.
pub fn header_pieces(p: &PageDump) -> Vec<String> {
    let h = &p.header;
    let mut v = vec![
        format!("page {}", p.at.label()),
        format!("{} ({:#06x})", h.flags.names(), h.raw_flags),
    ];
    match p.kind {
        PageKind::Overflow => {
            let run = p.overflow.map_or(0, |o| o.pages);
            v.push(format!("overflow run of {run} pages"));
            if let Some(size) = p.overflow.and_then(|o| o.value_size) {
                v.push(format!("value {size} B from offset 16"));
            }
        }
        PageKind::Branch | PageKind::Leaf | PageKind::Leaf2 => {
            v.push(format!("items {}", p.items.len()));
            v.push(format!("lower {} upper {}", h.lower, h.upper));
            v.push(format!(
                "free {} B, fill {:.1}%",
                p.free_bytes(),
                100.0 * p.used_bytes() as f64 / p.bytes.len().max(1) as f64
            ));
            let pad = match p.kind {
                PageKind::Leaf2 => format!("pad {} (item size)", h.pad),
                PageKind::Leaf if p.compressed => format!("pad {} (longest key)", h.pad),
                _ => format!("pad {}", h.pad),
            };
            v.push(pad);
            if p.compressed {
                v.push("prefix-compressed".into());
            }
            if p.ctx.dup_tree {
                v.push("duplicates".into());
            }
        }
        _ => {}
    }
    v.push(format!("{} B", p.bytes.len()));
    v.push(format!("txn {}", p.txnid));
    v
}

/// What an item's data is, in words.
fn data_text(d: &ItemData) -> String {
    match d {
        ItemData::Child { .. } => String::new(),
        ItemData::Value { size, .. } => format!("value {size} B"),
        ItemData::Overflow { pgno, size, pages } => format!(
            "overflow p{pgno} x{} pages, {size} B",
            pages.map_or("?".to_string(), |n| n.to_string())
        ),
        ItemData::SubPage { size, items } => format!("sub-page {items} values, {size} B"),
        ItemData::SubDb(r) => format!(
            "sub-tree root p{}, {} values, depth {}",
            r.root, r.entries, r.depth
        ),
        ItemData::NamedDb(r) => format!(
            "database root p{}, {} entries, flags {}",
            r.root,
            r.entries,
            r.db_flags().names()
        ),
        ItemData::DupValue | ItemData::Leaf2 => "-".to_string(),
        ItemData::Bad(e) => format!("BAD: {e}"),
    }
}

/// Hex dump lines of `b`: offset, 16 bytes, printable column.
pub fn hexdump(b: &[u8]) -> Vec<String> {
    b.chunks(16)
        .enumerate()
        .map(|(i, c)| {
            let hex: Vec<String> = c.iter().map(|x| format!("{x:02x}")).collect();
            let txt: String = c
                .iter()
                .map(|&x| {
                    if (0x20..0x7f).contains(&x) {
                        x as char
                    } else {
                        '.'
                    }
                })
                .collect();
            format!("{:06x}  {:<47}  {txt}", i * 16, hex.join(" "))
        })
        .collect()
}

/// Hex lines of `b` from line `top`, `rows` of them, bytes in `mark` highlighted.
fn hex_lines(
    b: &[u8],
    top: usize,
    rows: usize,
    mark: Option<std::ops::Range<usize>>,
) -> Vec<Line<'static>> {
    let hi = Style::new()
        .add_modifier(Modifier::REVERSED)
        .fg(Color::Cyan);
    b.chunks(16)
        .enumerate()
        .skip(top)
        .take(rows)
        .map(|(i, c)| {
            let mut spans = vec![Span::styled(
                format!("{:06x}  ", i * 16),
                Style::new().fg(Color::DarkGray),
            )];
            for j in 0..16 {
                let at = i * 16 + j;
                let txt = c.get(j).map_or("  ".to_string(), |x| format!("{x:02x}"));
                let on = mark.as_ref().is_some_and(|m| m.contains(&at));
                spans.push(Span::styled(txt, if on { hi } else { Style::new() }));
                spans.push(Span::raw(" "));
            }
            spans.push(Span::raw(" "));
            for (j, &x) in c.iter().enumerate() {
                let ch = if (0x20..0x7f).contains(&x) {
                    x as char
                } else {
                    '.'
                };
                let on = mark.as_ref().is_some_and(|m| m.contains(&(i * 16 + j)));
                spans.push(Span::styled(
                    ch.to_string(),
                    if on { hi } else { Style::new() },
                ));
            }
            Line::from(spans)
        })
        .collect()
}

impl Widget for PagesPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let pb = &app.pages;
        let focused = app.focus == Focus::Pages;
        let Some(p) = &pb.page else {
            message_pane(
                "o on a database opens its root page; o on an entry opens its leaf; g N opens page N.",
                "Pages".into(),
                focused,
                area,
                buf,
            );
            return;
        };
        let crumbs: Vec<String> = pb.path.iter().map(|c| c.at.label()).collect();
        let head = format!(
            "Pages: {} {}{}",
            crate::model::display_name(&p.ctx.db),
            crumbs.join(" > "),
            if pb.hex { " [hex]" } else { "" }
        );
        let title = ellipsize_left(&head, (area.width as usize).saturating_sub(6));
        let block = pane(title, focused);
        let inner = block.inner(area);
        block.render(area, buf);
        let mut panel = flow(&header_pieces(p), inner.width as usize);
        if let Some(problem) = &p.problem {
            panel.push(format!("PROBLEM: {problem}"));
        }
        let [top, body] =
            Layout::vertical([Constraint::Length(panel.len() as u16), Constraint::Min(0)])
                .areas(inner);
        let label = Style::new().fg(Color::Gray);
        Paragraph::new(
            panel
                .into_iter()
                .map(|l| {
                    if l.starts_with("PROBLEM") {
                        Line::styled(l, Style::new().fg(Color::Red))
                    } else {
                        Line::styled(l, label)
                    }
                })
                .collect::<Vec<_>>(),
        )
        .render(top, buf);
        if pb.hex
            || matches!(
                p.kind,
                PageKind::Overflow | PageKind::Meta | PageKind::Unknown
            )
        {
            let mark = p.items.get(pb.sel).map(|it| it.offset..it.offset + it.size);
            let rows = body.height as usize;
            let lines = p.bytes.len().div_ceil(16);
            let want = mark
                .as_ref()
                .map_or(0, |m| (m.start / 16).saturating_sub(1));
            let top_line = want.min(lines.saturating_sub(rows));
            Paragraph::new(hex_lines(&p.bytes, top_line, rows, mark)).render(body, buf);
            return;
        }
        let int_keys = p.ctx.integer_keys();
        let int_vals = p.ctx.integer_values();
        let plain = Style::new();
        let (cols, rows): (Vec<Col>, Vec<Vec<(String, Style)>>) = match p.kind {
            PageKind::Branch => {
                let counted = p.header.counted_branch();
                let mut cols = vec![num("#", 0), num("child", 0)];
                if counted {
                    cols.push(num("entries below", 1));
                }
                cols.extend([num("off", 4), num("size", 5), text("separator key", 0)]);
                let rows = p
                    .items
                    .iter()
                    .map(|it| {
                        let ItemData::Child { pgno, count } = &it.data else {
                            return vec![(it.index.to_string(), plain)];
                        };
                        let (k, how) = if it.index == 0 {
                            (
                                "(first child: keys below the next separator)".to_string(),
                                Style::new().fg(Color::DarkGray),
                            )
                        } else {
                            let (k, how) = show_item(&it.key, int_keys, false);
                            (k, shown_style(how))
                        };
                        let mut r = vec![(it.index.to_string(), plain), (pgno.to_string(), plain)];
                        if counted {
                            r.push((count.map_or("-".into(), |c| c.to_string()), plain));
                        }
                        r.extend([
                            (it.offset.to_string(), plain),
                            (it.size.to_string(), plain),
                            (k, how),
                        ]);
                        r
                    })
                    .collect();
                (cols, rows)
            }
            PageKind::Leaf2 => {
                let cols = vec![num("#", 0), num("off", 2), text("item", 0)];
                let rows = p
                    .items
                    .iter()
                    .map(|it| {
                        let (k, how) = show_item(&it.key, int_keys, false);
                        vec![
                            (it.index.to_string(), plain),
                            (it.offset.to_string(), plain),
                            (k, shown_style(how)),
                        ]
                    })
                    .collect();
                (cols, rows)
            }
            _ => {
                let mut cols = vec![num("#", 0), num("off", 5), num("node", 6), num("ksz", 4)];
                if p.compressed {
                    cols.push(num("shared", 3));
                }
                let key_col = if p.compressed {
                    text_end("key", 0)
                } else {
                    text("key", 0)
                };
                cols.extend([key_col, text("data", 1), text("flags", 7)]);
                let rows = p
                    .items
                    .iter()
                    .map(|it| {
                        let (k, how) = show_item(&it.key, int_keys, false);
                        let mut r = vec![
                            (it.index.to_string(), plain),
                            (it.offset.to_string(), plain),
                            (it.size.to_string(), plain),
                            (it.key_stored.to_string(), plain),
                        ];
                        if p.compressed {
                            r.push((
                                it.shared.map_or(
                                    if it.index == 0 { "trunk" } else { "raw" }.to_string(),
                                    |s| s.to_string(),
                                ),
                                plain,
                            ));
                        }
                        let data = match &it.data {
                            ItemData::Value { bytes, size } if int_vals => {
                                let (v, _) = show_item(bytes, true, false);
                                format!("value {size} B: {v}")
                            }
                            d => data_text(d),
                        };
                        let style = if matches!(it.data, ItemData::Bad(_)) {
                            Style::new().fg(Color::Red)
                        } else {
                            plain
                        };
                        r.extend([
                            (k, shown_style(how)),
                            (data, style),
                            (it.node_flags.names(), plain),
                        ]);
                        r
                    })
                    .collect();
                (cols, rows)
            }
        };
        render_table(
            body,
            buf,
            Block::new(),
            &cols,
            &rows,
            (!rows.is_empty()).then_some(pb.sel),
        );
    }
}
