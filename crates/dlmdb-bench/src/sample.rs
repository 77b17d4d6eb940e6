//! The workload of sample_bench, one of DLMDB's C benchmark programs: a
//! counted DB populated in batches, then rank sampling with `mdb_cursor_get_rank`
//! ("warm sequential") and a stride walk with MDB_NEXT ("stride scan").
//! Same options, defaults, bytes, transactions and timed regions, and the
//! same printed lines, including the program's quirk of not counting a
//! warm sample whose next rank runs past the end.

use std::path::{Path, PathBuf};
use std::ptr;

use anyhow::{bail, Result};
use serde::Serialize;

use crate::extra::{k, Eng, LmdbE, OursE};
use crate::measure::{at_next_stack_depth, us_per_op, Stamp};

/// Run `body` on a cursor over `dbi` in a new read transaction of `env`,
/// timing `body` alone (at a stack depth of its own): its count and
/// milliseconds.
fn timed_on_cursor<E: Eng>(
    env: crate::extra::Env,
    dbi: u32,
    body: impl FnOnce(crate::extra::Cur) -> Result<u64>,
) -> Result<(u64, f64)> {
    crate::extra::with_read_cursor::<E, _>(env, dbi, |cur| {
        at_next_stack_depth(|| {
            let t0 = Stamp::now();
            let r = body(cur);
            let ms = t0.elapsed().as_millis_f64();
            Ok((r?, ms))
        })
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Warm,
    Scan,
    Both,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        match s {
            "warm" => Ok(Mode::Warm),
            "scan" => Ok(Mode::Scan),
            "both" => Ok(Mode::Both),
            _ => Err(format!("Unknown mode '{s}'")),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct SampleOptions {
    /// Total entries (pairs, duplicates included).
    pub entries: u64,
    pub samples: u64,
    /// Rank step; 0 = entries / samples (at least 1).
    pub stride: u64,
    /// Puts per write txn; 0 = 100000.
    pub batch: u64,
    /// Values per key; > 1 makes the DB DUPSORT.
    pub dups: u64,
    pub mode: Mode,
    pub path: PathBuf,
    /// Map size in bytes; 0 = the library default.
    pub mapsize: u64,
    /// Also run the population and the stride scan on stock LMDB.
    pub peers: bool,
}

impl Default for SampleOptions {
    fn default() -> Self {
        SampleOptions {
            entries: 10_000_000,
            samples: 1000,
            stride: 0,
            batch: 250_000,
            dups: 1,
            mode: Mode::Both,
            path: PathBuf::from("./bench_sample"),
            mapsize: 1 << 34,
            peers: false,
        }
    }
}

impl SampleOptions {
    /// The program's argument checks, with its messages.
    pub fn validate(&self) -> Result<(), String> {
        if self.entries == 0 {
            return Err("entries must be > 0".into());
        }
        if self.samples == 0 {
            return Err("samples must be > 0".into());
        }
        if self.dups == 0 {
            return Err("dups must be >= 1".into());
        }
        Ok(())
    }
    pub fn stride(&self) -> u64 {
        if self.stride == 0 {
            (self.entries / self.samples).max(1)
        } else {
            self.stride
        }
    }
    pub fn batch(&self) -> u64 {
        if self.batch == 0 {
            100_000
        } else {
            self.batch
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct SampleRun {
    pub options: SampleOptions,
    pub population_ms: f64,
    /// (samples counted, ms) of each pass that ran.
    pub warm: Option<(u64, f64)>,
    pub scan: Option<(u64, f64)>,
    /// Stock LMDB's population and stride scan (with `peers`).
    pub lmdb: Option<LmdbSample>,
}

#[derive(Clone, Debug, Serialize)]
pub struct LmdbSample {
    pub population_ms: f64,
    pub scan: Option<(u64, f64)>,
}

fn get_rank(cur: crate::extra::Cur, rank: u64) -> Result<bool> {
    let mut kv = dlmdb_sys::MDB_val {
        mv_size: 0,
        mv_data: ptr::null_mut(),
    };
    let mut dv = kv;
    // SAFETY: live cursor of our engine.
    let rc = unsafe { dlmdb_sys::mdb_cursor_get_rank(cur as *mut _, rank, &mut kv, &mut dv, 0) };
    match rc {
        0 => Ok(true),
        k::MDB_NOTFOUND => Ok(false),
        rc => bail!("mdb_cursor_get_rank({rank}) failed ({rc})"),
    }
}

/// Run the workload once; the directory is removed afterwards.
pub fn run_sample(o: &SampleOptions) -> Result<SampleRun> {
    o.validate().map_err(anyhow::Error::msg)?;
    let remove = |p: &Path| {
        let _ = std::fs::remove_file(p.join("data.mdb"));
        let _ = std::fs::remove_file(p.join("lock.mdb"));
        let _ = std::fs::remove_dir(p);
    };
    let r = run_in::<OursE>(o);
    remove(&o.path);
    let mut run = r?;
    if o.peers {
        let mut lo = o.clone();
        let mut p = o.path.clone().into_os_string();
        p.push("_lmdb");
        lo.path = PathBuf::from(p);
        let r = run_in::<LmdbE>(&lo);
        remove(&lo.path);
        let l = r?;
        run.lmdb = Some(LmdbSample {
            population_ms: l.population_ms,
            scan: l.scan,
        });
    }
    Ok(run)
}

/// Puts entries `0..n` (`d` values per key) in transactions of `batch`
/// puts: the milliseconds from the first begin to the last commit.
fn populate<E: Eng>(
    env: crate::extra::Env,
    dbi: u32,
    n: u64,
    d: u64,
    batch: u64,
    put_flags: u32,
) -> Result<f64> {
    let t0 = Stamp::now();
    let mut i = 0;
    while i < n {
        let end = (i + batch).min(n);
        crate::extra::in_write_txn::<E>(env, |t| {
            for j in i..end {
                let (ki, di) = (j / d, j % d);
                let key = format!("{ki:020}");
                let val = if d > 1 {
                    format!("{ki:016}-{di:04}")
                } else {
                    format!("{j:016}")
                };
                E::put(t, dbi, key.as_bytes(), val.as_bytes(), put_flags)?;
            }
            Ok(())
        })?;
        i = end;
    }
    Ok(t0.elapsed().as_millis_f64())
}

/// The workload on engine `E`. Stock LMDB has no counted DBs: there the
/// DB is created without `MDB_COUNTED`, the warm pass (rank lookups) is
/// skipped and the stride scan starts at MDB_FIRST (the entry of rank 0).
fn run_in<E: Eng>(o: &SampleOptions) -> Result<SampleRun> {
    let ours = E::LABEL == OursE::LABEL;
    let (n, d, stride, batch) = (o.entries, o.dups, o.stride(), o.batch());
    crate::extra::fresh_env_dir(&o.path)?;
    let env = E::env_open(
        &o.path,
        k::MDB_NOSYNC | k::MDB_NOMETASYNC | k::MDB_NOLOCK,
        4,
        o.mapsize as usize,
    )?;
    let guard = EnvClose::<E>(env, std::marker::PhantomData);
    let mut flags = 0;
    if ours {
        flags |= k::MDB_COUNTED;
    }
    if d > 1 {
        flags |= k::MDB_DUPSORT;
    }
    let dbi = crate::extra::create_db::<E>(env, "sample", flags)?;

    const MDB_APPEND: u32 = 0x20000;
    let put_flags = if d == 1 { MDB_APPEND } else { 0 };
    let population_ms = at_next_stack_depth(|| populate::<E>(env, dbi, n, d, batch, put_flags))?;

    let mut warm = None;
    if ours && o.mode != Mode::Scan {
        warm = Some(timed_on_cursor::<E>(env, dbi, |cur| {
            let (mut rank, mut count) = (0u64, 0u64);
            for s in 0..o.samples {
                if rank >= n || !get_rank(cur, rank)? {
                    break;
                }
                rank += stride;
                if rank >= n && s + 1 != o.samples {
                    break;
                }
                count += 1;
            }
            Ok(count)
        })?);
    }
    let mut scan = None;
    if o.mode != Mode::Warm {
        scan = Some(timed_on_cursor::<E>(env, dbi, |cur| {
            let at_first = if ours {
                get_rank(cur, 0)?
            } else {
                E::cursor_get(cur, &[], &[], k::MDB_FIRST)?.is_some()
            };
            if !at_first {
                return Ok(0);
            }
            let mut count = 1u64;
            'outer: while count < o.samples {
                for _ in 0..stride {
                    if E::cursor_get(cur, &[], &[], k::MDB_NEXT)?.is_none() {
                        break 'outer;
                    }
                }
                count += 1;
            }
            Ok(count)
        })?);
    }
    // Correctness outside the timed regions: every entry is there.
    crate::extra::check_entries::<E>(env, dbi, n)?;
    drop(guard);
    Ok(SampleRun {
        options: o.clone(),
        population_ms,
        warm,
        scan,
        lmdb: None,
    })
}

/// Closes the env when dropped.
struct EnvClose<E: Eng>(crate::extra::Env, std::marker::PhantomData<E>);
impl<E: Eng> Drop for EnvClose<E> {
    fn drop(&mut self) {
        E::env_close(self.0);
    }
}

/// The lines sample_bench prints.
pub fn render_sample_text(r: &SampleRun) -> String {
    let o = &r.options;
    let mut s = format!(
        "Preparing {} entries (batch {}, stride {}, samples {}, dups {})\n",
        o.entries,
        o.batch(),
        o.stride(),
        o.samples,
        o.dups
    );
    let rate = if r.population_ms > 0.0 {
        o.entries as f64 / (r.population_ms / 1000.0)
    } else {
        0.0
    };
    s.push_str(&format!(
        "Population: {:.2} ms ({:.2} entries/sec)\n",
        r.population_ms, rate
    ));
    if let Some((c, ms)) = r.warm {
        s.push_str(&format!(
            "Warm sequential: samples={c} total={ms:.2} ms avg={:.2} us/op\n",
            us_per_op(ms, c)
        ));
    }
    if let Some((c, ms)) = r.scan {
        s.push_str(&format!(
            "Stride scan (MDB_NEXT): samples={c} total={ms:.2} ms avg={:.2} us/op\n",
            us_per_op(ms, c)
        ));
    }
    if let Some(l) = &r.lmdb {
        s.push_str(&format!(
            "stock LMDB population: {:.2} ms\n",
            l.population_ms
        ));
        if let Some((c, ms)) = l.scan {
            s.push_str(&format!(
                "stock LMDB stride scan (MDB_NEXT): samples={c} total={ms:.2} ms avg={:.2} us/op\n",
                us_per_op(ms, c)
            ));
        }
    }
    s
}

/// Rows of one or more rounds: population us/entry, warm and scan us/op,
/// and the sample counts (exact).
pub fn sample_report(runs: &[SampleRun]) -> Result<crate::report::Report> {
    use crate::report::{Report, Row};
    let first = runs.first().ok_or_else(|| anyhow::anyhow!("no run"))?;
    let mut rep = Report::of_rounds("sample", runs.len(), &first.options, first.lmdb.is_some())?;
    let (per, scale) = rep.measure.per_us();
    let n = first.options.entries as f64;
    let mut pop = Row::measured(
        "population",
        &format!("{per}/entry"),
        true,
        runs.iter()
            .map(|r| r.population_ms * 1000.0 / n * scale)
            .collect(),
    );
    if first.lmdb.is_some() {
        pop = pop.with_reference(
            "lmdb",
            runs.iter()
                .filter_map(|r| r.lmdb.as_ref())
                .map(|l| l.population_ms * 1000.0 / n * scale)
                .collect(),
        );
    }
    rep.rows.push(pop);
    for (name, pick) in [
        (
            "warm_sequential",
            (|r: &SampleRun| r.warm) as fn(&SampleRun) -> Option<(u64, f64)>,
        ),
        ("stride_scan", |r: &SampleRun| r.scan),
    ] {
        if let Some((c, _)) = pick(first) {
            let mut row = Row::measured(
                format!("{name}/per_sample"),
                &format!("{per}/op"),
                true,
                runs.iter()
                    .filter_map(pick)
                    .map(|(c, ms)| us_per_op(ms, c) * scale)
                    .collect(),
            );
            if name == "stride_scan" && first.lmdb.as_ref().is_some_and(|l| l.scan.is_some()) {
                row = row.with_reference(
                    "lmdb",
                    runs.iter()
                        .filter_map(|r| r.lmdb.as_ref().and_then(|l| l.scan))
                        .map(|(c, ms)| us_per_op(ms, c) * scale)
                        .collect(),
                );
            }
            rep.rows.push(row);
            rep.rows
                .push(Row::exact(format!("{name}/samples"), "count", c as f64));
        }
    }
    Ok(rep)
}
