//! Soundness of the safe API on prefix-compressed databases.
//!
//! The engine decodes keys of a prefix-compressed page (all but node 0) into
//! a buffer owned by the cursor, overwritten by the cursor's next operation
//! (and, in DUPSORT prefix databases, duplicate values too). Items handed
//! out by `Cursor` live for the transaction, so they must not point there:
//! holding them across further cursor operations, collecting an iterator or
//! dropping the cursor must leave every returned key and value intact.
//!
//! The tests in the first part only use what `&[u8]` items also offer
//! (`&*x`, `to_vec`), so they compile against the old API too, where they
//! fail (items observed changing under the caller).

use dlmdb::{CountFlags, CursorOp, Database, DatabaseFlags, Env, EnvFlags, RoTxn, WriteFlags};
use std::borrow::Cow;

/// Enough keys sharing long prefixes to fill dozens of leaves.
fn keys() -> Vec<Vec<u8>> {
    (0..3000u32)
        .map(|i| format!("tenant/{:03}/user/{:06}/profile", i % 7, i).into_bytes())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Every item of `it`; the first error fails the test.
fn all_items<T, E: std::fmt::Debug>(it: impl Iterator<Item = Result<T, E>>) -> Vec<T> {
    it.collect::<Result<_, _>>().unwrap()
}

fn value_of(k: &[u8]) -> Vec<u8> {
    let mut v = b"value:".to_vec();
    v.extend_from_slice(k);
    v
}

fn open(dir: &std::path::Path, flags: EnvFlags) -> Env {
    Env::builder()
        .map_size(64 << 20)
        .max_dbs(4)
        .flags(flags)
        .open(dir)
        .unwrap()
}

/// A fresh environment in its own temporary directory (kept alive by the
/// returned guard).
fn fresh(flags: EnvFlags) -> (tempfile::TempDir, Env) {
    let dir = tempfile::tempdir().unwrap();
    let env = open(dir.path(), flags);
    (dir, env)
}

/// Database `name` created with `flags` and holding `pairs`, committed.
fn filled(env: &Env, name: &str, flags: DatabaseFlags, pairs: &[(Vec<u8>, Vec<u8>)]) -> Database {
    let db = env.create_db(Some(name), flags).unwrap();
    let mut w = env.write_txn().unwrap();
    for (k, v) in pairs {
        w.put(db, k, v, WriteFlags::empty()).unwrap();
    }
    w.commit().unwrap();
    db
}

/// A prefix-compressed (and COUNTED) plain database with `keys()`.
fn plain_prefix(env: &Env) -> Database {
    let flags = DatabaseFlags::PREFIX_COMPRESSION | DatabaseFlags::COUNTED;
    filled(env, "p", flags, &expected_plain())
}

/// A temp dir, the environment in it, one database and its expected pairs.
type Setup = (tempfile::TempDir, Env, Database, Vec<(Vec<u8>, Vec<u8>)>);

/// A fresh environment holding [`plain_prefix`], and its expected pairs.
fn with_plain_prefix() -> Setup {
    let (dir, env) = fresh(EnvFlags::empty());
    let db = plain_prefix(&env);
    (dir, env, db, expected_plain())
}

/// A fresh environment holding [`dup_prefix`], and its expected pairs.
fn with_dup_prefix() -> Setup {
    let (dir, env) = fresh(EnvFlags::empty());
    let db = dup_prefix(&env);
    (dir, env, db, dup_pairs())
}

/// Expected (key, value) pairs of the DUPSORT prefix database: some keys
/// with many duplicates (sub-databases), some with a few (inline sub-pages),
/// some with one; values share long prefixes too.
fn dup_pairs() -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for i in 0..400u32 {
        let key = format!("group/{:02}/member/{:05}", i % 5, i).into_bytes();
        let n = match i % 10 {
            0 => 300,
            1..=4 => 6,
            _ => 1,
        };
        for j in 0..n {
            out.push((
                key.clone(),
                format!("dup-value/common-prefix/{j:06}").into_bytes(),
            ));
        }
    }
    out.sort();
    out
}

fn dup_prefix(env: &Env) -> Database {
    let flags = DatabaseFlags::PREFIX_COMPRESSION | DatabaseFlags::DUP_SORT;
    filled(env, "d", flags, &dup_pairs())
}

fn owned<K: AsRef<[u8]>, V: AsRef<[u8]>>(items: &[(K, V)]) -> Vec<(Vec<u8>, Vec<u8>)> {
    items
        .iter()
        .map(|(k, v)| (k.as_ref().to_vec(), v.as_ref().to_vec()))
        .collect()
}

/// Compare item lists, reporting the first difference readably.
#[track_caller]
fn same(got: &[(Vec<u8>, Vec<u8>)], want: &[(Vec<u8>, Vec<u8>)], what: &str) {
    let show = |p: &(Vec<u8>, Vec<u8>)| {
        format!(
            "{} = {}",
            String::from_utf8_lossy(&p.0),
            String::from_utf8_lossy(&p.1)
        )
    };
    if let Some(i) = (0..got.len().min(want.len())).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: item {i} is {:?}, expected {:?}",
            show(&got[i]),
            show(&want[i])
        );
    }
    assert_eq!(got.len(), want.len(), "{what}: item count");
}

/// Every item of `it`, checked against `want` and kept for later checks.
#[track_caller]
fn all_items_same<K, V, E>(
    it: impl Iterator<Item = Result<(K, V), E>>,
    want: &[(Vec<u8>, Vec<u8>)],
    what: &str,
) -> Vec<(K, V)>
where
    K: AsRef<[u8]>,
    V: AsRef<[u8]>,
    E: std::fmt::Debug,
{
    let all = all_items(it);
    same(&owned(&all), want, what);
    all
}

/// Every item of `db` through a fresh cursor of `r`, kept past the cursor.
fn scan<'t>(r: &'t RoTxn<'_>, db: Database) -> Vec<dlmdb::Item<'t>> {
    all_items(r.cursor(db).unwrap().iter())
}

/// [`scan`], checked against `want`.
#[track_caller]
fn scan_same<'t>(
    r: &'t RoTxn<'_>,
    db: Database,
    want: &[(Vec<u8>, Vec<u8>)],
    what: &str,
) -> Vec<dlmdb::Item<'t>> {
    let all = scan(r, db);
    same(&owned(&all), want, what);
    all
}

/// Some keys borrowed from the map (node 0 of a page) and some copied
/// (decoded from a prefix-compressed node).
#[track_caller]
fn keys_borrowed_and_copied(all: &[dlmdb::Item<'_>]) {
    assert!(all.iter().any(|(k, _)| matches!(k, Cow::Borrowed(_))));
    assert!(all.iter().any(|(k, _)| matches!(k, Cow::Owned(_))));
}

fn expected_plain() -> Vec<(Vec<u8>, Vec<u8>)> {
    keys()
        .into_iter()
        .map(|k| {
            let v = value_of(&k);
            (k, v)
        })
        .collect()
}

#[test]
fn prefix_db_spans_many_leaves() {
    let (_dir, env) = fresh(EnvFlags::empty());
    let (p, d) = (plain_prefix(&env), dup_prefix(&env));
    let r = env.read_txn().unwrap();
    assert!(r.stat(p).unwrap().leaf_pages >= 20);
    assert!(r.stat(d).unwrap().leaf_pages >= 3);
}

#[test]
fn held_items_survive_further_cursor_ops() {
    let (_dir, env, db, exp) = with_plain_prefix();
    let r = env.read_txn().unwrap();
    let mut c = r.cursor(db).unwrap();
    let a = c.first().unwrap().unwrap();
    let b = c.next().unwrap().unwrap();
    let x = c.next().unwrap().unwrap();
    let mid = c.set_range(&exp[1500].0).unwrap().unwrap();
    let last = c.last().unwrap().unwrap();
    let prev = c.prev().unwrap().unwrap();
    c.set(&exp[10].0).unwrap();
    c.next().unwrap();
    assert_eq!(&*a.0, &exp[0].0[..]);
    assert_eq!(
        &*b.0,
        &exp[1].0[..],
        "key of item 1 changed under the caller"
    );
    assert_ne!(&*a.0, &*b.0);
    assert_eq!(&*x.0, &exp[2].0[..]);
    assert_eq!(&*x.1, &exp[2].1[..]);
    assert_eq!(&*mid.0, &exp[1500].0[..]);
    assert_eq!(&*last.0, &exp[exp.len() - 1].0[..]);
    assert_eq!(&*prev.0, &exp[exp.len() - 2].0[..]);
    // Still intact once the cursor is gone.
    drop(c);
    assert_eq!(&*b.0, &exp[1].0[..]);
    assert_eq!(&*prev.0, &exp[exp.len() - 2].0[..]);
}

#[test]
fn collected_iterators_match() {
    let (_dir, env, db, exp) = with_plain_prefix();
    let r = env.read_txn().unwrap();
    let mut c = r.cursor(db).unwrap();
    let fwd = all_items(c.iter());
    let rev = all_items(c.iter_rev());
    let from = all_items(c.iter_from(&exp[2000].0));
    same(&owned(&fwd), &exp, "fwd");
    let mut rev = owned(&rev);
    rev.reverse();
    same(&rev, &exp, "iter_rev");
    same(&owned(&from), &exp[2000..], "from");
    // Items outlive the cursor (they live for the transaction).
    drop(c);
    same(&owned(&fwd), &exp, "fwd after the cursor closed");
    all_items_same(r.iter(db).unwrap(), &exp, "RoTxn::iter");
    let dropped: Vec<_> = {
        let mut c = r.cursor(db).unwrap();
        let v = all_items(c.iter());
        v
    };
    // Churn the allocator so a dangling buffer would be reused.
    let noise: Vec<Vec<u8>> = (0..64).map(|i| vec![i as u8; 600]).collect();
    let mut c2 = r.cursor(db).unwrap();
    c2.last().unwrap();
    same(&owned(&dropped), &exp, "collected, cursor dropped");
    drop(noise);
}

#[test]
fn dupsort_prefix_items_survive() {
    let (_dir, env, db, exp) = with_dup_prefix();
    let r = env.read_txn().unwrap();
    let mut c = r.cursor(db).unwrap();
    let all = all_items_same(c.iter(), &exp, "dupsort iter");
    // Duplicates of one key with a sub-database, and with an inline sub-page.
    for key in [&b"group/00/member/00000"[..], b"group/01/member/00001"] {
        let dups = all_items(c.iter_dup_of(key));
        let want: Vec<_> = exp.iter().filter(|(k, _)| k == key).cloned().collect();
        assert!(want.len() > 1);
        same(&owned(&dups), &want, "iter_dup_of");
        // Hold one value across moves within the duplicates.
        let first = c.set(key).unwrap().unwrap();
        let second = c.get(None, None, CursorOp::NextDup).unwrap().unwrap();
        let third = c.get(None, None, CursorOp::NextDup).unwrap().unwrap();
        c.get(None, None, CursorOp::LastDup).unwrap();
        assert_eq!(&*first.1, &want[0].1[..]);
        assert_eq!(
            &*second.1,
            &want[1].1[..],
            "duplicate changed under the caller"
        );
        assert_eq!(&*third.1, &want[2].1[..]);
    }
    drop(c);
    same(&owned(&all), &exp, "dupsort iter after the cursor closed");
}

#[test]
fn write_cursor_iterators_match() {
    let (_dir, env) = fresh(EnvFlags::empty());
    let (p, d) = (plain_prefix(&env), dup_prefix(&env));
    let mut w = env.write_txn().unwrap();
    // Dirty a few pages so both dirty and clean pages are read.
    w.put(
        p,
        b"tenant/003/user/000003/profile",
        b"new",
        WriteFlags::empty(),
    )
    .unwrap();
    let mut exp = expected_plain();
    exp.iter_mut()
        .find(|(k, _)| k == b"tenant/003/user/000003/profile")
        .unwrap()
        .1 = b"new".to_vec();
    {
        let mut c = w.cursor_mut(p).unwrap();
        all_items_same(c.iter(), &exp, "RwCursor iter");
    }
    {
        let mut c = w.cursor_mut(d).unwrap();
        all_items_same(c.iter(), &dup_pairs(), "RwCursor dupsort iter");
    }
    // Read cursors of a write transaction.
    let mut c = w.cursor(p).unwrap();
    let all = all_items(c.iter());
    drop(c);
    same(&owned(&all), &exp, "read cursor in write txn");
}

#[test]
fn get_rank_results_survive_the_next_call() {
    let (_dir, env, db, exp) = with_plain_prefix();
    let r = env.read_txn().unwrap();
    let a = r.get_rank(db, 5).unwrap().unwrap();
    let b = r.get_rank(db, 6).unwrap().unwrap();
    let c9 = r.get_rank(db, 2999).unwrap().unwrap();
    assert_eq!(&*a.0, &exp[5].0[..], "txn rank buffer overwritten");
    assert_eq!(&*b.0, &exp[6].0[..]);
    assert_eq!(&*c9.0, &exp[2999].0[..]);
    assert_eq!(&*a.1, &exp[5].1[..]);
    let mut c = r.cursor(db).unwrap();
    let x = c.get_rank(100).unwrap().unwrap();
    let y = c.get_rank(101).unwrap().unwrap();
    assert_eq!(&*x.0, &exp[100].0[..]);
    assert_eq!(&*y.0, &exp[101].0[..]);
    assert_eq!(
        r.count_all(db, CountFlags::empty()).unwrap(),
        exp.len() as u64
    );
}

// ---- zero-copy and pointer ranges (new API) ----

fn in_map(env: &Env, s: &[u8]) -> bool {
    let m = env.map_region().expect("map region found");
    let p = s.as_ptr() as usize;
    m.start <= p && p + s.len() <= m.end
}

#[test]
fn map_region_is_found_and_zero_copy_kept() {
    let (dir, env) = fresh(EnvFlags::empty());
    let p = plain_prefix(&env);
    let plain = filled(&env, "plain", DatabaseFlags::empty(), &expected_plain());
    let r = env.read_txn().unwrap();
    assert!(
        env.map_region().is_some(),
        "map of {:?} not found",
        dir.path()
    );
    // Plain database: everything borrowed from the map.
    for item in r.cursor(plain).unwrap().iter() {
        let (k, v) = item.unwrap();
        assert!(matches!((&k, &v), (Cow::Borrowed(_), Cow::Borrowed(_))));
        assert!(in_map(&env, &k) && in_map(&env, &v));
    }
    // Prefix database: values and node-0 keys borrowed, the rest copied.
    let (mut borrowed, mut copied) = (0, 0);
    for item in r.cursor(p).unwrap().iter() {
        let (k, v) = item.unwrap();
        assert!(matches!(v, Cow::Borrowed(_)));
        assert!(in_map(&env, &v));
        match k {
            Cow::Borrowed(k) => {
                assert!(in_map(&env, k));
                borrowed += 1
            }
            Cow::Owned(_) => copied += 1,
        }
    }
    let leaves = r.stat(p).unwrap().leaf_pages;
    assert_eq!(borrowed, leaves, "one in-place key (node 0) per leaf");
    assert!(copied > 2000);
}

#[test]
fn mdb_get_returns_map_pointers_in_prefix_dbs() {
    let (_dir, env) = fresh(EnvFlags::empty());
    let (p, d) = (plain_prefix(&env), dup_prefix(&env));
    let r = env.read_txn().unwrap();
    for k in keys() {
        let v = r.get(p, &k).unwrap().unwrap();
        assert_eq!(v, &value_of(&k)[..]);
        assert!(in_map(&env, v));
    }
    let exp = dup_pairs();
    let mut firsts: Vec<&(Vec<u8>, Vec<u8>)> = Vec::new();
    for pair in &exp {
        if firsts.last().is_none_or(|l| l.0 != pair.0) {
            firsts.push(pair);
        }
    }
    let vals: Vec<&[u8]> = firsts
        .iter()
        .map(|(k, _)| r.get(d, k).unwrap().unwrap())
        .collect();
    for ((_, want), got) in firsts.iter().zip(&vals) {
        assert_eq!(*got, &want[..]);
        assert!(
            in_map(&env, got),
            "mdb_get returned a pointer outside the map"
        );
    }
}

/// With WRITE_MAP, dirty pages are in the map too, so pointers returned in a
/// write transaction can be checked the same way.
#[test]
fn write_txn_pointers_with_write_map() {
    let (_dir, env) = fresh(EnvFlags::WRITE_MAP);
    let d = dup_prefix(&env);
    let exp = dup_pairs();
    let mut w = env.write_txn().unwrap();
    for key in [
        &b"group/00/member/00000"[..],
        b"group/01/member/00001",
        b"group/00/member/00005",
    ] {
        let want = &exp.iter().find(|(k, _)| k == key).unwrap().1;
        let got = w.get(d, key).unwrap().unwrap();
        assert_eq!(got, &want[..]);
        assert!(in_map(&env, got));
        let old = w.put_no_overwrite(d, key, b"zzz").unwrap().unwrap();
        assert_eq!(old, &want[..]);
        assert!(
            in_map(&env, old),
            "put_no_overwrite returned a pointer outside the map"
        );
    }
    let all = scan_same(&w, d, &exp, "WRITE_MAP write txn dupsort iter");
    // Decoded keys are copied, node-0 ones and map values borrowed.
    keys_borrowed_and_copied(&all);
}

#[test]
fn renewed_txn_reads_fresh_items() {
    let (_dir, env, db, exp) = with_plain_prefix();
    let r = env.read_txn().unwrap();
    let first = owned(&all_items(r.iter(db).unwrap()));
    let r: RoTxn<'_> = r.reset().renew().unwrap();
    same(&first, &exp, "first");
    scan_same(&r, db, &exp, "again");
}

/// The lending view is zero-copy and matches the owning one.
#[test]
fn get_ref_lends_the_same_items() {
    let (_dir, env, db, exp) = with_dup_prefix();
    let r = env.read_txn().unwrap();
    let mut c = r.cursor(db).unwrap();
    let mut got = Vec::new();
    let mut op = CursorOp::First;
    while let Some((k, v)) = c.get_ref(None, None, op).unwrap() {
        got.push((k.to_vec(), v.to_vec()));
        op = CursorOp::Next;
    }
    same(&got, &exp, "get_ref");
}

/// An in-memory environment's anonymous map is known too: decoded prefix
/// keys are copied, everything else stays borrowed.
#[test]
fn in_memory_env_copies_only_decoded_keys() {
    let (_dir, env) = fresh(EnvFlags::IN_MEMORY);
    assert!(env.map_region().is_some());
    let (p, d) = (plain_prefix(&env), dup_prefix(&env));
    let r = env.read_txn().unwrap();
    let all = scan_same(&r, p, &expected_plain(), "in-memory prefix iter");
    assert!(all.iter().all(|(_, v)| matches!(v, Cow::Borrowed(_))));
    keys_borrowed_and_copied(&all);
    scan_same(&r, d, &dup_pairs(), "in-memory dupsort prefix iter");
}

/// Two handles on one file map it twice; each knows its own map, so each
/// borrows from its own and copies only decoded keys.
#[test]
fn second_handle_uses_its_own_map() {
    let (dir, env) = fresh(EnvFlags::empty());
    let p = plain_prefix(&env);
    let Ok(env2) = Env::builder()
        .map_size(64 << 20)
        .max_dbs(4)
        .open(dir.path())
    else {
        return; // the engine refuses a second handle: nothing to check
    };
    let (m1, m2) = (env.map_region().unwrap(), env2.map_region().unwrap());
    assert!(
        m1.end <= m2.start || m2.end <= m1.start,
        "two distinct maps"
    );
    let p2 = env2.open_db(Some("p")).unwrap();
    let r = env2.read_txn().unwrap();
    let all = scan_same(&r, p2, &expected_plain(), "second handle");
    assert!(all.iter().any(|(k, _)| matches!(k, Cow::Borrowed(_))));
    drop(r);
    drop(env2);
    assert!(env.map_region().is_some());
    let r = env.read_txn().unwrap();
    scan_same(&r, p, &expected_plain(), "first handle");
}

/// The free-page database is not a user database (`mdb_dbi_flags` refuses
/// it); cursors on it still open and borrow from the map.
#[test]
fn free_db_cursor() {
    let (_dir, env) = fresh(EnvFlags::empty());
    let p = plain_prefix(&env);
    let mut w = env.write_txn().unwrap();
    w.clear_db(p).unwrap();
    w.commit().unwrap();
    let mut w = env.write_txn().unwrap();
    w.put(p, b"a", b"b", WriteFlags::empty()).unwrap();
    w.commit().unwrap();
    let r = env.read_txn().unwrap();
    assert!(!r.freelist().unwrap().is_empty());
    for item in r.cursor(Database::FREE).unwrap().iter() {
        let (k, v) = item.unwrap();
        assert!(matches!((k, v), (Cow::Borrowed(_), Cow::Borrowed(_))));
    }
}

/// Resizing the map (no transaction alive) moves it: the range is looked
/// up again.
#[test]
fn map_region_follows_set_map_size() {
    let (_dir, mut env) = fresh(EnvFlags::empty());
    let p = plain_prefix(&env);
    let before = env.map_region().unwrap();
    assert_eq!(before.len(), 64 << 20);
    env.set_map_size(256 << 20).unwrap();
    let after = env.map_region().unwrap();
    assert_eq!(after.len(), 256 << 20);
    let r = env.read_txn().unwrap();
    let all = scan_same(&r, p, &expected_plain(), "after resize");
    assert!(all.iter().all(|(_, v)| in_map(&env, v)));
}
