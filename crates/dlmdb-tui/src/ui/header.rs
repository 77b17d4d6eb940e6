//! The header: path and layout on one plain line, the environment's
//! figures on the next, and a warning line when the data file is shorter
//! than the meta page's last page.

use super::{ellipsize_left, human};
use crate::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

pub struct HeaderBar<'a> {
    pub app: &'a App,
}

impl HeaderBar<'_> {
    /// `layout dlmdb-v2 (data version 2)`: the layout and why it was chosen.
    pub fn layout_text(&self) -> String {
        let e = &self.app.snapshot.env;
        let layout = e.layout.map_or("?".to_string(), |l| l.to_string());
        format!("layout {layout} ({})", e.layout_reason)
    }
}

impl Widget for HeaderBar<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let e = &self.app.snapshot.env;
        let label = Style::new().fg(Color::DarkGray);
        let w = area.width as usize;
        let tail = format!(
            "  {}  page {}  map {}",
            self.layout_text(),
            e.page_size,
            human(e.map_size)
        );
        let room = w.saturating_sub(tail.chars().count() + 11).max(12);
        let l1 = Line::from(vec![
            Span::styled("dlmdb-tui ", Style::new().add_modifier(Modifier::BOLD)),
            Span::raw(ellipsize_left(&self.app.title, room)),
            Span::raw(tail),
        ]);
        let readers = match (e.readers_held, e.readers_reading) {
            (Some(h), Some(r)) => format!("{h}/{} held, {r} reading", e.max_readers),
            _ => "no lock file".to_string(),
        };
        let free = e.free_pages.map_or("?".to_string(), |n| n.to_string());
        let l2 = Line::from(vec![
            Span::styled("txn ", label),
            Span::raw(e.last_txnid.to_string()),
            Span::styled("  last page ", label),
            Span::raw(format!("{} ({})", e.last_pgno, human(e.used_bytes()))),
            Span::styled("  free pages ", label),
            Span::raw(free),
            Span::styled("  readers ", label),
            Span::raw(readers),
        ]);
        let mut lines = vec![l1, l2];
        if e.truncated() {
            let len = e.file_len.unwrap_or(0);
            lines.push(Line::styled(
                format!(
                    "WARNING: data file is {} ({len} B) but the meta's last page {} needs {} ({} B): truncated?",
                    human(len),
                    e.last_pgno,
                    human(e.used_bytes()),
                    e.used_bytes()
                ),
                Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            ));
        }
        Paragraph::new(lines).render(area, buf);
    }
}
