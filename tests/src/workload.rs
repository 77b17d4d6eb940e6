//! Seeded random workloads over several plain databases, applied to any
//! engine through the small [`KvWrite`] / [`KvRead`] traits, and verified
//! against the [`ModelDb`] state they should produce.
//!
//! A workload is generated up front together with the model (so the same
//! bytes can be written by stock LMDB or by our engine), as a list of
//! transactions, each either committed or aborted.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::model::{ModelDb, INTEGERKEY, REVERSEKEY};

/// Shape of the keys a database receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyShape {
    /// Printable keys of varying (odd and even) length.
    Text,
    /// Random binary keys of 1..64 bytes, sometimes up to 511.
    Binary,
    /// 4-byte native unsigned integers (INTEGERKEY).
    Int4,
    /// 8-byte native unsigned integers (INTEGERKEY).
    Int8,
    /// Host-like dotted names (REVERSEKEY).
    Host,
}

/// Distribution of value sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValShape {
    /// Mostly small, sometimes around the overflow boundaries.
    Mixed,
    /// Big values, up to ~100 KB, chosen around page boundaries.
    Big,
}

#[derive(Debug, Clone)]
pub struct DbSpec {
    /// `None` = the main (unnamed) database.
    pub name: Option<Vec<u8>>,
    pub flags: u32,
    pub keys: KeyShape,
    pub vals: ValShape,
}

impl DbSpec {
    pub fn named(name: &str, flags: u32, keys: KeyShape, vals: ValShape) -> Self {
        DbSpec {
            name: Some(name.as_bytes().to_vec()),
            flags,
            keys,
            vals,
        }
    }
    pub fn label(&self) -> String {
        self.name
            .as_ref()
            .map_or("<main>".into(), |n| String::from_utf8_lossy(n).into_owned())
    }
}

/// The standard mix used by the compatibility tests: every key shape, odd
/// and even name lengths (the layout difference between LMDB and DLMDB shows
/// on odd lengths), big values, plain records in the main DB.
pub fn standard_specs() -> Vec<DbSpec> {
    vec![
        DbSpec {
            name: None,
            flags: 0,
            keys: KeyShape::Text,
            vals: ValShape::Mixed,
        },
        DbSpec::named("text", 0, KeyShape::Text, ValShape::Mixed),
        DbSpec::named("bin", 0, KeyShape::Binary, ValShape::Mixed),
        DbSpec::named("big", 0, KeyShape::Text, ValShape::Big),
        DbSpec::named("i32", INTEGERKEY, KeyShape::Int4, ValShape::Mixed),
        DbSpec::named("int64", INTEGERKEY, KeyShape::Int8, ValShape::Mixed),
        DbSpec::named("rev", REVERSEKEY, KeyShape::Host, ValShape::Mixed),
        DbSpec::named("x", 0, KeyShape::Binary, ValShape::Mixed),
    ]
}

#[derive(Debug, Clone)]
pub enum Op {
    Put {
        db: usize,
        key: Vec<u8>,
        val: Vec<u8>,
    },
    /// `existed`: whether the model had the key (expected result).
    Del {
        db: usize,
        key: Vec<u8>,
        existed: bool,
    },
}

#[derive(Debug, Clone)]
pub struct TxnOps {
    pub ops: Vec<Op>,
    pub commit: bool,
}

#[derive(Debug, Clone)]
pub struct Workload {
    pub specs: Vec<DbSpec>,
    pub txns: Vec<TxnOps>,
    /// Final state, one model per spec.
    pub models: Vec<ModelDb>,
}

const WORDS: [&str; 16] = [
    "alpha", "bravo", "charlie", "delta", "echo", "fox", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "mike", "nov", "oscar", "papa",
];

pub fn gen_key(rng: &mut ChaCha8Rng, shape: KeyShape) -> Vec<u8> {
    match shape {
        KeyShape::Text => {
            let mut s = format!(
                "k{}-{}",
                rng.gen_range(0..100_000u32),
                WORDS[rng.gen_range(0..16)]
            );
            for _ in 0..rng.gen_range(0..3) {
                s.push('-');
                s.push_str(WORDS[rng.gen_range(0..16)]);
            }
            // trim to a random length so odd and even lengths both occur
            let cut = rng.gen_range(1..=s.len());
            s.truncate(cut.max(2));
            s.into_bytes()
        }
        KeyShape::Binary => {
            let len = match rng.gen_range(0..100) {
                0..=3 => rng.gen_range(200..=511),
                4 => 511,
                _ => rng.gen_range(1..=64),
            };
            (0..len).map(|_| rng.gen()).collect()
        }
        KeyShape::Int4 => {
            let n: u32 = match rng.gen_range(0..20) {
                0 => 0,
                1 => 1,
                2 => u32::MAX,
                3 => rng.gen(),
                _ => rng.gen_range(0..5000),
            };
            n.to_ne_bytes().to_vec()
        }
        KeyShape::Int8 => {
            let n: u64 = match rng.gen_range(0..20) {
                0 => 0,
                1 => 1 << 32,
                2 => u64::MAX,
                3 => rng.gen(),
                _ => rng.gen_range(0..5000),
            };
            n.to_ne_bytes().to_vec()
        }
        KeyShape::Host => {
            let mut s = String::new();
            for i in 0..rng.gen_range(1..4) {
                if i > 0 {
                    s.push('.');
                }
                s.push_str(WORDS[rng.gen_range(0..16)]);
                if rng.gen_bool(0.5) {
                    s.push_str(&rng.gen_range(0..100u32).to_string());
                }
            }
            s.push_str([".com", ".org", ".io", ".example"][rng.gen_range(0..4)]);
            s.into_bytes()
        }
    }
}

pub fn gen_val(rng: &mut ChaCha8Rng, shape: ValShape) -> Vec<u8> {
    let len = match shape {
        ValShape::Mixed => match rng.gen_range(0..100) {
            0..=59 => rng.gen_range(0..120),
            60..=79 => rng.gen_range(120..1000),
            80..=89 => rng.gen_range(1900..2100),
            90..=95 => rng.gen_range(4000..4200),
            _ => rng.gen_range(8000..12000),
        },
        ValShape::Big => match rng.gen_range(0..10) {
            0 => rng.gen_range(0..100),
            1..=3 => rng.gen_range(1950..2100),
            4..=6 => [4079, 4080, 4081, 8176, 8177, 12272][rng.gen_range(0..6)],
            _ => rng.gen_range(10_000..100_000),
        },
    };
    let mut v = vec![0u8; len];
    rng.fill(&mut v[..]);
    v
}

/// Generate `txns` transactions of up to `ops_per_txn` operations each; about
/// one transaction in eight is aborted.
pub fn generate(seed: u64, specs: Vec<DbSpec>, txns: usize, ops_per_txn: usize) -> Workload {
    let models: Vec<ModelDb> = specs.iter().map(|s| ModelDb::new(s.flags)).collect();
    generate_inner(seed, &specs, models, txns, ops_per_txn)
}

fn generate_inner(
    seed: u64,
    specs: &[DbSpec],
    mut models: Vec<ModelDb>,
    txns: usize,
    ops_per_txn: usize,
) -> Workload {
    let specs = specs.to_vec();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for t in 0..txns {
        // the first transaction always commits so every database exists
        let commit = t == 0 || rng.gen_range(0..8) != 0;
        let mut scratch = models.clone();
        let mut ops = Vec::new();
        let n = rng.gen_range(ops_per_txn / 2..=ops_per_txn);
        for _ in 0..n {
            let db = rng.gen_range(0..specs.len());
            let m = &mut scratch[db];
            let existing = |rng: &mut ChaCha8Rng, m: &ModelDb| {
                if m.is_empty() {
                    None
                } else {
                    m.nth_key(rng.gen_range(0..m.len()))
                }
            };
            match rng.gen_range(0..100) {
                // delete: mostly existing keys, some absent ones
                0..=19 => {
                    let key = match existing(&mut rng, m) {
                        Some(k) if rng.gen_range(0..5) != 0 => k,
                        _ => gen_key(&mut rng, specs[db].keys),
                    };
                    let existed = m.del(&key).is_some();
                    ops.push(Op::Del { db, key, existed });
                }
                // overwrite an existing key with a value of another size
                20..=44 => {
                    let key =
                        existing(&mut rng, m).unwrap_or_else(|| gen_key(&mut rng, specs[db].keys));
                    let val = gen_val(&mut rng, specs[db].vals);
                    m.put(&key, &val);
                    ops.push(Op::Put { db, key, val });
                }
                _ => {
                    let key = gen_key(&mut rng, specs[db].keys);
                    let val = gen_val(&mut rng, specs[db].vals);
                    m.put(&key, &val);
                    ops.push(Op::Put { db, key, val });
                }
            }
        }
        if commit {
            models = scratch;
        }
        out.push(TxnOps { ops, commit });
    }
    Workload {
        specs,
        txns: out,
        models,
    }
}

/// Writing side of an engine, as the workload needs it. Errors are raw codes.
pub trait KvWrite {
    fn open_db(&mut self, name: Option<&[u8]>, flags: u32) -> Result<u32, i32>;
    fn put(&mut self, dbi: u32, key: &[u8], val: &[u8]) -> Result<(), i32>;
    /// `Ok(false)` when the key did not exist.
    fn del(&mut self, dbi: u32, key: &[u8]) -> Result<bool, i32>;
    /// Commit the transaction, or abort it.
    fn finish(self, commit: bool) -> Result<(), i32>;
}

/// Reading side of an engine.
pub trait KvRead {
    fn open_db(&self, name: Option<&[u8]>) -> Result<u32, i32>;
    fn db_flags(&self, dbi: u32) -> Result<u32, i32>;
    fn get(&self, dbi: u32, key: &[u8]) -> Result<Option<Vec<u8>>, i32>;
    fn walk(&self, dbi: u32, forward: bool) -> Result<crate::Pairs, i32>;
    fn entries(&self, dbi: u32) -> Result<u64, i32>;
}

/// [`KvWrite`] and [`KvRead`] for a transaction of the two-engine kit's
/// driver; the same code for both engines.
macro_rules! kv_for_kit_txn {
    ($engine:ident) => {
        impl KvWrite for dlmdb_kit::$engine::Txn<'_> {
            fn open_db(&mut self, name: Option<&[u8]>, flags: u32) -> Result<u32, i32> {
                dlmdb_kit::$engine::Txn::open_db(self, name, flags)
            }
            fn put(&mut self, dbi: u32, key: &[u8], val: &[u8]) -> Result<(), i32> {
                dlmdb_kit::$engine::Txn::put(self, dbi, key, val, 0)
            }
            fn del(&mut self, dbi: u32, key: &[u8]) -> Result<bool, i32> {
                dlmdb_kit::$engine::Txn::del(self, dbi, key, None)
            }
            fn finish(self, commit: bool) -> Result<(), i32> {
                if commit {
                    self.commit()
                } else {
                    self.abort();
                    Ok(())
                }
            }
        }

        impl KvRead for dlmdb_kit::$engine::Txn<'_> {
            fn open_db(&self, name: Option<&[u8]>) -> Result<u32, i32> {
                dlmdb_kit::$engine::Txn::open_db(self, name, 0)
            }
            fn db_flags(&self, dbi: u32) -> Result<u32, i32> {
                dlmdb_kit::$engine::Txn::db_flags(self, dbi)
            }
            fn get(&self, dbi: u32, key: &[u8]) -> Result<Option<Vec<u8>>, i32> {
                dlmdb_kit::$engine::Txn::get(self, dbi, key)
            }
            fn walk(&self, dbi: u32, forward: bool) -> Result<crate::Pairs, i32> {
                dlmdb_kit::$engine::Txn::walk(self, dbi, forward)
            }
            fn entries(&self, dbi: u32) -> Result<u64, i32> {
                dlmdb_kit::$engine::Txn::entries(self, dbi)
            }
        }
    };
}
kv_for_kit_txn!(ours);
kv_for_kit_txn!(stock);

/// Apply the operations of one transaction; panics on any unexpected result.
pub fn apply_txn<W: KvWrite>(w: &mut W, specs: &[DbSpec], t: &TxnOps, who: &str) {
    let mut dbis = Vec::new();
    for s in specs {
        let dbi = w
            .open_db(s.name.as_deref(), s.flags | 0x40000)
            .unwrap_or_else(|e| panic!("{who}: open/create {}: error {e}", s.label()));
        dbis.push(dbi);
    }
    for (i, op) in t.ops.iter().enumerate() {
        match op {
            Op::Put { db, key, val } => {
                if let Err(e) = w.put(dbis[*db], key, val) {
                    panic!(
                        "{who}: op #{i}: put {} key {} ({} byte value) failed: {e}",
                        specs[*db].label(),
                        crate::show(key),
                        val.len()
                    );
                }
            }
            Op::Del { db, key, existed } => match w.del(dbis[*db], key) {
                Ok(found) if found == *existed => {}
                other => panic!(
                    "{who}: op #{i}: del {} key {}: got {other:?}, expected found={existed}",
                    specs[*db].label(),
                    crate::show(key)
                ),
            },
        }
    }
}

/// Verify every database of the workload through a reader: stored flags,
/// forward and backward walks, entry counts, point lookups of present and
/// absent keys. The main DB is compared without its named-DB records.
pub fn verify<R: KvRead>(r: &R, w: &Workload, who: &str, seed: u64) {
    let named: Vec<Vec<u8>> = w.specs.iter().filter_map(|s| s.name.clone()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    for (s, m) in w.specs.iter().zip(&w.models) {
        let what = format!("{who}: db {}", s.label());
        let dbi = r
            .open_db(s.name.as_deref())
            .unwrap_or_else(|e| panic!("{what}: open failed: {e}"));
        let want = m.pairs();
        let mut got = r
            .walk(dbi, true)
            .unwrap_or_else(|e| panic!("{what}: forward walk failed: {e}"));
        if s.name.is_none() {
            got.retain(|(k, _)| !named.contains(k));
        } else {
            let f = r
                .db_flags(dbi)
                .unwrap_or_else(|e| panic!("{what}: flags: {e}"));
            assert_eq!(f & 0xffff, s.flags, "{what}: stored flags");
            let n = r
                .entries(dbi)
                .unwrap_or_else(|e| panic!("{what}: stat: {e}"));
            assert_eq!(n, want.len() as u64, "{what}: ms_entries");
        }
        crate::assert_pairs_eq(&format!("{what} (forward walk)"), &got, &want);
        let mut back = r
            .walk(dbi, false)
            .unwrap_or_else(|e| panic!("{what}: backward walk failed: {e}"));
        back.reverse();
        if s.name.is_none() {
            back.retain(|(k, _)| !named.contains(k));
        }
        crate::assert_pairs_eq(&format!("{what} (backward walk)"), &back, &want);
        for (k, v) in want.iter().step_by(7) {
            let g = r
                .get(dbi, k)
                .unwrap_or_else(|e| panic!("{what}: get {}: {e}", crate::show(k)));
            assert!(
                g.as_deref() == Some(v.as_slice()),
                "{what}: get {} returned wrong value",
                crate::show(k)
            );
        }
        for _ in 0..20 {
            let k = gen_key(&mut rng, s.keys);
            let g = r
                .get(dbi, &k)
                .unwrap_or_else(|e| panic!("{what}: get {}: {e}", crate::show(&k)));
            assert_eq!(g.as_deref(), m.get(&k), "{what}: get {}", crate::show(&k));
        }
    }
}

/// Apply a whole workload, one write transaction (started by `begin`) per
/// workload transaction, committed or aborted as the workload says.
pub fn write_workload<W: KvWrite>(
    w: &Workload,
    who: &str,
    mut begin: impl FnMut() -> Result<W, i32>,
) {
    let fail = |i: usize, what: &str, rc: i32| -> ! {
        panic!("{who}: txn #{i}: {what}: {}", crate::raw::strerror(rc))
    };
    for (i, t) in w.txns.iter().enumerate() {
        let mut txn = begin().unwrap_or_else(|rc| fail(i, "begin", rc));
        apply_txn(&mut txn, &w.specs, t, &format!("{who} txn #{i}"));
        txn.finish(t.commit)
            .unwrap_or_else(|rc| fail(i, "commit", rc));
    }
}

/// Continue a workload: like [`generate`] but starting from `start` models.
pub fn generate_from(seed: u64, start: &Workload, txns: usize, ops_per_txn: usize) -> Workload {
    generate_inner(seed, &start.specs, start.models.clone(), txns, ops_per_txn)
}
