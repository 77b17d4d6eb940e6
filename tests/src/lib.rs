//! Shared helpers for dlmdb's cross-crate tests (`tests/tests/*.rs`).
//!
//! * [`stock`]: the two-engine kit's driver over stock LMDB
//!   (`lmdb-master-sys`), the oracle.
//! * [`raw`]: the same driver over our engine's raw bindings (`dlmdb-sys`),
//!   plus structural checks (page walk, free list, accounting invariant).
//! * [`dump`], [`stat`]: the `mdb_dump` / `mdb_stat` text formats.
//! * [`model`]: a `BTreeMap` model ordered like the stock comparators.
//! * [`pages`]: programs run as on machines with bigger pages.
//! * fixtures (located by `dlmdb_kit::fixtures_dir`), temp dirs, seeds and
//!   external tools.

use std::path::{Path, PathBuf};
use std::process::Command;

pub use dlmdb_kit::raw_val_helpers;

pub use dlmdb_kit::{fixtures, fixtures_dir, output_ok, show, Pair, Pairs};

pub mod counted;
pub mod dump;
pub mod live;
pub mod model;
pub mod multimap;
pub mod ours;
pub mod pages;
pub mod pfxcheck;
pub mod procs;
pub mod stat;
pub mod workload;

/// Stock LMDB (mdb.master) through the two-engine kit's driver.
pub mod stock {
    pub use dlmdb_kit::stock::*;

    /// Open the data file `path` read-only, at its stored map size.
    pub fn open_ro(path: &std::path::Path, maxdbs: u32) -> Res<Env> {
        Env::open(path, MDB_NOSUBDIR | lmdb_master_sys::MDB_RDONLY, maxdbs, 0)
    }

    /// Apply a whole workload with stock LMDB (see
    /// [`crate::workload::write_workload`]).
    pub fn write_workload(env: &Env, w: &crate::workload::Workload, who: &str) {
        crate::workload::write_workload(w, who, || env.begin_rw());
    }
}

/// Our engine through the same driver (raw `dlmdb-sys` calls), for checks
/// the safe API does not cover, plus structural checks.
pub mod raw {
    pub use crate::accounting::*;
    pub use dlmdb_kit::ours::*;
}

mod accounting;

/// Tests that are one call each, listed one a line as `name: call;` (doc
/// comments and attributes written before a name belong to that test).
#[macro_export]
macro_rules! call_tests {
    ($($(#[$attr:meta])* $name:ident: $call:expr;)+) => {$(
        $(#[$attr])*
        #[test]
        fn $name() {
            $call;
        }
    )+};
}

/// Read a fixture companion file (dump, stat, json) as text.
pub fn fixture_text(rel: &str) -> String {
    let p = fixtures_dir().join(rel);
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("cannot read fixture {}: {e}", p.display()))
}

/// Copy a fixture data file into a fresh temp dir (opening creates a lock
/// file beside the data file, and writes would change it). Returns the dir
/// guard and the path of the copy (open it with `MDB_NOSUBDIR`).
pub fn copy_fixture(rel: &str) -> (tempfile::TempDir, PathBuf) {
    let src = fixtures_dir().join(rel);
    let dir = tempfile::tempdir().expect("tempdir");
    let name = Path::new(rel).file_name().unwrap();
    let dst = dir.path().join(name);
    std::fs::copy(&src, &dst)
        .unwrap_or_else(|e| panic!("cannot copy fixture {}: {e}", src.display()));
    (dir, dst)
}

/// Remove `<data file>-lock` (used between engines: stock LMDB 0.9 tools,
/// mdb.master and our engine each initialise their own lock file when they
/// are the only user, but a clean slate keeps the tests independent of the
/// lock-file format).
pub fn remove_lock(data: &Path) {
    let mut l = data.as_os_str().to_owned();
    l.push("-lock");
    let _ = std::fs::remove_file(l);
}

/// Whether an external program (e.g. Debian's `mdb_dump`) can be run.
pub fn have_tool(name: &str) -> bool {
    Command::new(name)
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Run an external tool; returns (exit success, stdout, stderr).
pub fn run_tool(name: &str, args: &[&std::ffi::OsStr]) -> (bool, String, String) {
    let o = Command::new(name)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {name}: {e}"));
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The stock `mdb_dump -n -a` of the single-file store `path` must equal
/// `want`; the first differing line is reported. Skipped (with a note)
/// where the tool is not installed; the lock file is removed around the run.
pub fn stock_dump_matches(path: &Path, want: &str, what: &str) {
    if !have_tool("mdb_dump") {
        skip_note("mdb_dump (Debian lmdb-utils) not installed: dump comparison not run");
        return;
    }
    remove_lock(path);
    let (ok, out, err) = run_tool(
        "mdb_dump",
        &[
            std::ffi::OsStr::new("-n"),
            std::ffi::OsStr::new("-a"),
            path.as_os_str(),
        ],
    );
    remove_lock(path);
    assert!(ok, "{what}: mdb_dump -a failed: {err}");
    if out != want {
        let (ol, wl): (Vec<_>, Vec<_>) = (out.lines().collect(), want.lines().collect());
        let i = ol
            .iter()
            .zip(&wl)
            .position(|(a, b)| a != b)
            .unwrap_or(ol.len().min(wl.len()));
        let cut = |s: &str| s.chars().take(120).collect::<String>();
        panic!(
            "{what}: mdb_dump -a output differs from the model at line {} ({} vs {} lines):\n got: {}\nwant: {}",
            i + 1,
            ol.len(),
            wl.len(),
            cut(ol.get(i).unwrap_or(&"<end>")),
            cut(wl.get(i).unwrap_or(&"<end>"))
        );
    }
}

/// Build the single-file store `path` with the stock `mdb_load -n` from a
/// dump text (`mdb_dump -a` form), one run per database: Debian's 0.9
/// tool opens the environment with maxdbs 2, so a run loads one named
/// database. The dump blocks go through `in.dump` beside `path`; the lock
/// file is removed after each run.
pub fn stock_load_dump(path: &Path, text: &str) {
    let block_file = path.with_file_name("in.dump");
    for block in text.split_inclusive("DATA=END\n") {
        std::fs::write(&block_file, block).unwrap();
        let (ok, _, err) = run_tool(
            "mdb_load",
            &[
                std::ffi::OsStr::new("-n"),
                std::ffi::OsStr::new("-f"),
                block_file.as_os_str(),
                path.as_os_str(),
            ],
        );
        assert!(ok, "mdb_load failed: {err}");
        remove_lock(path);
    }
}

/// Loudly note a skipped check (visible with `--nocapture` and in failures).
pub fn skip_note(what: &str) {
    eprintln!("\n*** SKIPPED: {what} ***\n");
}

/// Seeds for randomized tests: `$DLMDB_SEED` (comma-separated) if set, else
/// the fixed list plus one time-based seed (printed so it can be replayed).
/// CI (`CI=true`) runs the fixed list only, so a gate never depends on luck;
/// local runs keep exploring new seeds.
pub fn seeds(fixed: &[u64]) -> Vec<u64> {
    if let Ok(s) = std::env::var("DLMDB_SEED") {
        return s
            .split(',')
            .map(|x| {
                x.trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("bad DLMDB_SEED entry {x:?}"))
            })
            .collect();
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        return fixed.to_vec();
    }
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut v = fixed.to_vec();
    v.push(t);
    v
}

/// `then(rng)` with probability `p`, else `otherwise(rng)`. The coin is
/// drawn first, as `if rng.gen_bool(p)` does, so a seed replays the same
/// values either way.
pub fn either<R: rand::Rng, T>(
    rng: &mut R,
    p: f64,
    then: impl FnOnce(&mut R) -> T,
    otherwise: impl FnOnce(&mut R) -> T,
) -> T {
    if rng.gen_bool(p) {
        then(rng)
    } else {
        otherwise(rng)
    }
}

/// Compare two pair lists and panic with the first difference.
pub fn assert_pairs_eq(what: &str, got: &[(Vec<u8>, Vec<u8>)], want: &[(Vec<u8>, Vec<u8>)]) {
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        if g.0 != w.0 {
            panic!(
                "{what}: pair #{i}: key {} but expected key {}",
                show(&g.0),
                show(&w.0)
            );
        }
        if g.1 != w.1 {
            panic!(
                "{what}: pair #{i} key {}: value {} ({} bytes) but expected {} ({} bytes)",
                show(&g.0),
                show(&g.1),
                g.1.len(),
                show(&w.1),
                w.1.len()
            );
        }
    }
    if got.len() != want.len() {
        panic!("{what}: {} pairs but expected {}", got.len(), want.len());
    }
}

/// The two meta pages of the data file at `path` (16-byte page header
/// layouts), decoded by dlmdb-format; read with pread, so a large file is
/// not read whole. Panics when either page lacks the magic.
pub fn meta_pages(path: &Path) -> [dlmdb_format::Meta; 2] {
    use std::os::unix::fs::FileExt;
    let f =
        std::fs::File::open(path).unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    let mut page = [0u8; dlmdb_format::META_SIZE];
    let mut read = |which: u64, offset: u64| {
        f.read_exact_at(&mut page, offset)
            .unwrap_or_else(|e| panic!("{}: cannot read meta {which}: {e}", path.display()));
        dlmdb_format::Meta::decode(&page)
            .unwrap_or_else(|| panic!("{}: meta {which} has no magic", path.display()))
    };
    let m0 = read(0, 0);
    let m1 = read(1, m0.page_size().into());
    [m0, m1]
}

/// Which meta page of the data file at `path` is the newest (0 or 1: the
/// one with the larger txn id), and that page decoded.
pub fn newest_meta(path: &Path) -> (usize, dlmdb_format::Meta) {
    let [m0, m1] = meta_pages(path);
    if m1.txnid > m0.txnid {
        (1, m1)
    } else {
        (0, m0)
    }
}

/// A hand-built LMDB 1.x data file (data format 3, which the engine refuses):
/// two meta pages in the 24-byte page header layout
/// (`wide`: flags at 18, magic at 24, version at 28) or the 16-byte one.
pub fn lmdb1x_store(path: &std::path::Path, wide: bool) {
    use dlmdb_format::{meta, page, record};
    const PS: usize = 4096;
    // Where the magic sits; the rest of the meta body follows it.
    let (flags, magic) = if wide {
        (meta::LMDB1X_OFF_FLAGS, meta::LMDB1X_OFF_MAGIC)
    } else {
        (page::OFF_FLAGS, meta::OFF_MAGIC)
    };
    let version = magic + (meta::OFF_VERSION - meta::OFF_MAGIC);
    let psize = magic + (meta::OFF_FREE_DB + record::OFF_PAD - meta::OFF_MAGIC);
    let mut buf = vec![0u8; 2 * PS];
    for i in 0..2 {
        let p = &mut buf[i * PS..(i + 1) * PS];
        p[page::OFF_PGNO..][..8].copy_from_slice(&(i as u64).to_le_bytes());
        p[flags..][..2].copy_from_slice(&dlmdb_format::PageFlags::META.bits().to_le_bytes());
        p[magic..][..4].copy_from_slice(&dlmdb_format::MAGIC.to_le_bytes());
        p[version..][..4].copy_from_slice(&3u32.to_le_bytes());
        p[psize..][..4].copy_from_slice(&(PS as u32).to_le_bytes());
    }
    std::fs::write(path, buf).unwrap();
}
