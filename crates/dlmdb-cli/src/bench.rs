//! `dlmdb bench ...`: argument parsing and output of the benchmark suites.
//! The measuring code lives in the `dlmdb-bench` crate; every suite turns
//! its results into the common report and prints it through
//! [`OutputArgs::emit`], which also decides the exit status.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Subcommand;
use dlmdb_bench::args::{OutputArgs, EXIT_FAIL, EXIT_OK, EXIT_USAGE};
use dlmdb_bench::compress::{self, CompressOptions};
use dlmdb_bench::count::{self, CountOptions};
use dlmdb_bench::dupiter::{self, DupIterOptions};
use dlmdb_bench::report::Report;
use dlmdb_bench::sample::{self, Mode, SampleOptions};

#[derive(Subcommand)]
pub enum BenchCmd {
    /// Our engine vs stock LMDB on stores the benchmark creates itself.
    #[command(
        after_help = "Examples:\n  dlmdb bench peers --quick\n  dlmdb bench peers --filter rand_get --rounds 9 --json > peers.json"
    )]
    Peers(dlmdb_bench::PeersArgs),
    /// DUPSORT rows vs stock LMDB, and mdb_cursor_list_dup vs an MDB_NEXT_DUP loop.
    #[command(
        after_help = "Examples:\n  dlmdb bench dups --quick\n  dlmdb bench dups --rounds 7 --markdown --save-json dups.json"
    )]
    Dups(SuiteArgs),
    /// Read/write transaction costs and 4 readers + 1 writer, vs stock LMDB.
    #[command(
        after_help = "Examples:\n  dlmdb bench txns --quick\n  dlmdb bench txns --json > txns.json"
    )]
    Txns(SuiteArgs),
    Count(CountArgs),
    Sample(SampleArgs),
    Compress(CompressArgs),
    #[command(name = "dup-iter")]
    DupIter(DupIterArgs),
    Compare(CompareArgs),
}

/// Options of `bench dups|txns`.
#[derive(clap::Args)]
pub struct SuiteArgs {
    /// Small sizes (seconds).
    #[arg(long)]
    quick: bool,
    /// Parent directory for scratch environments (default /dev/shm).
    #[arg(long)]
    dir: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
}

/// DLMDB's count_bench: counted inserts, range counts and ranks vs naive ways.
#[derive(clap::Args)]
#[command(
    alias = "counted",
    after_help = "Prints count_bench's lines. (`counted` is an alias.)\n\nExamples:\n  dlmdb bench count --quick\n  dlmdb bench count --entries 100000 --shuffle --json > count.json"
)]
pub struct CountArgs {
    /// Number of keys [default: 50000; --quick 5000].
    #[arg(long)]
    entries: Option<u64>,
    /// Number of range/rank queries [default: 5000; --quick 500].
    #[arg(long)]
    queries: Option<u64>,
    /// Range width in key indexes [default: 200].
    #[arg(long)]
    span: Option<u64>,
    /// Values per key in the DUPSORT phases; 0 skips them [default: 8; --quick 4].
    #[arg(long)]
    dups: Option<u64>,
    /// Insert in a pseudo-random order instead of ascending.
    #[arg(long)]
    shuffle: bool,
    /// Small sizes (seconds).
    #[arg(long)]
    quick: bool,
    /// Directory for the bench_tmp_* and benchdb_count* environments
    /// [default: a scratch dir in /dev/shm].
    #[arg(long)]
    dir: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
}

/// DLMDB's sample_bench: rank sampling and stride scans of a counted DB.
#[derive(clap::Args)]
#[command(
    after_help = "Prints sample_bench's lines.\n\nExamples:\n  dlmdb bench sample --quick\n  dlmdb bench sample --entries 1000000 --dups 4 --mode warm"
)]
pub struct SampleArgs {
    /// Total entries, duplicates included [default: 10000000; --quick 200000].
    #[arg(long)]
    entries: Option<u64>,
    /// Samples per pass [default: 1000].
    #[arg(long)]
    samples: Option<u64>,
    /// Rank step; 0 = entries / samples [default: 0].
    #[arg(long)]
    stride: Option<u64>,
    /// Puts per write txn; 0 = 100000 [default: 250000; --quick 50000].
    #[arg(long)]
    batch: Option<u64>,
    /// Values per key; > 1 makes the DB DUPSORT [default: 1].
    #[arg(long)]
    dups: Option<u64>,
    /// warm, scan or both.
    #[arg(long, default_value = "both")]
    mode: Mode,
    /// Environment directory [default: a scratch dir in /dev/shm].
    #[arg(long)]
    path: Option<PathBuf>,
    /// Map size in bytes; 0 = library default [default: 17179869184].
    #[arg(long)]
    mapsize: Option<u64>,
    /// Also run the population and the stride scan on stock LMDB (a DB
    /// without MDB_COUNTED; the scan starts at MDB_FIRST).
    #[arg(long)]
    peers: bool,
    /// Small sizes (seconds).
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    out: OutputArgs,
}

/// dup_iter_bench: mdb_cursor_list_dup vs an MDB_NEXT_DUP loop over every key.
#[derive(clap::Args)]
#[command(
    after_help = "Prints dup_iter_bench's lines.\n\nExamples:\n  dlmdb bench dup-iter --quick\n  dlmdb bench dup-iter --keys 100000 --dups 10 --peers"
)]
pub struct DupIterArgs {
    /// Keys [default: 50000; --quick 5000].
    #[arg(long)]
    keys: Option<u64>,
    /// Values per key [default: 20].
    #[arg(long)]
    dups: Option<u64>,
    /// Passes over all keys per timed pass [default: 5].
    #[arg(long)]
    runs: Option<u64>,
    /// Map size in bytes [default: 536870912].
    #[arg(long)]
    mapsize: Option<u64>,
    /// Environment directory [default: a scratch dir in /dev/shm].
    #[arg(long)]
    path: Option<PathBuf>,
    /// Also run the NEXT_DUP pass on stock LMDB (DUPSORT without DLMDB's flags).
    #[arg(long)]
    peers: bool,
    /// Small sizes (seconds).
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    out: OutputArgs,
}

/// Compare two JSON reports of one suite: the regression gate.
#[derive(clap::Args)]
#[command(
    long_about = "Compare two JSON reports (`--json` or `--save-json` output) of the same suite. \
A row regresses when its change exceeds both its threshold and the measured noise of the two \
runs (the sum of their relative spreads, (max - min) / median of the samples). Exact metrics \
(sizes, pages, depth, entries) regress on any change; rows missing from NEW or failed in NEW \
regress too.\n\nExit status: 0 no regression, 1 regression, 2 usage or schema error.",
    after_help = "Examples:\n  dlmdb bench compare base.json new.json\n  dlmdb bench compare --max-regression 5% --row-threshold rand_get=20% base.json new.json\n  dlmdb bench compare --json base.json new.json"
)]
pub struct CompareArgs {
    /// The earlier report.
    base: PathBuf,
    /// The report to check.
    new: PathBuf,
    /// Largest tolerated slowdown of a row, in percent.
    #[arg(long, default_value = "10%", value_parser = dlmdb_bench::compare::parse_percent)]
    max_regression: f64,
    /// PATTERN=PERCENT: rows whose name contains PATTERN use this threshold
    /// (first match wins; repeatable).
    #[arg(long, value_parser = dlmdb_bench::compare::parse_override)]
    row_threshold: Vec<(String, f64)>,
    /// Only rows whose name contains one of these comma-separated substrings.
    #[arg(long)]
    filter: Option<String>,
    /// Print the differences as JSON.
    #[arg(long)]
    json: bool,
}

/// DLMDB's compress_bench: plain vs prefix-compressed DBs (and DUPSORT twins).
#[derive(clap::Args)]
#[command(
    long_about = "DLMDB's compress_bench workload: for each variant (plain, prefix, the -C \
variants, and with -D > 1 their DUPSORT twins), insert, update, delete, reinsert, random reads \
(cold, warm) and range scans (cold, warm), then sizes and tree shape, and each variant relative \
to its uncompressed baseline. Prints the same lines as compress_bench. Numbers accept 0x hex and \
leading-0 octal as compress_bench does.",
    after_help = "Examples:\n  dlmdb bench compress --quick\n  dlmdb bench compress -n 200000 -r 100000 -m 4096 -U 100000 -X 100000 -D 20\n  dlmdb bench compress -D 20 --peers --json > compress.json"
)]
pub struct CompressArgs {
    /// Entries (key/value pairs) [default: 200000].
    #[arg(short = 'n', value_parser = parse_c_number)]
    entries: Option<u64>,
    /// Random reads per read pass; 0 = entries [default: 200000].
    #[arg(short = 'r', value_parser = parse_c_number)]
    reads: Option<u64>,
    /// Value bytes [default: 64].
    #[arg(short = 'v', value_parser = parse_c_number)]
    value_size: Option<u64>,
    /// Key prefix length (count of 'p' bytes before the 16 hex digits) [default: 16].
    #[arg(short = 'p', value_parser = parse_c_number)]
    prefix_len: Option<u64>,
    /// Map size in MiB [default: 2048].
    #[arg(short = 'm', value_parser = parse_c_number)]
    map_mib: Option<u64>,
    /// Seed of every random stream (32 bits) [default: 1].
    #[arg(short = 's', value_parser = parse_c_number)]
    seed: Option<u64>,
    /// Directory prefix; a variant's environment is <prefix>_<label>
    /// [default: compress_bench inside a scratch dir in /dev/shm, or in the
    /// current directory with -k].
    #[arg(short = 'd', value_name = "PREFIX")]
    dir_prefix: Option<PathBuf>,
    /// Add a variant: label:mode or mode (prefix|compressed|on|plain|baseline|off);
    /// a lone "off" or "none" removes the default prefix variant.
    #[arg(short = 'C', value_name = "SPEC")]
    variant: Vec<String>,
    /// Values per key: when > 1 every variant gets a DUPSORT twin <label>-dups [default: 0].
    #[arg(short = 'D', value_parser = parse_c_number)]
    dups: Option<u64>,
    /// Random updates [default: 0].
    #[arg(short = 'U', value_parser = parse_c_number)]
    updates: Option<u64>,
    /// Deletes, then reinserts of the same entries (capped at entries) [default: 0].
    #[arg(short = 'X', value_parser = parse_c_number)]
    deletes: Option<u64>,
    /// Range scans per scan pass [default: 1000].
    #[arg(short = 'R', value_parser = parse_c_number)]
    range_scans: Option<u64>,
    /// Items per range scan; 0 (or -R 0) = one full scan [default: 256].
    #[arg(short = 'L', value_parser = parse_c_number)]
    range_len: Option<u64>,
    /// Compacting copy ("repack") after the metrics.
    #[arg(short = 'P')]
    repack: bool,
    /// Keep the environment directories.
    #[arg(short = 'k')]
    keep: bool,
    /// Small sizes (seconds): -n 20000 -r 20000 -U 2000 -X 2000 -D 10 -R 200
    /// -m 256, each unless given.
    #[arg(long)]
    quick: bool,
    /// Also run the uncompressed unique-key variants on stock LMDB (without MDB_COUNTED).
    #[arg(long)]
    peers: bool,
    #[command(flatten)]
    out: OutputArgs,
}

/// A number as C's `strtoull(s, NULL, 0)` reads a whole argument: `0x`/`0X`
/// hex, a leading `0` octal, else decimal. Trailing garbage is refused.
pub fn parse_c_number(s: &str) -> Result<u64, String> {
    let t = s.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    let r = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8)
    } else {
        t.parse()
    };
    r.map_err(|e| format!("'{s}' is not a number: {e}"))
}

/// The default of a size option: `small` under `--quick`, else `full`.
fn sized(quick: bool, small: u64, full: u64) -> u64 {
    if quick {
        small
    } else {
        full
    }
}

/// A scratch directory for a suite, unless the user named one.
fn workdir(suite: &str, given: Option<&Path>) -> Result<(PathBuf, Option<tempfile_guard::Guard>)> {
    match given {
        // The suites register the environment directories they create in
        // a named directory (only their files are removed on Ctrl-C).
        Some(p) => Ok((p.to_path_buf(), None)),
        None => {
            let t = dlmdb_bench::extra::scratch_dir(suite, None)?;
            Ok((t.path().to_path_buf(), Some(tempfile_guard::Guard(t))))
        }
    }
}

/// A suite's environment directory: `given`, else `name` inside a scratch
/// directory.
fn env_dir(
    suite: &str,
    given: Option<&Path>,
    name: &str,
) -> Result<(PathBuf, Option<tempfile_guard::Guard>)> {
    match given {
        Some(p) => workdir(suite, Some(p)),
        None => {
            let (dir, g) = workdir(suite, None)?;
            Ok((dir.join(name), g))
        }
    }
}

mod tempfile_guard {
    /// Keeps a scratch directory alive; removes it when dropped.
    pub struct Guard(#[allow(dead_code)] pub dlmdb_bench::extra::TempDir);
}

/// A spinner on stderr showing the running phase (terminals only).
fn spinner(out: &OutputArgs) -> Option<indicatif::ProgressBar> {
    out.progress().then(|| {
        let b = indicatif::ProgressBar::new_spinner();
        b.enable_steady_tick(std::time::Duration::from_millis(200));
        b
    })
}

/// Run the rounds of a DLMDB program suite, print, return the exit status.
fn run_rounds<T>(
    out: &OutputArgs,
    mut round: impl FnMut(&dyn Fn(&str)) -> Result<T>,
    text: impl Fn(&T) -> String,
    report: impl Fn(&[T]) -> Result<Report>,
    quick: bool,
) -> Result<i32> {
    if let Err(e) = out.apply_measure() {
        eprintln!("dlmdb bench: {e}");
        return Ok(EXIT_USAGE);
    }
    let started = std::time::Instant::now();
    let load_at_start = dlmdb_bench::sysinfo::loadavg();
    let bar = spinner(out);
    let runs = out.repeat(1, |i| {
        let tick = |phase: &str| {
            if let Some(b) = &bar {
                b.set_message(format!("round {}: {phase}", i + 1));
            }
        };
        round(&tick)
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let runs = runs?;
    let mut rep = report(&runs)?;
    rep.quick = quick;
    rep.machine.loadavg_start = load_at_start;
    rep.finish(started);
    let txt: String = runs.iter().map(&text).collect::<Vec<_>>().join("\n");
    Ok(out.emit(rep, Some(txt)))
}

/// [`run_rounds`] for a suite whose round populates and measures in one
/// phase; options that `valid` refused fail the run before it starts.
fn run_single_rounds<T>(
    out: &OutputArgs,
    valid: Result<(), String>,
    mut round: impl FnMut() -> Result<T>,
    text: impl Fn(&T) -> String,
    report: impl Fn(&[T]) -> Result<Report>,
    quick: bool,
) -> Result<i32> {
    if let Err(e) = valid {
        eprintln!("{e}");
        return Ok(EXIT_FAIL);
    }
    run_rounds(
        out,
        |tick| {
            tick("population and passes");
            round()
        },
        text,
        report,
        quick,
    )
}

impl CompressArgs {
    fn options(&self) -> CompressOptions {
        let d = CompressOptions::default();
        let q = |small, full| sized(self.quick, small, full);
        CompressOptions {
            entries: self.entries.unwrap_or(q(20_000, d.entries)),
            reads: self.reads.unwrap_or(q(20_000, d.reads)),
            value_size: self.value_size.map_or(d.value_size, |v| v as usize),
            prefix_len: self.prefix_len.map_or(d.prefix_len, |v| v as usize),
            map_mib: self.map_mib.unwrap_or(q(256, d.map_mib)),
            seed: self.seed.map_or(d.seed, |s| s as u32),
            dir_prefix: self.dir_prefix.clone().unwrap_or(d.dir_prefix),
            variant_specs: self.variant.clone(),
            dups: self.dups.unwrap_or(q(10, d.dups)),
            updates: self.updates.unwrap_or(q(2_000, d.updates)),
            deletes: self.deletes.unwrap_or(q(2_000, d.deletes)),
            range_scans: self.range_scans.unwrap_or(q(200, d.range_scans)),
            range_len: self.range_len.unwrap_or(d.range_len),
            repack: self.repack,
            keep: self.keep,
            peers: self.peers,
        }
    }

    fn run(&self) -> Result<i32> {
        let mut o = self.options();
        if o.entries == 0 {
            eprintln!("Entry count must be > 0");
            return Ok(EXIT_FAIL);
        }
        if let Err(e) = compress::variants(&o) {
            eprintln!("dlmdb bench compress: {e}");
            return Ok(EXIT_USAGE);
        }
        // Without -d the environments go to a scratch dir (removed at the
        // end); with -k and no -d they stay in the current directory, as
        // compress_bench leaves them.
        let _scratch = if self.dir_prefix.is_none() && !o.keep {
            let (dir, g) = workdir("compress", None)?;
            o.dir_prefix = dir.join("compress_bench");
            g
        } else {
            None
        };
        if let Some(w) = compress::mapsize_warning(&o) {
            eprintln!("{w}");
        }
        // Each round starts the variant order one place further on (see
        // run_compress).
        let mut round = 0;
        run_rounds(
            &self.out,
            |tick| {
                round += 1;
                compress::run_compress(&o, round - 1, &mut |v, p| tick(&format!("{v}: {p}")))
            },
            compress::render_compress_text,
            compress::compress_report,
            self.quick,
        )
    }
}

impl CountArgs {
    fn run(&self) -> Result<i32> {
        let q = |small, full| sized(self.quick, small, full);
        let d = CountOptions::default();
        let (root, _g) = workdir("count", self.dir.as_deref())?;
        let o = CountOptions {
            entries: self.entries.unwrap_or(q(5000, d.entries)),
            queries: self.queries.unwrap_or(q(500, d.queries)),
            span: self.span.unwrap_or(d.span),
            dups: self.dups.unwrap_or(q(4, d.dups)),
            shuffle: self.shuffle,
            root,
        };
        run_rounds(
            &self.out,
            |tick| count::run_count(&o, &mut |p| tick(p)),
            count::render_count_text,
            count::count_report,
            self.quick,
        )
    }
}

impl SampleArgs {
    fn options(&self, path: PathBuf) -> SampleOptions {
        let q = |small, full| sized(self.quick, small, full);
        let d = SampleOptions::default();
        SampleOptions {
            entries: self.entries.unwrap_or(q(200_000, d.entries)),
            samples: self.samples.unwrap_or(d.samples),
            stride: self.stride.unwrap_or(d.stride),
            batch: self.batch.unwrap_or(q(50_000, d.batch)),
            dups: self.dups.unwrap_or(d.dups),
            mode: self.mode,
            path,
            mapsize: self.mapsize.unwrap_or(q(1 << 30, d.mapsize)),
            peers: self.peers,
        }
    }

    fn run(&self) -> Result<i32> {
        let (path, _g) = env_dir("sample", self.path.as_deref(), "bench_sample")?;
        let o = self.options(path);
        run_single_rounds(
            &self.out,
            o.validate(),
            || sample::run_sample(&o),
            sample::render_sample_text,
            sample::sample_report,
            self.quick,
        )
    }
}

impl DupIterArgs {
    fn options(&self, path: PathBuf) -> DupIterOptions {
        let d = DupIterOptions::default();
        DupIterOptions {
            keys: self.keys.unwrap_or(sized(self.quick, 5000, d.keys)),
            dups: self.dups.unwrap_or(d.dups),
            runs: self.runs.unwrap_or(d.runs),
            mapsize: self.mapsize.unwrap_or(d.mapsize),
            path,
            peers: self.peers,
        }
    }

    fn run(&self) -> Result<i32> {
        let (path, _g) = env_dir("dup-iter", self.path.as_deref(), "dup_iter_bench_env")?;
        let o = self.options(path);
        run_single_rounds(
            &self.out,
            dupiter::validate(&o),
            || dupiter::run_dup_iter(&o),
            dupiter::render_dup_iter_text,
            dupiter::dup_iter_report,
            self.quick,
        )
    }
}

impl SuiteArgs {
    fn run(&self, run: fn(&dlmdb_bench::SuiteOptions) -> Result<Report>) -> Result<i32> {
        if let Err(e) = self.out.apply_measure() {
            eprintln!("dlmdb bench: {e}");
            return Ok(EXIT_USAGE);
        }
        let opts = dlmdb_bench::SuiteOptions {
            quick: self.quick,
            rounds: self.out.rounds.unwrap_or(5),
            dir: self.dir.clone(),
            progress: self.out.progress(),
        };
        // --min-time: run the whole suite again until the time has passed,
        // folding the samples of every pass into one report.
        let min = std::time::Duration::from_secs_f64(self.out.min_time.unwrap_or(0.0).max(0.0));
        let t0 = std::time::Instant::now();
        let mut rep = run(&opts)?;
        while t0.elapsed() < min {
            let more = run(&opts)?;
            rep.absorb(&more).map_err(anyhow::Error::msg)?;
        }
        Ok(self.out.emit(rep, None))
    }
}

impl CompareArgs {
    fn run(&self) -> i32 {
        match self.compare() {
            Ok(0) => EXIT_OK,
            Ok(_) => EXIT_FAIL,
            Err(e) => {
                eprintln!("dlmdb bench compare: {e}");
                EXIT_USAGE
            }
        }
    }

    /// Read, filter and compare the two reports and print the comparison;
    /// returns the number of regressions, or what made the comparison
    /// impossible.
    fn compare(&self) -> Result<usize, String> {
        let load = |p: &Path| -> Result<Report, String> {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            Report::from_json(&text).map_err(|e| format!("{}: {e}", p.display()))
        };
        let (mut base, mut new) = (load(&self.base)?, load(&self.new)?);
        if let Some(f) = &self.filter {
            base.apply_filter(f)?;
            new.apply_filter(f)?;
        }
        let c =
            dlmdb_bench::compare::compare(&base, &new, self.max_regression, &self.row_threshold)?;
        if self.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&c).map_err(|e| e.to_string())?
            );
        } else {
            print!("{}", dlmdb_bench::compare::render_comparison(&c));
        }
        Ok(c.regressions)
    }
}

/// Run one `bench` subcommand; returns the process exit status.
pub fn run(which: BenchCmd) -> i32 {
    let r = match which {
        BenchCmd::Peers(a) => a.run(),
        BenchCmd::Dups(a) => a.run(dlmdb_bench::run_dups),
        BenchCmd::Txns(a) => a.run(dlmdb_bench::run_txns),
        BenchCmd::Count(a) => a.run(),
        BenchCmd::Sample(a) => a.run(),
        BenchCmd::Compress(a) => a.run(),
        BenchCmd::DupIter(a) => a.run(),
        BenchCmd::Compare(a) => Ok(a.run()),
    };
    // Ctrl-C removes the environments under the running suite, which then
    // fails; the interrupt decides the exit status.
    if dlmdb_bench::interrupt::interrupted() {
        dlmdb_bench::interrupt::cleanup();
        return dlmdb_bench::interrupt::INTERRUPTED;
    }
    match r {
        Ok(code) => code,
        Err(e) => {
            if !dlmdb_cli::error::is_broken_pipe(&e) {
                eprintln!("dlmdb: {e:#}");
            }
            EXIT_FAIL
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_c_number;

    #[test]
    fn c_numbers() {
        assert_eq!(parse_c_number("200000"), Ok(200000));
        assert_eq!(parse_c_number("0x10"), Ok(16));
        assert_eq!(parse_c_number("010"), Ok(8));
        assert_eq!(parse_c_number("0"), Ok(0));
        assert!(parse_c_number("12k").is_err());
        assert!(parse_c_number("09").is_err());
    }
}
