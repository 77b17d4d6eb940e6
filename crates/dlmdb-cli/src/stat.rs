//! `dlmdb stat`: gather environment, free-list and per-database statistics
//! into a [`StatReport`], and render it like `mdb_stat` or as JSON.

use crate::error::InDatabase;
use anyhow::{bail, Context, Result};
use dlmdb::{
    Database, DatabaseFlags, Env, EnvFlags, Layout, LayoutProbe, ProbeVerdict, RoTxn, Stat,
};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// How to read a version-1 store (version-2 stores are always DLMDB layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LayoutChoice {
    /// Probe the file; if inconclusive, stock LMDB unless its catalog does not parse.
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
    /// File-level layout probe of a version-1 store (`null` for version 2).
    pub layout_probe: Option<LayoutProbe>,
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

/// The environment opened for `stat`, and how its layout was chosen.
pub struct Opened {
    pub env: Env,
    pub data_version: Option<u32>,
    pub no_subdir: bool,
    pub reason: String,
    /// Result of the file-level layout probe (version-1 stores).
    pub probe: Option<LayoutProbe>,
    /// Doubts worth telling the user (also in the JSON report).
    pub warnings: Vec<String>,
}

/// Open the environment read-only in the layout to use, following `choice`.
///
/// For version-1 stores `auto` first runs [`dlmdb::probe_layout`], which
/// tests both layouts against page invariants. If that proves one layout, it
/// is used; if the file has no odd-length keys both read identically (stock
/// is used); otherwise stock is tried first and DLMDB-v1 is used when opening
/// fails or a named-database record does not parse.
pub fn open_env(path: &Path, choice: LayoutChoice) -> Result<Opened> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot access {}", path.display()))?;
    let no_subdir = meta.is_file();
    let data_file = if no_subdir {
        path.to_path_buf()
    } else {
        path.join("data.mdb")
    };
    let version = dlmdb::read_data_version(&data_file);
    let mut base = EnvFlags::READ_ONLY;
    if no_subdir {
        base |= EnvFlags::NO_SUB_DIR;
    }
    let open = |extra: EnvFlags| {
        Env::builder()
            .flags(base | extra)
            .max_dbs(32_000)
            .open(path)
            .with_context(|| format!("cannot open environment {}", path.display()))
    };
    let mut warnings = Vec::new();
    let done =
        |env: Env, reason: String, probe: Option<LayoutProbe>, warnings: Vec<String>| Opened {
            env,
            data_version: version,
            no_subdir,
            reason,
            probe,
            warnings,
        };
    if version == Some(2) {
        if choice == LayoutChoice::Lmdb {
            bail!(
                "{} is data version 2 (DLMDB layout); --layout lmdb applies to version-1 stores",
                data_file.display()
            );
        }
        return Ok(done(
            open(EnvFlags::empty())?,
            "data version 2".into(),
            None,
            warnings,
        ));
    }
    // Bounded (16 MiB of 4 KiB pages) so commands answer fast on big stores;
    // an inconclusive probe falls back to the catalog test below.
    let probe = dlmdb::probe_layout_limited(&data_file, PROBE_PAGES).ok();
    let verdict = probe.map(|p| p.verdict());
    let evidence = |p: &LayoutProbe| {
        format!(
            "{} of {} leaf pages inconsistent with stock layout, {} with DLMDB padding",
            p.stock_bad_pages, p.leaf_pages, p.padded_bad_pages
        )
    };
    match choice {
        LayoutChoice::Lmdb | LayoutChoice::Dlmdb => {
            let (flags, want) = if choice == LayoutChoice::Lmdb {
                (EnvFlags::empty(), Layout::Lmdb)
            } else {
                (EnvFlags::FORMAT_DLMDB_V1, Layout::DlmdbV1)
            };
            if let (Some(ProbeVerdict::Proven(l)), Some(p)) = (verdict, probe.as_ref()) {
                if l != want {
                    warnings.push(format!("layout probe says {l} ({})", evidence(p)));
                }
            }
            let reason = format!(
                "--layout {}",
                if want == Layout::Lmdb {
                    "lmdb"
                } else {
                    "dlmdb"
                }
            );
            Ok(done(open(flags)?, reason, probe, warnings))
        }
        LayoutChoice::Auto => {
            if let (Some(v), Some(p)) = (verdict, probe.as_ref()) {
                let proven = match v {
                    ProbeVerdict::Proven(Layout::DlmdbV1) => {
                        Some((EnvFlags::FORMAT_DLMDB_V1, evidence(p)))
                    }
                    ProbeVerdict::Proven(_) => Some((EnvFlags::empty(), evidence(p))),
                    ProbeVerdict::Identical if p.last_pgno <= PROBE_PAGES + 1 => Some((
                        EnvFlags::empty(),
                        "no odd-length keys, both version-1 layouts read it identically"
                            .to_string(),
                    )),
                    ProbeVerdict::Identical => Some((
                        EnvFlags::empty(),
                        format!("no odd-length keys in the first {PROBE_PAGES} pages, named-database catalog parses in stock layout"),
                    )),
                    ProbeVerdict::Ambiguous | ProbeVerdict::Inconsistent => None,
                };
                if let Some((flags, why)) = proven {
                    let env = open(flags)?;
                    if let Some(problem) = catalog_problem(&env) {
                        bail!("{}: {problem} (layout probe: {why})", data_file.display());
                    }
                    drop(env);
                    // Reopen so the environment info is that of a fresh open (as mdb_stat's).
                    return Ok(done(
                        open(flags)?,
                        format!("version 1, {why}"),
                        probe,
                        warnings,
                    ));
                }
                warnings.push(format!(
                    "layout probe is not conclusive ({v:?}: {})",
                    evidence(p)
                ));
            }
            let stock_problem = match open(EnvFlags::empty()) {
                Ok(env) => catalog_problem(&env),
                Err(e) => Some(format!("{e:#}")),
            };
            let Some(stock_problem) = stock_problem else {
                let env = open(EnvFlags::empty())?;
                let reason = "version 1, named-database catalog parses in stock layout".to_string();
                return Ok(done(env, reason, probe, warnings));
            };
            let probe_env = open(EnvFlags::FORMAT_DLMDB_V1)
                .with_context(|| format!("stock layout failed too ({stock_problem})"))?;
            if let Some(p) = catalog_problem(&probe_env) {
                bail!(
                    "neither layout reads {} cleanly: stock: {stock_problem}; dlmdb-v1: {p}",
                    data_file.display()
                );
            }
            drop(probe_env);
            let env = open(EnvFlags::FORMAT_DLMDB_V1)?;
            let reason = format!("version 1, stock layout rejected: {stock_problem}");
            Ok(done(env, reason, probe, warnings))
        }
    }
}

/// Pages the layout probe reads at most.
const PROBE_PAGES: u64 = 4096;

/// Check that every main-database record that opens as a database is a
/// plausible 48-byte `MDB_db` record; return a description of the first problem.
fn catalog_problem(env: &Env) -> Option<String> {
    let check = || -> Result<Option<String>> {
        let info = env.info()?;
        let txn = env.read_txn()?;
        let main = txn.open_db(None)?;
        let mut c = txn.cursor(main)?;
        for item in c.iter() {
            let (k, v) = item?;
            // Only 48-byte values can be database records (the node's
            // data size is layout-independent); skipping the rest keeps
            // this fast on big main databases.
            if k.contains(&0) || v.len() != 48 {
                continue;
            }
            let Ok(name) = std::str::from_utf8(&k) else {
                continue;
            };
            match txn.open_db(Some(name)) {
                Ok(_) => {
                    if let Some(why) = record_problem(&v, info.last_pgno, env.layout()) {
                        return Ok(Some(format!("record of database {name:?}: {why}")));
                    }
                }
                Err(dlmdb::Error::Incompatible) => {} // a plain main-DB value
                Err(e) => return Ok(Some(format!("opening database {name:?}: {e}"))),
            }
        }
        Ok(None)
    };
    match check() {
        Ok(p) => p,
        Err(e) => Some(format!("{e:#}")),
    }
}

/// Plausibility of one 48-byte database record (format: md_pad u32 @0,
/// md_flags u16 @4, md_depth u16 @6, branch/leaf/overflow/entries u64 @8..40,
/// md_root u64 @40).
fn record_problem(rec: &[u8], last_pgno: u64, layout: Layout) -> Option<String> {
    if rec.len() != 48 {
        return Some(format!("{} bytes, expected 48", rec.len()));
    }
    let u16_at = |o: usize| u16::from_le_bytes([rec[o], rec[o + 1]]) as u64;
    let u64_at = |o: usize| u64::from_le_bytes(rec[o..o + 8].try_into().unwrap());
    let flags = u16_at(4);
    let depth = u16_at(6);
    let (branch, leaf, overflow, entries, root) =
        (u64_at(8), u64_at(16), u64_at(24), u64_at(32), u64_at(40));
    let known: u64 = if layout == Layout::Lmdb { 0x7e } else { 0x1fe };
    if flags & !known != 0 {
        return Some(format!("unknown flag bits {flags:#x}"));
    }
    if depth == 0 {
        if root != u64::MAX || branch != 0 || leaf != 0 || overflow != 0 || entries != 0 {
            return Some("empty tree with non-empty counters or root".into());
        }
        return None;
    }
    if depth > 64 {
        return Some(format!("depth {depth}"));
    }
    if root < 2 || root > last_pgno {
        return Some(format!("root page {root} outside 2..={last_pgno}"));
    }
    let pages = last_pgno + 1;
    if leaf == 0
        || branch > pages
        || leaf > pages
        || overflow > pages
        || branch + leaf + overflow > pages
    {
        return Some(format!(
            "page counters {branch}/{leaf}/{overflow} exceed {pages} pages"
        ));
    }
    if branch < depth - 1 {
        return Some(format!("depth {depth} with {branch} branch pages"));
    }
    None
}

/// Names of the database flags that are set.
pub fn flag_names(f: DatabaseFlags) -> Vec<&'static str> {
    let table = [
        (DatabaseFlags::REVERSE_KEY, "reversekey"),
        (DatabaseFlags::DUP_SORT, "dupsort"),
        (DatabaseFlags::INTEGER_KEY, "integerkey"),
        (DatabaseFlags::DUP_FIXED, "dupfixed"),
        (DatabaseFlags::INTEGER_DUP, "integerdup"),
        (DatabaseFlags::REVERSE_DUP, "reversedup"),
        (DatabaseFlags::COUNTED, "counted"),
        (DatabaseFlags::PREFIX_COMPRESSION, "prefix_compression"),
    ];
    table
        .iter()
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
        probe,
        warnings,
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
    let txnid = txn.id();
    if opts.readers_only() {
        return Ok(StatReport {
            path: opts.path.display().to_string(),
            data_file: env.data_file().display().to_string(),
            no_subdir,
            data_version,
            layout: env.layout(),
            layout_reason: reason,
            layout_probe: probe,
            warnings,
            engine: dlmdb::version().0,
            txnid,
            page_size: env_section.page_size,
            env: env_section,
            freelist: None,
            readers,
            stale_readers_cleared,
            readers_after,
            databases: Vec::new(),
        });
    }
    let freelist = if opts.freelist > 0 {
        Some(freelist_section(&txn, opts.freelist)?)
    } else {
        None
    };

    let mut databases = Vec::new();
    match &opts.subdb {
        Some(name) => {
            let db = txn
                .open_db(Some(name))
                .context("cannot open")
                .context(InDatabase::of(Some(name)))?;
            databases.push(
                db_section(&txn, Some(name.clone()), db, opts.pages)
                    .context(InDatabase::of(Some(name)))?,
            );
        }
        None => {
            let main = txn.open_db(None).context(InDatabase::of(None))?;
            databases.push(db_section(&txn, None, main, opts.pages).context(InDatabase::of(None))?);
            if opts.all {
                let names = txn
                    .db_names()
                    .context("listing named databases")
                    .context(InDatabase::of(None))?;
                for name in names {
                    let db = txn
                        .open_db(Some(&name))
                        .context("cannot open")
                        .context(InDatabase::of(Some(&name)))?;
                    databases.push(
                        db_section(&txn, Some(name.clone()), db, opts.pages)
                            .context(InDatabase::of(Some(&name)))?,
                    );
                }
            }
        }
    }
    let report = StatReport {
        path: opts.path.display().to_string(),
        data_file: env.data_file().display().to_string(),
        no_subdir,
        data_version,
        layout: env.layout(),
        layout_reason: reason,
        layout_probe: probe,
        warnings,
        engine: dlmdb::version().0,
        txnid,
        page_size: env_section.page_size,
        env: env_section,
        freelist,
        readers,
        stale_readers_cleared,
        readers_after,
        databases,
    };
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
        let bad_sequence =
            rec.pages.iter().any(|&p| p <= 1) || rec.pages.windows(2).any(|w| w[0] <= w[1]);
        let mut asc = rec.pages.clone();
        asc.sort_unstable();
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for p in asc {
            match runs.last_mut() {
                Some((start, len)) if *start + *len == p => *len += 1,
                _ => runs.push((p, 1)),
            }
        }
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

/// `8589934592` -> `8.0 GiB`: binary units, one decimal above bytes.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
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
    let _ = writeln!(
        out,
        "  Branch pages: {}{}",
        s.branch_pages,
        size_note(human, s.branch_pages * page)
    );
    let _ = writeln!(
        out,
        "  Leaf pages: {}{}",
        s.leaf_pages,
        size_note(human, s.leaf_pages * page)
    );
    let _ = writeln!(
        out,
        "  Overflow pages: {}{}",
        s.overflow_pages,
        size_note(human, s.overflow_pages * page)
    );
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

#[derive(clap::Args)]
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
