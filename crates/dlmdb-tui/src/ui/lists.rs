//! Table panes: the database list, the free list and the reader table,
//! and the column fitting they share with the entry and page lists.

use super::{ellipsize, fit_columns, human, list_offset, message_pane, pane};
use crate::app::{App, Focus};
use crate::model::{flag_codes, DbSummary};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, Cell, Row, StatefulWidget, Table, TableState, Widget};

/// A column: header, importance (0 is never dropped; higher drops first),
/// numbers align right, text columns share the leftover width and get an
/// ellipsis when too long (numbers are never cut).
#[derive(Debug, Clone, Copy)]
pub(super) struct Col {
    pub head: &'static str,
    pub importance: u8,
    pub right: bool,
    pub text: bool,
    /// Cut text at the front (`…` first), keeping the end.
    pub keep_end: bool,
}

pub(super) const fn num(head: &'static str, importance: u8) -> Col {
    Col {
        head,
        importance,
        right: true,
        text: false,
        keep_end: false,
    }
}

pub(super) const fn text(head: &'static str, importance: u8) -> Col {
    Col {
        head,
        importance,
        right: false,
        text: true,
        keep_end: false,
    }
}

/// A text column cut at the front: keys that share long prefixes differ at the end.
pub(super) const fn text_end(head: &'static str, importance: u8) -> Col {
    Col {
        keep_end: true,
        ..text(head, importance)
    }
}

/// Narrowest a text column is squeezed to before columns are dropped.
const MIN_TEXT: usize = 8;

/// A table of `rows` (strings with styles) in `area`, `sel` highlighted.
pub(super) fn render_table(
    area: Rect,
    buf: &mut Buffer,
    block: Block<'static>,
    cols: &[Col],
    rows: &[Vec<(String, Style)>],
    sel: Option<usize>,
) {
    let inside = block.inner(area);
    let inner = (inside.width as usize).saturating_sub(2);
    let natural: Vec<usize> = (0..cols.len())
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.0.chars().count()))
                .max()
                .unwrap_or(0)
                .max(cols[i].head.chars().count())
        })
        .collect();
    let fitting: Vec<(&str, usize, u8)> = cols
        .iter()
        .zip(&natural)
        .map(|(c, &n)| {
            (
                c.head,
                if c.text { n.min(MIN_TEXT) } else { n },
                c.importance,
            )
        })
        .collect();
    let keep = fit_columns(&fitting, inner);
    // Widths: numbers at their natural width, text shares what is left.
    let mut width: Vec<usize> = keep.iter().map(|&i| fitting[i].1).collect();
    let used: usize = width.iter().sum::<usize>() + keep.len().saturating_sub(1);
    let mut spare = inner.saturating_sub(used);
    // Text columns share the spare width fairly: the narrowest needs are
    // met first, the rest is split evenly; the last text column takes any
    // remainder.
    let mut texts: Vec<usize> = (0..keep.len()).filter(|&k| cols[keep[k]].text).collect();
    texts.sort_by_key(|&k| natural[keep[k]].saturating_sub(width[k]));
    let mut left = texts.len();
    for &k in &texts {
        let need = natural[keep[k]].saturating_sub(width[k]);
        let give = need.min(spare / left.max(1));
        width[k] += give;
        spare -= give;
        left -= 1;
    }
    if let Some(k) = keep.iter().position(|&i| cols[i].text) {
        width[k] += spare;
    }
    let header = Row::new(keep.iter().zip(&width).map(|(&i, &w)| {
        if cols[i].right {
            format!("{:>w$}", cols[i].head)
        } else {
            cols[i].head.to_string()
        }
    }))
    .style(Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED));
    let body: Vec<Row> = rows
        .iter()
        .map(|r| {
            Row::new(keep.iter().zip(&width).map(|(&i, &w)| {
                let (s, st) = r.get(i).cloned().unwrap_or_default();
                let s = if cols[i].right {
                    format!("{s:>w$}")
                } else if cols[i].keep_end {
                    super::ellipsize_left(&s, w)
                } else {
                    ellipsize(&s, w)
                };
                Cell::from(Span::styled(s, st))
            }))
        })
        .collect();
    let widths: Vec<Constraint> = width
        .iter()
        .map(|&w| Constraint::Length(w as u16))
        .collect();
    let table = Table::new(body, widths)
        .header(header)
        .block(block)
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("> ");
    let mut state = TableState::new()
        .with_selected(sel)
        .with_offset(sel.map_or(0, |s| {
            list_offset(s, (inside.height as usize).saturating_sub(1).max(1))
        }));
    StatefulWidget::render(table, area, buf, &mut state);
}

pub struct DbsPane<'a> {
    pub app: &'a App,
}

impl Widget for DbsPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let plain = Style::new();
        let rows: Vec<Vec<(String, Style)>> = app
            .snapshot
            .dbs
            .iter()
            .map(|d: &DbSummary| {
                if let Some(err) = &d.error {
                    return vec![
                        (d.label(), plain),
                        (String::new(), plain),
                        (format!("error: {err}"), Style::new().fg(Color::Red)),
                    ];
                }
                let s = &d.stat;
                let entries = match d.counted {
                    Some(c) if c != s.entries => format!("{} (cnt {c})", s.entries),
                    _ => s.entries.to_string(),
                };
                vec![
                    (d.label(), plain),
                    (entries, plain),
                    (flag_codes(d.flags), plain),
                    (s.depth.to_string(), plain),
                    (human(d.bytes()), plain),
                    (
                        format!("{}/{}/{}", s.branch_pages, s.leaf_pages, s.overflow_pages),
                        plain,
                    ),
                ]
            })
            .collect();
        let cols = [
            text("database", 0),
            num("entries", 0),
            text("flags", 2),
            num("depth", 3),
            num("size", 4),
            num("br/leaf/ovf", 5),
        ];
        let title = format!("Databases ({})", app.snapshot.dbs.len());
        render_table(
            area,
            buf,
            pane(title, app.focus == Focus::Dbs),
            &cols,
            &rows,
            (!rows.is_empty()).then_some(app.db_sel),
        );
    }
}

/// `3-5, 9, 12-20`: runs of page numbers, ascending.
pub fn runs_text(runs: &[(u64, u64)]) -> String {
    runs.iter()
        .map(|&(first, n)| {
            if n == 1 {
                first.to_string()
            } else {
                format!("{first}-{}", first + n - 1)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub struct FreeListPane<'a> {
    pub app: &'a App,
}

impl Widget for FreeListPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let fl = &app.free_list;
        let focused = app.focus == Focus::FreeList;
        let pages: usize = fl.records.iter().map(|r| r.pages.len()).sum();
        let title = format!(
            "Free list: {} records, {pages} pages (txn {})",
            fl.records.len(),
            app.snapshot.txnid
        );
        if let Some(e) = &fl.error {
            message_pane(format!("error: {e}"), title, focused, area, buf);
            return;
        }
        if fl.records.is_empty() {
            message_pane("(the free list is empty)", title, focused, area, buf);
            return;
        }
        let plain = Style::new();
        let rows: Vec<Vec<(String, Style)>> = fl
            .records
            .iter()
            .map(|r| {
                let runs = r.runs();
                vec![
                    (r.txnid.to_string(), plain),
                    (r.pages.len().to_string(), plain),
                    (runs.len().to_string(), plain),
                    (runs_text(&runs), plain),
                ]
            })
            .collect();
        let cols = [
            num("freed by txn", 0),
            num("pages", 0),
            num("runs", 2),
            text("page runs", 1),
        ];
        render_table(area, buf, pane(title, focused), &cols, &rows, Some(fl.sel));
    }
}

pub struct ReadersPane<'a> {
    pub app: &'a App,
}

impl Widget for ReadersPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let focused = app.focus == Focus::Readers;
        let env = &app.snapshot.env;
        let Some(slots) = &app.readers.slots else {
            let msg = app.readers.error.clone().unwrap_or_else(|| {
                "no lock file (MDB_NOLOCK): the reader table is not available".to_string()
            });
            message_pane(msg, "Readers".into(), focused, area, buf);
            return;
        };
        let title = format!(
            "Readers: {} of {} slots held, last txn {}",
            slots.len(),
            env.max_readers,
            env.last_txnid
        );
        let plain = Style::new();
        let me = std::process::id() as i64;
        let rows: Vec<Vec<(String, Style)>> = slots
            .iter()
            .map(|r| {
                vec![
                    (r.pid.to_string(), plain),
                    (r.txnid.map_or("-".into(), |t| t.to_string()), plain),
                    (
                        r.txnid.map_or("idle".into(), |t| {
                            env.last_txnid.saturating_sub(t).to_string()
                        }),
                        plain,
                    ),
                    (
                        if r.pid == me { "this viewer" } else { "" }.to_string(),
                        plain,
                    ),
                    (r.thread.clone(), plain),
                ]
            })
            .collect();
        let cols = [
            num("pid", 0),
            num("txn", 0),
            num("behind", 1),
            text("who", 3),
            text("thread", 2),
        ];
        render_table(
            area,
            buf,
            pane(title, focused),
            &cols,
            &rows,
            (!rows.is_empty()).then_some(app.readers.sel),
        );
    }
}
