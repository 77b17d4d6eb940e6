//! Damage the engine refuses must make `dlmdb check` fail too: page flags
//! that contradict the page's role, `upper` of LEAF2 pages and sub-pages,
//! an odd `upper` of a node page, a sub-page node whose padding runs past
//! the sub-page, DLMDB-only database flags in a stock-layout store, a map
//! size no process can map, a meta at the largest txnid, and a newest meta
//! in the page of the other parity. Each case shows the engine refusing
//! the store (a read command fails, or a write transaction does) and check
//! reporting it (exit status 1).

mod common;
use common::*;
use dlmdb::{DatabaseFlags, Env, EnvFlags, WriteFlags};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

const PS: usize = 4096;

/// Load a dump text into a new single-file store (`lmdb`: stock format).
fn load(dir: &Path, name: &str, text: &str, lmdb: bool) -> PathBuf {
    let store = dir.join(name);
    let args: &[&str] = if lmdb {
        &["-n", "--format", "lmdb"]
    } else {
        &["-n"]
    };
    succeeded(load_input(bin(), text, args, &store));
    store
}

/// Dump text of one named database `db` (`extra` header lines), keys from
/// `pairs`.
fn dump_text(db: Option<&str>, extra: &str, pairs: &[(String, String)]) -> String {
    let mut t = String::from("VERSION=3\nformat=print\n");
    if let Some(d) = db {
        t.push_str(&format!("database={d}\n"));
    }
    t.push_str(&format!("type=btree\n{extra}HEADER=END\n"));
    for (k, v) in pairs {
        t.push_str(&format!(" {k}\n {v}\n"));
    }
    t.push_str("DATA=END\n");
    t
}

/// `key` paired with each of `vals`: the duplicates of one key.
fn dups<V: ToString>(key: &str, vals: impl IntoIterator<Item = V>) -> Vec<(String, String)> {
    vals.into_iter()
        .map(|v| (key.to_string(), v.to_string()))
        .collect()
}

/// A single-file store `{db}.mdb` in a new temporary directory, holding
/// `pairs` in database `db` (`extra` header lines); check finds it clean
/// before any damage.
fn checked_store(db: &str, extra: &str, pairs: &[(String, String)]) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let text = dump_text(Some(db), extra, pairs);
    let store = load(dir.path(), &format!("{db}.mdb"), &text, false);
    check_clean(&store);
    (dir, store)
}

fn keys(n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| (format!("k{i:06}"), format!("value-{i}")))
        .collect()
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

/// First page (from 2 on) whose flags word is `flags`.
fn find_page(file: &[u8], flags: u16) -> usize {
    *pages_with(file, flags)
        .first()
        .unwrap_or_else(|| panic!("no page with flags {flags:#x}"))
}

/// The engine refuses the store: `dump -a` fails.
fn engine_refuses(store: &Path) -> String {
    let out = bin().args(["dump", "-a"]).arg(store).output().unwrap();
    assert!(!out.status.success(), "dump -a read the damaged store");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// check exits 1 and its report mentions `what`.
fn check_reports(store: &Path, what: &str) {
    let out = bin().arg("check").arg(store).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "check: {text}");
    assert!(
        text.contains(what),
        "check does not mention {what:?}: {text}"
    );
}

/// The DUPFIXED database of `dupfixed_store`.
const DUPFIXED_DB: (&str, DatabaseFlags) =
    ("f", DatabaseFlags::DUP_SORT.union(DatabaseFlags::DUP_FIXED));

/// The engine refuses to write the store: putting `key`/`val` into database
/// `db` (opened with `flags`) and committing fails.
fn engine_refuses_write(store: &Path, (db, flags): (&str, DatabaseFlags), key: &[u8], val: &[u8]) {
    let env = open_env(store);
    let written = env.write_txn().and_then(|mut txn| {
        let d = txn.create_db(Some(db), flags)?;
        txn.put(d, key, val, WriteFlags::empty())?;
        txn.commit()
    });
    assert!(written.is_err(), "the engine wrote to the damaged store");
}

/// A single-file store `s.mdb` in a new temporary directory, with `n` keys,
/// in database `d` when `named`; check finds it clean before any damage.
fn keyed_store(n: usize, named: bool, lmdb: bool) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = if named { Some("d") } else { None };
    let store = load(dir.path(), "s.mdb", &dump_text(db, "", &keys(n)), lmdb);
    check_clean(&store);
    (dir, store)
}

/// Rewrite the store file through `damage`.
fn patch(store: &Path, damage: impl FnOnce(&mut Vec<u8>)) {
    let mut file = std::fs::read(store).unwrap();
    damage(&mut file);
    std::fs::write(store, &file).unwrap();
}

/// Offset of the leaf node whose header from its flags on is `pat`
/// (flags, key size, key): the node starts 4 bytes earlier.
fn node_at(file: &[u8], pat: &[u8]) -> usize {
    file.windows(pat.len())
        .position(|w| w == pat)
        .unwrap_or_else(|| panic!("no node {pat:?}"))
        - 4
}

/// Set bits `or` in the MAIN_DBI md_flags of both metas.
fn or_main_flags(file: &mut [u8], or: u8) {
    for meta in 0..2 {
        file[meta * PS + 92] |= or;
    }
}

/// Open the single-file store at `store` for a write with up to 4 databases.
fn open_env(store: &Path) -> Env {
    Env::builder()
        .flags(EnvFlags::NO_SUB_DIR)
        .max_dbs(4)
        .open(store)
        .unwrap()
}

/// Set `bit` in the flags word of the first page whose flags are `flags`,
/// in a store of 3000 keys (branch and leaf pages); both the engine and
/// check refuse it, check saying `what`.
fn page_flag_refused(flags: u16, bit: u8, what: &str) {
    let (_dir, store) = keyed_store(3000, true, false);
    patch(&store, |file| {
        let pg = find_page(file, flags);
        file[pg * PS + 10] |= bit;
    });
    engine_refuses(&store);
    check_reports(&store, what);
}

#[test]
fn leaf_page_with_p_counted() {
    page_flag_refused(0x02, 0x80, "leaf page with P_COUNTED");
}

#[test]
fn branch_page_with_p_leaf2() {
    page_flag_refused(0x01, 0x20, "branch page with P_LEAF2");
}

/// A DUPFIXED database: key "big" with 3000 four-byte items (a sub-database
/// of LEAF2 pages) and key "sk" with three (an inline LEAF2 sub-page).
fn dupfixed_store() -> (TempDir, PathBuf) {
    let mut pairs = dups("big", (0..3000).map(|i| format!("{i:04}")));
    pairs.extend(dups("sk", ["0001", "0002", "0003"]));
    checked_store("f", "dupsort=1\ndupfixed=1\n", &pairs)
}

#[test]
fn leaf2_page_upper_past_the_page() {
    let (_dir, store) = dupfixed_store();
    patch(&store, |file| {
        let pg = find_page(file, 0x22);
        add_u16(file, pg * PS + 14, 200);
    });
    engine_refuses(&store);
    check_reports(&store, "LEAF2 page:");
}

#[test]
fn leaf2_sub_page_upper_past_the_sub_page() {
    let (_dir, store) = dupfixed_store();
    patch(&store, |file| {
        // Leaf node of "sk": F_DUPDATA (4), key size 2, then the sub-page.
        let sub = node_at(file, &[4, 0, 2, 0, b's', b'k']) + 8 + 2;
        assert_eq!(u16_at(file, sub + 10) & 0x62, 0x62, "a LEAF2 sub-page");
        add_u16(file, sub + 14, 64);
    });
    engine_refuses(&store);
    check_reports(&store, "upper");
}

#[test]
fn counted_flag_in_main_record_of_a_stock_store() {
    let (_dir, store) = keyed_store(50, false, true);
    patch(&store, |file| {
        assert_eq!(u32::from_le_bytes(file[20..24].try_into().unwrap()), 1);
        or_main_flags(file, 0x80); // MDB_COUNTED
    });
    let err = engine_refuses(&store);
    assert!(err.contains("MDB_INCOMPATIBLE"), "{err}");
    check_reports(&store, "DLMDB-only bits (counted)");
}

#[test]
fn map_size_no_process_can_map() {
    for size in [1u64 << 62, u64::MAX] {
        let (_dir, store) = keyed_store(50, false, false);
        patch(&store, |file| {
            for meta in 0..2 {
                file[meta * PS + 32..meta * PS + 40].copy_from_slice(&size.to_le_bytes());
            }
        });
        engine_refuses(&store);
        check_reports(&store, "map size");
    }
}

/// Every page whose flags word is `flags` (from page 2 on).
fn pages_with(file: &[u8], flags: u16) -> Vec<usize> {
    (2..file.len() / PS)
        .filter(|&p| u16_at(file, p * PS + 10) == flags)
        .collect()
}

/// Add `delta` to the 16-bit word at `at`.
fn add_u16(file: &mut [u8], at: usize, delta: i32) {
    let word = (i32::from(u16_at(file, at)) + delta) as u16;
    file[at..at + 2].copy_from_slice(&word.to_le_bytes());
}

/// Add `delta` to `upper` of every page with flags `flags`.
fn shift_upper(store: &Path, flags: u16, delta: i32) {
    patch(store, |file| {
        let pages = pages_with(file, flags);
        assert!(!pages.is_empty(), "no page with flags {flags:#x}");
        for pg in pages {
            add_u16(file, pg * PS + 14, delta);
        }
    });
}

#[test]
fn leaf2_page_upper_off_its_item_count() {
    // Within the page, even and odd: reads pass, but the page's bookkeeping
    // no longer matches its items, so the engine refuses to edit it.
    for delta in [-2, -1] {
        let (_dir, store) = dupfixed_store();
        shift_upper(&store, 0x22, delta);
        engine_refuses_write(&store, DUPFIXED_DB, b"big", b"000a");
        check_reports(&store, "LEAF2 page: upper");
    }
}

#[test]
fn leaf_page_with_an_odd_upper() {
    let (_dir, store) = keyed_store(3000, true, false);
    shift_upper(&store, 0x02, -1);
    engine_refuses_write(&store, ("d", DatabaseFlags::empty()), b"k000100x", b"v");
    check_reports(&store, "odd upper");
}

#[test]
fn sub_page_node_padding_past_an_odd_sized_sub_page() {
    // Key "sk" has three 5-byte (odd) duplicates in a padded sub-page; the
    // node's data size shrunk by one leaves the last node's pad byte
    // outside the sub-page.
    let pairs = dups("sk", ["a0001", "a0002", "a0003"]);
    let (_dir, store) = checked_store("d", "dupsort=1\n", &pairs);
    patch(&store, |file| {
        let node = node_at(file, &[4, 0, 2, 0, b's', b'k']);
        let size = u16_at(file, node);
        assert_eq!(size % 2, 0, "sub-page of {size} bytes");
        add_u16(file, node, -1);
    });
    engine_refuses_write(&store, ("d", DatabaseFlags::DUP_SORT), b"sk", b"a0000");
    check_reports(&store, "malformed");
}

/// A store whose newest meta page gets the txn id `new(its id)`: the engine
/// refuses a write transaction (`what` it would do), and check reports
/// `problem`.
fn newest_txnid_refuses_writes(new: impl Fn(u64) -> u64, what: &str, problem: &str) {
    let (_dir, store) = keyed_store(50, false, false);
    patch(&store, |file| {
        let txnid = |f: &[u8], m: usize| {
            u64::from_le_bytes(f[m * PS + 144..m * PS + 152].try_into().unwrap())
        };
        let cur = usize::from(txnid(file, 1) > txnid(file, 0));
        let id = new(txnid(file, cur));
        file[cur * PS + 144..cur * PS + 152].copy_from_slice(&id.to_le_bytes());
    });
    let env = open_env(&store);
    assert!(env.write_txn().is_err(), "a write txn {what}");
    drop(env);
    check_reports(&store, problem);
}

#[test]
fn meta_at_the_largest_txnid() {
    newest_txnid_refuses_writes(|_| u64::MAX, "after the largest txnid", "largest possible");
}

#[test]
fn newest_meta_in_the_page_of_the_other_parity() {
    // One more than the newest id, with the other parity: still the newest
    // meta, now in the page the next commit writes.
    newest_txnid_refuses_writes(
        |id| id + 1,
        "whose commit would overwrite the newest meta",
        "the engine refuses to write",
    );
}

#[test]
fn dup_sub_database_record_without_the_counted_bit() {
    // 3000 duplicates of one key in a counted DUPSORT database: a
    // sub-database with counted branch pages, whose record carries
    // MDB_COUNTED as DLMDB writes it.
    let pairs = dups("many", (0..3000).map(|i| format!("value-{i:05}")));
    let (_dir, store) = checked_store("c", "dupsort=1\ncounted=1\n", &pairs);
    patch(&store, |file| {
        // Leaf node of "many": F_SUBDATA|F_DUPDATA (6), key size 4, then the
        // record (key padded to even), whose md_flags sit at offset 4.
        let flags_at = node_at(file, &[6, 0, 4, 0, b'm', b'a', b'n', b'y']) + 8 + 4 + 4;
        assert_eq!(u16_at(file, flags_at), 0x80, "sub-database record flags");
        file[flags_at] = 0;
    });
    let counted_dups = DatabaseFlags::DUP_SORT | DatabaseFlags::COUNTED;
    engine_refuses_write(&store, ("c", counted_dups), b"many", b"value-00000x");
    check_reports(&store, "sub-database record flags 0x0");
}

#[test]
fn dupsort_main_database_holding_a_named_database() {
    let (_dir, store) = keyed_store(50, true, false);
    patch(&store, |file| or_main_flags(file, 0x04)); // MDB_DUPSORT
    let env = open_env(&store);
    let written = env.write_txn().and_then(|mut txn| {
        let main = txn.open_db(None)?;
        {
            let mut c = txn.cursor_mut(main)?;
            c.first()?;
            c.del(WriteFlags::empty())?;
        }
        txn.commit()
    });
    assert!(
        written.is_err(),
        "the engine deleted a named database as a duplicate"
    );
    drop(env);
    check_reports(&store, "named-database record in a DUPSORT main database");
}
