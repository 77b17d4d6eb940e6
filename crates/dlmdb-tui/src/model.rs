//! Gathering figures from a store through the safe `dlmdb` API. Nothing in
//! here renders; everything returns plain owned data so a snapshot can
//! outlive the read transaction it came from.
//!
//! Opening is [`dlmdb::Env::open_detect`], as in `dlmdb stat`: the engine
//! decides the layout (a version-2 file is DLMDB v2; a version-1 file by
//! evidence in the file, stock without any), the lock file is shared with
//! the processes using the store, and a lock file that cannot be shared is
//! an error advising `--no-lock`.

use anyhow::{bail, Context, Result};
use dlmdb::{
    CountFlags, CursorOp, Database, DatabaseFlags, Env, Layout, LayoutChoice, LevelSummary,
    LockFormat, LockUse, OpenError, PageInfo, PageKind, RoTxn, Stat, WalkSummary,
};
use dlmdb_format::{NodeLayout, DB_RECORD_SIZE, PAGE_HEADER_SIZE};
use std::cmp::Ordering;
use std::path::{Path, PathBuf};

/// `--format`: which node layout to read the store in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatChoice {
    /// Version 2 is DLMDB v2; version 1 as the engine decides from the file.
    Auto,
    /// Stock LMDB (version 1, unpadded).
    Lmdb,
    /// DLMDB's even-padded version 1.
    #[value(alias = "dlmdb")]
    DlmdbV1,
    /// DLMDB data version 2 (refuses version-1 files).
    DlmdbV2,
}

/// How to open a store.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    pub path: PathBuf,
    pub format: FormatChoice,
    /// `Some(true)`: PATH is the data file; `Some(false)`: a directory;
    /// `None`: decide from what PATH is.
    pub no_subdir: Option<bool>,
    /// Skip the lock file (MDB_NOLOCK; only safe when no process writes
    /// the store).
    pub no_lock: bool,
    /// `--lock-format`: lock file layout when the viewer is the first
    /// process on the store (a lock file other processes hold keeps theirs).
    pub lock_format: LockFormat,
}

impl OpenOptions {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        OpenOptions {
            path: path.into(),
            format: FormatChoice::Auto,
            no_subdir: None,
            no_lock: false,
            lock_format: LockFormat::Auto,
        }
    }
}

/// An open, read-only store.
pub struct Store {
    env: Env,
    pub data_file: PathBuf,
    pub no_subdir: bool,
    pub data_version: Option<u32>,
    /// Why this layout was chosen.
    pub layout_reason: String,
    /// Opened without a lock file (reader table unavailable; a concurrent
    /// writer may reuse pages under us).
    pub no_lock: bool,
    /// Things worth telling the user once.
    pub notes: Vec<String>,
}

impl Store {
    /// Open read-only with [`Env::open_detect`]. Never writes the data file;
    /// the lock file is created or joined unless `no_lock`.
    pub fn open(opts: &OpenOptions) -> Result<Store> {
        let path = &opts.path;
        let (_, file) = dlmdb::locate_data_file(path, opts.no_subdir)?;
        if !file.exists() {
            bail!(
                "{} does not exist (not an LMDB environment?)",
                file.display()
            );
        }
        let o = dlmdb::OpenOptions {
            layout: match opts.format {
                FormatChoice::Auto => LayoutChoice::Auto,
                FormatChoice::Lmdb => LayoutChoice::Lmdb,
                FormatChoice::DlmdbV1 => LayoutChoice::DlmdbV1,
                FormatChoice::DlmdbV2 => LayoutChoice::DlmdbV2,
            },
            lock_format: opts.lock_format,
            no_lock: opts.no_lock,
            no_subdir: opts.no_subdir,
            ..dlmdb::OpenOptions::default()
        };
        let opened = match Env::open_detect(path, &o) {
            Ok(o) => o,
            Err(e @ OpenError::LockUnshared { .. }) => bail!(
                "{e}; to browse without it use --no-lock (MDB_NOLOCK: a process writing \
                 meanwhile may change what is shown)"
            ),
            Err(e) => return Err(e.into()),
        };
        let reason = match opts.format {
            FormatChoice::Lmdb => format!("--format lmdb; {}", opened.reason),
            FormatChoice::DlmdbV1 => format!("--format dlmdb-v1; {}", opened.reason),
            _ => opened.reason,
        };
        Ok(Store {
            no_lock: opened.lock == LockUse::None,
            env: opened.env,
            data_file: opened.data_file,
            no_subdir: opened.no_subdir,
            data_version: Some(opened.data_version),
            layout_reason: reason,
            notes: opened.warnings,
        })
    }

    pub fn layout(&self) -> Layout {
        self.env.layout()
    }

    /// Start a fresh read transaction (adopting a grown map first if another
    /// process enlarged it).
    pub fn view(&mut self) -> Result<View<'_>> {
        if let Err(dlmdb::Error::MapResized) = self.env.read_txn().map(drop) {
            self.env
                .set_map_size(0)
                .context("adopting the grown map size")?;
        }
        let txn = self.env.read_txn().context("starting a read transaction")?;
        Ok(View::new(&self.env, txn, self.no_lock, &self.data_file))
    }
}

/// Which database: `None` is the main (unnamed) one.
pub type DbName = Option<String>;

/// Environment header figures.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EnvSummary {
    pub layout: Option<Layout>,
    pub data_version: Option<u32>,
    pub layout_reason: String,
    pub page_size: u32,
    pub map_size: u64,
    pub last_txnid: u64,
    pub last_pgno: u64,
    pub max_readers: u32,
    /// Reader slots bound to a process (this viewer's included); `None`
    /// without a lock file.
    pub readers_held: Option<u32>,
    /// Of those, slots inside a read transaction (this viewer's refresh included).
    pub readers_reading: Option<u32>,
    /// Free pages on the free list.
    pub free_pages: Option<u64>,
    pub no_lock: bool,
    /// Bytes of the data file.
    pub file_len: Option<u64>,
}

impl EnvSummary {
    /// Bytes the meta page says are in use (pages 0 ..= last page).
    pub fn used_bytes(&self) -> u64 {
        (self.last_pgno + 1) * u64::from(self.page_size)
    }
    /// The data file is shorter than the meta page's last page needs.
    pub fn truncated(&self) -> bool {
        self.file_len.is_some_and(|n| n < self.used_bytes())
    }
}

/// One row of the database list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbSummary {
    pub name: DbName,
    pub flags: DatabaseFlags,
    pub stat: Stat,
    /// `mdb_count_all` for COUNTED databases.
    pub counted: Option<u64>,
    /// Set when this database could not be opened or read.
    pub error: Option<String>,
}

impl DbSummary {
    pub fn label(&self) -> String {
        match &self.name {
            None => "(main)".to_string(),
            Some(n) => n.clone(),
        }
    }
    /// Bytes of all pages the stored counters account for.
    pub fn bytes(&self) -> u64 {
        (self.stat.branch_pages + self.stat.leaf_pages + self.stat.overflow_pages)
            * u64::from(self.stat.page_size)
    }
}

/// The database flags the viewer names, in display order: the label the
/// detail pane shows and the short code of the database table.
const FLAG_NAMES: [(DatabaseFlags, &str, &str); 8] = [
    (DatabaseFlags::DUP_SORT, "DUPSORT", "DUP"),
    (DatabaseFlags::DUP_FIXED, "DUPFIXED", "FIX"),
    (DatabaseFlags::INTEGER_KEY, "INTEGERKEY", "IKEY"),
    (DatabaseFlags::INTEGER_DUP, "INTEGERDUP", "IDUP"),
    (DatabaseFlags::REVERSE_KEY, "REVERSEKEY", "RKEY"),
    (DatabaseFlags::REVERSE_DUP, "REVERSEDUP", "RDUP"),
    (DatabaseFlags::COUNTED, "COUNTED", "CNT"),
    (DatabaseFlags::PREFIX_COMPRESSION, "PREFIX", "PFX"),
];

/// Upper-case labels of the set database flags.
pub fn flag_labels(f: DatabaseFlags) -> Vec<&'static str> {
    FLAG_NAMES
        .iter()
        .filter(|(b, ..)| f.contains(*b))
        .map(|(_, label, _)| *label)
        .collect()
}

/// Short codes of the set database flags, `,`-separated; `-` when none.
pub fn flag_codes(f: DatabaseFlags) -> String {
    let v: Vec<&str> = FLAG_NAMES
        .iter()
        .filter(|(b, ..)| f.contains(*b))
        .map(|(.., code)| *code)
        .collect();
    if v.is_empty() {
        "-".into()
    } else {
        v.join(",")
    }
}

/// Everything the header and the database list show.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snapshot {
    pub env: EnvSummary,
    /// Main database first, then named databases in key order.
    pub dbs: Vec<DbSummary>,
    /// Id of the read transaction the figures come from.
    pub txnid: u64,
}

/// `logical / stored`; 1 when nothing is stored.
fn ratio(logical: u64, stored: u64) -> f64 {
    if stored == 0 {
        1.0
    } else {
        logical as f64 / stored as f64
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Overflow (large value) usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OverflowInfo {
    pub runs: u64,
    pub pages: u64,
    pub largest_run: u64,
    /// Value bytes + page headers actually used in the runs.
    pub used_bytes: u64,
    /// Bytes allocated (`pages * page_size`).
    pub allocated_bytes: u64,
}

/// Duplicate storage of a DUPSORT database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DupInfo {
    /// Distinct keys (leaf nodes of the main tree).
    pub keys: u64,
    /// Key/value pairs (`Stat::entries`).
    pub values: u64,
    /// Inline duplicate sub-pages.
    pub sub_pages: u64,
    /// Keys whose duplicates live in their own sub-tree.
    pub sub_trees: u64,
    /// Pages of those sub-trees.
    pub sub_tree_pages: u64,
    pub sub_used_bytes: u64,
    pub sub_free_bytes: u64,
}

/// Key bytes of the main tree's leaves, logical vs stored.
///
/// How it is computed (no guessing from averages): the page walk lists the
/// main tree's leaf pages left to right with their node counts; a cursor
/// walks the distinct keys in the same order, so the first `n0` keys are on
/// leaf 0, the next `n1` on leaf 1, and so on. On a prefix-compressed leaf
/// node 0 (the trunk) stores its key raw and node i >= 1 stores
/// `varint(s) ++ key[s..]`, `s` = longest common prefix with the trunk.
/// `stored_key_bytes` sums those encoded lengths (`mn_ksize`),
/// `logical_key_bytes` the full key lengths. For databases without the
/// flag both are the raw lengths and `if_compressed_bytes` tells what
/// compression would store.
///
/// `node_check` rebuilds every leaf's used bytes from these key sizes plus
/// node headers, even-padding, pointers and data sizes (value, overflow page
/// number, sub-page size, or sub-database record as the walk reports them)
/// and compares them with what the page walk measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Compression {
    pub prefix: bool,
    pub keys: u64,
    pub logical_key_bytes: u64,
    pub stored_key_bytes: u64,
    /// Stored key bytes if the leaves were prefix-compressed.
    pub if_compressed_bytes: u64,
    /// Leaf pages accounted (fewer than `leaf_pages_total` when capped).
    pub leaf_pages_seen: u64,
    pub leaf_pages_total: u64,
    /// `Some((matching, checked))` leaf pages whose rebuilt size equals the walk's.
    pub node_check: Option<(u64, u64)>,
    /// DUPSORT: values stored in sub-pages / sub-databases (the same
    /// method, each page against its own first value; DUPFIXED pages are
    /// never compressed).
    pub dup_values: u64,
    pub logical_value_bytes: u64,
    pub stored_value_bytes: u64,
    pub if_compressed_value_bytes: u64,
    /// Bytes of the accounted leaves' pointers and nodes as stored, as
    /// they would be without compression, and with it.
    pub leaf_bytes_stored: u64,
    pub leaf_bytes_plain: u64,
    pub leaf_bytes_compressed: u64,
}

impl Compression {
    /// Leaf pages the accounted leaves would take laid out without
    /// compression (prefix databases) or with it (others), at the tree's
    /// present fill: `leaves * other bytes / stored bytes`, rounded up.
    pub fn leaf_pages_other_layout(&self) -> u64 {
        let other = if self.prefix {
            self.leaf_bytes_plain
        } else {
            self.leaf_bytes_compressed
        };
        if self.leaf_bytes_stored == 0 {
            return self.leaf_pages_seen;
        }
        (self.leaf_pages_seen as u128 * other as u128).div_ceil(self.leaf_bytes_stored as u128)
            as u64
    }

    /// Leaf pages compression saves (prefix databases) or would save (others).
    pub fn pages_saved(&self) -> i64 {
        let other = self.leaf_pages_other_layout() as i64;
        if self.prefix {
            other - self.leaf_pages_seen as i64
        } else {
            self.leaf_pages_seen as i64 - other
        }
    }

    /// Logical / stored (>= 1 means the stored form is smaller).
    pub fn ratio(&self) -> f64 {
        ratio(self.logical_key_bytes, self.stored_key_bytes)
    }
    /// Percentage of key bytes saved.
    pub fn saved_percent(&self) -> f64 {
        100.0 - percent(self.stored_key_bytes, self.logical_key_bytes)
    }
    /// Logical / stored for duplicate values.
    pub fn value_ratio(&self) -> f64 {
        ratio(self.logical_value_bytes, self.stored_value_bytes)
    }
    pub fn partial(&self) -> bool {
        self.leaf_pages_seen < self.leaf_pages_total
    }
}

/// COUNTED databases: the engine's totals side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CountedInfo {
    /// `mdb_count_all`.
    pub count_all: Option<u64>,
    /// Sum of the counts stored in the root branch page (`None` when the
    /// root is a leaf).
    pub root_sum: Option<u64>,
    /// Counted branch pages seen in the main tree.
    pub counted_branches: u64,
}

/// Everything the detail pane shows for one database.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DbDetail {
    pub name: DbName,
    pub flags: DatabaseFlags,
    pub stat: Stat,
    pub walk: WalkSummary,
    pub levels: Vec<LevelSummary>,
    pub overflow: OverflowInfo,
    pub dup: Option<DupInfo>,
    pub compression: Option<Compression>,
    pub counted: Option<CountedInfo>,
    /// Walk totals equal the stored counters (pages and depth; entries too
    /// for non-DUPSORT databases).
    pub walk_matches_stat: bool,
    /// The stored page counters include duplicate sub-tree pages (DUPSORT
    /// databases in data version 2).
    pub counters_include_subtrees: bool,
    pub txnid: u64,
}

/// A position in a database: a key, and for DUPSORT databases the value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pos {
    pub key: Vec<u8>,
    pub val: Option<Vec<u8>>,
}

/// One line of the entry browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub key: Vec<u8>,
    pub val: Vec<u8>,
    /// DUPSORT: this is the key's first value.
    pub first_dup: bool,
    /// DUPSORT: number of values of the key (1 otherwise).
    pub dups: u64,
}

impl Row {
    pub fn pos(&self, dupsort: bool) -> Pos {
        Pos {
            key: self.key.clone(),
            val: dupsort.then(|| self.val.clone()),
        }
    }
}

/// Where the entry browser's window starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    First,
    /// The item at this position, or the next one after it.
    At(Pos),
    /// The first key >= these bytes.
    Key(Vec<u8>),
}

/// Cap on keys read for the compression figures per refresh.
pub const COMPRESSION_KEY_CAP: u64 = 300_000;

/// One read transaction on a [`Store`].
pub struct View<'e> {
    env: &'e Env,
    txn: RoTxn<'e>,
    no_lock: bool,
    data_file: &'e Path,
}

impl<'e> View<'e> {
    fn new(env: &'e Env, txn: RoTxn<'e>, no_lock: bool, data_file: &'e Path) -> Self {
        View {
            env,
            txn,
            no_lock,
            data_file,
        }
    }

    pub fn txnid(&self) -> u64 {
        self.txn.id()
    }

    pub fn layout(&self) -> Layout {
        self.env.layout()
    }

    pub fn data_file(&self) -> &Path {
        self.data_file
    }

    pub fn no_lock(&self) -> bool {
        self.no_lock
    }

    pub fn env_stat(&self) -> Result<Stat> {
        Ok(self.env.stat()?)
    }

    pub fn reader_list(&self) -> Result<String> {
        Ok(self.env.reader_list()?)
    }

    pub fn freelist(&self) -> Result<Vec<dlmdb::FreeRecord>> {
        Ok(self.txn.freelist()?)
    }

    /// The main tree's value under `name`: a named database's 48-byte record.
    pub fn catalog_record(&self, name: &str) -> Result<Option<Vec<u8>>> {
        let main = self.txn.open_db(None)?;
        Ok(self.txn.get(main, name.as_bytes())?.map(<[u8]>::to_vec))
    }

    fn open(&self, name: &DbName) -> Result<Database> {
        self.txn
            .open_db(name.as_deref())
            .with_context(|| format!("cannot open database {}", display_name(name)))
    }

    /// Environment header and database list.
    pub fn snapshot(&self, store_reason: &str, data_version: Option<u32>) -> Result<Snapshot> {
        let info = self.env.info()?;
        let env_stat = self.env.stat()?;
        let (held, reading) = if self.no_lock {
            (None, None)
        } else {
            match self.env.reader_list() {
                Ok(text) => {
                    let slots = crate::pages::parse_readers(&text);
                    let reading = slots.iter().filter(|s| s.txnid.is_some()).count();
                    (Some(slots.len() as u32), Some(reading as u32))
                }
                Err(_) => (None, None),
            }
        };
        let free_pages = self
            .txn
            .freelist()
            .ok()
            .map(|recs| recs.iter().map(|r| r.pages.len() as u64).sum());
        let env = EnvSummary {
            layout: Some(self.env.layout()),
            data_version,
            layout_reason: store_reason.to_string(),
            page_size: env_stat.page_size,
            map_size: info.map_size,
            last_txnid: info.last_txnid,
            last_pgno: info.last_pgno,
            max_readers: info.max_readers,
            readers_held: held,
            readers_reading: reading,
            free_pages,
            no_lock: self.no_lock,
            file_len: std::fs::metadata(self.data_file).ok().map(|m| m.len()),
        };
        let mut dbs = vec![self.db_summary(None)];
        let names = self.txn.db_names().context("listing named databases")?;
        for n in names {
            dbs.push(self.db_summary(Some(n)));
        }
        Ok(Snapshot {
            env,
            dbs,
            txnid: self.txn.id(),
        })
    }

    fn db_summary(&self, name: DbName) -> DbSummary {
        let gather = || -> Result<(DatabaseFlags, Stat, Option<u64>)> {
            let db = self.open(&name)?;
            let flags = self.txn.db_flags(db)?;
            let stat = self.txn.stat(db)?;
            let counted = if flags.contains(DatabaseFlags::COUNTED) {
                self.txn.count_all(db, CountFlags::empty()).ok()
            } else {
                None
            };
            Ok((flags, stat, counted))
        };
        match gather() {
            Ok((flags, stat, counted)) => DbSummary {
                name,
                flags,
                stat,
                counted,
                error: None,
            },
            Err(e) => DbSummary {
                name,
                flags: DatabaseFlags::empty(),
                stat: Stat::default(),
                counted: None,
                error: Some(format!("{e:#}")),
            },
        }
    }

    /// Page-walk figures of one database.
    pub fn detail(&self, name: &DbName) -> Result<DbDetail> {
        let db = self.open(name)?;
        let flags = self.txn.db_flags(db)?;
        let stat = self.txn.stat(db)?;
        let pages = self.txn.pages(db).context("page walk")?;
        let walk = WalkSummary::of(&pages);
        let psize = u64::from(stat.page_size);
        let dupsort = flags.contains(DatabaseFlags::DUP_SORT);

        let levels = LevelSummary::of(&pages);
        let mut overflow = OverflowInfo::default();
        let mut dup = DupInfo::default();
        let mut counted_branches = 0;
        let mut root_sum = None;
        let mut last_main_leaf = None;
        for p in &pages {
            match p.kind {
                PageKind::Overflow => {
                    overflow.runs += 1;
                    overflow.pages += u64::from(p.pages);
                    overflow.largest_run = overflow.largest_run.max(u64::from(p.pages));
                    overflow.used_bytes += u64::from(p.used);
                    overflow.allocated_bytes += u64::from(p.pages) * psize;
                }
                PageKind::SubPage => {
                    dup.sub_pages += 1;
                    dup.sub_used_bytes += u64::from(p.used);
                    dup.sub_free_bytes += u64::from(p.free);
                }
                PageKind::Branch | PageKind::Leaf | PageKind::Leaf2 if p.in_subtree => {
                    dup.sub_tree_pages += 1;
                    dup.sub_used_bytes += u64::from(p.used);
                    dup.sub_free_bytes += u64::from(p.free);
                    // Root of a sub-tree: its parent is the main-tree leaf
                    // just visited (the walk reports sub-trees after their leaf).
                    if p.parent.is_some() && p.parent == last_main_leaf {
                        dup.sub_trees += 1;
                    }
                }
                PageKind::Branch => {
                    if p.count > 0 {
                        counted_branches += 1;
                    }
                    if p.parent.is_none() && flags.contains(DatabaseFlags::COUNTED) {
                        root_sum = Some(p.count);
                    }
                }
                PageKind::Leaf | PageKind::Leaf2 => {
                    last_main_leaf = Some(p.pgno);
                    dup.keys += u64::from(p.entries);
                }
                PageKind::Unknown => {}
            }
        }
        let counted = flags.contains(DatabaseFlags::COUNTED).then(|| CountedInfo {
            count_all: self.txn.count_all(db, CountFlags::empty()).ok(),
            root_sum,
            counted_branches,
        });
        let compression = if stat.entries > 0 {
            Some(
                self.compression(db, flags, &pages)
                    .context("measuring key compression")?,
            )
        } else {
            None
        };
        // What the stored counters should equal: in data version 2 the
        // record of a DUPSORT database also counts its duplicate sub-trees'
        // pages; stock LMDB and version 1 count the outer tree only.
        // Entries count values, which equal leaf nodes only without
        // duplicates.
        let counters_include_subtrees = dupsort && self.env.layout() == Layout::DlmdbV2;
        let (want_branch, want_leaf) = if counters_include_subtrees {
            (walk.branch_pages, walk.leaf_pages)
        } else {
            (
                levels.iter().map(|l| l.branch_pages).sum(),
                levels.iter().map(|l| l.leaf_pages).sum(),
            )
        };
        let pages_ok = (want_branch, want_leaf, walk.overflow_pages, walk.depth)
            == (
                stat.branch_pages,
                stat.leaf_pages,
                stat.overflow_pages,
                stat.depth,
            );
        let walk_matches_stat = if dupsort {
            pages_ok
        } else {
            pages_ok && walk.leaf_entries == stat.entries
        };
        dup.values = stat.entries;
        Ok(DbDetail {
            name: name.clone(),
            flags,
            stat,
            walk,
            levels,
            overflow,
            dup: dupsort.then_some(dup),
            compression,
            counted,
            walk_matches_stat,
            counters_include_subtrees,
            txnid: self.txn.id(),
        })
    }

    /// See [`Compression`] for the method.
    fn compression(
        &self,
        db: Database,
        flags: DatabaseFlags,
        pages: &[PageInfo],
    ) -> Result<Compression> {
        let prefix = flags.contains(DatabaseFlags::PREFIX_COMPRESSION);
        let dupsort = flags.contains(DatabaseFlags::DUP_SORT);
        let pad = self.env.layout() != Layout::Lmdb;
        let mut out = Compression {
            prefix,
            ..Default::default()
        };
        let leaves = leaves_with_attachments(pages);
        out.leaf_pages_total = leaves.len() as u64;
        let mut cur = self.txn.cursor(db)?;
        let mut item = cur
            .get(None, None, CursorOp::First)?
            .map(|(k, v)| (k.to_vec(), v.to_vec()));
        let (mut checked, mut matching) = (0u64, 0u64);
        let mut items = 0u64;
        'pages: for (leaf, attachments) in &leaves {
            if items >= COMPRESSION_KEY_CAP {
                break;
            }
            let mut trunk: Vec<u8> = Vec::new();
            let mut rebuilt: u64 = 16; // page header
            let mut attachments = attachments.iter().peekable();
            for i in 0..leaf.entries {
                let Some((key, val)) = item.take() else {
                    break 'pages; // fewer keys than nodes: stop counting
                };
                let klen = key.len() as u64;
                let encoded = if i == 0 {
                    trunk = key.clone();
                    klen
                } else {
                    encoded_len(&trunk, &key)
                };
                let stored = if prefix { encoded } else { klen };
                out.keys += 1;
                out.logical_key_bytes += klen;
                out.stored_key_bytes += stored;
                out.if_compressed_bytes += encoded;
                let count = if dupsort { cur.count()? } else { 1 };
                items += count;
                // The node's data: the next attachment of this leaf if it fits
                // this key (the walk reports them in node order), else the
                // value itself.
                let vlen = val.len() as u64;
                let dsize = match attachments.peek() {
                    Some(Attach::Overflow(size)) if count == 1 && *size == vlen => {
                        attachments.next();
                        8 // page number of the overflow run
                    }
                    Some(Attach::SubPage {
                        entries,
                        size,
                        leaf2,
                    }) if *entries == count
                        && (count > 1 || one_value_subpage(*size, *leaf2, vlen, pad, prefix)) =>
                    {
                        let (size, leaf2) = (*size, *leaf2);
                        attachments.next();
                        self.dup_values(&mut cur, val, &[count], leaf2, prefix, &mut out)?;
                        size
                    }
                    Some(Attach::SubTree { leaves, leaf2 })
                        if leaves.iter().sum::<u64>() == count =>
                    {
                        let leaf2 = *leaf2;
                        let leaves = leaves.clone();
                        attachments.next();
                        self.dup_values(&mut cur, val, &leaves, leaf2, prefix, &mut out)?;
                        DB_RECORD_SIZE as u64
                    }
                    _ => vlen,
                };
                // 2-byte pointer + the node (header, key area, data, even).
                let layout = node_layout(pad);
                let node = layout.leaf_node_size(stored as usize, dsize as usize) as u64;
                rebuilt += 2 + node;
                out.leaf_bytes_plain +=
                    2 + layout.leaf_node_size(klen as usize, dsize as usize) as u64;
                out.leaf_bytes_compressed +=
                    2 + layout.leaf_node_size(encoded as usize, dsize as usize) as u64;
                let step = if dupsort {
                    CursorOp::NextNoDup
                } else {
                    CursorOp::Next
                };
                item = cur
                    .get(None, None, step)?
                    .map(|(k, v)| (k.to_vec(), v.to_vec()));
            }
            out.leaf_pages_seen += 1;
            out.leaf_bytes_stored += rebuilt - PAGE_HEADER_SIZE as u64;
            checked += 1;
            matching += (rebuilt == u64::from(leaf.used)) as u64;
        }
        if checked > 0 {
            out.node_check = Some((matching, checked));
        }
        Ok(out)
    }

    /// Account the duplicate values of the key under `cur` (positioned on
    /// its first value `first`), stored on pages holding `per_page` values
    /// each; every page is compressed against its own first value unless it
    /// is a LEAF2 (DUPFIXED) page.
    fn dup_values(
        &self,
        cur: &mut dlmdb::Cursor<'_>,
        first: Vec<u8>,
        per_page: &[u64],
        leaf2: bool,
        prefix: bool,
        out: &mut Compression,
    ) -> Result<()> {
        let mut next = Some(first);
        for &n in per_page {
            let mut trunk: Option<Vec<u8>> = None;
            for _ in 0..n {
                let v = match next.take() {
                    Some(v) => v,
                    None => match cur.get(None, None, CursorOp::NextDup)? {
                        Some((_, v)) => v.to_vec(),
                        None => return Ok(()),
                    },
                };
                let len = v.len() as u64;
                let encoded = match (&trunk, leaf2) {
                    (_, true) => len,
                    (None, false) => len,
                    (Some(t), false) => encoded_len(t, &v),
                };
                if trunk.is_none() {
                    trunk = Some(v);
                }
                out.dup_values += 1;
                out.logical_value_bytes += len;
                out.stored_value_bytes += if prefix { encoded } else { len };
                out.if_compressed_value_bytes += encoded;
            }
        }
        Ok(())
    }
    /// Up to `n` rows from `start` onwards.
    pub fn rows_from(&self, name: &DbName, start: &Start, n: usize) -> Result<Vec<Row>> {
        let db = self.open(name)?;
        let dupsort = self.txn.db_flags(db)?.contains(DatabaseFlags::DUP_SORT);
        let mut cur = self.txn.cursor(db)?;
        let first = match start {
            Start::First => cur.first()?,
            Start::Key(k) if k.is_empty() => cur.first()?,
            Start::Key(k) => cur.set_range(k)?,
            Start::At(p) => seek(&self.txn, db, &mut cur, p, dupsort)?,
        }
        .map(|(k, v)| (k.to_vec(), v.to_vec()));
        let mut rows = Vec::new();
        let Some((k, v)) = first else {
            return Ok(rows);
        };
        let mut prev_key: Option<Vec<u8>> = None;
        let mut item = Some((k, v));
        while let Some((k, v)) = item.take() {
            if rows.len() >= n {
                break;
            }
            let (first_dup, dups) = if dupsort {
                let dups = cur.count()?;
                let first_dup = match &prev_key {
                    Some(pk) => *pk != k,
                    None => {
                        // Window starts here: compare with the key's first value.
                        let mut c2 = self.txn.cursor(db)?;
                        match c2.set(&k)? {
                            Some((_, v0)) => v0 == v.as_slice(),
                            None => true,
                        }
                    }
                };
                (first_dup, dups)
            } else {
                (true, 1)
            };
            prev_key = Some(k.clone());
            rows.push(Row {
                key: k,
                val: v,
                first_dup,
                dups,
            });
            item = cur.next()?.map(|(k, v)| (k.to_vec(), v.to_vec()));
        }
        Ok(rows)
    }

    /// The position `n` rows before `pos` (`None` = past the last row), or
    /// the first row if there are fewer.
    pub fn start_before(&self, name: &DbName, pos: Option<&Pos>, n: usize) -> Result<Start> {
        let db = self.open(name)?;
        let dupsort = self.txn.db_flags(db)?.contains(DatabaseFlags::DUP_SORT);
        let mut cur = self.txn.cursor(db)?;
        let mut at = match pos {
            None => cur.last()?.map(|(k, v)| (k.to_vec(), v.to_vec())),
            Some(p) => match seek(&self.txn, db, &mut cur, p, dupsort)? {
                Some(_) => cur.prev()?.map(|(k, v)| (k.to_vec(), v.to_vec())),
                None => cur.last()?.map(|(k, v)| (k.to_vec(), v.to_vec())),
            },
        };
        let Some(mut cur_item) = at.take() else {
            return Ok(Start::First);
        };
        for _ in 1..n {
            match cur.prev()? {
                Some((k, v)) => cur_item = (k.to_vec(), v.to_vec()),
                None => break,
            }
        }
        Ok(Start::At(Pos {
            key: cur_item.0,
            val: dupsort.then_some(cur_item.1),
        }))
    }
}

impl View<'_> {
    /// 0-based rank of the item at `p` in a COUNTED database (`None` for
    /// other databases or when `p` is not an item).
    pub fn rank_of(&self, name: &DbName, p: &Pos) -> Result<Option<u64>> {
        let db = self.open(name)?;
        if !self.txn.db_flags(db)?.contains(DatabaseFlags::COUNTED) {
            return Ok(None);
        }
        Ok(self.txn.get_key_rank(db, &p.key, p.val.as_deref())?)
    }

    /// The database keeps subtree counts (rank lookups are O(log n)).
    pub fn is_counted(&self, name: &DbName) -> Result<bool> {
        let db = self.open(name)?;
        Ok(self.txn.db_flags(db)?.contains(DatabaseFlags::COUNTED))
    }

    /// Position of the item with 0-based `rank` in a COUNTED database.
    pub fn pos_at_rank(&self, name: &DbName, rank: u64) -> Result<Option<Pos>> {
        let db = self.open(name)?;
        let flags = self.txn.db_flags(db)?;
        if !flags.contains(DatabaseFlags::COUNTED) {
            bail!("#rank needs a COUNTED database");
        }
        let dupsort = flags.contains(DatabaseFlags::DUP_SORT);
        Ok(self.txn.get_rank(db, rank)?.map(|(k, v)| Pos {
            key: k.to_vec(),
            val: dupsort.then(|| v.to_vec()),
        }))
    }
}

impl View<'_> {
    /// First item of the next (`forward`) or previous distinct key from
    /// `p`; `None` at the end (or start).
    pub fn distinct_key(&self, name: &DbName, p: &Pos, forward: bool) -> Result<Option<Pos>> {
        let db = self.open(name)?;
        let dupsort = self.txn.db_flags(db)?.contains(DatabaseFlags::DUP_SORT);
        let mut cur = self.txn.cursor(db)?;
        if seek(&self.txn, db, &mut cur, p, dupsort)?.is_none() {
            if forward {
                return Ok(None);
            }
            cur.last()?;
        } else if !forward {
            // seek may have landed on a later key than p's; step back to p's key.
            if let Some((k, _)) = cur.get(None, None, CursorOp::GetCurrent)? {
                if self.txn.cmp_keys(db, &k, &p.key) == Ordering::Greater {
                    cur.get(None, None, CursorOp::PrevNoDup)?;
                }
            }
        }
        let op = match (forward, dupsort) {
            (true, true) => CursorOp::NextNoDup,
            (true, false) => CursorOp::Next,
            (false, true) => CursorOp::PrevNoDup,
            (false, false) => CursorOp::Prev,
        };
        let Some((k, v)) = cur
            .get(None, None, op)?
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
        else {
            return Ok(None);
        };
        let v = if dupsort {
            // Backwards lands on the key's last value: take its first.
            cur.get(None, None, CursorOp::FirstDup)?
                .map(|(_, v)| v.to_vec())
                .or(Some(v))
        } else {
            None
        };
        Ok(Some(Pos { key: k, val: v }))
    }

    /// Move up to `n` items forward from `from` (`None`: the first item).
    /// Returns where it stopped and how many steps it took (fewer than `n`
    /// at the end). Reaching rank `r` of an uncounted database is `r`
    /// steps from the first item.
    pub fn step_from(
        &self,
        name: &DbName,
        from: Option<&Pos>,
        n: u64,
    ) -> Result<(Option<Pos>, u64)> {
        let db = self.open(name)?;
        let dupsort = self.txn.db_flags(db)?.contains(DatabaseFlags::DUP_SORT);
        let mut cur = self.txn.cursor(db)?;
        let mut at = match from {
            None => cur.first()?,
            Some(p) => seek(&self.txn, db, &mut cur, p, dupsort)?,
        }
        .map(|(k, v)| (k.to_vec(), v.to_vec()));
        let mut steps = 0;
        while steps < n && at.is_some() {
            match cur.next()? {
                Some((k, v)) => {
                    at = Some((k.to_vec(), v.to_vec()));
                    steps += 1;
                }
                None => break,
            }
        }
        Ok((
            at.map(|(k, v)| Pos {
                key: k,
                val: dupsort.then_some(v),
            }),
            steps,
        ))
    }
}

/// Position `cur` on `p` or the item after it.
fn seek<'t>(
    txn: &RoTxn<'_>,
    db: Database,
    cur: &mut dlmdb::Cursor<'t>,
    p: &Pos,
    dupsort: bool,
) -> Result<Option<dlmdb::Item<'t>>> {
    match (&p.val, dupsort) {
        (Some(v), true) => {
            if let Some(it) = cur.get(Some(&p.key), Some(v), CursorOp::GetBothRange)? {
                return Ok(Some(it));
            }
            // No value >= v under this key: first item of the next key.
            match cur.set_range(&p.key)? {
                Some((k, _)) if txn.cmp_keys(db, &k, &p.key) == Ordering::Equal => {
                    Ok(cur.get(None, None, CursorOp::NextNoDup)?)
                }
                other => Ok(other),
            }
        }
        _ => Ok(cur.set_range(&p.key)?),
    }
}

/// What a prefix-compressed page stores for `key` when its first key is
/// `trunk`: the varint of the common prefix length, then the rest.
fn encoded_len(trunk: &[u8], key: &[u8]) -> u64 {
    dlmdb_format::prefix::encoded_len(trunk, key) as u64
}

/// Could a sub-page of `size` bytes hold just one value of `vlen` bytes?
/// Tells a key whose single value sits in a sub-page (left after deleting
/// the others) from a key with a plain value next to it. LMDB shrinks
/// ordinary sub-pages to fit; DUPFIXED ones keep room for more items, and
/// DLMDB does not shrink them in prefix databases.
fn one_value_subpage(size: u64, leaf2: bool, vlen: u64, pad: bool, prefix: bool) -> bool {
    if leaf2 {
        let header = PAGE_HEADER_SIZE as u64;
        return vlen > 0 && size >= header + vlen && (size - header).is_multiple_of(vlen);
    }
    let layout = node_layout(pad);
    // Sub-page header + one pointer + one node holding the value as its key.
    let exact = (PAGE_HEADER_SIZE + 2 + layout.leaf_node_size(vlen as usize, 0)) as u64;
    if prefix {
        size >= exact
    } else {
        size == exact
    }
}

fn node_layout(pad: bool) -> NodeLayout {
    NodeLayout::from_padded(pad)
}

/// Data a main-tree leaf node points to, as the page walk reports it.
#[derive(Debug, Clone)]
enum Attach {
    /// An overflow run holding a value of this size.
    Overflow(u64),
    /// An inline duplicate sub-page: values, bytes (node data size).
    SubPage {
        entries: u64,
        size: u64,
        leaf2: bool,
    },
    /// A duplicate sub-database: values on each of its leaves, in order.
    SubTree { leaves: Vec<u64>, leaf2: bool },
}

/// The main tree's leaves in key order, each with what its nodes point to
/// in node order (the walk reports a leaf, then its nodes' overflow runs,
/// sub-pages and sub-trees, depth first).
fn leaves_with_attachments(pages: &[PageInfo]) -> Vec<(&PageInfo, Vec<Attach>)> {
    let mut leaves: Vec<(&PageInfo, Vec<Attach>)> = Vec::new();
    for p in pages {
        let Some((leaf, att)) = leaves.last_mut() else {
            if p.kind == PageKind::Leaf && !p.in_subtree {
                leaves.push((p, Vec::new()));
            }
            continue;
        };
        match p.kind {
            PageKind::Leaf if !p.in_subtree => leaves.push((p, Vec::new())),
            // pi_used = page header (16) + value size.
            PageKind::Overflow if !p.in_subtree && p.parent == Some(leaf.pgno) => {
                att.push(Attach::Overflow(u64::from(p.used).saturating_sub(16)))
            }
            PageKind::SubPage if p.parent == Some(leaf.pgno) => att.push(Attach::SubPage {
                entries: u64::from(p.entries),
                size: u64::from(p.used) + u64::from(p.free),
                leaf2: p.type_bits & dlmdb::sys::MDB_PAGE_LEAF2 != 0,
            }),
            PageKind::Branch | PageKind::Leaf | PageKind::Leaf2 if p.in_subtree => {
                if p.parent == Some(leaf.pgno) {
                    att.push(Attach::SubTree {
                        leaves: Vec::new(),
                        leaf2: false,
                    });
                }
                if let (Some(Attach::SubTree { leaves, leaf2 }), true) =
                    (att.last_mut(), p.kind != PageKind::Branch)
                {
                    leaves.push(u64::from(p.entries));
                    *leaf2 |= p.kind == PageKind::Leaf2;
                }
            }
            _ => {}
        }
    }
    leaves
}

pub fn display_name(name: &DbName) -> String {
    match name {
        None => "(main)".to_string(),
        Some(n) => format!("{n:?}"),
    }
}
