//! The write patterns that corrupt subtree counts in
//! some DLMDB builds (spec N.3.4 "counted branch separators", N.7: range
//! deletes in one transaction, deletes that shrink dup sub-trees, separator
//! keys that change length on counted branch pages). This engine must stay
//! exact: after each step every rank and every key rank is checked against
//! a model, and the file-parsing structural checker recomputes every branch
//! count (so a count overwritten by shifted bytes cannot hide).
//!
//! Also: `mdb_cursor_get_rank` on a freshly opened cursor answers every rank
//! `mdb_get_rank` answers, and a cursor's rank cache never survives a write
//! made in the txn (spec §2.4.6 / §7 D7).
//!
//! Run: `cargo test -p dlmdb-tests --release --test counted_defects -- --include-ignored`

use std::path::{Path, PathBuf};

use dlmdb_sys as ffi;
use dlmdb_tests::counted::{self, CountModel, Cursor, COUNTED, DUPFIXED, DUPSORT};
use dlmdb_tests::raw::{Env, Txn};
use dlmdb_tests::show;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A fresh store; `v1` creates a version-1 DLMDB-layout store instead of v2.
fn fresh(v1: bool) -> (tempfile::TempDir, PathBuf, Env) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.mdb");
    let flags = ffi::MDB_NOSUBDIR | if v1 { ffi::MDB_FORMAT_DLMDB_V1 } else { 0 };
    let env = Env::open(&path, flags, 8, 1 << 30).expect("create env");
    (dir, path, env)
}

/// Structural check of the committed file plus entry totals per DB.
fn structure(path: &Path, v1: bool, dbs: &[(&str, &CountModel)], what: &str) {
    let rep = counted::assert_structure(path, v1, what);
    counted::check_page_counters(&rep).unwrap_or_else(|e| panic!("{what}: {e}"));
    for (name, m) in dbs {
        let (_, rec, tr) = rep
            .db(name)
            .unwrap_or_else(|| panic!("{what}: DB {name} missing"));
        assert_eq!(
            tr.entries,
            m.entries() as u64,
            "{what}: {name} entries in the file"
        );
        assert_eq!(tr.keys, m.keys() as u64, "{what}: {name} keys in the file");
        assert_eq!(
            rec.flags as u32 & COUNTED,
            COUNTED,
            "{what}: {name} stored flags"
        );
    }
}

/// After a commit: the file's structure, and every rank of DB `name` in a
/// new read txn, agree with `model`.
fn check_committed(env: &Env, path: &Path, v1: bool, name: &str, model: &CountModel, what: &str) {
    structure(path, v1, &[(name, model)], what);
    let txn = env.begin_ro().unwrap();
    let dbi = txn.open_db(Some(name.as_bytes()), 0).unwrap();
    ranks_agree(&txn, dbi, model, what);
}

/// Every rank of DB `dbi`, read in `txn`, agrees with `model`.
fn ranks_agree(txn: &Txn<'_>, dbi: u32, model: &CountModel, what: &str) {
    counted::verify_every_rank(txn, dbi, &model.snap(true), what);
}

fn open(txn: &Txn<'_>, name: &str, flags: u32) -> u32 {
    txn.open_db(Some(name.as_bytes()), flags | ffi::MDB_CREATE)
        .unwrap()
}

/// 96-byte keys whose order is the order of `id`.
fn key96(id: usize) -> Vec<u8> {
    let mut k = format!(
        "tenant-{:02}/collection-{:<6}/document-{:08}/",
        id / 1000,
        ["alpha", "bravo", "delta"][id % 3],
        id
    )
    .into_bytes();
    let mut x = id as u64 * 0x9E37_79B9_7F4A_7C15 + 1;
    while k.len() < 96 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        k.push(
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[(x % 64) as usize],
        );
    }
    k
}

fn range_delete_96(v1: bool) {
    let (_d, path, env) = fresh(v1);
    let what = format!("96-byte keys (v1 layout {v1})");
    let mut model = CountModel::new(COUNTED);
    let mut ids: Vec<usize> = (0..7000).collect();
    ids.shuffle(&mut ChaCha8Rng::seed_from_u64(96));
    for chunk in ids.chunks(1750) {
        let txn = env.begin_rw().unwrap();
        let dbi = open(&txn, "c", COUNTED);
        for &id in chunk {
            let v = format!("value-{id}-{}", "x".repeat(id % 23));
            txn.put(dbi, &key96(id), v.as_bytes(), 0).unwrap();
            model.put(&key96(id), v.as_bytes());
        }
        txn.commit().unwrap();
    }
    {
        let txn = env.begin_ro().unwrap();
        let dbi = txn.open_db(Some(b"c"), 0).unwrap();
        assert!(
            txn.stat(dbi).unwrap().depth >= 3,
            "{what}: expected a tree of depth >= 3"
        );
        ranks_agree(&txn, dbi, &model, &format!("{what}, after inserts"));
    }
    structure(
        &path,
        v1,
        &[("c", &model)],
        &format!("{what}, after inserts"),
    );
    // keys 2,000..=3,999 deleted in one transaction, checked before commit
    let txn = env.begin_rw().unwrap();
    let dbi = open(&txn, "c", COUNTED);
    for id in 2000..4000 {
        assert_eq!(
            counted::del(&txn, dbi, &key96(id), None),
            Ok(true),
            "{what}: del {id}"
        );
        model.del_key(&key96(id));
    }
    assert_eq!(model.entries(), 5000);
    ranks_agree(
        &txn,
        dbi,
        &model,
        &format!("{what}, range delete inside the write txn"),
    );
    txn.commit().unwrap();
    check_committed(
        &env,
        &path,
        v1,
        "c",
        &model,
        &format!("{what}, after the range delete"),
    );
}

#[test]
fn shuffled_96_byte_keys_then_range_delete_v2() {
    range_delete_96(false);
}

#[test]
fn shuffled_96_byte_keys_then_range_delete_dlmdb_v1() {
    range_delete_96(true);
}

/// Key `id`: its 5-digit id padded to a length from 5 to 400, odd and even
/// (ids whose length would be under 5 keep the 5 digits).
fn varied_length_key(id: usize) -> Vec<u8> {
    let len = 1 + (id * 7 + (id % 2) * 3) % 400;
    let mut k = format!("{:05}", id).into_bytes();
    k.resize(len.max(5), b'a' + (id % 26) as u8);
    k
}

/// Keys of lengths 1..=400 (odd and even), inserted in descending order, then
/// thinned by random deletes over several transactions with a few
/// re-inserts — the pattern that left garbage counts in old DLMDB.
#[test]
fn variable_length_keys_random_deletes() {
    let (_d, path, env) = fresh(false);
    let mut rng = ChaCha8Rng::seed_from_u64(400);
    let mut model = CountModel::new(COUNTED);
    let mut all: Vec<Vec<u8>> = (0..4000).map(varied_length_key).collect();
    // a few very short keys as well (odd and even lengths 1..4)
    all.extend(
        [&b"\x00"[..], b"~", b"~~", b"~~~", b"~~~~"]
            .iter()
            .map(|k| k.to_vec()),
    );
    all.sort();
    all.dedup();
    {
        let txn = env.begin_rw().unwrap();
        let dbi = open(&txn, "v", COUNTED);
        for k in all.iter().rev() {
            let v = vec![b'v'; k.len() % 50];
            txn.put(dbi, k, &v, 0).unwrap();
            model.put(k, &v);
        }
        txn.commit().unwrap();
    }
    structure(
        &path,
        false,
        &[("v", &model)],
        "variable keys after inserts",
    );
    for round in 0..6 {
        let what = format!("variable keys, delete round {round}");
        let txn = env.begin_rw().unwrap();
        let dbi = open(&txn, "v", COUNTED);
        let present: Vec<Vec<u8>> = all
            .iter()
            .filter(|k| model.contains_key(k))
            .cloned()
            .collect();
        for k in present {
            if rng.gen_bool(0.2) {
                assert_eq!(
                    counted::del(&txn, dbi, &k, None),
                    Ok(true),
                    "{what}: del {}",
                    show(&k)
                );
                model.del_key(&k);
            }
        }
        for k in all.iter().filter(|_| rng.gen_bool(0.02)) {
            if !model.contains_key(k) {
                txn.put(dbi, k, b"again", 0).unwrap();
                model.put(k, b"again");
            }
        }
        if round % 2 == 0 {
            ranks_agree(&txn, dbi, &model, &format!("{what} (inside the write txn)"));
        }
        txn.commit().unwrap();
        check_committed(&env, &path, false, "v", &model, &what);
    }
}

/// Counted DUPSORT (and DUPSORT+DUPFIXED): big dup sets (sub-databases) and
/// small ones (inline sub-pages) shrink by single-duplicate deletes, API and
/// cursor, round after round, down to one value and then to nothing.
fn dupsort_shrink(flags: u32) {
    let (_d, path, env) = fresh(false);
    let fixed = flags & DUPFIXED != 0;
    let what0 = format!("counted DUPSORT flags {flags:#x}");
    let mut rng = ChaCha8Rng::seed_from_u64(flags as u64);
    let mut model = CountModel::new(flags);
    let val = |i: usize| -> Vec<u8> {
        if fixed {
            (i as u64 * 3 + 1).to_be_bytes().to_vec()
        } else {
            format!("val-{:05}-{}", i, "q".repeat(i % 17)).into_bytes()
        }
    };
    let mut pairs = Vec::new();
    for k in 0..40usize {
        let n = if k % 5 == 0 { 500 + k * 10 } else { 1 + k % 12 };
        for i in 0..n {
            pairs.push((format!("key-{k:03}").into_bytes(), val(i)));
        }
    }
    pairs.shuffle(&mut rng);
    {
        let txn = env.begin_rw().unwrap();
        let dbi = open(&txn, "d", flags);
        for (k, v) in &pairs {
            txn.put(dbi, k, v, 0).unwrap();
            model.put(k, v);
        }
        ranks_agree(
            &txn,
            dbi,
            &model,
            &format!("{what0}: after load (write txn)"),
        );
        txn.commit().unwrap();
    }
    let rep = counted::assert_structure(&path, false, &what0);
    assert!(
        rep.db("d").unwrap().2.subdbs >= 8,
        "{what0}: expected the big sets in sub-databases"
    );
    let mut round = 0;
    while model.entries() > 0 {
        round += 1;
        let what = format!("{what0}, shrink round {round}");
        let txn = env.begin_rw().unwrap();
        let dbi = open(&txn, "d", flags);
        for ki in 0..model.keys() {
            let Some(k) = model.nth_key(ki) else { break };
            let vals = model.values(&k);
            // big sets lose ~40% per round, small ones one value; a key
            // down to a single value goes whole every third round
            let m = if vals.len() > 20 {
                vals.len() * 2 / 5
            } else {
                1
            };
            if vals.len() == 1 && round % 3 != 0 {
                continue;
            }
            let mut victims = vals.clone();
            victims.shuffle(&mut rng);
            for v in victims.into_iter().take(m) {
                if rng.gen_bool(0.5) {
                    assert_eq!(
                        counted::del(&txn, dbi, &k, Some(&v)),
                        Ok(true),
                        "{what}: del {} {}",
                        show(&k),
                        show(&v)
                    );
                } else {
                    let mut c = Cursor::open(&txn, dbi).unwrap();
                    c.get(ffi::MDB_GET_BOTH, Some(&k), Some(&v))
                        .unwrap_or_else(|rc| panic!("{what}: GET_BOTH {}: {rc}", show(&k)));
                    c.del(0).unwrap();
                }
                model.del_pair(&k, &v);
            }
        }
        let inside = format!("{what} (inside the write txn)");
        ranks_agree(&txn, dbi, &model, &inside);
        txn.commit().unwrap();
        check_committed(&env, &path, false, "d", &model, &what);
        assert!(round < 60, "{what0}: does not drain");
    }
}

#[test]
fn counted_dupsort_deletes_shrink_subdbs() {
    dupsort_shrink(COUNTED | DUPSORT);
}

#[test]
fn counted_dupfixed_deletes_shrink_subdbs() {
    dupsort_shrink(COUNTED | DUPSORT | DUPFIXED);
}

/// Key `id`: its 6-digit id padded to 480, 7, 200..232 or 6 bytes as
/// `id % 4` goes round, so neighbours alternate between long and short.
fn alternating_length_key(id: usize) -> Vec<u8> {
    let mut k = format!("{:06}", id).into_bytes();
    let len = match id % 4 {
        0 => 480,
        1 => 7,
        2 => 200 + id % 33,
        _ => 6,
    };
    k.resize(len, b'0' + (id % 10) as u8);
    k
}

/// Separator keys that change length on counted branch pages in trees of
/// depth >= 3: keys alternate between very long and very short, so when a
/// merge or a borrow replaces the first key of a page (and so a separator
/// one or two levels up) the separator's size changes, and the nulling of
/// the index-0 separator after branch-level moves resizes it too.
#[test]
fn separator_resize_on_counted_branches_depth3() {
    let (_d, path, env) = fresh(false);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut model = CountModel::new(COUNTED);
    let n = 9000;
    let mut ids: Vec<usize> = (0..n).collect();
    ids.shuffle(&mut rng);
    {
        let txn = env.begin_rw().unwrap();
        let dbi = open(&txn, "s", COUNTED);
        for &id in &ids {
            txn.put(dbi, &alternating_length_key(id), b"v", 0).unwrap();
            model.put(&alternating_length_key(id), b"v");
        }
        let depth = txn.stat(dbi).unwrap().depth;
        assert!(depth >= 3, "setup: depth {depth} < 3");
        txn.commit().unwrap();
    }
    structure(&path, false, &[("s", &model)], "separators after inserts");
    // Rounds: delete the long keys of alternating blocks, then runs of
    // consecutive keys, then random keys; every round is one txn.
    let rounds: Vec<Box<dyn Fn(usize, usize) -> bool>> = vec![
        Box::new(|id, _| id % 4 == 0 && (id / 64) % 2 == 0),
        Box::new(|id, _| (id / 40) % 3 == 1),
        Box::new(|id, _| id % 4 == 2 && (id / 128) % 2 == 1),
        Box::new(|_, r| r % 3 == 0),
        Box::new(|id, _| id % 4 != 1 && (id / 512) % 2 == 0),
        Box::new(|_, r| r % 2 == 0),
    ];
    for (round, pick) in rounds.iter().enumerate() {
        let what = format!("separator resize round {round}");
        let txn = env.begin_rw().unwrap();
        let dbi = open(&txn, "s", COUNTED);
        for id in 0..n {
            let r: usize = rng.gen_range(0..6);
            let k = alternating_length_key(id);
            if model.contains_key(&k) && pick(id, r) {
                assert_eq!(
                    counted::del(&txn, dbi, &k, None),
                    Ok(true),
                    "{what}: del {id}"
                );
                model.del_key(&k);
            }
        }
        let depth = txn.stat(dbi).unwrap().depth;
        eprintln!("{what}: {} keys left, depth {depth}", model.keys());
        txn.commit().unwrap();
        check_committed(&env, &path, false, "s", &model, &what);
    }
}

/// A plain and a DUPSORT counted DB for the cursor tests.
fn two_dbs(env: &Env) -> (CountModel, CountModel) {
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let mut plain = CountModel::new(COUNTED);
    let mut dups = CountModel::new(COUNTED | DUPSORT);
    let txn = env.begin_rw().unwrap();
    let p = open(&txn, "p", COUNTED);
    let d = open(&txn, "d", COUNTED | DUPSORT);
    for i in 0..3000u32 {
        let k = format!("p{:07}", rng.gen_range(0..1_000_000)).into_bytes();
        let v = format!("{i}").into_bytes();
        txn.put(p, &k, &v, 0).unwrap();
        plain.put(&k, &v);
    }
    for i in 0..3000u32 {
        let k = format!("d{:03}", if i % 3 == 0 { 7 } else { rng.gen_range(0..400) }).into_bytes();
        let v = format!("v{:06}", rng.gen_range(0..1_000_000)).into_bytes();
        if dups.values(&k).contains(&v) {
            continue;
        }
        txn.put(d, &k, &v, 0).unwrap();
        dups.put(&k, &v);
    }
    txn.commit().unwrap();
    (plain, dups)
}

/// `mdb_cursor_get_rank` on a freshly opened cursor answers every rank that
/// `mdb_get_rank` answers; and one cursor asked for ranks in any order
/// (rising, falling, repeated, far jumps) answers the same.
#[test]
fn fresh_cursor_get_rank_answers_like_get_rank() {
    let (_d, _path, env) = fresh(false);
    let (plain, dups) = two_dbs(&env);
    let txn = env.begin_ro().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for (name, m) in [("p", &plain), ("d", &dups)] {
        let dbi = txn.open_db(Some(name.as_bytes()), 0).unwrap();
        let snap = m.snap(true);
        let total = snap.total();
        for r in 0..total + 2 {
            let a = counted::get_rank(&txn, dbi, r);
            let b = Cursor::open(&txn, dbi).unwrap().get_rank(r, 0);
            assert_eq!(
                a, b,
                "{name}: fresh cursor_get_rank({r}) differs from get_rank"
            );
            assert_eq!(
                a.as_ref().ok(),
                snap.entries.get(r as usize),
                "{name}: get_rank({r})"
            );
        }
        let mut c = Cursor::open(&txn, dbi).unwrap();
        for _ in 0..5000 {
            let r = match rng.gen_range(0..5) {
                0 => rng.gen_range(0..total),
                1 => total - 1,
                _ => rng.gen_range(0..total),
            };
            assert_eq!(
                c.get_rank(r, 0).as_ref().ok(),
                snap.entries.get(r as usize),
                "{name}: reused cursor rank {r}"
            );
            if rng.gen_bool(0.1) {
                // ordinary moves between rank calls are allowed
                let _ = c.get(ffi::MDB_NEXT, None, None);
            }
        }
    }
}

/// The rank cache must not survive writes in the same txn (spec §7 D7):
/// position a cursor by rank, write through that cursor and through the
/// txn, and ask the same and neighbouring ranks again.
#[test]
fn cursor_rank_cache_invalidated_by_writes() {
    let (_d, _path, env) = fresh(false);
    let (mut plain, mut dups) = two_dbs(&env);
    let txn = env.begin_rw().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    for (name, m) in [("p", &mut plain), ("d", &mut dups)] {
        let dbi = txn.open_db(Some(name.as_bytes()), 0).unwrap();
        let mut c = Cursor::open(&txn, dbi).unwrap();
        for step in 0..300 {
            let total = m.entries() as u64;
            let r = rng.gen_range(0..total);
            let snap = m.snap(true);
            let (k, v) = snap.entries[r as usize].clone();
            assert_eq!(
                c.get_rank(r, 0),
                Ok((k.clone(), v.clone())),
                "{name} step {step}: rank {r}"
            );
            match step % 3 {
                0 => {
                    // delete the entry under the cursor
                    c.del(0).unwrap();
                    m.del_pair(&k, &v);
                    if !m.dupsort() {
                        m.del_key(&k);
                    }
                }
                1 => {
                    // insert an entry that sorts before the cursor position
                    let (k0, _) = snap.entries[0].clone(); // "p!.." sorts before "p0.."; new dups "00001-new" before "v.."
                    let nv = format!("{step:05}-new").into_bytes();
                    let nk = if m.dupsort() {
                        k0
                    } else {
                        format!("p!{step:05}").into_bytes()
                    };
                    counted::put(&txn, dbi, &nk, &nv, 0).unwrap();
                    m.put(&nk, &nv);
                }
                _ => {
                    // delete an earlier entry through the txn
                    let (k1, v1) = snap.entries[(r / 2) as usize].clone();
                    if m.dupsort() {
                        assert_eq!(counted::del(&txn, dbi, &k1, Some(&v1)), Ok(true));
                        m.del_pair(&k1, &v1);
                    } else {
                        assert_eq!(counted::del(&txn, dbi, &k1, None), Ok(true));
                        m.del_key(&k1);
                    }
                }
            }
            let snap = m.snap(true);
            for rr in [r.saturating_sub(1), r, r + 1] {
                assert_eq!(
                    c.get_rank(rr, 0).as_ref().ok(),
                    snap.entries.get(rr as usize),
                    "{name} step {step}: rank {rr} after a write"
                );
            }
        }
        counted::verify_every_rank(
            &txn,
            dbi,
            &m.snap(true),
            &format!("{name} after the cache steps"),
        );
    }
}
