//! Unit tests of the safe API against the engine.

use crate::*;
use tempfile::TempDir;

fn env_in(dir: &TempDir, max_dbs: u32) -> Env {
    Env::builder()
        .map_size(16 << 20)
        .max_dbs(max_dbs)
        .open(dir.path())
        .expect("open env")
}

#[test]
fn error_codes_round_trip() {
    for code in [
        -30799, -30798, -30797, -30796, -30784, -30781, -30780, -30778,
    ] {
        let e = Error::from_code(code);
        assert_eq!(e.code(), code);
        assert!(!matches!(e, Error::Other(_)), "{code} has its own variant");
    }
    assert!(matches!(Error::from_code(libc::EINVAL), Error::Io(_)));
    assert_eq!(Error::from_code(libc::EINVAL).code(), libc::EINVAL);
    assert!(Error::NotFound.to_string().starts_with("MDB_NOTFOUND"));
}

#[test]
fn version_names_dlmdb() {
    let (s, major, ..) = version();
    assert!(s.to_lowercase().contains("dlmdb"), "{s}");
    assert!(major >= 1);
}

#[test]
fn put_get_commit_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let env = env_in(&dir, 0);
        assert_eq!(env.layout(), Layout::DlmdbV2);
        let mut txn = env.write_txn().unwrap();
        let db = txn.open_db(None).unwrap();
        txn.put(db, b"a", b"1", WriteFlags::empty()).unwrap();
        txn.put(db, b"bb", b"22", WriteFlags::empty()).unwrap();
        assert_eq!(txn.get(db, b"a").unwrap(), Some(&b"1"[..]));
        txn.commit().unwrap();
    }
    let env = env_in(&dir, 0);
    let main = env.open_db(None).unwrap();
    let txn = env.read_txn().unwrap();
    assert_eq!(txn.get(main, b"bb").unwrap(), Some(&b"22"[..]));
    assert_eq!(txn.get(main, b"zz").unwrap(), None);
    assert_eq!(txn.stat(main).unwrap().entries, 2);
    assert!(txn.id() >= 1);
}

#[test]
fn abort_discards() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_in(&dir, 0);
    let main = env.open_db(None).unwrap();
    {
        let mut txn = env.write_txn().unwrap();
        txn.put(main, b"k", b"v", WriteFlags::empty()).unwrap();
        // dropped: aborted
    }
    let txn = env.read_txn().unwrap();
    assert_eq!(txn.get(main, b"k").unwrap(), None);
}

#[test]
fn named_databases_and_cursor_iteration() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_in(&dir, 4);
    let db = env.create_db(Some("nums"), DatabaseFlags::empty()).unwrap();
    let mut txn = env.write_txn().unwrap();
    for i in 0..500u32 {
        let k = format!("key{i:05}");
        txn.put(db, k.as_bytes(), &i.to_le_bytes(), WriteFlags::empty())
            .unwrap();
    }
    txn.commit().unwrap();

    let txn = env.read_txn().unwrap();
    let mut c = txn.cursor(db).unwrap();
    let fwd: Vec<Vec<u8>> = c.iter().map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(fwd.len(), 500);
    assert!(fwd.windows(2).all(|w| w[0] < w[1]));
    let rev: Vec<Vec<u8>> = c.iter_rev().map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(rev.iter().rev().cloned().collect::<Vec<_>>(), fwd);
    let from: Vec<_> = c
        .iter_from(b"key00490")
        .map(|r| r.unwrap().0.to_vec())
        .collect();
    assert_eq!(from.len(), 10);
    let (k, v) = c.set(b"key00007").unwrap().unwrap();
    assert_eq!(k, b"key00007");
    assert_eq!(v, 7u32.to_le_bytes());
    assert_eq!(
        c.get(Some(b"key00008"), None, CursorOp::Set)
            .unwrap()
            .unwrap()
            .0,
        b"key00008"
    );
    assert!(c.set(b"nope").unwrap().is_none());
    drop(c);
    assert_eq!(txn.db_names().unwrap(), vec!["nums".to_string()]);
    assert_eq!(txn.iter(db).unwrap().count(), 500);
}

#[test]
fn errors_and_flags() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_in(&dir, 2);
    let mut txn = env.write_txn().unwrap();
    let db = txn.open_db(None).unwrap();
    txn.put(db, b"x", b"1", WriteFlags::empty()).unwrap();
    let e = txn
        .put(db, b"x", b"2", WriteFlags::NO_OVERWRITE)
        .unwrap_err();
    assert!(matches!(e, Error::KeyExist), "{e:?}");
    assert_eq!(
        txn.put_no_overwrite(db, b"x", b"3").unwrap(),
        Some(&b"1"[..])
    );
    assert!(matches!(
        txn.put(db, b"", b"v", WriteFlags::empty()),
        Err(Error::BadValSize)
    ));
    assert!(matches!(txn.open_db(Some("missing")), Err(Error::NotFound)));
    assert!(txn.del(db, b"x", None).unwrap());
    assert!(!txn.del(db, b"x", None).unwrap());
    txn.commit().unwrap();
}

#[test]
fn reserve_and_cursor_writes() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_in(&dir, 0);
    let main = env.open_db(None).unwrap();
    let mut txn = env.write_txn().unwrap();
    txn.reserve(main, b"r", 5, WriteFlags::empty())
        .unwrap()
        .copy_from_slice(b"hello");
    {
        let mut c = txn.cursor_mut(main).unwrap();
        c.put(b"a", b"A", WriteFlags::empty()).unwrap();
        c.put(b"b", b"B", WriteFlags::empty()).unwrap();
        assert_eq!(c.first().unwrap().unwrap(), (&b"a"[..], &b"A"[..]));
        c.put_current(b"a", b"AA").unwrap();
        c.set(b"b").unwrap();
        c.del(WriteFlags::empty()).unwrap();
    }
    assert_eq!(txn.get(main, b"r").unwrap(), Some(&b"hello"[..]));
    assert_eq!(txn.get(main, b"a").unwrap(), Some(&b"AA"[..]));
    assert_eq!(txn.get(main, b"b").unwrap(), None);
    txn.commit().unwrap();
}

#[test]
fn page_walk_matches_stat() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_in(&dir, 0);
    let main = env.open_db(None).unwrap();
    let mut txn = env.write_txn().unwrap();
    for i in 0..3000u32 {
        let v = vec![b'v'; (i % 50) as usize + if i % 500 == 0 { 9000 } else { 0 }];
        txn.put(main, format!("{i:08}").as_bytes(), &v, WriteFlags::empty())
            .unwrap();
    }
    txn.commit().unwrap();
    let txn = env.read_txn().unwrap();
    let st = txn.stat(main).unwrap();
    let sum = WalkSummary::of(&txn.pages(main).unwrap());
    assert_eq!(sum.branch_pages, st.branch_pages);
    assert_eq!(sum.leaf_pages, st.leaf_pages);
    assert_eq!(sum.overflow_pages, st.overflow_pages);
    assert_eq!(sum.leaf_entries, st.entries);
    assert_eq!(sum.depth, st.depth);
}

#[test]
fn format_lmdb_layout() {
    let dir = tempfile::tempdir().unwrap();
    let env = Env::builder()
        .flags(EnvFlags::FORMAT_LMDB)
        .open(dir.path())
        .unwrap();
    assert_eq!(env.layout(), Layout::Lmdb);
    assert_eq!(read_data_version(&env.data_file()), Some(1));
}

#[test]
fn env_is_send_sync() {
    fn f<T: Send + Sync>() {}
    f::<Env>();
}
