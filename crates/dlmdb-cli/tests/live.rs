//! The read-only commands on live stores: a stock LMDB process (LMDB 0.9 or
//! LMDB 1.0, separate processes) holds a read transaction while another
//! writes; `dlmdb stat`, `count`, `check`, `dump` and `copy` share the lock
//! file and see the committed data. A lock file that cannot be shared gives
//! one line of advice (`--no-lock`), and `--lock-format` picks the layout
//! when the command is the first process on the store.

mod common;

use common::{dlmdb_at, stdout_at};
use std::path::PathBuf;
use std::time::Duration;

use dlmdb_tests::live::{self, Family, Peer};
use dlmdb_tests::procs;

const MAP: usize = 64 << 20;

dlmdb_tests::child_roles!(
    live::PEER_ROLE => live::serve,
    live::HOLD_LOCK_BYTE_ROLE => live::hold_lock_byte,
);

#[test]
fn read_only_commands_on_a_live_stock_store() {
    dlmdb_tests::parent_only!();
    for f in live::stock_families() {
        let _w = live::watchdog(
            format!("commands on a live {} store", f.name()),
            Duration::from_secs(180),
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.mdb");
        let mut writer = Peer::spawn(f, &[]);
        writer.open(&path, MAP).unwrap();
        writer.ok("wbegin");
        for i in 0..200u32 {
            writer.put(format!("k{i:04}").as_bytes(), &[i as u8; 300]);
        }
        writer.ok("commit");
        let mut reader = Peer::spawn(f, &[]);
        reader.open(&path, MAP).unwrap();
        reader.ok("rbegin");
        // A commit after the reader pinned its snapshot.
        writer.ok("wbegin");
        writer.put(b"late-key", b"late-value");
        for i in 0..50u32 {
            writer.del(format!("k{i:04}").as_bytes());
        }
        let txnid: u64 = writer.ok("commit").parse().unwrap();
        let entries = 151u64;

        let stat: serde_json::Value =
            serde_json::from_str(&stdout_at(&["stat", "--json", "-e"], &path)).unwrap();
        let want_lock = if f == Family::Lmdb09 { 1 } else { 2 };
        assert_eq!(stat["lock"]["joined"], want_lock, "{}: {stat}", f.name());
        assert_eq!(stat["layout"], "lmdb");
        assert_eq!(stat["env"]["txnid"], txnid, "{}", f.name());
        assert_eq!(
            stat["databases"][0]["entries"],
            entries,
            "{}: {stat}",
            f.name()
        );

        assert_eq!(
            stdout_at(&["count"], &path).trim(),
            entries.to_string(),
            "{}",
            f.name()
        );
        let check = stdout_at(&["check"], &path);
        assert!(
            check.contains(&format!("(txn {txnid})")),
            "{}: {check}",
            f.name()
        );
        let dump = stdout_at(&["dump", "-p"], &path);
        assert!(
            dump.contains(" late-key\n late-value\n"),
            "{}: dump misses the late commit",
            f.name()
        );
        assert!(!dump.contains(" k0000\n"), "{}", f.name());
        let copy = dir.path().join("copy.mdb");
        common::bin()
            .args(["copy"])
            .arg(&path)
            .arg(&copy)
            .output()
            .unwrap();
        assert_eq!(
            stdout_at(&["count"], &copy).trim(),
            entries.to_string(),
            "{}: the copy",
            f.name()
        );

        // The pinned reader still sees its snapshot; the stock processes
        // carry on after our commands came and went.
        assert_eq!(reader.get(b"late-key"), None);
        assert_eq!(reader.get(b"k0000"), Some(vec![0u8; 300]));
        reader.ok("rend");
        writer.ok("wbegin");
        writer.put(b"after-tools", b"1");
        writer.ok("commit");
        assert_eq!(reader.get(b"after-tools"), Some(b"1".to_vec()));
        reader.quit();
        writer.quit();
    }
}

/// A new store `data.mdb` in a temp dir holding `a` = `1`, written by a
/// peer of `family` that has exited.
fn one_key_store(family: Family) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.mdb");
    let mut p = Peer::spawn(family, &[]);
    p.open(&path, MAP).unwrap();
    p.ok("wbegin");
    p.put(b"a", b"1");
    p.ok("commit");
    p.quit();
    (dir, path)
}

#[test]
fn unshareable_lock_file_gives_one_line_of_advice() {
    dlmdb_tests::parent_only!();
    let (dir, path) = one_key_store(Family::Ours);
    live::set_lock_word(&path, 0x1234_5678);
    let lock = live::lock_file(&path);
    let holder = procs::spawn(
        "child_entry",
        live::HOLD_LOCK_BYTE_ROLE,
        &[("PATH", lock.display().to_string())],
    );
    holder.expect("holding", Duration::from_secs(30));
    for cmd in [
        &["stat"][..],
        &["count"],
        &["dump"],
        &["check"],
        &["rank", "--rank", "0"],
    ] {
        let o = dlmdb_at(cmd, &path);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success(),
            "{cmd:?} succeeded on an unknown lock format"
        );
        assert_eq!(err.lines().count(), 1, "{cmd:?}: one line: {err}");
        assert!(
            err.contains("cannot share the lock file") && err.contains("--no-lock"),
            "{cmd:?}: {err}"
        );
    }
    // With --json the engine's code travels with the advice.
    for cmd in [
        &["stat", "--json"][..],
        &["check", "--json"],
        &["count", "--json"],
    ] {
        let o = dlmdb_at(cmd, &path);
        let err: serde_json::Value = serde_json::from_slice(&o.stderr)
            .unwrap_or_else(|e| panic!("{cmd:?}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
        let e = &err["error"];
        assert_eq!(
            e["code"],
            dlmdb::Error::VersionMismatch.code(),
            "{cmd:?}: {err}"
        );
        assert_eq!(e["kind"], "engine", "{cmd:?}: {err}");
        let msg = e["message"].as_str().unwrap();
        assert!(
            msg.contains("MDB_VERSION_MISMATCH") && msg.contains("--no-lock"),
            "{cmd:?}: {msg}"
        );
    }
    let copy = dir.path().join("c.mdb");
    let o = common::bin()
        .args(["copy"])
        .arg(&path)
        .arg(&copy)
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("--no-lock"));
    // --no-lock reads it, and says what it risks.
    let o = dlmdb_at(&["count", "--no-lock"], &path);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "1");
    assert!(String::from_utf8_lossy(&o.stderr).contains("MDB_NOLOCK"));
    // The lock file was left alone.
    assert_eq!(live::lock_word(&path), 0x1234_5678);
    let _ = holder.kill9();
}

#[test]
fn lock_format_option_when_first() {
    dlmdb_tests::parent_only!();
    let (_dir, path) = one_key_store(Family::Master);
    // A stock-layout version-1 store: lock version 1 unless told.
    stdout_at(&["stat"], &path);
    assert_eq!(live::lock_word(&path), 0x0001_0001);
    stdout_at(&["stat", "--lock-format", "v2"], &path);
    assert_eq!(live::lock_word(&path), 0x2C2F_6002);
    stdout_at(&["count", "--lock-format", "v1"], &path);
    assert_eq!(live::lock_word(&path), 0x0001_0001);
    // While LMDB 1.0 holds it, the holder's layout wins over the option.
    let mut holder = Peer::spawn(Family::Master, &[]);
    holder.open(&path, MAP).unwrap();
    assert_eq!(live::lock_word(&path), 0x2C2F_6002);
    let stat: serde_json::Value = serde_json::from_str(&stdout_at(
        &["stat", "--json", "--lock-format", "v1"],
        &path,
    ))
    .unwrap();
    assert_eq!(stat["lock"]["joined"], 2);
    holder.quit();
}
