//! DUPSORT suite: our engine vs stock LMDB on DUPSORT databases,
//! plus `mdb_cursor_list_dup` vs an `MDB_NEXT_DUP` loop on our engine
//! (DLMDB's dup_iter_bench workload).
//!
//! Rows (full size; `quick` divides keys by 10):
//! * `dup_insert/50Kx20`: 1M values over 50K keys, inserted in a seeded
//!   random (key, dup) order, 100K puts per write txn, commits timed.
//! * `dup_next_dup/100K`: 100K random keys: `MDB_SET` then `MDB_NEXT_DUP`
//!   until not-found (ns per key; every key yields 20 values).
//! * `dup_get_both/100K`: 100K random (key, value) `MDB_GET_BOTH` lookups.
//! * `dupfixed_get_multiple/100K`: 8-byte DUPFIXED values, 100K random keys:
//!   `MDB_SET`, `MDB_GET_MULTIPLE`, then `MDB_NEXT_MULTIPLE` until not-found.
//! * `list_dup_vs_next_dup/20Kx20x5` (ours only): dup_iter_bench, with its
//!   DB flags (DUPSORT|COUNTED|PREFIX_COMPRESSION); `.../plain_dupsort` is
//!   the same on a plain DUPSORT DB (diagnostic, no target).
//!
//! Every read pass returns a checksum; both engines must agree, and counts
//! are checked against what was inserted, so a wrong answer cannot look fast.

use std::path::Path;

use anyhow::{ensure, Result};

use crate::extra::{
    self, k, Eng, EnvGuard, LmdbE, OursE, Pair, SuiteOptions, SuiteReport, SuiteRow, Target,
};

const PEER_BAR: f64 = 1.25;

struct Data {
    keys: Vec<Vec<u8>>,
    dups: usize,
    /// Value bytes of dup `d` of key `i` are `val(i, d)`.
    lookups: Vec<usize>,
    both: Vec<(usize, usize)>,
    insert_order: Vec<(u32, u32)>,
}

fn val(i: usize, d: usize) -> [u8; 16] {
    // Sorts by dup index first, so dup order == insertion index order.
    let s = format!("{d:04}-{i:011}");
    let mut out = [0u8; 16];
    out.copy_from_slice(s.as_bytes());
    out
}

fn fixed_val(i: usize, d: usize) -> [u8; 8] {
    ((d as u64) << 40 | i as u64).to_be_bytes()
}

impl Data {
    fn new(nkeys: usize, dups: usize, nlookups: usize) -> Data {
        let mut r = extra::Sm64(0x0D09_5EED);
        let keys = (0..nkeys)
            .map(|i| format!("key-{i:012}").into_bytes())
            .collect();
        let lookups = (0..nlookups)
            .map(|_| r.below(nkeys as u64) as usize)
            .collect();
        let both = (0..nlookups)
            .map(|_| {
                (
                    r.below(nkeys as u64) as usize,
                    r.below(dups as u64) as usize,
                )
            })
            .collect();
        let mut insert_order: Vec<(u32, u32)> = (0..nkeys)
            .flat_map(|i| (0..dups).map(move |d| (i as u32, d as u32)))
            .collect();
        r.shuffle(&mut insert_order);
        Data {
            keys,
            dups,
            lookups,
            both,
            insert_order,
        }
    }
    fn values(&self) -> u64 {
        (self.keys.len() * self.dups) as u64
    }
}

const BATCH: usize = 100_000;

/// Load the DUPSORT DB (and optionally the DUPFIXED one) in random order.
fn load<E: Eng>(env: extra::Env, dbi: u32, fixed: Option<u32>, d: &Data) -> Result<()> {
    for chunk in d.insert_order.chunks(BATCH) {
        extra::in_write_txn::<E>(env, |t| {
            for &(i, dd) in chunk {
                let (i, dd) = (i as usize, dd as usize);
                E::put(t, dbi, &d.keys[i], &val(i, dd), 0)?;
                if let Some(f) = fixed {
                    E::put(t, f, &d.keys[i], &fixed_val(i, dd), 0)?;
                }
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// One timed insert sample in a fresh env.
fn insert_sample<E: Eng>(root: &Path, seq: usize, d: &Data, verify: bool) -> Result<u128> {
    let g = EnvGuard::<E>::open(&root.join(format!("{}-ins-{seq}", E::LABEL)), 0, 4, 4 << 30)?;
    let dbi = extra::create_db::<E>(g.env, "dups", k::MDB_DUPSORT)?;
    let (ns, ()) = extra::timed(|| load::<E>(g.env, dbi, None, d))?;
    if verify {
        extra::check_entries::<E>(g.env, dbi, d.values())?;
    }
    Ok(ns)
}

/// A read pass inside one read txn + cursor; returns (ns, checksum).
fn read_pass<E: Eng>(
    env: extra::Env,
    dbi: u32,
    f: impl FnOnce(extra::Cur) -> Result<u64>,
) -> Result<(u128, u64)> {
    extra::timed(|| extra::with_read_cursor::<E, _>(env, dbi, f))
}

fn next_dup_pass<E: Eng>(c: extra::Cur, d: &Data) -> Result<u64> {
    let mut sum = 0u64;
    let mut n = 0u64;
    for &i in &d.lookups {
        let mut cur = E::cursor_get(c, &d.keys[i], &[], k::MDB_SET)?;
        ensure!(cur.is_some(), "{}: key {i} missing", E::LABEL);
        while let Some((_, v)) = cur {
            sum = sum
                .wrapping_mul(31)
                .wrapping_add(v[v.len() - 1] as u64 + v.len() as u64);
            n += 1;
            cur = E::cursor_get(c, &[], &[], k::MDB_NEXT_DUP)?;
        }
    }
    all_values_seen::<E>(d, n, "NEXT_DUP read")?;
    Ok(sum)
}

/// A pass over the lookup keys saw `n` values: all of theirs (`how` names
/// the pass in the error).
fn all_values_seen<E: Eng>(d: &Data, n: u64, how: &str) -> Result<()> {
    ensure!(
        n == (d.lookups.len() * d.dups) as u64,
        "{}: {how} {n} values",
        E::LABEL
    );
    Ok(())
}

fn get_both_pass<E: Eng>(c: extra::Cur, d: &Data) -> Result<u64> {
    let mut sum = 0u64;
    for &(i, dd) in &d.both {
        let v = val(i, dd);
        let Some((kk, got)) = E::cursor_get(c, &d.keys[i], &v, k::MDB_GET_BOTH)? else {
            anyhow::bail!("{}: GET_BOTH ({i},{dd}) not found", E::LABEL)
        };
        sum = sum.wrapping_add(got[15] as u64 + kk.len() as u64);
    }
    Ok(sum)
}

fn get_multiple_pass<E: Eng>(c: extra::Cur, d: &Data) -> Result<u64> {
    let mut sum = 0u64;
    let mut n = 0u64;
    for &i in &d.lookups {
        ensure!(
            E::cursor_get(c, &d.keys[i], &[], k::MDB_SET)?.is_some(),
            "{}: key {i} missing",
            E::LABEL
        );
        let mut cur = E::cursor_get(c, &[], &[], k::MDB_GET_MULTIPLE)?;
        while let Some((_, chunk)) = cur {
            ensure!(
                chunk.len() % 8 == 0,
                "{}: GET_MULTIPLE chunk of {} bytes",
                E::LABEL,
                chunk.len()
            );
            n += (chunk.len() / 8) as u64;
            sum = sum.wrapping_add(u64::from_be_bytes(
                chunk[chunk.len() - 8..].try_into().unwrap(),
            ));
            cur = E::cursor_get(c, &[], &[], k::MDB_NEXT_MULTIPLE)?;
        }
    }
    all_values_seen::<E>(d, n, "GET_MULTIPLE returned")?;
    Ok(sum)
}

type PassFn = fn(extra::Cur, &Data) -> Result<u64>;

/// Run the DUPSORT suite.
pub fn run_dups(opts: &SuiteOptions) -> Result<SuiteReport> {
    extra::run_suite("dups", opts, |root, emit| {
        let (nkeys, nlook) = if opts.quick {
            (5_000, 10_000)
        } else {
            (50_000, 100_000)
        };
        let d = Data::new(nkeys, 20, nlook);
        let kname = |n: usize| crate::short_count(n as u64);

        // Insert row: fresh env per sample, engines alternate.
        let mut p = Pair::peer(format!("dup_insert/{}x20", kname(nkeys)), "value");
        let mut seq = 0;
        for r in 0..opts.rounds {
            for ours in extra::turns(r) {
                seq += 1;
                let res = if ours {
                    insert_sample::<OursE>(root, seq, &d, r == 0)
                } else {
                    insert_sample::<LmdbE>(root, seq, &d, r == 0)
                };
                p.add(ours, res, d.values());
            }
        }
        emit(p.finish(Target::RatioAtMost(PEER_BAR)));

        // Read rows on one loaded env per engine.
        let go = OursLoaded::new(root, &d);
        let gl = LmdbLoaded::new(root, &d);
        let rows: [(&str, PassFn, PassFn, bool, &str); 3] = [
            (
                "dup_next_dup",
                next_dup_pass::<OursE>,
                next_dup_pass::<LmdbE>,
                false,
                "key (20 values each)",
            ),
            (
                "dup_get_both",
                get_both_pass::<OursE>,
                get_both_pass::<LmdbE>,
                false,
                "lookup",
            ),
            (
                "dupfixed_get_multiple",
                get_multiple_pass::<OursE>,
                get_multiple_pass::<LmdbE>,
                true,
                "key (20 values each)",
            ),
        ];
        for (name, fo, fl, fixed, unit) in rows {
            let mut p = Pair::peer(format!("{name}/{}", kname(nlook)), unit);
            match (&go, &gl) {
                (Ok(o), Ok(l)) => {
                    let mut sums = [None, None];
                    for r in 0..opts.rounds {
                        for ours in extra::turns(r) {
                            let res = if ours {
                                read_pass::<OursE>(
                                    o.g.env,
                                    if fixed { o.fixed } else { o.dbi },
                                    |c| fo(c, &d),
                                )
                            } else {
                                read_pass::<LmdbE>(
                                    l.g.env,
                                    if fixed { l.fixed } else { l.dbi },
                                    |c| fl(c, &d),
                                )
                            };
                            let res = res.map(|(ns, s)| {
                                sums[ours as usize] = Some(s);
                                ns
                            });
                            p.add(ours, res, nlook as u64);
                        }
                        if let [Some(a), Some(b)] = sums {
                            if a != b {
                                p.fail(anyhow::anyhow!(
                                    "checksums differ: lmdb {a:#x} vs ours {b:#x}"
                                ));
                            }
                        }
                    }
                }
                (Err(e), _) | (_, Err(e)) => p.fail(anyhow::anyhow!("{e}")),
            }
            emit(p.finish(Target::RatioAtMost(PEER_BAR)));
        }
        drop(go);
        drop(gl);

        emit(list_dup_row(root, opts, true));
        emit(list_dup_row(root, opts, false));
        Ok(())
    })
}

/// A loaded env for the read rows.
struct Loaded<E: Eng> {
    g: EnvGuard<E>,
    dbi: u32,
    fixed: u32,
}
type OursLoaded = Loaded<OursE>;
type LmdbLoaded = Loaded<LmdbE>;

impl<E: Eng> Loaded<E> {
    fn new(root: &Path, d: &Data) -> std::result::Result<Self, String> {
        (|| -> Result<Self> {
            let g = EnvGuard::<E>::open(&root.join(format!("{}-read", E::LABEL)), 0, 4, 4 << 30)?;
            let dbi = extra::create_db::<E>(g.env, "dups", k::MDB_DUPSORT)?;
            let fixed = extra::create_db::<E>(g.env, "fixed", k::MDB_DUPSORT | k::MDB_DUPFIXED)?;
            load::<E>(g.env, dbi, Some(fixed), d)?;
            extra::check_entries::<E>(g.env, dbi, d.values())?;
            extra::check_entries::<E>(g.env, fixed, d.values())?;
            Ok(Loaded { g, dbi, fixed })
        })()
        .map_err(|e| format!("{e:#}"))
    }
}

// ------------------------------------------------ list_dup vs NEXT_DUP loop

const ITER_KEYS: usize = 20_000;
const ITER_DUPS: usize = 20;
const ITER_RUNS: usize = 5;

/// dup_iter_bench's list_dup pass (our engine only): checksum of the first
/// byte of every value, over `ITER_RUNS` runs.
fn list_dup_pass(env: extra::Env, dbi: u32) -> Result<u64> {
    let mut sum = 0u64;
    every_key_runs(env, dbi, |c| {
        let n = crate::dupiter::list_dup(c, &mut sum)?;
        ensure!(
            n as usize == ITER_DUPS,
            "mdb_cursor_list_dup returned {n} values"
        );
        Ok(())
    })?;
    Ok(sum)
}

fn next_dup_loop_pass(env: extra::Env, dbi: u32) -> Result<u64> {
    let mut sum = 0u64;
    every_key_runs(env, dbi, |c| {
        let mut dv = OursE::cursor_get(c, &[], &[], k::MDB_FIRST_DUP)?;
        while let Some((_, v)) = dv {
            sum += v[0] as u64;
            dv = OursE::cursor_get(c, &[], &[], k::MDB_NEXT_DUP)?;
        }
        Ok(())
    })?;
    Ok(sum)
}

/// `ITER_RUNS` times, each in a new read transaction of our engine:
/// `each_key` with the cursor on every key in turn (`MDB_FIRST`, then
/// `MDB_NEXT_NODUP`).
fn every_key_runs(
    env: extra::Env,
    dbi: u32,
    mut each_key: impl FnMut(extra::Cur) -> Result<()>,
) -> Result<()> {
    for _ in 0..ITER_RUNS {
        extra::with_read_cursor::<OursE, _>(env, dbi, |c| {
            let mut cur = OursE::cursor_get(c, &[], &[], k::MDB_FIRST)?;
            while cur.is_some() {
                each_key(c)?;
                cur = OursE::cursor_get(c, &[], &[], k::MDB_NEXT_NODUP)?;
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// `dlmdb_flags`: the DB flags of dup_iter_bench (COUNTED|PREFIX_COMPRESSION)
/// or, as a diagnostic variant, a plain DUPSORT DB.
fn list_dup_row(root: &Path, opts: &SuiteOptions, dlmdb_flags: bool) -> SuiteRow {
    let mut p = Pair::new(
        format!(
            "list_dup_vs_next_dup/{}x{ITER_DUPS}x{ITER_RUNS}{}",
            crate::short_count(ITER_KEYS as u64),
            if dlmdb_flags { "" } else { "/plain_dupsort" }
        ),
        "list_dup",
        "NEXT_DUP loop",
        "value",
    );
    let r = (|| -> Result<()> {
        let flags = k::MDB_NOSYNC | k::MDB_NOMETASYNC | k::MDB_NOLOCK;
        let g = EnvGuard::<OursE>::open(&root.join("ours-dup-iter"), flags, 4, 512 << 20)?;
        let extra_flags = if dlmdb_flags {
            k::MDB_COUNTED | k::MDB_PREFIX_COMPRESSION
        } else {
            0
        };
        let dbi = extra::create_db::<OursE>(g.env, "bench", k::MDB_DUPSORT | extra_flags)?;
        let total = ITER_KEYS * ITER_DUPS;
        crate::dupiter::put_dups::<OursE>(g.env, dbi, ITER_KEYS as u64, ITER_DUPS as u64)?;
        extra::check_entries::<OursE>(g.env, dbi, total as u64)?;
        let values = (total * ITER_RUNS) as u64;
        let mut sums = [None, None];
        for r in 0..opts.rounds {
            for a in extra::turns(r) {
                let res = extra::timed(|| {
                    if a {
                        list_dup_pass(g.env, dbi)
                    } else {
                        next_dup_loop_pass(g.env, dbi)
                    }
                });
                let res = res.map(|(ns, s)| {
                    sums[a as usize] = Some(s);
                    ns
                });
                p.add(a, res, values);
            }
        }
        if let [Some(x), Some(y)] = sums {
            ensure!(x == y, "checksums differ: NEXT_DUP {x} vs list_dup {y}");
        }
        Ok(())
    })();
    if let Err(e) = r {
        p.fail(e);
    }
    p.note = Some(format!(
        "dup_iter_bench: {ITER_KEYS} keys x {ITER_DUPS} dups, {ITER_RUNS} runs per sample{}",
        if dlmdb_flags {
            ", DB flags DUPSORT|COUNTED|PREFIX_COMPRESSION"
        } else {
            ", diagnostic variant: DUPSORT only"
        }
    ));
    p.finish(if dlmdb_flags {
        Target::SpeedupAtLeast(1.5)
    } else {
        Target::None
    })
}
