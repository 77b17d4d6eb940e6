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
        // The layout line stays whole; the path gives way first.
        let tail = if tail.chars().count() + 24 > w {
            format!("  {}", self.layout_text())
        } else {
            tail
        };
        let room = w.saturating_sub(tail.chars().count() + 10).max(12);
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
        // Pieces in order of importance; what does not fit is left out whole.
        let pieces = [
            ("txn ", e.last_txnid.to_string()),
            (
                "  last page ",
                format!("{} ({})", e.last_pgno, human(e.used_bytes())),
            ),
            ("  free pages ", free),
            ("  readers ", readers),
        ];
        let mut spans = Vec::new();
        let mut used = 0;
        for (l, v) in pieces {
            let n = l.chars().count() + v.chars().count();
            if used + n > w {
                break;
            }
            used += n;
            spans.push(Span::styled(l, label));
            spans.push(Span::raw(v));
        }
        let l2 = Line::from(spans);
        let mut lines = vec![l1, l2];
        if e.truncated() {
            let len = e.file_len.unwrap_or(0);
            let long = format!(
                "WARNING: data file is {} ({len} B) but the meta's last page {} needs {} ({} B): truncated?",
                human(len),
                e.last_pgno,
                human(e.used_bytes()),
                e.used_bytes()
            );
            let short = format!(
                "WARNING: file {} < last page {} needs {}",
                human(len),
                e.last_pgno,
                human(e.used_bytes())
            );
            lines.push(Line::styled(
                if long.chars().count() <= w {
                    long
                } else {
                    super::ellipsize(&short, w)
                },
                Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            ));
        }
        Paragraph::new(lines).render(area, buf);
    }
}
