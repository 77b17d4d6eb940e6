//! `dlmdb load` into an existing store: the input is streamed into one
//! write transaction (records already in the store are replaced, the
//! input's own duplicates are refused through a set kept in memory or in a
//! scratch database of the transaction), and any failure, a full disk
//! included, leaves the data file byte for byte as it was, size included.

mod common;

use common::{bin, bytevalue_dump, load_input, succeeded};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A dump of database `name` (`dupsort`) holding `records` in that order.
fn dump(name: &str, dupsort: bool, records: &[(Vec<u8>, Vec<u8>)]) -> String {
    let dupsort = if dupsort { "dupsort=1\n" } else { "" };
    bytevalue_dump(
        &format!("database={name}\ntype=btree\n{dupsort}mapsize=1048576\nmaxreaders=126\n"),
        records.iter().map(|(k, v)| (k, v)),
    )
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// `dlmdb load ARGS -f <file holding input> TARGET`.
fn load(input: &str, target: &Path, args: &[&str]) -> Output {
    load_input(bin(), input, args, target)
}

/// A store at `dir/s` whose database `t` holds keys 0..n with value "old".
fn store_with(dir: &Path, n: u32, dupsort: bool) -> PathBuf {
    let store = dir.join("s");
    let recs: Vec<_> = (0..n).map(|i| (key(i), b"old".to_vec())).collect();
    succeeded(load(&dump("t", dupsort, &recs), &store, &["-q"]));
    store
}

/// The main database's keys: the names of the named databases.
fn names(store: &Path) -> String {
    String::from_utf8(succeeded(
        bin()
            .args(["scan", "--keys-only"])
            .arg(store)
            .output()
            .unwrap(),
    ))
    .unwrap()
}

/// Memory caps for the duplicate set: the default (all in memory) and one
/// byte (every item moves to the scratch database at once).
const SEEN_CAPS: [&[&str]; 2] = [&[], &["--seen-memory-bytes", "1"]];

#[test]
fn a_merge_replaces_existing_records_and_adds_new_ones() {
    for cap in SEEN_CAPS {
        let tmp = tempfile::tempdir().unwrap();
        let store = store_with(tmp.path(), 1000, false);
        // Keys 500..1500 in a scrambled order (3 is prime to 1001).
        let recs: Vec<_> = (0..1001u32)
            .map(|i| {
                let k = 500 + i * 3 % 1001;
                (key(k), format!("new{k}").into_bytes())
            })
            .collect();
        let mut args = vec!["--json"];
        args.extend_from_slice(cap);
        let v: serde_json::Value =
            serde_json::from_slice(&succeeded(load(&dump("t", false, &recs), &store, &args)))
                .unwrap();
        assert_eq!(v["created"], false, "{v}");
        assert_eq!(v["strategy"], "single transaction");
        assert_eq!(v["databases"][0]["written"], 1001);
        assert_eq!(v["databases"][0]["appended"], false);
        let text = String::from_utf8(succeeded(
            bin()
                .args(["scan", "-s", "t"])
                .arg(&store)
                .output()
                .unwrap(),
        ))
        .unwrap();
        let want: String = (0..1501u32)
            .map(|i| {
                let v = if i < 500 {
                    "old".to_string()
                } else {
                    format!("new{i}")
                };
                format!("key{i:06}\t{v}\n")
            })
            .collect();
        assert_eq!(text, want, "cap {cap:?}");
        assert_eq!(names(&store), "t\n", "a scratch database was left behind");
        let check = bin().arg("check").arg(&store).output().unwrap();
        assert_eq!(check.status.code(), Some(0), "{check:?}");
    }
}

#[test]
fn the_inputs_own_duplicates_are_refused_and_the_file_kept() {
    for cap in SEEN_CAPS {
        for dupsort in [false, true] {
            // (what, the repeated item's key, its value)
            for (what, k, v) in [
                ("an item the store held", key(3), b"old".to_vec()),
                ("an item new to the store", key(5000), b"x".to_vec()),
            ] {
                let tmp = tempfile::tempdir().unwrap();
                let store = store_with(tmp.path(), 200, dupsort);
                let data = store.join("data.mdb");
                let before = std::fs::read(&data).unwrap();
                // The item, 300 others, then the item again (not adjacent).
                let mut recs = vec![(k.clone(), v.clone())];
                recs.extend((0..300u32).map(|i| (key(9000 + i * 13 % 300), b"y".to_vec())));
                recs.push((k, v));
                let out = load(&dump("t", dupsort, &recs), &store, cap);
                let err = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(1), "{what}: {err}");
                // Header lines (7, 8 with dupsort=1), then two per record:
                // the repeated key is record 301.
                let line = 8 + usize::from(dupsort) + 2 * 301;
                assert!(
                    err.contains(&format!("line {line}: duplicate")),
                    "{what}, dupsort {dupsort}: {err}"
                );
                assert!(
                    std::fs::read(&data).unwrap() == before,
                    "{what}: file changed"
                );
            }
        }
    }
}

#[test]
fn no_overwrite_merges_keep_existing_records() {
    let tmp = tempfile::tempdir().unwrap();
    let store = store_with(tmp.path(), 10, false);
    let recs: Vec<_> = (5..15u32).map(|i| (key(i), b"new".to_vec())).collect();
    let v: serde_json::Value = serde_json::from_slice(&succeeded(load(
        &dump("t", false, &recs),
        &store,
        &["--json", "-N"],
    )))
    .unwrap();
    assert_eq!(v["databases"][0]["written"], 5, "{v}");
    assert_eq!(v["databases"][0]["skipped"], 5, "{v}");
    let out = succeeded(
        bin()
            .args(["get", "-s", "t"])
            .arg(&store)
            .arg("key000007")
            .output()
            .unwrap(),
    );
    assert_eq!(out, b"old\n");
}

/// A load that runs out of room: the big input, the data file before, and
/// the outcome.
fn fill_up(store: &Path, cmd: Command) -> (Vec<u8>, Output) {
    let data = store.join("data.mdb");
    let before = std::fs::read(&data).unwrap();
    // About 4 MB of records: more than the room given.
    let recs: Vec<_> = (0..20_000u32)
        .map(|i| (key(100_000 + i * 7 % 20_000), vec![b'v'; 200]))
        .collect();
    let out = load_input(cmd, dump("t", false, &recs), &["-q"], store);
    (before, out)
}

fn assert_kept(store: &Path, before: &[u8], out: &Output, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{what}: {err}");
    assert!(err.contains(what), "{err}");
    let after = std::fs::read(store.join("data.mdb")).unwrap();
    assert_eq!(after.len(), before.len(), "size changed: {err}");
    assert!(after == before, "data file changed: {err}");
    // Still a healthy store with its records.
    let check = bin().arg("check").arg(store).output().unwrap();
    assert_eq!(check.status.code(), Some(0), "{check:?}");
    let out = succeeded(
        bin()
            .args(["get", "-s", "t"])
            .arg(store)
            .arg("key000001")
            .output()
            .unwrap(),
    );
    assert_eq!(out, b"old\n");
}

/// A tmpfs of 1 MiB mounted for the test; unmounted on drop.
struct SmallFs(tempfile::TempDir);

impl SmallFs {
    fn mount() -> Option<SmallFs> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        let dir = tempfile::tempdir().ok()?;
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir.path())
            .status()
            .ok()?;
        st.success().then_some(SmallFs(dir))
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

/// ENOSPC: a full filesystem during the load's writes.
#[test]
fn a_full_disk_leaves_the_data_file_as_it_was() {
    let Some(fs) = SmallFs::mount() else {
        eprintln!("SKIP: mounting a small tmpfs needs root; the EFBIG test covers the same path");
        return;
    };
    let store = store_with(fs.0.path(), 100, false);
    let (before, out) = fill_up(&store, bin());
    assert_kept(&store, &before, &out, "No space left on device");
}

/// EFBIG: RLIMIT_FSIZE stops the data file's growth (SIGXFSZ ignored, so
/// the write fails instead), through the same failure and truncation path
/// as a full disk; needs no privileges.
#[test]
fn a_file_size_limit_leaves_the_data_file_as_it_was() {
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    let store = store_with(tmp.path(), 100, false);
    let mut cmd = bin();
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 1 << 20,
                rlim_max: 1 << 20,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let (before, out) = fill_up(&store, cmd);
    assert_kept(&store, &before, &out, "File too large");
}

#[test]
fn the_reported_txnid_is_the_loads_own_commit_while_another_process_writes() {
    // Another writer waits on the writer lock while the load runs and
    // commits as soon as the load's commit releases it, so the store's last
    // id just after the load is often that writer's, not the load's.
    let tmp = tempfile::tempdir().unwrap();
    let store = store_with(tmp.path(), 10, false);
    let env = dlmdb::Env::builder()
        .max_dbs(4)
        .flags(dlmdb::EnvFlags::NO_SYNC)
        .open(&store)
        .unwrap();
    let db = env.open_db(Some("t")).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let loads = 100u32;
    let (writer_ids, reports) = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut ids = std::collections::HashSet::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let mut txn = env.write_txn().unwrap();
                let id = txn.id();
                let k = format!("writer{id:08}");
                txn.put(db, k.as_bytes(), b"w", dlmdb::WriteFlags::empty())
                    .unwrap();
                txn.commit().unwrap();
                ids.insert(id);
                std::thread::sleep(std::time::Duration::from_micros(20));
            }
            ids
        });
        // Stops the writer however this closure ends: a failed load's panic
        // would otherwise leave the scope waiting for it forever.
        struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let stop_writer = StopOnDrop(&stop);
        let reports: Vec<(u32, u64)> = (0..loads)
            .map(|i| {
                let recs = [(format!("load{i:04}").into_bytes(), b"l".to_vec())];
                let out = succeeded(load(&dump("t", false, &recs), &store, &["--json", "-q"]));
                let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
                (i, v["txnid"].as_u64().unwrap())
            })
            .collect();
        drop(stop_writer);
        (writer.join().unwrap(), reports)
    });
    assert!(
        writer_ids.len() > loads as usize,
        "the other writer committed too little"
    );
    assert!(
        reports.windows(2).all(|w| w[0].1 < w[1].1),
        "every load committed under an id of its own: {reports:?}"
    );
    let txn = env.read_txn().unwrap();
    for (i, txnid) in reports {
        assert!(
            !writer_ids.contains(&txnid),
            "load {i} reported txnid {txnid}, the other writer's commit"
        );
        assert!(txn
            .get(db, format!("load{i:04}").as_bytes())
            .unwrap()
            .is_some());
    }
}
