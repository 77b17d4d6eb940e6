//! Ctrl-C: remove the scratch environments and exit with status 130.
//!
//! Suites register every scratch directory they create; the first SIGINT
//! (or SIGTERM) removes the registered directories that still exist and
//! ends the process with 128 + 2. Removal runs on a watcher thread, not in
//! the signal handler, so it may allocate and walk directories.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

/// Exit status after an interrupt (128 + SIGINT).
pub const INTERRUPTED: i32 = 130;

/// Remove `dir` (recursively) if the process is interrupted.
pub fn register(dir: &Path) {
    install();
    if let Ok(mut d) = DIRS.lock() {
        d.push(dir.to_path_buf());
    }
}

/// Remove every registered directory that still exists.
pub fn cleanup() {
    let dirs = DIRS.lock().map(|d| d.clone()).unwrap_or_default();
    for d in dirs {
        if d.exists() {
            let _ = std::fs::remove_dir_all(&d);
        }
    }
}

fn install() {
    INSTALL.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new([
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
        ]) else {
            return;
        };
        std::thread::spawn(move || {
            if signals.forever().next().is_some() {
                cleanup();
                std::process::exit(INTERRUPTED);
            }
        });
    });
}
