//! `dlmdb check` command line: arguments, SIGINT, exit status. The checker
//! itself is [`crate::check`].

use crate::check::{self, CheckOptions, Outcome};
use crate::error::{fail, Kind};
use crate::stat::LayoutChoice;
use anyhow::Result;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Verify the integrity of a store by reading its pages independently.
#[derive(clap::Args)]
#[command(
    long_about = "Verify the integrity of a store with an independent reader of the data file\n\
(no engine calls, every offset bounds-checked; safe on damaged files): both meta\n\
pages, every page reachable exactly once, page headers and node bounds, key order\n\
within and across pages (stock orders per the stored flags; custom comparators\n\
cannot be known), counts on counted branch pages, overflow runs, duplicate\n\
sub-pages/sub-databases, free-list records disjoint from used pages, and\n\
2 + used + free == last_pg + 1. Reports the space used per database.\n\n\
Exit status: 0 clean, 1 problems found, 2 library/system/usage error, 130 interrupted (SIGINT).",
    after_help = "Examples:\n  dlmdb check ./db\n  dlmdb check -s users ./db\n  dlmdb check --json ./db/data.mdb | jq .problems"
)]
pub struct CheckArgs {
    /// Environment directory or data file.
    pub path: PathBuf,
    /// Check only this named database (skips the free-list and lost-page accounting).
    #[arg(short = 's', long = "subdb", value_name = "NAME")]
    pub subdb: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    /// Require prefix-compressed pages in the exact form this engine writes
    /// (canonical key encodings, exact mp_pad); DLMDB's own files may differ.
    #[arg(long)]
    pub strict_prefix: bool,
}

/// Exit status: 0 clean, 1 problems found; errors go through the common
/// error path (status 1, or 130 when interrupted).
pub fn run(a: CheckArgs, layout: LayoutChoice) -> Result<i32> {
    crate::interrupt::watch();
    if !a.path.exists() {
        return Err(fail(Kind::NotFound, "no such file or directory"));
    }
    let opts = CheckOptions {
        path: a.path,
        subdb: a.subdb,
        layout,
        progress: !a.quiet && !a.json && std::io::stderr().is_terminal(),
        strict_prefix: a.strict_prefix,
    };
    match check::run(&opts)? {
        Outcome::Interrupted => Err(fail(Kind::Interrupted, "check interrupted")),
        Outcome::Done(r) => {
            if a.json {
                println!("{}", crate::report::to_json("check", &r)?);
            } else if r.layout.is_empty() {
                // No valid meta page at all: one line, not an empty report.
                let why = r.problems.first().map_or("", |p| p.message.as_str());
                eprintln!("dlmdb: {}: {why}", r.data_file);
            } else {
                print!("{}", check::render_text(&r));
            }
            Ok(if r.ok { 0 } else { 1 })
        }
    }
}
