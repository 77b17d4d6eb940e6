//! Resource limits: MDB_MAP_FULL on a small map (the transaction fails
//! cleanly, earlier commits stay intact, the environment keeps working, a
//! larger map lets the write through), MDB_BAD_VALSIZE for keys of 0 and 512
//! bytes, MDB_DBS_FULL. Each case is also run on stock LMDB for the codes.

use dlmdb::{Database, DatabaseFlags, EnvFlags, Error, WriteFlags};
use dlmdb_tests::{ours, stock};

const SMALL_MAP: usize = 1 << 20;

fn value(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| (i * 31 + j * 7) as u8).collect()
}

/// Fill a fresh store until MAP_FULL; returns the number of values that fit.
fn fill_until_full(env: &dlmdb::Env) -> usize {
    let mut txn = env.write_txn().unwrap();
    for i in 0..10_000 {
        match txn.put(
            Database::MAIN,
            format!("fill-{i:06}").as_bytes(),
            &value(i, 3000),
            WriteFlags::empty(),
        ) {
            Ok(()) => {}
            Err(Error::MapFull) => {
                // the transaction is now in error state: later calls fail
                let r = txn.put(Database::MAIN, b"after", b"x", WriteFlags::empty());
                assert!(
                    matches!(r, Err(Error::BadTxn)),
                    "put after MAP_FULL: expected BadTxn, got {r:?}"
                );
                let r = txn.commit();
                assert!(r.is_err(), "commit after MAP_FULL must fail");
                return i;
            }
            Err(e) => panic!("put #{i}: unexpected error {e}"),
        }
    }
    panic!("10000 values of 3000 bytes fit into a 1 MiB map");
}

/// A new single-file stock LMDB environment of `SMALL_MAP` bytes with
/// `max_dbs` databases, in a temporary directory kept by the guard.
fn stock_scratch(max_dbs: u32) -> (tempfile::TempDir, stock::Env) {
    let dir = tempfile::tempdir().unwrap();
    let env = stock::Env::open_file(&dir.path().join("s.mdb"), 0, max_dbs, SMALL_MAP).unwrap();
    (dir, env)
}

#[test]
fn map_full_aborts_cleanly_and_env_keeps_working() {
    for layout in [EnvFlags::empty(), EnvFlags::FORMAT_LMDB] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("small.mdb");
        let mut env = ours::open(&path, layout, SMALL_MAP, 4).unwrap();
        // stock LMDB needs the main DB opened once before handle 1 is used
        env.open_db(None).unwrap();
        // committed data before the failure
        {
            let mut t = env.write_txn().unwrap();
            for i in 0..20 {
                t.put(
                    Database::MAIN,
                    format!("keep-{i:02}").as_bytes(),
                    &value(i, 100),
                    WriteFlags::empty(),
                )
                .unwrap();
            }
            t.commit().unwrap();
        }
        let fitted = fill_until_full(&env);
        assert!(fitted > 50, "only {fitted} values fit before MAP_FULL");
        let check_kept = |env: &dlmdb::Env| {
            let t = env.read_txn().unwrap();
            for i in 0..20 {
                let v = t
                    .get(Database::MAIN, format!("keep-{i:02}").as_bytes())
                    .unwrap();
                assert_eq!(
                    v,
                    Some(&value(i, 100)[..]),
                    "committed value keep-{i:02} after MAP_FULL"
                );
            }
            assert_eq!(
                t.get(Database::MAIN, b"fill-000000").unwrap(),
                None,
                "aborted data must not be visible"
            );
            assert_eq!(t.stat(Database::MAIN).unwrap().entries, 20);
        };
        check_kept(&env);
        // the environment still accepts small writes
        {
            let mut t = env.write_txn().unwrap();
            t.put(Database::MAIN, b"small", b"ok", WriteFlags::empty())
                .unwrap();
            t.commit().unwrap();
        }
        assert_eq!(
            env.read_txn()
                .unwrap()
                .get(Database::MAIN, b"small")
                .unwrap(),
            Some(&b"ok"[..])
        );
        // one value larger than the whole map
        {
            let mut t = env.write_txn().unwrap();
            let r = t.put(
                Database::MAIN,
                b"huge",
                &vec![7u8; 2 * SMALL_MAP],
                WriteFlags::empty(),
            );
            assert!(
                matches!(r, Err(Error::MapFull)),
                "value bigger than the map: got {r:?}"
            );
        }
        // a larger map lets the same write through
        env.set_map_size(8 * SMALL_MAP).unwrap();
        {
            let mut t = env.write_txn().unwrap();
            t.put(
                Database::MAIN,
                b"huge",
                &vec![7u8; 2 * SMALL_MAP],
                WriteFlags::empty(),
            )
            .unwrap();
            t.commit().unwrap();
        }
        drop(env);
        // everything survives a reopen
        let env = ours::open(&path, layout, 0, 4).unwrap();
        env.open_db(None).unwrap();
        check_kept_after_reopen(&env);
    }
}

fn check_kept_after_reopen(env: &dlmdb::Env) {
    let t = env.read_txn().unwrap();
    for i in 0..20 {
        assert_eq!(
            t.get(Database::MAIN, format!("keep-{i:02}").as_bytes())
                .unwrap(),
            Some(&value(i, 100)[..])
        );
    }
    assert_eq!(
        t.get(Database::MAIN, b"huge").unwrap().map(|v| v.len()),
        Some(2 * SMALL_MAP)
    );
    assert_eq!(t.get(Database::MAIN, b"small").unwrap(), Some(&b"ok"[..]));
}

#[test]
fn stock_map_full_code_matches() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.mdb");
    let env = stock::Env::open(&path, stock::MDB_NOSUBDIR, 4, SMALL_MAP).unwrap();
    let t = env.begin_rw().unwrap();
    t.open_db(None, 0).unwrap();
    let mut rc = 0;
    for i in 0..10_000 {
        if let Err(e) = t.put(1, format!("fill-{i:06}").as_bytes(), &value(i, 3000), 0) {
            rc = e;
            break;
        }
    }
    assert_eq!(
        rc,
        dlmdb_sys::MDB_MAP_FULL,
        "stock code for a full map is the one our Error::MapFull maps to"
    );
    assert_eq!(Error::MapFull.code(), rc);
}

#[test]
fn bad_valsize_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.mdb");
    let env = ours::open(&path, EnvFlags::empty(), SMALL_MAP, 4).unwrap();
    env.open_db(None).unwrap();
    let mut t = env.write_txn().unwrap();
    let k512 = vec![b'k'; 512];
    let k511 = vec![b'k'; 511];
    let r = t.put(Database::MAIN, b"", b"v", WriteFlags::empty());
    assert!(
        matches!(r, Err(Error::BadValSize)),
        "put with empty key: {r:?}"
    );
    let r = t.put(Database::MAIN, &k512, b"v", WriteFlags::empty());
    assert!(
        matches!(r, Err(Error::BadValSize)),
        "put with 512-byte key: {r:?}"
    );
    let r = t.get(Database::MAIN, b"");
    assert!(
        matches!(r, Err(Error::BadValSize)),
        "get with empty key: {r:?}"
    );
    let r = t.del(Database::MAIN, b"", None);
    assert!(
        matches!(r, Err(Error::BadValSize)),
        "del with empty key: {r:?}"
    );
    // over-long keys are simply not found by get (lmdb-api.md §4.5)
    let r = t.get(Database::MAIN, &k512);
    assert!(matches!(r, Ok(None)), "get with 512-byte key: {r:?}");
    // BAD_VALSIZE does not poison the transaction
    t.put(Database::MAIN, &k511, b"max", WriteFlags::empty())
        .expect("511-byte key is allowed");
    t.commit().expect("commit after BAD_VALSIZE errors");
    let r = env.read_txn().unwrap();
    assert_eq!(r.get(Database::MAIN, &k511).unwrap(), Some(&b"max"[..]));
    assert_eq!(env.max_key_size(), 511);

    // the same codes from stock LMDB
    let (_sdir, senv) = stock_scratch(4);
    let st = senv.begin_rw().unwrap();
    st.open_db(None, 0).unwrap();
    assert_eq!(st.put(1, b"", b"v", 0), Err(dlmdb_sys::MDB_BAD_VALSIZE));
    assert_eq!(st.put(1, &k512, b"v", 0), Err(dlmdb_sys::MDB_BAD_VALSIZE));
    assert_eq!(st.get(1, &k512), Ok(None));
}

#[test]
fn dbs_full() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.mdb");
    let env = ours::open(&path, EnvFlags::empty(), SMALL_MAP, 2).unwrap();
    {
        let t = env.write_txn().unwrap();
        t.create_db(Some("a"), DatabaseFlags::empty()).unwrap();
        t.create_db(Some("b"), DatabaseFlags::empty()).unwrap();
        let r = t.create_db(Some("c"), DatabaseFlags::empty());
        assert!(
            matches!(r, Err(Error::DbsFull)),
            "third named DB with max_dbs 2: {r:?}"
        );
        t.commit().expect("commit after DBS_FULL");
    }
    let t = env.read_txn().unwrap();
    assert!(t.open_db(Some("a")).is_ok());
    assert!(t.open_db(Some("b")).is_ok());
    assert!(t.open_db(Some("c")).is_err());
    drop(t);

    let (_sdir, senv) = stock_scratch(2);
    let st = senv.begin_rw().unwrap();
    st.open_db(Some(b"a"), 0x40000).unwrap();
    st.open_db(Some(b"b"), 0x40000).unwrap();
    assert_eq!(
        st.open_db(Some(b"c"), 0x40000),
        Err(dlmdb_sys::MDB_DBS_FULL)
    );
}
