//! The two expansions of the driver behave alike on the same calls, through
//! each of their faces (typed handles, the DUPSORT executor, `Eng`).

use dlmdb_kit::dup::{fl, op, DupEngine};
use dlmdb_kit::eng::{k, open_main_db, Eng, EnvGuard, LmdbE, OursE};
use dlmdb_kit::{ours, stock};

/// Writes the same pairs with the typed face of one engine and reads them
/// back: (walk forward, walk backward, a get, a missing get, entries).
macro_rules! typed_roundtrip {
    ($m:ident, $path:expr) => {{
        let env = $m::Env::open_file($path, 0, 4, 1 << 20).unwrap();
        let t = env.begin_rw().unwrap();
        let dbi = t.open_db(Some(b"d"), $m::ffi::MDB_CREATE).unwrap();
        for i in [3u8, 1, 2] {
            t.put(dbi, &[b'k', i], &[i; 3], 0).unwrap();
        }
        assert!(t.del(dbi, b"k\x02", None).unwrap());
        assert!(!t.del(dbi, b"k\x02", None).unwrap());
        t.commit().unwrap();
        let t = env.begin_ro().unwrap();
        let dbi = t.open_db(Some(b"d"), 0).unwrap();
        (
            t.walk(dbi, true).unwrap(),
            t.walk(dbi, false).unwrap(),
            t.get(dbi, b"k\x03").unwrap(),
            t.get(dbi, b"zz").unwrap(),
            t.entries(dbi).unwrap(),
            t.named_dbs().unwrap(),
        )
    }};
}

#[test]
fn typed_faces_agree() {
    let dir = tempfile::tempdir().unwrap();
    let a = typed_roundtrip!(ours, &dir.path().join("ours.mdb"));
    let b = typed_roundtrip!(stock, &dir.path().join("stock.mdb"));
    assert_eq!(a, b);
    assert_eq!(a.0.len(), 2);
    assert_eq!(a.1.first(), a.0.last());
    assert_eq!(a.2.as_deref(), Some(&[3u8; 3][..]));
    assert_eq!(a.3, None);
    assert_eq!(a.4, 2);
    assert_eq!(a.5, vec![b"d".to_vec()]);
}

fn dup_session<E: DupEngine>(path: &std::path::Path) -> Vec<String> {
    let mut e = E::open(path, fl::NOSUBDIR, 4, 1 << 20).unwrap();
    let mut log = Vec::new();
    assert_eq!(e.begin_rw(), 0);
    let dbi = e.open_db(Some(b"dups"), fl::DUPSORT | fl::CREATE).unwrap();
    for v in [b"b", b"a", b"c"] {
        log.push(e.put(dbi, b"key", v, 0).show());
    }
    assert_eq!(e.cursor_open(0, dbi), 0);
    for (o, k) in [
        (op::SET, Some(&b"key"[..])),
        (op::NEXT_DUP, None),
        (op::LAST_DUP, None),
    ] {
        log.push(e.cget(0, o, k, None).show());
    }
    log.push(e.ccount(0).show());
    log.push(e.clist(0).show());
    assert_eq!(e.commit(), 0);
    log
}

#[test]
fn dup_executors_agree() {
    let dir = tempfile::tempdir().unwrap();
    let a = dup_session::<ours::Exec>(&dir.path().join("ours.mdb"));
    let b = dup_session::<stock::Exec>(&dir.path().join("stock.mdb"));
    assert_eq!(a, b);
    assert!(a.iter().any(|l| l.contains("n=3")), "{a:?}");
}

fn eng_session<E: Eng>(dir: &std::path::Path) -> (Vec<u8>, u64, bool) {
    let g = EnvGuard::<E>::open(dir, 0, 2, 1 << 20).unwrap();
    let dbi = open_main_db::<E>(g.env).unwrap();
    let t = E::txn_begin(g.env, std::ptr::null_mut(), 0).unwrap();
    E::put(t, dbi, b"a", b"1", 0).unwrap();
    E::put(t, dbi, b"b", b"2", 0).unwrap();
    let gone = E::del(t, dbi, b"a", None).unwrap();
    E::txn_commit(t).unwrap();
    let t = E::txn_begin(g.env, std::ptr::null_mut(), k::MDB_RDONLY).unwrap();
    let c = E::cursor_open(t, dbi).unwrap();
    let first = E::cursor_get(c, &[], &[], k::MDB_FIRST)
        .unwrap()
        .unwrap()
        .0
        .to_vec();
    E::cursor_close(c);
    let n = E::entries(t, dbi).unwrap();
    E::txn_abort(t);
    (first, n, gone)
}

#[test]
fn eng_faces_agree_and_name_the_failing_call() {
    let dir = tempfile::tempdir().unwrap();
    let a = eng_session::<OursE>(&dir.path().join("ours"));
    let b = eng_session::<LmdbE>(&dir.path().join("lmdb"));
    assert_eq!(a, b);
    assert_eq!(a, (b"b".to_vec(), 1, true));
    let missing = dir.path().join("no").join("such").join("dir");
    let err = OursE::env_open(&missing, 0, 0, 1 << 20)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("ours: mdb_env_open failed:"), "{err}");
}

#[test]
fn fixtures_dir_follows_the_variable() {
    // Read only: the variable is set by the test runner, or not at all.
    let d = dlmdb_kit::fixtures_dir();
    match std::env::var_os("DLMDB_FIXTURES") {
        Some(v) => assert_eq!(d, std::path::PathBuf::from(v)),
        None => assert!(d.ends_with("tests/fixtures"), "{}", d.display()),
    }
}
