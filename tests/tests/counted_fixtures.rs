//! The COUNTED fixtures written by the real DLMDB
//! (`counted.mdb` version 1, `v2/counted.mdb` version 2, and the counted DBs
//! of `prefix.mdb` when prefix compression is supported) answer exactly what
//! `counted.expect.json` recorded from the real API: totals, entries at the
//! listed ranks, the cursor rank stride, key ranks, the range counts under
//! each flag combination and the dup sets. Stores written by our engine with
//! `MDB_COUNTED` from the fixture's dump must give the same answers.
//!
//! The counted trees also read back through ordinary cursor walks exactly as
//! the recorded dumps say, and the fixtures pass the file-parsing structural
//! checker (every branch count equals its child's subtree total).
//!
//! Run: `cargo test -p dlmdb-tests --release --test counted_fixtures`

use dlmdb_sys as ffi;
use dlmdb_tests::counted::{self, CountModel, Cursor, RangeFn, COUNTED};
use dlmdb_tests::dump::{parse_dump, DumpDb};
use dlmdb_tests::raw::{Env, Txn};
use dlmdb_tests::stat::TreeStat;
use dlmdb_tests::{copy_fixture, fixture_text, show, Pairs};
use serde_json::Value;

/// One counted fixture: data file, expectations, dump, version-1 flag.
struct Fx {
    mdb: &'static str,
    expect: &'static str,
    dump: &'static str,
    v1: bool,
}

const fn fx(mdb: &'static str, expect: &'static str, dump: &'static str, v1: bool) -> Fx {
    Fx {
        mdb,
        expect,
        dump,
        v1,
    }
}

const COUNTED_V1: Fx = fx(
    "counted.mdb",
    "counted.expect.json",
    "counted.dump.txt",
    true,
);
const COUNTED_V2: Fx = fx(
    "v2/counted.mdb",
    "v2/counted.expect.json",
    "v2/counted.dump.txt",
    false,
);
// The v2 prefix dump is stored gzipped; its content equals the v1 dump.
const PREFIX_V1: Fx = fx("prefix.mdb", "prefix.expect.json", "prefix.dump.txt", true);
const PREFIX_V2: Fx = fx(
    "v2/prefix.mdb",
    "v2/prefix.expect.json",
    "prefix.dump.txt",
    false,
);

fn env_flags(v1: bool) -> u32 {
    ffi::MDB_NOSUBDIR | if v1 { ffi::MDB_FORMAT_DLMDB_V1 } else { 0 }
}

fn open_fixture(fx: &Fx) -> (tempfile::TempDir, std::path::PathBuf, Env) {
    let (dir, path) = copy_fixture(fx.mdb);
    let env = Env::open(&path, env_flags(fx.v1) | ffi::MDB_RDONLY, 16, 0).unwrap_or_else(|rc| {
        panic!(
            "{}: open failed: {rc} {}",
            fx.mdb,
            dlmdb_tests::raw::strerror(rc)
        )
    });
    (dir, path, env)
}

fn expect_json(fx: &Fx) -> Value {
    serde_json::from_str(&fixture_text(fx.expect)).expect("expect json")
}

fn dump_blocks(fx: &Fx) -> Vec<DumpDb> {
    parse_dump(&fixture_text(fx.dump)).expect("dump parses")
}

fn hex_field(v: &Value, name: &str) -> Option<Vec<u8>> {
    match v.get(name) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            Some(hex::decode(s).unwrap_or_else(|e| panic!("bad hex in {name}: {e}")))
        }
        Some(o) => panic!("{name}: unexpected {o}"),
    }
}

fn int(v: &Value, name: &str) -> i64 {
    v.get(name)
        .and_then(Value::as_i64)
        .unwrap_or_else(|| panic!("missing integer field {name} in {v}"))
}

fn u(v: &Value, name: &str) -> u64 {
    int(v, name) as u64
}

/// The recorded outcome: `Ok(x)` when rc is 0, else `Err(rc)`.
fn recorded<T>(v: &Value, ok: impl FnOnce() -> T) -> Result<T, i32> {
    match int(v, "rc") as i32 {
        0 => Ok(ok()),
        rc => Err(rc),
    }
}

fn fmt_res<T: std::fmt::Debug>(r: &Result<T, i32>) -> String {
    match r {
        Ok(v) => format!("Ok({v:?})"),
        Err(rc) => format!("Err({rc} {})", dlmdb_tests::raw::strerror(*rc)),
    }
}

fn fmt_pair(r: &Result<(Vec<u8>, Vec<u8>), i32>) -> String {
    match r {
        Ok((k, d)) => format!("Ok(key {}, data {})", show(k), show(d)),
        Err(rc) => format!("Err({rc} {})", dlmdb_tests::raw::strerror(*rc)),
    }
}

fn assert_pair(
    what: &str,
    got: Result<(Vec<u8>, Vec<u8>), i32>,
    want: Result<(Vec<u8>, Vec<u8>), i32>,
) {
    if got != want {
        panic!(
            "{what}: got {} but expected {}",
            fmt_pair(&got),
            fmt_pair(&want)
        );
    }
}

fn recorded_pair(v: &Value) -> Result<(Vec<u8>, Vec<u8>), i32> {
    recorded(v, || {
        (
            hex_field(v, "key_hex").unwrap_or_default(),
            hex_field(v, "data_hex").unwrap_or_default(),
        )
    })
}

/// Every check of `counted.expect.json` for one database. `fixture_file`:
/// the txn reads the DLMDB-written file itself (so `stat` numbers apply);
/// false for a store our engine wrote with the same content.
fn check_db_against_expect(txn: &Txn<'_>, name: &str, exp: &Value, fixture_file: bool, what: &str) {
    let what = format!("{what} DB {name}");
    let dbi = txn
        .open_db(Some(name.as_bytes()), 0)
        .unwrap_or_else(|rc| panic!("{what}: open: {rc}"));
    let flags = txn.db_flags(dbi).unwrap();
    assert_eq!(flags as u64, u(exp, "db_flags"), "{what}: stored DB flags");

    if fixture_file {
        assert_eq!(
            TreeStat::from(txn.stat(dbi).unwrap()),
            TreeStat::from_json(&exp["stat"]),
            "{what}: mdb_stat"
        );
    }

    // count_all
    let ca = &exp["count_all"];
    let want = recorded(ca, || u(ca, "value"));
    let got = counted::count_all(txn, dbi, 0);
    assert_eq!(got, want, "{what}: mdb_count_all");

    // get_rank (and the same rank on a fresh cursor)
    for g in exp["get_rank"].as_array().unwrap() {
        let r = u(g, "rank");
        let want = recorded_pair(g);
        assert_pair(
            &format!("{what}: mdb_get_rank({r})"),
            counted::get_rank(txn, dbi, r),
            want.clone(),
        );
        let fresh_rc = int(g, "fresh_cursor_get_rank_rc") as i32;
        let want_fresh = if fresh_rc == 0 {
            want.clone()
        } else {
            Err(fresh_rc)
        };
        let mut c = Cursor::open(txn, dbi).unwrap();
        assert_pair(
            &format!("{what}: fresh mdb_cursor_get_rank({r})"),
            c.get_rank(r, 0),
            want_fresh,
        );
    }

    // cursor_get_rank stride on one cursor, then GET_CURRENT and NEXT
    let st = &exp["cursor_get_rank_stride"];
    {
        let mut c = Cursor::open(txn, dbi).unwrap();
        for s in st["samples"].as_array().unwrap() {
            let r = u(s, "rank");
            assert_pair(
                &format!("{what}: stride cursor_get_rank({r})"),
                c.get_rank(r, 0),
                recorded_pair(s),
            );
        }
    }
    let pg = &st["position_then_get_current"];
    {
        let r = u(pg, "rank");
        let mut c = Cursor::open(txn, dbi).unwrap();
        let rc = match c.seek_rank(r) {
            Ok(()) => 0,
            Err(e) => e,
        };
        assert_eq!(
            rc as i64,
            int(pg, "rc"),
            "{what}: cursor_get_rank({r}) with NULL outputs"
        );
        let gc_rc = int(pg, "get_current_rc") as i32;
        let want = if gc_rc == 0 {
            Ok((
                hex_field(pg, "key_hex").unwrap_or_default(),
                hex_field(pg, "data_hex").unwrap_or_default(),
            ))
        } else {
            Err(gc_rc)
        };
        assert_pair(
            &format!("{what}: GET_CURRENT after cursor_get_rank({r})"),
            c.get(ffi::MDB_GET_CURRENT, None, None),
            want,
        );
        let tn = &st["then_next"];
        assert_pair(
            &format!("{what}: NEXT after cursor_get_rank({r})"),
            c.get(ffi::MDB_NEXT, None, None),
            recorded_pair(tn),
        );
    }

    // key ranks
    for kr in exp["key_rank"].as_array().unwrap() {
        let key = hex_field(kr, "key_hex").unwrap();
        let data = hex_field(kr, "data_hex");
        let want = recorded(kr, || u(kr, "rank"));
        let cursor_api = kr.get("api").and_then(Value::as_str) == Some("mdb_cursor_key_rank");
        let got = if cursor_api {
            Cursor::open(txn, dbi)
                .unwrap()
                .key_rank(&key, data.as_deref(), 0)
        } else {
            counted::get_key_rank(txn, dbi, &key, data.as_deref())
        };
        if got != want {
            panic!(
                "{what}: {} key {} data {}: got {} expected {}",
                if cursor_api {
                    "mdb_cursor_key_rank"
                } else {
                    "mdb_get_key_rank"
                },
                show(&key),
                data.as_deref().map_or("NULL".into(), show),
                fmt_res(&got),
                fmt_res(&want)
            );
        }
        // Both APIs must agree whatever the recording used.
        let other = if cursor_api {
            counted::get_key_rank(txn, dbi, &key, data.as_deref())
        } else {
            Cursor::open(txn, dbi)
                .unwrap()
                .key_rank(&key, data.as_deref(), 0)
        };
        assert_eq!(
            other,
            want,
            "{what}: the other key-rank API for key {}",
            show(&key)
        );
    }

    // range counts
    for q in range_queries(exp) {
        let (low, high) = (q.low.as_deref(), q.high.as_deref());
        let got = counted::range_count(txn, dbi, q.f, low, high, q.flags);
        if got != q.want {
            panic!(
                "{what}: {}({}, {}, flags {}) [{}]: got {} expected {}",
                q.f.name(),
                low.map_or("NULL".into(), show),
                high.map_or("NULL".into(), show),
                q.flags,
                q.note,
                fmt_res(&got),
                fmt_res(&q.want)
            );
        }
    }
}

/// One recorded query of a range function.
struct RangeQuery {
    f: RangeFn,
    low: Option<Vec<u8>>,
    high: Option<Vec<u8>>,
    flags: u32,
    want: Result<u64, i32>,
    note: String,
}

/// The recorded queries of all three range functions in `exp`.
fn range_queries(exp: &Value) -> Vec<RangeQuery> {
    let mut out = Vec::new();
    for (field, f) in [
        ("count_range", RangeFn::CountRange),
        ("range_count_keys", RangeFn::Keys),
        ("range_count_values", RangeFn::Values),
    ] {
        for rq in exp[field].as_array().unwrap() {
            out.push(RangeQuery {
                f,
                low: hex_field(rq, "low_hex"),
                high: hex_field(rq, "high_hex"),
                flags: u(rq, "flags") as u32,
                want: recorded(rq, || u(rq, "count")),
                note: rq["note"].as_str().unwrap_or("").to_string(),
            });
        }
    }
    out
}

/// `dup_sets`: `mdb_cursor_count` and `mdb_cursor_list_dup` per recorded key.
/// The version-1 library answered MDB_INCOMPATIBLE for sets held in a
/// sub-database, the newest one lists them (spec N.5); either answer is
/// accepted there, as long as a listing is complete and ordered.
fn check_dup_sets(txn: &Txn<'_>, name: &str, exp: &Value, what: &str) {
    let dbi = txn.open_db(Some(name.as_bytes()), 0).unwrap();
    for ds in exp["dup_sets"].as_array().unwrap() {
        let key = hex_field(ds, "key_hex").unwrap();
        let mut c = Cursor::open(txn, dbi).unwrap();
        c.get(ffi::MDB_SET_KEY, Some(&key), None)
            .unwrap_or_else(|rc| panic!("{what} {name}: SET_KEY {}: {rc}", show(&key)));
        let n = c.count().unwrap();
        assert_eq!(
            n,
            u(ds, "mdb_cursor_count"),
            "{what} {name}: mdb_cursor_count of {}",
            show(&key)
        );
        let ld = &ds["list_dup"];
        let got = c.list_dup();
        let rc = int(ld, "rc") as i32;
        match (&got, rc) {
            (Ok(vals), 0) => {
                assert_eq!(
                    vals.len() as u64,
                    u(ld, "count"),
                    "{what} {name}: list_dup count of {}",
                    show(&key)
                );
                assert_eq!(
                    Some(&vals[0]),
                    hex_field(ld, "first").as_ref(),
                    "{what} {name}: list_dup first"
                );
                assert_eq!(
                    vals.last(),
                    hex_field(ld, "last").as_ref(),
                    "{what} {name}: list_dup last"
                );
            }
            (Ok(vals), ffi::MDB_INCOMPATIBLE) => {
                assert_eq!(
                    vals.len() as u64,
                    n,
                    "{what} {name}: list_dup of a sub-DB set of {}",
                    show(&key)
                );
                assert!(
                    vals.windows(2).all(|w| w[0] < w[1]),
                    "{what} {name}: list_dup order"
                );
            }
            (Err(e), want) if *e == want => {}
            _ => panic!(
                "{what} {name}: list_dup of {}: got {} expected rc {rc}",
                show(&key),
                fmt_res(&got.map(|v| v.len()))
            ),
        }
    }
}

/// Check every rank of a DB against the dump content: get_rank(r) is the
/// r-th pair of the dump, and key_rank maps it back (with and without data).
fn check_every_rank(txn: &Txn<'_>, name: &str, flags: u32, pairs: &Pairs, what: &str) {
    let dbi = txn.open_db(Some(name.as_bytes()), 0).unwrap();
    let snap = CountModel::from_pairs(flags, pairs).snap(true);
    assert_eq!(
        snap.entries.len(),
        pairs.len(),
        "{what} {name}: dump has duplicate pairs?"
    );
    let mut cur = Cursor::open(txn, dbi).unwrap();
    for (r, (k, d)) in snap.entries.iter().enumerate() {
        let r = r as u64;
        assert_pair(
            &format!("{what} {name}: get_rank({r})"),
            counted::get_rank(txn, dbi, r),
            Ok((k.clone(), d.clone())),
        );
        assert_pair(
            &format!("{what} {name}: cursor_get_rank({r}) rising"),
            cur.get_rank(r, 0),
            Ok((k.clone(), d.clone())),
        );
        assert_eq!(
            counted::get_key_rank(txn, dbi, k, Some(d)),
            Ok(r),
            "{what} {name}: key_rank({}, data)",
            show(k)
        );
        assert_eq!(
            counted::get_key_rank(txn, dbi, k, None),
            snap.key_rank(k, None),
            "{what} {name}: key_rank({})",
            show(k)
        );
    }
    let n = snap.total();
    assert_eq!(
        counted::get_rank(txn, dbi, n),
        Err(ffi::MDB_NOTFOUND),
        "{what} {name}: rank = total"
    );
}

// ---------------------------------------------------------------------------
// Works today: reading counted trees through ordinary cursor walks
// ---------------------------------------------------------------------------

fn read_back_like_dump(fx: &Fx, only_dupsort: bool) {
    let (_d, path, env) = open_fixture(fx);
    let txn = env.begin_ro().unwrap();
    let mut checked = 0;
    for b in dump_blocks(fx) {
        if b.is_dupsort() != only_dupsort {
            continue;
        }
        let name = b.name.clone().expect("named DBs only");
        let dbi = txn
            .open_db(Some(&name), 0)
            .unwrap_or_else(|rc| panic!("{}: open {}: {rc}", fx.mdb, show(&name)));
        let st = txn.stat(dbi).unwrap();
        assert_eq!(
            st.entries,
            b.records.len() as u64,
            "{}: {} md_entries",
            fx.mdb,
            show(&name)
        );
        let fwd = txn
            .walk(dbi, true)
            .unwrap_or_else(|rc| panic!("{}: walk {}: {rc}", fx.mdb, show(&name)));
        dlmdb_tests::assert_pairs_eq(
            &format!("{} {} forward", fx.mdb, show(&name)),
            &fwd,
            &b.records,
        );
        let mut back = txn.walk(dbi, false).unwrap();
        back.reverse();
        dlmdb_tests::assert_pairs_eq(
            &format!("{} {} backward", fx.mdb, show(&name)),
            &back,
            &b.records,
        );
        checked += 1;
    }
    assert!(checked > 0);
    drop(txn);
    drop(env);
    let _ = path;
}

dlmdb_tests::call_tests! {
    counted_v1_plain_dbs_read_like_dump: read_back_like_dump(&COUNTED_V1, false);
    counted_v2_plain_dbs_read_like_dump: read_back_like_dump(&COUNTED_V2, false);
    counted_v1_dupsort_dbs_read_like_dump: read_back_like_dump(&COUNTED_V1, true);
    counted_v2_dupsort_dbs_read_like_dump: read_back_like_dump(&COUNTED_V2, true);
}

/// The file-parsing checker on the DLMDB-written fixtures: every count is
/// consistent (the README says the shipped fixtures were verified), counted
/// DBs have only counted branch pages, and the entry/key totals match the
/// recorded expectations. Needs no engine code at all.
fn structure_of(fx: &Fx) {
    let (_d, path) = copy_fixture(fx.mdb);
    let rep = counted::assert_structure(&path, fx.v1, fx.mdb);
    counted::check_page_counters(&rep).unwrap_or_else(|e| panic!("{}: {e}", fx.mdb));
    let exp = expect_json(fx);
    for (name, e) in exp["dbs"].as_object().unwrap() {
        let (_, rec, tr) = rep
            .db(name)
            .unwrap_or_else(|| panic!("{}: DB {name} not found by the checker", fx.mdb));
        assert_eq!(
            rec.flags as u64,
            u(e, "db_flags"),
            "{} {name}: flags",
            fx.mdb
        );
        assert_eq!(
            tr.entries,
            u(&e["count_all"], "naive_pairs"),
            "{} {name}: entries",
            fx.mdb
        );
        assert_eq!(
            tr.keys,
            u(&e["count_all"], "naive_distinct_keys"),
            "{} {name}: keys",
            fx.mdb
        );
        assert!(rec.flags as u32 & COUNTED != 0);
        assert!(
            tr.counts_checked > 0,
            "{} {name}: no counted branch node seen",
            fx.mdb
        );
        eprintln!("{} {name}: {tr:?}", fx.mdb);
    }
}

dlmdb_tests::call_tests! {
    counted_v1_structure: structure_of(&COUNTED_V1);
    counted_v2_structure: structure_of(&COUNTED_V2);
    /// The checker needs no prefix decoding (it only counts nodes), so the
    /// prefix fixtures' counted trees can be checked today as well.
    prefix_v1_structure: structure_of(&PREFIX_V1);
    prefix_v2_structure: structure_of(&PREFIX_V2);
}

/// The checker must notice a wrong count: flip one branch count in a copy.
#[test]
fn structure_checker_detects_a_wrong_count() {
    let (_d, path) = copy_fixture(COUNTED_V2.mdb);
    counted::assert_structure(&path, false, "pristine copy");
    let mut bytes = std::fs::read(&path).unwrap();
    let psize = 4096;
    // Find the first P_BRANCH|P_COUNTED page (flags 0x81 at offset 10) that
    // the newest snapshot uses: corrupt each candidate until the check fails.
    let mut detected = false;
    for pg in 2..bytes.len() / psize {
        let base = pg * psize;
        if u16::from_le_bytes([bytes[base + 10], bytes[base + 11]]) != 0x81 {
            continue;
        }
        let first_node = u16::from_le_bytes([bytes[base + 16], bytes[base + 17]]) as usize;
        let at = base + first_node + 8;
        let saved = bytes[at];
        bytes[at] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
        if let Err(e) = counted::check_file(&path, false) {
            assert!(
                e.contains("stored count"),
                "unexpected checker message: {e}"
            );
            detected = true;
            break;
        }
        bytes[at] = saved;
    }
    assert!(detected, "no corrupted count was detected");
}

// ---------------------------------------------------------------------------
// Needs the count/rank functions
// ---------------------------------------------------------------------------

fn expectations_of(fx: &Fx) {
    let (_d, _path, env) = open_fixture(fx);
    let txn = env.begin_ro().unwrap();
    let exp = expect_json(fx);
    for (name, e) in exp["dbs"].as_object().unwrap() {
        check_db_against_expect(&txn, name, e, true, fx.mdb);
    }
}

fn every_rank_of(fx: &Fx) {
    let (_d, _path, env) = open_fixture(fx);
    let txn = env.begin_ro().unwrap();
    for b in dump_blocks(fx) {
        let name = b.name_str();
        let dbi = txn.open_db(b.name.as_deref(), 0).unwrap();
        let flags = txn.db_flags(dbi).unwrap();
        if flags & COUNTED == 0 {
            continue;
        }
        check_every_rank(&txn, &name, flags, &b.records, fx.mdb);
    }
}

fn dup_sets_of(fx: &Fx) {
    let (_d, _path, env) = open_fixture(fx);
    let txn = env.begin_ro().unwrap();
    let exp = expect_json(fx);
    for (name, e) in exp["dbs"].as_object().unwrap() {
        check_dup_sets(&txn, name, e, fx.mdb);
    }
}

dlmdb_tests::call_tests! {
    counted_v1_expectations: expectations_of(&COUNTED_V1);
    counted_v2_expectations: expectations_of(&COUNTED_V2);
    counted_v1_every_rank: every_rank_of(&COUNTED_V1);
    counted_v2_every_rank: every_rank_of(&COUNTED_V2);
    counted_v1_dup_sets: dup_sets_of(&COUNTED_V1);
    counted_v2_dup_sets: dup_sets_of(&COUNTED_V2);
    prefix_v1_expectations: expectations_of(&PREFIX_V1);
    prefix_v2_expectations: expectations_of(&PREFIX_V2);
    prefix_v1_every_rank: every_rank_of(&PREFIX_V1);
    prefix_v1_dup_sets: dup_sets_of(&PREFIX_V1);
}

// ---------------------------------------------------------------------------
// Our engine writing the same content with MDB_COUNTED
// ---------------------------------------------------------------------------

/// Load the dump of `fx` into a fresh store (our engine; `env_extra` picks
/// the format) with each DB's recorded flags (COUNTED included; the dump
/// header does not carry it), in shuffled order over several transactions,
/// then run the fixture's checks on it.
fn our_store_from_dump(fx: &Fx, env_extra: u32, v1_padded: bool) {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let exp = expect_json(fx);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ours.mdb");
    let env = Env::open(&path, ffi::MDB_NOSUBDIR | env_extra, 16, 64 << 20).expect("create env");
    let blocks = dump_blocks(fx);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut wanted = Vec::new();
    for b in &blocks {
        let name = b.name_str();
        let Some(e) = exp["dbs"].get(&name) else {
            continue;
        };
        let flags = u(e, "db_flags") as u32;
        let mut recs = b.records.clone();
        recs.shuffle(&mut rng);
        for chunk in recs.chunks(700) {
            let txn = env.begin_rw().unwrap();
            let dbi = txn
                .open_db(Some(name.as_bytes()), flags | ffi::MDB_CREATE)
                .unwrap();
            for (k, d) in chunk {
                counted::put(&txn, dbi, k, d, 0)
                    .unwrap_or_else(|rc| panic!("put into {name}: {rc}"));
            }
            txn.commit().unwrap();
        }
        wanted.push((name, flags, b.records.clone()));
    }
    let what = format!("our store from {} (env flags {env_extra:#x})", fx.dump);
    let rep = counted::assert_structure(&path, v1_padded, &what);
    counted::check_page_counters(&rep).unwrap_or_else(|e| panic!("{what}: {e}"));
    let txn = env.begin_ro().unwrap();
    for (name, flags, recs) in &wanted {
        let dbi = txn.open_db(Some(name.as_bytes()), 0).unwrap();
        assert_eq!(txn.db_flags(dbi).unwrap(), *flags, "{what}: {name} flags");
        let got = txn.walk(dbi, true).unwrap();
        dlmdb_tests::assert_pairs_eq(&format!("{what} {name}"), &got, recs);
        check_db_against_expect(&txn, name, &exp["dbs"][name], false, &what);
        check_every_rank(&txn, name, *flags, recs, &what);
        check_dup_sets(&txn, name, &exp["dbs"][name], &what);
    }
}

dlmdb_tests::call_tests! {
    our_v2_counted_store_from_dump: our_store_from_dump(&COUNTED_V2, 0, false);
    our_dlmdb_v1_counted_store_from_dump:
        our_store_from_dump(&COUNTED_V1, ffi::MDB_FORMAT_DLMDB_V1, true);
    our_v2_prefix_counted_store_from_dump: our_store_from_dump(&PREFIX_V1, 0, false);
}

/// A store created with `MDB_FORMAT_LMDB` (stock layout) cannot hold counted
/// DBs: stock LMDB would misread P_COUNTED branch pages, so the engine must
/// refuse the flag there rather than write an unreadable file.
#[test]
fn stock_format_store_refuses_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stock.mdb");
    let env = Env::open(&path, ffi::MDB_NOSUBDIR | ffi::MDB_FORMAT_LMDB, 4, 1 << 20).unwrap();
    let txn = env.begin_rw().unwrap();
    let r = txn.open_db(Some(b"c"), COUNTED | ffi::MDB_CREATE);
    assert!(r.is_err(), "MDB_COUNTED accepted on a stock-format store");
}

// ---------------------------------------------------------------------------
// The model itself against the real DLMDB's recorded answers (no engine)
// ---------------------------------------------------------------------------

/// `CountSnap` (the oracle of the model test) built from the dump must give
/// every answer the real DLMDB recorded: this pins the model's reading of
/// the spec (inclusive/exclusive arithmetic, key rank with data, the
/// MDB_INCOMPATIBLE cases) to the reference behaviour.
fn model_agrees_with(fx: &Fx) {
    let exp = expect_json(fx);
    let blocks = dump_blocks(fx);
    for (name, e) in exp["dbs"].as_object().unwrap() {
        let what = format!("model of {} {name}", fx.mdb);
        let b = blocks
            .iter()
            .find(|b| b.name_str() == *name)
            .unwrap_or_else(|| panic!("{what}: not in dump"));
        let flags = u(e, "db_flags") as u32;
        let snap = CountModel::from_pairs(flags, &b.records).snap(true);
        assert_eq!(snap.entries.len(), b.records.len(), "{what}: dump pairs");
        assert_eq!(
            snap.entries, b.records,
            "{what}: model order differs from dump order"
        );
        let ca = &e["count_all"];
        assert_eq!(
            snap.count_all(0),
            recorded(ca, || u(ca, "value")),
            "{what}: count_all"
        );
        assert_eq!(snap.keys(), u(ca, "naive_distinct_keys"), "{what}: keys");
        let st = &e["cursor_get_rank_stride"];
        for (label, recs) in [("rank", &e["get_rank"]), ("stride rank", &st["samples"])] {
            for g in recs.as_array().unwrap() {
                let r = u(g, "rank");
                assert_pair(
                    &format!("{what}: {label} {r}"),
                    snap.rank(r).cloned(),
                    recorded_pair(g),
                );
            }
        }
        let r = u(&st["position_then_get_current"], "rank");
        assert_pair(
            &format!("{what}: next after {r}"),
            snap.rank(r + 1).cloned(),
            recorded_pair(&st["then_next"]),
        );
        for kr in e["key_rank"].as_array().unwrap() {
            let key = hex_field(kr, "key_hex").unwrap();
            let data = hex_field(kr, "data_hex");
            assert_eq!(
                snap.key_rank(&key, data.as_deref()),
                recorded(kr, || u(kr, "rank")),
                "{what}: key_rank {}",
                show(&key)
            );
        }
        for q in range_queries(e) {
            assert_eq!(
                snap.range_fn(q.f, q.low.as_deref(), q.high.as_deref(), q.flags),
                q.want,
                "{what}: {} [{}] flags {}",
                q.f.name(),
                q.note,
                q.flags
            );
        }
    }
}

dlmdb_tests::call_tests! {
    model_agrees_with_counted_v1_answers: model_agrees_with(&COUNTED_V1);
    model_agrees_with_counted_v2_answers: model_agrees_with(&COUNTED_V2);
}

#[test]
fn model_agrees_with_prefix_answers() {
    model_agrees_with(&PREFIX_V1);
    model_agrees_with(&PREFIX_V2);
}

/// The checker on non-counted fixtures (DLMDB v1/v2 and stock layout):
/// no P_COUNTED page anywhere, and md_entries/depth consistent.
#[test]
fn structure_of_uncounted_fixtures() {
    for (file, v1_padded) in [
        ("plain.mdb", true),
        ("dupsort.mdb", true),
        ("main_only.mdb", true),
        ("v2/plain.mdb", false),
        ("v2/dupsort.mdb", false),
        ("stock.mdb", false),
        ("plain.stock.mdb", false),
        ("dupsort.stock.mdb", false),
    ] {
        let (_d, path) = copy_fixture(file);
        let rep = counted::assert_structure(&path, v1_padded, file);
        counted::check_page_counters(&rep).unwrap_or_else(|e| panic!("{file}: {e}"));
        for (name, rec, tr) in &rep.dbs {
            assert_eq!(tr.counted_branch_pages, 0, "{file} {}", show(name));
            assert_eq!(tr.entries, rec.entries, "{file} {}", show(name));
        }
    }
}

dlmdb_tests::call_tests! {
    prefix_v2_every_rank: every_rank_of(&PREFIX_V2);
    prefix_v2_dup_sets: dup_sets_of(&PREFIX_V2);
}
