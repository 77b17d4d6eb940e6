//! Rendering only: turns an [`App`] into widgets. No store access here.

use crate::app::{App, Focus, Level, Mode};
use crate::model::{flag_labels, DbDetail, DbSummary, EnvSummary};
use dlmdb::DatabaseFlags;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{
    Block, Borders, Cell, Clear, Paragraph, Row as TRow, Table, TableState, Wrap,
};
use ratatui::Frame;

/// The screen's regions.
pub struct Areas {
    pub header: Rect,
    pub dbs: Rect,
    pub detail: Rect,
    pub entries: Rect,
    pub status: Rect,
}

/// Split the screen (also used by `main` to size the entry window).
pub fn areas(full: Rect) -> Areas {
    let [header, middle, entries, status] = Layout::vertical([
        Constraint::Length(4),
        Constraint::Percentage(45),
        Constraint::Min(5),
        Constraint::Length(1),
    ])
    .areas(full);
    let [dbs, detail] =
        Layout::horizontal([Constraint::Percentage(52), Constraint::Percentage(48)]).areas(middle);
    Areas {
        header,
        dbs,
        detail,
        entries,
        status,
    }
}

/// Entry rows that fit in the entries pane (borders and column header off).
pub fn entry_rows(full: Rect) -> usize {
    (areas(full).entries.height as usize)
        .saturating_sub(3)
        .max(1)
}

/// Draw everything.
pub fn draw(f: &mut Frame, app: &App) {
    let a = areas(f.area());
    draw_header(f, app, a.header);
    draw_dbs(f, app, a.dbs);
    draw_detail(f, app, a.detail);
    draw_entries(f, app, a.entries);
    draw_status(f, app, a.status);
    match &app.mode {
        Mode::Help => draw_help(f, f.area()),
        Mode::Entry => draw_entry_popup(f, app, f.area()),
        _ => {}
    }
}

fn pane(title: String, focused: bool) -> Block<'static> {
    let style = if focused {
        Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
    } else {
        Style::new().fg(Color::DarkGray)
    };
    Block::new()
        .borders(Borders::ALL)
        .border_style(style)
        .title(Span::styled(
            title,
            Style::new().add_modifier(Modifier::BOLD),
        ))
}

/// `8589934592` -> `8.0 GiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// How [`show_bytes`] rendered some bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Printable UTF-8 as is.
    Text,
    /// Mostly printable ASCII: other bytes as `\hh`, `\` doubled (like `mdb_dump -p`).
    Escaped,
    Hex,
}

/// Bytes as text when printable, as escaped text when mostly printable,
/// else as hex.
pub fn show_bytes(b: &[u8], force_hex: bool) -> (String, Shown) {
    if !force_hex {
        if let Ok(s) = std::str::from_utf8(b) {
            if !s.chars().any(|c| c.is_control()) {
                return (s.to_string(), Shown::Text);
            }
        }
        let printable = b.iter().filter(|&&x| (0x20..0x7f).contains(&x)).count();
        if b.len() >= 4 && printable * 4 >= b.len() * 3 {
            let mut s = String::with_capacity(b.len() + 8);
            for &x in b {
                if x == b'\\' {
                    s.push_str("\\\\");
                } else if (0x20..0x7f).contains(&x) {
                    s.push(x as char);
                } else {
                    s.push_str(&format!("\\{x:02x}"));
                }
            }
            return (s, Shown::Escaped);
        }
    }
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    (s, Shown::Hex)
}

fn shown_style(how: Shown) -> Style {
    match how {
        Shown::Text => Style::new(),
        Shown::Escaped => Style::new().fg(Color::LightBlue),
        Shown::Hex => Style::new().fg(Color::Yellow),
    }
}

/// Compact flag codes for the database table.
fn flag_codes(f: DatabaseFlags) -> String {
    let table = [
        (DatabaseFlags::DUP_SORT, "DUP"),
        (DatabaseFlags::DUP_FIXED, "FIX"),
        (DatabaseFlags::INTEGER_KEY, "IKEY"),
        (DatabaseFlags::INTEGER_DUP, "IDUP"),
        (DatabaseFlags::REVERSE_KEY, "RKEY"),
        (DatabaseFlags::REVERSE_DUP, "RDUP"),
        (DatabaseFlags::COUNTED, "CNT"),
        (DatabaseFlags::PREFIX_COMPRESSION, "PFX"),
    ];
    let v: Vec<&str> = table
        .iter()
        .filter(|(b, _)| f.contains(*b))
        .map(|(_, n)| *n)
        .collect();
    if v.is_empty() {
        "-".into()
    } else {
        v.join(",")
    }
}

fn draw_header(f: &mut Frame, app: &App, area: Rect) {
    let e: &EnvSummary = &app.snapshot.env;
    let layout = e.layout.map_or("?".to_string(), |l| l.to_string());
    let version = e.data_version.map_or("?".to_string(), |v| v.to_string());
    let readers = match (e.readers_held, e.readers_reading) {
        (Some(h), Some(r)) => format!("{h} held / {} max, {r} reading", e.max_readers),
        _ => "n/a (no lock file)".to_string(),
    };
    let free = e.free_pages.map_or("?".to_string(), |n| n.to_string());
    let label = Style::new().fg(Color::DarkGray);
    let l1 = Line::from(vec![
        Span::styled("layout ", label),
        Span::raw(format!("{layout} (data v{version}: {})", e.layout_reason)),
        Span::styled("  page ", label),
        Span::raw(e.page_size.to_string()),
        Span::styled("  map ", label),
        Span::raw(human(e.map_size)),
    ]);
    let used = (e.last_pgno + 1) * u64::from(e.page_size);
    let l2 = Line::from(vec![
        Span::styled("txn ", label),
        Span::raw(e.last_txnid.to_string()),
        Span::styled("  last page ", label),
        Span::raw(format!("{} ({} used)", e.last_pgno, human(used))),
        Span::styled("  free pages ", label),
        Span::raw(free),
        Span::styled("  readers ", label),
        Span::raw(readers),
    ]);
    let title = format!(" dlmdb-tui: {} ", app.title);
    f.render_widget(Paragraph::new(vec![l1, l2]).block(pane(title, false)), area);
}

fn draw_dbs(f: &mut Frame, app: &App, area: Rect) {
    let header = TRow::new([
        "database",
        "entries",
        "depth",
        "br/leaf/ovf",
        "flags",
        "size",
    ])
    .style(Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED));
    let rows: Vec<TRow> = app
        .snapshot
        .dbs
        .iter()
        .map(|d: &DbSummary| {
            if let Some(err) = &d.error {
                return TRow::new(vec![
                    Cell::from(d.label()),
                    Cell::from(format!("error: {err}")).red(),
                ]);
            }
            let s = &d.stat;
            let entries = match d.counted {
                Some(c) if c != s.entries => format!("{} (cnt {c})", s.entries),
                _ => s.entries.to_string(),
            };
            TRow::new(vec![
                Cell::from(d.label()),
                Cell::from(entries),
                Cell::from(s.depth.to_string()),
                Cell::from(format!(
                    "{}/{}/{}",
                    s.branch_pages, s.leaf_pages, s.overflow_pages
                )),
                Cell::from(flag_codes(d.flags)),
                Cell::from(human(d.bytes())),
            ])
        })
        .collect();
    let widths = [
        Constraint::Fill(2),
        Constraint::Length(9),
        Constraint::Length(5),
        Constraint::Length(13),
        Constraint::Fill(1),
        Constraint::Length(10),
    ];
    let title = format!(" Databases ({}) ", app.snapshot.dbs.len());
    let table = Table::new(rows, widths)
        .header(header)
        .block(pane(title, app.focus == Focus::Dbs))
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("> ");
    let mut state = TableState::new().with_selected(Some(app.db_sel));
    f.render_stateful_widget(table, area, &mut state);
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

/// The detail pane's text (also handy for tests).
pub fn detail_lines(d: &DbDetail) -> Vec<Line<'static>> {
    let label = Style::new().fg(Color::DarkGray);
    let head = Style::new().add_modifier(Modifier::BOLD);
    let s = &d.stat;
    let psize = u64::from(s.page_size);
    let mut out: Vec<Line> = Vec::new();
    let flags = flag_labels(d.flags);
    out.push(Line::from(vec![
        Span::styled("flags ", label),
        Span::raw(if flags.is_empty() {
            "none".to_string()
        } else {
            flags.join(" ")
        }),
    ]));
    out.push(Line::from(vec![
        Span::styled("entries ", label),
        Span::raw(s.entries.to_string()),
        Span::styled("  depth ", label),
        Span::raw(s.depth.to_string()),
        Span::styled("  pages ", label),
        Span::raw(format!(
            "{} branch, {} leaf, {} overflow = {}",
            s.branch_pages,
            s.leaf_pages,
            s.overflow_pages,
            human((s.branch_pages + s.leaf_pages + s.overflow_pages) * psize)
        )),
    ]));
    let w = &d.walk;
    let check = if d.walk_matches_stat {
        let what = if d.counters_include_subtrees {
            "matches stored counters (v2: dup sub-trees included)"
        } else if d.dup.is_some() {
            "outer tree matches stored counters"
        } else {
            "matches stored counters"
        };
        Span::styled(what, Style::new().fg(Color::Green))
    } else {
        Span::styled("DIFFERS from stored counters", Style::new().fg(Color::Red))
    };
    out.push(Line::from(vec![
        Span::styled("walk ", label),
        Span::raw(format!(
            "{} branch, {} leaf, {} overflow, fill {}: ",
            w.branch_pages,
            w.leaf_pages,
            w.overflow_pages,
            pct(w.used_bytes, w.used_bytes + w.free_bytes)
        )),
        check,
    ]));
    if !d.levels.is_empty() {
        out.push(Line::styled(
            "level  branch    leaf     nodes    fill",
            head,
        ));
        for l in &d.levels {
            let dash = |n: u64| {
                if n == 0 {
                    "-".to_string()
                } else {
                    n.to_string()
                }
            };
            out.push(Line::raw(format!(
                "{:>5} {:>7} {:>7} {:>9} {:>7}",
                l.level,
                dash(l.branch_pages),
                dash(l.leaf_pages),
                l.nodes,
                pct(l.used_bytes, l.used_bytes + l.free_bytes)
            )));
        }
    }
    let o = &d.overflow;
    if o.runs > 0 {
        out.push(Line::from(vec![
            Span::styled("overflow ", label),
            Span::raw(format!(
                "{} pages in {} values, largest {} pages, {} of the bytes used",
                o.pages,
                o.runs,
                o.largest_run,
                pct(o.used_bytes, o.allocated_bytes)
            )),
        ]));
    } else {
        out.push(Line::from(vec![
            Span::styled("overflow ", label),
            Span::raw("none"),
        ]));
    }
    if let Some(dup) = &d.dup {
        out.push(Line::from(vec![
            Span::styled("dups ", label),
            Span::raw(format!(
                "{} keys, {} values; {} inline sub-pages, {} sub-trees ({} pages), fill {}",
                dup.keys,
                dup.values,
                dup.sub_pages,
                dup.sub_trees,
                dup.sub_tree_pages,
                pct(dup.sub_used_bytes, dup.sub_used_bytes + dup.sub_free_bytes)
            )),
        ]));
    }
    if let Some(c) = &d.compression {
        let partial = if c.partial() {
            format!(
                " (first {} of {} leaves)",
                c.leaf_pages_seen, c.leaf_pages_total
            )
        } else {
            String::new()
        };
        if c.prefix {
            out.push(Line::from(vec![
                Span::styled("prefix keys ", label),
                Span::raw(format!(
                    "{} logical -> {} stored: ratio {:.2}x, {:.1}% saved{partial}",
                    human(c.logical_key_bytes),
                    human(c.stored_key_bytes),
                    c.ratio(),
                    c.saved_percent()
                )),
            ]));
        } else {
            let would = if c.logical_key_bytes == 0 {
                0.0
            } else {
                100.0 - 100.0 * c.if_compressed_bytes as f64 / c.logical_key_bytes as f64
            };
            let what = if would > 0.0 {
                format!("prefix compression would save {would:.1}%")
            } else {
                "prefix compression would not help".to_string()
            };
            out.push(Line::from(vec![
                Span::styled("keys ", label),
                Span::raw(format!(
                    "{} in {} keys, stored uncompressed; {what}{partial}",
                    human(c.logical_key_bytes),
                    c.keys
                )),
            ]));
        }
        if c.dup_values > 0 {
            let txt = if c.prefix {
                format!(
                    "{} values: {} logical -> {} stored: ratio {:.2}x",
                    c.dup_values,
                    human(c.logical_value_bytes),
                    human(c.stored_value_bytes),
                    c.value_ratio()
                )
            } else {
                let would = 100.0
                    - 100.0 * c.if_compressed_value_bytes as f64
                        / c.logical_value_bytes.max(1) as f64;
                format!(
                    "{} values, {}, stored uncompressed (compression would save {would:.1}%)",
                    c.dup_values,
                    human(c.logical_value_bytes)
                )
            };
            out.push(Line::from(vec![
                Span::styled("dup values ", label),
                Span::raw(txt),
            ]));
        }
        if let Some((ok, n)) = c.node_check {
            let st = if ok == n {
                Style::new().fg(Color::Green)
            } else {
                Style::new().fg(Color::Yellow)
            };
            out.push(Line::from(vec![
                Span::styled("leaf sizes ", label),
                Span::styled(
                    format!("{ok}/{n} leaves rebuilt byte-exact from key sizes"),
                    st,
                ),
            ]));
        }
    }
    if let Some(c) = &d.counted {
        let all = c.count_all.map_or("error".to_string(), |n| n.to_string());
        let root = c
            .root_sum
            .map_or("- (root is a leaf)".to_string(), |n| n.to_string());
        let ok = c.count_all == Some(s.entries) && c.root_sum.is_none_or(|r| r == s.entries);
        out.push(Line::from(vec![
            Span::styled("counted ", label),
            Span::raw(format!(
                "count_all {all}, root branch sum {root}, {} counted branch pages ",
                c.counted_branches
            )),
            if ok {
                Span::styled("= entries", Style::new().fg(Color::Green))
            } else {
                Span::styled("!= entries", Style::new().fg(Color::Red))
            },
        ]));
    }
    out
}

fn draw_detail(f: &mut Frame, app: &App, area: Rect) {
    let name = app
        .selected_db()
        .map(|n| crate::model::display_name(&n))
        .unwrap_or_default();
    let block = pane(format!(" Detail: {name} "), app.focus == Focus::Detail);
    let text: Text = match (&app.detail, &app.detail_error) {
        (_, Some(err)) => Text::from(Line::styled(format!("error: {err}"), Style::new().red())),
        (Some(d), None) => Text::from(detail_lines(d)),
        (None, None) => Text::raw("(no database)"),
    };
    f.render_widget(
        Paragraph::new(text)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((app.detail_scroll, 0)),
        area,
    );
}

fn draw_entries(f: &mut Frame, app: &App, area: Rect) {
    let b = &app.browser;
    let Some(db) = &b.db else {
        let p = Paragraph::new("Enter on a database opens its entries here.")
            .block(pane(" Entries ".into(), app.focus == Focus::Entries));
        f.render_widget(p, area);
        return;
    };
    let entries = app
        .snapshot
        .dbs
        .iter()
        .find(|d| &d.name == db)
        .map_or(0, |d| d.stat.entries);
    let shown = b.visible().len() as u64;
    let place = match b.first_rank {
        // COUNTED databases know where the window is.
        Some(r) if shown > 0 => format!("rows {}-{} of {entries}", r + 1, r + shown),
        _ if b.more_below() => format!("({entries}) v more"),
        _ => format!("({entries})"),
    };
    let title = format!(
        " Entries: {} {place}{} ",
        crate::model::display_name(db),
        if b.force_hex { " [hex]" } else { "" }
    );
    let dim = Style::new().fg(Color::DarkGray);
    let rows: Vec<TRow> = b
        .visible()
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let (k, how) = show_bytes(&r.key[..r.key.len().min(512)], b.force_hex);
            let kcell = if b.dupsort && !r.first_dup {
                if i == 0 {
                    Cell::from(Span::styled(format!("... {k}"), dim))
                } else {
                    Cell::from(Span::styled("  `-".to_string(), dim))
                }
            } else {
                Cell::from(Span::styled(k, shown_style(how)))
            };
            // A table cell shows at most a screen's width: don't format megabytes.
            let (v, vhow) = show_bytes(&r.val[..r.val.len().min(512)], b.force_hex);
            let vcell = Cell::from(Span::styled(v, shown_style(vhow)));
            let mut cells = vec![kcell];
            if b.dupsort {
                cells.push(if r.first_dup || i == 0 {
                    Cell::from(r.dups.to_string())
                } else {
                    Cell::from("")
                });
            }
            cells.push(Cell::from(r.val.len().to_string()));
            cells.push(vcell);
            TRow::new(cells)
        })
        .collect();
    let (header, widths): (Vec<&str>, Vec<Constraint>) = if b.dupsort {
        (
            vec!["key", "dups", "len", "value"],
            vec![
                Constraint::Percentage(38),
                Constraint::Length(6),
                Constraint::Length(6),
                Constraint::Fill(1),
            ],
        )
    } else {
        (
            vec!["key", "len", "value"],
            vec![
                Constraint::Percentage(38),
                Constraint::Length(6),
                Constraint::Fill(1),
            ],
        )
    };
    let header =
        TRow::new(header).style(Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED));
    let table = Table::new(rows, widths)
        .header(header)
        .block(pane(title, app.focus == Focus::Entries))
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("> ");
    let mut state =
        TableState::new().with_selected(if b.rows.is_empty() { None } else { Some(b.sel) });
    if b.rows.is_empty() {
        f.render_widget(
            Paragraph::new("(empty)").block(pane(title_of(db), app.focus == Focus::Entries)),
            area,
        );
    } else {
        f.render_stateful_widget(table, area, &mut state);
    }
}

fn title_of(db: &crate::model::DbName) -> String {
    format!(" Entries: {} ", crate::model::display_name(db))
}

fn draw_status(f: &mut Frame, app: &App, area: Rect) {
    let live = if app.paused {
        Span::styled(" PAUSED ", Style::new().black().on_yellow())
    } else {
        Span::styled(
            format!(" live {}s ", app.interval.as_secs_f64()),
            Style::new().black().on_green(),
        )
    };
    let mut spans = vec![live, Span::raw(format!(" txn {} ", app.snapshot.txnid))];
    if let Mode::Seek(t) = &app.mode {
        spans.push(Span::styled(
            " seek key (x:hex, u64:N, #rank): ",
            Style::new().bold(),
        ));
        spans.push(Span::raw(format!("{t}_")));
    } else if let Some((lvl, msg)) = &app.status {
        let st = match lvl {
            Level::Error => Style::new().fg(Color::Red).bold(),
            Level::Info => Style::new().fg(Color::Cyan),
        };
        spans.push(Span::styled(msg.clone(), st));
    } else if let Some(n) = app.notes.first() {
        spans.push(Span::styled(n.clone(), Style::new().fg(Color::Yellow)));
    } else {
        spans.push(Span::styled(
            "Tab pane  Enter open  / seek  r refresh  p pause  ? help  q quit",
            Style::new().fg(Color::DarkGray),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

const HELP: &[(&str, &str)] = &[
    ("Tab / Shift-Tab", "next / previous pane"),
    ("Up Down, k j", "move (detail pane: scroll)"),
    ("PgUp PgDn", "page"),
    ("Home End, g G", "first / last"),
    ("Enter", "databases: open entries; entries: show entry"),
    ("/", "seek to key: text, x:hex bytes, u32:N / u64:N"),
    ("", "#N: row N (0-based) of a COUNTED database"),
    ("x", "values as hex on/off"),
    ("r", "refresh now (new read transaction)"),
    ("p, Space", "pause / resume live refresh"),
    ("? F1", "this help"),
    ("q Esc", "quit"),
    ("", ""),
    ("Flags", "DUP dupsort, FIX dupfixed, IKEY integerkey,"),
    ("", "IDUP integerdup, RKEY/RDUP reverse, CNT counted,"),
    ("", "PFX prefix compression"),
    ("Read-only", "the data file is never written"),
];

fn draw_help(f: &mut Frame, area: Rect) {
    let r = centered(area, 68, HELP.len() as u16 + 2);
    let lines: Vec<Line> = HELP
        .iter()
        .map(|(k, v)| {
            Line::from(vec![
                Span::styled(format!("{k:<16}"), Style::new().fg(Color::Cyan).bold()),
                Span::raw(*v),
            ])
        })
        .collect();
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(pane(" Help (any key closes) ".into(), true)),
        r,
    );
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

fn draw_entry_popup(f: &mut Frame, app: &App, area: Rect) {
    let Some(r) = app.browser.selected() else {
        return;
    };
    let rect = centered(
        area,
        area.width.saturating_sub(6),
        area.height.saturating_sub(4),
    );
    let head = Style::new().bold();
    let mut lines = vec![Line::styled(format!("key ({} bytes)", r.key.len()), head)];
    let (k, how) = show_bytes(&r.key, app.browser.force_hex);
    if how != Shown::Hex {
        lines.push(Line::raw(k));
    } else {
        lines.extend(hexdump(&r.key).into_iter().map(Line::raw));
    }
    lines.push(Line::raw(""));
    let dups = if app.browser.dupsort {
        format!(", key has {} values", r.dups)
    } else {
        String::new()
    };
    lines.push(Line::styled(
        format!("value ({} bytes{dups})", r.val.len()),
        head,
    ));
    // Big values: the first 32 KiB is plenty for a look.
    const SHOW: usize = 32 << 10;
    let shown = &r.val[..r.val.len().min(SHOW)];
    let (v, how) = show_bytes(shown, app.browser.force_hex);
    if how != Shown::Hex {
        lines.push(Line::raw(v));
    } else {
        lines.extend(hexdump(shown).into_iter().map(Line::raw));
    }
    if r.val.len() > SHOW {
        lines.push(Line::styled(
            format!("... {} more bytes not shown", r.val.len() - SHOW),
            Style::new().fg(Color::DarkGray),
        ));
    }
    f.render_widget(Clear, rect);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((app.popup_scroll, 0))
            .block(pane(
                " Entry (arrows/PgUp/PgDn scroll, x hex, other keys close) ".into(),
                true,
            )),
        rect,
    );
}
