//! The detail pane: the selected database's tree at a glance (levels with
//! a fill histogram, overflow, duplicates, compression with pages saved,
//! counts) and how it moved since the viewer opened.

use super::{human, pane, pct};
use crate::app::{App, Focus, Motion};
use crate::model::{flag_labels, DbDetail};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Paragraph, Widget, Wrap};

pub struct DetailPane<'a> {
    pub app: &'a App,
}

impl Widget for DetailPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let name = app
            .selected_db()
            .map(|n| crate::model::display_name(&n))
            .unwrap_or_default();
        let block = pane(format!("Detail: {name}"), app.focus == Focus::Detail);
        let text: Text = match (&app.detail, &app.detail_error) {
            (_, Some(err)) => Text::from(Line::styled(format!("error: {err}"), Style::new().red())),
            (Some(d), None) => {
                // Flags and totals first, then how they moved, then the rest.
                let mut lines = detail_lines(d);
                if let Some(name) = app.selected_db() {
                    if let Some(m) = app.live.motion(&name) {
                        let mut add = motion_lines(&m);
                        let (e, p, d) = app.live.trend(&name);
                        if e.len() > 1 {
                            add.push(trend_line(&e, &p, &d));
                        }
                        let at = lines.len().min(2);
                        lines.splice(at..at, add);
                    }
                }
                Text::from(lines)
            }
            (None, None) => Text::raw("(no database)"),
        };
        Paragraph::new(text)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((app.detail_scroll, 0))
            .render(area, buf);
    }
}

fn signed(n: i64) -> String {
    if n > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

fn rate(r: Option<f64>) -> String {
    r.map_or("-".to_string(), |r| format!("{r:.1}"))
}

/// One character per sample, the lowest value `▁`, the highest `█`
/// (all `▁` when nothing changed).
pub fn sparkline(v: &[u64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let (lo, hi) = (
        v.iter().copied().min().unwrap_or(0),
        v.iter().copied().max().unwrap_or(0),
    );
    v.iter()
        .map(|&x| {
            if hi == lo {
                BARS[0]
            } else {
                BARS[((x - lo) as u128 * 7 / (hi - lo) as u128) as usize]
            }
        })
        .collect()
}

/// Entries, pages and depth over the last refreshes, with their ranges.
fn trend_line(e: &[u64], p: &[u64], d: &[u64]) -> Line<'static> {
    let range = |v: &[u64]| {
        let (lo, hi) = (v.iter().min().unwrap_or(&0), v.iter().max().unwrap_or(&0));
        if lo == hi {
            format!("{lo}")
        } else {
            format!("{lo}..{hi}")
        }
    };
    field(
        format!("last {} refreshes ", e.len()),
        format!(
            "entries {} {}  pages {} {}  depth {}",
            sparkline(e),
            range(e),
            sparkline(p),
            range(p),
            range(d)
        ),
    )
}

/// "since open" deltas and per-second rates over the last refresh.
pub fn motion_lines(m: &Motion) -> Vec<Line<'static>> {
    vec![
        field(
            "since open ",
            format!(
                "commits {}, entries {}, pages {}, depth {}",
                signed(m.commits),
                signed(m.entries),
                signed(m.pages),
                signed(m.depth)
            ),
        ),
        field(
            "per second ",
            format!(
                "commits {}, entries {}, pages {}",
                rate(m.commits_per_s),
                rate(m.entries_per_s),
                rate(m.pages_per_s)
            ),
        ),
    ]
}

/// A `name value` line of the detail pane, the name dimmed.
fn field(name: impl Into<std::borrow::Cow<'static, str>>, value: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(name, Style::new().fg(Color::DarkGray)),
        Span::raw(value),
    ])
}

/// `3 branch, 40 leaf, 0 overflow`: the stored counters and the walk
/// both show their page tallies this way.
fn page_mix(branch: u64, leaf: u64, overflow: u64) -> String {
    format!("{branch} branch, {leaf} leaf, {overflow} overflow")
}

/// The detail pane's figures (also handy for tests).
pub fn detail_lines(d: &DbDetail) -> Vec<Line<'static>> {
    let label = Style::new().fg(Color::DarkGray);
    let head = Style::new().add_modifier(Modifier::BOLD);
    let s = &d.stat;
    let psize = u64::from(s.page_size);
    let mut out: Vec<Line> = Vec::new();
    let flags = flag_labels(d.flags);
    out.push(field(
        "flags ",
        if flags.is_empty() {
            "none".to_string()
        } else {
            flags.join(" ")
        },
    ));
    out.push(Line::from(vec![
        Span::styled("entries ", label),
        Span::raw(s.entries.to_string()),
        Span::styled("  depth ", label),
        Span::raw(s.depth.to_string()),
        Span::styled("  pages ", label),
        Span::raw(format!(
            "{} = {}",
            page_mix(s.branch_pages, s.leaf_pages, s.overflow_pages),
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
            "{}, fill {}: ",
            page_mix(w.branch_pages, w.leaf_pages, w.overflow_pages),
            pct(w.used_bytes, w.used_bytes + w.free_bytes)
        )),
        check,
    ]));
    if !d.levels.is_empty() {
        out.push(Line::styled(
            "lvl   pages   nodes   fill | <20 <40 <60 <80 80+",
            head,
        ));
        for l in &d.levels {
            let kind = if l.branch_pages > 0 && l.leaf_pages == 0 {
                "b"
            } else if l.leaf_pages > 0 && l.branch_pages == 0 {
                "l"
            } else {
                "bl"
            };
            let b = &l.fill_buckets;
            out.push(Line::raw(format!(
                "{:>3} {:<2}{:>6} {:>7} {:>6} | {:>3} {:>3} {:>3} {:>3} {:>3}",
                l.level,
                kind,
                l.branch_pages + l.leaf_pages,
                l.nodes,
                pct(l.used_bytes, l.used_bytes + l.free_bytes),
                b[0],
                b[1],
                b[2],
                b[3],
                b[4]
            )));
        }
    }
    let o = &d.overflow;
    out.push(field(
        "overflow ",
        if o.runs > 0 {
            format!(
                "{} pages in {} values, largest {} pages, {} of the bytes used",
                o.pages,
                o.runs,
                o.largest_run,
                pct(o.used_bytes, o.allocated_bytes)
            )
        } else {
            "none".to_string()
        },
    ));
    if let Some(dup) = &d.dup {
        out.push(field(
            "dups ",
            format!(
                "{} keys, {} values; {} inline sub-pages, {} sub-trees ({} pages), fill {}",
                dup.keys,
                dup.values,
                dup.sub_pages,
                dup.sub_trees,
                dup.sub_tree_pages,
                pct(dup.sub_used_bytes, dup.sub_used_bytes + dup.sub_free_bytes)
            ),
        ));
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
            out.push(field(
                "prefix keys ",
                format!(
                    "{} logical, {} stored: ratio {:.2}x, {:.1}% saved{partial}",
                    human(c.logical_key_bytes),
                    human(c.stored_key_bytes),
                    c.ratio(),
                    c.saved_percent()
                ),
            ));
            out.push(field(
                "prefix pages ",
                format!(
                    "{} leaves; {} without compression: {} saved",
                    c.leaf_pages_seen,
                    c.leaf_pages_other_layout(),
                    c.pages_saved()
                ),
            ));
        } else {
            let would = if c.logical_key_bytes == 0 {
                0.0
            } else {
                100.0 - 100.0 * c.if_compressed_bytes as f64 / c.logical_key_bytes as f64
            };
            let what = if would > 0.0 {
                format!(
                    "prefix compression would save {would:.1}% ({} of {} leaves)",
                    c.pages_saved(),
                    c.leaf_pages_seen
                )
            } else {
                "prefix compression would not help".to_string()
            };
            out.push(field(
                "keys ",
                format!(
                    "{} in {} keys, stored uncompressed; {what}{partial}",
                    human(c.logical_key_bytes),
                    c.keys
                ),
            ));
        }
        if c.dup_values > 0 {
            let txt = if c.prefix {
                format!(
                    "{} values: {} logical, {} stored: ratio {:.2}x",
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
            out.push(field("dup values ", txt));
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

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn sparkline_spans_low_to_high() {
        assert_eq!(sparkline(&[1, 1, 1]), "▁▁▁");
        assert_eq!(sparkline(&[0, 7, 14]), "▁▄█");
        assert_eq!(sparkline(&[]), "");
    }
}
