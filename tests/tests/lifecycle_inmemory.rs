//! `MDB_INMEMORY` (dlmdb-extensions.md "Newest DLMDB", N.3.5 and
//! N.5): anonymous memory, no data or lock file, path may be NULL; forces
//! WRITEMAP, NOSYNC and NOMETASYNC; concurrent reader threads with one
//! writer; contents gone at close; EINVAL with RDONLY, FIXEDMAP or
//! PREVSNAPSHOT. Stock LMDB has no such mode, so there is no oracle run.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

use dlmdb_tests::procs::ours::{self as m, ffi, Env, Opts};

const MAP: usize = 64 << 20;

fn open_mem(extra: u32, maxdbs: u32) -> Result<Env, i32> {
    Env::open_with(
        None,
        Opts {
            flags: ffi::MDB_INMEMORY | extra,
            maxdbs,
            mapsize: MAP,
            maxreaders: 0,
        },
    )
}

#[test]
fn inmemory_basic_and_forced_flags() {
    let env =
        open_mem(0, 4).unwrap_or_else(|e| panic!("INMEMORY with NULL path: {}", m::strerror(e)));
    let f = env.get_flags();
    for (flag, name) in [
        (ffi::MDB_INMEMORY, "INMEMORY"),
        (ffi::MDB_WRITEMAP, "WRITEMAP"),
        (ffi::MDB_NOSYNC, "NOSYNC"),
        (ffi::MDB_NOMETASYNC, "NOMETASYNC"),
    ] {
        assert!(f & flag != 0, "mdb_env_get_flags {f:#x} lacks {name}");
    }
    let dbi = env.create_dbs(&[("d", 0)]).unwrap()[0];
    let t = env.begin_rw().unwrap();
    for i in 0..3000u32 {
        let v = vec![(i % 256) as u8; if i % 100 == 0 { 20_000 } else { 100 }];
        t.put(dbi, format!("k{i:05}").as_bytes(), &v, 0).unwrap();
    }
    t.commit().unwrap();
    let t = env.begin_ro().unwrap();
    assert_eq!(t.entries(dbi).unwrap(), 3000);
    assert_eq!(t.get(dbi, b"k00100").unwrap(), Some(vec![100u8; 20_000]));
    drop(t);
    env.sync(true).unwrap();
    // Nested txns are refused like any WRITEMAP env (lmdb-api.md §3.6).
    let top = env.begin_rw().unwrap();
    assert_eq!(env.begin(Some(&top), 0).err(), Some(ffi::MDB_BAD_TXN));
}

#[test]
fn inmemory_path_ignored_and_contents_gone_at_close() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.mdb");
    {
        let env = Env::open_with(
            Some(&path),
            Opts {
                flags: ffi::MDB_INMEMORY | ffi::MDB_NOSUBDIR,
                maxdbs: 4,
                mapsize: MAP,
                maxreaders: 0,
            },
        )
        .unwrap();
        let dbi = env.create_dbs(&[("d", 0)]).unwrap()[0];
        let t = env.begin_rw().unwrap();
        t.put(dbi, b"k", b"v", 0).unwrap();
        t.commit().unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(names.is_empty(), "MDB_INMEMORY created files: {names:?}");
    }
    let env = open_mem(0, 4).unwrap();
    let t = env.begin_ro().unwrap();
    assert_eq!(
        t.open_db(Some(b"d"), 0).err(),
        Some(ffi::MDB_NOTFOUND),
        "a new in-memory env still has the old DB"
    );
    let main = t.open_db(None, 0).unwrap();
    assert_eq!(t.entries(main).unwrap(), 0);
    assert_eq!(
        env.info().unwrap().last_txnid,
        0,
        "a new in-memory env has committed txns"
    );
}

#[test]
fn inmemory_rejected_flag_combinations() {
    for (flag, name) in [
        (ffi::MDB_RDONLY, "RDONLY"),
        (ffi::MDB_FIXEDMAP, "FIXEDMAP"),
        (ffi::MDB_PREVSNAPSHOT, "PREVSNAPSHOT"),
    ] {
        assert_eq!(
            open_mem(flag, 0).err(),
            Some(libc::EINVAL),
            "MDB_INMEMORY | MDB_{name}"
        );
    }
}

/// Reader threads check an invariant (sum of counters, seq == txn id) on
/// every snapshot while one writer thread commits; a snapshot taken while a
/// write txn is open shows the old value (DLMDB's mtest_inmem scenario).
#[test]
fn inmemory_concurrent_readers_one_writer() {
    let env = Arc::new(open_mem(0, 2).unwrap());
    let dbi = env.create_dbs(&[("inv", 0)]).unwrap()[0];
    const N: u64 = 8;
    {
        let t = env.begin_rw().unwrap();
        for i in 0..N {
            t.put(dbi, &[b'c', i as u8], &100u64.to_le_bytes(), 0)
                .unwrap();
        }
        t.put(dbi, b"seq", &t.id().to_le_bytes(), 0).unwrap();
        t.commit().unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(4));
    // Snapshots each reader has checked so far: the writer goes on past
    // its rounds until every reader has checked some, however the threads
    // are scheduled on a loaded machine.
    let taken: Arc<Vec<AtomicU64>> = Arc::new((0..3).map(|_| AtomicU64::new(0)).collect());
    let readers: Vec<_> = (0..3)
        .map(|r| {
            let (env, stop, start, taken) =
                (env.clone(), stop.clone(), start.clone(), taken.clone());
            std::thread::spawn(move || {
                start.wait();
                let (mut prev, mut snaps) = (0u64, 0u64);
                while !stop.load(Ordering::Relaxed) {
                    let t = env.begin_ro().unwrap();
                    let mut sum = 0;
                    for i in 0..N {
                        sum += u64::from_le_bytes(
                            t.get(dbi, &[b'c', i as u8])
                                .unwrap()
                                .unwrap()
                                .try_into()
                                .unwrap(),
                        );
                    }
                    assert_eq!(
                        sum,
                        100 * N,
                        "reader {r}: snapshot {} sums to {sum}",
                        t.id()
                    );
                    let seq = u64::from_le_bytes(
                        t.get(dbi, b"seq").unwrap().unwrap().try_into().unwrap(),
                    );
                    // The snapshot is the one its id names or, when two
                    // commits race the txn begin, a newer one from the same
                    // meta page (id + 2k), as in stock LMDB (see
                    // proc_readers_writer.rs, check_seq); never older.
                    assert!(
                        seq >= t.id() && (seq - t.id()) % 2 == 0,
                        "reader {r}: seq {seq} in snapshot {}",
                        t.id()
                    );
                    assert!(seq >= prev, "reader {r}: went back from {prev} to {seq}");
                    prev = seq;
                    snaps += 1;
                    taken[r].fetch_add(1, Ordering::Relaxed);
                }
                snaps
            })
        })
        .collect();
    start.wait();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    for round in 0u64.. {
        if round >= 2000
            && (taken.iter().all(|n| n.load(Ordering::Relaxed) > 10)
                || std::time::Instant::now() > deadline)
        {
            break;
        }
        let t = env.begin_rw().unwrap();
        let (a, b) = ((round % N) as u8, ((round * 7 + 3) % N) as u8);
        let va = u64::from_le_bytes(t.get(dbi, &[b'c', a]).unwrap().unwrap().try_into().unwrap());
        let vb = u64::from_le_bytes(t.get(dbi, &[b'c', b]).unwrap().unwrap().try_into().unwrap());
        if a != b && va > 0 {
            t.put(dbi, &[b'c', a], &(va - 1).to_le_bytes(), 0).unwrap();
            t.put(dbi, &[b'c', b], &(vb + 1).to_le_bytes(), 0).unwrap();
        }
        t.put(dbi, b"seq", &t.id().to_le_bytes(), 0).unwrap();
        t.put(
            dbi,
            format!("f{:04}", round % 500).as_bytes(),
            &vec![1u8; (round % 700) as usize],
            0,
        )
        .unwrap();
        if round == 1000 {
            // While the write txn is open a new snapshot shows the old data.
            let env2 = env.clone();
            let old = std::thread::spawn(move || {
                let r = env2.begin_ro().unwrap();
                r.get(dbi, b"f0000").unwrap()
            })
            .join()
            .unwrap();
            assert_eq!(
                old,
                Some(vec![1u8; 500]),
                "open write txn visible to a reader (round 500 wrote 500 bytes)"
            );
        }
        t.commit().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for (i, r) in readers.into_iter().enumerate() {
        let n = r
            .join()
            .unwrap_or_else(|_| panic!("reader thread {i} failed"));
        assert!(n > 10, "reader {i} took only {n} snapshots");
    }
}

/// With MDB_NOLOCK an in-memory env has no lock table at all (N.5); it
/// still works for one thread.
#[test]
fn inmemory_nolock() {
    let env = open_mem(ffi::MDB_NOLOCK, 2)
        .unwrap_or_else(|e| panic!("INMEMORY|NOLOCK: {}", m::strerror(e)));
    let dbi = env.create_dbs(&[("d", 0)]).unwrap()[0];
    for i in 0..100u32 {
        let t = env.begin_rw().unwrap();
        t.put(dbi, &i.to_be_bytes(), &[3u8; 700], 0).unwrap();
        t.commit().unwrap();
    }
    let t = env.begin_ro().unwrap();
    assert_eq!(t.entries(dbi).unwrap(), 100);
    assert_eq!(t.id(), 101);
}
