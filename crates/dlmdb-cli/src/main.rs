//! `dlmdb`: command-line tool for dlmdb stores.

mod bench;

use anyhow::Result;
use bench::BenchCmd;
use clap::{Parser, Subcommand};
use dlmdb_cli::check::{self, CheckOptions, Outcome};
use dlmdb_cli::count::{self, CountMode, CountOptions, RankOptions, RankQuery};
use dlmdb_cli::dump::{self, DumpOptions};
use dlmdb_cli::load::{self, LoadOptions, NewFormat};
use dlmdb_cli::stat::{self, LayoutChoice, LockFormatChoice, StatOptions};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "dlmdb",
    version,
    about = "Tools for dlmdb / LMDB / DLMDB stores",
    long_about = "Tools for dlmdb / LMDB / DLMDB stores: stat, dump, load, copy, count, rank, check.\n\n\
PATH is an environment directory or a single data file (detected; no -n needed).\n\
Data goes to stdout, errors to stderr with a non-zero exit status. Commands open\n\
stores read-only unless they must write. --json gives stable, documented output\n\
(see README.md).",
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
    Stat(StatArgs),
    /// Write databases in LMDB's dump format (like mdb_dump), read-only.
    #[command(
        long_about = "Write databases in LMDB's dump text format, byte for byte what stock mdb_dump\n\
writes for the same store. Beyond stock, databases with DLMDB's MDB_COUNTED or\n\
MDB_PREFIX_COMPRESSION flag get `counted=1` / `prefix_compression=1` header lines\n\
(stock mdb_load warns about them and loads anyway; --stock leaves them out).",
        after_help = "Examples:\n  dlmdb dump ./db                  # the main database\n  dlmdb dump -a ./db -o all.txt    # every named database\n  dlmdb dump -s users -p ./db      # printable format\n  dlmdb dump -a ./db | mdb_load -f /dev/stdin ./copy"
    )]
    Dump(DumpArgs),
    /// Load a dump (or plain text with -T) into a store, all or nothing.
    #[command(
        long_about = "Read LMDB's dump format (bytevalue or print) or plain text (-T) and write it\n\
into the store at PATH, creating it if needed (DLMDB data version 2 unless\n\
--format lmdb). The whole input is validated first; then everything is written\n\
in one transaction. A malformed input (error names the line) or a failed write\n\
leaves the store exactly as it was.",
        after_help = "Examples:\n  dlmdb load -f backup.txt ./db\n  mdb_dump -a ./old | dlmdb load --format lmdb ./new\n  printf 'k\\nv\\n' | dlmdb load -T -s names ./db"
    )]
    Load(LoadArgs),
    /// Consistent copy of an environment (mdb_env_copy2), also while writers run.
    #[command(
        after_help = "Examples:\n  dlmdb copy ./db ./backup\n  dlmdb copy --compact ./db/data.mdb ./small.mdb\n  dlmdb copy -c ./db | gzip > backup.mdb.gz   # data file to standard output"
    )]
    Copy(CopyArgs),
    /// Count entries or keys in a key range (COUNTED databases: O(log n)).
    #[command(
        after_help = "Examples:\n  dlmdb count ./db -s users\n  dlmdb count ./db -s users --from a --to m --include-to\n  dlmdb count ./db -s tags --keys --json\n  dlmdb count ./db -s ids --hex --from 00000001 --to 000000ff"
    )]
    Count(CountArgs),
    /// Entry at a rank, or rank of a key / key+value (COUNTED databases: O(log n)).
    #[command(
        after_help = "Examples:\n  dlmdb rank ./db -s users --rank 0\n  dlmdb rank ./db -s users --key alice --json\n  dlmdb rank ./db -s tags --key red --value apple"
    )]
    Rank(RankArgs),
    /// Verify the integrity of a store by reading its pages independently.
    #[command(
        long_about = "Verify the integrity of a store with an independent reader of the data file\n\
(no engine calls, every offset bounds-checked; safe on damaged files): both meta\n\
pages, every page reachable exactly once, page headers and node bounds, key order\n\
within and across pages (stock orders per the stored flags; custom comparators\n\
cannot be known), counts on counted branch pages, overflow runs, duplicate\n\
sub-pages/sub-databases, free-list records disjoint from used pages, and\n\
2 + used + free == last_pg + 1. Reports the space used per database.\n\n\
Exit status: 0 clean, 1 problems found, 2 library/system/usage error, 3 interrupted (SIGINT).",
        after_help = "Examples:\n  dlmdb check ./db\n  dlmdb check -s users ./db\n  dlmdb check --json ./db/data.mdb | jq .problems"
    )]
    Check(CheckArgs),
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
    /// Also show sizes in KiB/MiB/GiB next to byte and page figures.
    #[arg(short = 'H', long = "human")]
    human: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct DumpArgs {
    /// Environment directory or data file.
    path: PathBuf,
    /// Dump this named database.
    #[arg(short = 's', long = "subdb", value_name = "NAME", conflicts_with_all = ["all", "list"])]
    subdb: Option<String>,
    /// Dump every named database.
    #[arg(short = 'a', long = "all")]
    all: bool,
    /// Only list the named databases.
    #[arg(short = 'l', long = "list")]
    list: bool,
    /// Printable format (bytes 0x20-0x7e as themselves, `\\` and `\hh` escapes).
    #[arg(short = 'p', long = "print")]
    print: bool,
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", short_alias = 'f', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Leave out the DLMDB flag lines (counted=1, prefix_compression=1).
    #[arg(long)]
    stock: bool,
    /// With -p: write `\\` undoubled, exactly as Debian's mdb_dump 0.9.24 does
    /// (the default doubles it, as LMDB 0.9.25+/1.0 and DLMDB do).
    #[arg(long, requires = "print")]
    legacy_print: bool,
    /// Accepted for mdb_dump compatibility (a data file path implies it).
    #[arg(short = 'n', hide = true)]
    _nosubdir: bool,
    /// Print a JSON summary (databases, records, bytes) to stderr at the end.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct LoadArgs {
    /// Environment directory (created if missing) or data file.
    path: PathBuf,
    /// Read from FILE instead of standard input.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    file: Option<PathBuf>,
    /// Target database when the input header names none.
    #[arg(short = 's', long = "subdb", value_name = "NAME")]
    subdb: Option<String>,
    /// Keep existing records (MDB_NOOVERWRITE|MDB_NODUPDATA); they are skipped.
    #[arg(short = 'N')]
    no_overwrite: bool,
    /// Plain text input: alternating key and value lines, print escapes, no header.
    #[arg(short = 'T')]
    plain_text: bool,
    /// Format of a newly created store.
    #[arg(long, value_enum, default_value = "dlmdb")]
    format: NewFormat,
    /// Create PATH as a single data file (MDB_NOSUBDIR) when it does not exist.
    #[arg(short = 'n')]
    no_subdir: bool,
    /// Unknown header keywords only warn (like stock mdb_load) instead of failing.
    #[arg(long)]
    skip_unknown: bool,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Print the load report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct CopyArgs {
    /// Source environment directory or data file.
    src: PathBuf,
    /// Destination: a directory (created if missing) for a directory source, a file path for a
    /// file source; `-` or none writes the data file to standard output (like mdb_copy).
    dst: Option<PathBuf>,
    /// Omit free pages and renumber (MDB_CP_COMPACT).
    #[arg(short = 'c', long)]
    compact: bool,
    /// Print a JSON summary.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct CountArgs {
    /// Environment directory or data file.
    path: PathBuf,
    /// Named database (default: the main database).
    #[arg(short = 's', long = "subdb", value_name = "NAME")]
    subdb: Option<String>,
    /// Lower key bound (default: unbounded). Included unless --exclude-from.
    #[arg(long, value_name = "KEY")]
    from: Option<String>,
    /// Upper key bound (default: unbounded). Excluded unless --include-to.
    #[arg(long, value_name = "KEY")]
    to: Option<String>,
    /// Include the lower bound (the default).
    #[arg(long, overrides_with = "exclude_from")]
    include_from: bool,
    /// Exclude the lower bound.
    #[arg(long)]
    exclude_from: bool,
    /// Include the upper bound.
    #[arg(long, overrides_with = "exclude_to")]
    include_to: bool,
    /// Exclude the upper bound (the default).
    #[arg(long)]
    exclude_to: bool,
    /// Count distinct keys.
    #[arg(long, conflicts_with = "values")]
    keys: bool,
    /// Count entries, every duplicate value separately (the default).
    #[arg(long)]
    values: bool,
    /// Keys are given and shown in hex.
    #[arg(long)]
    hex: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct RankArgs {
    /// Environment directory or data file.
    path: PathBuf,
    /// Named database (default: the main database).
    #[arg(short = 's', long = "subdb", value_name = "NAME")]
    subdb: Option<String>,
    /// 0-based rank of the entry to show.
    #[arg(long, conflicts_with = "key", required_unless_present = "key")]
    rank: Option<u64>,
    /// Key whose rank to show (its first duplicate).
    #[arg(long)]
    key: Option<String>,
    /// With --key: rank of exactly this key/value pair.
    #[arg(long, requires = "key")]
    value: Option<String>,
    /// Keys and values are given and shown in hex.
    #[arg(long)]
    hex: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Environment directory or data file.
    path: PathBuf,
    /// Check only this named database (skips the free-list and lost-page accounting).
    #[arg(short = 's', long = "subdb", value_name = "NAME")]
    subdb: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Require prefix-compressed pages in the exact form this engine writes
    /// (canonical key encodings, exact mp_pad); DLMDB's own files may differ.
    #[arg(long)]
    strict_prefix: bool,
}

fn main() {
    // Like other Unix filters, stop quietly when the reader of stdout goes
    // away (`dlmdb dump ... | head`) instead of panicking on EPIPE.
    // SAFETY: restoring the default disposition of a signal is always sound.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let layout = cli.layout;
    stat::set_lock_options(cli.lock_format, cli.no_lock);
    let result = match cli.cmd {
        Cmd::Stat(a) => run_stat(a, layout),
        Cmd::Dump(a) => run_dump(a, layout),
        Cmd::Load(a) => run_load(a, layout),
        Cmd::Copy(a) => run_copy(a, layout),
        Cmd::Count(a) => run_count(a, layout),
        Cmd::Rank(a) => run_rank(a, layout),
        Cmd::Check(a) => std::process::exit(run_check(a, layout)),
        Cmd::Bench { which } => std::process::exit(bench::run(which)),
    };
    if let Err(e) = result {
        // `dlmdb dump ... | head`: the reader went away; not worth a message.
        let broken_pipe = e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        });
        if !broken_pipe {
            eprintln!("dlmdb: {e:#}");
        }
        std::process::exit(1);
    }
}

fn run_stat(a: StatArgs, layout: LayoutChoice) -> Result<()> {
    let opts = StatOptions {
        path: a.path,
        all: a.all,
        subdb: a.subdb,
        env_info: a.env,
        freelist: a.freelist,
        readers: a.readers,
        pages: a.pages,
        human: a.human,
        layout,
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

fn run_dump(a: DumpArgs, layout: LayoutChoice) -> Result<()> {
    use anyhow::Context;
    let opts = DumpOptions {
        path: a.path,
        subdb: a.subdb,
        all: a.all,
        list: a.list,
        print: a.print,
        stock: a.stock,
        legacy_print: a.legacy_print,
        layout,
    };
    let summary = match &a.output {
        Some(f) => {
            let mut file = std::fs::File::create(f)
                .with_context(|| format!("cannot create {}", f.display()))?;
            dump::dump(&opts, &mut file)?
        }
        None => {
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            dump::dump(&opts, &mut lock)?
        }
    };
    if a.json {
        eprintln!("{}", serde_json::to_string_pretty(&summary)?);
    }
    Ok(())
}

fn run_load(a: LoadArgs, layout: LayoutChoice) -> Result<()> {
    let opts = LoadOptions {
        path: a.path,
        file: a.file,
        subdb: a.subdb,
        no_overwrite: a.no_overwrite,
        plain_text: a.plain_text,
        format: a.format,
        no_subdir: a.no_subdir,
        skip_unknown: a.skip_unknown,
        quiet: a.quiet || a.json,
        layout,
    };
    let report = load::load(&opts)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

#[derive(serde::Serialize)]
struct CopyReport {
    source: String,
    destination: String,
    compact: bool,
    /// Size of the copied data file in bytes.
    bytes: u64,
}

fn run_copy(a: CopyArgs, layout: LayoutChoice) -> Result<()> {
    use anyhow::{bail, Context};
    let opened = stat::open_env(&a.src, layout)?;
    for w in &opened.warnings {
        eprintln!("dlmdb: warning: {w}");
    }
    let Some(dst) = a.dst.filter(|d| d.as_os_str() != "-") else {
        use std::io::IsTerminal;
        if a.json {
            bail!("--json cannot be used when the copy goes to standard output");
        }
        let out = std::io::stdout();
        if out.is_terminal() {
            bail!("refusing to write a data file to a terminal: give a destination or redirect");
        }
        use std::os::fd::AsFd;
        return opened
            .env
            .copy_to_fd(out.as_fd(), a.compact)
            .with_context(|| format!("copying {} to standard output failed", a.src.display()));
    };
    let dst = &dst;
    let dst_file = if opened.no_subdir {
        if dst.exists() {
            bail!("{} already exists", dst.display());
        }
        dst.clone()
    } else {
        std::fs::create_dir_all(dst)
            .with_context(|| format!("cannot create directory {}", dst.display()))?;
        let f = dst.join("data.mdb");
        if f.exists() {
            bail!("{} already exists", f.display());
        }
        f
    };
    if let Err(e) = opened.env.copy(dst, a.compact) {
        // The data file did not exist before (checked above): a failed copy
        // (a damaged source, say) leaves no partial copy behind.
        let _ = std::fs::remove_file(&dst_file);
        return Err(anyhow::Error::new(e).context(format!(
            "copying {} to {} failed",
            a.src.display(),
            dst.display()
        )));
    }
    let bytes = std::fs::metadata(&dst_file).map(|m| m.len()).unwrap_or(0);
    let rep = CopyReport {
        source: a.src.display().to_string(),
        destination: dst.display().to_string(),
        compact: a.compact,
        bytes,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rep)?);
    }
    Ok(())
}

fn run_count(a: CountArgs, layout: LayoutChoice) -> Result<()> {
    let opts = CountOptions {
        path: a.path,
        subdb: a.subdb,
        from: a
            .from
            .as_deref()
            .map(|s| count::decode_arg(s, a.hex))
            .transpose()?,
        to: a
            .to
            .as_deref()
            .map(|s| count::decode_arg(s, a.hex))
            .transpose()?,
        include_from: !a.exclude_from || a.include_from,
        include_to: a.include_to && !a.exclude_to,
        mode: if a.keys {
            CountMode::Keys
        } else {
            CountMode::Entries
        },
        hex: a.hex,
        layout,
    };
    let _ = a.values;
    let r = count::count(&opts)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{}", count::render_count(&r));
        if let Some(n) = &r.note {
            eprintln!("dlmdb: note: {n}");
        }
    }
    Ok(())
}

fn run_rank(a: RankArgs, layout: LayoutChoice) -> Result<()> {
    let query = match (a.rank, &a.key) {
        (Some(r), _) => RankQuery::Rank(r),
        (None, Some(k)) => RankQuery::Key(
            count::decode_arg(k, a.hex)?,
            a.value
                .as_deref()
                .map(|v| count::decode_arg(v, a.hex))
                .transpose()?,
        ),
        (None, None) => anyhow::bail!("give --rank or --key"),
    };
    let r = count::rank(&RankOptions {
        path: a.path,
        subdb: a.subdb,
        query,
        hex: a.hex,
        layout,
    })?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{}", count::render_rank(&r));
        if let Some(n) = &r.note {
            eprintln!("dlmdb: note: {n}");
        }
    }
    Ok(())
}

extern "C" fn on_sigint(_: libc::c_int) {
    check::INTERRUPT.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Exit status: 0 clean, 1 problems, 2 error, 3 interrupted.
fn run_check(a: CheckArgs, layout: LayoutChoice) -> i32 {
    // SAFETY: the handler only stores to an atomic flag (async-signal-safe).
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
    let opts = CheckOptions {
        path: a.path,
        subdb: a.subdb,
        layout,
        progress: !a.quiet && !a.json && std::io::stderr().is_terminal(),
        strict_prefix: a.strict_prefix,
    };
    match check::run(&opts) {
        Err(e) => {
            eprintln!("dlmdb: {e:#}");
            2
        }
        Ok(Outcome::Interrupted) => {
            eprintln!("dlmdb: check interrupted");
            3
        }
        Ok(Outcome::Done(r)) => {
            if a.json {
                match serde_json::to_string_pretty(&r) {
                    Ok(s) => println!("{s}"),
                    Err(e) => {
                        eprintln!("dlmdb: {e}");
                        return 2;
                    }
                }
            } else {
                print!("{}", check::render_text(&r));
            }
            if r.ok {
                0
            } else {
                1
            }
        }
    }
}
