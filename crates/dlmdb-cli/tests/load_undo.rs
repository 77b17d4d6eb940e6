//! `dlmdb load` into an existing store keeps the data file byte for byte
//! (size and every byte) when the load fails late: the pages its
//! transaction wrote early into free pages inside the old length (spilled
//! past a small `DLMDB_DIRTY_LIMIT`, or flushed by a commit that then
//! failed) are written back from the undo file, which is removed on every
//! exit path.

mod common;

use common::{bin, bytevalue_dump, load_input};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::time::Duration;
use tempfile::TempDir;

/// Dirty-page limit of the failing loads: small, so that pages spill early.
const SMALL_DIRTY_LIMIT: &str = "16";

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// A store `s` in a new temporary directory with many free pages:
/// database `t` filled with `n` records of 200 bytes, nine in ten deleted
/// in a second transaction, and a third small commit so that the freed
/// pages are reusable by the next writer. Also the bytes of its data file.
fn store_with_free_pages(n: u32) -> (TempDir, PathBuf, Vec<u8>) {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("s");
    std::fs::create_dir(&store).unwrap();
    fill_and_free(&store, dlmdb::EnvFlags::empty(), n);
    let before = std::fs::read(data_of(&store)).unwrap();
    (tmp, store, before)
}

/// As [`store_with_free_pages`], a single data file `s.mdb`.
fn single_file_store_with_free_pages(n: u32) -> (TempDir, PathBuf, Vec<u8>) {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("s.mdb");
    fill_and_free(&store, dlmdb::EnvFlags::NO_SUB_DIR, n);
    let before = std::fs::read(&store).unwrap();
    (tmp, store, before)
}

/// The data file of `store`.
fn data_of(store: &Path) -> PathBuf {
    if store.is_file() {
        store.to_path_buf()
    } else {
        store.join("data.mdb")
    }
}

fn fill_and_free(store: &Path, flags: dlmdb::EnvFlags, n: u32) {
    let env = dlmdb::Env::builder()
        .flags(flags)
        .max_dbs(4)
        .map_size(256 << 20)
        .open(store)
        .unwrap();
    let mut txn = env.write_txn().unwrap();
    let db = txn
        .create_db(Some("t"), dlmdb::DatabaseFlags::empty())
        .unwrap();
    for i in 0..n {
        let v = vec![b'a' + (i % 26) as u8; 200];
        txn.put(db, &key(i), &v, dlmdb::WriteFlags::empty())
            .unwrap();
    }
    txn.commit().unwrap();
    let mut txn = env.write_txn().unwrap();
    for i in 0..n {
        if i % 10 != 0 {
            txn.del(db, &key(i), None).unwrap();
        }
    }
    txn.commit().unwrap();
    let mut txn = env.write_txn().unwrap();
    txn.put(db, b"marker", b"kept", dlmdb::WriteFlags::empty())
        .unwrap();
    txn.commit().unwrap();
    let free: usize = {
        let r = env.read_txn().unwrap();
        r.freelist().unwrap().iter().map(|f| f.pages.len()).sum()
    };
    let len = std::fs::metadata(data_of(store)).unwrap().len();
    assert!(
        free as u64 * 4096 > len / 2,
        "only {free} free pages in {len} bytes"
    );
}

/// Dump text of database `name` with `n` records (keys from `first`), 150-byte
/// values; `bad_tail` appends a malformed record instead of `DATA=END`.
fn dump(name: &str, first: u32, n: u32, bad_tail: bool) -> Vec<u8> {
    let s = bytevalue_dump(
        &format!("database={name}\ntype=btree\nmapsize=1048576\nmaxreaders=126\n"),
        (first..first + n).map(|i| (key(i), [b'n'; 150])),
    );
    if bad_tail {
        s.replace("DATA=END\n", " 6g\n 00\n").into_bytes()
    } else {
        s.into_bytes()
    }
}

/// `dlmdb load -q -f <input> store` with the small dirty limit; `limit`
/// adds an RLIMIT_FSIZE of that many bytes (SIGXFSZ ignored: EFBIG).
fn load(store: &Path, input: &[u8], dirty_limit: Option<&str>, limit: Option<u64>) -> Output {
    load_input(command(dirty_limit, limit), input, &["-q"], store)
}

fn command(dirty_limit: Option<&str>, limit: Option<u64>) -> Command {
    let mut cmd = bin();
    match dirty_limit {
        Some(d) => cmd.env("DLMDB_DIRTY_LIMIT", d),
        None => cmd.env_remove("DLMDB_DIRTY_LIMIT"),
    };
    if let Some(bytes) = limit {
        use std::os::unix::process::CommandExt;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: bytes,
                    rlim_max: bytes,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
    }
    cmd
}

/// Names in `dir` and in the store directory that look like undo files.
fn leftovers(store: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let dirs = [store, store.parent().unwrap()];
    for d in dirs.iter().filter(|d| d.is_dir()) {
        for e in std::fs::read_dir(d).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.contains("undo") {
                out.push(name);
            }
        }
    }
    out
}

/// The failed load left the data file as `before`, no undo file, and a
/// healthy store.
fn assert_kept(store: &Path, before: &[u8], out: &Output, code: i32, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(err.contains(what), "{err}");
    assert!(!err.contains("warning"), "{err}");
    let after = std::fs::read(data_of(store)).unwrap();
    assert_eq!(after.len(), before.len(), "size changed: {err}");
    let differing = after
        .chunks(4096)
        .zip(before.chunks(4096))
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(differing, 0, "{differing} pages changed: {err}");
    assert!(leftovers(store).is_empty(), "{:?}", leftovers(store));
    let check = bin().arg("check").arg(store).output().unwrap();
    assert_eq!(check.status.code(), Some(0), "{check:?}");
}

#[test]
fn a_malformed_record_late_in_the_input_leaves_every_byte() {
    let (_tmp, store, before) = store_with_free_pages(20_000);
    fail_late_both_ways(&store, &before, 5_000);
}

#[test]
fn a_single_file_store_keeps_every_byte_too() {
    let (_tmp, store, before) = single_file_store_with_free_pages(20_000);
    fail_late_both_ways(&store, &before, 5_000);
}

/// Load `n` records and then a malformed one, with the small dirty limit,
/// into the existing database `t` (a merge) and into a new one; both keep
/// the data file as `before`.
fn fail_late_both_ways(store: &Path, before: &[u8], n: u32) {
    for (name, first) in [("t", 50_000), ("u", 0)] {
        let out = load(
            store,
            &dump(name, first, n, true),
            Some(SMALL_DIRTY_LIMIT),
            None,
        );
        assert_kept(store, before, &out, 1, "invalid hex digit");
    }
}

/// Load 20,000 new records of `t` (with `dirty_limit`) into a store with
/// free pages while the file may grow only 64 KiB, room for a few more
/// pages than it has: the load reuses the free pages, grows the file a
/// little, then fails saying `what`, and the data file is kept.
fn fail_past_a_file_size_limit(dirty_limit: Option<&str>, what: &str) {
    let (_tmp, store, before) = store_with_free_pages(20_000);
    let limit = before.len() as u64 + (64 << 10);
    let input = dump("t", 50_000, 20_000, false);
    let out = load(&store, &input, dirty_limit, Some(limit));
    assert_kept(&store, &before, &out, 1, what);
}

#[test]
fn a_file_size_limit_during_spills_leaves_every_byte() {
    fail_past_a_file_size_limit(Some(SMALL_DIRTY_LIMIT), "File too large");
}

/// With the default dirty limit nothing spills: the commit writes the
/// pages in page order, the reused free pages first, and fails when it
/// reaches the pages past the limit.
#[test]
fn a_commit_that_fails_part_way_leaves_every_byte() {
    fail_past_a_file_size_limit(None, "commit failed");
}

/// A load reading standard input, with the small dirty limit, fed three
/// quarters of 40,000 new records of `t` (standard input stays open).
fn spawn_load(store: &Path) -> (Child, ChildStdin) {
    let input = dump("t", 50_000, 40_000, false);
    let mut child = command(Some(SMALL_DIRTY_LIMIT), None)
        .args(["load", "-q"])
        .arg(store)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&input[..input.len() * 3 / 4]).unwrap();
    stdin.flush().unwrap();
    (child, stdin)
}

#[test]
fn ctrl_c_late_in_a_spilling_load_leaves_every_byte() {
    let (_tmp, store, before) = store_with_free_pages(20_000);
    let (child, stdin) = spawn_load(&store);
    // SIGINT once the load has had time to write most of its input.
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill has no memory-safety preconditions.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_kept(&store, &before, &out, 130, "interrupted");
}

/// A load killed outright leaves its spilled pages, the file grown past
/// its meta's last page, and its undo file. A later load that fails keeps
/// that file byte for byte too (the pages past the meta's last page are
/// reusable and saved as well) and removes the dead load's undo file.
#[test]
fn a_file_longer_than_its_meta_keeps_its_tail() {
    let (_tmp, store, _) = store_with_free_pages(20_000);
    let data = data_of(&store);
    let len = std::fs::metadata(&data).unwrap().len();
    let (mut child, stdin) = spawn_load(&store);
    let start = std::time::Instant::now();
    while std::fs::metadata(&data).unwrap().len() < len + (256 << 10) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the load never grew the file"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    drop(stdin);
    assert_eq!(leftovers(&store).len(), 1, "{:?}", leftovers(&store));
    let before = std::fs::read(&data).unwrap();
    assert!(before.len() as u64 > len);
    // Enough records to use up the free pages and reach the tail.
    fail_late_both_ways(&store, &before, 40_000);
}

#[test]
fn a_successful_load_leaves_no_undo_file() {
    let (_tmp, store, _) = store_with_free_pages(5_000);
    let out = load(
        &store,
        &dump("t", 50_000, 2_000, false),
        Some(SMALL_DIRTY_LIMIT),
        None,
    );
    assert!(out.status.success(), "{out:?}");
    assert!(leftovers(&store).is_empty(), "{:?}", leftovers(&store));
    let got = bin()
        .args(["get", "-s", "t"])
        .arg(&store)
        .arg("key051999")
        .output()
        .unwrap();
    assert_eq!(got.stdout, [&[b'n'; 150][..], b"\n"].concat());
}

/// No room for the undo file (RLIMIT_FSIZE of 1 MiB: the data file is
/// larger and is not grown, but the undo file of its 4 MiB of free pages
/// cannot be written): the load is refused before it writes anything, with
/// one line naming the undo file.
#[test]
fn no_room_for_the_undo_file_refuses_the_load() {
    let (_tmp, store, before) = store_with_free_pages(20_000);
    let out = load(&store, &dump("t", 50_000, 10, false), None, Some(1 << 20));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("cannot write the undo file")
            && err.contains(".data.mdb.dlmdb-load-undo-")
            && err.contains("File too large")
            && err.contains("nothing was written"),
        "{err}"
    );
    assert_eq!(std::fs::read(data_of(&store)).unwrap(), before);
    assert!(leftovers(&store).is_empty(), "{:?}", leftovers(&store));
}
