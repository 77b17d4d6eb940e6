//! The differential tests' face of the driver: one op-level interface,
//! [`DupEngine`], implemented by `ours::Exec` and `stock::Exec` from the
//! one driver body. Tests drive both through the same calls and compare the
//! [`Out`] records (return code, key, data, count, list).
//!
//! The executor owns raw handles without lifetimes so that a test can hold
//! one write transaction, several cursors (by slot) and read snapshots (by
//! slot) at once, and reopen the environment in the middle of a run. Cursors
//! are closed before their transaction ends; everything is released on drop.
//! Stock LMDB has no `mdb_cursor_list_dup`; its executor emulates it (see
//! `stock`).

use std::path::Path;

/// Cursor operations. These and the return codes and flags below are the C
/// API's values (identical in both engines), taken from `dlmdb-sys` under
/// short names.
pub mod op {
    pub use dlmdb_sys::{
        MDB_FIRST as FIRST, MDB_FIRST_DUP as FIRST_DUP, MDB_GET_BOTH as GET_BOTH,
        MDB_GET_BOTH_RANGE as GET_BOTH_RANGE, MDB_GET_CURRENT as GET_CURRENT,
        MDB_GET_MULTIPLE as GET_MULTIPLE, MDB_LAST as LAST, MDB_LAST_DUP as LAST_DUP,
        MDB_NEXT as NEXT, MDB_NEXT_DUP as NEXT_DUP, MDB_NEXT_MULTIPLE as NEXT_MULTIPLE,
        MDB_NEXT_NODUP as NEXT_NODUP, MDB_PREV as PREV, MDB_PREV_DUP as PREV_DUP,
        MDB_PREV_MULTIPLE as PREV_MULTIPLE, MDB_PREV_NODUP as PREV_NODUP, MDB_SET as SET,
        MDB_SET_KEY as SET_KEY, MDB_SET_RANGE as SET_RANGE,
    };

    pub fn name(op: u32) -> &'static str {
        const N: [&str; 19] = [
            "FIRST",
            "FIRST_DUP",
            "GET_BOTH",
            "GET_BOTH_RANGE",
            "GET_CURRENT",
            "GET_MULTIPLE",
            "LAST",
            "LAST_DUP",
            "NEXT",
            "NEXT_DUP",
            "NEXT_MULTIPLE",
            "NEXT_NODUP",
            "PREV",
            "PREV_DUP",
            "PREV_NODUP",
            "SET",
            "SET_KEY",
            "SET_RANGE",
            "PREV_MULTIPLE",
        ];
        N.get(op as usize).copied().unwrap_or("?")
    }
}

/// Return codes.
pub mod rc {
    pub use dlmdb_sys::{
        MDB_BAD_DBI as BAD_DBI, MDB_BAD_VALSIZE as BAD_VALSIZE, MDB_INCOMPATIBLE as INCOMPATIBLE,
        MDB_KEYEXIST as KEYEXIST, MDB_NOTFOUND as NOTFOUND,
    };
    pub const EINVAL: i32 = 22;
}

/// Write flags.
pub mod wf {
    pub use dlmdb_sys::{
        MDB_APPEND as APPEND, MDB_APPENDDUP as APPENDDUP, MDB_CURRENT as CURRENT,
        MDB_MULTIPLE as MULTIPLE, MDB_NODUPDATA as NODUPDATA, MDB_NOOVERWRITE as NOOVERWRITE,
    };
}

/// Database and environment flags. `PREFIX_COMPRESSION`, `FORMAT_LMDB`
/// (create a version-1 stock-layout store) and `FORMAT_DLMDB_V1` (read
/// version-1 files with DLMDB's padded layout) are ours only.
pub mod fl {
    pub use dlmdb_sys::{
        MDB_CREATE as CREATE, MDB_DUPFIXED as DUPFIXED, MDB_DUPSORT as DUPSORT,
        MDB_FORMAT_DLMDB_V1 as FORMAT_DLMDB_V1, MDB_FORMAT_LMDB as FORMAT_LMDB,
        MDB_INTEGERDUP as INTEGERDUP, MDB_INTEGERKEY as INTEGERKEY, MDB_NOSUBDIR as NOSUBDIR,
        MDB_NOTLS as NOTLS, MDB_PREFIX_COMPRESSION as PREFIX_COMPRESSION, MDB_RDONLY as RDONLY,
        MDB_REVERSEDUP as REVERSEDUP, MDB_REVERSEKEY as REVERSEKEY,
    };
}

/// Outcome of one operation, compared field by field between engines (and
/// against the model). Fields an operation does not define stay `None`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Out {
    pub rc: i32,
    pub key: Option<Vec<u8>>,
    pub data: Option<Vec<u8>>,
    pub n: Option<u64>,
    pub list: Option<Vec<Vec<u8>>>,
}

impl Out {
    pub fn rc(rc: i32) -> Out {
        Out {
            rc,
            ..Out::default()
        }
    }
    /// Short human-readable form for failure messages.
    pub fn show(&self) -> String {
        let mut s = format!("rc={}", rc_name(self.rc));
        if let Some(k) = &self.key {
            s.push_str(&format!(" key={}", crate::show(k)));
        }
        if let Some(d) = &self.data {
            s.push_str(&format!(" data={} ({}b)", crate::show(d), d.len()));
        }
        if let Some(n) = self.n {
            s.push_str(&format!(" n={n}"));
        }
        if let Some(l) = &self.list {
            s.push_str(&format!(" list[{}]", l.len()));
            if let Some(f) = l.first() {
                s.push_str(&format!(" first={}", crate::show(f)));
            }
        }
        s
    }
}

pub fn rc_name(rc: i32) -> String {
    match rc {
        0 => "0".into(),
        rc::KEYEXIST => "KEYEXIST".into(),
        rc::NOTFOUND => "NOTFOUND".into(),
        rc::BAD_VALSIZE => "BAD_VALSIZE".into(),
        rc::INCOMPATIBLE => "INCOMPATIBLE".into(),
        rc::BAD_DBI => "BAD_DBI".into(),
        rc::EINVAL => "EINVAL".into(),
        dlmdb_sys::MDB_CORRUPTED => "CORRUPTED".into(),
        dlmdb_sys::MDB_BAD_TXN => "BAD_TXN".into(),
        x => format!("{x}"),
    }
}

/// Op-level interface over one engine. All calls that need a transaction use
/// the current one (`begin_rw`/`begin_ro`); cursors live in it, by slot.
pub trait DupEngine: Sized {
    const NAME: &'static str;
    fn open(path: &Path, env_flags: u32, maxdbs: u32, mapsize: usize) -> Result<Self, i32>;
    /// Close everything and open the same path with the same flags again.
    fn reopen(&mut self) -> Result<(), i32>;
    /// (last_pgno, last_txnid).
    fn info(&self) -> (u64, u64);
    fn begin_rw(&mut self) -> i32;
    fn begin_ro(&mut self) -> i32;
    fn commit(&mut self) -> i32;
    fn abort(&mut self);
    fn in_txn(&self) -> bool;
    fn open_db(&mut self, name: Option<&[u8]>, flags: u32) -> Result<u32, i32>;
    fn db_flags(&mut self, dbi: u32) -> Result<u32, i32>;
    fn put(&mut self, dbi: u32, key: &[u8], data: &[u8], flags: u32) -> Out;
    fn del(&mut self, dbi: u32, key: &[u8], data: Option<&[u8]>) -> i32;
    fn get(&mut self, dbi: u32, key: &[u8]) -> Out;
    fn drop_db(&mut self, dbi: u32, del: bool) -> i32;
    fn stat(&mut self, dbi: u32) -> Result<crate::DbStat, i32>;
    fn cursor_open(&mut self, slot: usize, dbi: u32) -> i32;
    fn cursor_close(&mut self, slot: usize);
    /// `key`/`data` `None` pass an empty `MDB_val` (size 0, NULL pointer).
    /// On success `key`/`data` hold what the engine left in the two vals.
    fn cget(&mut self, slot: usize, op: u32, key: Option<&[u8]>, data: Option<&[u8]>) -> Out;
    fn cput(&mut self, slot: usize, key: &[u8], data: &[u8], flags: u32) -> Out;
    /// `MDB_MULTIPLE` put of `items` (concatenated, `size` bytes each);
    /// `n` = the count the engine reports back in `data[1]`.
    fn cput_multiple(
        &mut self,
        slot: usize,
        key: &[u8],
        items: &[u8],
        size: usize,
        flags: u32,
    ) -> Out;
    fn cdel(&mut self, slot: usize, flags: u32) -> i32;
    fn ccount(&mut self, slot: usize) -> Out;
    fn clist(&mut self, slot: usize) -> Out;
    /// Start a read snapshot in `slot` (needs `MDB_NOTLS` for several).
    fn snap_begin(&mut self, slot: usize) -> i32;
    fn snap_end(&mut self, slot: usize);
    /// Every pair of `dbi` in the snapshot, forward.
    fn snap_walk(&mut self, slot: usize, dbi: u32) -> Result<crate::Pairs, i32>;
    /// Every pair of `dbi` in the current txn, forward or backward.
    fn walk(&mut self, dbi: u32, forward: bool) -> Result<crate::Pairs, i32>;
    /// Raw environment pointer (as `usize`, for checks outside the trait).
    fn raw_env(&self) -> usize;
}
