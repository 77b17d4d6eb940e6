//! `dlmdb`: command-line tool for dlmdb stores.

mod bench;

use anyhow::Result;
use bench::BenchCmd;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use dlmdb_cli::stat::LayoutChoice;
use dlmdb_cli::{check_cmd, copy, count, drop, dump, get, load, scan, stat};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "dlmdb",
    version,
    about = "Tools for dlmdb / LMDB / DLMDB stores",
    long_about = "Tools for dlmdb / LMDB / DLMDB stores: stat, dump, load, copy, get, scan, drop, count, rank, check.\n\n\
PATH is an environment directory or a single data file (detected; no -n needed).\n\
Data goes to stdout, errors to stderr with a non-zero exit status. Commands open\n\
stores read-only unless they must write. --json gives stable, documented output\n\
(see README.md); with --json, errors are JSON on stderr too.",
    after_help = "Examples:\n  dlmdb stat -a -e ./db\n  dlmdb dump -a ./db > backup.txt\n  dlmdb load -f backup.txt ./restored\n  dlmdb check --json ./db/data.mdb\n  dlmdb count ./db -s users --from a --to n --json"
)]
struct Cli {
    /// Node layout of version-1 stores: auto (the engine decides from the
    /// file; no evidence: stock), lmdb (stock) or dlmdb (DLMDB's padded
    /// version 1; refused when the file contradicts it). Version-2 stores are
    /// always DLMDB.
    #[arg(long, value_enum, default_value = "auto", global = true)]
    layout: LayoutChoice,
    /// Lock file layout when this command is the first process on the store:
    /// auto (lock version 1 for stock-layout version-1 stores, 2 for DLMDB
    /// stores), v1 (LMDB 0.9) or v2 (LMDB 1.0, DLMDB). A lock file other
    /// processes hold keeps their layout.
    #[arg(long, value_enum, default_value = "auto", global = true)]
    lock_format: dlmdb::LockFormat,
    /// Read without the lock file (MDB_NOLOCK; read-only commands), for stores
    /// whose lock file cannot be shared (unknown format, read-only medium, no
    /// permission). Nothing then protects what is read from a process writing
    /// meanwhile.
    #[arg(long, global = true)]
    no_lock: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    Stat(stat::StatArgs),
    Dump(dump::DumpArgs),
    Load(load::LoadArgs),
    Copy(copy::CopyArgs),
    Count(count::CountArgs),
    Rank(count::RankArgs),
    Check(check_cmd::CheckArgs),
    Get(get::GetArgs),
    Scan(scan::ScanArgs),
    Drop(drop::DropArgs),
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        which: BenchCmd,
    },
}

fn main() {
    // Like other Unix filters, stop quietly when the reader of stdout goes
    // away (`dlmdb dump ... | head`) instead of panicking on EPIPE.
    // SAFETY: restoring the default disposition of a signal is always sound.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let version: &'static str = Box::leak(
        format!(
            "{} (engine: {})",
            env!("CARGO_PKG_VERSION"),
            dlmdb::version().0
        )
        .into_boxed_str(),
    );
    let cli = match Cli::command()
        .version(version)
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(c) => c,
        Err(e) => usage_error(e),
    };
    dlmdb_cli::stat::set_lock_options(cli.lock_format, cli.no_lock);
    // `check` keeps 1 for "problems found"; its errors exit with 2.
    let is_check = matches!(cli.cmd, Cmd::Check(_));
    let (path, json, result) = dispatch(cli.cmd, cli.layout);
    match result {
        Ok(status) => std::process::exit(status),
        // `dlmdb dump ... | head`: the reader went away; not worth a message.
        Err(e) if dlmdb_cli::error::is_broken_pipe(&e) => std::process::exit(1),
        Err(e) => {
            let path = path.map(|p| p.display().to_string());
            let status = dlmdb_cli::error::report(&e, path.as_deref(), json, !is_check);
            std::process::exit(if is_check && status == 1 { 2 } else { status });
        }
    }
}

/// A command-line error: clap's message, or with `--json` the JSON error
/// object (exit status 2 either way; help and version exit 0).
fn usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    let wants_json = std::env::args_os().any(|a| a == "--json");
    if !wants_json || matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        e.exit();
    }
    let text = e.render().to_string();
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("bad command line")
        .trim_start_matches("error: ");
    let err = dlmdb_cli::error::fail(dlmdb_cli::error::Kind::Usage, first);
    std::process::exit(dlmdb_cli::error::report(&err, None, true, false));
}

/// Run the command. Returns the path its errors are about, whether errors
/// are JSON, and `Ok(status)`: the exit status of a command that finished
/// (check: 1 when it found problems).
fn dispatch(cmd: Cmd, layout: LayoutChoice) -> (Option<PathBuf>, bool, Result<i32>) {
    let done = |r: Result<()>| r.map(|()| 0);
    match cmd {
        Cmd::Stat(a) => (Some(a.path.clone()), a.json, done(stat::run(a, layout))),
        Cmd::Dump(a) => (Some(a.path.clone()), a.json, done(dump::run(a, layout))),
        Cmd::Load(a) => (Some(a.path.clone()), a.json, done(load::run(a, layout))),
        Cmd::Copy(a) => (Some(a.src.clone()), a.json, done(copy::run(a, layout))),
        Cmd::Count(a) => (
            Some(a.db.path.clone()),
            a.json,
            done(count::run_count(a, layout)),
        ),
        Cmd::Rank(a) => (
            Some(a.db.path.clone()),
            a.json,
            done(count::run_rank(a, layout)),
        ),
        Cmd::Check(a) => (Some(a.path.clone()), a.json, check_cmd::run(a, layout)),
        Cmd::Get(a) => (Some(a.db.path.clone()), a.json, done(get::run(a, layout))),
        Cmd::Scan(a) => (Some(a.db.path.clone()), a.json, done(scan::run(a, layout))),
        Cmd::Drop(a) => (Some(a.path.clone()), a.json, done(drop::run(a, layout))),
        Cmd::Bench { which } => (None, false, Ok(bench::run(which))),
    }
}
