//! `dlmdb bench ...`: argument parsing and output of the benchmark suites.
//! The measuring code lives in the `dlmdb-bench` crate.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;
use dlmdb_bench::compress::{self, CompressOptions};

#[derive(Subcommand)]
pub enum BenchCmd {
    /// Our engine vs stock LMDB on stores the benchmark creates itself.
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
    /// DLMDB's count_bench: counted inserts, range counts and ranks vs naive ways.
    #[command(
        after_help = "Examples:\n  dlmdb bench counted --quick\n  dlmdb bench counted --rounds 7 --markdown"
    )]
    Counted(SuiteArgs),
    /// DLMDB's compress_bench: plain vs prefix-compressed DBs (and DUPSORT twins).
    #[command(
        long_about = "DLMDB's compress_bench workload: for each variant (plain, prefix, the -C \
variants, and with -D > 1 their DUPSORT twins), insert, update, delete, reinsert, random reads \
(cold, warm) and range scans (cold, warm), then sizes and tree shape, and each variant relative \
to its uncompressed baseline. Prints the same lines as compress_bench. Numbers accept 0x hex and \
leading-0 octal as compress_bench does.",
        after_help = "Examples:\n  dlmdb bench compress --quick\n  dlmdb bench compress -n 200000 -r 100000 -m 4096 -U 100000 -X 100000 -D 20\n  dlmdb bench compress -D 20 --peers --json > compress.json"
    )]
    Compress(CompressArgs),
}

/// Options shared by `bench dups|txns|counted`.
#[derive(clap::Args)]
pub struct SuiteArgs {
    /// Small sizes (seconds).
    #[arg(long)]
    quick: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Print a Markdown table.
    #[arg(long, conflicts_with = "json")]
    markdown: bool,
    /// Timed rounds per side per row (medians are reported).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Parent directory for scratch environments (default /dev/shm).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// No per-row progress lines on stderr.
    #[arg(short, long)]
    quiet: bool,
    /// Also write the JSON report to this file.
    #[arg(long, value_name = "FILE")]
    save_json: Option<PathBuf>,
}

/// compress_bench's flags (same letters, same defaults).
#[derive(clap::Args)]
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
    /// Also run the uncompressed variants on stock LMDB (without MDB_COUNTED).
    #[arg(long)]
    peers: bool,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
    /// No progress display.
    #[arg(long)]
    quiet: bool,
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

impl CompressArgs {
    fn options(&self) -> CompressOptions {
        let d = CompressOptions::default();
        let q = |quick_value: u64, default: u64| if self.quick { quick_value } else { default };
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

    fn run(&self) -> Result<()> {
        let mut o = self.options();
        if o.entries == 0 {
            anyhow::bail!("Entry count must be > 0");
        }
        // Without -d the environments go to a scratch dir (removed at the
        // end); with -k and no -d they stay in the current directory, as
        // compress_bench leaves them.
        let scratch = if self.dir_prefix.is_none() && !o.keep {
            let t = dlmdb_bench::extra::scratch_dir("compress", None)?;
            o.dir_prefix = t.path().join("compress_bench");
            Some(t)
        } else {
            None
        };
        if let Some(w) = compress::mapsize_warning(&o) {
            eprintln!("{w}");
        }
        let bar = (!self.quiet && std::io::stderr().is_terminal()).then(|| {
            let b = indicatif::ProgressBar::new_spinner();
            b.enable_steady_tick(std::time::Duration::from_millis(200));
            b
        });
        let run = compress::run_compress(&o, &mut |variant, phase| {
            if let Some(b) = &bar {
                b.set_message(format!("{variant}: {phase}"));
            }
        });
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        drop(scratch);
        let run = run?;
        if self.json {
            println!("{}", serde_json::to_string_pretty(&run)?);
        } else {
            print!("{}", compress::render_compress_text(&run));
        }
        Ok(())
    }
}

/// Run one `bench` subcommand; returns the process exit status.
pub fn run(which: BenchCmd) -> i32 {
    let r = match which {
        BenchCmd::Peers(a) => a.run(),
        BenchCmd::Dups(a) => run_suite(a, dlmdb_bench::run_dups),
        BenchCmd::Txns(a) => run_suite(a, dlmdb_bench::run_txns),
        BenchCmd::Counted(a) => run_suite(a, dlmdb_bench::run_counted),
        BenchCmd::Compress(a) => a.run(),
    };
    match r {
        Ok(()) => 0,
        Err(e) => {
            let broken_pipe = e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if !broken_pipe {
                eprintln!("dlmdb: {e:#}");
            }
            1
        }
    }
}

fn run_suite(
    a: SuiteArgs,
    run: fn(&dlmdb_bench::SuiteOptions) -> Result<dlmdb_bench::SuiteReport>,
) -> Result<()> {
    let opts = dlmdb_bench::SuiteOptions {
        quick: a.quick,
        rounds: a.rounds,
        dir: a.dir,
        progress: !a.quiet && !a.json,
    };
    let rep = run(&opts)?;
    if let Some(p) = &a.save_json {
        std::fs::write(p, serde_json::to_string_pretty(&rep)?)
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", p.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rep)?);
    } else if a.markdown {
        print!("{}", dlmdb_bench::render_suite_markdown(&rep));
    } else {
        print!("{}", dlmdb_bench::render_suite_text(&rep));
    }
    Ok(())
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
