//! A writer process killed with SIGKILL while it holds the writer lock
//! (inside a write txn), while this process keeps the environment open, so
//! the lock file is not re-initialised: the next write txn must recover the
//! lock (robust mutex, lmdb-format.md §16.7) instead of blocking forever,
//! and nothing of the dead writer's txn is visible. Run on our engine and on
//! stock LMDB (the oracle).

use std::sync::mpsc;
use std::time::Duration;

use dlmdb_tests::procs;

const MAP: usize = 64 << 20;

dlmdb_tests::engine_roles! {
    "hold_writer" => |m, path| {
        let env = m::Env::open_file(&path, 0, 2, MAP).expect("open");
        let dbi = env.open_dbs(&["d"]).unwrap()[0];
        // A read txn too, so the dead process also leaves a reader slot.
        let r = env.begin_ro().unwrap();
        let t = env.begin_rw().unwrap();
        for i in 0..500u32 {
            t.put(dbi, format!("dead{i:04}").as_bytes(), &[9u8; 500], 0)
                .unwrap();
        }
        procs::report(&format!("inside {}", r.id()));
        std::thread::sleep(Duration::from_secs(120));
        drop(t);
        drop(r);
    }
}

dlmdb_tests::engine_tests! {
    fn dead_writer_lock_recovered_ours, dead_writer_lock_recovered_stock(m, engine) {
        let (_dir, path) = procs::temp_store();
        let env = std::sync::Arc::new(m::Env::open_file(&path, 0, 2, MAP).unwrap());
        let dbi = env.create_dbs(&[("d", 0)]).unwrap()[0];
        {
            let t = env.begin_rw().unwrap();
            t.put(dbi, b"before", b"1", 0).unwrap();
            t.commit().unwrap();
        }
        let committed = env.info().unwrap().last_txnid;
        for round in 0..3 {
            let child = procs::spawn_on_store("hold_writer", &path, engine);
            child.expect("inside", Duration::from_secs(30));
            let _ = child.kill9();
            // Readers are unaffected.
            assert_eq!(env.begin_ro().unwrap().get(dbi, b"before").unwrap().as_deref(), Some(&b"1"[..]));
            // The next writer must get the lock (in a thread, with a deadline).
            let (tx, rx) = mpsc::channel();
            let env2 = env.clone();
            std::thread::spawn(move || {
                let r = env2.begin_rw().map(|t| {
                    let seen = t.get(dbi, b"dead0000").unwrap();
                    t.put(dbi, format!("after{round}").as_bytes(), b"2", 0).unwrap();
                    (seen, t.commit())
                });
                let _ = tx.send(r);
            });
            match rx.recv_timeout(Duration::from_secs(20)) {
                Ok(Ok((seen, commit))) => {
                    assert_eq!(seen, None, "{} round {round}: the dead writer's put is visible", engine);
                    commit.unwrap_or_else(|e| panic!("{} round {round}: commit after recovery: {}", engine, m::strerror(e)));
                }
                Ok(Err(e)) => panic!("{} round {round}: write txn after a dead writer: {}", engine, m::strerror(e)),
                Err(_) => panic!("{} round {round}: write txn still blocked 20 s after the lock owner was killed", engine),
            }
            assert_eq!(env.info().unwrap().last_txnid, committed + round + 1, "{} round {round}: txn ids", engine);
        }
        // The dead processes' reader slots are gone (cleared by the
        // recovery or by an explicit check; either way none is left).
        env.reader_check().unwrap();
        let (lines, _) = env.reader_list();
        let me = format!("{:>10} ", std::process::id());
        assert!(
            lines.iter().skip(1).all(|l| l.starts_with(&me)),
            "{}: slots of dead processes remain: {lines:?}",
            engine
        );
        let t = env.begin_ro().unwrap();
        assert_eq!(t.entries(dbi).unwrap(), 4);
    }
}

dlmdb_tests::engine_tests! {
    /// Deterministic form of the crash window "the writer wrote its meta page
    /// (the commit point, lmdb-format.md §10.7) and died before publishing the
    /// new txnid in the lock file header": the header txnid (lock file offset
    /// 8, §16.3) is set back by one while the writer mutex is owner-dead. The
    /// recovering writer must re-derive the txnid from the meta page with the
    /// larger txnid (§16.7), so it builds on the newest commit; building on the
    /// older one would reuse pages the newest meta still points to.
    fn stale_header_txnid_recovered_ours, stale_header_txnid_recovered_stock(m, engine) {
        use std::os::unix::fs::FileExt;
        let (dir, path) = procs::temp_store();
        let env = m::Env::open_file(&path, 0, 2, MAP).unwrap();
        let dbi = env.create_dbs(&[("d", 0)]).unwrap()[0];
        for i in 0..5u32 {
            let t = env.begin_rw().unwrap();
            t.put(dbi, format!("k{i}").as_bytes(), &[i as u8; 2000], 0).unwrap();
            t.commit().unwrap();
        }
        let newest = env.info().unwrap().last_txnid;
        let child = procs::spawn_on_store("hold_writer", &path, engine);
        child.expect("inside", Duration::from_secs(30));
        let _ = child.kill9();
        let lock = std::fs::OpenOptions::new().read(true).write(true).open(dir.path().join("data.mdb-lock")).unwrap();
        let mut b = [0u8; 8];
        lock.read_exact_at(&mut b, 8).unwrap();
        assert_eq!(u64::from_le_bytes(b), newest, "{}: lock file header txnid not at offset 8", engine);
        lock.write_all_at(&(newest - 1).to_le_bytes(), 8).unwrap();
        let t = env.begin_rw().unwrap_or_else(|e| panic!("{}: write txn after the recovery: {}", engine, m::strerror(e)));
        assert_eq!(t.id(), newest + 1, "{}: the recovered writer builds on txn {} instead of the newest meta {newest}", engine, t.id() - 1);
        assert_eq!(t.get(dbi, b"k4").unwrap(), Some(vec![4u8; 2000]), "{}: the newest commit is lost", engine);
        t.put(dbi, b"k5", b"x", 0).unwrap_or_else(|e| panic!("{}: put: {}", engine, m::strerror(e)));
        t.commit().unwrap_or_else(|e| panic!("{}: commit: {}", engine, m::strerror(e)));
        drop(env);
        dlmdb_tests::remove_lock(&path);
        let env = m::Env::open_file(&path, 0, 2, 0).unwrap();
        let dbi = env.open_dbs(&["d"]).unwrap()[0];
        let t = env.begin_ro().unwrap();
        assert_eq!(t.id(), newest + 1);
        assert_eq!(t.entries(dbi).unwrap(), 6);
    }
}
