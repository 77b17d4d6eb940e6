//! Flag sets and small value types shared by the API.

use bitflags::bitflags;
use dlmdb_sys as ffi;

bitflags! {
    /// Environment flags (`mdb_env_open`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct EnvFlags: u32 {
        const FIXEDMAP = ffi::MDB_FIXEDMAP;
        /// `path` is the data file itself; the lock file is `path` + `-lock`.
        const NO_SUB_DIR = ffi::MDB_NOSUBDIR;
        const NO_SYNC = ffi::MDB_NOSYNC;
        /// Open read-only; write transactions fail with `EACCES`.
        const READ_ONLY = ffi::MDB_RDONLY;
        const NO_META_SYNC = ffi::MDB_NOMETASYNC;
        const WRITE_MAP = ffi::MDB_WRITEMAP;
        const MAP_ASYNC = ffi::MDB_MAPASYNC;
        /// Reader slots belong to transaction objects, not threads.
        const NO_TLS = ffi::MDB_NOTLS;
        const NO_LOCK = ffi::MDB_NOLOCK;
        const NO_READAHEAD = ffi::MDB_NORDAHEAD;
        const NO_MEM_INIT = ffi::MDB_NOMEMINIT;
        const PREV_SNAPSHOT = ffi::MDB_PREVSNAPSHOT;
        /// DLMDB v2: anonymous memory only, nothing on disk.
        const IN_MEMORY = ffi::MDB_INMEMORY;
        /// dlmdb: create a new store in stock LMDB format (data version 1,
        /// unpadded nodes, readable by stock LMDB). Opening a version-2 store
        /// with it fails with [`Error::Incompatible`](crate::Error::Incompatible).
        const FORMAT_LMDB = ffi::MDB_FORMAT_LMDB;
        /// dlmdb: treat a version-1 store as DLMDB's even-padded layout
        /// (files written by DLMDB before data version 2). Creating a new
        /// store with it makes a version-1 padded store.
        const FORMAT_DLMDB_V1 = ffi::MDB_FORMAT_DLMDB_V1;
        /// dlmdb addition: lay out a lock file this process initialises as
        /// lock version 1 (LMDB 0.9). A lock file others hold keeps its layout.
        const LOCK_V1 = ffi::MDB_LOCK_V1;
        /// dlmdb addition: lay out a lock file this process initialises as
        /// lock version 2 (LMDB 1.0, DLMDB).
        const LOCK_V2 = ffi::MDB_LOCK_V2;
    }
}

bitflags! {
    /// Database flags (`mdb_dbi_open`); `CREATE` is added by
    /// [`RwTxn::create_db`](crate::RwTxn::create_db) itself.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct DatabaseFlags: u32 {
        const REVERSE_KEY = ffi::MDB_REVERSEKEY;
        const DUP_SORT = ffi::MDB_DUPSORT;
        const INTEGER_KEY = ffi::MDB_INTEGERKEY;
        const DUP_FIXED = ffi::MDB_DUPFIXED;
        const INTEGER_DUP = ffi::MDB_INTEGERDUP;
        const REVERSE_DUP = ffi::MDB_REVERSEDUP;
        /// DLMDB: order statistics (subtree counts on branch pages).
        const COUNTED = ffi::MDB_COUNTED;
        /// DLMDB: prefix-compressed leaves.
        const PREFIX_COMPRESSION = ffi::MDB_PREFIX_COMPRESSION;
        const CREATE = ffi::MDB_CREATE;
    }
}

bitflags! {
    /// Write flags (`mdb_put`, `mdb_cursor_put`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct WriteFlags: u32 {
        const NO_OVERWRITE = ffi::MDB_NOOVERWRITE;
        const NO_DUP_DATA = ffi::MDB_NODUPDATA;
        /// Cursor put only: overwrite the item under the cursor.
        const CURRENT = ffi::MDB_CURRENT;
        const RESERVE = ffi::MDB_RESERVE;
        const APPEND = ffi::MDB_APPEND;
        const APPEND_DUP = ffi::MDB_APPENDDUP;
        const MULTIPLE = ffi::MDB_MULTIPLE;
    }
}

bitflags! {
    /// Bound flags of the DLMDB count functions.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct CountFlags: u32 {
        const LOWER_INCL = ffi::MDB_COUNT_LOWER_INCL;
        const UPPER_INCL = ffi::MDB_COUNT_UPPER_INCL;
    }
}

/// Which node layout a store uses. Decided when the environment is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Layout {
    /// Data version 1, stock LMDB node layout (data right after the key).
    #[serde(rename = "lmdb")]
    Lmdb,
    /// Data version 1 in DLMDB's even-padded layout (decided by the engine
    /// from evidence in the file, or named with [`EnvFlags::FORMAT_DLMDB_V1`]).
    #[serde(rename = "dlmdb-v1")]
    DlmdbV1,
    /// Data version 2, DLMDB layout (every node key padded to even length).
    #[serde(rename = "dlmdb-v2")]
    DlmdbV2,
}

impl Layout {
    /// Short name: `lmdb`, `dlmdb-v1` or `dlmdb-v2`.
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Lmdb => "lmdb",
            Layout::DlmdbV1 => "dlmdb-v1",
            Layout::DlmdbV2 => "dlmdb-v2",
        }
    }

    /// On-disk data version (`mm_version`) of this layout.
    pub fn data_version(self) -> u32 {
        match self {
            Layout::Lmdb | Layout::DlmdbV1 => 1,
            Layout::DlmdbV2 => 2,
        }
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Cursor operations (`MDB_cursor_op`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum CursorOp {
    First = ffi::MDB_FIRST,
    FirstDup = ffi::MDB_FIRST_DUP,
    GetBoth = ffi::MDB_GET_BOTH,
    GetBothRange = ffi::MDB_GET_BOTH_RANGE,
    GetCurrent = ffi::MDB_GET_CURRENT,
    GetMultiple = ffi::MDB_GET_MULTIPLE,
    Last = ffi::MDB_LAST,
    LastDup = ffi::MDB_LAST_DUP,
    Next = ffi::MDB_NEXT,
    NextDup = ffi::MDB_NEXT_DUP,
    NextMultiple = ffi::MDB_NEXT_MULTIPLE,
    NextNoDup = ffi::MDB_NEXT_NODUP,
    Prev = ffi::MDB_PREV,
    PrevDup = ffi::MDB_PREV_DUP,
    PrevNoDup = ffi::MDB_PREV_NODUP,
    /// Exact key. (The C op does not return the key; the safe API fetches it.)
    Set = ffi::MDB_SET,
    SetKey = ffi::MDB_SET_KEY,
    SetRange = ffi::MDB_SET_RANGE,
    PrevMultiple = ffi::MDB_PREV_MULTIPLE,
}

/// Statistics of one B-tree (`MDB_stat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Stat {
    pub page_size: u32,
    pub depth: u32,
    pub branch_pages: u64,
    pub leaf_pages: u64,
    pub overflow_pages: u64,
    pub entries: u64,
}

impl From<ffi::MDB_stat> for Stat {
    fn from(s: ffi::MDB_stat) -> Self {
        Stat {
            page_size: s.ms_psize,
            depth: s.ms_depth,
            branch_pages: s.ms_branch_pages as u64,
            leaf_pages: s.ms_leaf_pages as u64,
            overflow_pages: s.ms_overflow_pages as u64,
            entries: s.ms_entries as u64,
        }
    }
}

/// Environment information (`MDB_envinfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct EnvInfo {
    /// Fixed map address stored in the file, 0 if none.
    pub map_addr: usize,
    /// This process's map size in bytes.
    pub map_size: u64,
    /// Last used page number of the newest snapshot.
    pub last_pgno: u64,
    /// Newest committed transaction id.
    pub last_txnid: u64,
    /// Reader slots in the lock table.
    pub max_readers: u32,
    /// Reader slots ever used (high-water mark).
    pub num_readers: u32,
}

impl From<ffi::MDB_envinfo> for EnvInfo {
    fn from(i: ffi::MDB_envinfo) -> Self {
        EnvInfo {
            map_addr: i.me_mapaddr as usize,
            map_size: i.me_mapsize as u64,
            last_pgno: i.me_last_pgno as u64,
            last_txnid: i.me_last_txnid as u64,
            max_readers: i.me_maxreaders,
            num_readers: i.me_numreaders,
        }
    }
}

/// A database handle. Cheap to copy; valid for the environment it came from.
///
/// A handle opened inside a transaction becomes usable by other transactions
/// once that transaction commits (read-only ones included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Database {
    pub(crate) dbi: ffi::MDB_dbi,
}

impl Database {
    /// The unnamed main database. dlmdb accepts it without opening; stock
    /// LMDB needs one `open_db(None)` in the process first.
    pub const MAIN: Database = Database { dbi: ffi::MAIN_DBI };
    /// The free-page database (read-only transactions only).
    pub const FREE: Database = Database { dbi: ffi::FREE_DBI };

    /// The raw `MDB_dbi`.
    pub fn dbi(self) -> ffi::MDB_dbi {
        self.dbi
    }

    /// Wrap a raw handle (e.g. one opened through `dlmdb-sys`).
    pub fn from_raw(dbi: ffi::MDB_dbi) -> Database {
        Database { dbi }
    }
}
