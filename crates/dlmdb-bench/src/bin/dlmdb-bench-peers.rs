//! Stand-alone runner for the peers benchmark (the same thing the CLI's
//! `dlmdb bench peers` runs). Build with `--release`.

use std::path::PathBuf;

use clap::Parser;
use dlmdb_bench::{EngineSel, render_markdown, render_text, run_peers, PeersOptions};

#[derive(Parser)]
#[command(about = "Benchmark dlmdb against stock LMDB, side by side")]
struct Args {
    /// Small sizes only (a few seconds).
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
    /// Run only one engine: "ours" or "lmdb" (for profiling one side).
    #[arg(long, value_parser = ["ours", "lmdb"])]
    only: Option<String>,
    /// Repeat short rows until one sample lasts this many ms (0 = never;
    /// default 40, or 10 with --quick).
    #[arg(long)]
    min_sample_ms: Option<u64>,
    /// Also write the JSON report to this file.
    #[arg(long)]
    save_json: Option<PathBuf>,
    /// Don't print per-row progress to stderr.
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

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    let opts = PeersOptions {
        quick: a.quick,
        filter: a.filter,
        rounds: a.rounds,
        dir: a.dir,
        verify: !a.no_verify,
        env_flags: a.env_flags,
        ours_extra_flags: a.ours_flags,
        progress: !a.quiet && !a.json,
        only: a.only.as_deref().map(|s| if s == "ours" { EngineSel::Ours } else { EngineSel::Lmdb }),
        min_sample_ns: a.min_sample_ms.map(|ms| ms * 1_000_000),
        ..Default::default()
    };
    let rep = run_peers(&opts)?;
    if let Some(p) = &a.save_json {
        std::fs::write(p, serde_json::to_string_pretty(&rep)?)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rep)?);
    } else if a.markdown {
        print!("{}", render_markdown(&rep));
    } else {
        print!("{}", render_text(&rep));
    }
    Ok(())
}
