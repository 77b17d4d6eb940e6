//! The status line, the help overlay and the entry popup.

use super::entries::show_bytes;
use super::pages::hexdump;
use super::{pane, Shown};
use crate::app::{App, Level, Mode};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

pub struct StatusLine<'a> {
    pub app: &'a App,
}

impl Widget for StatusLine<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let live = if app.paused {
            Span::styled(" PAUSED ", Style::new().black().on_yellow())
        } else {
            Span::styled(
                format!(" live {}s ", app.interval.as_secs_f64()),
                Style::new().black().on_green(),
            )
        };
        let mut spans = vec![live, Span::raw(format!(" txn {} ", app.snapshot.txnid))];
        // What is left of the line for the message; a longer one ends in `…`.
        let room = (area.width as usize).saturating_sub(
            spans
                .iter()
                .map(|s| s.content.chars().count())
                .sum::<usize>(),
        );
        let fit = |m: &str| super::ellipsize(m, room);
        match &app.mode {
            Mode::Seek(t) => {
                spans.push(Span::styled(
                    "seek (text, x:hex, u64:N, #row): ",
                    Style::new().bold(),
                ));
                spans.push(Span::raw(format!("{t}_")));
            }
            Mode::GotoPage(t) => {
                spans.push(Span::styled("go to page: ", Style::new().bold()));
                spans.push(Span::raw(format!("{t}_")));
            }
            _ => {
                if let Some((lvl, msg)) = &app.status {
                    let st = match lvl {
                        Level::Error => Style::new().fg(Color::Red).bold(),
                        Level::Info => Style::new().fg(Color::Cyan),
                    };
                    spans.push(Span::styled(fit(msg), st));
                } else if let Some(n) = app.notes.first() {
                    spans.push(Span::styled(fit(n), Style::new().fg(Color::Yellow)));
                } else {
                    spans.push(Span::styled(
                        fit("Tab pane  Enter open  o page  1-4 views  / seek  ? help  q quit"),
                        Style::new().fg(Color::DarkGray),
                    ));
                }
            }
        }
        Paragraph::new(Line::from(spans)).render(area, buf);
    }
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

/// Every key, by pane (the README lists the same).
pub const HELP: &[(&str, &str)] = &[
    (
        "Tab / Shift-Tab",
        "next / previous pane (the focused one is marked ▶)",
    ),
    ("1 2 3 4", "lower pane: entries, pages, free list, readers"),
    ("Up Down, k j", "move; mouse: click selects, wheel scrolls"),
    ("PgUp PgDn Home End", "page, first, last (g G in lists)"),
    (
        "Enter",
        "databases: entries; entries: whole entry; pages: follow",
    ),
    ("o", "page of the entry / root page of the database"),
    ("/", "seek: text, x:hex, u32:N, u64:N; #N = row N (0-based)"),
    ("n N", "entries: next / previous distinct key"),
    ("x", "entries: values as hex on/off"),
    (
        "Backspace",
        "pages: back up the path; entries: to databases",
    ),
    ("h", "pages: raw page in hex, selected node highlighted"),
    ("g", "pages: go to page number"),
    ("r", "refresh now (new read transaction)"),
    ("p, Space", "pause / resume live refresh"),
    ("? F1", "this help"),
    ("q Esc", "quit"),
    (
        "Flags",
        "DUP FIX IKEY IDUP RKEY RDUP CNT(counted) PFX(prefix)",
    ),
];

pub struct HelpPopup;

impl Widget for HelpPopup {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let r = centered(area, 78, HELP.len() as u16 + 2);
        let kw = 19;
        let lines: Vec<Line> = HELP
            .iter()
            .map(|(k, v)| {
                Line::from(vec![
                    Span::styled(format!("{k:<kw$}"), Style::new().fg(Color::Cyan).bold()),
                    Span::raw(*v),
                ])
            })
            .collect();
        Clear.render(r, buf);
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(pane("Help (any key closes)".into(), true))
            .render(r, buf);
    }
}

pub struct EntryPopup<'a> {
    pub app: &'a App,
}

impl Widget for EntryPopup<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let Some(r) = app.browser.selected() else {
            return;
        };
        let rect = centered(
            area,
            area.width.saturating_sub(4),
            area.height.saturating_sub(2),
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
        Clear.render(rect, buf);
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((app.popup_scroll, 0))
            .block(pane(
                "Entry (arrows scroll, x hex, other keys close)".into(),
                true,
            ))
            .render(rect, buf);
    }
}
