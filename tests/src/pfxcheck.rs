//! Independent checks of prefix-compressed stores written by our engine.
//!
//! [`strict_check`] runs `dlmdb check` (the CLI's page walker, which shares
//! no code with the engine) in strict-prefix mode: every tree is walked and
//! every compressed page must hold node 0 raw, every other key in the
//! canonical §3.8 encoding against it, and the exact §3.10 `mp_pad`.

use dlmdb_cli::check::{self, CheckOptions, Outcome};
use dlmdb_cli::stat::LayoutChoice;
use std::path::Path;

/// Walk the whole store at `path` (directory or data file); `Err` lists the
/// first problems found.
pub fn strict_check(path: &Path) -> Result<(), String> {
    // The store is open in this very process. A second environment on the
    // same lock file would share its POSIX record locks, and closing it
    // would drop the pid lock that marks this process's reader slots live,
    // so a writer could take them for stale and reuse pages a held snapshot
    // still reads. Without the lock file the check leaves those locks alone;
    // the test commits nothing while it runs.
    dlmdb_cli::stat::set_lock_options(dlmdb::LockFormat::Auto, true);
    let opts = CheckOptions {
        path: path.to_path_buf(),
        subdb: None,
        layout: LayoutChoice::Auto,
        progress: false,
        strict_prefix: true,
    };
    match check::run(&opts).map_err(|e| format!("check: {e:#}"))? {
        Outcome::Interrupted => Err("check interrupted".into()),
        Outcome::Done(r) if r.ok => Ok(()),
        Outcome::Done(r) => {
            let first: Vec<String> = r
                .problems
                .iter()
                .take(5)
                .map(|p| format!("page {:?} in {}: {}", p.page, p.database, p.message))
                .collect();
            Err(format!(
                "dlmdb check --strict-prefix: {} problem(s): {}",
                r.problems_total,
                first.join("; ")
            ))
        }
    }
}
