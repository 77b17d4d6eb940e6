//! The workload of count_bench, one of DLMDB's C benchmark programs:
//! insert cost of counted vs uncounted prefix-compressed DBs (plain and DUPSORT), then
//! range counts and rank lookups through the counted API against the naive
//! cursor way. Same options, defaults, normalisation, bytes, insertion
//! orders, query stream (glibc `rand()` after `srand(1)`), environments,
//! build schedule (warm-ups, 6 alternating passes, the extra builds folded
//! into the averages), timed regions and printed lines.
//!
//! Answers are checked outside the timed regions: every counted range
//! count equals the naive count, every rank lookup returns the key of that
//! rank, and dup counts agree.

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Result};
use serde::Serialize;

use crate::extra::{k, with_read_txn_cursor, Eng, Env, GlibcRand, OursE, Txn};
use crate::measure::{at_next_stack_depth, us_per_op, Stamp};

#[derive(Clone, Debug, Serialize)]
pub struct CountOptions {
    pub entries: u64,
    pub queries: u64,
    pub span: u64,
    pub dups: u64,
    pub shuffle: bool,
    /// Where the `bench_tmp_*` / `benchdb_count*` directories go.
    pub root: PathBuf,
}

impl Default for CountOptions {
    fn default() -> Self {
        CountOptions {
            entries: 50_000,
            queries: 5000,
            span: 200,
            dups: 8,
            shuffle: false,
            root: PathBuf::from("."),
        }
    }
}

impl CountOptions {
    /// count_bench's normalisation of queries and span.
    pub fn normalized(&self) -> CountOptions {
        let mut o = self.clone();
        if o.entries == 0 {
            o.queries = 0;
            o.span = 0;
        } else if o.span >= o.entries {
            o.span = o.entries.saturating_sub(1);
        }
        o
    }
}

/// Every figure count_bench prints (milliseconds).
#[derive(Clone, Debug, Default, Serialize)]
pub struct CountRun {
    pub options: CountOptions,
    /// Per-build ms, in build order (7 each; the printed value is the mean).
    pub plain_builds: Vec<f64>,
    pub counted_builds: Vec<f64>,
    /// 7 plain dup builds; 6 counted dup builds are printed, the 7th
    /// (kept open for the dup range section) is in `counted_dup_kept`.
    pub plain_dup_builds: Vec<f64>,
    pub counted_dup_builds: Vec<f64>,
    pub counted_dup_kept: Option<f64>,
    pub naive_range_ms: f64,
    pub counted_range_ms: f64,
    pub rank: Option<RankFigures>,
    pub dup_range: Option<(f64, f64)>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct RankFigures {
    pub naive_samples: u64,
    pub naive_ms: f64,
    pub cursor_ms: f64,
    pub get_rank_ms: f64,
}

fn key(i: u64) -> String {
    format!("k{i:06}")
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// An env of one build, closed and removed on drop.
struct Built {
    env: Env,
    dbi: u32,
    dir: PathBuf,
}

impl Drop for Built {
    fn drop(&mut self) {
        OursE::env_close(self.env);
        crate::extra::remove_env_dir(&self.dir);
    }
}

/// One build: fresh env, one write txn of all puts; timed from just
/// before the first put to just after the commit, at a stack depth of
/// its own.
fn build(
    o: &CountOptions,
    dir: &Path,
    order: &[u64],
    dup: bool,
    counted: bool,
) -> Result<(Built, f64)> {
    at_next_stack_depth(|| build_timed(o, dir, order, dup, counted))
}

fn build_timed(
    o: &CountOptions,
    dir: &Path,
    order: &[u64],
    dup: bool,
    counted: bool,
) -> Result<(Built, f64)> {
    crate::extra::fresh_env_dir(dir)?;
    let map = if dup {
        o.entries * o.dups * 128
    } else {
        o.entries * 128
    };
    let env = OursE::env_open(
        dir,
        k::MDB_NOLOCK,
        4,
        if map == 0 { 128 } else { map as usize },
    )?;
    let mut b = Built {
        env,
        dbi: 0,
        dir: dir.to_path_buf(),
    };
    let mut flags = k::MDB_CREATE | k::MDB_PREFIX_COMPRESSION;
    if dup {
        flags |= k::MDB_DUPSORT;
    }
    if counted {
        flags |= k::MDB_COUNTED;
    }
    let mut t0 = None;
    crate::extra::in_write_txn::<OursE>(env, |t| {
        b.dbi = OursE::dbi_open(t, Some(if dup { "bench_dup" } else { "bench" }), flags)?;
        t0 = Some(Stamp::now());
        for &i in order {
            let kk = key(i);
            if dup {
                for d in 0..o.dups {
                    let v = format!("val{d:08}");
                    OursE::put(t, b.dbi, kk.as_bytes(), v.as_bytes(), 0)?;
                }
            } else {
                let v = format!("v{i:06}");
                OursE::put(t, b.dbi, kk.as_bytes(), v.as_bytes(), 0)?;
            }
        }
        Ok(())
    })?;
    let ms = t0.expect("set before the puts").elapsed().as_millis_f64();
    Ok((b, ms))
}

fn mval(b: &[u8]) -> dlmdb_sys::MDB_val {
    dlmdb_sys::MDB_val {
        mv_size: b.len() as _,
        mv_data: b.as_ptr() as *mut _,
    }
}

/// The key a by-rank lookup returns: `call` fills the key and data of
/// `rank` and returns the engine's status; `what` names it in the error.
#[inline(always)]
fn key_at_rank(
    what: &str,
    rank: u64,
    call: impl FnOnce(&mut dlmdb_sys::MDB_val, &mut dlmdb_sys::MDB_val) -> i32,
) -> Result<dlmdb_sys::MDB_val> {
    let mut kv = mval(&[]);
    let mut dv = mval(&[]);
    let rc = call(&mut kv, &mut dv);
    if rc != 0 {
        bail!("{what}({rank}) failed ({rc})");
    }
    Ok(kv)
}

fn in_range(kk: &[u8], low: &[u8], high: &[u8]) -> (bool, bool) {
    // memcmp over the shorter length, then length (the DB's own order).
    let ge_low = kk >= low;
    let gt_high = kk > high;
    (ge_low, gt_high)
}

struct Query {
    low: Vec<u8>,
    high: Vec<u8>,
    keys: u64,
    rank: u64,
}

fn queries(o: &CountOptions) -> Vec<Query> {
    let mut g = GlibcRand::new(1);
    (0..o.queries)
        .map(|_| {
            let start = g.next() as u64 % o.entries;
            let stop = (start + o.span).min(o.entries - 1);
            let rank = g.next() as u64 % o.entries;
            Query {
                low: key(start).into_bytes(),
                high: key(stop).into_bytes(),
                keys: stop - start + 1,
                rank,
            }
        })
        .collect()
}

/// Six alternating passes after a discarded warm-up of each kind.
fn passes(o: &CountOptions, root: &Path, order: &[u64], dup: bool) -> Result<(Vec<f64>, Vec<f64>)> {
    let (pd, cd) = if dup {
        ("bench_tmp_plain_dup", "bench_tmp_counted_dup")
    } else {
        ("bench_tmp_plain", "bench_tmp_counted")
    };
    let (pd, cd) = (root.join(pd), root.join(cd));
    build(o, &pd, order, dup, false)?;
    build(o, &cd, order, dup, true)?;
    let (mut plain, mut counted) = (Vec::new(), Vec::new());
    for pass in 0..6 {
        if pass % 2 == 0 {
            plain.push(build(o, &pd, order, dup, false)?.1);
            counted.push(build(o, &cd, order, dup, true)?.1);
        } else {
            counted.push(build(o, &cd, order, dup, true)?.1);
            plain.push(build(o, &pd, order, dup, false)?.1);
        }
    }
    Ok((plain, counted))
}

/// One answer per query from `count`, and the milliseconds the pass took
/// (at a stack depth of its own).
fn timed_counts(
    qs: &[Query],
    mut count: impl FnMut(&Query) -> Result<u64>,
) -> Result<(Vec<u64>, f64)> {
    let mut answers = Vec::with_capacity(qs.len());
    let ms = timed_ms(|| {
        for q in qs {
            answers.push(count(q)?);
        }
        Ok(())
    })?;
    Ok((answers, ms))
}

/// The milliseconds `body` takes, run at a stack depth of its own.
fn timed_ms(body: impl FnOnce() -> Result<()>) -> Result<f64> {
    at_next_stack_depth(|| {
        let t0 = Stamp::now();
        body()?;
        Ok(t0.elapsed().as_millis_f64())
    })
}

/// An engine range count (`mdb_count_range` or `mdb_range_count_values`,
/// named `what`) over `q`, both bounds included.
fn engine_count(
    what: &str,
    f: unsafe extern "C" fn(
        *mut dlmdb_sys::MDB_txn,
        dlmdb_sys::MDB_dbi,
        *const dlmdb_sys::MDB_val,
        *const dlmdb_sys::MDB_val,
        std::ffi::c_uint,
        *mut u64,
    ) -> std::ffi::c_int,
    t: Txn,
    dbi: u32,
    q: &Query,
) -> Result<u64> {
    let (lo, hi) = (mval(&q.low), mval(&q.high));
    let flags = k::MDB_COUNT_LOWER_INCL | k::MDB_COUNT_UPPER_INCL;
    let mut n = 0u64;
    // SAFETY: `t` is a live read txn of our engine; the bounds outlive the call.
    let rc = unsafe { f(t as *mut _, dbi, &lo, &hi, flags, &mut n) };
    if rc != 0 {
        bail!("{what} failed ({rc})");
    }
    Ok(n)
}

/// Run count_bench's schedule once. `tick` names the phase starting.
pub fn run_count(o: &CountOptions, tick: &mut dyn FnMut(&str)) -> Result<CountRun> {
    let o = o.normalized();
    let root = o.root.clone();
    let order: Vec<u64> = if o.shuffle {
        crate::extra::count_bench_order(o.entries as usize)
            .into_iter()
            .map(|i| i as u64)
            .collect()
    } else {
        (0..o.entries).collect()
    };
    let mut run = CountRun {
        options: o.clone(),
        ..Default::default()
    };
    tick("plain DB inserts");
    let (mut plain, mut counted) = passes(&o, &root, &order, false)?;
    let has_dups = o.entries > 0 && o.dups > 0;
    if has_dups {
        tick("dupsort inserts");
        let (mut pd, cd) = passes(&o, &root, &order, true)?;
        pd.push(build(&o, &root.join("bench_tmp_plain_dup"), &order, true, false)?.1);
        run.plain_dup_builds = pd;
        run.counted_dup_builds = cd;
    }
    plain.push(build(&o, &root.join("bench_tmp_plain"), &order, false, false)?.1);
    tick("queries");
    let (db, ms) = build(&o, &root.join("benchdb_count"), &order, false, true)?;
    counted.push(ms);
    run.plain_builds = plain;
    run.counted_builds = counted;

    let qs = queries(&o);
    with_read_txn_cursor::<OursE, _>(db.env, db.dbi, |t, cur| {
        // Naive range count: one cursor over all queries.
        let (naive, naive_ms) = timed_counts(&qs, |q| {
            let mut n = 0u64;
            let mut at = OursE::cursor_get(cur, &q.low, &[], k::MDB_SET_RANGE)?;
            while let Some((kk, _)) = at {
                let (ge, gt) = in_range(kk, &q.low, &q.high);
                if gt {
                    break;
                }
                if ge {
                    n += 1;
                }
                at = OursE::cursor_get(cur, &[], &[], k::MDB_NEXT)?;
            }
            Ok(n)
        })?;
        run.naive_range_ms = naive_ms;
        let (counted, counted_ms) = timed_counts(&qs, |q| {
            engine_count("mdb_count_range", dlmdb_sys::mdb_count_range, t, db.dbi, q)
        })?;
        run.counted_range_ms = counted_ms;
        for (i, q) in qs.iter().enumerate() {
            ensure!(
                naive[i] == q.keys && counted[i] == q.keys,
                "range count of query {i}: naive {}, counted {}, expected {}",
                naive[i],
                counted[i],
                q.keys
            );
        }
        if o.entries > 0 && o.queries > 0 {
            let rank_at = |rank: u64| {
                key_at_rank("mdb_cursor_get_rank", rank, |kv, dv| {
                    // SAFETY: live cursor of our engine.
                    unsafe { dlmdb_sys::mdb_cursor_get_rank(cur as *mut _, rank, kv, dv, 0) }
                })
            };
            let cursor_ms = timed_ms(|| {
                for q in &qs {
                    rank_at(q.rank)?;
                }
                Ok(())
            })?;
            let get_rank = |rank: u64| {
                key_at_rank("mdb_get_rank", rank, |kv, dv| {
                    // SAFETY: live read txn.
                    unsafe { dlmdb_sys::mdb_get_rank(t as *mut _, db.dbi, rank, kv, dv) }
                })
            };
            let get_rank_ms = timed_ms(|| {
                for q in &qs {
                    get_rank(q.rank)?;
                }
                Ok(())
            })?;
            // Untimed: every lookup returned the key of its rank (each key
            // is read before the next call may reuse its buffer).
            for q in &qs {
                for what in ["mdb_cursor_get_rank", "mdb_get_rank"] {
                    let kv = if what == "mdb_get_rank" {
                        get_rank(q.rank)?
                    } else {
                        rank_at(q.rank)?
                    };
                    // SAFETY: points at mv_size bytes valid until the next call.
                    let kk =
                        unsafe { std::slice::from_raw_parts(kv.mv_data as *const u8, kv.mv_size) };
                    ensure!(
                        kk == key(q.rank).as_bytes(),
                        "{what}({}) returned another key",
                        q.rank
                    );
                }
            }
            let samples = o.queries.min(128);
            let mut last = Vec::new();
            let naive_ms = timed_ms(|| {
                for q in &qs[..samples as usize] {
                    let mut at = OursE::cursor_get(cur, &[], &[], k::MDB_FIRST)?;
                    for _ in 0..q.rank {
                        at = OursE::cursor_get(cur, &[], &[], k::MDB_NEXT)?;
                    }
                    last.push(at.map(|(kk, _)| kk.len()));
                }
                Ok(())
            })?;
            ensure!(
                last.iter().all(|x| x.is_some()),
                "naive rank walk ran off the end"
            );
            run.rank = Some(RankFigures {
                naive_samples: samples,
                naive_ms,
                cursor_ms,
                get_rank_ms,
            });
        }
        Ok(())
    })?;
    drop(db);

    if has_dups {
        let (db, ms) = build(&o, &root.join("benchdb_count_dup"), &order, true, true)?;
        run.counted_dup_kept = Some(ms);
        if o.queries > 0 {
            tick("dupsort range counts");
            let r = with_read_txn_cursor::<OursE, _>(db.env, db.dbi, |t, cur| {
                let (naive, cursor_ms) = timed_counts(&qs, |q| {
                    let mut n = 0u64;
                    let mut at = OursE::cursor_get(cur, &q.low, &[], k::MDB_SET_RANGE)?;
                    while let Some((kk, _)) = at {
                        if kk > q.high.as_slice() {
                            break;
                        }
                        n += OursE::cursor_count(cur)?;
                        at = OursE::cursor_get(cur, &[], &[], k::MDB_NEXT_NODUP)?;
                    }
                    Ok(n)
                })?;
                let (counted, counted_ms) = timed_counts(&qs, |q| {
                    let f = dlmdb_sys::mdb_range_count_values;
                    engine_count("mdb_range_count_values", f, t, db.dbi, q)
                })?;
                for (i, q) in qs.iter().enumerate() {
                    let want = q.keys * o.dups;
                    ensure!(
                        naive[i] == want && counted[i] == want,
                        "dup range count of query {i}: cursor {}, counted {}, expected {want}",
                        naive[i],
                        counted[i]
                    );
                }
                Ok((cursor_ms, counted_ms))
            })?;
            run.dup_range = Some(r);
        }
        drop(db);
    }
    Ok(run)
}

fn insert_section(s: &mut String, title: &str, plain: f64, counted: f64, ops: u64) {
    let over = counted - plain;
    let pct = if plain != 0.0 {
        over / plain * 100.0
    } else {
        0.0
    };
    s.push_str(&format!("\n== {title} ==\n"));
    ms_line(s, "plain:  ", plain, ops);
    ms_line(s, "counted:", counted, ops);
    s.push_str(&format!("  overhead: {over:.2} ms ({pct:.2}%)\n"));
}

/// `  <label> <ms> ms (<us per op> us/op)`, as count_bench prints a timing.
fn ms_line(s: &mut String, label: &str, ms: f64, ops: u64) {
    s.push_str(&format!(
        "  {label} {ms:.2} ms ({:.2} us/op)\n",
        us_per_op(ms, ops)
    ));
}

fn speedup(s: &mut String, num: f64, den: f64) {
    if den == 0.0 {
        s.push_str("  speedup: N/A\n");
    } else {
        s.push_str(&format!("  speedup: {:.2}x\n", num / den));
    }
}

/// The lines count_bench prints.
pub fn render_count_text(r: &CountRun) -> String {
    let o = &r.options;
    let mut s = format!(
        "Benchmark with {} entries, {} queries, span {}\nInsert order: {}\n",
        o.entries,
        o.queries,
        o.span,
        if o.shuffle { "shuffled" } else { "monotonic" }
    );
    let (plain, counted) = (mean(&r.plain_builds), mean(&r.counted_builds));
    insert_section(&mut s, "Plain DB Inserts", plain, counted, o.entries);
    s.push_str("\n== Range Count (keys) ==\n");
    ms_line(&mut s, "naive cursor:", r.naive_range_ms, o.queries);
    ms_line(&mut s, "counted API: ", r.counted_range_ms, o.queries);
    speedup(&mut s, r.naive_range_ms, r.counted_range_ms);
    if let Some(k) = &r.rank {
        s.push_str("\n== Rank Lookup ==\n");
        if k.naive_samples == 0 {
            s.push_str("  naive (sampled 0): N/A\n");
        } else {
            let label = format!("naive (sampled {}):", k.naive_samples);
            ms_line(&mut s, &label, k.naive_ms, k.naive_samples);
        }
        ms_line(&mut s, "cursor API:       ", k.cursor_ms, o.queries);
        ms_line(&mut s, "mdb_get_rank:     ", k.get_rank_ms, o.queries);
        let cursor_us = us_per_op(k.cursor_ms, o.queries);
        let naive_us = us_per_op(k.naive_ms, k.naive_samples);
        speedup(&mut s, naive_us, cursor_us);
    }
    if o.entries > 0 && o.dups > 0 {
        insert_section(
            &mut s,
            "Dupsort Inserts",
            mean(&r.plain_dup_builds),
            mean(&r.counted_dup_builds),
            o.entries * o.dups,
        );
    }
    if let Some((cursor, counted)) = r.dup_range {
        s.push_str("\n== Dupsort Range Count ==\n");
        s.push_str(&format!("  dup/key: {}\n", o.dups));
        ms_line(&mut s, "cursor (mdb_cursor_count):", cursor, o.queries);
        ms_line(&mut s, "counted API:             ", counted, o.queries);
        speedup(&mut s, cursor, counted);
    }
    if !o.shuffle && counted - plain < 0.0 {
        s.push_str("Sequential inserts minimize overhead; use --shuffle to randomize load.\n");
    }
    s
}

/// Rows of one or more rounds (samples = every build / every round).
pub fn count_report(runs: &[CountRun]) -> Result<crate::report::Report> {
    use crate::report::{Report, Row, TargetKind};
    let first = runs.first().ok_or_else(|| anyhow::anyhow!("no run"))?;
    let o = &first.options;
    let mut rep = Report::of_rounds("count", runs.len(), o, false)?;
    let (per, scale) = rep.measure.per_us();
    let all = |f: &dyn Fn(&CountRun) -> Vec<f64>, ops: u64| -> Vec<f64> {
        runs.iter()
            .flat_map(f)
            .map(|ms| us_per_op(ms, ops) * scale)
            .collect()
    };
    let unit = format!("{per}/op");
    rep.rows.push(
        Row::measured(
            "insert/counted",
            &unit,
            true,
            all(&|r| r.counted_builds.clone(), o.entries),
        )
        .with_reference("uncounted", all(&|r| r.plain_builds.clone(), o.entries))
        .with_target(TargetKind::RatioAtMost, 1.02),
    );
    if o.entries > 0 && o.dups > 0 {
        rep.rows.push(
            Row::measured(
                "dup_insert/counted",
                &unit,
                true,
                all(&|r| r.counted_dup_builds.clone(), o.entries * o.dups),
            )
            .with_reference(
                "uncounted",
                all(&|r| r.plain_dup_builds.clone(), o.entries * o.dups),
            ),
        );
    }
    rep.rows.push(
        Row::measured(
            "range_count/counted",
            &unit,
            true,
            all(&|r| vec![r.counted_range_ms], o.queries),
        )
        .with_reference("naive cursor", all(&|r| vec![r.naive_range_ms], o.queries)),
    );
    if first.rank.is_some() {
        let rk = |f: fn(&RankFigures) -> f64| {
            move |r: &CountRun| r.rank.as_ref().map(f).into_iter().collect::<Vec<f64>>()
        };
        let naive = |r: &CountRun| {
            r.rank
                .as_ref()
                .map(|k| us_per_op(k.naive_ms, k.naive_samples) * scale)
                .into_iter()
                .collect::<Vec<f64>>()
        };
        let naive_s: Vec<f64> = runs.iter().flat_map(naive).collect();
        rep.rows.push(
            Row::measured(
                "rank/cursor_get_rank",
                &unit,
                true,
                all(&rk(|k| k.cursor_ms), o.queries),
            )
            .with_reference("naive walk", naive_s.clone()),
        );
        rep.rows.push(
            Row::measured(
                "rank/get_rank",
                &unit,
                true,
                all(&rk(|k| k.get_rank_ms), o.queries),
            )
            .with_reference("naive walk", naive_s),
        );
    }
    if first.dup_range.is_some() {
        let pick = |i: usize| {
            move |r: &CountRun| {
                r.dup_range
                    .map(|d| if i == 0 { d.0 } else { d.1 })
                    .into_iter()
                    .collect::<Vec<f64>>()
            }
        };
        rep.rows.push(
            Row::measured(
                "dup_range_count/counted",
                &unit,
                true,
                all(&pick(1), o.queries),
            )
            .with_reference("cursor count", all(&pick(0), o.queries)),
        );
    }
    Ok(rep)
}
