//! `dlmdb`: command-line tool for dlmdb stores.

use anyhow::Result;
use clap::{Parser, Subcommand};
use dlmdb_cli::stat::{self, LayoutChoice, StatOptions};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "dlmdb",
    version,
    about = "Tools for dlmdb / LMDB / DLMDB stores"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Show statistics of an environment (like mdb_stat), read-only.
    Stat(StatArgs),
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        which: BenchCmd,
    },
}

#[derive(clap::Args)]
struct StatArgs {
    /// Environment directory, or the data file itself (then MDB_NOSUBDIR is used).
    path: PathBuf,
    /// Also every named database.
    #[arg(short = 'a', long = "all", conflicts_with = "subdb")]
    all: bool,
    /// Only this named database.
    #[arg(short = 's', long = "subdb", value_name = "NAME")]
    subdb: Option<String>,
    /// Environment information.
    #[arg(short = 'e', long = "env")]
    env: bool,
    /// Free-list status; repeat for per-record lines (-ff) and page runs (-fff).
    #[arg(short = 'f', long = "freelist", action = clap::ArgAction::Count)]
    freelist: u8,
    /// Reader table.
    #[arg(short = 'r', long = "readers")]
    readers: bool,
    /// Accepted for mdb_stat compatibility (a data file path implies it).
    #[arg(short = 'n', hide = true)]
    _nosubdir: bool,
    /// Add a page-walk summary to each database.
    #[arg(long)]
    pages: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// How to read version-1 stores.
    #[arg(long, value_enum, default_value = "auto")]
    layout: LayoutChoice,
}

#[derive(Subcommand)]
enum BenchCmd {
    /// Our engine vs stock LMDB on stores the benchmark creates itself.
    Peers(PeersArgs),
}

#[derive(clap::Args)]
struct PeersArgs {
    /// Small sizes only (seconds).
    #[arg(long)]
    quick: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Print a Markdown table.
    #[arg(long, conflicts_with = "json")]
    markdown: bool,
    /// Only rows whose name contains one of these comma-separated substrings.
    #[arg(long)]
    filter: Option<String>,
    /// Timed rounds per engine per row.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Parent directory for scratch environments (default /dev/shm if tmpfs).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Skip the untimed content verification.
    #[arg(long)]
    no_verify: bool,
    /// Extra mdb_env_open flags for both engines (e.g. 0x10000 = MDB_NOSYNC).
    #[arg(long, value_parser = parse_u32, default_value = "0")]
    env_flags: u32,
    /// Extra mdb_env_open flags for our engine only (e.g. 0x40000000 = MDB_FORMAT_LMDB).
    #[arg(long, value_parser = parse_u32, default_value = "0")]
    ours_flags: u32,
    /// No per-row progress on stderr.
    #[arg(long, short)]
    quiet: bool,
}

fn parse_u32(s: &str) -> Result<u32, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|e| e.to_string())
}

fn main() {
    let result = match Cli::parse().cmd {
        Cmd::Stat(a) => run_stat(a),
        Cmd::Bench {
            which: BenchCmd::Peers(a),
        } => run_peers(a),
    };
    if let Err(e) = result {
        eprintln!("dlmdb: {e:#}");
        std::process::exit(1);
    }
}

fn run_stat(a: StatArgs) -> Result<()> {
    let opts = StatOptions {
        path: a.path,
        all: a.all,
        subdb: a.subdb,
        env_info: a.env,
        freelist: a.freelist,
        readers: a.readers,
        pages: a.pages,
        layout: a.layout,
    };
    let report = stat::collect(&opts)?;
    if !a.json {
        for w in &report.warnings {
            eprintln!("dlmdb: warning: {w}");
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", stat::render_text(&report, &opts));
    }
    Ok(())
}

fn run_peers(a: PeersArgs) -> Result<()> {
    let opts = dlmdb_bench::PeersOptions {
        quick: a.quick,
        filter: a.filter,
        rounds: a.rounds,
        dir: a.dir,
        verify: !a.no_verify,
        env_flags: a.env_flags,
        ours_extra_flags: a.ours_flags,
        progress: !a.quiet && !a.json,
        ..Default::default()
    };
    let rep = dlmdb_bench::run_peers(&opts)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rep)?);
    } else if a.markdown {
        print!("{}", dlmdb_bench::render_markdown(&rep));
    } else {
        print!("{}", dlmdb_bench::render_text(&rep));
    }
    Ok(())
}
