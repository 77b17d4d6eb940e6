//! `dlmdb-bench`: our engine and stock LMDB side by side, in one process.
//!
//! [`run_peers`] runs every selected row for both engines through the same
//! generic driver (see [`engine`]), alternating which engine goes first in
//! each round (A/B, B/A, ...) so slow drift on a shared machine hits both
//! equally, and reports the median ns/op per engine and the ratio ours/LMDB.
//!
//! Entry points for the CLI (`dlmdb bench peers`): [`PeersOptions`],
//! [`run_peers`], [`render_text`], [`render_markdown`]; the report is
//! `serde::Serialize` for `--json`.

pub mod args;
pub mod data;
pub mod engine;
pub mod interrupt;
pub mod measure;
mod render;
pub mod report;
pub mod sysinfo;
pub mod workload;

// --- the other suites ---
pub mod compare;
pub mod compress;
pub mod count;
pub mod dupiter;
pub mod dups;
pub mod extra;
pub mod sample;
pub mod scale;
pub mod txns;
pub use dups::run_dups;
pub use extra::{render_suite_markdown, render_suite_text, SuiteOptions, SuiteReport, SuiteRow};
pub use txns::run_txns;
// --- end extra suites ---

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use data::Dataset;
use engine::{Backend, EnvConfig, Lmdb, Ours};
use workload::Workload;

pub use args::PeersArgs;
pub use render::{render_markdown, render_text};

/// What to run. `Default` = the full suite, 5 rounds, durable env flags.
#[derive(Clone, Debug)]
pub struct PeersOptions {
    /// What every suite takes. For peers, `quick` keeps the small sizes
    /// only (10K-entry rows and the 1K x 8 KiB row: seconds, not minutes),
    /// `rounds` is the timed repetitions per engine per row (the median is
    /// reported) and `progress` prints one line per finished row.
    pub suite: SuiteOptions,
    /// Keep only rows whose name contains one of these comma-separated
    /// substrings (case-insensitive), e.g. `rand_get` or `k64/v100/1M,seq_put`.
    pub filter: Option<String>,
    /// Untimed full content check of every environment before its numbers count.
    pub verify: bool,
    /// `mdb_env_open` flags for both engines (0 = LMDB's durable default).
    pub env_flags: u32,
    /// Extra `mdb_env_open` flags for our engine only (e.g. a format flag).
    pub ours_extra_flags: u32,
    /// Map size for every environment, bytes.
    pub map_size: usize,
    /// Run only one engine (for profiling one side with perf/callgrind).
    pub only: Option<EngineSel>,
    /// Repeat short rows until a sample lasts this long. `None` = 40 ms
    /// (10 ms with `quick`); `Some(0)` = never repeat (for callgrind runs).
    pub min_sample_ns: Option<u64>,
}

/// Which engine to run when only one is wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineSel {
    Ours,
    Lmdb,
}

impl EngineSel {
    /// Whether a run limited to `only` (`None`: both engines) runs our
    /// engine (`ours`) or stock LMDB (`!ours`).
    pub fn runs(only: Option<EngineSel>, ours: bool) -> bool {
        only.is_none_or(|e| (e == EngineSel::Ours) == ours)
    }
}

impl Default for PeersOptions {
    fn default() -> Self {
        PeersOptions {
            suite: SuiteOptions::default(),
            filter: None,
            verify: true,
            env_flags: 0,
            ours_extra_flags: 0,
            map_size: 4 << 30,
            only: None,
            min_sample_ns: None,
        }
    }
}

/// One measured row.
#[derive(Clone, Debug, Serialize)]
pub struct PeersRow {
    /// `workload/k<key>/v<value>/<entries>`, e.g. `rand_get/k8/v100/100K`.
    pub name: String,
    pub workload: String,
    pub entries: usize,
    pub key_size: usize,
    pub value_size: usize,
    /// Median over rounds of (elapsed / entries); `None` if the engine failed.
    pub ours_ns_per_op: Option<f64>,
    pub lmdb_ns_per_op: Option<f64>,
    /// `ours_ns_per_op / lmdb_ns_per_op` (< 1 means we are faster).
    pub ratio: Option<f64>,
    pub ours_min_ns_per_op: Option<f64>,
    pub lmdb_min_ns_per_op: Option<f64>,
    /// Ratio of the best rounds. Interference from other processes only adds
    /// time, so on a shared machine this is a useful second opinion.
    pub ratio_min: Option<f64>,
    /// Passes (reads) or fresh environments (writes) summed into one sample,
    /// so that short rows still time tens of milliseconds.
    pub reps_per_sample: usize,
    /// Raw per-round ns/op, in round order.
    pub ours_samples: Vec<f64>,
    pub lmdb_samples: Vec<f64>,
    /// First error met by either engine on this row.
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PeersReport {
    pub ours_version: String,
    pub lmdb_version: String,
    /// True when this binary was built without the dlmdb engine and "ours" is
    /// a second copy of stock LMDB (harness self-test: ratios should be ~1).
    pub ours_is_lmdb: bool,
    /// Rust build profile of the harness ("release" or "debug"); numbers from
    /// a debug build are meaningless (the C code is built at -O0 too).
    pub build_profile: String,
    pub quick: bool,
    pub rounds: usize,
    pub batch_size: usize,
    pub env_flags: u32,
    pub ours_extra_flags: u32,
    pub map_size: usize,
    pub dir: String,
    /// Filesystem type holding `dir` (tmpfs: fsync is nearly free, so write
    /// rows measure engine CPU, not the disk).
    pub dir_fs: String,
    pub machine: report::Machine,
    pub elapsed_secs: f64,
    pub rows: Vec<PeersRow>,
}

/// One (entries, key size, value size) configuration.
#[derive(Clone, Copy, Debug)]
struct Config {
    entries: usize,
    key_size: usize,
    value_size: usize,
}

fn configs(quick: bool) -> Vec<Config> {
    let c = |entries, key_size, value_size| Config {
        entries,
        key_size,
        value_size,
    };
    if quick {
        return vec![c(10_000, 8, 100), c(10_000, 64, 100), c(1_000, 8, 8192)];
    }
    let mut v = Vec::new();
    for ks in [8, 64] {
        for n in [10_000, 100_000, 1_000_000] {
            v.push(c(n, ks, 100));
        }
    }
    v.push(c(1_000, 8, 8192));
    v.push(c(10_000, 8, 8192));
    v
}

/// A count as row names and tables show it: `10M`, `100K`, `20K`, or the
/// plain number when it is not a whole number of thousands.
pub fn short_count(n: u64) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}K", n / 1_000),
        n => n.to_string(),
    }
}

fn row_name(w: Workload, c: &Config) -> String {
    format!(
        "{}/k{}/v{}/{}",
        w.name(),
        c.key_size,
        c.value_size,
        short_count(c.entries as u64)
    )
}

fn matches(filter: &Option<String>, name: &str) -> bool {
    match filter {
        None => true,
        Some(f) => {
            let name = name.to_ascii_lowercase();
            f.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .any(|s| name.contains(&s.to_ascii_lowercase()))
        }
    }
}

use extra::median;

/// Per-engine sample collector: the first error stops that engine's rounds.
#[derive(Default)]
struct Samples {
    ns_per_op: Vec<f64>,
    error: Option<String>,
    /// Not run at all (`PeersOptions::only` names the other engine).
    skip: bool,
}

impl Samples {
    fn record(&mut self, r: Result<u128>, entries: usize) {
        match r {
            Ok(ns) => self.ns_per_op.push(ns as f64 / entries as f64),
            Err(e) => self.error = Some(format!("{e:#}")),
        }
    }

    /// The median ns/op; `None` when the engine failed.
    fn value(&self) -> Option<f64> {
        if self.error.is_some() {
            None
        } else {
            median(&self.ns_per_op)
        }
    }

    /// The best round's ns/op; `None` when the engine failed.
    fn best(&self) -> Option<f64> {
        let min = self.ns_per_op.iter().copied().min_by(|a, b| a.total_cmp(b));
        self.value().and(min)
    }
}

fn make_row(w: Workload, c: &Config, ours: Samples, lmdb: Samples, reps: usize) -> PeersRow {
    let (o, l) = (ours.value(), lmdb.value());
    let (omin, lmin) = (ours.best(), lmdb.best());
    PeersRow {
        name: row_name(w, c),
        workload: w.name().to_string(),
        entries: c.entries,
        key_size: c.key_size,
        value_size: c.value_size,
        ours_ns_per_op: o,
        lmdb_ns_per_op: l,
        ratio: report::ratio(o, l),
        ours_min_ns_per_op: omin,
        lmdb_min_ns_per_op: lmin,
        ratio_min: report::ratio(omin, lmin),
        reps_per_sample: reps.max(1),
        ours_samples: ours.ns_per_op,
        lmdb_samples: lmdb.ns_per_op,
        error: ours.error.or(lmdb.error),
    }
}

struct Runner<'a> {
    opts: &'a PeersOptions,
    env: EnvConfig,
    root: &'a Path,
    seq: usize,
    /// Short rows are repeated until one sample lasts at least this long.
    min_sample_ns: u128,
}

/// Repetitions needed for a sample to last `min_ns`, given one took `one_ns`.
fn calibrate(one_ns: u128, min_ns: u128) -> usize {
    (min_ns.div_ceil(one_ns.max(1))).clamp(1, 10_000) as usize
}

/// One read sample: `reps` passes of `w` (calibrated on first use), run at
/// a stack depth of its own (see [`measure::at_stack_depth`]).
fn read_sample<B: Backend>(
    w: Workload,
    b: &mut B,
    d: &Dataset,
    reps: &mut usize,
    min_ns: u128,
) -> Result<(u128, u64)> {
    measure::at_next_stack_depth(|| read_passes(w, b, d, reps, min_ns))
}

fn read_passes<B: Backend>(
    w: Workload,
    b: &mut B,
    d: &Dataset,
    reps: &mut usize,
    min_ns: u128,
) -> Result<(u128, u64)> {
    let (mut total, sum) = workload::run_read(w, b, d)?;
    if *reps == 0 {
        *reps = calibrate(total, min_ns);
    }
    for _ in 1..*reps {
        let (ns, s) = workload::run_read(w, b, d)?;
        anyhow::ensure!(
            s == sum,
            "{}: {} checksum changed between passes",
            B::LABEL,
            w.name()
        );
        total += ns;
    }
    Ok((total, sum))
}

impl Runner<'_> {
    /// A fresh, empty scratch directory for one environment.
    fn fresh_dir(&mut self, label: &str) -> Result<PathBuf> {
        self.seq += 1;
        let dir = self.root.join(format!("{label}-{}", self.seq));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(dir)
    }

    /// One timed write sample for engine `B`: `reps` fresh envs, each loaded
    /// by `w` and discarded; returns the summed ns. Env setup is untimed.
    fn write_sample<B: Backend>(
        &mut self,
        w: Workload,
        d: &Dataset,
        reps: usize,
        check: bool,
    ) -> Result<u128> {
        let mut total = 0;
        for rep in 0..reps {
            let dir = self.fresh_dir(B::LABEL)?;
            let r = (|| -> Result<u128> {
                let mut b = B::open(&dir, &self.env)?;
                let ns = measure::at_next_stack_depth(|| workload::run_write(w, &mut b, d))?;
                if check && rep == 0 {
                    workload::verify(&mut b, d)?;
                }
                Ok(ns)
            })();
            let _ = std::fs::remove_dir_all(&dir);
            total += r?;
        }
        Ok(total)
    }

    fn write_row(&mut self, w: Workload, c: &Config, d: &Dataset) -> PeersRow {
        let (mut ours, mut lmdb) = self.initial_samples();
        let mut reps = 0;
        for r in 0..self.opts.suite.rounds {
            let check = self.opts.verify && r == 0;
            // Alternate who goes first so drift and warm-up hit both engines.
            for ours_turn in extra::turns(r) {
                let (s, res) = if ours_turn {
                    if ours.error.is_some() || ours.skip {
                        continue;
                    }
                    (&mut ours, self.sample_write::<Ours>(w, d, &mut reps, check))
                } else {
                    if lmdb.error.is_some() || lmdb.skip {
                        continue;
                    }
                    (&mut lmdb, self.sample_write::<Lmdb>(w, d, &mut reps, check))
                };
                s.record(res, c.entries * reps.max(1));
            }
        }
        make_row(w, c, ours, lmdb, reps)
    }

    /// Take one sample; the very first sample of a row (reps == 0) also
    /// calibrates how many repetitions make a sample last `min_sample_ns`.
    fn sample_write<B: Backend>(
        &mut self,
        w: Workload,
        d: &Dataset,
        reps: &mut usize,
        check: bool,
    ) -> Result<u128> {
        if *reps == 0 {
            let ns = self.write_sample::<B>(w, d, 1, check)?;
            *reps = calibrate(ns, self.min_sample_ns);
            if *reps == 1 {
                return Ok(ns);
            }
            let more = self.write_sample::<B>(w, d, *reps - 1, false)?;
            return Ok(ns + more);
        }
        self.write_sample::<B>(w, d, *reps, check)
    }

    /// Open and load one env for the read rows; also returns its directory.
    fn loaded<B: Backend>(&mut self, d: &Dataset) -> Result<(B, PathBuf)> {
        let dir = self.fresh_dir(B::LABEL)?;
        let r = (|| -> Result<B> {
            let mut b = B::open(&dir, &self.env)?;
            workload::load(&mut b, d)?;
            if self.opts.verify {
                workload::verify(&mut b, d)?;
            }
            Ok(b)
        })();
        match r {
            Ok(b) => Ok((b, dir)),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }

    /// A freshly loaded env of engine `B` for one round of read rows, or
    /// `None` when the engine is skipped or has already failed (a load
    /// failure is recorded as that engine's error in every row).
    fn round_env<B: Backend>(
        &mut self,
        d: &Dataset,
        skip: bool,
        failed: &mut Option<String>,
    ) -> Option<(B, PathBuf)> {
        if skip || failed.is_some() {
            return None;
        }
        match self.loaded::<B>(d) {
            Ok(x) => Some(x),
            Err(e) => {
                *failed = Some(format!("{e:#}"));
                None
            }
        }
    }

    /// The read rows of one configuration. Every round loads a fresh env for
    /// each engine (in the round's turn order) and times every workload on
    /// it: where a store's pages land in memory moves a scan by as much as
    /// the engines differ, so one store per engine for all rounds would make
    /// the rounds agree with each other while a second run disagrees. Each
    /// round's pair of envs is closed and removed before the next is loaded.
    fn read_rows(&mut self, ws: &[Workload], c: &Config, d: &Dataset, out: &mut Vec<PeersRow>) {
        let (so0, sl0) = self.initial_samples();
        let (ours_skip, lmdb_skip) = (so0.skip, sl0.skip);
        let mut rows: Vec<(Samples, Samples)> = ws.iter().map(|_| self.initial_samples()).collect();
        let mut sums: Vec<[Option<u64>; 2]> = vec![[None, None]; ws.len()];
        let mut reps = vec![0usize; ws.len()];
        let (mut ours_failed, mut lmdb_failed) = (None, None);
        for r in 0..self.opts.suite.rounds {
            let turns = extra::turns(r);
            let (mut ours, mut lmdb) = (None, None);
            for ours_turn in turns {
                if ours_turn {
                    ours = self.round_env::<Ours>(d, ours_skip, &mut ours_failed);
                } else {
                    lmdb = self.round_env::<Lmdb>(d, lmdb_skip, &mut lmdb_failed);
                }
            }
            for (i, &w) in ws.iter().enumerate() {
                let (so, sl) = &mut rows[i];
                for ours_turn in turns {
                    let res = if ours_turn {
                        match (&mut ours, so.error.is_none()) {
                            (Some((b, _)), true) => {
                                read_sample(w, b, d, &mut reps[i], self.min_sample_ns)
                            }
                            _ => continue,
                        }
                    } else {
                        match (&mut lmdb, sl.error.is_none()) {
                            (Some((b, _)), true) => {
                                read_sample(w, b, d, &mut reps[i], self.min_sample_ns)
                            }
                            _ => continue,
                        }
                    };
                    let res = res.map(|(ns, sum)| {
                        sums[i][ours_turn as usize] = Some(sum);
                        ns
                    });
                    let s = if ours_turn { &mut *so } else { &mut *sl };
                    s.record(res, c.entries * reps[i].max(1));
                }
            }
            // Close both envs before their files go.
            let dirs: Vec<PathBuf> = [ours.map(|(_, p)| p), lmdb.map(|(_, p)| p)]
                .into_iter()
                .flatten()
                .collect();
            for dir in dirs {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
        for (i, ((mut so, mut sl), &w)) in rows.into_iter().zip(ws).enumerate() {
            for (s, failed) in [(&mut so, &ours_failed), (&mut sl, &lmdb_failed)] {
                if s.error.is_none() && !s.skip {
                    s.error = failed.clone();
                }
            }
            if let [Some(b), Some(a)] = sums[i] {
                if a != b && so.error.is_none() {
                    so.error = Some(format!(
                        "{}: checksum differs from LMDB ({a:#x} vs {b:#x})",
                        w.name()
                    ));
                }
            }
            let row = make_row(w, c, so, sl, reps[i]);
            self.progress(&row);
            out.push(row);
        }
    }

    /// Fresh collectors; an engine excluded by `only` is marked skipped.
    fn initial_samples(&self) -> (Samples, Samples) {
        let side = |ours| Samples {
            skip: !EngineSel::runs(self.opts.only, ours),
            ..Samples::default()
        };
        (side(true), side(false))
    }

    fn progress(&self, row: &PeersRow) {
        if self.opts.suite.progress {
            eprintln!("{}", render::row_line(row));
        }
    }
}

/// Run the selected rows for both engines and collect the report.
pub fn run_peers(opts: &PeersOptions) -> Result<PeersReport> {
    anyhow::ensure!(opts.suite.rounds >= 1, "rounds must be at least 1");
    let started = std::time::Instant::now();
    let loadavg_start = sysinfo::loadavg();
    let parent = extra::scratch_parent(&opts.suite);
    let scratch = extra::scratch_in(&parent, "dlmdb-bench-")?;
    let mut runner = Runner {
        opts,
        env: EnvConfig {
            map_size: opts.map_size,
            env_flags: opts.env_flags,
            ours_extra_flags: opts.ours_extra_flags,
        },
        root: scratch.path(),
        seq: 0,
        min_sample_ns: opts
            .min_sample_ns
            .map(u128::from)
            .unwrap_or(if opts.suite.quick {
                10_000_000
            } else {
                40_000_000
            }),
    };
    let mut rows = Vec::new();
    for c in configs(opts.suite.quick) {
        let selected: Vec<Workload> = Workload::ALL
            .into_iter()
            .filter(|&w| matches(&opts.filter, &row_name(w, &c)))
            .collect();
        if selected.is_empty() {
            continue;
        }
        let d = Dataset::new(
            c.entries,
            c.key_size,
            c.value_size,
            0x5EED_0000 + c.entries as u64,
        );
        for &w in selected.iter().filter(|w| w.is_write()) {
            let row = runner.write_row(w, &c, &d);
            runner.progress(&row);
            rows.push(row);
        }
        let reads: Vec<Workload> = selected.iter().copied().filter(|w| !w.is_write()).collect();
        if !reads.is_empty() {
            runner.read_rows(&reads, &c, &d, &mut rows);
        }
    }
    let dir = scratch.path().display().to_string();
    drop(scratch);
    Ok(PeersReport {
        ours_version: Ours::version(),
        lmdb_version: Lmdb::version(),
        ours_is_lmdb: engine::OURS_IS_LMDB,
        build_profile: report::build_profile().to_string(),
        quick: opts.suite.quick,
        rounds: opts.suite.rounds,
        batch_size: workload::BATCH,
        env_flags: opts.env_flags,
        ours_extra_flags: opts.ours_extra_flags,
        map_size: opts.map_size,
        dir_fs: sysinfo::fs_type(&parent).unwrap_or_else(|| "?".into()),
        dir,
        machine: report::Machine {
            loadavg_start,
            loadavg_end: sysinfo::loadavg(),
            ..report::Machine::now()
        },
        elapsed_secs: started.elapsed().as_secs_f64(),
        rows,
    })
}

/// Names of every row `run_peers` can produce for these sizes (for
/// checking a `--filter` before running).
pub fn peers_row_names(quick: bool) -> Vec<String> {
    configs(quick)
        .iter()
        .flat_map(|c| Workload::ALL.into_iter().map(move |w| row_name(w, c)))
        .collect()
}

/// A `--filter` that selects no row is a usage error.
pub fn check_peers_filter(opts: &PeersOptions) -> Result<(), String> {
    match &opts.filter {
        Some(f) if !peers_row_names(opts.suite.quick).iter().any(|n| matches(&opts.filter, n)) => Err(
            format!("--filter {f:?} matches no row of suite peers (rows look like rand_get/k8/v100/10K)"),
        ),
        _ => Ok(()),
    }
}

/// The peers report in the common report shape: value = our median ns/op,
/// reference = stock LMDB's.
pub fn peers_report(p: &PeersReport) -> report::Report {
    let mut rep =
        report::Report::new("peers", report::Measure::Wall, p.quick, p.rounds).with_peer();
    rep.peer_version = Some(p.lmdb_version.clone());
    rep.machine = p.machine.clone();
    rep.measure = report::Measure::current();
    rep.elapsed_secs = p.elapsed_secs;
    rep.options = serde_json::json!({
        "quick": p.quick,
        "rounds": p.rounds,
        "batch_size": p.batch_size,
        "env_flags": p.env_flags,
        "ours_extra_flags": p.ours_extra_flags,
        "map_size": p.map_size,
        "dir": p.dir,
        "dir_fs": p.dir_fs,
        "ours_is_lmdb": p.ours_is_lmdb,
    });
    let unit = if measure::instructions() {
        "instr/op"
    } else {
        "ns/op"
    };
    rep.rows = p
        .rows
        .iter()
        .map(|r| {
            report::Row::measured(r.name.clone(), unit, true, r.ours_samples.clone())
                .with_reference("lmdb", r.lmdb_samples.clone())
                .with_note(format!("{} reps per sample", r.reps_per_sample))
                .with_error(r.error.clone())
        })
        .collect();
    rep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_matching() {
        let f = Some("RAND_GET, k64/v100/1M".to_string());
        assert!(matches(&f, "rand_get/k8/v100/10K"));
        assert!(matches(&f, "seq_put/k64/v100/1M"));
        assert!(!matches(&f, "seq_put/k64/v100/10K"));
        assert!(matches(&None, "anything"));
    }

    #[test]
    fn short_counts() {
        assert_eq!(short_count(10_000_000), "10M");
        assert_eq!(short_count(20_000), "20K");
        assert_eq!(short_count(12_345), "12345");
        assert_eq!(short_count(0), "0");
    }

    #[test]
    fn median_odd_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    /// Quick sizes, `rounds` rounds, scratch in `dir`, no progress.
    fn quick_opts(dir: &Path, rounds: usize, map_size: usize) -> PeersOptions {
        PeersOptions {
            suite: SuiteOptions {
                quick: true,
                rounds,
                dir: Some(dir.to_path_buf()),
                progress: false,
            },
            map_size,
            ..Default::default()
        }
    }

    #[test]
    fn read_rows_load_fresh_envs_every_round() {
        let dir = tempfile::tempdir().unwrap();
        let opts = PeersOptions {
            min_sample_ns: Some(0),
            ..quick_opts(dir.path(), 3, 64 << 20)
        };
        let mut runner = Runner {
            opts: &opts,
            env: EnvConfig {
                map_size: opts.map_size,
                env_flags: 0,
                ours_extra_flags: 0,
            },
            root: dir.path(),
            seq: 0,
            min_sample_ns: 0,
        };
        let c = Config {
            entries: 500,
            key_size: 8,
            value_size: 100,
        };
        let d = Dataset::new(c.entries, c.key_size, c.value_size, 7);
        let ws = [Workload::SeqRead, Workload::RandGet, Workload::RandSeek];
        let mut rows = Vec::new();
        runner.read_rows(&ws, &c, &d, &mut rows);
        // One env per engine per round, each removed once its round ends.
        assert_eq!(runner.seq, 6);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert_eq!(rows.len(), 3);
        for r in &rows {
            assert!(r.error.is_none(), "{}: {:?}", r.name, r.error);
            assert_eq!(r.ours_samples.len(), 3, "{}", r.name);
            assert_eq!(r.lmdb_samples.len(), 3, "{}", r.name);
        }
    }

    #[test]
    fn tiny_run_produces_every_row() {
        let dir = tempfile::tempdir().unwrap();
        let opts = PeersOptions {
            filter: Some("k8/v100/10K".into()),
            ..quick_opts(dir.path(), 1, 256 << 20)
        };
        let rep = run_peers(&opts).unwrap();
        assert_eq!(rep.rows.len(), 6, "{:#?}", rep.rows);
        for r in &rep.rows {
            assert!(r.error.is_none(), "{}: {:?}", r.name, r.error);
            assert!(r.ratio.is_some());
        }
        let md = render_markdown(&rep);
        assert!(md.contains("| rand_seek/k8/v100/10K |"), "{md}");
        serde_json::to_string(&rep).unwrap();
    }
}
