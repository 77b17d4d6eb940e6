//! Differential model test for counted databases.
//!
//! One environment holds four counted DBs — plain (variable-length keys,
//! values up to overflow size), INTEGERKEY (8-byte keys), DUPSORT and
//! DUPSORT+DUPFIXED — plus a non-counted DB for the error codes. Seeded
//! random batches (one write txn each; some aborted) mix puts (0,
//! NOOVERWRITE, NODUPDATA, APPEND, APPENDDUP, MDB_MULTIPLE, cursor put with
//! MDB_CURRENT), deletes (whole keys, single duplicates, cursor deletes) and
//! `mdb_drop`; "drain" batches delete long runs to force merges, rebalancing
//! and the shrinking of dup sub-databases. After every batch, both inside the
//! write txn (counts must reflect uncommitted pages) and in a read txn after
//! commit: count_all == model size; random ranks (cursor and plain forms,
//! rising and falling sequences, out of range), key ranks with and without
//! data, and range counts with every flag combination, open bounds, empty
//! and reversed ranges and absent-key bounds equal the model's answers. The
//! file-parsing structural checker runs after every committed batch.
//!
//! Seeds: `DLMDB_SEED` (comma-separated) or a fixed list plus a time-based
//! one; a failure message always names the seed and the batch.
//! Run: `cargo test -p dlmdb-tests --release --test counted_model -- --include-ignored`

use std::collections::BTreeSet;
use std::path::Path;

use dlmdb_sys as ffi;
use dlmdb_tests::counted::{
    self, AsTxn, CountModel, CountSnap, Cursor, RangeFn, COUNTED, DUPFIXED, DUPSORT, EINVAL,
    FLAG_COMBOS, INTEGERKEY,
};
use dlmdb_tests::raw::{Env, Res, Txn};
use dlmdb_tests::show;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

static NESTED_NOTE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A new single-file environment `name` (8 databases, `map_size` bytes) in
/// a fresh temporary directory, kept alive by the returned guard; with
/// the data file's path.
fn scratch(name: &str, map_size: usize) -> (tempfile::TempDir, std::path::PathBuf, Env) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let env = Env::open_file(&path, 0, 8, map_size).unwrap();
    (dir, path, env)
}

const BATCHES: usize = 28;
const OPS_PER_BATCH: usize = 1300;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Plain,
    Int,
    Dups,
    DupFixed,
}

struct Db {
    name: &'static str,
    kind: Kind,
    flags: u32,
    model: CountModel,
    /// Next suffix for MDB_APPEND keys (they sort after every other key).
    append_seq: u64,
    /// Description of the last op (for `DLMDB_COUNTED_PARANOID` failures).
    last_op: String,
}

fn dbs(with_counted: bool) -> Vec<Db> {
    let c = if with_counted { COUNTED } else { 0 };
    let mk = |name, kind, flags| Db {
        name,
        kind,
        flags: flags | c,
        model: CountModel::new(flags | c),
        append_seq: 0,
        last_op: String::new(),
    };
    vec![
        mk("plain", Kind::Plain, 0),
        mk("int", Kind::Int, INTEGERKEY),
        mk("dups", Kind::Dups, DUPSORT),
        mk("dupfixed", Kind::DupFixed, DUPSORT | DUPFIXED),
    ]
}

/// Key `id` of a DB: variable length for the text DBs (lengths 1..=300,
/// odd and even, shared prefixes), 8-byte native integers for `int`.
fn key_of(kind: Kind, id: u64) -> Vec<u8> {
    match kind {
        Kind::Int => (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20)
            .to_ne_bytes()
            .to_vec(),
        Kind::Plain => {
            let mut k = format!("k{:05}", id).into_bytes();
            let extra = (id * 37 % 300) as usize;
            k.extend(std::iter::repeat_n(
                b'a' + (id % 26) as u8,
                extra.saturating_sub(6),
            ));
            k.truncate(1 + (id as usize * 7919) % 300);
            if k.len() < 6 {
                // very short keys collide on prefixes: keep them unique
                k = format!("{:x}", id).into_bytes();
            }
            k
        }
        Kind::Dups | Kind::DupFixed => {
            format!("key-{:04}/{}", id, "x".repeat((id % 9) as usize)).into_bytes()
        }
    }
}

fn key_space(kind: Kind) -> u64 {
    match kind {
        Kind::Plain => 6000,
        Kind::Int => 6000,
        Kind::Dups => 300,
        Kind::DupFixed => 200,
    }
}

fn gen_val(rng: &mut ChaCha8Rng, kind: Kind) -> Vec<u8> {
    match kind {
        Kind::DupFixed => rng.gen_range(0u64..50_000).to_be_bytes().to_vec(),
        Kind::Dups => {
            let n = rng.gen_range(0..40);
            let mut v = format!("v{:06}", rng.gen_range(0..100_000)).into_bytes();
            v.extend((0..n).map(|_| rng.gen_range(b'a'..=b'z')));
            v
        }
        _ => {
            let len = match rng.gen_range(0..100) {
                0 => rng.gen_range(2000..9000), // overflow pages
                1..=5 => rng.gen_range(300..1500),
                _ => rng.gen_range(0..120),
            };
            (0..len).map(|_| rng.gen()).collect()
        }
    }
}

/// Key ids: skewed so a few DUPSORT keys collect hundreds of duplicates
/// (sub-databases) while most stay small (inline sub-pages).
fn pick_id(rng: &mut ChaCha8Rng, kind: Kind) -> u64 {
    let n = key_space(kind);
    if matches!(kind, Kind::Dups | Kind::DupFixed) && rng.gen_bool(0.4) {
        rng.gen_range(0..6)
    } else {
        rng.gen_range(0..n)
    }
}

fn fail(seed: u64, batch: usize, what: impl std::fmt::Display) -> ! {
    panic!("counted model: seed {seed} (DLMDB_SEED={seed}) batch {batch}: {what}")
}

fn res_str<T: std::fmt::Debug>(r: &Res<T>) -> String {
    match r {
        Ok(v) => format!("Ok({v:?})"),
        Err(rc) => format!("Err({rc} {})", dlmdb_tests::raw::strerror(*rc)),
    }
}

/// One random write op on `db`, applied to the engine and the model.
fn one_op(
    txn: &impl AsTxn,
    dbi: u32,
    db: &mut Db,
    rng: &mut ChaCha8Rng,
    drain: Option<usize>,
    seed: u64,
    batch: usize,
) {
    let kind = db.kind;
    let dup = matches!(kind, Kind::Dups | Kind::DupFixed);
    let roll = rng.gen_range(0..100);
    // Drain batches delete (in long runs) until the DB is down to its floor.
    let drain = drain.is_some_and(|floor| db.model.entries() > floor);
    let del_share = if drain { 85 } else { 25 };
    // Every failure names the DB, the op and its key.
    let die = |op: &str, k: &[u8], what: String| -> ! {
        fail(
            seed,
            batch,
            format!("{} {op} key {}: {what}", db.name, show(k)),
        )
    };
    if roll < del_share && db.model.keys() > 0 {
        // Pick a key: DUPSORT DBs favour the hot keys (big dup sets).
        let mut k = db.model.nth_key(rng.gen_range(0..db.model.keys())).unwrap();
        if dup && rng.gen_bool(0.4) {
            let hot = key_of(kind, rng.gen_range(0..6));
            if db.model.contains_key(&hot) {
                k = hot;
            }
        }
        let vals = db.model.values(&k);
        let whole = !dup
            || vals.len() == 1
            || if vals.len() > 20 {
                rng.gen_bool(0.03)
            } else {
                rng.gen_bool(0.5)
            };
        if !whole {
            // single duplicates; in drain batches a run of them (sub-DB shrink)
            let m = if drain {
                rng.gen_range(1..=vals.len().min(80))
            } else {
                1
            };
            for _ in 0..m {
                let vals = db.model.values(&k);
                if vals.is_empty() {
                    break;
                }
                let v = vals[rng.gen_range(0..vals.len())].clone();
                let by_cursor = rng.gen_bool(0.5);
                db.last_op = format!(
                    "delete dup (cursor {by_cursor}) key {} value {}",
                    show(&k),
                    show(&v)
                );
                if !by_cursor {
                    let r = counted::del(txn, dbi, &k, Some(&v));
                    if r != Ok(true) {
                        die("del", &k, format!("del dup {}: {}", show(&v), res_str(&r)));
                    }
                } else {
                    let mut c = Cursor::open(txn, dbi).unwrap();
                    c.get(ffi::MDB_GET_BOTH, Some(&k), Some(&v))
                        .unwrap_or_else(|rc| die("cursor del", &k, format!("GET_BOTH: {rc}")));
                    let cur = c.get(ffi::MDB_GET_CURRENT, None, None);
                    if cur != Ok((k.clone(), v.clone())) {
                        die(
                            "cursor del",
                            &k,
                            format!(
                                "GET_CURRENT after GET_BOTH {} = {}",
                                show(&v),
                                pair_str(&cur)
                            ),
                        );
                    }
                    c.del(0)
                        .unwrap_or_else(|rc| die("cursor del", &k, format!("cursor_del: {rc}")));
                }
                db.model.del_pair(&k, &v);
            }
            return;
        }
        // whole keys: by mdb_del(NULL data) or cursor del (NODUPDATA), and
        // in drain batches a contiguous run of following keys as well
        let i = db.model.key_pos(&k);
        let run = if drain && rng.gen_bool(0.3) {
            rng.gen_range(5..60)
        } else {
            1
        };
        let keys: Vec<Vec<u8>> = (0..run).filter_map(|j| db.model.nth_key(i + j)).collect();
        for k in keys {
            if dup && run > 1 && db.model.values(&k).len() > 20 {
                continue; // big sets shrink by single deletes instead
            }
            let by_cursor = rng.gen_bool(0.4);
            db.last_op = format!("delete key (cursor {by_cursor}) {}", show(&k));
            if by_cursor {
                let mut c = Cursor::open(txn, dbi).unwrap();
                c.get(ffi::MDB_SET_KEY, Some(&k), None)
                    .unwrap_or_else(|rc| die("cursor del", &k, format!("SET_KEY: {rc}")));
                let cur = c.get(ffi::MDB_GET_CURRENT, None, None);
                if cur.as_ref().map(|p| &p.0) != Ok(&k) {
                    die(
                        "cursor del",
                        &k,
                        format!("GET_CURRENT after SET_KEY = {}", pair_str(&cur)),
                    );
                }
                let flags = if dup { ffi::MDB_NODUPDATA } else { 0 };
                c.del(flags)
                    .unwrap_or_else(|rc| die("cursor del", &k, format!("cursor_del: {rc}")));
            } else {
                let r = counted::del(txn, dbi, &k, None);
                if r != Ok(true) {
                    die("del", &k, res_str(&r));
                }
            }
            db.model.del_key(&k);
        }
        return;
    }
    // absent delete must say NOTFOUND and change nothing
    if roll < del_share + 3 {
        let k = key_of(kind, key_space(kind) + 1 + rng.gen_range(0..100));
        if !db.model.contains_key(&k) {
            let r = counted::del(txn, dbi, &k, None);
            if r != Ok(false) {
                die(
                    "absent del",
                    &k,
                    format!("expected NOTFOUND, got {}", res_str(&r)),
                );
            }
        }
        return;
    }
    let sub = rng.gen_range(0..100);
    db.last_op = format!("put sub={sub}");
    if sub < 6 && !dup {
        // MDB_APPEND run of keys sorting after everything else
        for _ in 0..rng.gen_range(1..30) {
            db.append_seq += 1;
            let k = match kind {
                Kind::Int => (u64::MAX - 1_000_000 + db.append_seq)
                    .to_ne_bytes()
                    .to_vec(),
                _ => format!("z{:08}", db.append_seq).into_bytes(),
            };
            let v = gen_val(rng, kind);
            counted::put(txn, dbi, &k, &v, ffi::MDB_APPEND)
                .unwrap_or_else(|rc| die("APPEND", &k, rc.to_string()));
            db.model.put(&k, &v);
        }
        return;
    }
    if sub < 10 && !dup && db.model.keys() > 0 {
        // overwrite through a cursor with MDB_CURRENT (count unchanged)
        let k = db.model.nth_key(rng.gen_range(0..db.model.keys())).unwrap();
        let v = gen_val(rng, kind);
        let mut c = Cursor::open(txn, dbi).unwrap();
        c.get(ffi::MDB_SET_KEY, Some(&k), None)
            .unwrap_or_else(|rc| die("SET_KEY", &k, rc.to_string()));
        c.put(&k, &v, ffi::MDB_CURRENT)
            .unwrap_or_else(|rc| die("cursor put CURRENT", &k, rc.to_string()));
        db.model.put(&k, &v);
        return;
    }
    if sub < 14 && kind == Kind::Dups {
        // a burst of fresh duplicates for one hot key (sub-page -> sub-DB)
        let k = key_of(kind, rng.gen_range(0..6));
        let n = rng.gen_range(10..80);
        db.last_op = format!("dup burst key {} {n} values", show(&k));
        let mut c = Cursor::open(txn, dbi).unwrap();
        for j in 0..n {
            let v = gen_val(rng, kind);
            if db.model.values(&k).contains(&v) {
                continue;
            }
            let r = if j % 2 == 0 {
                counted::put(txn, dbi, &k, &v, 0)
            } else {
                c.put(&k, &v, 0)
            };
            if r.is_err() {
                die(
                    "dup burst put",
                    &k,
                    format!("value {}: {}", show(&v), res_str(&r)),
                );
            }
            db.model.put(&k, &v);
        }
        return;
    }
    if sub < 14 && kind == Kind::DupFixed {
        // MDB_MULTIPLE with fresh values (spec §7 D4: counts must stay exact)
        let k = key_of(kind, pick_id(rng, kind));
        let have: BTreeSet<Vec<u8>> = db.model.values(&k).into_iter().collect();
        let mut fresh = BTreeSet::new();
        let want = rng.gen_range(2..120);
        while fresh.len() < want {
            let v = gen_val(rng, kind);
            if !have.contains(&v) {
                fresh.insert(v);
            }
        }
        let items: Vec<u8> = fresh.iter().flatten().copied().collect();
        db.last_op = format!("MULTIPLE key {} {} values", show(&k), fresh.len());
        match counted::put_multiple(txn, dbi, &k, &items, 8) {
            Ok(n) if n == fresh.len() => {}
            r => die(
                "MDB_MULTIPLE",
                &k,
                format!("{} items: {}", fresh.len(), res_str(&r)),
            ),
        }
        for v in fresh {
            db.model.put(&k, &v);
        }
        return;
    }
    if sub < 18 && dup {
        // MDB_APPENDDUP: a value above the key's current maximum
        let k = key_of(kind, pick_id(rng, kind));
        let vals = db.model.values(&k);
        let v = match (kind, vals.last()) {
            (Kind::DupFixed, Some(m)) => {
                let x = u64::from_be_bytes(m.as_slice().try_into().unwrap());
                if x == u64::MAX {
                    return;
                }
                (x + 1 + rng.gen_range(0..1000)).to_be_bytes().to_vec()
            }
            (Kind::DupFixed, None) => gen_val(rng, kind),
            (_, Some(m)) => {
                let mut v = m.clone();
                v.push(rng.gen_range(b'a'..=b'z'));
                v
            }
            (_, None) => gen_val(rng, kind),
        };
        db.last_op = format!("APPENDDUP key {} value {}", show(&k), show(&v));
        counted::put(txn, dbi, &k, &v, ffi::MDB_APPENDDUP)
            .unwrap_or_else(|rc| die("APPENDDUP", &k, format!("value {}: {rc}", show(&v))));
        db.model.put(&k, &v);
        return;
    }
    // ordinary put, sometimes with NOOVERWRITE / NODUPDATA on existing data
    let k = key_of(kind, pick_id(rng, kind));
    let v = gen_val(rng, kind);
    if dup {
        let exists = db.model.values(&k).contains(&v);
        let flags = if rng.gen_bool(0.5) {
            ffi::MDB_NODUPDATA
        } else {
            0
        };
        db.last_op = format!(
            "dup put key {} value {} exists {exists} flags {flags:#x}",
            show(&k),
            show(&v)
        );
        let r = counted::put(txn, dbi, &k, &v, flags);
        let ok = match (exists, flags) {
            (false, _) => r == Ok(()),
            (true, ffi::MDB_NODUPDATA) => r == Err(ffi::MDB_KEYEXIST),
            // LMDB answers success for an existing pair without NODUPDATA
            // (nothing is added); KEYEXIST is tolerated as well.
            (true, _) => r == Ok(()) || r == Err(ffi::MDB_KEYEXIST),
        };
        if !ok {
            die(
                "put",
                &k,
                format!(
                    "value {} exists {exists} flags {flags:#x}: {}",
                    show(&v),
                    res_str(&r)
                ),
            );
        }
        db.model.put(&k, &v);
    } else {
        let exists = db.model.contains_key(&k);
        let noover = rng.gen_bool(0.2);
        let wf = if noover { ffi::MDB_NOOVERWRITE } else { 0 };
        let r = if rng.gen_bool(0.2) {
            counted::put_reserve(txn, dbi, &k, &v, wf)
        } else {
            counted::put(txn, dbi, &k, &v, wf)
        };
        if noover && exists {
            if r != Err(ffi::MDB_KEYEXIST) {
                die(
                    "put",
                    &k,
                    format!("NOOVERWRITE on existing key: {}", res_str(&r)),
                );
            }
        } else {
            if r != Ok(()) {
                die("put", &k, res_str(&r));
            }
            db.model.put(&k, &v);
        }
    }
}

/// Bound candidates for range queries: existing keys, absent keys between
/// and around them.
fn gen_bound(rng: &mut ChaCha8Rng, db: &Db, snap: &CountSnap) -> Option<Vec<u8>> {
    let n = snap.entries.len();
    match rng.gen_range(0..10) {
        0 => None,
        1..=4 if n > 0 => Some(snap.entries[rng.gen_range(0..n)].0.clone()),
        5 if n > 0 && db.kind != Kind::Int => {
            // absent: an existing key + 0x00 sorts right after it
            let mut k = snap.entries[rng.gen_range(0..n)].0.clone();
            k.push(0);
            Some(k)
        }
        // below every key (a zero-length bound is avoided: the spec leaves
        // it undefined, and LMDB's own positioning rejects it)
        6 if db.kind != Kind::Int => Some(vec![0x01]),
        7 if db.kind != Kind::Int => Some(vec![0xff; 40]), // above every key
        _ => Some(match db.kind {
            Kind::Int => rng.gen::<u64>().to_ne_bytes().to_vec(),
            k => key_of(k, rng.gen_range(0..key_space(k) + 50)),
        }),
    }
}

/// All queries of one DB against its snapshot, in `txn` (read or write).
#[allow(clippy::too_many_arguments)] // each argument is one independent query input
fn verify_db(
    txn: &impl AsTxn,
    dbi: u32,
    db: &Db,
    snap: &CountSnap,
    rng: &mut ChaCha8Rng,
    seed: u64,
    batch: usize,
    where_: &str,
) {
    let die = |what: String| -> ! { fail(seed, batch, format!("[{where_}] {}: {what}", db.name)) };
    let total = snap.total();
    let got = counted::count_all(txn, dbi, 0);
    if got != Ok(total) {
        die(format!("count_all {} but model has {total}", res_str(&got)));
    }
    let st = counted::entries(txn, dbi).unwrap();
    if st != total {
        die(format!("md_entries {st} but model has {total}"));
    }
    // random ranks, including out of range
    for _ in 0..40 {
        let r = match rng.gen_range(0..20) {
            0 => total,
            1 => total + rng.gen_range(1..1000),
            2 => u64::MAX,
            _ if total > 0 => rng.gen_range(0..total),
            _ => 0,
        };
        let want = snap.rank(r).cloned();
        let got = counted::get_rank(txn, dbi, r);
        if got != want {
            die(format!(
                "get_rank({r}) = {} but model {}",
                pair_str(&got),
                pair_str(&want)
            ));
        }
    }
    // one cursor: rising sparse samples, repeats, then a fall and rise again
    if total > 0 {
        let mut c = Cursor::open(txn, dbi).unwrap();
        let mut r = 0u64;
        let stride = 1 + total / 13;
        let mut seq = Vec::new();
        while r < total {
            seq.push(r);
            if rng.gen_bool(0.1) {
                seq.push(r);
            }
            r += rng.gen_range(1..=stride);
        }
        seq.push(total - 1);
        seq.push(rng.gen_range(0..total));
        seq.push(0);
        seq.push(total);
        seq.push(rng.gen_range(0..total));
        for &r in &seq {
            let want = snap.rank(r).cloned();
            let got = c.get_rank(r, 0);
            if got != want {
                die(format!(
                    "cursor_get_rank({r}) in sequence {seq:?} = {} but model {}",
                    pair_str(&got),
                    pair_str(&want)
                ));
            }
            if want.is_ok() && rng.gen_bool(0.2) {
                // positioned like an ordinary cursor: NEXT continues
                let nx = c.get(ffi::MDB_NEXT, None, None);
                let wn = snap.rank(r + 1).cloned();
                if nx != wn {
                    die(format!(
                        "NEXT after cursor_get_rank({r}) = {} but model {}",
                        pair_str(&nx),
                        pair_str(&wn)
                    ));
                }
            }
        }
        if c.get_rank(0, 1) != Err(EINVAL) {
            die("cursor_get_rank with flags 1 must be EINVAL".into());
        }
    }
    // key ranks
    for _ in 0..30 {
        if total == 0 {
            break;
        }
        let (k, v) = snap.entries[rng.gen_range(0..total as usize)].clone();
        let cases: Vec<(Vec<u8>, Option<Vec<u8>>)> = vec![
            (k.clone(), None),
            (k.clone(), Some(v.clone())),
            (
                k.clone(),
                Some(if db.kind == Kind::DupFixed {
                    (u64::MAX - 7).to_be_bytes().to_vec()
                } else {
                    [v.as_slice(), b"~absent"].concat()
                }),
            ),
            (
                if db.kind == Kind::Int {
                    rng.gen::<u64>().to_ne_bytes().to_vec()
                } else {
                    [k.as_slice(), b"\0"].concat()
                },
                None,
            ),
        ];
        for (kk, dd) in cases {
            let want = snap.key_rank(&kk, dd.as_deref());
            let got = counted::get_key_rank(txn, dbi, &kk, dd.as_deref());
            let gotc = Cursor::open(txn, dbi)
                .unwrap()
                .key_rank(&kk, dd.as_deref(), 0);
            if got != want || gotc != want {
                die(format!(
                    "key_rank({}, {}) = {} / cursor {} but model {}",
                    show(&kk),
                    dd.as_deref().map_or("NULL".into(), show),
                    res_str(&got),
                    res_str(&gotc),
                    res_str(&want)
                ));
            }
        }
        if Cursor::open(txn, dbi).unwrap().key_rank(&k, None, 1) != Err(EINVAL) {
            die("cursor_key_rank with flags 1 must be EINVAL".into());
        }
    }
    // range counts: random bounds (reversed ones included), equal bounds,
    // open bounds, with every flag combination and all three functions
    for q in 0..24 {
        let low = gen_bound(rng, db, snap);
        let high = if q % 6 == 0 {
            low.clone()
        } else {
            gen_bound(rng, db, snap)
        };
        for flags in FLAG_COMBOS {
            for f in RangeFn::ALL {
                let want = snap.range_fn(f, low.as_deref(), high.as_deref(), flags);
                let got = counted::range_count(txn, dbi, f, low.as_deref(), high.as_deref(), flags);
                if got != want {
                    die(format!(
                        "{}({}, {}, flags {flags}) = {} but model {}",
                        f.name(),
                        low.as_deref().map_or("NULL".into(), show),
                        high.as_deref().map_or("NULL".into(), show),
                        res_str(&got),
                        res_str(&want)
                    ));
                }
            }
        }
    }
    for bad in [0x01u32, 0x08, 0x100] {
        for f in RangeFn::ALL {
            let got = counted::range_count(txn, dbi, f, None, None, bad);
            if got != Err(EINVAL) {
                die(format!(
                    "{} with flags {bad:#x} = {} (want EINVAL)",
                    f.name(),
                    res_str(&got)
                ));
            }
        }
        if counted::count_all(txn, dbi, bad) != Err(EINVAL) {
            die(format!("count_all with flags {bad:#x} must be EINVAL"));
        }
    }
}

/// Without counts: md_entries and a full cursor walk equal the model.
fn verify_content(txn: &impl AsTxn, dbi: u32, db: &Db, seed: u64, batch: usize, where_: &str) {
    let snap = db.model.snap(false);
    let st = counted::entries(txn, dbi).unwrap();
    if st != snap.total() {
        fail(
            seed,
            batch,
            format!(
                "[{where_}] {}: md_entries {st} but model has {}",
                db.name,
                snap.total()
            ),
        );
    }
    let got = counted::walk(txn, dbi)
        .unwrap_or_else(|rc| fail(seed, batch, format!("[{where_}] {}: walk: {rc}", db.name)));
    if got != snap.entries {
        let i = got
            .iter()
            .zip(&snap.entries)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(snap.entries.len()));
        fail(
            seed,
            batch,
            format!(
                "[{where_}] {}: walk differs from model at #{i} ({} vs {} pairs): got {:?} want {:?}",
                db.name,
                got.len(),
                snap.entries.len(),
                got.get(i).map(|p| (show(&p.0), show(&p.1))),
                snap.entries.get(i).map(|p| (show(&p.0), show(&p.1)))
            ),
        );
    }
}

fn pair_str(r: &Res<(Vec<u8>, Vec<u8>)>) -> String {
    match r {
        Ok((k, d)) => format!("({}, {})", show(k), show(d)),
        Err(rc) => format!("Err({rc} {})", dlmdb_tests::raw::strerror(*rc)),
    }
}

/// The non-counted DB: every order-statistics call is MDB_INCOMPATIBLE
/// (after the argument checks), whatever its content.
fn verify_uncounted(txn: &impl AsTxn, dbi: u32, seed: u64, batch: usize) {
    let inc = Some(ffi::MDB_INCOMPATIBLE);
    let mut bad = Vec::new();
    if counted::count_all(txn, dbi, 0).err() != inc {
        bad.push("count_all");
    }
    for f in RangeFn::ALL {
        if counted::range_count(txn, dbi, f, None, Some(b"m"), 0).err() != inc {
            bad.push(f.name());
        }
    }
    if counted::get_rank(txn, dbi, 0).err() != inc {
        bad.push("get_rank");
    }
    if Cursor::open(txn, dbi).unwrap().get_rank(0, 0).err() != inc {
        bad.push("cursor_get_rank");
    }
    if counted::get_key_rank(txn, dbi, b"u0001", None).err() != inc {
        bad.push("get_key_rank");
    }
    if Cursor::open(txn, dbi)
        .unwrap()
        .key_rank(b"u0001", None, 0)
        .err()
        != inc
    {
        bad.push("cursor_key_rank");
    }
    if !bad.is_empty() {
        fail(
            seed,
            batch,
            format!("non-counted DB: {bad:?} did not return MDB_INCOMPATIBLE"),
        );
    }
}

/// What the ops of one batch share: where a failure is reported, and in
/// drain batches the entry count each DB is drained down to.
#[derive(Clone, Copy)]
struct BatchAt<'a> {
    seed: u64,
    batch: usize,
    floors: Option<&'a [usize]>,
}

/// One random op on a randomly chosen DB; returns the DB's index.
fn one_random_op(
    txn: &impl AsTxn,
    dbis: &[u32],
    dbs: &mut [Db],
    rng: &mut ChaCha8Rng,
    at: BatchAt<'_>,
) -> usize {
    let i = rng.gen_range(0..dbs.len());
    let floor = at.floors.map(|f| f[i]);
    one_op(txn, dbis[i], &mut dbs[i], rng, floor, at.seed, at.batch);
    i
}

/// The models' state, to roll back to when a txn is aborted.
fn snapshot(dbs: &[Db]) -> Vec<(CountModel, u64)> {
    dbs.iter()
        .map(|d| (d.model.clone(), d.append_seq))
        .collect()
}

fn restore(dbs: &mut [Db], saved: Vec<(CountModel, u64)>) {
    for (d, (m, a)) in dbs.iter_mut().zip(saved) {
        d.model = m;
        d.append_seq = a;
    }
}

fn run_seed(seed: u64, dir: &Path, with_counted: bool, batches: usize) {
    run_seed_with(seed, dir, with_counted, batches, 0)
}

/// `extra`: flags added to every model DB (`MDB_PREFIX_COMPRESSION` for the
/// prefix run, which also checks every compressed page after each commit).
fn run_seed_with(seed: u64, dir: &Path, with_counted: bool, batches: usize, extra: u32) {
    let path = dir.join(format!("model-{seed}.mdb"));
    let env = Env::open(&path, ffi::MDB_NOSUBDIR, 8, 1 << 30).expect("open env");
    let mut dbs = dbs(with_counted);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut dbis = Vec::new();
    let uncounted;
    {
        let txn = env.begin_rw().unwrap();
        for d in &dbs {
            dbis.push(
                txn.open_db(Some(d.name.as_bytes()), d.flags | extra | ffi::MDB_CREATE)
                    .unwrap(),
            );
        }
        uncounted = txn.open_db(Some(b"uncounted"), ffi::MDB_CREATE).unwrap();
        for i in 0..50u32 {
            txn.put(uncounted, format!("u{i:04}").as_bytes(), b"x", 0)
                .unwrap();
        }
        txn.commit().unwrap();
    }
    let mut ops = 0usize;
    // Walk the touched DB after every op (slow; for locating a failure).
    let paranoid = std::env::var_os("DLMDB_COUNTED_PARANOID").is_some();
    for batch in 0..batches {
        // every 4th batch drains; every 16th batch drops one DB's content
        let drain = batch % 4 == 3;
        let abort = batch % 7 == 5;
        let floors: Vec<usize> = dbs.iter().map(|d| d.model.entries() / 4).collect();
        let batch_at = BatchAt {
            seed,
            batch,
            floors: drain.then_some(&floors[..]),
        };
        let saved = snapshot(&dbs);
        let txn = env.begin_rw().unwrap();
        if batch % 16 == 15 {
            let i = rng.gen_range(0..dbs.len());
            // SAFETY: live write txn and a valid handle; 0 = empty the DB.
            let rc = unsafe { ffi::mdb_drop(txn.raw(), dbis[i], 0) };
            if rc != 0 {
                fail(
                    seed,
                    batch,
                    format!("mdb_drop(empty) of {}: {rc}", dbs[i].name),
                );
            }
            dbs[i].model = CountModel::new(dbs[i].flags);
            let got = if with_counted {
                counted::count_all(&txn, dbis[i], 0)
            } else {
                Ok(txn.stat(dbis[i]).unwrap().entries)
            };
            if got != Ok(0) {
                fail(
                    seed,
                    batch,
                    format!("count_all after drop of {}: {}", dbs[i].name, res_str(&got)),
                );
            }
        }
        // Batches 1, 4, 7, ... run their last third in a nested txn, which
        // is aborted every other time (counts must fall back exactly).
        let nested_at = if batch % 3 == 1 {
            OPS_PER_BATCH * 2 / 3
        } else {
            OPS_PER_BATCH
        };
        for _ in 0..nested_at {
            let i = one_random_op(&txn, &dbis, &mut dbs, &mut rng, batch_at);
            ops += 1;
            if paranoid {
                let w = format!("write txn, after op #{ops}: {}", dbs[i].last_op);
                verify_content(&txn, dbis[i], &dbs[i], seed, batch, &w);
            }
        }
        if nested_at < OPS_PER_BATCH {
            let before = snapshot(&dbs);
            match env.begin(Some(&txn), 0) {
                Ok(child) => {
                    for _ in nested_at..OPS_PER_BATCH {
                        one_random_op(&child, &dbis, &mut dbs, &mut rng, batch_at);
                        ops += 1;
                    }
                    if with_counted {
                        let d = rng.gen_range(0..dbs.len());
                        let snap = dbs[d].model.snap(true);
                        verify_db(
                            &child,
                            dbis[d],
                            &dbs[d],
                            &snap,
                            &mut rng,
                            seed,
                            batch,
                            "nested txn",
                        );
                    }
                    if batch % 6 == 1 {
                        drop(child);
                        restore(&mut dbs, before);
                    } else {
                        child.commit().unwrap_or_else(|rc| {
                            fail(seed, batch, format!("nested txn commit: {rc}"))
                        });
                    }
                }
                // Nested txns have their own test (counted_nested_txns);
                // while the engine refuses them the ops run in the parent.
                Err(EINVAL) => {
                    if !NESTED_NOTE.swap(true, std::sync::atomic::Ordering::Relaxed) {
                        dlmdb_tests::skip_note(
                            "nested txns refused (EINVAL): the model runs those ops in the parent txn",
                        );
                    }
                    for _ in nested_at..OPS_PER_BATCH {
                        one_random_op(&txn, &dbis, &mut dbs, &mut rng, batch_at);
                        ops += 1;
                    }
                }
                Err(rc) => fail(seed, batch, format!("nested txn begin: {rc}")),
            }
        }
        if batch % 2 == 0 {
            for (d, &dbi) in dbs.iter().zip(&dbis) {
                if !with_counted {
                    verify_content(&txn, dbi, d, seed, batch, "write txn");
                    continue;
                }
                let snap = d.model.snap(true);
                verify_db(&txn, dbi, d, &snap, &mut rng, seed, batch, "write txn");
            }
        }
        if abort {
            drop(txn);
            restore(&mut dbs, saved);
        } else {
            txn.commit()
                .unwrap_or_else(|rc| fail(seed, batch, format!("commit: {rc}")));
        }
        let rep = counted::check_file(&path, false)
            .unwrap_or_else(|e| fail(seed, batch, format!("structural check: {e}")));
        if let Err(e) = counted::check_page_counters(&rep) {
            fail(seed, batch, format!("page counters: {e}"));
        }
        if extra & ffi::MDB_PREFIX_COMPRESSION != 0 {
            if let Err(e) = dlmdb_tests::pfxcheck::strict_check(&path) {
                fail(seed, batch, format!("after commit: {e}"));
            }
        }
        let rtxn = env.begin_ro().unwrap();
        for (d, &dbi) in dbs.iter().zip(&dbis) {
            let snap = d.model.snap(true);
            let (_, _, tr) = rep
                .db(d.name)
                .unwrap_or_else(|| fail(seed, batch, format!("checker did not find {}", d.name)));
            if tr.entries != snap.total() || tr.keys != snap.keys() {
                fail(
                    seed,
                    batch,
                    format!(
                        "{}: file has {} entries / {} keys, model {} / {}",
                        d.name,
                        tr.entries,
                        tr.keys,
                        snap.total(),
                        snap.keys()
                    ),
                );
            }
            if with_counted {
                verify_db(&rtxn, dbi, d, &snap, &mut rng, seed, batch, "read txn");
            } else {
                verify_content(&rtxn, dbi, d, seed, batch, "read txn");
            }
        }
        if with_counted {
            verify_uncounted(&rtxn, uncounted, seed, batch);
        }
        if std::env::var_os("DLMDB_COUNTED_VERBOSE").is_some() {
            let sizes: Vec<String> = dbs
                .iter()
                .map(|d| {
                    let (_, rec, tr) = rep.db(d.name).unwrap();
                    format!(
                        "{}={}/{} depth {} subdbs {}",
                        d.name,
                        d.model.keys(),
                        d.model.entries(),
                        rec.depth,
                        tr.subdbs
                    )
                })
                .collect();
            eprintln!(
                "batch {batch}{}{}: {}",
                if drain { " drain" } else { "" },
                if abort { " aborted" } else { "" },
                sizes.join(" ")
            );
        }
    }
    let sizes: Vec<String> = dbs
        .iter()
        .map(|d| format!("{}={}/{}", d.name, d.model.keys(), d.model.entries()))
        .collect();
    eprintln!(
        "counted model seed {seed}: {ops} ops, final keys/entries {}",
        sizes.join(" ")
    );
    assert!(ops >= batches * OPS_PER_BATCH);
}

#[test]
fn counted_model_differential() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = dlmdb_tests::seeds(&[1, 0x5eed_c0de, 3]);
    // 28 batches x 1300 ops = 36,400 ops per seed; the three fixed seeds
    // alone (all that CI runs) make >= 100k ops.
    for seed in seeds {
        eprintln!("counted model: seed {seed}");
        run_seed(seed, dir.path(), true, BATCHES);
    }
}

/// The same batches on prefix-compressed counted DBs (keys, and values of
/// the DUPSORT DB, compressed; the DUPFIXED DB's values stay LEAF2): counts,
/// ranks and range counts through every path of the compressed-leaf code,
/// and every compressed page canonical after each commit.
#[test]
fn counted_model_differential_prefix() {
    let dir = tempfile::tempdir().unwrap();
    for seed in dlmdb_tests::seeds(&[2, 0xc0de_5eed, 4]) {
        eprintln!("counted model (prefix): seed {seed}");
        run_seed_with(seed, dir.path(), true, BATCHES, ffi::MDB_PREFIX_COMPRESSION);
    }
}

/// The same op generator on non-counted twins of the DBs, checked by cursor
/// walks and the structural checker only: exercises the generator and the
/// checker on stores our engine writes today (needs DUPSORT writes).
#[test]
fn uncounted_twin_of_model_ops() {
    let dir = tempfile::tempdir().unwrap();
    for seed in dlmdb_tests::seeds(&[1]) {
        run_seed(seed, dir.path(), false, 16);
    }
}

/// Error codes that need no data: unknown flags, empty DBs, ranks on an
/// empty counted DB, the non-counted DB, and counted flags on an existing
/// named DB (stored flags win; COUNTED cannot be added later).
#[test]
fn counted_error_codes_and_empty_dbs() {
    let (_dir, path, env) = scratch("e.mdb", 1 << 24);
    let txn = env.begin_rw().unwrap();
    let plain = txn.open_db(Some(b"p"), COUNTED | ffi::MDB_CREATE).unwrap();
    let dups = txn
        .open_db(Some(b"d"), COUNTED | DUPSORT | ffi::MDB_CREATE)
        .unwrap();
    let unc = txn.open_db(Some(b"u"), ffi::MDB_CREATE).unwrap();
    for (dbi, flags) in [(plain, COUNTED), (dups, COUNTED | DUPSORT)] {
        let snap = CountModel::new(flags).snap(true);
        assert_eq!(counted::count_all(&txn, dbi, 0), Ok(0));
        for f in RangeFn::ALL {
            for flags in FLAG_COMBOS {
                for (l, h) in [
                    (None, None),
                    (Some(&b"a"[..]), Some(&b"a"[..])),
                    (Some(b"a"), None),
                    (None, Some(b"a")),
                    (Some(b"b"), Some(b"a")),
                ] {
                    assert_eq!(
                        counted::range_count(&txn, dbi, f, l, h, flags),
                        snap.range_fn(f, l, h, flags),
                        "empty DB {} {l:?} {h:?} {flags}",
                        f.name()
                    );
                }
            }
        }
        assert_eq!(counted::get_rank(&txn, dbi, 0), Err(ffi::MDB_NOTFOUND));
        assert_eq!(
            Cursor::open(&txn, dbi).unwrap().get_rank(0, 0),
            Err(ffi::MDB_NOTFOUND)
        );
        assert_eq!(
            counted::get_key_rank(&txn, dbi, b"a", None),
            Err(ffi::MDB_NOTFOUND)
        );
    }
    // single-entry plain DB: 1-byte key and value, every equal-bound combo
    txn.put(plain, b"m", b"v", 0).unwrap();
    assert_eq!(
        counted::get_rank(&txn, plain, 0),
        Ok((b"m".to_vec(), b"v".to_vec()))
    );
    assert_eq!(counted::get_key_rank(&txn, plain, b"m", None), Ok(0));
    assert_eq!(counted::get_key_rank(&txn, plain, b"m", Some(b"v")), Ok(0));
    assert_eq!(
        counted::get_key_rank(&txn, plain, b"m", Some(b"w")),
        Err(ffi::MDB_NOTFOUND)
    );
    for (flags, want) in [(0, 0), (2, 0), (4, 0), (6, 1)] {
        assert_eq!(
            counted::range_count(
                &txn,
                plain,
                RangeFn::CountRange,
                Some(b"m"),
                Some(b"m"),
                flags
            ),
            Ok(want)
        );
    }
    // non-counted DB
    txn.put(unc, b"a", b"1", 0).unwrap();
    verify_uncounted(&txn, unc, 0, 0);
    // a NULL cursor / bad handle
    assert_eq!(counted::count_all(&txn, 999, 0), Err(EINVAL));
    assert_eq!(counted::get_rank(&txn, 999, 0).map(|_| ()), Err(EINVAL));
    txn.commit().unwrap();
    // Reopening with different flags does not add or remove COUNTED.
    let txn = env.begin_rw().unwrap();
    let u2 = txn.open_db(Some(b"u"), COUNTED).unwrap();
    assert_eq!(
        txn.db_flags(u2).unwrap() & COUNTED,
        0,
        "COUNTED added to an existing DB"
    );
    assert_eq!(counted::count_all(&txn, u2, 0), Err(ffi::MDB_INCOMPATIBLE));
    let p2 = txn.open_db(Some(b"p"), 0).unwrap();
    assert_eq!(txn.db_flags(p2).unwrap() & COUNTED, COUNTED);
    drop(txn);
    counted::assert_structure(&path, false, "error-code store");
}

/// Every rank and count of `dbi` in `txn` against `model`.
#[track_caller]
fn ranks_match(txn: &impl AsTxn, dbi: u32, model: &CountModel, what: &str) {
    counted::verify_every_rank(txn, dbi, &model.snap(true), what);
}

/// [`ranks_match`] for database `name` in a new read txn of `env`.
#[track_caller]
fn committed_ranks_match(env: &Env, name: &str, model: &CountModel) {
    let r = env.begin_ro().unwrap();
    let dbi = r.open_db(Some(name.as_bytes()), 0).unwrap();
    ranks_match(&r, dbi, model, &format!("{name}: committed"));
}

/// Delete the keys `key{i:05}` for `i` in `range`; each must exist.
fn del_keys(txn: &impl AsTxn, dbi: u32, model: &mut CountModel, range: std::ops::Range<u32>) {
    for i in range {
        let k = format!("key{i:05}").into_bytes();
        assert_eq!(counted::del(txn, dbi, &k, None), Ok(true));
        model.del_key(&k);
    }
}

/// Open (creating it) the DB `name` with `flags`.
fn create_db(txn: &Txn<'_>, name: &str, flags: u32) -> u32 {
    txn.open_db(Some(name.as_bytes()), flags | ffi::MDB_CREATE)
        .unwrap()
}

/// Put `n` random pairs into DB `dbi` through `txn` and into the model; an
/// existing DUPSORT pair may answer KEYEXIST.
fn fill(txn: &impl AsTxn, dbi: u32, m: &mut CountModel, rng: &mut ChaCha8Rng, n: usize) {
    for _ in 0..n {
        let k = format!("key{:05}", rng.gen_range(0..3000)).into_bytes();
        let v = format!("val{:05}", rng.gen_range(0..50)).into_bytes();
        let existed = m.dupsort() && m.values(&k).contains(&v);
        match counted::put(txn, dbi, &k, &v, 0) {
            Ok(()) => {}
            Err(ffi::MDB_KEYEXIST) if existed => {}
            Err(rc) => panic!("nested test put: {rc}"),
        }
        m.put(&k, &v);
    }
}

/// Nested transactions (spec §6.1): a child's counts reflect its inserts and
/// deletes; aborting the child restores the parent's counts exactly;
/// committing merges them; a grandchild works the same; the committed
/// result is exact in a read txn and in the file.
#[test]
fn counted_nested_txns() {
    let (_dir, path, env) = scratch("n.mdb", 1 << 28);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for flags in [COUNTED, COUNTED | DUPSORT] {
        let name = format!("n{flags:x}");
        let mut model = CountModel::new(flags);
        let txn = env.begin_rw().unwrap();
        let dbi = create_db(&txn, &name, flags);
        fill(&txn, dbi, &mut model, &mut rng, 3000);
        ranks_match(&txn, dbi, &model, &format!("{name}: parent"));
        for round in 0..4 {
            let at = |what: &str| format!("{name} round {round}: {what}");
            let saved = model.clone();
            let child = env.begin(Some(&txn), 0).expect("nested txn");
            fill(&child, dbi, &mut model, &mut rng, 500);
            for _ in 0..400 {
                if let Some(k) = model.nth_key(rng.gen_range(0..model.keys())) {
                    assert_eq!(counted::del(&child, dbi, &k, None), Ok(true));
                    model.del_key(&k);
                }
            }
            ranks_match(&child, dbi, &model, &at("child"));
            if round % 2 == 1 {
                // a grandchild, aborted, then the child continues
                let inner_saved = model.clone();
                let gc = env.begin(Some(&child), 0).expect("grandchild");
                fill(&gc, dbi, &mut model, &mut rng, 200);
                ranks_match(&gc, dbi, &model, &at("grandchild"));
                drop(gc);
                model = inner_saved;
                ranks_match(&child, dbi, &model, &at("child after grandchild abort"));
            }
            if round % 2 == 0 {
                drop(child);
                model = saved;
                ranks_match(&txn, dbi, &model, &at("parent after child abort"));
            } else {
                child.commit().unwrap();
                ranks_match(&txn, dbi, &model, &at("parent after child commit"));
            }
        }
        txn.commit().unwrap();
        committed_ranks_match(&env, &name, &model);
        let rep = counted::assert_structure(&path, false, &name);
        assert_eq!(rep.db(&name).unwrap().2.entries, model.entries() as u64);
    }
}

/// Nested transactions over changes the parent made without asking for a
/// count first: the child cannot write the parent's pages, so their counts
/// must already be exact when it begins. Every rank and count is checked in
/// an idle child, after the child's own changes, in a committed grandchild's
/// parent, and after aborts, at depths 1 to 3.
#[test]
fn counted_nested_txns_over_unqueried_parent_changes() {
    let (_dir, _path, env) = scratch("u.mdb", 1 << 28);
    for flags in [COUNTED, COUNTED | DUPSORT] {
        let name = format!("u{flags:x}");
        let mut model = CountModel::new(flags);
        let txn = env.begin_rw().unwrap();
        let dbi = create_db(&txn, &name, flags);
        for i in 0..3000 {
            let k = format!("key{i:05}").into_bytes();
            counted::put(&txn, dbi, &k, b"v", 0).unwrap();
            model.put(&k, b"v");
        }
        txn.commit().unwrap();
        let at = |what: &str| format!("{name}: {what}");
        // A new txn deletes some keys, asks nothing, starts an idle child.
        let txn = env.begin_rw().unwrap();
        let dbi = txn.open_db(Some(name.as_bytes()), 0).unwrap();
        del_keys(&txn, dbi, &mut model, 0..100);
        let child = env.begin(Some(&txn), 0).expect("child");
        ranks_match(&child, dbi, &model, &at("idle child"));
        // The child changes a few keys far from the parent's deletes.
        let saved = model.clone();
        del_keys(&child, dbi, &mut model, 2900..2910);
        ranks_match(&child, dbi, &model, &at("child"));
        // A grandchild deletes elsewhere and commits; a great-grandchild
        // started under it sees everything.
        let gc = env.begin(Some(&child), 0).expect("grandchild");
        del_keys(&gc, dbi, &mut model, 1500..1520);
        let ggc = env.begin(Some(&gc), 0).expect("great-grandchild");
        ranks_match(&ggc, dbi, &model, &at("idle great-grandchild"));
        drop(ggc);
        gc.commit().unwrap();
        ranks_match(&child, dbi, &model, &at("child after grandchild commit"));
        drop(child);
        model = saved;
        ranks_match(&txn, dbi, &model, &at("parent after child abort"));
        txn.commit().unwrap();
        committed_ranks_match(&env, &name, &model);
    }
}

/// Plain and compacting copies (`mdb_env_copy2`) keep every count exact:
/// the compacting copy rebuilds the trees, so its branch pages and counts
/// are new and are checked again by rank queries and the structural checker.
#[test]
fn counted_copies_keep_counts() {
    let (dir, _path, env) = scratch("src.mdb", 1 << 28);
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let specs = [
        ("p", COUNTED),
        ("d", COUNTED | DUPSORT),
        ("f", COUNTED | DUPSORT | DUPFIXED),
    ];
    let mut models: Vec<CountModel> = specs.iter().map(|s| CountModel::new(s.1)).collect();
    {
        let txn = env.begin_rw().unwrap();
        for ((name, flags), m) in specs.iter().zip(models.iter_mut()) {
            let dbi = create_db(&txn, name, *flags);
            for _ in 0..6000 {
                let k = format!(
                    "k{:05}",
                    rng.gen_range(0..if flags & DUPSORT != 0 { 300 } else { 20000 })
                )
                .into_bytes();
                let v: Vec<u8> = if flags & DUPFIXED != 0 {
                    rng.gen::<u64>().to_be_bytes().to_vec()
                } else {
                    format!("v{}", rng.gen_range(0..1_000_000)).into_bytes()
                };
                if m.dupsort() && m.values(&k).contains(&v) {
                    continue;
                }
                counted::put(&txn, dbi, &k, &v, 0).unwrap();
                m.put(&k, &v);
            }
            // free some pages so the compacting copy really moves things
            for _ in 0..m.keys() / 3 {
                if let Some(k) = m.nth_key(rng.gen_range(0..m.keys())) {
                    counted::del(&txn, dbi, &k, None).unwrap();
                    m.del_key(&k);
                }
            }
        }
        txn.commit().unwrap();
    }
    for (flags, file) in [
        (0u32, "plain-copy.mdb"),
        (ffi::MDB_CP_COMPACT, "compact-copy.mdb"),
    ] {
        let dst = dir.path().join(file);
        let cdst = std::ffi::CString::new(dst.to_str().unwrap()).unwrap();
        // The env pointer, borrowed through a txn that is closed again (a
        // second read txn in this thread during the copy would need its own
        // reader slot).
        // SAFETY: the txn is live while its env pointer is read.
        let envp = unsafe { ffi::mdb_txn_env(env.begin_ro().unwrap().raw()) };
        // SAFETY: the env outlives the call.
        let rc = unsafe { ffi::mdb_env_copy2(envp, cdst.as_ptr(), flags) };
        assert_eq!(
            rc,
            0,
            "mdb_env_copy2 flags {flags}: {}",
            dlmdb_tests::raw::strerror(rc)
        );
        let what = file.to_string();
        let rep = counted::assert_structure(&dst, false, &what);
        let cenv = Env::open(&dst, ffi::MDB_NOSUBDIR | ffi::MDB_RDONLY, 8, 0).unwrap();
        let txn = cenv.begin_ro().unwrap();
        for ((name, _), m) in specs.iter().zip(&models) {
            assert_eq!(
                rep.db(name).unwrap().2.entries,
                m.entries() as u64,
                "{what}: {name}"
            );
            let dbi = txn.open_db(Some(name.as_bytes()), 0).unwrap();
            counted::verify_every_rank(&txn, dbi, &m.snap(true), &format!("{what}: {name}"));
        }
    }
}

/// Spec §6.1 "extreme keys" and small DBs: a 1-byte 0x00 key, a 1-byte
/// printable key and a 500-byte key (plain and DUPSORT), every pair of
/// candidate bounds (each key, absent keys around them, NULL) with every
/// flag combination and all three range functions, all ranks and key ranks.
#[test]
fn counted_extreme_keys_all_bound_pairs() {
    let (_dir, _path, env) = scratch("x.mdb", 1 << 24);
    let long = vec![0xffu8; 500];
    let keys: Vec<Vec<u8>> = vec![vec![0x00], b"M".to_vec(), long.clone()];
    let mut cands: Vec<Option<Vec<u8>>> = vec![
        None,
        Some(vec![0x00, 0x00]),
        Some(b"A".to_vec()),
        Some(b"MM".to_vec()),
    ];
    cands.extend(keys.iter().cloned().map(Some));
    cands.push(Some([long.as_slice(), &[0u8][..]].concat()));
    cands.push(Some(vec![0xff; 499]));
    let txn = env.begin_rw().unwrap();
    for flags in [COUNTED, COUNTED | DUPSORT] {
        let dbi = create_db(&txn, &format!("x{flags:x}"), flags);
        let mut m = CountModel::new(flags);
        for (n, k) in keys.iter().enumerate() {
            // one key at a time: 1, 2, then 3 keys (and dups on DUPSORT)
            let vals = if flags & DUPSORT != 0 { n + 1 } else { 1 };
            for j in 0..vals {
                let v = format!("value-{j}").into_bytes();
                counted::put(&txn, dbi, k, &v, 0).unwrap();
                m.put(k, &v);
            }
            let snap = m.snap(true);
            counted::verify_every_rank(
                &txn,
                dbi,
                &snap,
                &format!("extreme keys flags {flags:#x}, {} keys", n + 1),
            );
            for lo in &cands {
                for hi in &cands {
                    for fl in FLAG_COMBOS {
                        for f in RangeFn::ALL {
                            let want = snap.range_fn(f, lo.as_deref(), hi.as_deref(), fl);
                            let got = counted::range_count(
                                &txn,
                                dbi,
                                f,
                                lo.as_deref(),
                                hi.as_deref(),
                                fl,
                            );
                            assert_eq!(
                                got,
                                want,
                                "flags {flags:#x}, {} keys: {}({}, {}, {fl})",
                                n + 1,
                                f.name(),
                                lo.as_deref().map_or("NULL".into(), show),
                                hi.as_deref().map_or("NULL".into(), show)
                            );
                        }
                    }
                }
            }
        }
    }
}
