//! The engine's verdict against `dlmdb check`'s: each store here is damaged
//! in a way the engine refuses, and `check` must report it, as the one
//! problem it finds (so the rule under test is the one that sees it).
//!
//! * Single mutants of the corrupted-store fuzzer
//!   (`vendor/dlmdb/fuzz/fuzz_store.c`) that the engine refuses: most it
//!   reads cleanly and refuses to write (`MDB_CORRUPTED` from the write
//!   pass), others it refuses to read or to open in their layout. They are
//!   the kinds of damage the long CLI mutant runs (`tests/mutants.rs`) found
//!   passing `check`. A case is replayed with `fuzz_store --seed S --case N --emit
//!   DIR`; the fuzzer's description of the mutation is compared too, so a
//!   change to the fuzzer or the fixtures that turns the case into another
//!   mutant fails here instead of testing nothing.
//! * Stores built with `dlmdb load` and damaged by hand where a rule of the
//!   engine has no fuzzer case: keys longer than the 511-byte key limit.
//! * One store the engine still reads but stock LMDB misreads (a packed
//!   sub-page in a database without DUPFIXED): `check` is the stricter
//!   there, and reports it.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const MDB_CORRUPTED: i32 = -30796;
const MDB_INCOMPATIBLE: i32 = -30784;

/// The fuzzer, built by the engine's Makefile once per test process: the
/// tests run on threads, and a second make relinking the binary while
/// another test runs it would fail that test.
fn fuzz_store() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
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
        })
        .clone()
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
    engine_and_check_report(seed, case, what, (0, MDB_CORRUPTED), &[problem]);
}

/// The same with the engine's verdict (read-only, read-write) and every
/// problem `check` reports given.
fn engine_and_check_report(
    seed: u64,
    case: u64,
    what: &str,
    verdict: (i32, i32),
    expected: &[&str],
) {
    let Some(m) = mutant(seed, case) else {
        return;
    };
    assert_eq!(
        m.what, what,
        "seed {seed} case {case} is no longer the mutant this test is about"
    );
    assert_eq!(
        (m.read, m.write),
        verdict,
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
    assert_eq!(problems, expected, "check's report on {what}:\n{report}");
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

/// A duplicate sub-database record of a DUPFIXED database that lost its
/// DUPFIXED bit: the engine reads the sub-tree by the record's bits, so its
/// packed (LEAF2) pages are refused in every read; the record must carry
/// the bits LMDB writes for its owner.
#[test]
fn dup_subdatabase_record_without_dupfixed() {
    engine_and_check_report(
        23,
        1036,
        "fixture:dupsort.stock.mdb: page 2 record 0 flags 0x10->0",
        (MDB_CORRUPTED, MDB_CORRUPTED),
        &[
            "PROBLEM page 2 [dupfixed]: node 0: sub-database record flags 0x0, but the \
         database's flags 0x14 call for DUPFIXED/INTEGERKEY bits 0x10",
        ],
    );
}

/// A 24-byte key cut to 23 bytes in a stock-layout store: the leaf's nodes
/// no longer fill the page in stock layout (the node is now two bytes
/// shorter), while DLMDB's padded layout, which pads the key back to 24,
/// fills it exactly. That is the engine's evidence of the padded layout, so
/// opened as stock LMDB's the store is refused (`MDB_INCOMPATIBLE`), and
/// `check` in that layout reports the refusal, then the gap, naming the
/// layout that fills the page.
#[test]
fn leaf_that_only_the_other_layout_fills() {
    engine_and_check_report(
        29,
        681,
        "gen-stock.mdb: page 61 node 2 ksize 24->23",
        (MDB_INCOMPATIBLE, MDB_INCOMPATIBLE),
        &[
            "PROBLEM [(meta)]: the engine refuses the store: its pages contradict stock \
             LMDB's node layout, given with --layout lmdb (MDB_INCOMPATIBLE): leaves that \
             only DLMDB's padded layout reads consistently, DLMDB-only database flags or \
             counted pages; --layout auto lets the engine decide",
            "PROBLEM page 61 [kv]: leaf page: its nodes take 3246 of the 3248 bytes from \
             upper (848) to the page end, where writers leave no gap; DLMDB's padded layout \
             fills it exactly (--layout dlmdb)",
        ],
    );
}

/// A DUPFIXED database's record that lost its DUPFIXED bit, over a key whose
/// duplicates sit in an inline sub-page of packed items: stock LMDB takes
/// the item size of such a sub-page from a DUPFIXED database only, so this
/// engine's reads (which take it from the sub-page) are the only ones that
/// still see the values; `check` reports the sub-page.
#[test]
fn packed_sub_page_in_a_database_without_dupfixed() {
    let dir = tempfile::tempdir().unwrap();
    let store = load(
        dir.path(),
        "d",
        "dupsort=1\ndupfixed=1\n",
        &[
            (b"k", &1u64.to_be_bytes()),
            (b"k", &2u64.to_be_bytes()),
            (b"k", &3u64.to_be_bytes()),
        ],
    );
    check_finds(&store, None);
    // The record of "d" in the main DB: key "d" and its pad byte, md_pad 0,
    // md_flags DUPSORT|DUPFIXED (0x14) -> DUPSORT.
    patch(
        &store,
        &[b'd', 0, 0, 0, 0, 0, 0x14, 0],
        &[b'd', 0, 0, 0, 0, 0, 0x04, 0],
    );
    check_finds(
        &store,
        Some("sub-page of node 0: LEAF2 sub-page in a database without DUPFIXED"),
    );
}

/// Load `pairs` into database `db` of a new single-file store; `extra`:
/// header lines (database flags).
fn load(dir: &Path, db: &str, extra: &str, pairs: &[(&[u8], &[u8])]) -> PathBuf {
    let text = common::bytevalue_dump(
        &format!("database={db}\ntype=btree\n{extra}"),
        pairs.iter().copied(),
    );
    let store = dir.join("s.mdb");
    common::succeeded(common::load_input(common::bin(), text, &["-n"], &store));
    store
}

/// Replace the one occurrence of `from` in the store's file with `to`.
fn patch(store: &Path, from: &[u8], to: &[u8]) {
    let mut file = std::fs::read(store).unwrap();
    let at: Vec<usize> = file
        .windows(from.len())
        .enumerate()
        .filter(|(_, w)| *w == from)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 1, "occurrences of the bytes to patch");
    file[at[0]..at[0] + to.len()].copy_from_slice(to);
    std::fs::write(store, file).unwrap();
}

/// `dlmdb` with `args` fails (the engine refuses the store) naming `error`.
fn engine_fails(args: &[&str], error: &str) {
    let out = common::bin().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains(error),
        "dlmdb {args:?} on the damaged store: status {}, stderr {stderr}",
        out.status
    );
}

/// `check` exits 0 on `store`, or 1 with `problem` (a part of the line) as
/// its one report.
fn check_finds(store: &Path, problem: Option<&str>) {
    let out = common::bin().arg("check").arg(store).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    let problems: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("PROBLEM"))
        .collect();
    match problem {
        None => assert_eq!(out.status.code(), Some(0), "{report}"),
        Some(p) => {
            assert_eq!(out.status.code(), Some(1), "check passes: {report}");
            assert!(
                problems.len() == 1 && problems[0].contains(p),
                "check's report, looking for {p:?}:\n{report}"
            );
        }
    }
}

/// A prefix-compressed leaf with the 511-byte key `A..A` (the trunk) and
/// `A..AB` (510 `A`s), stored as `varint(510) "B"`. Its shared length
/// raised to 511 makes the decoded key `A..AB` 512 bytes, past the key
/// limit: every read of the node fails (`MDB_BAD_VALSIZE`).
#[test]
fn compressed_key_decoded_past_the_key_limit() {
    let dir = tempfile::tempdir().unwrap();
    let trunk = vec![b'A'; 511];
    let mut second = vec![b'A'; 510];
    second.push(b'B');
    let store = load(
        dir.path(),
        "p",
        "prefix_compression=1\n",
        &[(&trunk, b"v1"), (&second, b"v2")],
    );
    check_finds(&store, None);
    // varint(510) = 0x83 0x7e; varint(511) = 0x83 0x7f.
    patch(&store, &[0x83, 0x7e, b'B'], &[0x83, 0x7f, b'B']);
    engine_fails(&["dump", "-a", store.to_str().unwrap()], "MDB_BAD_VALSIZE");
    check_finds(
        &store,
        Some("leaf node 1: 512 bytes, longer than the 511-byte key limit"),
    );
}

/// A leaf whose one node's key grows from 500 to 600 bytes (the node moved
/// down the page to make room): reads take the key as it is, but a
/// compacting copy, which checks every key against the limit, refuses the
/// store (`MDB_CORRUPTED`).
#[test]
fn stored_key_past_the_key_limit() {
    let dir = tempfile::tempdir().unwrap();
    let key = vec![b'K'; 500];
    let store = load(dir.path(), "k", "", &[(&key, b"v")]);
    check_finds(&store, None);
    let mut file = std::fs::read(&store).unwrap();
    let ps = 4096;
    let at = file.windows(key.len()).position(|w| w == key).unwrap();
    let (pg, node) = (at / ps * ps, at - 8);
    let page = &mut file[pg..pg + ps];
    let u16_at = |p: &[u8], o: usize| usize::from(u16::from_le_bytes([p[o], p[o + 1]]));
    assert_eq!(
        (u16_at(page, 12), u16_at(page, 14), u16_at(page, 16)),
        (18, node - pg, node - pg),
        "one node at upper"
    );
    // Node header (data size 1, flags 0), the 600-byte key, the value.
    let size: usize = 8 + 600 + 1;
    let new = ps - size.div_ceil(2) * 2;
    page[new..].fill(0);
    page[new] = 1;
    page[new + 6..new + 8].copy_from_slice(&600u16.to_le_bytes());
    page[new + 8..new + 608].fill(b'K');
    page[new + 608] = b'v';
    page[14..16].copy_from_slice(&(new as u16).to_le_bytes());
    page[16..18].copy_from_slice(&(new as u16).to_le_bytes());
    std::fs::write(&store, &file).unwrap();
    let copy = dir.path().join("copy.mdb");
    engine_fails(
        &[
            "copy",
            "--compact",
            store.to_str().unwrap(),
            copy.to_str().unwrap(),
        ],
        "MDB_CORRUPTED",
    );
    check_finds(
        &store,
        Some("leaf node 0: 600 bytes, longer than the 511-byte key limit"),
    );
}

/// Both metas name the largest page number there is (`u64::MAX`): `check`
/// reports, in one line, that the last page lies far beyond the file, and
/// neither the page count (`last_pg + 1`) nor any total it derives wraps
/// around or panics.
#[test]
fn last_page_at_the_largest_page_number() {
    let dir = tempfile::tempdir().unwrap();
    let store = load(dir.path(), "d", "", &[(b"key", b"value")]);
    let mut file = std::fs::read(&store).unwrap();
    let psize = dlmdb_format::meta::parse_meta(&file, 0)
        .unwrap()
        .page_size() as usize;
    for page in [0, psize] {
        let at = page + dlmdb_format::meta::OFF_LAST_PG;
        file[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    }
    std::fs::write(&store, file).unwrap();
    let out = common::bin().arg("check").arg(&store).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains(&format!(
            "last page {} is far beyond the end of the file",
            u64::MAX
        )),
        "{report}"
    );
}
