//! `dlmdb check`: integrity verification by an independent reader.
//!
//! The checker does not read pages through the engine: it reads the data
//! file with plain positional reads ([`page`]), decodes every structure with
//! `dlmdb_format` (the one Rust description of the on-disk format),
//! bounds-checks every offset, and walks every tree from the current meta
//! page ([`walk`]). The engine is only asked for its layout decision and a
//! read transaction that pins the snapshot being checked. It is therefore
//! both a safety net for damaged stores (it never maps the file, never follows a
//! pointer without checking it, and its memory is bounded by the page map:
//! 2 bytes per page) and a cross-check of the engine.
//!
//! What it verifies: both meta pages, the choice of the current one, a map
//! size a process can map and a txnid a transaction can follow; every
//! page reachable exactly once; page headers (flags that fit the page's
//! role, an even `upper` on node pages, LEAF2 bookkeeping), node bounds and
//! overlaps, leaves compact (no gap between their nodes; packed and
//! prefix-compressed leaves aside); key order within and across pages
//! against the parents' separators (stock orders chosen by the stored
//! flags: default, REVERSEKEY, INTEGERKEY, INTEGERDUP, REVERSEDUP; custom
//! comparators are not recorded in the file and cannot be known); subtree
//! counts on P_COUNTED branch pages; overflow runs; duplicate sub-pages and
//! sub-databases (their records carrying the database's DLMDB-only flags
//! and the DUPFIXED/INTEGERKEY bits LMDB writes for it; packed sub-pages
//! only in DUPFIXED databases); DLMDB-only flags only in padded-layout
//! stores; no named database in a DUPSORT main database; the records'
//! counters against the walk; free-list records (valid, descending,
//! disjoint from used pages and from each other); and that no page is
//! lost: `2 + used + free == last_pg + 1`.

pub mod page;
pub mod walk;

use crate::stat::{flag_names, LayoutChoice};
use dlmdb_format::meta::{page_size_ok, parse_meta, recorded_page_size, Meta, META_SIZE};
use dlmdb_format::{DbFlags, Order};
use page::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering as AtOrd};
use walk::{fmt_pg, TreeKind};

/// Set from a SIGINT handler; the walk stops at the next page.
pub static INTERRUPT: AtomicBool = AtomicBool::new(false);

/// The walk was interrupted.
#[derive(Debug)]
pub struct Interrupted;

const OWNER_NONE: u16 = 0;
const OWNER_META: u16 = 0xfffe;
const OWNER_FREE: u16 = 0xffff;
/// At most this many problems are kept (all are counted).
const MAX_PROBLEMS: usize = 1000;

#[derive(Debug, Clone)]
pub struct CheckOptions {
    pub path: PathBuf,
    /// Check only this named database (global accounting is skipped).
    pub subdb: Option<String>,
    pub layout: LayoutChoice,
    /// Show a progress bar (terminal only; the caller decides).
    pub progress: bool,
    /// Also require every prefix-compressed page to be in the exact form
    /// this engine writes (minimal varints, full common prefixes, `mp_pad`
    /// equal to the longest key).
    /// DLMDB itself may leave raw keys or a stale `mp_pad`, so this is for
    /// stores written by this engine.
    pub strict_prefix: bool,
}

/// One problem found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Problem {
    /// Page number, when the problem is on a page.
    pub page: Option<u64>,
    /// Tree it was found in (`(main)`, `(free)`, a database name, …).
    pub database: String,
    pub message: String,
}

/// Space used by one database.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DbSpace {
    /// `null` for the main database.
    pub name: Option<String>,
    pub flags: Vec<&'static str>,
    pub depth: u16,
    pub branch_pages: u64,
    pub leaf_pages: u64,
    pub overflow_pages: u64,
    /// Pages of duplicate sub-databases (not in the record's counters).
    pub dup_tree_pages: u64,
    /// Entries found by the walk (each duplicate counts).
    pub entries: u64,
    /// All pages of this database: branch + leaf + overflow + dup-tree pages.
    pub pages: u64,
}

/// The `--json` object of `dlmdb check`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckReport {
    pub path: String,
    pub data_file: String,
    /// `lmdb`, `dlmdb-v1` or `dlmdb-v2`.
    pub layout: String,
    pub data_version: u32,
    /// Bytes.
    pub page_size: u64,
    /// File length in whole pages.
    pub file_pages: u64,
    /// Current meta page (0 or 1), its txnid and last page.
    pub meta: u64,
    pub txnid: u64,
    pub last_pgno: u64,
    /// `all` or `database` (with `-s`; no free-list/lost-page accounting).
    pub scope: &'static str,
    /// Free DB first (`(free)`), main DB (`null`), then named databases.
    pub databases: Vec<DbSpace>,
    /// Pages listed in free-list records.
    pub free_pages: u64,
    pub freelist_records: u64,
    /// Pages reachable from the current meta (incl. the 2 meta pages).
    pub used_pages: u64,
    /// Pages neither used nor free.
    pub lost_pages: u64,
    /// `used_pages + free_pages` (should equal `last_pgno + 1`).
    pub accounted_pages: u64,
    /// No problem found.
    pub ok: bool,
    /// Problems (at most 1000 listed).
    pub problems: Vec<Problem>,
    pub problems_total: u64,
    /// Limits of the check worth knowing.
    pub notes: Vec<String>,
}

/// Walk state shared by all trees.
pub struct Checker {
    file: DataFile,
    padded: bool,
    /// Data version of the current meta.
    version: u32,
    last_pg: u64,
    owners: Vec<u16>,
    problems: Vec<Problem>,
    problems_total: u64,
    ticks: u64,
    bar: Option<indicatif::ProgressBar>,
    strict_prefix: bool,
}

impl Checker {
    fn problem(&mut self, page: Option<u64>, db: &str, message: String) {
        self.problems_total += 1;
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(Problem {
                page,
                database: db.to_string(),
                message,
            });
        }
    }

    /// Node layout of the store being checked.
    fn layout(&self) -> dlmdb_format::NodeLayout {
        dlmdb_format::NodeLayout::from_padded(self.padded)
    }

    fn tick(&mut self) -> Result<(), Interrupted> {
        self.ticks += 1;
        if self.ticks.is_multiple_of(1024) {
            if let Some(b) = &self.bar {
                b.set_position(self.ticks);
            }
        }
        if INTERRUPT.load(AtOrd::Relaxed) {
            return Err(Interrupted);
        }
        Ok(())
    }

    /// Mark `pgno` as used by `owner`; false (with a problem) if it is out
    /// of range or already used.
    fn claim(&mut self, pgno: u64, owner: u16, label: &str, from: &str) -> bool {
        if pgno < 2 || pgno > self.last_pg {
            self.problem(
                Some(pgno),
                label,
                format!("page number outside 2..={}{from}", self.last_pg),
            );
            return false;
        }
        let Some(slot) = self.owners.get(pgno as usize).copied() else {
            self.problem(
                Some(pgno),
                label,
                format!("page is beyond the end of the file{from}"),
            );
            return false;
        };
        if slot != OWNER_NONE {
            self.problem(
                Some(pgno),
                label,
                format!("page reached a second time{from}; it is already used (owner #{slot})"),
            );
            return false;
        }
        self.owners[pgno as usize] = owner;
        true
    }
}

/// Result of [`run`]: the report, or interrupted.
pub enum Outcome {
    Done(Box<CheckReport>),
    Interrupted,
}

/// Largest map the engine can get on the platforms it runs on: x86-64 and
/// aarch64 (4-level page tables) give user space 2^47 bytes, less what the
/// process already maps, so 2^47 itself never fits.
pub const MAX_MAPPABLE: u64 = 1 << 47;

/// Why the engine cannot map a map size recorded in a meta page, or `None`.
pub fn unmappable_map_size(mapsize: u64, psize: u64) -> Option<String> {
    if mapsize > u64::MAX - psize {
        return Some(format!(
            "map size {mapsize} cannot be rounded up to whole pages (the engine refuses it)"
        ));
    }
    (mapsize >= MAX_MAPPABLE).then(|| {
        format!("map size {mapsize} bytes is more than a process can map (the engine refuses it)")
    })
}

/// Data file of PATH (a directory or the file itself).
pub fn data_file_of(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("data.mdb")
    } else {
        path.to_path_buf()
    }
}

/// Run the check. `Err` only for system errors (file cannot be opened).
pub fn run(opts: &CheckOptions) -> anyhow::Result<Outcome> {
    use anyhow::Context;
    let data_file = data_file_of(&opts.path);
    // Through the engine first: its layout decision, and a read txn held
    // for the whole check, which keeps writers of a live store from reusing
    // any page of the snapshot read below (or of a newer one). A file the
    // engine refuses (damaged) is still checked, by the file reader alone;
    // a lock file that cannot be shared is an error with advice.
    // The engine's refusal of the layout given (or of the file's mix of
    // layouts) is the first problem reported: the walk then reads in a
    // layout the file contradicts, and what it finds follows from that.
    let mut layout_refused = None;
    let engine = match dlmdb::Env::open_detect(&opts.path, &crate::stat::open_options(opts.layout))
    {
        Ok(o) => Some(o),
        Err(e @ dlmdb::OpenError::LockUnshared { .. }) => {
            return Err(crate::error::lock_unshared(
                e,
                "to check without it use --no-lock (MDB_NOLOCK: a process writing meanwhile \
                 may make the check report problems that are not there)",
            ))
        }
        Err(dlmdb::OpenError::Layout { message, .. }) => {
            layout_refused = Some(message);
            None
        }
        Err(_) => None,
    };
    let _pin = engine.as_ref().and_then(|o| o.env.read_txn().ok());
    let mut file = DataFile::open(&data_file)
        .with_context(|| format!("cannot open {}", data_file.display()))?;
    let mut report = CheckReport {
        path: opts.path.display().to_string(),
        data_file: data_file.display().to_string(),
        layout: String::new(),
        data_version: 0,
        page_size: 0,
        file_pages: 0,
        meta: 0,
        txnid: 0,
        last_pgno: 0,
        scope: if opts.subdb.is_some() { "database" } else { "all" },
        databases: Vec::new(),
        free_pages: 0,
        freelist_records: 0,
        used_pages: 0,
        lost_pages: 0,
        accounted_pages: 0,
        ok: false,
        problems: Vec::new(),
        problems_total: 0,
        notes: vec![
            "keys are checked against the stock order for the stored flags; custom comparators are not recorded in the file and cannot be checked".into(),
        ],
    };
    let fatal = |report: &mut CheckReport, msg: String| {
        report.problems.push(Problem {
            page: None,
            database: "(meta)".into(),
            message: msg,
        });
        report.problems_total += 1;
    };
    // Another library's format cannot be checked (exit status 2, not 1).
    if let Some(note) = crate::util::unsupported_format_note(&data_file) {
        anyhow::bail!(note);
    }
    // Page size: from meta 0, else from a valid meta 1 at a power-of-two offset.
    let head = file.read_at(0, META_SIZE)?;
    let mut psize = head.as_deref().and_then(recorded_page_size).unwrap_or(0) as usize;
    if !page_size_ok(psize) {
        psize = 0;
        for cand in [4096usize, 8192, 16384, 32768, 65536, 512, 1024, 2048] {
            if let Ok(Some(b)) = file.read_at(cand as u64, META_SIZE) {
                if parse_meta(&b, 1).is_ok_and(|m| m.page_size() == cand as u32) {
                    psize = cand;
                    break;
                }
            }
        }
    }
    if psize == 0 {
        fatal(&mut report, format!(
            "no valid meta page: not an LMDB/DLMDB data file, or both meta pages are damaged ({} bytes)",
            file.len
        ));
        return Ok(Outcome::Done(Box::new(report)));
    }
    file.psize = psize;
    report.page_size = psize as u64;
    report.file_pages = file.pages();
    let mut metas = [None, None];
    let mut meta_problems = Vec::new();
    for which in 0..2u64 {
        match file.read_at(which * psize as u64, psize)? {
            None => meta_problems.push((which, "missing: the file is too short".to_string())),
            Some(b) => match parse_meta(&b, which) {
                Ok(m) if m.page_size() as usize != psize => meta_problems.push((
                    which,
                    format!("page size field {} differs from {psize}", m.page_size()),
                )),
                Ok(m) => metas[which as usize] = Some(m),
                Err(e) => meta_problems.push((which, e.to_string())),
            },
        }
    }
    // The engine maps the whole map size the current meta records (and a
    // commit carries the larger of both forward): a size no process can map
    // makes every open fail.
    for (which, m) in metas.iter().enumerate() {
        if let Some(m) = m {
            if let Some(why) = unmappable_map_size(m.mapsize, psize as u64) {
                meta_problems.push((which as u64, why));
            }
        }
    }
    let cur = match (metas[0], metas[1]) {
        (Some(a), Some(b)) => {
            if a.version != b.version {
                meta_problems.push((
                    1,
                    format!(
                        "data version {} differs from meta 0's {}",
                        b.version, a.version
                    ),
                ));
            }
            if a.txnid == b.txnid && a.txnid != 0 {
                meta_problems.push((1, format!("both meta pages have txnid {}", a.txnid)));
            }
            if b.txnid > a.txnid {
                1
            } else {
                0
            }
        }
        (Some(_), None) => 0,
        (None, Some(_)) => 1,
        (None, None) => {
            for (w, e) in meta_problems {
                fatal(&mut report, format!("meta page {w}: {e}"));
            }
            return Ok(Outcome::Done(Box::new(report)));
        }
    };
    // A commit writes the meta page of its txn id's parity (a new file's two
    // metas both hold txn id 0): a meta in the other page has had its id
    // changed. The newest one there would have the next commit overwrite
    // the only meta holding the newest snapshot, so the engine refuses to
    // begin a write transaction (MDB_CORRUPTED).
    for (which, m) in metas.iter().enumerate() {
        if let Some(m) = m.filter(|m| m.txnid != 0 && m.txnid % 2 != which as u64) {
            let refusal = if which as u64 == cur {
                ": the next commit would overwrite this newest snapshot, so the engine refuses to write"
            } else {
                ""
            };
            meta_problems.push((
                which as u64,
                format!(
                    "txnid {} belongs in meta page {} (a commit writes the page of its id's parity){refusal}",
                    m.txnid,
                    m.txnid % 2
                ),
            ));
        }
    }
    let meta = metas[cur as usize].unwrap();
    // The next write transaction takes txnid + 1: at the largest id there is
    // none (it would wrap to 0 and lose to the other meta), and the engine
    // refuses to begin one (MDB_CORRUPTED).
    if meta.txnid == u64::MAX {
        meta_problems.push((
            cur,
            format!(
                "txnid {} is the largest possible: no transaction can follow it (the engine refuses to write)",
                meta.txnid
            ),
        ));
    }
    report.meta = cur;
    report.txnid = meta.txnid;
    report.last_pgno = meta.last_pg;
    report.data_version = meta.version;
    if let Some(why) = layout_refused {
        fatal(&mut report, format!("the engine refuses the store: {why}"));
    }
    // A file too short for the pages its meta uses: one problem, stated
    // before the walk's.
    if let Some(why) = crate::store::read_meta(&data_file)
        .ok()
        .flatten()
        .and_then(|m| m.truncation())
    {
        fatal(&mut report, why);
    }
    let padded = match (meta.version, opts.layout, engine.as_ref()) {
        (2, _, _) => true,
        (_, _, Some(o)) => o.layout != dlmdb::Layout::Lmdb,
        (_, LayoutChoice::Dlmdb, None) => true,
        (_, LayoutChoice::Lmdb, None) => false,
        // The engine refused the file: the file-level probe decides.
        (_, LayoutChoice::Auto, None) => matches!(
            dlmdb::probe_layout(&data_file).map(|p| p.verdict()),
            Ok(dlmdb::ProbeVerdict::Proven(dlmdb::Layout::DlmdbV1))
        ),
    };
    if let Some(o) = &engine {
        report.notes.extend(o.warnings.iter().cloned());
    }
    report.layout = match (meta.version, padded) {
        (2, _) => "dlmdb-v2",
        (_, true) => "dlmdb-v1",
        _ => "lmdb",
    }
    .into();
    // Bound the page map: pages far beyond the file cannot be in use.
    let map_pages = meta.last_pg.saturating_add(1).min(file.pages() + (1 << 20));
    if meta.last_pg.saturating_add(1) > map_pages {
        fatal(&mut report, format!(
            "last page {} is far beyond the end of the file ({} pages); pages past {} are not checked",
            meta.last_pg,
            file.pages(),
            map_pages - 1
        ));
    }
    let bar = if opts.progress && meta.last_pg > 100_000 {
        let b = indicatif::ProgressBar::new(meta.last_pg.saturating_add(1));
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "checking {bar:40} {pos}/{len} pages {per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(b)
    } else {
        None
    };
    let mut ck = Checker {
        file,
        padded,
        version: meta.version,
        last_pg: meta.last_pg,
        owners: vec![OWNER_NONE; map_pages as usize],
        problems: report.problems.clone(),
        problems_total: report.problems_total,
        ticks: 0,
        bar,
        strict_prefix: opts.strict_prefix,
    };
    for (w, e) in meta_problems {
        ck.problem(Some(w), "(meta)", format!("meta page {w}: {e}"));
    }
    for p in 0..2.min(map_pages as usize) {
        ck.owners[p] = OWNER_META;
    }
    let result = check_trees(&mut ck, &meta, opts, &mut report);
    if let Some(b) = &ck.bar {
        b.finish_and_clear();
    }
    if result.is_err() {
        return Ok(Outcome::Interrupted);
    }
    report.problems = std::mem::take(&mut ck.problems);
    report.problems_total = ck.problems_total;
    report.ok = report.problems_total == 0;
    Ok(Outcome::Done(Box::new(report)))
}

/// MDB_COUNTED and MDB_PREFIX_COMPRESSION need DLMDB's padded node
/// layout: in a stock-layout store the engine refuses such a database with
/// MDB_INCOMPATIBLE.
fn layout_flag_problem(padded: bool, flags: u16) -> Option<String> {
    let dlmdb_only = DbFlags::from_bits_retain(flags) & DbFlags::DLMDB_ONLY;
    (!padded && !dlmdb_only.is_empty()).then(|| {
        format!(
            "database flags {flags:#x} include DLMDB-only bits ({}) in a stock-layout store: the engine refuses it (MDB_INCOMPATIBLE)",
            flag_names(dlmdb::DatabaseFlags::from_bits_retain(dlmdb_only.bits().into())).join(", ")
        )
    })
}

/// Database flag bits no writer sets.
fn unknown_flag_bits(flags: u16) -> Option<u16> {
    let unknown = flags & !DbFlags::all().bits();
    (unknown != 0).then_some(flags)
}

fn check_trees(
    ck: &mut Checker,
    meta: &Meta,
    opts: &CheckOptions,
    report: &mut CheckReport,
) -> Result<(), Interrupted> {
    let space = |name: Option<String>, flags: u16, t: &walk::Tally| DbSpace {
        name,
        flags: flag_names(dlmdb::DatabaseFlags::from_bits_retain(flags.into())),
        depth: t.depth,
        branch_pages: t.branch_pages,
        leaf_pages: t.leaf_pages,
        overflow_pages: t.overflow_pages,
        dup_tree_pages: t.dup_tree_pages,
        entries: t.entries,
        pages: t.branch_pages + t.leaf_pages + t.overflow_pages + t.dup_tree_pages,
    };
    let kind = |label: String, owner: u16, flags: u16| TreeKind {
        label,
        owner,
        order: Order::for_keys(DbFlags::from_bits_truncate(flags)),
        db_flags: flags,
        dup_tree: false,
        prefix: DbFlags::from_bits_retain(flags).contains(DbFlags::PREFIX_COMPRESSION),
        counted: DbFlags::from_bits_retain(flags).contains(DbFlags::COUNTED),
        leaf2: None,
        is_main: false,
        is_free: false,
    };
    // FREE_DBI: 8-byte integer keys, page lists as values.
    let mut fk = kind("(free)".into(), 1, 0);
    fk.order = Order::Integer;
    fk.is_free = true;
    let free = ck.walk_tree(&fk, &meta.free)?;
    report
        .databases
        .push(space(Some("(free)".into()), 0, &free.tally));
    // Main database.
    let mflags = meta.main.flags;
    if unknown_flag_bits(mflags).is_some() {
        ck.problem(
            None,
            "(main)",
            format!("unknown main database flag bits {mflags:#x}"),
        );
    }
    if let Some(why) = layout_flag_problem(ck.padded, mflags) {
        ck.problem(None, "(main)", why);
    }
    let mut mk = kind("(main)".into(), 2, mflags);
    mk.is_main = true;
    let main = ck.walk_tree(&mk, &meta.main)?;
    report.databases.push(space(None, mflags, &main.tally));
    // Named databases.
    let mut found = false;
    for (idx, nd) in main.named.iter().enumerate() {
        let name = String::from_utf8_lossy(&nd.name).into_owned();
        if let Some(only) = &opts.subdb {
            if *only != name {
                continue;
            }
        }
        found = true;
        let f = nd.record.flags;
        if unknown_flag_bits(f).is_some() {
            ck.problem(
                Some(nd.pgno),
                &name,
                format!("unknown database flag bits {f:#x}"),
            );
        }
        if let Some(why) = layout_flag_problem(ck.padded, f) {
            ck.problem(Some(nd.pgno), &name, why);
        }
        let owner = (3 + idx).min(0xfffd) as u16;
        let t = ck.walk_tree(&kind(name.clone(), owner, f), &nd.record)?;
        report.databases.push(space(Some(name), f, &t.tally));
    }
    if let Some(only) = &opts.subdb {
        if !found {
            ck.problem(
                None,
                only,
                "no such named database in the main database".into(),
            );
        }
        return Ok(());
    }
    // Free pages: valid, listed once, not in use.
    let mut free_pages = 0u64;
    for rec in &free.free {
        for &p in &rec.pages {
            free_pages += 1;
            if p < 2 || p > ck.last_pg {
                ck.problem(
                    Some(p),
                    "(free)",
                    format!(
                        "free-list record of txn {} (leaf page {}) lists page {} outside 2..={}",
                        rec.txnid,
                        rec.pgno,
                        fmt_pg(p),
                        ck.last_pg
                    ),
                );
                continue;
            }
            let Some(slot) = ck.owners.get(p as usize).copied() else {
                continue;
            };
            match slot {
                OWNER_NONE => ck.owners[p as usize] = OWNER_FREE,
                OWNER_FREE => ck.problem(
                    Some(p),
                    "(free)",
                    format!(
                        "page listed free twice (again in the record of txn {})",
                        rec.txnid
                    ),
                ),
                o => {
                    let user = report
                        .databases
                        .iter()
                        .enumerate()
                        .find(|(i, _)| owner_of_index(*i) == o)
                        .map(|(_, d)| d.name.clone().unwrap_or_else(|| "(main)".into()))
                        .unwrap_or_else(|| {
                            if o == OWNER_META {
                                "a meta page".into()
                            } else {
                                format!("tree #{o}")
                            }
                        });
                    ck.problem(
                        Some(p),
                        "(free)",
                        format!(
                            "page is on the free list (record of txn {}) but in use by {user}",
                            rec.txnid
                        ),
                    );
                }
            }
        }
    }
    report.free_pages = free_pages;
    report.freelist_records = free.free.len() as u64;
    // Count lost pages; remember only the first few (a wrecked file could
    // have millions).
    let (mut used, mut freed, mut lost, mut lost_first) = (0u64, 0u64, 0u64, Vec::new());
    for (p, &o) in ck.owners.iter().enumerate() {
        match o {
            OWNER_NONE => {
                lost += 1;
                if lost_first.len() < 20 {
                    lost_first.push(p as u64);
                }
            }
            OWNER_FREE => freed += 1,
            _ => used += 1,
        }
    }
    // Pages beyond the map (only when last_pg is absurd) count as lost.
    let beyond = ck
        .last_pg
        .saturating_add(1)
        .saturating_sub(ck.owners.len() as u64);
    report.used_pages = used;
    report.lost_pages = lost + beyond;
    report.accounted_pages = used + freed;
    if lost > 0 {
        let list: Vec<String> = lost_first.iter().map(u64::to_string).collect();
        ck.problem(
            Some(lost_first[0]),
            "(space)",
            format!(
                "{lost} page(s) neither reachable nor free (lost): {}{}",
                list.join(", "),
                if lost > 20 { ", ..." } else { "" }
            ),
        );
    }
    if used + freed + beyond != ck.last_pg.saturating_add(1) {
        ck.problem(
            None,
            "(space)",
            format!(
                "2 + used + free = {} but last_pg + 1 = {}",
                used + freed,
                ck.last_pg.saturating_add(1)
            ),
        );
    }
    Ok(())
}

/// Owner id of the i-th entry of `report.databases` (free, main, named...).
fn owner_of_index(i: usize) -> u16 {
    (i + 1).min(0xfffd) as u16
}

/// Human-readable report.
pub fn render_text(r: &CheckReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} layout, page size {}, meta {} (txn {}), last page {}, file {} pages",
        r.data_file, r.layout, r.page_size, r.meta, r.txnid, r.last_pgno, r.file_pages
    );
    if !r.databases.is_empty() {
        let _ = writeln!(
            s,
            "{:<24} {:>8} {:>8} {:>8} {:>8} {:>10} {:>12}  flags",
            "database", "branch", "leaf", "overflow", "dup-tree", "pages", "entries"
        );
        for d in &r.databases {
            let name = d.name.clone().unwrap_or_else(|| "(main)".into());
            let _ = writeln!(
                s,
                "{:<24} {:>8} {:>8} {:>8} {:>8} {:>10} {:>12}  {}",
                name,
                d.branch_pages,
                d.leaf_pages,
                d.overflow_pages,
                d.dup_tree_pages,
                d.pages,
                d.entries,
                if d.flags.is_empty() {
                    "-".to_string()
                } else {
                    d.flags.join(",")
                }
            );
        }
    }
    if r.scope == "all" && r.page_size > 0 {
        let _ = writeln!(s, "space: {} used (incl. 2 meta) + {} free in {} records = {} of last_pg + 1 = {}; {} lost",
            r.used_pages, r.free_pages, r.freelist_records, r.accounted_pages, r.last_pgno.saturating_add(1), r.lost_pages);
    }
    for p in &r.problems {
        match p.page {
            Some(pg) => {
                let _ = writeln!(s, "PROBLEM page {pg} [{}]: {}", p.database, p.message);
            }
            None => {
                let _ = writeln!(s, "PROBLEM [{}]: {}", p.database, p.message);
            }
        }
    }
    if r.problems_total as usize > r.problems.len() {
        let _ = writeln!(
            s,
            "... {} more problems not listed",
            r.problems_total as usize - r.problems.len()
        );
    }
    let _ = writeln!(
        s,
        "{}",
        if r.ok {
            "OK: no problems found".to_string()
        } else {
            format!("FAILED: {} problem(s) found", r.problems_total)
        }
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use dlmdb::{DatabaseFlags, Env, EnvFlags, WriteFlags};

    fn store(flags: EnvFlags) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("d.mdb");
        let env = Env::builder()
            .flags(flags | EnvFlags::NO_SUB_DIR)
            .max_dbs(4)
            .open(&f)
            .unwrap();
        let db = env.create_db(Some("abc"), DatabaseFlags::empty()).unwrap();
        for round in 0..3u8 {
            let mut txn = env.write_txn().unwrap();
            for i in 0..2000u32 {
                let v = vec![round; if i % 500 == 0 { 9000 } else { 20 }];
                txn.put(db, format!("k{i:06}").as_bytes(), &v, WriteFlags::empty())
                    .unwrap();
            }
            txn.commit().unwrap();
        }
        (tmp, f)
    }

    /// The interrupt flag is process-wide: tests of this module take turns.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn run_on(path: &Path) -> CheckReport {
        let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let opts = CheckOptions {
            path: path.to_path_buf(),
            subdb: None,
            layout: LayoutChoice::Auto,
            progress: false,
            strict_prefix: false,
        };
        match run(&opts).unwrap() {
            Outcome::Done(r) => *r,
            Outcome::Interrupted => panic!("interrupted"),
        }
    }

    #[test]
    fn clean_stores_in_both_formats() {
        for fl in [EnvFlags::empty(), EnvFlags::FORMAT_LMDB] {
            let (_t, f) = store(fl);
            let r = run_on(&f);
            assert!(r.ok, "{:?}", r.problems);
            assert_eq!(r.accounted_pages, r.last_pgno + 1);
            let abc = r
                .databases
                .iter()
                .find(|d| d.name.as_deref() == Some("abc"))
                .unwrap();
            assert_eq!(abc.entries, 2000);
            assert!(abc.overflow_pages >= 4 * 3);
        }
    }

    #[test]
    fn one_damaged_meta_is_reported_and_the_other_used() {
        let (_t, f) = store(EnvFlags::empty());
        let mut b = std::fs::read(&f).unwrap();
        let cur = run_on(&f).meta as usize;
        // Damage the other (older) meta: the check still walks the current one.
        let other = 1 - cur;
        b[other * 4096 + 16] ^= 0xff;
        std::fs::write(&f, &b).unwrap();
        let r = run_on(&f);
        assert_eq!(r.meta as usize, cur);
        assert!(!r.ok);
        assert!(
            r.problems.iter().any(|p| p.message.contains("bad magic")),
            "{:?}",
            r.problems
        );
        assert!(r.databases.len() >= 3);
        // Both damaged: nothing to walk, one fatal problem.
        b[cur * 4096 + 16] ^= 0xff;
        std::fs::write(&f, &b).unwrap();
        let r = run_on(&f);
        assert!(!r.ok && r.databases.is_empty());
    }

    #[test]
    fn interrupt_flag_stops_the_walk() {
        let (_t, f) = store(EnvFlags::empty());
        let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        INTERRUPT.store(true, AtOrd::Relaxed);
        let opts = CheckOptions {
            path: f.clone(),
            subdb: None,
            layout: LayoutChoice::Auto,
            progress: false,
            strict_prefix: false,
        };
        let out = run(&opts).unwrap();
        INTERRUPT.store(false, AtOrd::Relaxed);
        assert!(matches!(out, Outcome::Interrupted));
    }
}
