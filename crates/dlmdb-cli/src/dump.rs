//! `dlmdb dump`: LMDB's dump text format, byte for byte what `mdb_dump`
//! writes, plus optional header lines for DLMDB's flags.

use crate::error::{fail, InDatabase, Kind};
use crate::stat::{open_env_warned, LayoutChoice};
use crate::util::{hex_encode_into, print_encode_into_with};
use anyhow::{Context, Result};
use dlmdb::{CursorOp, Database, DatabaseFlags, EnvInfo, RoTxn};
use indicatif::ProgressBar;
use std::io::Write;
use std::path::PathBuf;

/// Write databases in LMDB's dump format (like mdb_dump), read-only.
#[derive(clap::Args)]
#[command(
    long_about = "Write databases in LMDB's dump text format, byte for byte what stock mdb_dump\n\
writes for the same store. Beyond stock, databases with DLMDB's MDB_COUNTED or\n\
MDB_PREFIX_COMPRESSION flag get `counted=1` / `prefix_compression=1` header lines\n\
(stock mdb_load warns about them and loads anyway; --stock leaves them out).",
    after_help = "Examples:\n  dlmdb dump ./db                  # the main database\n  dlmdb dump -a ./db -o all.txt    # every named database\n  dlmdb dump -s users -p ./db      # printable format\n  dlmdb dump -a ./db | mdb_load -f /dev/stdin ./copy"
)]
pub struct DumpArgs {
    /// Environment directory or data file.
    pub path: PathBuf,
    /// Dump this named database.
    #[arg(short = 's', long = "subdb", value_name = "NAME", conflicts_with_all = ["all", "list"])]
    pub subdb: Option<String>,
    /// Dump every named database.
    #[arg(short = 'a', long = "all")]
    pub all: bool,
    /// Only list the named databases.
    #[arg(short = 'l', long = "list")]
    pub list: bool,
    /// Printable format (bytes 0x20-0x7e as themselves, `\\` and `\hh` escapes).
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// Write to FILE instead of standard output (removed again if the dump
    /// fails or is interrupted).
    #[arg(short = 'o', long = "output", short_alias = 'f', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Leave out the DLMDB flag lines (counted=1, prefix_compression=1).
    #[arg(long)]
    pub stock: bool,
    /// With -p: write `\\` undoubled, exactly as Debian's mdb_dump 0.9.24 does
    /// (the default doubles it, as LMDB 0.9.25+/1.0 and DLMDB do).
    #[arg(long, requires = "print")]
    pub legacy_print: bool,
    /// Accepted for mdb_dump compatibility (a data file path implies it).
    #[arg(short = 'n', hide = true)]
    pub _nosubdir: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    /// Print a JSON summary (databases, records, bytes) to stderr at the end.
    #[arg(long)]
    pub json: bool,
}

/// `dlmdb dump`: SIGINT or a failure removes a partial output file.
pub fn run(a: DumpArgs, layout: LayoutChoice) -> Result<()> {
    crate::store::precheck_complete(&a.path)?;
    let opts = DumpOptions {
        path: a.path,
        subdb: a.subdb,
        all: a.all,
        list: a.list,
        print: a.print,
        stock: a.stock,
        legacy_print: a.legacy_print,
        quiet: a.quiet || a.json,
        layout,
    };
    let summary = match &a.output {
        Some(f) => {
            if f.exists() && f.is_dir() {
                return Err(fail(
                    Kind::Refused,
                    format!("{} is a directory", f.display()),
                ));
            }
            let mut file = std::fs::File::create(f)
                .with_context(|| format!("cannot create {}", f.display()))?;
            crate::interrupt::remove_on_interrupt(&[f.as_path()], &[], "dump stopped");
            let r = dump(&opts, &mut file).and_then(|s| {
                file.sync_all()
                    .with_context(|| format!("writing {}", f.display()))?;
                Ok(s)
            });
            if r.is_err() {
                let _ = std::fs::remove_file(f);
            }
            crate::interrupt::disarm();
            r?
        }
        None => {
            crate::interrupt::remove_on_interrupt(
                &[],
                &[],
                "dump stopped; the output is incomplete",
            );
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            dump(&opts, &mut lock)?
        }
    };
    if a.json {
        eprintln!("{}", crate::report::to_json("dump", &summary)?);
    }
    Ok(())
}

/// What to dump.
#[derive(Debug, Clone)]
pub struct DumpOptions {
    pub path: PathBuf,
    /// One named database (`-s`).
    pub subdb: Option<String>,
    /// Every named database (`-a`).
    pub all: bool,
    /// Only list the named databases (`-l`).
    pub list: bool,
    /// Printable format (`-p`).
    pub print: bool,
    /// Leave out the `counted=1` / `prefix_compression=1` lines, so the
    /// output is exactly what a stock tool writes.
    pub stock: bool,
    /// `-p` without doubling backslashes, as Debian's `mdb_dump` 0.9.24.
    pub legacy_print: bool,
    /// No progress bar.
    pub quiet: bool,
    pub layout: LayoutChoice,
}

/// Stock flag lines, in the order `mdb_dump` writes them.
pub const STOCK_FLAGS: [(DatabaseFlags, &str); 6] = [
    (DatabaseFlags::REVERSE_KEY, "reversekey"),
    (DatabaseFlags::DUP_SORT, "dupsort"),
    (DatabaseFlags::INTEGER_KEY, "integerkey"),
    (DatabaseFlags::DUP_FIXED, "dupfixed"),
    (DatabaseFlags::INTEGER_DUP, "integerdup"),
    (DatabaseFlags::REVERSE_DUP, "reversedup"),
];

/// DLMDB flag lines this tool adds (after the stock ones, before
/// `db_pagesize=`). Stock `mdb_load` warns about unknown keywords and goes on.
pub const EXTRA_FLAGS: [(DatabaseFlags, &str); 2] = [
    (DatabaseFlags::COUNTED, "counted"),
    (DatabaseFlags::PREFIX_COMPRESSION, "prefix_compression"),
];

/// Summary of a dump (for `--json`, printed to stderr).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DumpSummary {
    pub path: String,
    pub layout: String,
    /// Snapshot dumped.
    pub txnid: u64,
    /// Databases written: name (`null` = main) and number of records.
    pub databases: Vec<DumpedDb>,
    /// Bytes of dump text written.
    pub bytes: u64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct DumpedDb {
    pub name: Option<String>,
    pub records: u64,
}

/// Counts bytes passing through to the real writer.
struct Counting<W> {
    inner: W,
    n: u64,
}
impl<W: Write> Write for Counting<W> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(b)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Write the dump to `out`.
pub fn dump(opts: &DumpOptions, out: &mut dyn Write) -> Result<DumpSummary> {
    let env = open_env_warned(&opts.path, opts.layout)?;
    let info = env.info()?;
    let txn = env.read_txn()?;
    let total_entries = |names: &[Option<&str>]| -> u64 {
        names
            .iter()
            .filter_map(|n| txn.open_db(*n).ok())
            .filter_map(|db| txn.stat(db).ok())
            .map(|s| s.entries)
            .sum()
    };
    let mut out = Counting {
        inner: std::io::BufWriter::with_capacity(1 << 20, out),
        n: 0,
    };
    let mut summary = DumpSummary {
        path: opts.path.display().to_string(),
        layout: env.layout().to_string(),
        txnid: txn.id(),
        ..Default::default()
    };
    let path = opts.path.display();
    if opts.all || opts.list {
        let main = txn.open_db(None)?;
        // Stock rule: a main DB without any NUL-free key has no named databases.
        let mut any_plain_key = false;
        for item in txn.cursor(main)?.iter() {
            let (k, _) = item.context("reading").context(InDatabase::of(None))?;
            if !k.contains(&0) {
                any_plain_key = true;
                break;
            }
        }
        if !any_plain_key {
            return Err(fail(
                Kind::NotFound,
                format!("{path} does not contain multiple databases"),
            ));
        }
        let names = crate::error::db_names(&txn)?;
        let bar = if opts.list {
            None
        } else {
            let refs: Vec<Option<&str>> = names.iter().map(|n| Some(n.as_str())).collect();
            dump_bar(total_entries(&refs), opts.quiet)
        };
        for name in names {
            if opts.list {
                out.write_all(name.as_bytes())?;
                out.write_all(b"\n")?;
                continue;
            }
            let db = crate::error::open_db(&txn, Some(&name))?;
            let n = dump_db(&txn, db, Some(&name), &info, opts, &mut out, bar.as_ref())
                .context(InDatabase::of(Some(&name)))?;
            summary.databases.push(DumpedDb {
                name: Some(name),
                records: n,
            });
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
    } else {
        let name = opts.subdb.as_deref();
        let db = crate::error::open_db(&txn, name)?;
        let bar = dump_bar(total_entries(&[name]), opts.quiet);
        let n = dump_db(&txn, db, name, &info, opts, &mut out, bar.as_ref())
            .context(InDatabase::of(name))?;
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        summary.databases.push(DumpedDb {
            name: name.map(str::to_owned),
            records: n,
        });
    }
    out.flush()?;
    summary.bytes = out.n;
    Ok(summary)
}

/// Records bar for dumps of more than 200,000 entries.
fn dump_bar(total: u64, quiet: bool) -> Option<ProgressBar> {
    crate::progress::bar(
        total,
        200_000,
        quiet,
        "dumping {bar:40} {pos}/{len} records {per_sec} eta {eta}",
    )
}

/// One database block; returns the number of records.
fn dump_db(
    txn: &RoTxn<'_>,
    db: Database,
    name: Option<&str>,
    info: &EnvInfo,
    opts: &DumpOptions,
    out: &mut dyn Write,
    bar: Option<&ProgressBar>,
) -> Result<u64> {
    let flags = txn.db_flags(db)?;
    let stat = txn.stat(db)?;
    let mut head = String::with_capacity(256);
    head.push_str("VERSION=3\n");
    head.push_str(if opts.print {
        "format=print\n"
    } else {
        "format=bytevalue\n"
    });
    if let Some(n) = name {
        head.push_str("database=");
        head.push_str(n);
        head.push('\n');
    }
    head.push_str("type=btree\n");
    head.push_str(&format!("mapsize={}\n", info.map_size));
    if info.map_addr != 0 {
        head.push_str(&format!("mapaddr={:#x}\n", info.map_addr));
    }
    head.push_str(&format!("maxreaders={}\n", info.max_readers));
    if flags.contains(DatabaseFlags::DUP_SORT) {
        head.push_str("duplicates=1\n");
    }
    for (f, n) in STOCK_FLAGS {
        if flags.contains(f) {
            head.push_str(n);
            head.push_str("=1\n");
        }
    }
    if !opts.stock {
        for (f, n) in EXTRA_FLAGS {
            if flags.contains(f) {
                head.push_str(n);
                head.push_str("=1\n");
            }
        }
    }
    head.push_str(&format!("db_pagesize={}\nHEADER=END\n", stat.page_size));
    out.write_all(head.as_bytes())?;

    let mut line = Vec::with_capacity(4096);
    let mut n = 0u64;
    let mut cur = txn.cursor(db)?;
    // Lending reads: zero-copy even for prefix-compressed keys, each line
    // is written before the cursor moves on.
    let mut op = CursorOp::First;
    while let Some((k, v)) = cur.get_ref(None, None, op)? {
        op = CursorOp::Next;
        line.clear();
        for part in [k, v] {
            line.push(b' ');
            if opts.print {
                print_encode_into_with(&mut line, part, !opts.legacy_print);
            } else {
                hex_encode_into(&mut line, part);
            }
            line.push(b'\n');
        }
        out.write_all(&line)?;
        n += 1;
        if n.is_multiple_of(65536) {
            if let Some(b) = bar {
                b.inc(65536);
            }
        }
    }
    if let Some(b) = bar {
        b.inc(n % 65536);
    }
    out.write_all(b"DATA=END\n")?;
    Ok(n)
}
