//! Transaction and reader suite: our engine vs stock LMDB.
//!
//! Rows:
//! * `ro_begin_abort`: `mdb_txn_begin(RDONLY)` + `mdb_txn_abort`.
//! * `ro_reset_renew`: `mdb_txn_reset` + `mdb_txn_renew` of one read txn.
//! * `rw_put_commit/sync`: write txn, one 8-byte-key/32-byte-value put,
//!   commit, env opened with flags 0 (fsync per commit; on tmpfs this is
//!   cheap, so the row measures engine work).
//! * `rw_put_commit/nosync`: the same with `MDB_NOSYNC`.
//! * `mixed_4readers_1writer`: 4 threads doing random gets (a read txn per
//!   1000 gets) while one thread commits 10 random overwrites per txn, for a
//!   fixed wall time. Reported as ns per reader get (from aggregate gets/s);
//!   the note carries gets/s and writer commits/s for both engines.
//!
//! Readers check every value they read (it encodes its key), so a broken
//! engine cannot look fast.

use std::path::Path;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{ensure, Result};

use crate::extra::{
    self, k, Eng, EnvGuard, LmdbE, OursE, Pair, SharedEnv, SuiteOptions, SuiteReport, Target,
};
use crate::measure;

const PEER_BAR: f64 = 1.25;

fn key(i: u64) -> [u8; 8] {
    i.to_be_bytes()
}

/// 32-byte value: the key, then a generation counter, then filler.
fn value(i: u64, gen: u64) -> [u8; 32] {
    let mut v = [0x5Au8; 32];
    v[..8].copy_from_slice(&i.to_be_bytes());
    v[8..16].copy_from_slice(&gen.to_be_bytes());
    v
}

fn preload<E: Eng>(env: extra::Env, dbi: u32, n: u64) -> Result<()> {
    extra::in_write_txn::<E>(env, |t| {
        for i in 0..n {
            E::put(t, dbi, &key(i), &value(i, 0), 0)?;
        }
        Ok(())
    })
}

fn open_env<E: Eng>(
    root: &Path,
    tag: &str,
    flags: u32,
    preload_n: u64,
) -> Result<(EnvGuard<E>, u32)> {
    let g = EnvGuard::<E>::open(&root.join(format!("{}-{tag}", E::LABEL)), flags, 4, 1 << 30)?;
    let dbi = extra::create_db::<E>(g.env, "t", 0)?;
    preload::<E>(g.env, dbi, preload_n)?;
    Ok((g, dbi))
}

fn ro_begin_abort<E: Eng>(env: extra::Env, n: u64) -> Result<u128> {
    let (ns, ()) = extra::timed(|| {
        for _ in 0..n {
            let t = E::txn_begin(env, ptr::null_mut(), k::MDB_RDONLY)?;
            E::txn_abort(t);
        }
        Ok(())
    })?;
    Ok(ns)
}

fn ro_reset_renew<E: Eng>(env: extra::Env, dbi: u32, n: u64) -> Result<u128> {
    let t = E::txn_begin(env, ptr::null_mut(), k::MDB_RDONLY)?;
    let (ns, r) = extra::timed(|| {
        for _ in 0..n {
            E::txn_reset(t);
            if let Err(e) = E::txn_renew(t) {
                return Ok(Err(e));
            }
        }
        Ok(Ok(()))
    })?;
    // The renewed txn must be usable.
    let ok = r.and_then(|()| E::get(t, dbi, &key(0)).map(|v| v.is_some()));
    E::txn_abort(t);
    ensure!(ok?, "{}: key 0 missing after renew", E::LABEL);
    Ok(ns)
}

fn put_commit<E: Eng>(env: extra::Env, dbi: u32, start: u64, n: u64) -> Result<u128> {
    let (ns, ()) = extra::timed(|| {
        for i in start..start + n {
            extra::in_write_txn::<E>(env, |t| E::put(t, dbi, &key(i), &value(i, 1), 0))?;
        }
        Ok(())
    })?;
    Ok(ns)
}

/// One sample of a commit row: `n` one-put transactions on a fresh store of
/// 1000 keys (opened with `flags`), then the count checked.
fn commit_sample<E: Eng>(root: &Path, tag: &str, flags: u32, n: u64) -> Result<u128> {
    let (g, d) = open_env::<E>(root, tag, flags, 1000)?;
    let ns = put_commit::<E>(g.env, d, 1_000_000, n)?;
    extra::check_entries::<E>(g.env, d, 1000 + n)?;
    Ok(ns)
}

/// Result of one mixed sample: reader gets, writer commits, seconds.
struct Mixed {
    gets: u64,
    commits: u64,
    secs: f64,
}

fn mixed<E: Eng>(env: extra::Env, dbi: u32, nkeys: u64, dur: Duration, seed: u64) -> Result<Mixed> {
    let shared = SharedEnv(env);
    let stop = AtomicBool::new(false);
    let gets = AtomicU64::new(0);
    let commits = AtomicU64::new(0);
    let t0 = Instant::now();
    let res: Vec<Result<()>> = std::thread::scope(|s| {
        let mut hs = Vec::new();
        for r in 0..4u64 {
            let (stop, gets) = (&stop, &gets);
            // A thread's stack starts at the same offset within its page in
            // every thread of every run (the kernel's random offset is the
            // main thread's alone), so each loop draws a depth of its own.
            hs.push(s.spawn(move || -> Result<()> {
                measure::at_next_stack_depth(|| {
                    let env = shared;
                    let mut rng = extra::Sm64(seed ^ ((r + 1) * 0x1234_5678));
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let t = E::txn_begin(env.0, ptr::null_mut(), k::MDB_RDONLY)?;
                        let mut bad = None;
                        for _ in 0..1000 {
                            let i = rng.below(nkeys);
                            match E::get(t, dbi, &key(i)) {
                                Ok(Some(v)) if v.len() == 32 && v[..8] == key(i) => {}
                                Ok(other) => {
                                    bad = Some(anyhow::anyhow!(
                                        "{}: bad value for key {i}: {:?}",
                                        E::LABEL,
                                        other.map(|v| v.len())
                                    ));
                                    break;
                                }
                                Err(e) => {
                                    bad = Some(e);
                                    break;
                                }
                            }
                        }
                        E::txn_abort(t);
                        if let Some(e) = bad {
                            stop.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                        n += 1000;
                    }
                    gets.fetch_add(n, Ordering::Relaxed);
                    Ok(())
                })
            }));
        }
        let (stop2, commits2) = (&stop, &commits);
        hs.push(s.spawn(move || -> Result<()> {
            measure::at_next_stack_depth(|| {
                let env = shared;
                let mut rng = extra::Sm64(seed);
                let mut gen = 1;
                let mut n = 0;
                while !stop2.load(Ordering::Relaxed) {
                    let t = E::txn_begin(env.0, ptr::null_mut(), 0)?;
                    for _ in 0..10 {
                        let i = rng.below(nkeys);
                        if let Err(e) = E::put(t, dbi, &key(i), &value(i, gen), 0) {
                            E::txn_abort(t);
                            stop2.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                    }
                    E::txn_commit(t)?;
                    gen += 1;
                    n += 1;
                }
                commits2.fetch_add(n, Ordering::Relaxed);
                Ok(())
            })
        }));
        std::thread::sleep(dur);
        stop.store(true, Ordering::Relaxed);
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("thread panicked")))
            })
            .collect()
    });
    let secs = t0.elapsed().as_secs_f64();
    for r in res {
        r?;
    }
    Ok(Mixed {
        gets: gets.load(Ordering::Relaxed),
        commits: commits.load(Ordering::Relaxed),
        secs,
    })
}

/// Run the transaction/reader suite.
pub fn run_txns(opts: &SuiteOptions) -> Result<SuiteReport> {
    extra::run_suite("txns", opts, |root, emit| {
        let q = opts.quick;
        let n_ro: u64 = if q { 100_000 } else { 1_000_000 };
        let n_sync: u64 = if q { 1_000 } else { 5_000 };
        let n_nosync: u64 = if q { 5_000 } else { 50_000 };
        let nkeys: u64 = if q { 10_000 } else { 100_000 };
        let dur = Duration::from_millis(if q { 300 } else { 1000 });

        // Read-only txn rows share one env per engine.
        {
            let o = open_env::<OursE>(root, "ro", 0, nkeys);
            let l = open_env::<LmdbE>(root, "ro", 0, nkeys);
            let mut p1 = Pair::peer("ro_begin_abort", "txn");
            let mut p2 = Pair::peer("ro_reset_renew", "txn");
            match (&o, &l) {
                (Ok((go, dbo)), Ok((gl, dbl))) => {
                    for r in 0..opts.rounds {
                        for ours in extra::turns(r) {
                            if ours {
                                p1.add(true, ro_begin_abort::<OursE>(go.env, n_ro), n_ro);
                                p2.add(true, ro_reset_renew::<OursE>(go.env, *dbo, n_ro), n_ro);
                            } else {
                                p1.add(false, ro_begin_abort::<LmdbE>(gl.env, n_ro), n_ro);
                                p2.add(false, ro_reset_renew::<LmdbE>(gl.env, *dbl, n_ro), n_ro);
                            }
                        }
                    }
                }
                (Err(e), _) | (_, Err(e)) => {
                    p1.fail(anyhow::anyhow!("{e:#}"));
                    p2.fail(anyhow::anyhow!("{e:#}"));
                }
            }
            emit(p1.finish(Target::RatioAtMost(PEER_BAR)));
            emit(p2.finish(Target::RatioAtMost(PEER_BAR)));
        }

        // Write commit rows: a fresh env per sample, new keys appended.
        for (name, flags, n) in [
            ("rw_put_commit/sync", 0u32, n_sync),
            ("rw_put_commit/nosync", k::MDB_NOSYNC, n_nosync),
        ] {
            let mut p = Pair::peer(name, "commit");
            let mut seq = 0;
            for r in 0..opts.rounds {
                for ours in extra::turns(r) {
                    seq += 1;
                    let tag = format!("w{seq}");
                    let res = if ours {
                        commit_sample::<OursE>(root, &tag, flags, n)
                    } else {
                        commit_sample::<LmdbE>(root, &tag, flags, n)
                    };
                    p.add(ours, res, n);
                }
            }
            emit(p.finish(Target::RatioAtMost(PEER_BAR)));
        }

        // Mixed readers + writer.
        let mut p = Pair::peer("mixed_4readers_1writer", "reader get");
        p.wall = true;
        let mut commit_rates: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut get_rates: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut seq = 0;
        for r in 0..opts.rounds {
            for ours in extra::turns(r) {
                seq += 1;
                let tag = format!("m{seq}");
                let seed = 0xABCD + r as u64;
                let res = if ours {
                    open_env::<OursE>(root, &tag, 0, nkeys)
                        .and_then(|(g, d)| mixed::<OursE>(g.env, d, nkeys, dur, seed))
                } else {
                    open_env::<LmdbE>(root, &tag, 0, nkeys)
                        .and_then(|(g, d)| mixed::<LmdbE>(g.env, d, nkeys, dur, seed))
                };
                match res {
                    Ok(m) => {
                        get_rates[ours as usize].push(m.gets as f64 / m.secs);
                        commit_rates[ours as usize].push(m.commits as f64 / m.secs);
                        p.add(ours, Ok((m.secs * 1e9) as u128), m.gets.max(1));
                    }
                    Err(e) => p.add(ours, Err(e), 1),
                }
            }
        }
        let m = |v: &Vec<f64>| extra::median(v).unwrap_or(0.0);
        p.note = Some(format!(
            "reader gets/s ours {:.0} lmdb {:.0}; writer commits/s (10 puts each) ours {:.0} lmdb {:.0}{}",
            m(&get_rates[1]),
            m(&get_rates[0]),
            m(&commit_rates[1]),
            m(&commit_rates[0]),
            if extra::median(&commit_rates[0]).is_some_and(|l| l > 0.0) {
                format!(" (commit ratio ours/lmdb {:.2})", m(&commit_rates[1]) / m(&commit_rates[0]))
            } else {
                String::new()
            }
        ));
        emit(p.finish(Target::RatioAtMost(PEER_BAR)));
        Ok(())
    })
}
