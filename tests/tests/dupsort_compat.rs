//! DUPSORT format compatibility with stock LMDB, both ways, over
//! seeded random workloads whose hot keys grow past the inline sub-page limit
//! into sub-databases, shrink back to a few duplicates, lose the key, and
//! regrow; with DUPFIXED (8- and 3-byte items), INTEGERDUP (+DUPFIXED,
//! +INTEGERKEY) and REVERSEDUP variants.
//!
//! (a) our engine writes with `MDB_FORMAT_LMDB` -> stock LMDB reads every DB
//!     identically (walks, counts, dup lists) and Debian's `mdb_dump -a`
//!     prints exactly the model rendering; stock then keeps writing and we
//!     read the result.
//! (b) stock LMDB writes -> our engine reads identically -> our engine
//!     modifies -> stock LMDB (and `mdb_dump -a`) read identically.
//! (c) Debian's `mdb_load` loads the model dump -> our engine reads it.
//! (d) our default format (version 2) round trip through our engine.
//! Page accounting on every store our engine wrote: every page is used once
//! (walk incl. sub-databases + free list), and each DUPSORT record's page
//! counters equal the outer tree's pages (version 1) or outer tree plus
//! sub-database pages (version 2, dlmdb-extensions.md "N.7 Observed").
//!
//! `stock_self_check_*` run the same generator, writer and verifier with
//! stock LMDB on both sides. (a) to (d) with our engine run again as on
//! machines with 16 KiB and 64 KiB pages (stores of 16 KiB and 32 KiB
//! pages). Seeds: `DLMDB_SEED=1,2` to replay.

use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use dlmdb_kit::dup::{fl, op, rc, rc_name, DupEngine};
use dlmdb_tests::dump::{render_bytevalue, DumpHeader};
use dlmdb_tests::multimap::MultiDb;
use dlmdb_tests::{have_tool, pages, raw, remove_lock, seeds, show, skip_note};

type Stock = dlmdb_kit::stock::Exec;
type Ours = dlmdb_kit::ours::Exec;

const MAP: usize = 64 << 20;
const MAXDBS: u32 = 16;

#[derive(Clone, Copy, Debug, PartialEq)]
enum VShape {
    Text,
    Fixed8,
    Fixed3,
    Int4,
    Int8,
}

struct Spec {
    name: &'static str,
    flags: u32,
    vals: VShape,
    int_keys: bool,
}

fn specs() -> Vec<Spec> {
    use VShape::*;
    let intdup = fl::DUPSORT | fl::DUPFIXED | fl::INTEGERDUP | fl::INTEGERKEY;
    [
        ("dups", fl::DUPSORT, Text, false),
        ("fixed8", fl::DUPSORT | fl::DUPFIXED, Fixed8, false),
        ("fx3", fl::DUPSORT | fl::DUPFIXED, Fixed3, false),
        ("intdup", intdup, Int4, true),
        ("intdup8", fl::DUPSORT | fl::INTEGERDUP, Int8, false),
        ("revdup", fl::DUPSORT | fl::REVERSEDUP, Text, false),
    ]
    .into_iter()
    .map(|(name, flags, vals, int_keys)| Spec {
        name,
        flags,
        vals,
        int_keys,
    })
    .collect()
}

/// One write at `key` of DB number `db`.
#[derive(Clone, Debug)]
struct WOp {
    db: usize,
    key: Vec<u8>,
    act: Act,
}

#[derive(Clone, Debug)]
enum Act {
    Put(Vec<u8>),
    /// Delete one value, or the whole key with `None`, expecting the
    /// model's return code `want`.
    Del {
        val: Option<Vec<u8>>,
        want: i32,
    },
}

struct WTxn {
    ops: Vec<WOp>,
    commit: bool,
}

fn key_for(s: &Spec, n: u32) -> Vec<u8> {
    if s.int_keys {
        (n * 7 + 1).to_ne_bytes().to_vec()
    } else {
        // odd and even lengths
        let mut k = format!("key{:04}", n).into_bytes();
        if n.is_multiple_of(3) {
            k.extend_from_slice(b"-x");
        }
        if n.is_multiple_of(5) {
            k.push(b'z');
        }
        k
    }
}

fn gen_val(rng: &mut ChaCha8Rng, s: &Spec, hot: bool) -> Vec<u8> {
    match s.vals {
        VShape::Text => {
            let n: u32 = rng.gen_range(0..5000);
            let mut v = format!("v{n:05}").into_bytes();
            let extra = match rng.gen_range(0..20) {
                0 => rng.gen_range(100..400),
                1 if !hot => 505,
                _ => rng.gen_range(0..30),
            };
            v.extend((0..extra).map(|_| rng.gen_range(b'a'..=b'z')));
            v
        }
        VShape::Fixed8 => (rng.gen_range(0..20_000u64) * 977).to_be_bytes().to_vec(),
        VShape::Fixed3 => {
            let x: u32 = rng.gen_range(0..1 << 24);
            x.to_be_bytes()[1..].to_vec()
        }
        VShape::Int4 => {
            let x: u32 = if rng.gen_bool(0.02) {
                u32::MAX - rng.gen_range(0..3)
            } else {
                rng.gen_range(0..100_000)
            };
            x.to_ne_bytes().to_vec()
        }
        VShape::Int8 => {
            let x: u64 = if rng.gen_bool(0.02) {
                1 << 32
            } else {
                rng.gen_range(0..1u64 << 40)
            };
            x.to_ne_bytes().to_vec()
        }
    }
}

/// Delete `key` (one value, or all with `None`) from the model, as an op
/// expecting the model's result.
fn model_del(m: &mut MultiDb, db: usize, key: Vec<u8>, val: Option<Vec<u8>>) -> WOp {
    let want = m.del(&key, val.as_deref());
    WOp {
        db,
        key,
        act: Act::Del { val, want },
    }
}

/// Add a new pair to the model, as a put op.
fn model_put(m: &mut MultiDb, db: usize, key: Vec<u8>, val: Vec<u8>) -> WOp {
    let (rc, _) = m.put(&key, &val, 0);
    assert_eq!(rc, 0);
    WOp {
        db,
        key,
        act: Act::Put(val),
    }
}

/// Generate `ntx` transactions continuing from `models` (updated in place to
/// the final committed state). Phases by transaction index: grow hot sets
/// past the sub-database limit, shrink them to a few dups, delete whole keys,
/// regrow.
fn generate(seed: u64, models: &mut [MultiDb], ntx: usize, ops: usize) -> Vec<WTxn> {
    generate_stats(seed, models, ntx, ops, &mut vec![0; specs().len()])
}

/// [`generate`], also recording the largest set size reached per DB.
fn generate_stats(
    seed: u64,
    models: &mut [MultiDb],
    ntx: usize,
    ops: usize,
    max: &mut [usize],
) -> Vec<WTxn> {
    let sp = specs();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for t in 0..ntx {
        let phase = t % 4; // 0 grow, 1 grow more, 2 shrink, 3 delete/regrow
        let commit = t == 0 || !rng.gen_bool(0.15);
        let saved: Vec<MultiDb> = models.to_vec();
        let mut txn = WTxn {
            ops: Vec::new(),
            commit,
        };
        for _ in 0..ops {
            let db = rng.gen_range(0..sp.len());
            let s = &sp[db];
            let m = &mut models[db];
            let hot = rng.gen_bool(0.6);
            let kn = if hot {
                rng.gen_range(0..3)
            } else {
                rng.gen_range(3..80)
            };
            let key = key_for(s, kn);
            let r = rng.gen_range(0..100);
            let del_share = match phase {
                0 | 1 => 10,
                2 => 75,
                _ => 35,
            };
            let burst = if hot && phase < 2 && rng.gen_bool(0.3) {
                rng.gen_range(10..60)
            } else if hot && phase == 2 && rng.gen_bool(0.3) {
                -rng.gen_range(10..80)
            } else {
                0
            };
            if burst > 0 {
                for _ in 0..burst {
                    let val = gen_val(&mut rng, s, hot);
                    txn.ops.push(model_put(m, db, key.clone(), val));
                }
                max[db] = max[db].max(m.set(&key).map_or(0, |s| s.dups.len()));
                continue;
            }
            if burst < 0 {
                if let Some(set) = m.set(&key) {
                    let vals = set.values();
                    for _ in 0..(-burst) as usize {
                        let v = vals[rng.gen_range(0..vals.len())].clone();
                        txn.ops.push(model_del(m, db, key.clone(), Some(v)));
                    }
                }
                continue;
            }
            if r < del_share {
                if let Some(set) = m.set(&key) {
                    if r < 3 || (phase == 3 && r < 8) {
                        // whole key
                        txn.ops.push(model_del(m, db, key, None));
                    } else {
                        let vals = set.values();
                        let v = vals[rng.gen_range(0..vals.len())].clone();
                        txn.ops.push(model_del(m, db, key, Some(v)));
                    }
                } else {
                    // absent pair: NOTFOUND
                    let v = gen_val(&mut rng, s, hot);
                    txn.ops.push(model_del(m, db, key, Some(v)));
                }
            } else {
                let val = gen_val(&mut rng, s, hot);
                txn.ops.push(model_put(m, db, key, val));
            }
        }
        if !commit {
            models.clone_from_slice(&saved);
        }
        out.push(txn);
    }
    out
}

fn new_models() -> Vec<MultiDb> {
    specs().iter().map(|s| MultiDb::new(s.flags)).collect()
}

fn open_dbs<E: DupEngine>(e: &mut E, create: bool) -> Vec<u32> {
    specs()
        .iter()
        .map(|s| {
            e.open_db(
                Some(s.name.as_bytes()),
                s.flags | if create { fl::CREATE } else { 0 },
            )
            .unwrap_or_else(|r| panic!("{}: open db {}: {}", E::NAME, s.name, rc_name(r)))
        })
        .collect()
}

fn write<E: DupEngine>(path: &Path, env_flags: u32, txns: &[WTxn], who: &str) {
    remove_lock(path);
    let mut e = E::open(path, env_flags | fl::NOSUBDIR, MAXDBS, MAP)
        .unwrap_or_else(|r| panic!("{who}: open: {}", rc_name(r)));
    assert_eq!(e.begin_rw(), 0);
    open_dbs(&mut e, true);
    assert_eq!(e.commit(), 0, "{who}: commit of DB creation");
    for (i, t) in txns.iter().enumerate() {
        assert_eq!(e.begin_rw(), 0);
        let dbis = open_dbs(&mut e, false);
        for (j, o) in t.ops.iter().enumerate() {
            let (dbi, key) = (dbis[o.db], &o.key);
            match &o.act {
                Act::Put(val) => {
                    let r = e.put(dbi, key, val, 0);
                    assert_eq!(
                        r.rc,
                        0,
                        "{who}: txn {i} op {j}: put {} {}: {}",
                        show(key),
                        show(val),
                        rc_name(r.rc)
                    );
                }
                Act::Del { val, want } => {
                    let r = e.del(dbi, key, val.as_deref());
                    assert_eq!(
                        r,
                        *want,
                        "{who}: txn {i} op {j}: del {} {:?}",
                        show(key),
                        val.as_deref().map(show)
                    );
                }
            }
        }
        if t.commit {
            assert_eq!(e.commit(), 0, "{who}: txn {i} commit");
        } else {
            e.abort();
        }
    }
}

/// Read everything back through engine `E` and compare with the models.
fn verify<E: DupEngine>(path: &Path, env_flags: u32, models: &[MultiDb], who: &str) {
    // Every store here was made in this process or by a tool it ran.
    assert_eq!(
        dlmdb_tests::meta_pages(path)[0].page_size(),
        pages::new_store_page_size(),
        "{who}: page size of the store"
    );
    remove_lock(path);
    let mut e = E::open(path, env_flags | fl::NOSUBDIR | fl::RDONLY, MAXDBS, 0)
        .unwrap_or_else(|r| panic!("{who}: open: {}", rc_name(r)));
    assert_eq!(e.begin_ro(), 0);
    let dbis = open_dbs(&mut e, false);
    for ((s, m), dbi) in specs().iter().zip(models).zip(dbis) {
        let w = format!("{who}: db {}", s.name);
        assert_eq!(e.db_flags(dbi).unwrap() & 0x7e, s.flags, "{w}: flags");
        let fwd = e
            .walk(dbi, true)
            .unwrap_or_else(|r| panic!("{w}: walk: {}", rc_name(r)));
        dlmdb_tests::assert_pairs_eq(&format!("{w}: forward walk"), &fwd, &m.pairs());
        let mut back = e.walk(dbi, false).unwrap();
        back.reverse();
        dlmdb_tests::assert_pairs_eq(&format!("{w}: backward walk"), &back, &m.pairs());
        assert_eq!(e.stat(dbi).unwrap().entries, m.entries(), "{w}: ms_entries");
        assert_eq!(e.cursor_open(0, dbi), 0);
        for set in m.sets() {
            let o = e.cget(0, op::SET_KEY, Some(&set.key), None);
            assert_eq!(
                (o.rc, o.data.as_deref()),
                (0, Some(set.first())),
                "{w}: SET_KEY {}",
                show(&set.key)
            );
            assert_eq!(
                e.ccount(0).n,
                Some(set.dups.len() as u64),
                "{w}: count {}",
                show(&set.key)
            );
            let l = e.clist(0);
            if set.dupdata {
                assert_eq!(
                    l.rc,
                    0,
                    "{w}: list_dup {}: {}",
                    show(&set.key),
                    rc_name(l.rc)
                );
                assert_eq!(
                    l.list,
                    Some(set.values()),
                    "{w}: list_dup {}",
                    show(&set.key)
                );
            } else {
                assert_eq!(
                    l.rc,
                    rc::NOTFOUND,
                    "{w}: list_dup on plain single value {}",
                    show(&set.key)
                );
            }
            let ld = e.cget(0, op::LAST_DUP, None, None);
            assert_eq!(
                ld.data.as_deref(),
                Some(set.last()),
                "{w}: LAST_DUP {}",
                show(&set.key)
            );
        }
        e.cursor_close(0);
    }
    e.abort();
}

/// The exact `mdb_dump -a` text for the models (DBs in name order).
fn expected_dump(models: &[MultiDb], pagesize: u32) -> String {
    let sp = specs();
    let mut idx: Vec<usize> = (0..sp.len()).collect();
    idx.sort_by_key(|&i| sp[i].name);
    let mut out = String::new();
    for i in idx {
        let h = DumpHeader {
            name: Some(sp[i].name.as_bytes()),
            mapsize: MAP as u64,
            maxreaders: 126,
            flags: sp[i].flags,
            pagesize,
        };
        let pairs = models[i].pairs();
        out.push_str(&render_bytevalue(
            &h,
            pairs.iter().map(|(k, v)| (k.as_slice(), v.as_slice())),
        ));
    }
    out
}

fn check_mdb_dump(path: &Path, models: &[MultiDb], what: &str) {
    let pagesize = dlmdb_tests::meta_pages(path)[0].page_size();
    dlmdb_tests::stock_dump_matches(path, &expected_dump(models, pagesize), what);
}

fn meta_version(path: &Path) -> u32 {
    dlmdb_tests::meta_pages(path)[0].version
}

/// Page accounting on a store our engine wrote (see module doc).
fn check_accounting(path: &Path, env_flags: u32, what: &str) {
    remove_lock(path);
    let version = meta_version(path);
    let env =
        raw::Env::open(path, env_flags | fl::NOSUBDIR | fl::RDONLY, MAXDBS, 0).expect("raw open");
    raw::check_accounting(&env).unwrap_or_else(|e| panic!("{what}: page accounting: {e}"));
    let txn = env.begin_ro().unwrap();
    for s in specs() {
        let dbi = txn.open_db(Some(s.name.as_bytes()), 0).unwrap();
        let infos = raw::walk_pages(&txn, dbi)
            .unwrap_or_else(|e| panic!("{what}: page_walk {}: {e}", s.name));
        let (mut outer, mut all) = ([0u64; 3], [0u64; 3]);
        for i in &infos {
            if i.pi_pages == 0 {
                continue; // inline sub-page
            }
            let slot = if i.pi_type & dlmdb_sys::MDB_PAGE_OVERFLOW != 0 {
                2
            } else if i.pi_type & dlmdb_sys::MDB_PAGE_BRANCH != 0 {
                0
            } else {
                1 // leaf or LEAF2
            };
            let n = if slot == 2 { i.pi_pages as u64 } else { 1 };
            all[slot] += n;
            if i.pi_subtree == 0 {
                outer[slot] += n;
            }
        }
        let st = txn.stat(dbi).unwrap();
        let rec = [st.branch_pages, st.leaf_pages, st.overflow_pages];
        let want = if version >= 2 { all } else { outer };
        assert_eq!(
            rec, want,
            "{what}: db {} (data version {version}): record branch/leaf/overflow vs page walk \
             (outer tree {outer:?}, with sub-databases {all:?})",
            s.name
        );
    }
}

fn load_with_mdb_load(path: &Path, models: &[MultiDb]) {
    dlmdb_tests::stock_load_dump(path, &expected_dump(models, pages::new_store_page_size()));
}

/// Models of a loaded dump: every key's F_DUPDATA state follows from its
/// count (mdb_load puts items one by one).
fn reload_models(models: &[MultiDb]) -> Vec<MultiDb> {
    models
        .iter()
        .map(|m| MultiDb::from_pairs(m.flags, &m.pairs()))
        .collect()
}

const TXNS: usize = 12;
const OPS: usize = 400;

/// (a) writer `W` with `wflags` -> reader `R`; `mdb_dump`; then `R2` keeps
/// writing and `W` reads.
fn scenario_a<W: DupEngine, R: DupEngine>(seed: u64, wflags: u32, ours_wrote: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.mdb");
    // Each step names the seed, the engine and what it does.
    let who = |engine: &str, what: &str| format!("seed {seed} {engine} {what}");
    let mut models = new_models();
    let txns = generate(seed, &mut models, TXNS, OPS);
    write::<W>(&path, wflags, &txns, &who(W::NAME, "writing"));
    assert_eq!(
        meta_version(&path),
        1,
        "a FORMAT_LMDB store has data version 1"
    );
    verify::<W>(&path, 0, &models, &who(W::NAME, "re-reading"));
    verify::<R>(&path, 0, &models, &who(R::NAME, "reading"));
    check_mdb_dump(&path, &models, &format!("seed {seed}"));
    if ours_wrote {
        check_accounting(&path, 0, &format!("seed {seed} after our writes"));
    }
    let more = generate(seed ^ 0x5555, &mut models, 4, OPS);
    write::<R>(&path, 0, &more, &who(R::NAME, "continuing"));
    verify::<W>(&path, 0, &models, &who(W::NAME, "reading the continuation"));
}

/// (b) stock writes -> `E` reads -> `E` modifies -> stock and `mdb_dump` read.
fn scenario_b<E: DupEngine>(seed: u64, ours: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.mdb");
    // Each step names the seed, the engine and what it does.
    let who = |engine: &str, what: &str| format!("seed {seed} {engine} {what}");
    let mut models = new_models();
    let txns = generate(seed, &mut models, TXNS, OPS);
    write::<Stock>(&path, 0, &txns, &who("stock", "writing"));
    verify::<E>(&path, 0, &models, &who(E::NAME, "reading the stock store"));
    let more = generate(seed ^ 0xaaaa, &mut models, TXNS, OPS);
    write::<E>(&path, 0, &more, &who(E::NAME, "modifying the stock store"));
    assert_eq!(
        meta_version(&path),
        1,
        "modifying a stock store keeps data version 1"
    );
    let after = format!("reading after {}", E::NAME);
    verify::<Stock>(&path, 0, &models, &who("stock", &after));
    verify::<E>(&path, 0, &models, &who(E::NAME, "re-reading"));
    check_mdb_dump(
        &path,
        &models,
        &format!("seed {seed} after {} modified", E::NAME),
    );
    if ours {
        check_accounting(&path, 0, &format!("seed {seed} stock store modified by us"));
    }
}

/// (c) mdb_load -> `E` reads.
fn scenario_c<E: DupEngine>(seed: u64) {
    if !have_tool("mdb_load") {
        skip_note("mdb_load (Debian lmdb-utils) not installed: load test not run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.mdb");
    let mut models = new_models();
    generate(seed, &mut models, TXNS, OPS);
    load_with_mdb_load(&path, &models);
    let m2 = reload_models(&models);
    verify::<E>(
        &path,
        0,
        &m2,
        &format!("seed {seed} {} reading an mdb_load store", E::NAME),
    );
}

fn fixed() -> Vec<u64> {
    seeds(&[1, 0xd0_5e7])
}

/// One test per scenario, each run for every fixed seed (and `DLMDB_SEED`).
macro_rules! seeded_tests {
    ($($name:ident: |$seed:ident| $run:expr;)+) => {
        $(
            #[test]
            fn $name() {
                for $seed in fixed() {
                    eprintln!("seed {}", $seed);
                    $run;
                }
            }
        )+
    };
}

seeded_tests! {
    stock_self_check_a_stock_writes_stock_reads: |seed| scenario_a::<Stock, Stock>(seed, 0, false);
    stock_self_check_b: |seed| scenario_b::<Stock>(seed, false);
    stock_self_check_c_mdb_load: |seed| scenario_c::<Stock>(seed);
    ours_a_format_lmdb_read_by_stock: |seed| scenario_a::<Ours, Stock>(seed, fl::FORMAT_LMDB, true);
    ours_b_stock_written_read_and_modified_by_ours: |seed| scenario_b::<Ours>(seed, true);
    ours_c_mdb_load_read_by_ours: |seed| scenario_c::<Ours>(seed);
}

// ----- stock self-checks: validate generator, models and verifier -----

/// The workloads really cross the inline -> sub-database boundary: the hot
/// sets reach sizes far above what fits a sub-page in a 4 KiB page (about
/// 250 8-byte items, fewer longer ones); the shrink phases then cut them
/// down and delete whole keys.
#[test]
fn stock_self_check_workload_reaches_subdatabases() {
    let mut models = new_models();
    let mut max = vec![0usize; specs().len()];
    generate_stats(1, &mut models, TXNS, OPS, &mut max);
    for (i, s) in specs().iter().enumerate() {
        eprintln!("{}: largest set {} dups", s.name, max[i]);
    }
    // 8-byte DUPFIXED items: a 4 KiB page's inline limit is far below 300
    for (db, name, least) in [
        (1, "fixed8", 300),
        (3, "intdup", 300),
        (0, "dups", 100),
        (5, "revdup", 100),
    ] {
        assert!(
            max[db] >= least,
            "{name} hot sets must outgrow a sub-page (got {})",
            max[db]
        );
    }
}

// ----- our engine -----

/// (d) our default format: version 2, DLMDB layout, counters including
/// sub-databases.
#[test]
fn ours_d_default_v2_round_trip() {
    for seed in fixed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.mdb");
        let mut models = new_models();
        let txns = generate(seed, &mut models, TXNS, OPS);
        write::<Ours>(&path, 0, &txns, &format!("seed {seed} ours v2 writing"));
        assert_eq!(
            meta_version(&path),
            2,
            "a new default store has data version 2"
        );
        verify::<Ours>(&path, 0, &models, &format!("seed {seed} ours v2 reading"));
        check_accounting(&path, 0, &format!("seed {seed} v2 store"));
    }
}

/// (a) to (d) with our engine as on machines with 16 KiB and 64 KiB pages.
#[test]
fn ours_as_on_machines_with_bigger_pages() {
    pages::rerun_as_on_other_machines(&[
        "ours_a_format_lmdb_read_by_stock",
        "ours_b_stock_written_read_and_modified_by_ours",
        "ours_c_mdb_load_read_by_ours",
        "ours_d_default_v2_round_trip",
    ]);
}
