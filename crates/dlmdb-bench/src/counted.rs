//! Order-statistics suite: DLMDB's count_bench workload
//! (dlmdb-extensions.md §5.1) on our engine, every API compared with the
//! naive cursor way of getting the same answer. Stock LMDB has no counted
//! DBs, so all rows here are "self" rows (ours vs ours).
//!
//! Workload (full): 100,000 entries, 200 queries, span 10,000, 20 dups per
//! key, shuffled insert order (FY over XS64), keys `k%06zu`, values
//! `v%06zu` / `val%08zu`, queries from glibc `rand()` after `srand(1)`.
//! Envs use `MDB_NOLOCK`, DBs `MDB_PREFIX_COMPRESSION` (+`MDB_COUNTED`), one
//! write txn per build, the commit timed. Deviations from count_bench: the
//! map size is a fixed 1 GiB (it only bounds growth), the number of insert
//! passes is `2 x rounds` per variant (medians, not means), and read rows
//! alternate the two methods over `rounds` samples.
//!
//! Every counted answer is compared with the scan's answer (and with the
//! known value from the key arithmetic); rank results must be the key of that
//! rank. A mismatch turns the row into an error.

use std::path::Path;
use std::ptr;

use anyhow::{bail, ensure, Result};

use crate::extra::{
    self, k, Eng, EnvGuard, OursE, Pair, SuiteOptions, SuiteReport, SuiteRow, Target,
};

struct Cfg {
    entries: usize,
    queries: usize,
    span: usize,
    dups: usize,
}

struct Query {
    low: Vec<u8>,
    high: Vec<u8>,
    /// Keys in [low, high].
    keys: u64,
    rank: u64,
}

fn key(i: usize) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

fn queries(c: &Cfg) -> Vec<Query> {
    let mut g = extra::GlibcRand::new(1);
    (0..c.queries)
        .map(|_| {
            let start = g.next() as usize % c.entries;
            let stop = (start + c.span).min(c.entries - 1);
            let rank = (g.next() as usize % c.entries) as u64;
            Query {
                low: key(start),
                high: key(stop),
                keys: (stop - start + 1) as u64,
                rank,
            }
        })
        .collect()
}

const MAP: usize = 1 << 30;

/// One count_bench build: fresh env, one write txn, all puts + commit timed.
/// Returns the open env (for the query phases) and the timed ns.
fn build(
    root: &Path,
    tag: &str,
    c: &Cfg,
    order: &[usize],
    dup: bool,
    counted: bool,
) -> Result<(EnvGuard<OursE>, u32, u128)> {
    let g = EnvGuard::<OursE>::open(&root.join(tag), k::MDB_NOLOCK, 4, MAP)?;
    let t = OursE::txn_begin(g.env, ptr::null_mut(), 0)?;
    let mut flags = k::MDB_CREATE | k::MDB_PREFIX_COMPRESSION;
    if dup {
        flags |= k::MDB_DUPSORT;
    }
    if counted {
        flags |= k::MDB_COUNTED;
    }
    let name = if dup { "bench_dup" } else { "bench" };
    let dbi = match OursE::dbi_open(t, Some(name), flags) {
        Ok(d) => d,
        Err(e) => {
            OursE::txn_abort(t);
            return Err(e);
        }
    };
    // Pre-format the bytes so the timed loop is puts only.
    let keys: Vec<Vec<u8>> = order.iter().map(|&i| key(i)).collect();
    let dvals: Vec<Vec<u8>> = (0..c.dups)
        .map(|d| format!("val{d:08}").into_bytes())
        .collect();
    let t0 = std::time::Instant::now();
    let r = (|| -> Result<()> {
        for (n, kk) in keys.iter().enumerate() {
            if dup {
                for v in &dvals {
                    OursE::put(t, dbi, kk, v, 0)?;
                }
            } else {
                let v = format!("v{:06}", order[n]);
                OursE::put(t, dbi, kk, v.as_bytes(), 0)?;
            }
        }
        Ok(())
    })();
    if let Err(e) = r {
        OursE::txn_abort(t);
        return Err(e);
    }
    OursE::txn_commit(t)?;
    let ns = t0.elapsed().as_nanos();
    Ok((g, dbi, ns))
}

fn check_total(env: extra::Env, dbi: u32, want: u64, counted: bool) -> Result<()> {
    let t = OursE::txn_begin(env, ptr::null_mut(), k::MDB_RDONLY)?;
    let n = OursE::entries(t, dbi);
    let mut all = want;
    // SAFETY: live read txn on our engine. (Uncounted DBs refuse count_all.)
    let rc = if counted {
        unsafe { dlmdb_sys::mdb_count_all(t as *mut _, dbi, 0, &mut all) }
    } else {
        0
    };
    OursE::txn_abort(t);
    let n = n?;
    ensure!(n == want, "ms_entries {n}, expected {want}");
    ensure!(
        rc == 0 && all == want,
        "mdb_count_all rc {rc} = {all}, expected {want}"
    );
    Ok(())
}

/// Insert-cost row: `2 x rounds` alternating plain/counted builds.
fn insert_row(root: &Path, opts: &SuiteOptions, c: &Cfg, order: &[usize], dup: bool) -> SuiteRow {
    let ops = if dup {
        (c.entries * c.dups) as u64
    } else {
        c.entries as u64
    };
    let name = if dup {
        "dup_insert counted vs plain"
    } else {
        "insert counted vs plain"
    };
    let mut p = Pair::new(
        name,
        "self",
        "counted",
        "plain",
        if dup { "value" } else { "entry" },
    );
    // Warm-ups (discarded), as count_bench does.
    for counted in [false, true] {
        if let Err(e) = build(root, "warm", c, order, dup, counted) {
            p.fail(e);
        }
    }
    let mut seq = 0;
    for r in 0..2 * opts.rounds {
        for turn in 0..2 {
            seq += 1;
            let counted = (turn == 0) == (r % 2 == 1);
            let res = build(root, &format!("ins{seq}"), c, order, dup, counted).and_then(
                |(g, dbi, ns)| {
                    if r == 0 {
                        check_total(g.env, dbi, ops, counted)?;
                    }
                    Ok(ns)
                },
            );
            p.add(counted, res, ops);
        }
    }
    let mut row = p.finish(Target::RatioAtMost(1.03));
    if let Some(x) = row.ratio {
        row.note = Some(format!(
            "counted overhead {:+.2}% (target <= 3%)",
            (x - 1.0) * 100.0
        ));
    }
    row
}

/// Run a pair of read methods over `rounds` alternating samples, each
/// returning (ns, answers); the answers must agree.
fn compare(
    p: &mut Pair,
    rounds: usize,
    ops: u64,
    mut a: impl FnMut() -> Result<(u128, Vec<u64>)>,
    mut b: impl FnMut() -> Result<(u128, Vec<u64>)>,
) {
    let mut ans: [Option<Vec<u64>>; 2] = [None, None];
    for r in 0..rounds {
        for turn in 0..2 {
            let side_a = (turn == 0) == (r % 2 == 0);
            let res = if side_a { a() } else { b() };
            let res = res.map(|(ns, v)| {
                ans[side_a as usize] = Some(v);
                ns
            });
            p.add(side_a, res, ops);
        }
    }
    if let [Some(x), Some(y)] = &ans {
        if x != y {
            let i = x.iter().zip(y).position(|(p, q)| p != q).unwrap_or(0);
            p.fail(anyhow::anyhow!(
                "answers differ at query {i}: {} {:?} vs {} {:?}",
                p.b_label,
                x.get(i),
                p.a_label,
                y.get(i)
            ));
        }
    }
}

fn with_txn<T>(
    env: extra::Env,
    dbi: u32,
    f: impl FnOnce(extra::Txn, extra::Cur) -> Result<T>,
) -> Result<(u128, T)> {
    let t0 = std::time::Instant::now();
    let t = OursE::txn_begin(env, ptr::null_mut(), k::MDB_RDONLY)?;
    let c = match OursE::cursor_open(t, dbi) {
        Ok(c) => c,
        Err(e) => {
            OursE::txn_abort(t);
            return Err(e);
        }
    };
    let r = f(t, c);
    OursE::cursor_close(c);
    OursE::txn_abort(t);
    let ns = t0.elapsed().as_nanos();
    Ok((ns, r?))
}

fn mval(b: &[u8]) -> dlmdb_sys::MDB_val {
    dlmdb_sys::MDB_val {
        mv_size: b.len() as _,
        mv_data: b.as_ptr() as *mut _,
    }
}

fn naive_range(env: extra::Env, dbi: u32, qs: &[Query]) -> Result<(u128, Vec<u64>)> {
    with_txn(env, dbi, |_, c| {
        let mut out = Vec::with_capacity(qs.len());
        for q in qs {
            let mut n = 0;
            let mut cur = OursE::cursor_get(c, &q.low, &[], k::MDB_SET_RANGE)?;
            while let Some((kk, _)) = cur {
                if kk > &q.high[..] {
                    break;
                }
                if kk >= &q.low[..] {
                    n += 1;
                }
                cur = OursE::cursor_get(c, &[], &[], k::MDB_NEXT)?;
            }
            out.push(n);
        }
        Ok(out)
    })
}

fn counted_range(env: extra::Env, dbi: u32, qs: &[Query], dup: bool) -> Result<(u128, Vec<u64>)> {
    with_txn(env, dbi, |t, _| {
        let mut out = Vec::with_capacity(qs.len());
        let flags = k::MDB_COUNT_LOWER_INCL | k::MDB_COUNT_UPPER_INCL;
        for q in qs {
            let (lo, hi) = (mval(&q.low), mval(&q.high));
            let mut n = 0u64;
            // SAFETY: live read txn of our engine; bounds point at our memory.
            let rc = unsafe {
                if dup {
                    dlmdb_sys::mdb_range_count_values(t as *mut _, dbi, &lo, &hi, flags, &mut n)
                } else {
                    dlmdb_sys::mdb_count_range(t as *mut _, dbi, &lo, &hi, flags, &mut n)
                }
            };
            if rc != 0 {
                bail!(
                    "{} failed ({rc})",
                    if dup {
                        "mdb_range_count_values"
                    } else {
                        "mdb_count_range"
                    }
                );
            }
            out.push(n);
        }
        Ok(out)
    })
}

fn cursor_dup_range(env: extra::Env, dbi: u32, qs: &[Query]) -> Result<(u128, Vec<u64>)> {
    with_txn(env, dbi, |_, c| {
        let mut out = Vec::with_capacity(qs.len());
        for q in qs {
            let mut n = 0;
            let mut cur = OursE::cursor_get(c, &q.low, &[], k::MDB_SET_RANGE)?;
            while let Some((kk, _)) = cur {
                if kk > &q.high[..] {
                    break;
                }
                n += OursE::cursor_count(c)?;
                cur = OursE::cursor_get(c, &[], &[], k::MDB_NEXT_NODUP)?;
            }
            out.push(n);
        }
        Ok(out)
    })
}

fn slice<'a>(v: &dlmdb_sys::MDB_val) -> &'a [u8] {
    if v.mv_data.is_null() {
        return &[];
    }
    // SAFETY: engine-returned value inside a live read txn; used at once.
    unsafe { std::slice::from_raw_parts(v.mv_data as *const u8, v.mv_size) }
}

/// Rank lookups; `how`: 0 = cursor API, 1 = mdb_get_rank. Answers are the
/// key index found (checked against the rank itself, as keys are dense).
fn rank_api(env: extra::Env, dbi: u32, ranks: &[u64], how: u8) -> Result<(u128, Vec<u64>)> {
    with_txn(env, dbi, |t, c| {
        let mut out = Vec::with_capacity(ranks.len());
        for &r in ranks {
            let mut kk = mval(&[]);
            let mut d = mval(&[]);
            // SAFETY: live read txn/cursor of our engine.
            let rc = unsafe {
                if how == 0 {
                    dlmdb_sys::mdb_cursor_get_rank(c as *mut _, r, &mut kk, &mut d, 0)
                } else {
                    dlmdb_sys::mdb_get_rank(t as *mut _, dbi, r, &mut kk, &mut d)
                }
            };
            ensure!(
                rc == 0,
                "{} failed ({rc})",
                if how == 0 {
                    "mdb_cursor_get_rank"
                } else {
                    "mdb_get_rank"
                }
            );
            out.push(key_index(slice(&kk))?);
        }
        Ok(out)
    })
}

fn key_index(kk: &[u8]) -> Result<u64> {
    let s = std::str::from_utf8(kk)
        .ok()
        .and_then(|s| s.strip_prefix('k'))
        .and_then(|s| s.parse().ok());
    match s {
        Some(i) => Ok(i),
        None => bail!("unexpected key {:?}", String::from_utf8_lossy(kk)),
    }
}

fn naive_rank(env: extra::Env, dbi: u32, ranks: &[u64]) -> Result<(u128, Vec<u64>)> {
    with_txn(env, dbi, |_, c| {
        let mut out = Vec::with_capacity(ranks.len());
        for &r in ranks {
            let mut cur = OursE::cursor_get(c, &[], &[], k::MDB_FIRST)?;
            for _ in 0..r {
                cur = OursE::cursor_get(c, &[], &[], k::MDB_NEXT)?;
            }
            let Some((kk, _)) = cur else {
                bail!("rank {r} past the end")
            };
            out.push(key_index(kk)?);
        }
        Ok(out)
    })
}

/// Run the order-statistics suite.
pub fn run_counted(opts: &SuiteOptions) -> Result<SuiteReport> {
    extra::run_suite("counted", opts, |root, emit| {
        let c = if opts.quick {
            Cfg {
                entries: 20_000,
                queries: 200,
                span: 2_000,
                dups: 20,
            }
        } else {
            Cfg {
                entries: 100_000,
                queries: 200,
                span: 10_000,
                dups: 20,
            }
        };
        let order = extra::count_bench_order(c.entries);
        let qs = queries(&c);
        let tag = format!("{}K", c.entries / 1000);

        let mut row = insert_row(root, opts, &c, &order, false);
        row.name = format!("{}/{tag}", row.name);
        emit(row);

        // Counted build kept open for the query rows.
        let kept = build(root, "kept", &c, &order, false, true);
        let mut pr = Pair::new(
            format!("range_count/{tag}/span{}", c.span),
            "self",
            "mdb_count_range",
            "cursor scan",
            "query",
        );
        let mut pc = Pair::new(
            format!("rank/{tag}"),
            "self",
            "mdb_cursor_get_rank",
            "naive walk",
            "lookup",
        );
        let mut pg = Pair::new(
            format!("rank_get/{tag}"),
            "self",
            "mdb_get_rank",
            "naive walk",
            "lookup",
        );
        match &kept {
            Ok((g, dbi, _)) => {
                let (env, dbi) = (g.env, *dbi);
                let want: Vec<u64> = qs.iter().map(|q| q.keys).collect();
                compare(
                    &mut pr,
                    opts.rounds,
                    qs.len() as u64,
                    || counted_range(env, dbi, &qs, false),
                    || naive_range(env, dbi, &qs),
                );
                // Known answers too (dense keys), not only agreement.
                match counted_range(env, dbi, &qs, false) {
                    Ok((_, got)) if got == want => {}
                    Ok(_) => pr.fail(anyhow::anyhow!(
                        "mdb_count_range answers differ from the key arithmetic"
                    )),
                    Err(e) => pr.fail(e),
                }
                let ranks: Vec<u64> = qs.iter().map(|q| q.rank).collect();
                let sampled = &ranks[..ranks.len().min(128)];
                // The naive walk runs over the first 128 ranks only (as
                // count_bench); the APIs over all of them, and ns/op is per
                // lookup on each side.
                let mut naive_ns = Vec::new();
                let mut naive_ans = None;
                for r in 0..opts.rounds {
                    match naive_rank(env, dbi, sampled) {
                        Ok((ns, a)) => {
                            naive_ns.push(ns);
                            naive_ans = Some(a);
                        }
                        Err(e) => {
                            pc.fail(anyhow::anyhow!("naive: {e:#}"));
                            break;
                        }
                    }
                    for (p, how) in [(&mut pc, 0u8), (&mut pg, 1u8)] {
                        let res = rank_api(env, dbi, &ranks, how);
                        match res {
                            Ok((ns, a)) => {
                                if a != ranks {
                                    p.fail(anyhow::anyhow!("rank API returned wrong keys"));
                                }
                                p.add(true, Ok(ns), ranks.len() as u64);
                            }
                            Err(e) => p.add(true, Err(e), 1),
                        }
                    }
                    let _ = r;
                }
                if naive_ans.as_deref().is_some_and(|a| a != sampled) {
                    pc.fail(anyhow::anyhow!("naive walk returned wrong keys"));
                }
                for p in [&mut pc, &mut pg] {
                    for &ns in &naive_ns {
                        p.add(false, Ok(ns), sampled.len() as u64);
                    }
                    p.note = Some(format!(
                        "naive walk sampled over the first {} ranks",
                        sampled.len()
                    ));
                }
            }
            Err(e) => {
                for p in [&mut pr, &mut pc, &mut pg] {
                    p.fail(anyhow::anyhow!("counted build: {e:#}"));
                }
            }
        }
        drop(kept);
        emit(pr.finish(Target::SpeedupAtLeast(150.0)));
        emit(pc.finish(Target::SpeedupAtLeast(1000.0)));
        emit(pg.finish(Target::SpeedupAtLeast(1000.0)));

        let mut row = insert_row(root, opts, &c, &order, true);
        row.name = format!("{}/{tag}x{}", row.name, c.dups);
        emit(row);

        let kept = build(root, "kept_dup", &c, &order, true, true);
        let mut pd = Pair::new(
            format!("dup_range_count/{tag}x{}/span{}", c.dups, c.span),
            "self",
            "mdb_range_count_values",
            "cursor + mdb_cursor_count",
            "query",
        );
        match &kept {
            Ok((g, dbi, _)) => {
                let (env, dbi) = (g.env, *dbi);
                compare(
                    &mut pd,
                    opts.rounds,
                    qs.len() as u64,
                    || counted_range(env, dbi, &qs, true),
                    || cursor_dup_range(env, dbi, &qs),
                );
                let want: Vec<u64> = qs.iter().map(|q| q.keys * c.dups as u64).collect();
                match counted_range(env, dbi, &qs, true) {
                    Ok((_, got)) if got == want => {}
                    Ok(_) => pd.fail(anyhow::anyhow!(
                        "mdb_range_count_values answers differ from the key arithmetic"
                    )),
                    Err(e) => pd.fail(e),
                }
            }
            Err(e) => pd.fail(anyhow::anyhow!("counted dup build: {e:#}")),
        }
        drop(kept);
        emit(pd.finish(Target::SpeedupAtLeast(300.0)));
        Ok(())
    })
}
