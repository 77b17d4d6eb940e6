//! `dlmdb stat`: gather environment, free-list and per-database statistics
//! into a [`StatReport`], and render it like `mdb_stat` or as JSON.

use crate::error::InDatabase;
use anyhow::{Context, Result};
pub use dlmdb::human_bytes;
use dlmdb::{
    Database, DatabaseFlags, Env, Layout, LockFormat, LockUse, OpenError, OpenOptions, Opened,
    RoTxn, Stat,
};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// How to read a version-1 store (version-2 stores are always DLMDB layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LayoutChoice {
    /// The engine decides from the file (DLMDB flags, counted pages, leaves
    /// only one layout parses; no evidence: stock).
    Auto,
    /// Stock LMDB layout.
    Lmdb,
    /// DLMDB's even-padded version-1 layout.
    Dlmdb,
}

/// What to report.
#[derive(Debug, Clone)]
pub struct StatOptions {
    pub path: PathBuf,
    /// Every named database (`-a`).
    pub all: bool,
    /// One named database instead of the main one (`-s`).
    pub subdb: Option<String>,
    /// Environment info (`-e`).
    pub env_info: bool,
    /// Free-list detail level (`-f`, `-ff`, `-fff`).
    pub freelist: u8,
    /// Reader table (`-r`); 2 (`-rr`) also clears stale reader slots.
    pub readers: u8,
    /// Page-walk summary per database (`--pages`).
    pub pages: bool,
    /// Append sizes in KiB/MiB/GiB to byte and page figures (`-H`).
    pub human: bool,
    /// Print the `layout: ...` line first (not part of mdb_stat's output).
    pub layout_info: bool,
    pub layout: LayoutChoice,
}

impl StatOptions {
    /// Options as `mdb_stat` would get them: main database only, nothing else.
    pub fn new(path: PathBuf, layout: LayoutChoice) -> StatOptions {
        StatOptions {
            path,
            all: false,
            subdb: None,
            env_info: false,
            freelist: 0,
            readers: 0,
            pages: false,
            human: false,
            layout_info: false,
            layout,
        }
    }

    /// `mdb_stat -r` alone prints only the reader table.
    fn readers_only(&self) -> bool {
        self.readers > 0 && self.subdb.is_none() && !self.all && self.freelist == 0
    }
}

/// Everything `dlmdb stat` found; this is also the `--json` object.
#[derive(Debug, Clone, Serialize)]
pub struct StatReport {
    /// The path given on the command line.
    pub path: String,
    /// The data file that was read.
    pub data_file: String,
    /// `true` when PATH is the data file itself (`MDB_NOSUBDIR`).
    pub no_subdir: bool,
    /// `mm_version` of the meta page (1 or 2).
    pub data_version: Option<u32>,
    /// `lmdb`, `dlmdb-v1` or `dlmdb-v2`.
    pub layout: Layout,
    /// Why this layout was chosen.
    pub layout_reason: String,
    /// Lock file use: `"none"`, `{"first": V}` (initialised by us in lock
    /// version V) or `{"joined": V}` (shared with running processes).
    pub lock: LockUse,
    /// Doubts about the layout choice, or a truncated data file (printed to
    /// stderr in text mode).
    pub warnings: Vec<String>,
    /// Engine version string.
    pub engine: String,
    /// Transaction id of the snapshot read.
    pub txnid: u64,
    /// Page size in bytes.
    pub page_size: u32,
    pub env: EnvSection,
    /// Present with `-f`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freelist: Option<FreelistSection>,
    /// Present with `-r`: the reader table text (as `mdb_reader_list` prints it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readers: Option<String>,
    /// Present with `-rr`: stale reader slots cleared, and the table after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_readers_cleared: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readers_after: Option<String>,
    /// Main database first (unless `-s`), then named databases in key order.
    pub databases: Vec<DbSection>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EnvSection {
    /// Fixed map address, 0 if none.
    pub map_address: usize,
    pub map_size: u64,
    pub page_size: u32,
    pub max_pages: u64,
    /// `last_pgno + 1`.
    pub pages_used: u64,
    /// Last committed transaction id.
    pub txnid: u64,
    pub max_readers: u32,
    pub readers_used: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct FreelistSection {
    /// `mdb_stat` of the free-page database (depth, page counts, entries).
    #[serde(flatten)]
    pub stat: Stat,
    /// Sum of all records' page counts.
    pub free_pages: u64,
    /// One entry per free-list record (with `-ff`; always in JSON).
    pub records: Vec<FreeRecordInfo>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FreeRecordInfo {
    pub txnid: u64,
    pub count: u64,
    /// Longest run of consecutive page numbers.
    pub maxspan: u64,
    /// Page numbers not strictly descending, or <= 1.
    pub bad_sequence: bool,
    /// Ascending runs `[first, length]` (only with `-fff`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<Vec<(u64, u64)>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DbSection {
    /// `null` for the main database.
    pub name: Option<String>,
    /// Stored flag names (`reversekey`, `dupsort`, `integerkey`, `dupfixed`,
    /// `integerdup`, `reversedup`, `counted`, `prefix_compression`).
    pub flags: Vec<&'static str>,
    pub flags_bits: u32,
    /// Depth, page counts and entries as the database record stores them.
    #[serde(flatten)]
    pub stat: Stat,
    /// MDB_COUNTED databases: the engine's O(1) total (`mdb_count_all`);
    /// absent for other databases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counted_entries: Option<u64>,
    /// The database has DLMDB's MDB_PREFIX_COMPRESSION flag.
    pub prefix_compression: bool,
    /// Present with `--pages`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub walk: Option<crate::pages::WalkReport>,
}

/// The lock options of this process's opens (the global `--lock-format`
/// and `--no-lock`), set once by `main` before any command runs.
static LOCK_OPTIONS: std::sync::OnceLock<(LockFormat, bool)> = std::sync::OnceLock::new();

/// Set the global lock options (first call wins; later calls are ignored).
pub fn set_lock_options(format: LockFormat, no_lock: bool) {
    let _ = LOCK_OPTIONS.set((format, no_lock));
}

/// The options [`open_env`] passes to [`Env::open_detect`].
pub fn open_options(choice: LayoutChoice) -> OpenOptions {
    let (format, no_lock) = LOCK_OPTIONS.get().copied().unwrap_or_default();
    OpenOptions {
        layout: match choice {
            LayoutChoice::Auto => dlmdb::LayoutChoice::Auto,
            LayoutChoice::Lmdb => dlmdb::LayoutChoice::Lmdb,
            LayoutChoice::Dlmdb => dlmdb::LayoutChoice::Dlmdb,
        },
        lock_format: format,
        no_lock,
        ..OpenOptions::default()
    }
}

/// Open the store read-only with [`Env::open_detect`] (the engine decides
/// the layout unless `choice` names one; the lock file is shared with the
/// processes using the store). A lock file that cannot be shared fails with
/// one line of advice: `--no-lock`.
pub fn open_env(path: &Path, choice: LayoutChoice) -> Result<Opened> {
    match Env::open_detect(path, &open_options(choice)) {
        Ok(o) => Ok(o),
        Err(e @ OpenError::LockUnshared { .. }) => Err(crate::error::lock_unshared(
            e,
            "to read without it use --no-lock (MDB_NOLOCK: a process writing meanwhile \
             may change what is read)",
        )),
        Err(e) => Err(e.into()),
    }
}

/// [`open_env`] for a command that reads: the warnings go to stderr.
pub fn open_env_warned(path: &Path, choice: LayoutChoice) -> Result<Env> {
    let opened = open_env(path, choice)?;
    for w in &opened.warnings {
        eprintln!("dlmdb: warning: {w}");
    }
    Ok(opened.env)
}

/// Names of the database flags that are set: the stock ones in
/// `mdb_dump`'s order, then DLMDB's.
pub fn flag_names(f: DatabaseFlags) -> Vec<&'static str> {
    use crate::dump::{EXTRA_FLAGS, STOCK_FLAGS};
    STOCK_FLAGS
        .iter()
        .chain(&EXTRA_FLAGS)
        .filter(|(b, _)| f.contains(*b))
        .map(|(_, n)| *n)
        .collect()
}

/// Collect the report.
pub fn collect(opts: &StatOptions) -> Result<StatReport> {
    let Opened {
        env,
        data_version,
        no_subdir,
        reason,
        lock,
        warnings,
        ..
    } = open_env(&opts.path, opts.layout)?;
    // Like mdb_stat: environment info before our own read transaction.
    let info = env.info()?;
    let env_stat = env.stat()?;
    let env_section = EnvSection {
        map_address: info.map_addr,
        map_size: info.map_size,
        page_size: env_stat.page_size,
        max_pages: info.map_size / env_stat.page_size.max(1) as u64,
        pages_used: info.last_pgno + 1,
        txnid: info.last_txnid,
        max_readers: info.max_readers,
        readers_used: info.num_readers,
    };
    let readers = if opts.readers > 0 {
        Some(env.reader_list()?)
    } else {
        None
    };
    let (stale_readers_cleared, readers_after) = if opts.readers > 1 {
        let n = env.reader_check().context("clearing stale readers")?;
        (Some(n), Some(env.reader_list()?))
    } else {
        (None, None)
    };
    let mut warnings = warnings;
    if let Ok(Some(m)) = crate::store::read_meta(&env.data_file()) {
        if let Some(why) = m.shortfall() {
            warnings.push(format!("{}: {why}", env.data_file().display()));
        }
    }

    let txn = env.read_txn()?;
    let mut report = StatReport {
        path: opts.path.display().to_string(),
        data_file: env.data_file().display().to_string(),
        no_subdir,
        data_version: Some(data_version),
        layout: env.layout(),
        layout_reason: reason,
        lock,
        warnings,
        engine: dlmdb::version().0,
        txnid: txn.id(),
        page_size: env_section.page_size,
        env: env_section,
        freelist: None,
        readers,
        stale_readers_cleared,
        readers_after,
        databases: Vec::new(),
    };
    if opts.readers_only() {
        return Ok(report);
    }
    if opts.freelist > 0 {
        report.freelist = Some(freelist_section(&txn, opts.freelist)?);
    }
    let databases = &mut report.databases;
    match &opts.subdb {
        Some(name) => {
            let db = crate::error::open_db(&txn, Some(name))?;
            databases.push(
                db_section(&txn, Some(name.clone()), db, opts.pages)
                    .context(InDatabase::of(Some(name)))?,
            );
        }
        None => {
            let main = txn.open_db(None).context(InDatabase::of(None))?;
            databases.push(db_section(&txn, None, main, opts.pages).context(InDatabase::of(None))?);
            if opts.all {
                let names = crate::error::db_names(&txn)?;
                for name in names {
                    let db = crate::error::open_db(&txn, Some(&name))?;
                    databases.push(
                        db_section(&txn, Some(name.clone()), db, opts.pages)
                            .context(InDatabase::of(Some(&name)))?,
                    );
                }
            }
        }
    }
    drop(txn);
    Ok(report)
}

fn db_section(
    txn: &RoTxn<'_>,
    name: Option<String>,
    db: Database,
    pages: bool,
) -> Result<DbSection> {
    let flags = txn.db_flags(db)?;
    let stat = txn.stat(db)?;
    let walk = if pages {
        Some(crate::pages::walk_report(txn, db, flags, &stat).context("walking the pages")?)
    } else {
        None
    };
    let counted_entries = if flags.contains(DatabaseFlags::COUNTED) {
        txn.count_all(db, dlmdb::CountFlags::empty()).ok()
    } else {
        None
    };
    Ok(DbSection {
        name,
        flags: flag_names(flags),
        flags_bits: flags.bits(),
        stat,
        counted_entries,
        prefix_compression: flags.contains(DatabaseFlags::PREFIX_COMPRESSION),
        walk,
    })
}

fn freelist_section(txn: &RoTxn<'_>, level: u8) -> Result<FreelistSection> {
    let stat = txn.stat(Database::FREE)?;
    let mut records = Vec::new();
    let mut free_pages = 0;
    for rec in txn.freelist()? {
        let n = rec.pages.len() as u64;
        free_pages += n;
        let bad_sequence = rec.pages.iter().any(|&p| p <= 1) || !rec.is_descending();
        let runs = rec.runs();
        let maxspan = runs.iter().map(|r| r.1).max().unwrap_or(0);
        records.push(FreeRecordInfo {
            txnid: rec.txnid,
            count: n,
            maxspan,
            bad_sequence,
            runs: if level >= 3 { Some(runs) } else { None },
        });
    }
    Ok(FreelistSection {
        stat,
        free_pages,
        records,
    })
}

/// ` (8.0 GiB)` after a figure when `-H` asked for sizes, else nothing.
fn size_note(human: bool, bytes: u64) -> String {
    if human {
        format!(" ({})", human_bytes(bytes))
    } else {
        String::new()
    }
}

fn stat_lines(out: &mut String, s: &Stat, human: bool) {
    let page = u64::from(s.page_size);
    let _ = writeln!(out, "  Tree depth: {}", s.depth);
    for (what, pages) in [
        ("Branch", s.branch_pages),
        ("Leaf", s.leaf_pages),
        ("Overflow", s.overflow_pages),
    ] {
        let _ = writeln!(
            out,
            "  {what} pages: {pages}{}",
            size_note(human, pages * page)
        );
    }
    let _ = writeln!(out, "  Entries: {}", s.entries);
}

/// Render exactly like `mdb_stat` (with `--layout-info`, preceded by one
/// `layout:` line; with `--pages` or `-H`, extra lines and notes).
pub fn render_text(r: &StatReport, opts: &StatOptions) -> String {
    let mut out = String::new();
    if opts.layout_info {
        let _ = writeln!(out, "layout: {} ({})", r.layout, r.layout_reason);
    }
    if opts.env_info {
        let e = &r.env;
        out.push_str("Environment Info\n");
        if e.map_address == 0 {
            out.push_str("  Map address: (nil)\n");
        } else {
            let _ = writeln!(out, "  Map address: {:#x}", e.map_address);
        }
        let _ = writeln!(
            out,
            "  Map size: {}{}",
            e.map_size,
            size_note(opts.human, e.map_size)
        );
        let _ = writeln!(out, "  Page size: {}", e.page_size);
        let _ = writeln!(out, "  Max pages: {}", e.max_pages);
        let _ = writeln!(
            out,
            "  Number of pages used: {}{}",
            e.pages_used,
            size_note(opts.human, e.pages_used * u64::from(e.page_size))
        );
        let _ = writeln!(out, "  Last transaction ID: {}", e.txnid);
        let _ = writeln!(out, "  Max readers: {}", e.max_readers);
        let _ = writeln!(out, "  Number of readers used: {}", e.readers_used);
    }
    if let Some(rd) = &r.readers {
        out.push_str("Reader Table Status\n");
        out.push_str(rd);
        if let (Some(n), Some(after)) = (r.stale_readers_cleared, &r.readers_after) {
            let _ = writeln!(out, "  {n} stale readers cleared.");
            out.push_str(after);
        }
    }
    if let Some(f) = &r.freelist {
        out.push_str("Freelist Status\n");
        stat_lines(&mut out, &f.stat, opts.human);
        if opts.freelist >= 2 {
            for rec in &f.records {
                let _ = writeln!(
                    out,
                    "    Transaction {}, {} pages, maxspan {}{}",
                    rec.txnid,
                    rec.count,
                    rec.maxspan,
                    if rec.bad_sequence {
                        " [bad sequence]"
                    } else {
                        ""
                    }
                );
                if let Some(runs) = &rec.runs {
                    for &(first, len) in runs {
                        if len > 1 {
                            let _ = writeln!(out, "     {first:>9}[{len}]");
                        } else {
                            let _ = writeln!(out, "     {first:>9}");
                        }
                    }
                }
            }
        }
        let _ = writeln!(
            out,
            "  Free pages: {}{}",
            f.free_pages,
            size_note(opts.human, f.free_pages * u64::from(r.env.page_size))
        );
    }
    for db in &r.databases {
        match &db.name {
            None => out.push_str("Status of Main DB\n"),
            Some(n) => {
                let _ = writeln!(out, "Status of {n}");
            }
        }
        stat_lines(&mut out, &db.stat, opts.human);
        if let Some(w) = &db.walk {
            crate::pages::render_walk(&mut out, db, w);
        }
    }
    out
}

/// Show statistics of an environment (like mdb_stat), read-only.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  dlmdb stat -a ./db\n  dlmdb stat -e -ff --json ./db/data.mdb\n  dlmdb stat -s users --pages ./db"
)]
pub struct StatArgs {
    /// Environment directory, or the data file itself (then MDB_NOSUBDIR is used).
    pub path: PathBuf,
    /// Also every named database.
    #[arg(short = 'a', long = "all", conflicts_with = "subdb")]
    pub all: bool,
    /// Only this named database.
    #[arg(short = 's', long = "subdb", value_name = "NAME")]
    pub subdb: Option<String>,
    /// Environment information.
    #[arg(short = 'e', long = "env")]
    pub env: bool,
    /// Free-list status; repeat for per-record lines (-ff) and page runs (-fff).
    #[arg(short = 'f', long = "freelist", action = clap::ArgAction::Count)]
    pub freelist: u8,
    /// Reader table; repeat (-rr) to also clear stale reader slots first.
    /// Alone, only the reader table is printed (as mdb_stat does).
    #[arg(short = 'r', long = "readers", action = clap::ArgAction::Count)]
    pub readers: u8,
    /// Accepted for mdb_stat compatibility (a data file path implies it).
    #[arg(short = 'n', hide = true)]
    pub _nosubdir: bool,
    /// Add a page-walk summary to each database: walk check against the
    /// stored counters, pages and fill per level, key compression.
    #[arg(long)]
    pub pages: bool,
    /// Also show sizes in KiB/MiB/GiB next to byte and page figures.
    #[arg(short = 'H', long = "human")]
    pub human: bool,
    /// Print a `layout: NAME (reason)` line before the report (the rest of
    /// stdout stays exactly what mdb_stat prints).
    #[arg(long)]
    pub layout_info: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `dlmdb stat`.
pub fn run(a: StatArgs, layout: LayoutChoice) -> Result<()> {
    let facts = crate::store::precheck(&a.path)?;
    let opts = StatOptions {
        path: a.path,
        all: a.all,
        subdb: a.subdb,
        env_info: a.env,
        freelist: a.freelist,
        readers: a.readers,
        pages: a.pages,
        human: a.human,
        layout_info: a.layout_info,
        layout,
    };
    if opts.pages {
        // The page walk reads every page: refuse a file cut short.
        crate::store::precheck_complete(&opts.path)?;
    }
    let report = match collect(&opts) {
        Ok(r) => r,
        // The engine may refuse a truncated file: say why in one line.
        Err(e) => match facts.truncation() {
            Some(why) => {
                return Err(crate::error::fail(
                    crate::error::Kind::Truncated,
                    format!(
                        "{}: {why}",
                        crate::store::data_file_of(&opts.path).display()
                    ),
                ))
            }
            None => return Err(e),
        },
    };
    if a.json {
        println!("{}", crate::report::to_json("stat", &report)?);
    } else {
        for w in &report.warnings {
            eprintln!("dlmdb: warning: {w}");
        }
        print!("{}", render_text(&report, &opts));
    }
    Ok(())
}
