//! `dlmdb`: command-line tool for dlmdb stores.

mod bench;

use anyhow::Result;
use bench::BenchCmd;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use dlmdb_cli::stat::{LayoutChoice, LockFormatChoice};
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
    lock_format: LockFormatChoice,
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
    /// Show statistics of an environment (like mdb_stat), read-only.
    #[command(
        after_help = "Examples:\n  dlmdb stat -a ./db\n  dlmdb stat -e -ff --json ./db/data.mdb\n  dlmdb stat -s users --pages ./db"
    )]
    Stat(stat::StatArgs),
    /// Write databases in LMDB's dump format (like mdb_dump), read-only.
    #[command(
        long_about = "Write databases in LMDB's dump text format, byte for byte what stock mdb_dump\n\
writes for the same store. Beyond stock, databases with DLMDB's MDB_COUNTED or\n\
MDB_PREFIX_COMPRESSION flag get `counted=1` / `prefix_compression=1` header lines\n\
(stock mdb_load warns about them and loads anyway; --stock leaves them out).",
        after_help = "Examples:\n  dlmdb dump ./db                  # the main database\n  dlmdb dump -a ./db -o all.txt    # every named database\n  dlmdb dump -s users -p ./db      # printable format\n  dlmdb dump -a ./db | mdb_load -f /dev/stdin ./copy"
    )]
    Dump(dump::DumpArgs),
    /// Load a dump (or plain text with -T) into a store, all or nothing.
    #[command(
        long_about = "Read LMDB's dump format (bytevalue or print) or plain text (-T) and write it\n\
into the store at PATH, creating it if needed (DLMDB data version 2 unless\n\
--format lmdb). The whole input is validated first; then everything is written\n\
in one transaction. A malformed input (error names the line) or a failed write\n\
leaves the store exactly as it was (a new store is built under a temporary\n\
name and renamed into place on success).",
        after_help = "Examples:\n  dlmdb load -f backup.txt ./db\n  mdb_dump -a ./old | dlmdb load --format lmdb ./new\n  printf 'k\\nv\\n' | dlmdb load -T -s names ./db"
    )]
    Load(load::LoadArgs),
    /// Consistent copy of an environment (mdb_env_copy2), also while writers run.
    #[command(
        after_help = "Examples:\n  dlmdb copy ./db ./backup\n  dlmdb copy --compact ./db/data.mdb ./small.mdb\n  dlmdb copy -c ./db | gzip > backup.mdb.gz   # data file to standard output"
    )]
    Copy(copy::CopyArgs),
    /// Count entries or keys in a key range (COUNTED databases: O(log n)).
    #[command(
        after_help = "Examples:\n  dlmdb count ./db -s users\n  dlmdb count ./db -s users --from a --to m --include-to\n  dlmdb count ./db -s tags --keys --json\n  dlmdb count ./db -s ids --hex --from 00000001 --to 000000ff"
    )]
    Count(count::CountArgs),
    /// Entry at a rank, or rank of a key / key+value (COUNTED databases: O(log n)).
    #[command(
        after_help = "Examples:\n  dlmdb rank ./db -s users --rank 0\n  dlmdb rank ./db -s users --key alice --json\n  dlmdb rank ./db -s tags --key red --value apple"
    )]
    Rank(count::RankArgs),
    /// Verify the integrity of a store by reading its pages independently.
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
    Check(check_cmd::CheckArgs),
    /// Print the value of one key (all its values in a DUPSORT database).
    #[command(
        after_help = "Examples:\n  dlmdb get ./db alice\n  dlmdb get ./db -s users --hex 616c696365\n  dlmdb get ./db -s tags red --json"
    )]
    Get(get::GetArgs),
    /// List keys or entries in a key range or with a prefix, forwards or backwards.
    #[command(
        after_help = "Examples:\n  dlmdb scan ./db -s users --prefix a --limit 10\n  dlmdb scan ./db --from k100 --to k200 --keys-only\n  dlmdb scan ./db -s ranked --from-rank 1000000 --limit 5 --json\n  dlmdb scan ./db --reverse --limit 3 --format hex"
    )]
    Scan(scan::ScanArgs),
    /// Empty a named database, or delete it with --delete (like mdb_drop).
    #[command(
        after_help = "Examples:\n  dlmdb drop ./db -s sessions --yes\n  dlmdb drop ./db -s old --delete --yes --json"
    )]
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
    let layout = cli.layout;
    dlmdb_cli::stat::set_lock_options(cli.lock_format, cli.no_lock);
    let (path, json) = error_context(&cli.cmd);
    // `check` keeps 1 for "problems found"; its errors exit with 2.
    let is_check = matches!(cli.cmd, Cmd::Check(_));
    let result = dispatch(cli.cmd, layout);
    match result {
        Ok(status) => std::process::exit(status),
        Err(e) => {
            // `dlmdb dump ... | head`: the reader went away; not worth a message.
            let broken_pipe = e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                std::process::exit(1);
            }
            let path = path.map(|p| p.display().to_string());
            let status = dlmdb_cli::error::report(&e, path.as_deref(), json);
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
    std::process::exit(dlmdb_cli::error::report(&err, None, true));
}

/// The path an error is about and whether errors are JSON.
fn error_context(cmd: &Cmd) -> (Option<PathBuf>, bool) {
    match cmd {
        Cmd::Stat(a) => (Some(a.path.clone()), a.json),
        Cmd::Dump(a) => (Some(a.path.clone()), a.json),
        Cmd::Load(a) => (Some(a.path.clone()), a.json),
        Cmd::Copy(a) => (Some(a.src.clone()), a.json),
        Cmd::Count(a) => (Some(a.path.clone()), a.json),
        Cmd::Rank(a) => (Some(a.path.clone()), a.json),
        Cmd::Check(a) => (Some(a.path.clone()), a.json),
        Cmd::Get(a) => (Some(a.path.clone()), a.json),
        Cmd::Scan(a) => (Some(a.path.clone()), a.json),
        Cmd::Drop(a) => (Some(a.path.clone()), a.json),
        Cmd::Bench { .. } => (None, false),
    }
}

/// Run the command; `Ok(status)` is the exit status of a command that
/// finished (check: 1 when it found problems).
fn dispatch(cmd: Cmd, layout: LayoutChoice) -> Result<i32> {
    let done = |r: Result<()>| r.map(|()| 0);
    match cmd {
        Cmd::Stat(a) => done(stat::run(a, layout)),
        Cmd::Dump(a) => done(dump::run(a, layout)),
        Cmd::Load(a) => done(load::run(a, layout)),
        Cmd::Copy(a) => done(copy::run(a, layout)),
        Cmd::Count(a) => done(count::run_count(a, layout)),
        Cmd::Rank(a) => done(count::run_rank(a, layout)),
        Cmd::Check(a) => check_cmd::run(a, layout),
        Cmd::Get(a) => done(get::run(a, layout)),
        Cmd::Scan(a) => done(scan::run(a, layout)),
        Cmd::Drop(a) => done(drop::run(a, layout)),
        Cmd::Bench { which } => Ok(bench::run(which)),
    }
}
