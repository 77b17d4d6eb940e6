//! Ctrl-C: remove the scratch environments and exit with status 130.
//!
//! Suites register every scratch directory they create; the first SIGINT
//! (or SIGTERM) removes the registered directories that still exist and
//! ends the process with 128 + 2. Removal runs on a watcher thread, not in
//! the signal handler, so it may allocate and walk directories.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

static INTERRUPTED_FLAG: AtomicBool = AtomicBool::new(false);

/// True once SIGINT/SIGTERM arrived. A suite failing because its files
/// were removed under it should then exit with [`INTERRUPTED`] too.
pub fn interrupted() -> bool {
    INTERRUPTED_FLAG.load(Ordering::SeqCst)
}

/// (directory, whole): `whole` = a scratch directory of ours, removed
/// recursively; otherwise an environment directory the user named, of which
/// only `data.mdb` and `lock.mdb` are removed (then the directory, if empty).
static DIRS: Mutex<Vec<(PathBuf, bool)>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

/// Exit status after an interrupt (128 + SIGINT).
pub const INTERRUPTED: i32 = 130;

/// Remove `dir` (recursively) if the process is interrupted: for scratch
/// directories the suite created itself.
pub fn register(dir: &Path) {
    add(dir, true);
}

/// Remove the environment files in `dir` (and `dir` if it is then empty)
/// if the process is interrupted: for directories the user named.
pub fn register_env(dir: &Path) {
    add(dir, false);
}

fn add(dir: &Path, whole: bool) {
    install();
    if let Ok(mut d) = DIRS.lock() {
        d.push((dir.to_path_buf(), whole));
    }
}

/// Remove every registered directory that still exists.
pub fn cleanup() {
    let dirs = DIRS.lock().map(|d| d.clone()).unwrap_or_default();
    for (d, whole) in dirs {
        if !d.exists() {
            continue;
        }
        if whole {
            let _ = std::fs::remove_dir_all(&d);
        } else {
            let _ = std::fs::remove_file(d.join("data.mdb"));
            let _ = std::fs::remove_file(d.join("lock.mdb"));
            let _ = std::fs::remove_dir(&d);
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
                INTERRUPTED_FLAG.store(true, Ordering::SeqCst);
                cleanup();
                std::process::exit(INTERRUPTED);
            }
        });
    });
}
