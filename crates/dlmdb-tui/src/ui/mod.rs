//! Rendering only: turns an [`App`] into widgets, one per pane. No store
//! access here.
//!
//! Screen layout: a plain header (2 lines, 3 with a warning), then the
//! database list and the detail pane side by side from 120 columns on
//! (stacked below that), then the lower pane (entries, pages, free list or
//! readers), then the status line. The focused pane's title starts with
//! `▶`, so a plain-text capture shows which one it is.

mod detail;
mod entries;
mod header;
mod lists;
mod pages;
mod popups;

pub use detail::{detail_lines, DetailPane};
pub use dlmdb::human_bytes as human;
pub use entries::{show_bytes, show_item, EntriesPane, Shown};
pub use header::HeaderBar;
pub use lists::{DbsPane, FreeListPane, ReadersPane};
pub use pages::{hexdump, list_geometry, PagesPane};
pub use popups::{EntryPopup, HelpPopup, StatusLine};

use crate::app::{App, Focus, Mode};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Span, Text};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};
use ratatui::Frame;

/// Width from which the detail pane sits beside the database list.
pub const WIDE: u16 = 120;

/// The screen's regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub header: Rect,
    pub dbs: Rect,
    pub detail: Rect,
    pub lower: Rect,
    pub status: Rect,
}

/// Split the screen for `app` (the header grows by a warning line).
pub fn areas(full: Rect, app: &App) -> Areas {
    let header_h = if app.snapshot.env.truncated() { 3 } else { 2 };
    let [header, body, status] = Layout::vertical([
        Constraint::Length(header_h),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(full);
    let db_rows = app.snapshot.dbs.len() as u16 + 3;
    let [dbs, detail, lower] = if full.width >= WIDE {
        let top = (body.height * 45 / 100).max(6);
        let [middle, lower] =
            Layout::vertical([Constraint::Length(top), Constraint::Min(0)]).areas(body);
        let [dbs, detail] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(middle);
        [dbs, detail, lower]
    } else {
        let dbs_h = db_rows.clamp(4, (body.height * 30 / 100).max(4));
        let detail_h = (body.height * 28 / 100).max(3);
        Layout::vertical([
            Constraint::Length(dbs_h),
            Constraint::Length(detail_h),
            Constraint::Min(0),
        ])
        .areas(body)
    };
    Areas {
        header,
        dbs,
        detail,
        lower,
        status,
    }
}

/// Rows of a bordered list with a column header in `area`.
pub fn list_rows(area: Rect) -> usize {
    (area.height as usize).saturating_sub(3).max(1)
}

/// First row shown of a list of `visible` rows with `sel` selected (the
/// least scrolling that keeps `sel` in view from the top).
pub fn list_offset(sel: usize, visible: usize) -> usize {
    (sel + 1).saturating_sub(visible.max(1))
}

/// Draw everything.
pub fn draw(f: &mut Frame, app: &App) {
    let a = areas(f.area(), app);
    f.render_widget(HeaderBar { app }, a.header);
    f.render_widget(DbsPane { app }, a.dbs);
    f.render_widget(DetailPane { app }, a.detail);
    match app.lower {
        Focus::Pages => f.render_widget(PagesPane { app }, a.lower),
        Focus::FreeList => f.render_widget(FreeListPane { app }, a.lower),
        Focus::Readers => f.render_widget(ReadersPane { app }, a.lower),
        _ => f.render_widget(EntriesPane { app }, a.lower),
    }
    f.render_widget(StatusLine { app }, a.status);
    match &app.mode {
        Mode::Help => f.render_widget(HelpPopup, f.area()),
        Mode::Entry => f.render_widget(EntryPopup { app }, f.area()),
        _ => {}
    }
}

/// A bordered pane; the focused one is marked `▶` in its title.
pub fn pane(title: String, focused: bool) -> Block<'static> {
    let style = if focused {
        Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
    } else {
        Style::new().fg(Color::DarkGray)
    };
    let title = if focused {
        format!("▶ {} ", title.trim())
    } else {
        format!(" {} ", title.trim())
    };
    Block::new()
        .borders(Borders::ALL)
        .border_style(style)
        .title(Span::styled(
            title,
            Style::new().add_modifier(Modifier::BOLD),
        ))
}

/// A [`pane`] holding only `msg`: nothing to list, and what to do or what
/// went wrong instead.
pub fn message_pane<'a>(
    msg: impl Into<Text<'a>>,
    title: String,
    focused: bool,
    area: Rect,
    buf: &mut Buffer,
) {
    Paragraph::new(msg)
        .block(pane(title, focused))
        .render(area, buf);
}

/// `s` in at most `w` columns: cut with `…` when longer (never silently).
pub fn ellipsize(s: &str, w: usize) -> String {
    fit(s, w, false)
}

/// `s` in at most `w` columns, keeping the end (`…` in front).
pub fn ellipsize_left(s: &str, w: usize) -> String {
    fit(s, w, true)
}

/// `s` unchanged when it fits in `w` columns, else its first (or, with
/// `keep_end`, last) `w - 1` characters with `…` on the cut side.
fn fit(s: &str, w: usize, keep_end: bool) -> String {
    let n = s.chars().count();
    if n <= w {
        return s.to_string();
    }
    if w == 0 {
        return String::new();
    }
    let mark = std::iter::once('…');
    if keep_end {
        mark.chain(s.chars().skip(n - (w - 1))).collect()
    } else {
        s.chars().take(w - 1).chain(mark).collect()
    }
}

/// `part` of `whole` as a percentage with one decimal, `-` for nothing.
pub fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

/// Columns for a table: `(header, natural width, importance)`; keeps the
/// most important that fit in `width` (1 column between each), in their
/// original order. Importance 0 is never dropped.
pub fn fit_columns(cols: &[(&str, usize, u8)], width: usize) -> Vec<usize> {
    let mut keep: Vec<usize> = (0..cols.len()).collect();
    let total = |k: &[usize]| -> usize {
        k.iter().map(|&i| cols[i].1).sum::<usize>() + k.len().saturating_sub(1)
    };
    while total(&keep) > width {
        let drop = keep
            .iter()
            .enumerate()
            .filter(|(_, &i)| cols[i].2 > 0)
            .max_by_key(|(_, &i)| cols[i].2)
            .map(|(pos, _)| pos);
        match drop {
            Some(pos) => {
                keep.remove(pos);
            }
            None => break,
        }
    }
    keep
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn ellipsis_not_cut() {
        assert_eq!(ellipsize("abcdef", 6), "abcdef");
        assert_eq!(ellipsize("abcdefg", 6), "abcde…");
        assert_eq!(ellipsize_left("3 > 17 > 42", 7), "…7 > 42");
    }

    #[test]
    fn columns_drop_by_importance() {
        let cols = [
            ("name", 10, 0),
            ("entries", 7, 1),
            ("pages", 15, 4),
            ("size", 9, 3),
        ];
        assert_eq!(fit_columns(&cols, 100), vec![0, 1, 2, 3]);
        assert_eq!(fit_columns(&cols, 30), vec![0, 1, 3]);
        assert_eq!(fit_columns(&cols, 18), vec![0, 1]);
        assert_eq!(fit_columns(&cols, 5), vec![0]);
    }

    #[test]
    fn offsets_keep_the_selection_in_view() {
        assert_eq!(list_offset(0, 5), 0);
        assert_eq!(list_offset(4, 5), 0);
        assert_eq!(list_offset(5, 5), 1);
    }
}
