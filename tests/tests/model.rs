//! Differential test: seeded random operation sequences run against our
//! engine (safe API) and an in-memory `BTreeMap` model, compared after every
//! operation.
//!
//! Covered: put with flags 0 / NOOVERWRITE / APPEND / RESERVE, CURRENT via a
//! cursor, cursor put, del, get, full walks both ways, SET / SET_KEY /
//! SET_RANGE followed by NEXT/PREV steps, cursor delete (single, runs, and
//! draining a whole DB), a second cursor that must follow puts and deletes
//! made beside it, read snapshots held across commits and verified later,
//! nested transactions committed or aborted, aborts, reopening the
//! environment; five named databases
//! with short keys, long keys (up to 511 bytes), 4- and 8-byte INTEGERKEY and
//! REVERSEKEY; values of 0..3000 bytes with occasional 20 KB ones; all three
//! layouts (v2 default, FORMAT_LMDB, FORMAT_DLMDB_V1) by seed.
//!
//! At least 100k operations in total per run. Seeds: `DLMDB_SEED=a,b` to
//! replay (and `DLMDB_MODEL_OPS=n` for the number of operations per seed);
//! otherwise seeds 1, 2, 3 plus one time-based seed. On failure the seed and
//! the shortest failing prefix (binary search over replays) are printed.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use dlmdb::{CursorOp, Database, DatabaseFlags, Env, EnvFlags, RoTxn, RwTxn, WriteFlags};
use dlmdb_tests::model::{sort_key, ModelDb, INTEGERKEY, REVERSEKEY};
use dlmdb_tests::stat::TreeStat;
use dlmdb_tests::{either, ours, raw, show};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const TOTAL_OPS: usize = 100_000;
const MAP: usize = 1 << 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Short,
    Long,
    Int8,
    Int4,
    Rev,
}

const DBS: [(&str, u32, Shape); 5] = [
    ("short", 0, Shape::Short),
    ("long", 0, Shape::Long),
    ("int8", INTEGERKEY, Shape::Int8),
    ("int4", INTEGERKEY, Shape::Int4),
    ("reversed", REVERSEKEY, Shape::Rev),
];

/// Which key an operation uses.
#[derive(Debug, Clone)]
enum KeySel {
    /// A key from the DB's key space, by number.
    Num(u32),
    /// The n-th existing key (modulo the count) at the time the op runs.
    Existing(u32),
    /// A key just after the current last key (for APPEND).
    AfterLast(u8),
}

/// A value: `len` bytes generated from `seed`.
#[derive(Debug, Clone, Copy)]
struct Val {
    len: u32,
    seed: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PutFlag {
    Plain,
    NoOverwrite,
    Append,
    Reserve,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seek {
    Set,
    SetKey,
    SetRange,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Current,
    Next,
    Prev,
}

#[derive(Debug, Clone)]
enum Op {
    Put {
        db: usize,
        key: KeySel,
        val: Val,
        flag: PutFlag,
    },
    PutCurrent {
        db: usize,
        key: KeySel,
        val: Val,
    },
    /// Plain put through a write cursor; the cursor must sit on the new item.
    CursorPut {
        db: usize,
        key: KeySel,
        val: Val,
    },
    Del {
        db: usize,
        key: KeySel,
    },
    CursorDel {
        db: usize,
        key: KeySel,
    },
    /// SET_RANGE, then up to `n` times: cursor delete + NEXT (the follower).
    DelRun {
        db: usize,
        key: KeySel,
        n: u8,
    },
    /// Delete every item through one cursor; the tree must end up empty.
    Drain {
        db: usize,
    },
    /// A nested transaction running `ops`, then committed into the parent
    /// or aborted (spec §3.6).
    Nested {
        ops: Vec<Op>,
        commit: bool,
    },
    /// Cursor A sits on an existing key; the transaction then puts (`put`
    /// Some) or deletes key `b` without using A; A must follow (spec §3.5,
    /// §5.4): GET_CURRENT/NEXT/PREV relative to its item.
    TwoCursors {
        db: usize,
        a: KeySel,
        b: KeySel,
        put: Option<Val>,
        step: Step,
    },
    Get {
        db: usize,
        key: KeySel,
    },
    Walk {
        db: usize,
        forward: bool,
    },
    Seek {
        db: usize,
        key: KeySel,
        how: Seek,
        steps: Vec<bool>,
    },
    Commit,
    Abort,
    SnapTake,
    SnapCheck(u32),
    Reopen,
}

fn key_for(shape: Shape, n: u32) -> Vec<u8> {
    match shape {
        Shape::Short => {
            // 1..16 bytes, odd and even lengths, dense space for overwrites
            let s = format!("{:x}", n.wrapping_mul(2654435761));
            let len = 1 + (n as usize % 16);
            let mut b = s.into_bytes();
            b.resize(len, b'.');
            b
        }
        Shape::Long => {
            // shared prefixes, lengths 100..=511
            let len = 100 + (n.wrapping_mul(7919) as usize % 412);
            let mut b = format!("long/{:03}/{:05}/", n % 37, n).into_bytes();
            while b.len() < len {
                b.push(b'a' + (b.len() as u8 + n as u8) % 26);
            }
            b.truncate(len);
            b
        }
        Shape::Int8 => ((n as u64) * 0x1_0000_0001).to_ne_bytes().to_vec(),
        Shape::Int4 => n.wrapping_mul(104729).to_ne_bytes().to_vec(),
        Shape::Rev => {
            format!("{}.h{}.{}", n % 7, n, ["com", "org", "net"][n as usize % 3]).into_bytes()
        }
    }
}

fn val_bytes(v: Val) -> Vec<u8> {
    // xorshift stream: cheap, position dependent, different per value
    let mut x = (v.seed as u64) << 1 | 1;
    (0..v.len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn gen_val(rng: &mut ChaCha8Rng) -> Val {
    let len = match rng.gen_range(0..1000) {
        0..=4 => 20_000 + rng.gen_range(0..500),
        5..=99 => rng.gen_range(1900..3000),
        _ => rng.gen_range(0..400),
    };
    Val {
        len,
        seed: rng.gen(),
    }
}

fn gen_key(rng: &mut ChaCha8Rng) -> KeySel {
    if rng.gen_bool(0.5) {
        KeySel::Existing(rng.gen())
    } else {
        KeySel::Num(rng.gen_range(0..3000))
    }
}

/// Keys for deletes: mostly from the key space (so the databases grow to an
/// equilibrium of a few thousand keys instead of staying tiny).
fn gen_del_key(rng: &mut ChaCha8Rng) -> KeySel {
    if rng.gen_bool(0.2) {
        KeySel::Existing(rng.gen())
    } else {
        KeySel::Num(rng.gen_range(0..3000))
    }
}

/// A put of a random key (existing or new) with a random value.
fn random_put(rng: &mut ChaCha8Rng, db: usize, flag: PutFlag) -> Op {
    let key = gen_key(rng);
    Op::Put {
        db,
        key,
        val: gen_val(rng),
        flag,
    }
}

fn generate(seed: u64, n: usize, nested: bool) -> Vec<Op> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut ops = Vec::with_capacity(n);
    // bulk phase: grow every database to several hundred keys quickly, so
    // the random phase runs on trees of depth 2-4
    for j in 0..(n / 6).min(6000) {
        let db = j % DBS.len();
        ops.push(Op::Put {
            db,
            key: KeySel::Num(rng.gen_range(0..3000)),
            val: gen_val(&mut rng),
            flag: PutFlag::Plain,
        });
        if j % 400 == 399 {
            ops.push(Op::Commit);
        }
    }
    ops.push(Op::Commit);
    while ops.len() < n {
        let db = rng.gen_range(0..DBS.len());
        let op = match rng.gen_range(0..1000) {
            0..=279 => random_put(&mut rng, db, PutFlag::Plain),
            280..=329 => random_put(&mut rng, db, PutFlag::NoOverwrite),
            330..=364 => {
                let key = either(
                    &mut rng,
                    0.8,
                    |r| KeySel::AfterLast(r.gen_range(1..4)),
                    gen_key,
                );
                Op::Put {
                    db,
                    key,
                    val: gen_val(&mut rng),
                    flag: PutFlag::Append,
                }
            }
            365..=399 => random_put(&mut rng, db, PutFlag::Reserve),
            400..=429 => Op::PutCurrent {
                db,
                key: KeySel::Existing(rng.gen()),
                val: gen_val(&mut rng),
            },
            430..=449 => Op::CursorPut {
                db,
                key: gen_key(&mut rng),
                val: gen_val(&mut rng),
            },
            450..=539 => Op::Del {
                db,
                key: gen_del_key(&mut rng),
            },
            570..=589 => Op::CursorDel {
                db,
                key: KeySel::Existing(rng.gen()),
            },
            600..=609 => Op::DelRun {
                db,
                key: gen_key(&mut rng),
                n: rng.gen_range(1..8),
            },
            755..=759 => Op::Walk {
                db,
                forward: rng.gen(),
            },
            760..=869 => {
                let how = [Seek::Set, Seek::SetKey, Seek::SetRange][rng.gen_range(0..3)];
                let steps = (0..rng.gen_range(0..6)).map(|_| rng.gen()).collect();
                Op::Seek {
                    db,
                    key: gen_key(&mut rng),
                    how,
                    steps,
                }
            }
            870..=914 => {
                let b = if rng.gen_bool(0.25) {
                    KeySel::Existing(rng.gen())
                } else {
                    gen_key(&mut rng)
                };
                let put = if rng.gen_bool(0.5) {
                    Some(gen_val(&mut rng))
                } else {
                    None
                };
                let step = [Step::Current, Step::Next, Step::Prev][rng.gen_range(0..3)];
                Op::TwoCursors {
                    db,
                    a: KeySel::Existing(rng.gen()),
                    b,
                    put,
                    step,
                }
            }
            915 if rng.gen_range(0..8) == 0 => Op::Drain { db },
            916..=947 => Op::Commit,
            948..=955 => Op::Abort,
            956..=963 => Op::SnapTake,
            964..=973 => Op::SnapCheck(rng.gen()),
            974 => Op::Reopen,
            975..=984 if nested => {
                let ops = (0..rng.gen_range(1..25))
                    .map(|_| {
                        let db = rng.gen_range(0..DBS.len());
                        match rng.gen_range(0..6) {
                            0 | 1 => random_put(&mut rng, db, PutFlag::Plain),
                            2 => Op::Del {
                                db,
                                key: gen_del_key(&mut rng),
                            },
                            3 => Op::CursorDel {
                                db,
                                key: KeySel::Existing(rng.gen()),
                            },
                            4 => Op::PutCurrent {
                                db,
                                key: KeySel::Existing(rng.gen()),
                                val: gen_val(&mut rng),
                            },
                            _ => Op::Seek {
                                db,
                                key: gen_key(&mut rng),
                                how: Seek::SetRange,
                                steps: vec![true, false, false],
                            },
                        }
                    })
                    .collect();
                Op::Nested {
                    ops,
                    commit: rng.gen_bool(0.6),
                }
            }
            // Everything else reads (540-569, 590-599, 610-754, 985-999, and
            // the guarded arms when their guard fails).
            _ => Op::Get {
                db,
                key: gen_key(&mut rng),
            },
        };
        ops.push(op);
    }
    ops
}

fn layout_for(seed: u64) -> EnvFlags {
    if prefix_mode() {
        // prefix compression needs a DLMDB layout (stock LMDB has none)
        return if seed.is_multiple_of(2) {
            EnvFlags::empty()
        } else {
            EnvFlags::FORMAT_DLMDB_V1
        };
    }
    match seed % 3 {
        0 => EnvFlags::empty(),
        1 => EnvFlags::FORMAT_LMDB,
        _ => EnvFlags::FORMAT_DLMDB_V1,
    }
}

type Models = Vec<ModelDb>;

fn new_models() -> Models {
    DBS.iter().map(|d| ModelDb::new(d.1)).collect()
}

/// The model of database `db` and the key `sel` picks in it; `None` when it
/// picks none (an existing key of an empty database): the op is skipped.
fn target<'m>(cur: &'m mut Models, db: usize, sel: &KeySel) -> Option<(&'m mut ModelDb, Vec<u8>)> {
    let m = &mut cur[db];
    let k = resolve(sel, db, m)?;
    Some((m, k))
}

fn resolve(sel: &KeySel, db: usize, m: &ModelDb) -> Option<Vec<u8>> {
    let shape = DBS[db].2;
    match sel {
        KeySel::Num(n) => Some(key_for(shape, *n)),
        KeySel::Existing(i) => {
            if m.is_empty() {
                None
            } else {
                m.nth_key(*i as usize % m.len())
            }
        }
        KeySel::AfterLast(b) => {
            let Some((last, _)) = m.last() else {
                return Some(key_for(shape, *b as u32));
            };
            let mut k = last.to_vec();
            match shape {
                Shape::Int8 => {
                    let n = u64::from_ne_bytes(k[..].try_into().unwrap()).checked_add(*b as u64)?;
                    Some(n.to_ne_bytes().to_vec())
                }
                Shape::Int4 => {
                    let n = u32::from_ne_bytes(k[..].try_into().unwrap()).checked_add(*b as u32)?;
                    Some(n.to_ne_bytes().to_vec())
                }
                // compared from the end: a longer key with the same tail sorts after
                Shape::Rev if k.len() < 511 => {
                    k.insert(0, b'a' + b);
                    Some(k)
                }
                // a longer key with the same prefix sorts after
                _ if k.len() < 511 => {
                    k.push(*b);
                    Some(k)
                }
                _ => None,
            }
        }
    }
}

fn walk_txn(txn: &RoTxn<'_>, db: Database, forward: bool) -> Result<dlmdb_tests::Pairs, String> {
    let mut c = txn.cursor(db).map_err(|e| format!("cursor open: {e}"))?;
    let it = if forward { c.iter() } else { c.iter_rev() };
    it.map(|r| {
        r.map(|(k, v)| (k.to_vec(), v.to_vec()))
            .map_err(|e| format!("cursor step: {e}"))
    })
    .collect()
}

fn compare_walk(got: &[(Vec<u8>, Vec<u8>)], m: &ModelDb, forward: bool) -> Result<(), String> {
    let want: Vec<(Vec<u8>, Vec<u8>)> = if forward {
        m.pairs()
    } else {
        m.pairs().into_iter().rev().collect()
    };
    if got.len() != want.len() {
        return Err(format!(
            "walk returned {} pairs, model has {}",
            got.len(),
            want.len()
        ));
    }
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if g != w {
            return Err(format!(
                "walk pair #{i}: got key {} ({}B value), want key {} ({}B value)",
                show(&g.0),
                g.1.len(),
                show(&w.0),
                w.1.len()
            ));
        }
    }
    Ok(())
}

fn verify_all(txn: &RoTxn<'_>, dbs: &[Database], models: &Models) -> Result<(), String> {
    for (i, m) in models.iter().enumerate() {
        compare_walk(&walk_txn(txn, dbs[i], true)?, m, true)
            .map_err(|e| format!("db {}: {e}", DBS[i].0))?;
        let st = txn.stat(dbs[i]).map_err(|e| format!("stat: {e}"))?;
        if st.entries != m.len() as u64 {
            return Err(format!(
                "db {}: ms_entries {} but model has {}",
                DBS[i].0,
                st.entries,
                m.len()
            ));
        }
    }
    Ok(())
}

fn open_env(path: &Path, layout: EnvFlags) -> Result<Env, String> {
    ours::open(path, layout | EnvFlags::NO_TLS, MAP, 8).map_err(|e| format!("env open: {e}"))
}

thread_local! {
    /// Extra flags for every database of this thread's runs
    /// (`MDB_PREFIX_COMPRESSION` for the prefix variant).
    static EXTRA_FLAGS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

fn prefix_mode() -> bool {
    EXTRA_FLAGS.with(|f| f.get()) & dlmdb::sys::MDB_PREFIX_COMPRESSION != 0
}

fn open_dbs(env: &Env) -> Result<Vec<Database>, String> {
    let txn = env.write_txn().map_err(|e| format!("begin: {e}"))?;
    let mut v = Vec::new();
    let extra = EXTRA_FLAGS.with(|f| f.get());
    for (name, flags, _) in DBS {
        v.push(
            txn.create_db(Some(name), DatabaseFlags::from_bits_retain(flags | extra))
                .map_err(|e| format!("create {name}: {e}"))?,
        );
    }
    txn.commit()
        .map_err(|e| format!("commit after create: {e}"))?;
    Ok(v)
}

/// A second cursor on the write transaction that does not borrow it, so the
/// transaction can be modified while the cursor stays open (what the safe
/// API rightly forbids, but LMDB allows and fixes cursor positions for).
struct RawCursor(*mut dlmdb::sys::MDB_cursor);

impl RawCursor {
    fn open(txn: &RwTxn<'_>, db: Database) -> Result<Self, String> {
        let mut c = std::ptr::null_mut();
        // SAFETY: live write txn; the cursor is closed (Drop) before the op ends.
        let rc = unsafe { dlmdb::sys::mdb_cursor_open(txn.raw(), db.dbi(), &mut c) };
        if rc != 0 {
            return Err(format!("raw cursor open: {}", dlmdb::strerror(rc)));
        }
        Ok(RawCursor(c))
    }

    fn get(
        &mut self,
        key: Option<&[u8]>,
        op: CursorOp,
    ) -> Result<Option<dlmdb_tests::Pair>, String> {
        let mut k = dlmdb::sys::MDB_val::default();
        if let Some(key) = key {
            k = dlmdb::sys::MDB_val {
                mv_size: key.len(),
                mv_data: key.as_ptr() as *mut _,
            };
        }
        let mut d = dlmdb::sys::MDB_val::default();
        // SAFETY: the cursor is live; returned values are copied at once.
        let rc = unsafe { dlmdb::sys::mdb_cursor_get(self.0, &mut k, &mut d, op as u32) };
        let copy = |v: &dlmdb::sys::MDB_val| {
            if v.mv_size == 0 {
                Vec::new()
            } else {
                unsafe { std::slice::from_raw_parts(v.mv_data as *const u8, v.mv_size) }.to_vec()
            }
        };
        match rc {
            0 => Ok(Some((copy(&k), copy(&d)))),
            dlmdb::sys::MDB_NOTFOUND => Ok(None),
            e => Err(format!("raw cursor {op:?}: {}", dlmdb::strerror(e))),
        }
    }
}

impl Drop for RawCursor {
    fn drop(&mut self) {
        // SAFETY: closed before its transaction ends (it lives inside one op).
        unsafe { dlmdb::sys::mdb_cursor_close(self.0) }
    }
}

/// One op inside the write transaction; `cur` is the transaction's model.
/// A write cursor on `db`, its error as text.
fn write_cursor<'t>(txn: &'t mut RwTxn<'_>, db: Database) -> Result<dlmdb::RwCursor<'t>, String> {
    txn.cursor_mut(db).map_err(|e| format!("cursor_mut: {e}"))
}

/// An item copied out of the store or the model.
fn owned_pair((k, v): (&[u8], &[u8])) -> dlmdb_tests::Pair {
    (k.to_vec(), v.to_vec())
}

/// NEXT on `c`, copied out; an error says it came `when`.
fn next_item(c: &mut dlmdb::RwCursor<'_>, when: &str) -> Result<Option<dlmdb_tests::Pair>, String> {
    Ok(c.next()
        .map_err(|e| format!("NEXT {when}: {e}"))?
        .map(owned_pair))
}

/// After `what`, the cursor stands on (`k`, `v`).
fn expect_current(
    c: &mut dlmdb::RwCursor<'_>,
    k: &[u8],
    v: &[u8],
    what: &str,
) -> Result<(), String> {
    let now = c
        .current()
        .map_err(|e| format!("GET_CURRENT after {what}: {e}"))?;
    if now != Some((k, v)) {
        return Err(format!(
            "GET_CURRENT after {what} of {}: wrong item",
            show(k)
        ));
    }
    Ok(())
}

fn apply(txn: &mut RwTxn<'_>, dbs: &[Database], cur: &mut Models, op: &Op) -> Result<(), String> {
    match op {
        Op::Put { db, key, val, flag } => {
            let Some((m, k)) = target(cur, *db, key) else {
                return Ok(());
            };
            let v = val_bytes(*val);
            let d = dbs[*db];
            match flag {
                PutFlag::Plain => {
                    txn.put(d, &k, &v, WriteFlags::empty())
                        .map_err(|e| format!("put: {e}"))?;
                    m.put(&k, &v);
                }
                PutFlag::NoOverwrite => {
                    let r = txn
                        .put_no_overwrite(d, &k, &v)
                        .map_err(|e| format!("put NOOVERWRITE: {e}"))?;
                    match (r, m.get(&k)) {
                        (None, None) => {
                            m.put(&k, &v);
                        }
                        (Some(old), Some(want)) if old == want => {}
                        (r, want) => {
                            return Err(format!(
                                "put NOOVERWRITE: engine said existing={:?}, model has {:?}",
                                r.map(|x| x.len()),
                                want.map(|x| x.len())
                            ))
                        }
                    }
                }
                PutFlag::Append => {
                    let ok = match m.last() {
                        None => true,
                        Some((last, _)) => sort_key(m.flags, &k) > sort_key(m.flags, last),
                    };
                    let r = txn.put(d, &k, &v, WriteFlags::APPEND);
                    match (r, ok) {
                        (Ok(()), true) => {
                            m.put(&k, &v);
                        }
                        (Err(dlmdb::Error::KeyExist), false) => {}
                        (r, ok) => {
                            return Err(format!(
                                "put APPEND {}: got {r:?}, expected ok={ok}",
                                show(&k)
                            ))
                        }
                    }
                }
                PutFlag::Reserve => {
                    let buf = txn
                        .reserve(d, &k, v.len(), WriteFlags::empty())
                        .map_err(|e| format!("reserve: {e}"))?;
                    if buf.len() != v.len() {
                        return Err(format!(
                            "reserve returned {} bytes, asked {}",
                            buf.len(),
                            v.len()
                        ));
                    }
                    buf.copy_from_slice(&v);
                    m.put(&k, &v);
                }
            }
        }
        Op::PutCurrent { db, key, val } => {
            let Some((m, k)) = target(cur, *db, key) else {
                return Ok(());
            };
            let v = val_bytes(*val);
            let mut c = write_cursor(txn, dbs[*db])?;
            let found = c.set(&k).map_err(|e| format!("SET_KEY: {e}"))?;
            if found != m.get(&k).map(|b| (k.as_slice(), b)) {
                return Err(format!(
                    "SET_KEY {} before CURRENT put: wrong item",
                    show(&k)
                ));
            }
            c.put_current(&k, &v)
                .map_err(|e| format!("cursor put CURRENT: {e}"))?;
            expect_current(&mut c, &k, &v, "CURRENT put")?;
            m.put(&k, &v);
        }
        Op::Del { db, key } => {
            let Some((m, k)) = target(cur, *db, key) else {
                return Ok(());
            };
            let found = txn
                .del(dbs[*db], &k, None)
                .map_err(|e| format!("del: {e}"))?;
            let had = m.del(&k).is_some();
            if found != had {
                return Err(format!(
                    "del {}: engine found={found}, model had={had}",
                    show(&k)
                ));
            }
        }
        Op::CursorDel { db, key } => {
            let Some((m, k)) = target(cur, *db, key) else {
                return Ok(());
            };
            let following = m.after(&k).map(owned_pair);
            let mut c = write_cursor(txn, dbs[*db])?;
            if c.set(&k).map_err(|e| format!("SET_KEY: {e}"))?.is_none() {
                return Err(format!("SET_KEY {} (existing) not found", show(&k)));
            }
            c.del(WriteFlags::empty())
                .map_err(|e| format!("cursor del: {e}"))?;
            m.del(&k);
            // after a cursor delete, NEXT returns the item that followed
            let next = next_item(&mut c, "after cursor del")?;
            if next != following {
                return Err(format!(
                    "NEXT after cursor del of {}: got {:?}, expected {:?}",
                    show(&k),
                    next.map(|p| show(&p.0)),
                    following.map(|p| show(&p.0))
                ));
            }
        }
        Op::CursorPut { db, key, val } => {
            let Some((m, k)) = target(cur, *db, key) else {
                return Ok(());
            };
            let v = val_bytes(*val);
            let mut c = write_cursor(txn, dbs[*db])?;
            c.put(&k, &v, WriteFlags::empty())
                .map_err(|e| format!("cursor put: {e}"))?;
            expect_current(&mut c, &k, &v, "cursor put")?;
            m.put(&k, &v);
            let want_next = m.after(&k).map(owned_pair);
            let next = next_item(&mut c, "after cursor put")?;
            if next != want_next {
                return Err(format!("NEXT after cursor put of {}: wrong item", show(&k)));
            }
        }
        Op::DelRun { db, key, n } => {
            let Some((m, k)) = target(cur, *db, key) else {
                return Ok(());
            };
            let mut c = write_cursor(txn, dbs[*db])?;
            let mut at = c
                .set_range(&k)
                .map_err(|e| format!("SET_RANGE: {e}"))?
                .map(owned_pair);
            if at.as_ref().map(|(a, b)| (a.as_slice(), b.as_slice())) != m.ceil(&k) {
                return Err(format!(
                    "SET_RANGE {} before delete run: wrong item",
                    show(&k)
                ));
            }
            for j in 0..*n {
                let Some((dk, _)) = at.take() else { break };
                c.del(WriteFlags::empty())
                    .map_err(|e| format!("delete run #{j}: {e}"))?;
                m.del(&dk);
                let want = m.after(&dk).map(owned_pair);
                at = next_item(&mut c, "in delete run")?;
                if at != want {
                    return Err(format!(
                        "delete run #{j}: NEXT after deleting {} gave {:?}, expected {:?}",
                        show(&dk),
                        at.as_ref().map(|p| show(&p.0)),
                        want.as_ref().map(|p| show(&p.0))
                    ));
                }
            }
        }
        Op::Drain { db } => {
            let m = &mut cur[*db];
            let mut c = write_cursor(txn, dbs[*db])?;
            let mut n = 0usize;
            let mut at = c.first().map_err(|e| format!("FIRST: {e}"))?.is_some();
            while at {
                c.del(WriteFlags::empty())
                    .map_err(|e| format!("drain delete #{n}: {e}"))?;
                n += 1;
                at = c
                    .next()
                    .map_err(|e| format!("NEXT while draining: {e}"))?
                    .is_some();
            }
            drop(c);
            if n != m.len() {
                return Err(format!("drain deleted {n} items, model had {}", m.len()));
            }
            *m = ModelDb::new(m.flags);
            let st = txn.stat(dbs[*db]).map_err(|e| format!("stat: {e}"))?;
            if TreeStat::from(st) != TreeStat::default() {
                return Err(format!("drained DB is not an empty tree: {st:?}"));
            }
        }
        Op::TwoCursors {
            db,
            a,
            b,
            put,
            step,
        } => {
            let Some(ka) = resolve(a, *db, &cur[*db]) else {
                return Ok(());
            };
            let Some(kb) = resolve(b, *db, &cur[*db]) else {
                return Ok(());
            };
            let mut a_cur = RawCursor::open(txn, dbs[*db])?;
            if a_cur.get(Some(&ka), CursorOp::SetKey)?.map(|p| p.0) != Some(ka.clone()) {
                return Err(format!("cursor A: SET_KEY {} failed", show(&ka)));
            }
            let m = &mut cur[*db];
            let deleted_a = match put {
                Some(v) => {
                    let v = val_bytes(*v);
                    txn.put(dbs[*db], &kb, &v, WriteFlags::empty())
                        .map_err(|e| format!("put beside cursor A: {e}"))?;
                    m.put(&kb, &v);
                    false
                }
                None => {
                    let found = txn
                        .del(dbs[*db], &kb, None)
                        .map_err(|e| format!("del beside cursor A: {e}"))?;
                    if found != m.del(&kb).is_some() {
                        return Err(format!(
                            "del {} beside cursor A: found={found} disagrees with model",
                            show(&kb)
                        ));
                    }
                    found && kb == ka
                }
            };
            let (got, want) = match step {
                Step::Current if deleted_a => return Ok(()),
                Step::Current => (
                    a_cur.get(None, CursorOp::GetCurrent)?,
                    m.get(&ka).map(|v| (ka.as_slice(), v)),
                ),
                Step::Next => (a_cur.get(None, CursorOp::Next)?, m.after(&ka)),
                Step::Prev => (a_cur.get(None, CursorOp::Prev)?, m.before(&ka)),
            };
            let want = want.map(|(x, y)| (x.to_vec(), y.to_vec()));
            if got != want {
                return Err(format!(
                    "cursor A on {} after {} of {}: {step:?} gave {:?}, expected {:?}",
                    show(&ka),
                    if put.is_some() { "put" } else { "del" },
                    show(&kb),
                    got.map(|p| (show(&p.0), p.1.len())),
                    want.map(|p| (show(&p.0), p.1.len()))
                ));
            }
        }
        Op::Get { db, key } => {
            let Some((m, k)) = target(cur, *db, key) else {
                return Ok(());
            };
            let g = txn.get(dbs[*db], &k).map_err(|e| format!("get: {e}"))?;
            if g != m.get(&k) {
                return Err(format!(
                    "get {}: engine {:?} bytes, model {:?} bytes",
                    show(&k),
                    g.map(|x| x.len()),
                    m.get(&k).map(|x| x.len())
                ));
            }
        }
        Op::Walk { db, forward } => {
            compare_walk(&walk_txn(txn, dbs[*db], *forward)?, &cur[*db], *forward)?;
        }
        Op::Seek {
            db,
            key,
            how,
            steps,
        } => {
            let Some((m, k)) = target(cur, *db, key) else {
                return Ok(());
            };
            let mut c = txn.cursor(dbs[*db]).map_err(|e| format!("cursor: {e}"))?;
            let (op, want) = match how {
                Seek::Set => (CursorOp::Set, m.get(&k).map(|v| (k.as_slice(), v))),
                Seek::SetKey => (CursorOp::SetKey, m.get(&k).map(|v| (k.as_slice(), v))),
                Seek::SetRange => (CursorOp::SetRange, m.ceil(&k)),
            };
            let got = c
                .get(Some(&k), None, op)
                .map_err(|e| format!("{op:?}: {e}"))?;
            let got_ref = got.as_ref().map(|(k, v)| (&**k, &**v));
            if got_ref != want {
                return Err(format!(
                    "{op:?} {}: got {:?}, model {:?}",
                    show(&k),
                    got_ref.map(|p| show(p.0)),
                    want.map(|p| show(p.0))
                ));
            }
            let Some((mut at, _)) = got else {
                return Ok(());
            };
            for &fwd in steps {
                let g = if fwd { c.next() } else { c.prev() }.map_err(|e| format!("step: {e}"))?;
                let g_ref = g.as_ref().map(|(k, v)| (&**k, &**v));
                let w = if fwd { m.after(&at) } else { m.before(&at) };
                if g_ref != w {
                    return Err(format!(
                        "{} from {}: got {:?}, model {:?}",
                        if fwd { "NEXT" } else { "PREV" },
                        show(&at),
                        g_ref.map(|p| show(p.0)),
                        w.map(|p| show(p.0))
                    ));
                }
                match g {
                    Some((a, _)) => at = a,
                    None => break,
                }
            }
        }
        Op::Nested { ops, commit } => {
            let mut child_model = cur.clone();
            {
                let mut child = txn.nested().map_err(|e| format!("begin nested txn: {e}"))?;
                for (j, o) in ops.iter().enumerate() {
                    apply(&mut child, dbs, &mut child_model, o)
                        .map_err(|e| format!("nested op #{j} {o:?}: {e}"))?;
                }
                if *commit {
                    child.commit().map_err(|e| format!("nested commit: {e}"))?;
                } else {
                    child.abort();
                }
            }
            if *commit {
                *cur = child_model;
            }
            // the parent sees exactly the merged (or unchanged) state
            for (i, m) in cur.iter().enumerate() {
                if i == ops.len() % DBS.len() {
                    compare_walk(&walk_txn(txn, dbs[i], true)?, m, true).map_err(|e| {
                        format!(
                            "after nested {}: db {}: {e}",
                            if *commit { "commit" } else { "abort" },
                            DBS[i].0
                        )
                    })?;
                }
            }
        }
        Op::Commit | Op::Abort | Op::SnapTake | Op::SnapCheck(_) | Op::Reopen => unreachable!(),
    }
    Ok(())
}

/// Run `ops` on a fresh store; `Err((index, message))` at the first mismatch.
fn run(seed: u64, ops: &[Op], report: bool) -> Result<(), (usize, String)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.mdb");
    let layout = layout_for(seed);
    let mut committed = new_models();
    let mut i = 0;
    let fail = |i: usize| move |e: String| (i, e);
    loop {
        let env = open_env(&path, layout).map_err(fail(i))?;
        let dbs = open_dbs(&env).map_err(fail(i))?;
        // every (re)open starts by checking the whole committed state
        {
            let t = env.read_txn().map_err(|e| (i, format!("read_txn: {e}")))?;
            verify_all(&t, &dbs, &committed).map_err(|e| (i, format!("after open: {e}")))?;
        }
        let mut snaps: Vec<(RoTxn<'_>, Models)> = Vec::new();
        let mut txn: Option<RwTxn<'_>> = None;
        let mut cur = committed.clone();
        let mut reopen = false;
        while i < ops.len() && !reopen {
            let op = &ops[i];
            match op {
                Op::Commit => {
                    if let Some(t) = txn.take() {
                        t.commit().map_err(|e| (i, format!("commit: {e}")))?;
                        committed = cur.clone();
                        if prefix_mode() {
                            dlmdb_tests::pfxcheck::strict_check(&path)
                                .map_err(|e| (i, format!("after commit: {e}")))?;
                        }
                    }
                }
                Op::Abort => {
                    if let Some(t) = txn.take() {
                        t.abort();
                        cur = committed.clone();
                    }
                }
                Op::SnapTake => {
                    if snaps.len() < 3 {
                        let t = env
                            .read_txn()
                            .map_err(|e| (i, format!("snapshot read_txn: {e}")))?;
                        snaps.push((t, committed.clone()));
                    }
                }
                Op::SnapCheck(n) => {
                    if !snaps.is_empty() {
                        let (t, m) = snaps.remove(*n as usize % snaps.len());
                        verify_all(&t, &dbs, &m).map_err(|e| (i, format!("old snapshot: {e}")))?;
                    }
                }
                Op::Reopen => {
                    reopen = true;
                }
                _ => {
                    if txn.is_none() {
                        txn = Some(
                            env.write_txn()
                                .map_err(|e| (i, format!("write_txn: {e}")))?,
                        );
                    }
                    let t = txn.as_mut().unwrap();
                    let r = catch_unwind(AssertUnwindSafe(|| apply(t, &dbs, &mut cur, op)))
                        .unwrap_or_else(|p| {
                            Err(format!("panic: {:?}", p.downcast_ref::<String>()))
                        });
                    r.map_err(|e| (i, e))?;
                }
            }
            i += 1;
        }
        // leaving the session: an open write txn is aborted, snapshots checked
        if let Some(t) = txn.take() {
            t.abort();
        }
        for (t, m) in snaps.drain(..) {
            verify_all(&t, &dbs, &m).map_err(|e| (i, format!("snapshot at close: {e}")))?;
        }
        if !reopen || i >= ops.len() {
            let t = env.read_txn().map_err(|e| (i, format!("read_txn: {e}")))?;
            verify_all(&t, &dbs, &committed).map_err(|e| (i, format!("final state: {e}")))?;
            let sizes: Vec<String> = DBS
                .iter()
                .zip(&dbs)
                .map(|((n, _, _), d)| {
                    let s = t.stat(*d).unwrap();
                    format!("{n}: {} entries, depth {}", s.entries, s.depth)
                })
                .collect();
            if report {
                eprintln!("model: seed {seed}: final {}", sizes.join("; "));
            }
            break;
        }
    }
    // the environment is closed here; check the page accounting of the result
    let renv = raw::Env::open(&path, (layout | EnvFlags::NO_SUB_DIR).bits(), 8, 0)
        .map_err(|e| (ops.len(), format!("raw open for accounting: {e}")))?;
    raw::check_accounting(&renv).map_err(|e| (ops.len(), format!("accounting: {e}")))?;
    Ok(())
}

fn ops_per_seed(n_seeds: usize) -> usize {
    if let Ok(s) = std::env::var("DLMDB_MODEL_OPS") {
        return s.parse().expect("DLMDB_MODEL_OPS must be a number");
    }
    TOTAL_OPS.div_ceil(n_seeds).max(20_000)
}

fn differential(nested: bool) {
    differential_with(nested, &[1, 2, 3], 0)
}

fn differential_with(nested: bool, fixed_seeds: &[u64], extra_flags: u32) {
    EXTRA_FLAGS.with(|f| f.set(extra_flags));
    let seeds = dlmdb_tests::seeds(fixed_seeds);
    let n = ops_per_seed(seeds.len());
    let mut failures = Vec::new();
    for seed in seeds {
        let ops = generate(seed, n, nested);
        eprintln!(
            "model: seed {seed}, {n} ops, layout {:?}, nested txns {nested}",
            layout_for(seed)
        );
        let t0 = std::time::Instant::now();
        let Err((at, msg)) = run(seed, &ops, true) else {
            eprintln!("model: seed {seed} ok in {:?}", t0.elapsed());
            continue;
        };
        // shortest failing prefix: binary search over replays of the first k ops
        let (mut lo, mut hi) = (1usize, (at + 1).min(ops.len()));
        let mut hi_msg = msg.clone();
        while lo < hi {
            let mid = (lo + hi) / 2;
            match run(seed, &ops[..mid], false) {
                Err((_, m)) => {
                    hi = mid;
                    hi_msg = m;
                }
                Ok(()) => lo = mid + 1,
            }
        }
        let tail: Vec<String> = ops[hi.saturating_sub(15)..hi]
            .iter()
            .map(|o| format!("{o:?}"))
            .collect();
        let test = match (nested, extra_flags != 0) {
            (_, true) => "model_differential_prefix",
            (true, false) => "model_differential_nested",
            (false, false) => "model_differential",
        };
        let report = format!(
            "seed {seed}: first failure at op #{at}: {msg}\n  shortest failing prefix: {hi} ops \
             (replay: DLMDB_SEED={seed} DLMDB_MODEL_OPS={hi} cargo test --release -p dlmdb-tests --test model {test}); \
             its failure: {hi_msg}\n  last ops:\n    {}",
            tail.join("\n    ")
        );
        eprintln!("{report}");
        failures.push(report);
    }
    assert!(
        failures.is_empty(),
        "model test failed:\n{}",
        failures.join("\n")
    );
}

/// The main differential run (no nested transactions).
#[test]
fn model_differential() {
    differential(false);
}

/// The same with nested transactions mixed in (kept separate so that a
/// missing nested-transaction feature does not hide everything else).
#[test]
fn model_differential_nested() {
    differential(true);
}

/// The same operations on prefix-compressed databases (every key shape,
/// including INTEGERKEY and REVERSEKEY, whose searches decode every probe),
/// with `dlmdb check --strict-prefix` over the whole store after every
/// commit: inserts and deletes at index 0 change trunks, splits, merges and
/// moves re-encode pages, and every compressed page must stay canonical.
#[test]
fn model_differential_prefix() {
    differential_with(false, &[4, 5, 6], dlmdb::sys::MDB_PREFIX_COMPRESSION);
}
