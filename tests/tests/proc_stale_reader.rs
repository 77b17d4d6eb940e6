//! Reader table, every expectation run on stock LMDB too:
//! * a reader process killed with SIGKILL while holding a snapshot leaves
//!   its slot behind: `mdb_reader_list` still lists it, and pages freed
//!   after its snapshot are not reused (the file grows under churn);
//!   `mdb_reader_check` clears exactly that slot, and from then on the
//!   churn reuses pages (the file stops growing);
//! * `mdb_reader_list` prints the documented format (lmdb-api.md §4.7);
//! * `MDB_READERS_FULL` once every slot is taken (threads holding read
//!   txns with `MDB_NOTLS`), and a slot freed by an abort is reusable;
//! * without `MDB_NOTLS`, a thread's slot is released when the thread ends.

use std::time::Duration;

use dlmdb_tests::procs;

const MAP: usize = 256 << 20;
const KEYS: usize = 200;

dlmdb_tests::engine_roles! {
    "reader" => |m, path| {
        let env = m::Env::open_file(&path, 0, 2, 0).expect("reader: open");
        let t = env.begin_ro().expect("reader: begin");
        procs::report(&format!("holding {} {}", t.id(), std::process::id()));
        std::thread::sleep(Duration::from_secs(120));
        drop(t);
    }
}

dlmdb_tests::engine_tests! {
    fn stale_reader_ours, stale_reader_stock(m, engine) {
        let (_dir, path) = procs::temp_store();
        let env = m::Env::open_file(&path, 0, 2, MAP).unwrap();
        let dbi = env.create_dbs(&[("churn", 0)]).unwrap()[0];
        let mut gen = 0u32;
        let churn = |gen: &mut u32, txns: usize| -> u64 {
            let before = env.info().unwrap().last_pgno;
            for _ in 0..txns {
                *gen += 1;
                let t = env.begin_rw().unwrap();
                for k in 0..KEYS {
                    let v = vec![(*gen % 251) as u8; 1000];
                    t.put(dbi, format!("k{k:04}").as_bytes(), &v, 0).unwrap();
                }
                t.commit().unwrap();
            }
            env.info().unwrap().last_pgno - before
        };
        churn(&mut gen, 5);

        let child = procs::spawn_on_store("reader", &path, engine);
        let line = child.expect("holding", Duration::from_secs(30));
        let txnid: u64 = line.split(' ').nth(1).unwrap().parse().unwrap();
        let pid = child.pid();
        assert_eq!(
            txnid,
            env.info().unwrap().last_txnid,
            "{}: reader holds the newest snapshot",
            engine
        );

        // The live reader is listed in the documented format.
        let (lines, rc) = env.reader_list();
        assert!(rc >= 0, "reader_list rc {rc}");
        assert_eq!(
            lines.first().map(String::as_str),
            Some("    pid     thread     txnid\n"),
            "{}: {lines:?}",
            engine
        );
        let mine: Vec<&String> = lines
            .iter()
            .filter(|l| l.starts_with(&format!("{pid:>10} ")))
            .collect();
        assert_eq!(
            mine.len(),
            1,
            "{}: reader pid {pid} not listed once: {lines:?}",
            engine
        );
        let parts: Vec<&str> = mine[0]
            .trim_end_matches('\n')
            .split(' ')
            .filter(|s| !s.is_empty())
            .collect();
        assert_eq!(parts.len(), 3, "{}: reader line {:?}", engine, mine[0]);
        assert!(
            u64::from_str_radix(parts[1], 16).is_ok(),
            "{}: thread id {:?} not hex",
            engine,
            parts[1]
        );
        assert_eq!(
            parts[2],
            txnid.to_string(),
            "{}: reader line {:?}",
            engine,
            mine[0]
        );

        // Kill it: the slot stays until a reader check.
        let _ = child.kill9();
        let (lines, _) = env.reader_list();
        assert!(
            lines.iter().any(|l| l.starts_with(&format!("{pid:>10} "))),
            "{}: the dead reader's slot vanished before mdb_reader_check: {lines:?}",
            engine
        );

        // Its snapshot pins every page freed after it: the file grows.
        let pinned = churn(&mut gen, 30);

        let dead = env.reader_check().unwrap();
        assert_eq!(
            dead, 1,
            "{}: mdb_reader_check cleared {dead} slots, expected 1",
            engine
        );
        let (lines, _) = env.reader_list();
        assert!(
            !lines.iter().any(|l| l.starts_with(&format!("{pid:>10} "))),
            "{}: dead reader still listed after the check: {lines:?}",
            engine
        );
        assert_eq!(
            env.reader_check().unwrap(),
            0,
            "{}: a second check found more dead slots",
            engine
        );

        // Now the pages are reusable: after a warm-up the file stops growing.
        churn(&mut gen, 30);
        let free = churn(&mut gen, 30);
        eprintln!(
            "{}: growth with the stale slot {pinned} pages; after the check {free} pages",
            engine
        );
        assert!(
            pinned >= 30 * 40,
            "{}: only {pinned} pages of growth while pinned: reuse past a live snapshot?",
            engine
        );
        assert!(
            free * 10 <= pinned,
            "{}: still growing after the check ({free} vs {pinned} pages)",
            engine
        );
    }
}

dlmdb_tests::engine_tests! {
    fn readers_full_ours, readers_full_stock(m) {
        let (_dir, path) = procs::temp_store();
        let o = m::Opts {
            flags: m::ffi::MDB_NOSUBDIR | m::ffi::MDB_NOTLS,
            maxdbs: 0,
            mapsize: MAP,
            maxreaders: 4,
        };
        let env = std::sync::Arc::new(m::Env::open_with(Some(&path), o).unwrap());
        assert_eq!(env.maxreaders(), 4);
        {
            let t = env.begin_rw().unwrap();
            // Stock LMDB sets up the main DB's comparator at its first open.
            let main = t.open_db(None, 0).unwrap();
            t.put(main, b"k", b"v", 0).unwrap();
            t.commit().unwrap();
        }
        // Four threads each take a slot and hand their txn back (NOTLS:
        // the txn, not the thread, owns the slot).
        let mut held: Vec<m::Txn> = (0..4)
            .map(|_| {
                let env = env.clone();
                std::thread::spawn(move || env.begin(None, m::ffi::MDB_RDONLY).unwrap())
                    .join()
                    .unwrap()
            })
            .collect();
        let e = env.begin_ro().err();
        assert_eq!(e, Some(m::ffi::MDB_READERS_FULL), "5th reader with 4 slots");
        // The held txns still read, from this thread.
        assert_eq!(held[2].get(1, b"k").unwrap().as_deref(), Some(&b"v"[..]));
        // One abort frees one slot.
        held.pop();
        let t = env.begin_ro().unwrap();
        assert_eq!(env.begin_ro().err(), Some(m::ffi::MDB_READERS_FULL));
        // reset keeps the slot; renew reuses it.
        t.reset();
        assert_eq!(
            env.begin_ro().err(),
            Some(m::ffi::MDB_READERS_FULL),
            "reset must keep the NOTLS slot"
        );
        t.renew().unwrap();
        drop(t);
        drop(held);
        for _ in 0..10 {
            let _a = env.begin_ro().unwrap();
        }
    }
}

dlmdb_tests::engine_tests! {
    fn thread_slots_released_ours, thread_slots_released_stock(m) {
        let (_dir, path) = procs::temp_store();
        let o = m::Opts {
            flags: m::ffi::MDB_NOSUBDIR,
            maxdbs: 0,
            mapsize: MAP,
            maxreaders: 2,
        };
        let env = std::sync::Arc::new(m::Env::open_with(Some(&path), o).unwrap());
        // Twenty short-lived threads, two slots: each thread's slot must
        // be released when it exits.
        for i in 0..20 {
            let env = env.clone();
            std::thread::spawn(move || {
                let t = env
                    .begin_ro()
                    .unwrap_or_else(|e| panic!("thread {i}: {}", m::strerror(e)));
                drop(t);
            })
            .join()
            .unwrap();
        }
        // Without NOTLS one thread has one read txn at a time.
        let t = env.begin_ro().unwrap();
        assert_eq!(env.begin_ro().err(), Some(m::ffi::MDB_BAD_RSLOT));
        drop(t);
    }
}

dlmdb_tests::engine_tests! {
    /// After a long-lived reader ends, the large free list it left behind must
    /// be reused: no growth at all while the later commits can be served from
    /// it (stock LMDB: none). The pinned phase itself must grow the file.
    fn reuse_after_long_reader_ours, reuse_after_long_reader_stock(m, engine) {
        let dir = tempfile::tempdir().unwrap();
        let env = m::Env::open_file(&dir.path().join("data.mdb"), m::ffi::MDB_NOSYNC, 2, 1 << 30).unwrap();
        let dbi = env.create_dbs(&[("d", 0)]).unwrap()[0];
        let commit = |i: u64| {
            let t = env.begin_rw().unwrap();
            t.put(dbi, format!("k{}", i % 50).as_bytes(), &i.to_le_bytes(), 0).unwrap();
            t.commit().unwrap();
        };
        for i in 0..100 {
            commit(i);
        }
        let start = env.info().unwrap().last_pgno;
        let pin = env.begin_ro().unwrap();
        for i in 0..3000 {
            commit(i);
        }
        drop(pin);
        let pinned = env.info().unwrap().last_pgno;
        let mut marks = Vec::new();
        for i in 0..10_000 {
            commit(i);
            if i % 2000 == 1999 {
                marks.push(env.info().unwrap().last_pgno);
            }
        }
        let after = env.info().unwrap().last_pgno;
        eprintln!(
            "{}: pinned phase grew {start} -> {pinned}; then last_pg every 2000 commits {marks:?}",
            engine
        );
        assert!(pinned - start >= 3000, "{}: a held reader did not pin freed pages", engine);
        assert!(
            after - pinned <= 20,
            "{}: the free list left by an ended reader is not reused: the file grew {pinned} -> {after} pages \
             over 10000 one-key commits (last_pg every 2000: {marks:?})",
            engine
        );
    }
}
