//! Command-line options shared by the suites: the peers options (used by
//! the stand-alone `dlmdb-bench-peers` binary and `dlmdb bench peers`) and
//! the output options every suite takes, with the one function that turns
//! a report into output and an exit status.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::report::{render_bmf, render_gab, render_rows_markdown, render_rows_text, Report};
use crate::{EngineSel, PeersOptions, SuiteOptions};

/// Exit status: no regression / target met.
pub const EXIT_OK: i32 = 0;
/// Exit status: a target missed (`--fail-on-miss`) or a regression.
pub const EXIT_FAIL: i32 = 1;
/// Exit status: usage or schema error.
pub const EXIT_USAGE: i32 = 2;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The suite's own text (DLMDB suites: the C program's lines).
    Text,
    /// The report (see the README's report schema).
    Json,
    /// A Markdown table of the rows.
    Markdown,
    /// Bencher Metric Format.
    Bmf,
    /// github-action-benchmark `customSmallerIsBetter` (lower-is-better rows).
    Gab,
    /// github-action-benchmark `customBiggerIsBetter` (higher-is-better rows).
    GabBigger,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeasureArg {
    /// Wall-clock time.
    Wall,
    /// CPU instructions retired in user space (perf_event_open).
    Instructions,
}

/// Output, filtering and gating options of every suite.
#[derive(clap::Args, Debug, Clone)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Same as --format markdown.
    #[arg(long, conflicts_with_all = ["format", "json"])]
    pub markdown: bool,
    /// Also write the JSON report to this file.
    #[arg(long, value_name = "FILE")]
    pub save_json: Option<PathBuf>,
    /// Keep only rows whose name contains one of these comma-separated
    /// substrings (case-insensitive); matching no row is a usage error.
    #[arg(long)]
    pub filter: Option<String>,
    /// Exit with status 1 when a row misses its built-in target (or fails).
    #[arg(long)]
    pub fail_on_miss: bool,
    /// Timed rounds (the suites of DLMDB's programs run the whole
    /// workload once per round; default 1 for them, 5 for the others).
    #[arg(long)]
    pub rounds: Option<usize>,
    /// Keep running rounds until this many seconds have passed (at least
    /// --rounds rounds). For peers: the minimum length of one sample.
    #[arg(long, value_name = "SECONDS")]
    pub min_time: Option<f64>,
    /// What a timed region measures.
    #[arg(long, value_enum, default_value = "wall")]
    pub measure: MeasureArg,
    /// No progress display.
    #[arg(long, short)]
    pub quiet: bool,
}

impl OutputArgs {
    pub fn format(&self) -> Format {
        if self.json {
            Format::Json
        } else if self.markdown {
            Format::Markdown
        } else {
            self.format
        }
    }

    /// Progress output is wanted: not quiet, and stderr is a terminal.
    pub fn progress(&self) -> bool {
        use std::io::IsTerminal;
        !self.quiet && std::io::stderr().is_terminal()
    }

    /// Switch to instruction counting if asked; the error is for the user.
    pub fn apply_measure(&self) -> Result<(), String> {
        match self.measure {
            MeasureArg::Wall => Ok(()),
            MeasureArg::Instructions => crate::measure::enable_instructions(),
        }
    }

    /// Run `round` at least `rounds` times (default `default_rounds`) and
    /// until `--min-time` has passed.
    pub fn repeat<T>(
        &self,
        default_rounds: usize,
        mut round: impl FnMut(usize) -> Result<T>,
    ) -> Result<Vec<T>> {
        let rounds = self.rounds.unwrap_or(default_rounds);
        anyhow::ensure!(rounds >= 1, "--rounds must be at least 1");
        let min = Duration::from_secs_f64(self.min_time.unwrap_or(0.0).max(0.0));
        let t0 = Instant::now();
        let mut out = Vec::new();
        while out.len() < rounds || t0.elapsed() < min {
            out.push(round(out.len())?);
        }
        Ok(out)
    }

    /// Print the report in the chosen format (`text`: the suite's own
    /// text if it has one), save it if asked, warn about noise, and return
    /// the exit status.
    pub fn emit(&self, rep: Report, text: Option<String>) -> i32 {
        self.emit_with(rep, text, None)
    }

    /// [`emit`](Self::emit) with the suite's own Markdown (else the rows
    /// table).
    pub fn emit_with(
        &self,
        mut rep: Report,
        text: Option<String>,
        markdown: Option<String>,
    ) -> i32 {
        if let Some(f) = &self.filter {
            if let Err(e) = rep.apply_filter(f) {
                eprintln!("dlmdb bench: {e}");
                return EXIT_USAGE;
            }
        }
        let json = match serde_json::to_string_pretty(&rep) {
            Ok(j) => j,
            Err(e) => {
                eprintln!("dlmdb bench: {e}");
                return EXIT_FAIL;
            }
        };
        if let Some(p) = &self.save_json {
            if let Err(e) = std::fs::write(p, &json) {
                eprintln!("dlmdb bench: writing {}: {e}", p.display());
                return EXIT_FAIL;
            }
        }
        let out = match self.format() {
            Format::Text => text.unwrap_or_else(|| render_rows_text(&rep)),
            Format::Json => format!("{json}\n"),
            Format::Markdown => markdown.unwrap_or_else(|| render_rows_markdown(&rep)),
            Format::Bmf => format!("{:#}\n", render_bmf(&rep)),
            Format::Gab => format!("{:#}\n", render_gab(&rep, false)),
            Format::GabBigger => format!("{:#}\n", render_gab(&rep, true)),
        };
        {
            use std::io::Write;
            let mut so = std::io::stdout().lock();
            if so
                .write_all(out.as_bytes())
                .and_then(|_| so.flush())
                .is_err()
            {
                return EXIT_FAIL;
            }
        }
        if let Some(w) = rep.noise_warning() {
            eprintln!("{w}");
        }
        let missed = rep.missed();
        if !missed.is_empty() {
            eprintln!(
                "{} row(s) missed a target or failed: {}",
                missed.len(),
                missed
                    .iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if self.fail_on_miss {
                return EXIT_FAIL;
            }
        }
        EXIT_OK
    }
}

#[derive(clap::Args, Debug)]
pub struct PeersArgs {
    /// Small sizes only (a few seconds).
    #[arg(long)]
    pub quick: bool,
    /// Parent directory for scratch environments (default /dev/shm if tmpfs).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Skip the untimed content verification.
    #[arg(long)]
    pub no_verify: bool,
    /// Extra mdb_env_open flags for both engines (e.g. 0x10000 = MDB_NOSYNC).
    #[arg(long, value_parser = parse_u32, default_value = "0")]
    pub env_flags: u32,
    /// Extra mdb_env_open flags for our engine only (e.g. 0x40000000 = MDB_FORMAT_LMDB).
    #[arg(long, value_parser = parse_u32, default_value = "0")]
    pub ours_flags: u32,
    /// Run only one engine: "ours" or "lmdb" (for profiling one side).
    #[arg(long, value_parser = ["ours", "lmdb"])]
    pub only: Option<String>,
    /// Repeat short rows until one sample lasts this many ms (0 = never;
    /// default 40, or 10 with --quick; --min-time sets it in seconds).
    #[arg(long)]
    pub min_sample_ms: Option<u64>,
    /// Scale rows instead of the suite: build stores of these sizes on
    /// --dir (a real disk, not tmpfs) and time random get and seek, warm and
    /// with the data file's pages dropped, e.g. `--scale 1e7` or `--scale 1e7,1e8`.
    #[arg(long, value_name = "SIZES", value_parser = parse_scale_counts)]
    pub scale: Option<crate::scale::Counts>,
    /// With --scale: one write transaction of each of these many puts per
    /// engine, with its peak RSS ("none" for no put rows).
    #[arg(long, value_name = "COUNTS", default_value = "12e6,50e6", value_parser = parse_put_counts)]
    pub scale_puts: crate::scale::Counts,
    /// With --scale: random lookups per warm row.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub scale_lookups: u64,
    /// With --scale: random lookups per cold row (0: no cold rows).
    #[arg(long, value_name = "N", default_value_t = 20_000)]
    pub scale_cold_lookups: u64,
    /// With --scale: stop a put row's child when its RSS passes this many MB
    /// (default: 80% of MemAvailable).
    #[arg(long, value_name = "MB")]
    pub scale_rss_cap: Option<u64>,
    /// Accept small --scale sizes and memory filesystems (for tests).
    #[arg(long, hide = true)]
    pub scale_test: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// `--scale-puts`: counts, or `none`.
fn parse_put_counts(s: &str) -> Result<crate::scale::Counts, String> {
    if s == "none" {
        return Ok(crate::scale::Counts(Vec::new()));
    }
    parse_scale_counts(s)
}

/// `--scale`: comma-separated counts.
fn parse_scale_counts(s: &str) -> Result<crate::scale::Counts, String> {
    crate::scale::parse_counts(s).map(crate::scale::Counts)
}

/// A flag word in decimal or `0x` hex.
pub fn parse_u32(s: &str) -> Result<u32, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|e| e.to_string())
}

impl PeersArgs {
    /// The run these flags ask for.
    pub fn options(&self) -> PeersOptions {
        PeersOptions {
            suite: SuiteOptions {
                quick: self.quick,
                rounds: self.out.rounds.unwrap_or(SuiteOptions::default().rounds),
                dir: self.dir.clone(),
                progress: self.out.progress(),
            },
            filter: self.out.filter.clone(),
            verify: !self.no_verify,
            env_flags: self.env_flags,
            ours_extra_flags: self.ours_flags,
            only: self.only.as_deref().map(|s| {
                if s == "ours" {
                    EngineSel::Ours
                } else {
                    EngineSel::Lmdb
                }
            }),
            min_sample_ns: self
                .min_sample_ms
                .map(|ms| ms * 1_000_000)
                .or(self.out.min_time.map(|s| (s.max(0.0) * 1e9) as u64)),
            ..Default::default()
        }
    }

    /// The `--scale` run these flags ask for (`None` without `--scale`).
    pub fn scale_options(&self) -> Result<Option<crate::scale::ScaleOptions>, String> {
        let Some(sizes) = &self.scale else {
            return Ok(None);
        };
        let Some(dir) = &self.dir else {
            return Err(
                "--scale needs --dir, a directory on a real disk with room for the stores".into(),
            );
        };
        let rss_cap = match self.scale_rss_cap {
            Some(mb) => mb << 20,
            None => crate::sysinfo::mem_available()
                .map(|b| b / 5 * 4)
                .ok_or("cannot read MemAvailable from /proc/meminfo; give --scale-rss-cap")?,
        };
        Ok(Some(crate::scale::ScaleOptions {
            sizes: sizes.0.clone(),
            put_sizes: self.scale_puts.0.clone(),
            dir: dir.clone(),
            timing: crate::scale::LookupTiming {
                rounds: self.out.rounds.unwrap_or(3),
                warm_lookups: self.scale_lookups.max(1),
                cold_lookups: self.scale_cold_lookups,
            },
            rss_cap,
            only: self.options().only,
            test_mode: self.scale_test,
            progress: self.out.progress(),
        }))
    }

    /// Run the benchmark, print it, and return the exit status.
    pub fn run(&self) -> Result<i32> {
        match self.scale_options() {
            Err(e) => {
                eprintln!("dlmdb bench: {e}");
                return Ok(EXIT_USAGE);
            }
            Ok(Some(so)) => {
                let rep = crate::scale::run_scale(&so).context("peers --scale")?;
                let out = match self.out.format() {
                    Format::Json => serde_json::to_string_pretty(&rep)? + "\n",
                    _ => crate::scale::render_text(&rep),
                };
                if let Some(p) = &self.out.save_json {
                    std::fs::write(p, serde_json::to_string_pretty(&rep)?)
                        .with_context(|| format!("writing {}", p.display()))?;
                }
                print!("{out}");
                return Ok(EXIT_OK);
            }
            Ok(None) => {}
        }
        let opts = self.options();
        if let Err(e) = crate::check_peers_filter(&opts) {
            eprintln!("dlmdb bench: {e}");
            return Ok(EXIT_USAGE);
        }
        if let Err(e) = self.out.apply_measure() {
            eprintln!("dlmdb bench: {e}");
            return Ok(EXIT_USAGE);
        }
        let rep = crate::run_peers(&opts).context("peers")?;
        let text = crate::render_text(&rep);
        let markdown = crate::render_markdown(&rep);
        Ok(self
            .out
            .emit_with(crate::peers_report(&rep), Some(text), Some(markdown)))
    }
}

/// Use `render_rows_text` for suites without text of their own.
pub fn rows_text(rep: &Report) -> String {
    render_rows_text(rep)
}
