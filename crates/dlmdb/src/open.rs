//! One opener for tools that inspect existing stores: [`Env::open_detect`].
//!
//! Every rule about opening a store someone hands us lives here, so the CLI
//! commands and the TUI answer alike:
//!
//! * **Layout.** The engine decides (data version 2 is DLMDB; a version-1
//!   file's layout comes from evidence in the file, see `lmdb.h`
//!   `MDB_LAYOUT_*`); the other [`LayoutChoice`]s name a layout instead,
//!   refused here when the data version rules it out and by the engine when
//!   the file contradicts it.
//! * **Lock file.** The lock file is shared with whatever process holds the
//!   environment (LMDB 0.9, LMDB 1.0, DLMDB); [`LockFormat`] picks the layout
//!   when nobody does. When it cannot be shared (unknown format, read-only
//!   file system, no permission), a read-only open fails with
//!   [`OpenError::LockUnshared`] unless [`OpenOptions::no_lock`] asks to read
//!   without it (`MDB_NOLOCK`); never silently.
//! * **Catalog.** Every main-database value that names a database must be a
//!   plausible database record in the chosen layout, else the store is not
//!   read in that layout. The open checks the first
//!   [`CATALOG_CHECK_BUDGET`] main-database entries (a catalog-style main
//!   database whole) and fails on a bad record there; any named database is
//!   checked again when it is opened by name, and a bad record then fails
//!   that open with [`Error::BadRecord`]. The open stays bounded however
//!   many entries the main database holds.

use crate::env::{engine_layout_raw, read_data_version, unsupported_format_note};
use crate::error::Error;
use crate::flags::{Database, EnvFlags, Layout};
use crate::txn::RoTxn;
use crate::Env;
use dlmdb_sys as ffi;
use std::path::{Path, PathBuf};

/// Which node layout to read a version-1 store in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LayoutChoice {
    /// The engine decides from the file.
    #[default]
    Auto,
    /// Stock LMDB layout (`MDB_FORMAT_LMDB`); version-1 files only.
    Lmdb,
    /// A DLMDB layout: the padded version 1 (`MDB_FORMAT_DLMDB_V1`) for a
    /// version-1 file, data version 2 otherwise.
    Dlmdb,
    /// DLMDB's padded version 1 only: a version-2 file is refused.
    DlmdbV1,
    /// DLMDB data version 2 only: any other version is refused.
    DlmdbV2,
}

/// Lock file layout to use when this process is the first to open the
/// environment (a lock file others hold keeps its layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum LockFormat {
    /// The store's family: lock version 1 for stock-layout version-1 stores
    /// (LMDB 0.9), version 2 for DLMDB stores (or `DLMDB_LOCK_FORMAT`)
    #[default]
    Auto,
    /// Lock version 1 (LMDB 0.9: Debian's liblmdb, py-lmdb)
    V1,
    /// Lock version 2 (LMDB 1.0 mdb.master, DLMDB)
    V2,
}

/// Settings for [`Env::open_detect`].
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// Open for writing (default: read-only).
    pub write: bool,
    pub layout: LayoutChoice,
    pub lock_format: LockFormat,
    /// Read without the lock file (`MDB_NOLOCK`); read-only opens only.
    pub no_lock: bool,
    /// `Some(true)`: the path is the data file; `None`: detected.
    pub no_subdir: Option<bool>,
    pub max_dbs: u32,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            write: false,
            layout: LayoutChoice::Auto,
            lock_format: LockFormat::Auto,
            no_lock: false,
            no_subdir: None,
            max_dbs: 32_000,
        }
    }
}

/// How the lock file is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LockUse {
    /// No lock file (`MDB_NOLOCK`, or a read-only file system).
    None,
    /// This process initialised it, in this lock version.
    First(u32),
    /// Other processes held it; it is shared in their lock version.
    Joined(u32),
}

impl std::fmt::Display for LockUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockUse::None => f.write_str("no lock file (MDB_NOLOCK)"),
            LockUse::First(v) => write!(f, "lock version {v}, initialised by us"),
            LockUse::Joined(v) => write!(f, "lock version {v}, shared with running processes"),
        }
    }
}

/// An environment opened by [`Env::open_detect`].
#[derive(Debug)]
pub struct Opened {
    pub env: Env,
    /// The path is the data file (`MDB_NOSUBDIR`).
    pub no_subdir: bool,
    pub data_file: PathBuf,
    pub data_version: u32,
    pub layout: Layout,
    /// Why that layout, in words.
    pub reason: String,
    pub lock: LockUse,
    /// Things the user should know (e.g. reading without a lock file).
    pub warnings: Vec<String>,
    /// Main-database entries the open-time catalog check examined (at most
    /// [`CATALOG_CHECK_BUDGET`]; fewer means it saw the whole main database).
    pub catalog_examined: u64,
}

/// Why [`Env::open_detect`] failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("cannot access {}: {source}", path.display())]
    Access {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The store opens without the lock file but not with it: the lock file
    /// is in a format we do not share, or cannot be created or written.
    #[error("cannot share the lock file of {} ({source})", path.display())]
    LockUnshared { path: PathBuf, source: Error },
    #[error("{}: {message}", path.display())]
    Layout { path: PathBuf, message: String },
    /// A data file in a format the engine does not read (LMDB 1.x).
    #[error("{note}")]
    Unsupported { note: String },
    #[error("cannot open environment {}: {source}", path.display())]
    Open { path: PathBuf, source: Error },
    #[error("{}: {problem} (layout {layout}: {reason})", path.display())]
    Catalog {
        path: PathBuf,
        problem: String,
        layout: Layout,
        reason: String,
    },
}

fn reason_text(code: u32, layout: Layout) -> String {
    match code {
        ffi::MDB_LAYOUT_VERSION2 => "data version 2".into(),
        ffi::MDB_LAYOUT_NEW => "new store".into(),
        ffi::MDB_LAYOUT_TOLD => {
            format!("version 1, {layout} as asked (nothing in the file contradicts it)")
        }
        ffi::MDB_LAYOUT_DBFLAGS => {
            "version 1, a database record carries DLMDB flags (counted / prefix compression)".into()
        }
        ffi::MDB_LAYOUT_COUNTED => "version 1, counted branch pages (DLMDB)".into(),
        ffi::MDB_LAYOUT_LEAVES => {
            format!("version 1, sampled leaves parse only in {layout} layout")
        }
        ffi::MDB_LAYOUT_NO_EVIDENCE => {
            "version 1, no odd-length key sampled: both layouts read it alike (stock)".into()
        }
        _ => format!("layout reason {code}"),
    }
}

/// Why the engine refuses a version-1 store with `MDB_INCOMPATIBLE` at open:
/// the node layout it samples from the file contradicts the one given, or,
/// with none given, one part of the file another.
fn layout_contradiction(told: LayoutChoice) -> String {
    match told {
        LayoutChoice::Lmdb => "its pages contradict stock LMDB's node layout, given with \
             --layout lmdb (MDB_INCOMPATIBLE): leaves that only DLMDB's padded layout reads \
             consistently, DLMDB-only database flags or counted pages; --layout auto lets the \
             engine decide"
            .into(),
        LayoutChoice::Dlmdb | LayoutChoice::DlmdbV1 => "its pages contradict DLMDB's padded \
             node layout, given with --layout dlmdb (MDB_INCOMPATIBLE): leaves that only stock \
             LMDB's layout reads consistently; --layout auto lets the engine decide"
            .into(),
        LayoutChoice::Auto | LayoutChoice::DlmdbV2 => "its pages contradict each other \
             (MDB_INCOMPATIBLE): some are consistent only in stock LMDB's node layout, others \
             only in DLMDB's padded one (leaves, DLMDB-only flags or counted pages); the store \
             is damaged"
            .into(),
    }
}

impl Env {
    /// Open an existing store the way the tools do (module docs): one open,
    /// the engine's layout decision, lock sharing or a clear refusal, and a
    /// catalog check.
    pub fn open_detect(path: &Path, o: &OpenOptions) -> std::result::Result<Opened, OpenError> {
        let (no_subdir, data_file) = locate_data_file(path, o.no_subdir)?;
        if let Some(note) = unsupported_format_note(&data_file) {
            return Err(OpenError::Unsupported { note });
        }
        let version = read_data_version(&data_file);
        // A layout named for one data version is refused on the other.
        let (name, wanted) = match o.layout {
            LayoutChoice::Lmdb => ("lmdb", 1),
            LayoutChoice::DlmdbV1 => ("dlmdb-v1", 1),
            LayoutChoice::DlmdbV2 => ("dlmdb-v2", 2),
            LayoutChoice::Auto | LayoutChoice::Dlmdb => ("", 0),
        };
        let refused = match wanted {
            1 => version == Some(2),
            2 => version != Some(2),
            _ => false,
        };
        if refused {
            let found = match version {
                Some(2) => "2 (DLMDB layout)".to_string(),
                Some(v) => v.to_string(),
                None => "unknown".to_string(),
            };
            return Err(OpenError::Layout {
                path: data_file,
                message: format!(
                    "data version {found}; the {name} layout applies to version-{wanted} stores"
                ),
            });
        }
        let mut flags = match o.layout {
            LayoutChoice::Auto | LayoutChoice::DlmdbV2 => EnvFlags::empty(),
            LayoutChoice::Lmdb => EnvFlags::FORMAT_LMDB,
            LayoutChoice::Dlmdb if version == Some(2) => EnvFlags::empty(),
            LayoutChoice::Dlmdb | LayoutChoice::DlmdbV1 => EnvFlags::FORMAT_DLMDB_V1,
        };
        flags |= match o.lock_format {
            LockFormat::Auto => EnvFlags::empty(),
            LockFormat::V1 => EnvFlags::LOCK_V1,
            LockFormat::V2 => EnvFlags::LOCK_V2,
        };
        if no_subdir {
            flags |= EnvFlags::NO_SUB_DIR;
        }
        if !o.write {
            flags |= EnvFlags::READ_ONLY;
        } else if o.no_lock {
            return Err(OpenError::Layout {
                path: path.to_path_buf(),
                message: "reading without the lock file is for read-only opens".into(),
            });
        }
        if o.no_lock {
            flags |= EnvFlags::NO_LOCK;
        }
        let open = |flags: EnvFlags| Env::builder().flags(flags).max_dbs(o.max_dbs).open(path);
        let env = match open(flags) {
            Ok(env) => env,
            Err(e) => {
                // Does the store open without the lock file?  Then the lock
                // file is what failed: say so, never switch silently.
                if !o.write && !o.no_lock {
                    if let Ok(probe) = open(flags | EnvFlags::NO_LOCK) {
                        drop(probe);
                        return Err(OpenError::LockUnshared {
                            path: path.to_path_buf(),
                            source: e,
                        });
                    }
                }
                if matches!(e, Error::Incompatible) && version == Some(1) {
                    return Err(OpenError::Layout {
                        path: data_file,
                        message: layout_contradiction(o.layout),
                    });
                }
                return Err(OpenError::Open {
                    path: path.to_path_buf(),
                    source: e,
                });
            }
        };
        let l = engine_layout_raw(env.raw());
        let layout = env.layout();
        let reason = reason_text(l.ml_reason, layout);
        let lock = match (l.ml_lockver, l.ml_lockjoined) {
            (0, _) => LockUse::None,
            (v, 0) => LockUse::First(v),
            (v, _) => LockUse::Joined(v),
        };
        let mut warnings = Vec::new();
        if lock == LockUse::None {
            warnings.push(if o.no_lock {
                "reading without the lock file (MDB_NOLOCK): no reader slot protects this \
                 snapshot, so a process writing meanwhile may reuse its pages (torn or wrong \
                 figures)"
                    .to_string()
            } else {
                "read-only file system: no lock file (MDB_NOLOCK); a writer elsewhere could \
                 reuse pages this read sees"
                    .to_string()
            });
        }
        let scan = catalog_problem(&env, layout);
        if let Some(problem) = scan.problem {
            return Err(OpenError::Catalog {
                path: data_file,
                problem,
                layout,
                reason,
            });
        }
        // The check's read txn took a reader slot, and the slot high-water
        // mark never goes down. Alone on the store, open it afresh so the
        // environment's figures are those of a fresh open (as mdb_stat
        // reports them); with others on it the table is theirs anyway.
        let mut env = if matches!(lock, LockUse::First(_)) {
            drop(env);
            open(flags).map_err(|source| OpenError::Open {
                path: path.to_path_buf(),
                source,
            })?
        } else {
            env
        };
        if env.layout() != layout {
            return Err(OpenError::Layout {
                path: data_file,
                message: "the layout changed between two opens (another process wrote meanwhile?)"
                    .into(),
            });
        }
        env.record_check = Some(reason.clone());
        Ok(Opened {
            env,
            no_subdir,
            data_file,
            data_version: l.ml_version,
            layout,
            reason,
            lock,
            warnings,
            catalog_examined: scan.examined,
        })
    }
}

/// Where the data file of `path` is: `(no_subdir, data file)`. `no_subdir`
/// as given, else detected: a file is the data file itself, a directory
/// holds `data.mdb`.
pub fn locate_data_file(
    path: &Path,
    no_subdir: Option<bool>,
) -> std::result::Result<(bool, PathBuf), OpenError> {
    let meta = std::fs::metadata(path).map_err(|source| OpenError::Access {
        path: path.to_path_buf(),
        source,
    })?;
    let no_subdir = no_subdir.unwrap_or(meta.is_file());
    let data_file = if no_subdir {
        path.to_path_buf()
    } else {
        path.join("data.mdb")
    };
    Ok((no_subdir, data_file))
}

/// How many main-database entries [`Env::open_detect`] examines at open.
/// On a main database that holds data this is about 0.35 M instructions
/// (a dozen leaf pages; the whole scan cost 340 M per million entries), so
/// opening does not grow with the store. A database record costs far more
/// (the check opens the database, and the engine's handle search is linear
/// in the handles open): a catalog-style main database (only database
/// records, as Datalevin keeps it) of 1000 records costs about 22 M
/// instructions, 2 ms, and up to this many is still checked whole. Each
/// named database beyond the budget is checked when it is opened by name.
pub const CATALOG_CHECK_BUDGET: u64 = 1024;

/// What the open-time catalog check found.
struct CatalogScan {
    /// The first implausible record (or the failure that stopped the scan).
    problem: Option<String>,
    /// Main-database entries examined (at most [`CATALOG_CHECK_BUDGET`]).
    examined: u64,
}

/// Check that every main-database value that opens as a database, among the
/// first [`CATALOG_CHECK_BUDGET`] entries, is a plausible 48-byte `MDB_db`
/// record; the first problem found.
fn catalog_problem(env: &Env, layout: Layout) -> CatalogScan {
    let mut examined = 0;
    let mut check = || -> crate::Result<Option<String>> {
        // The snapshot first: the info read after it describes that commit
        // or a newer one, so its last page bounds every root the snapshot has.
        let txn = env.read_txn()?;
        let info = env.info()?;
        let main = txn.open_db(None)?;
        let mut c = txn.cursor(main)?;
        for item in c.iter() {
            if examined == CATALOG_CHECK_BUDGET {
                break;
            }
            examined += 1;
            let (k, v) = item?;
            // Only 48-byte values can be database records (the node's data
            // size is layout-independent); skipping the rest keeps this fast
            // on big main databases.
            if k.contains(&0) || v.len() != 48 {
                continue;
            }
            let Ok(name) = std::str::from_utf8(&k) else {
                continue;
            };
            match txn.open_db(Some(name)) {
                Ok(_) => {
                    if let Some(why) = record_problem(&v, info.last_pgno, layout) {
                        return Ok(Some(format!("record of database {name:?}: {why}")));
                    }
                }
                Err(Error::Incompatible) => {} // a plain main-DB value
                Err(e) => return Ok(Some(format!("opening database {name:?}: {e}"))),
            }
        }
        Ok(None)
    };
    let problem = check().unwrap_or_else(|e| Some(e.to_string()));
    CatalogScan { problem, examined }
}

/// The plausibility problem of the record of named database `name` as
/// `txn` sees it, for a store opened with [`Env::open_detect`].
pub(crate) fn named_record_problem(txn: &RoTxn<'_>, name: &str) -> crate::Result<Option<String>> {
    // `txn` began before this info read, so the last page it reports is
    // that of the snapshot's commit or of a newer one: it bounds every root
    // the snapshot holds. A writer reads the meta its own transaction
    // started from, and the records in its main database are committed
    // ones or the empty records of databases it created.
    let info = txn.env().info()?;
    Ok(match txn.get(Database::MAIN, name.as_bytes())? {
        Some(rec) => record_problem(rec, info.last_pgno, txn.env().layout()),
        None => Some("no record in the main database".into()),
    })
}

/// Plausibility of one 48-byte database record (md_pad u32 @0, md_flags u16
/// @4, md_depth u16 @6, branch/leaf/overflow/entries u64 @8..40, md_root u64
/// @40).
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
