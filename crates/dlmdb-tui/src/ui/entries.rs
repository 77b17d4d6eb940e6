//! The entry browser pane, and how bytes are shown (text, escaped text,
//! hex, or a number for INTEGERKEY / INTEGERDUP items).

use super::lists::{num, render_table, text};
use super::{message_pane, pane};
use crate::app::{App, Focus};
use dlmdb::DatabaseFlags;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::widgets::Widget;

/// How [`show_bytes`] rendered some bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Printable UTF-8 as is.
    Text,
    /// Mostly printable ASCII: other bytes as `\hh`, `\` doubled (like `mdb_dump -p`).
    Escaped,
    Hex,
    /// A native unsigned integer in decimal.
    Number,
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
    (hex::encode(b), Shown::Hex)
}

/// As [`show_bytes`], but a 4- or 8-byte item of an integer-keyed tree is
/// shown as its number.
pub fn show_item(b: &[u8], integer: bool, force_hex: bool) -> (String, Shown) {
    match crate::pages::as_integer(b, integer && !force_hex) {
        Some(n) => (n.to_string(), Shown::Number),
        None => show_bytes(b, force_hex),
    }
}

pub(super) fn shown_style(how: Shown) -> Style {
    match how {
        Shown::Text | Shown::Number => Style::new(),
        Shown::Escaped => Style::new().fg(Color::LightBlue),
        Shown::Hex => Style::new().fg(Color::Yellow),
    }
}

pub struct EntriesPane<'a> {
    pub app: &'a App,
}

impl Widget for EntriesPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let b = &app.browser;
        let focused = app.focus == Focus::Entries;
        let Some(db) = &b.db else {
            message_pane(
                "Enter on a database opens its entries here.",
                "Entries".into(),
                focused,
                area,
                buf,
            );
            return;
        };
        let summary = app.snapshot.dbs.iter().find(|d| &d.name == db);
        let entries = summary.map_or(0, |d| d.stat.entries);
        let flags = summary.map_or(DatabaseFlags::empty(), |d| d.flags);
        let int_keys = flags.contains(DatabaseFlags::INTEGER_KEY);
        let int_vals = flags.contains(DatabaseFlags::DUP_SORT | DatabaseFlags::INTEGER_DUP);
        let shown = b.visible().len() as u64;
        let place = match b.first_rank {
            // Ranks are 0-based, as in `dlmdb` and `#N`.
            Some(r) if shown > 0 => format!("rows {}-{} of {entries} (0-based)", r, r + shown - 1),
            _ if b.more_below() => format!("({entries}) more below"),
            _ => format!("({entries})"),
        };
        let title = format!(
            "Entries: {} {place}{}",
            crate::model::display_name(db),
            if b.force_hex { " [hex]" } else { "" }
        );
        if b.rows.is_empty() {
            message_pane("(empty)", title, focused, area, buf);
            return;
        }
        let dim = Style::new().fg(Color::DarkGray);
        let rows: Vec<Vec<(String, Style)>> = b
            .visible()
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let (k, how) = show_item(&r.key[..r.key.len().min(512)], int_keys, b.force_hex);
                let kcell = if b.dupsort && !r.first_dup {
                    if i == 0 {
                        (format!("... {k}"), dim)
                    } else {
                        ("  `-".to_string(), dim)
                    }
                } else {
                    (k, shown_style(how))
                };
                // A cell shows at most a screen's width: don't format megabytes.
                let (v, vhow) = show_item(&r.val[..r.val.len().min(512)], int_vals, b.force_hex);
                let mut cells = vec![kcell];
                if b.dupsort {
                    cells.push(if r.first_dup || i == 0 {
                        (r.dups.to_string(), Style::new())
                    } else {
                        (String::new(), Style::new())
                    });
                }
                cells.push((r.val.len().to_string(), Style::new()));
                cells.push((v, shown_style(vhow)));
                cells
            })
            .collect();
        let cols: Vec<_> = if b.dupsort {
            vec![
                text("key", 0),
                num("dups", 1),
                num("len", 2),
                text("value", 0),
            ]
        } else {
            vec![text("key", 0), num("len", 2), text("value", 0)]
        };
        render_table(area, buf, pane(title, focused), &cols, &rows, Some(b.sel));
    }
}
