//! Progress bars on stderr, shown only on a terminal and for large work.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// A bar over `total` units, or `None` when stderr is not a terminal,
/// `quiet` is set, or the work is below `threshold`.
pub fn bar(total: u64, threshold: u64, quiet: bool, template: &str) -> Option<ProgressBar> {
    if quiet || total < threshold || !std::io::stderr().is_terminal() {
        return None;
    }
    let b = ProgressBar::new(total);
    b.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    Some(b)
}
