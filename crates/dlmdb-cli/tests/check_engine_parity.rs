//! The engine's verdict against `dlmdb check`'s on single mutants of the
//! corrupted-store fuzzer (`vendor/dlmdb/fuzz/fuzz_store.c`): each case
//! below is a mutant the engine reads cleanly but refuses to write
//! (`MDB_CORRUPTED` from the write pass), and `check` must report it.
//! These are the kinds of damage the long CLI mutant runs (`tests/mutants.rs`)
//! found passing `check` while the engine refused them.
//!
//! A case is replayed with `fuzz_store --seed S --case N --emit DIR`; the
//! fuzzer's description of the mutation is compared too, so a change to the
//! fuzzer or the fixtures that turns the case into another mutant fails
//! here instead of testing nothing.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const MDB_CORRUPTED: i32 = -30796;

/// The fuzzer, built by the engine's Makefile.
fn fuzz_store() -> PathBuf {
    let c_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vendor/dlmdb");
    let built = Command::new("make")
        .arg("-C")
        .arg(&c_dir)
        .args(["--no-print-directory", "build/release/fuzz/fuzz_store"])
        .stdout(Stdio::null())
        .status()
        .expect("run make")
        .success();
    assert!(built, "make build/release/fuzz/fuzz_store failed");
    c_dir.join("build/release/fuzz/fuzz_store")
}

/// One emitted mutant: its file, the fuzzer's description, the engine's
/// read-only and read-write results, and the layout to read it in.
struct Mutant {
    _dir: tempfile::TempDir,
    store: PathBuf,
    what: String,
    read: i32,
    write: i32,
    layout: String,
}

/// Case `case` of seed `seed`, or `None` without the fixtures (the base
/// stores, and so the case numbering, include them).
fn mutant(seed: u64, case: u64) -> Option<Mutant> {
    let fixtures = common::fixtures()?;
    let dir = tempfile::tempdir().unwrap();
    let emit = dir.path().join("emit");
    let out = Command::new(fuzz_store())
        .args(["--seed", &seed.to_string(), "--case", &case.to_string()])
        .arg("--emit")
        .arg(&emit)
        .env("DLMDB_FIXTURES", fixtures)
        .output()
        .expect("run fuzz_store");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "fuzz_store failed:\n{log}");
    let prefix = format!("case {case}: ");
    let what = log
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no description of case {case}:\n{log}"))
        .trim()
        .to_string();
    let verdicts = std::fs::read_to_string(emit.join("verdicts.txt")).unwrap();
    let f: Vec<&str> = verdicts.split_whitespace().collect();
    assert_eq!(f.len(), 4, "verdict line {verdicts:?}");
    let work = dir.path().join("m.mdb");
    std::fs::copy(emit.join(format!("{}.mdb", f[0])), &work).unwrap();
    Some(Mutant {
        store: work,
        what,
        read: f[1].parse().unwrap(),
        write: f[2].parse().unwrap(),
        layout: f[3].to_string(),
        _dir: dir,
    })
}

/// The mutant is the one described, the engine reads it but refuses to
/// write it, and `check` exits 1 with `problem` as its one report: the rule
/// under test is the only one that sees the damage.
fn engine_refuses_and_check_reports(seed: u64, case: u64, what: &str, problem: &str) {
    let Some(m) = mutant(seed, case) else {
        return;
    };
    assert_eq!(
        m.what, what,
        "seed {seed} case {case} is no longer the mutant this test is about"
    );
    assert_eq!(
        (m.read, m.write),
        (0, MDB_CORRUPTED),
        "engine verdict (read-only, read-write) on {what}"
    );
    let out = common::bin()
        .args(["check", "--layout", &m.layout])
        .arg(&m.store)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "check passes what the engine refuses ({what}):\n{report}"
    );
    let problems: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("PROBLEM"))
        .collect();
    assert_eq!(problems, [problem], "check's report on {what}:\n{report}");
}

/// A leaf page's `upper` moved one byte down, to an odd offset below its
/// lowest node (so every node pointer is still at or above it): reads never
/// use `upper`, but a write would place the next node at an odd offset, so
/// the engine's page check before a write (`dl_page_wcheck`) refuses the
/// page.
#[test]
fn leaf_page_with_an_odd_upper() {
    engine_refuses_and_check_reports(
        11,
        1345,
        "fixture:layout_dlmdb.mdb: page 5 upper 3938->3937",
        "PROBLEM page 5 [abc]: node page with an odd upper 3937",
    );
}

/// The data size of a leaf node holding an inline duplicate sub-page, in a
/// counted DUPSORT database, one byte short: the sub-page is now 125 bytes
/// and the node at its end (header and a 13-byte key, 21 bytes, kept at an
/// even 22) ends at byte 126. Reads take only the key bytes, which still fit;
/// the write check measures every node at its even size and refuses a node
/// that ends past its sub-page.
#[test]
fn sub_page_one_byte_short_in_a_counted_database() {
    engine_refuses_and_check_reports(
        11,
        1066,
        "fixture:v2/counted.mdb: page 337 node 3 lo/hi 126->125",
        "PROBLEM page 337 [counted_dups]: sub-page of node 3: item 2 malformed \
         (key 13 bytes, data 0, flags 0x0, node end 126 of 125)",
    );
}
