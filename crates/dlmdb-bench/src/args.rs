//! The command-line options of the peers benchmark, shared by the
//! stand-alone `dlmdb-bench-peers` binary and `dlmdb bench peers`, so both
//! accept the same flags and map them to [`PeersOptions`] the same way.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::{render_markdown, render_text, run_peers, EngineSel, PeersOptions};

#[derive(clap::Args, Debug)]
pub struct PeersArgs {
    /// Small sizes only (a few seconds).
    #[arg(long)]
    pub quick: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print a Markdown table.
    #[arg(long, conflicts_with = "json")]
    pub markdown: bool,
    /// Only rows whose name contains one of these comma-separated substrings.
    #[arg(long)]
    pub filter: Option<String>,
    /// Timed rounds per engine per row.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
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
    /// default 40, or 10 with --quick).
    #[arg(long)]
    pub min_sample_ms: Option<u64>,
    /// Also write the JSON report to this file.
    #[arg(long, value_name = "FILE")]
    pub save_json: Option<PathBuf>,
    /// Don't print per-row progress to stderr.
    #[arg(long, short)]
    pub quiet: bool,
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
            quick: self.quick,
            filter: self.filter.clone(),
            rounds: self.rounds,
            dir: self.dir.clone(),
            verify: !self.no_verify,
            env_flags: self.env_flags,
            ours_extra_flags: self.ours_flags,
            progress: !self.quiet && !self.json,
            only: self.only.as_deref().map(|s| {
                if s == "ours" {
                    EngineSel::Ours
                } else {
                    EngineSel::Lmdb
                }
            }),
            min_sample_ns: self.min_sample_ms.map(|ms| ms * 1_000_000),
            ..Default::default()
        }
    }

    /// Run the benchmark and print the report (text, Markdown or JSON).
    pub fn run(&self) -> Result<()> {
        let rep = run_peers(&self.options())?;
        if let Some(p) = &self.save_json {
            std::fs::write(p, serde_json::to_string_pretty(&rep)?)
                .with_context(|| format!("writing {}", p.display()))?;
        }
        if self.json {
            println!("{}", serde_json::to_string_pretty(&rep)?);
        } else if self.markdown {
            print!("{}", render_markdown(&rep));
        } else {
            print!("{}", render_text(&rep));
        }
        Ok(())
    }
}
