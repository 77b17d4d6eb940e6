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

/// Cursor operations (identical numbers in both crates).
pub mod op {
    pub const FIRST: u32 = 0;
    pub const FIRST_DUP: u32 = 1;
    pub const GET_BOTH: u32 = 2;
    pub const GET_BOTH_RANGE: u32 = 3;
    pub const GET_CURRENT: u32 = 4;
    pub const GET_MULTIPLE: u32 = 5;
    pub const LAST: u32 = 6;
    pub const LAST_DUP: u32 = 7;
    pub const NEXT: u32 = 8;
    pub const NEXT_DUP: u32 = 9;
    pub const NEXT_MULTIPLE: u32 = 10;
    pub const NEXT_NODUP: u32 = 11;
    pub const PREV: u32 = 12;
    pub const PREV_DUP: u32 = 13;
    pub const PREV_NODUP: u32 = 14;
    pub const SET: u32 = 15;
    pub const SET_KEY: u32 = 16;
    pub const SET_RANGE: u32 = 17;
    pub const PREV_MULTIPLE: u32 = 18;

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
    pub const KEYEXIST: i32 = -30799;
    pub const NOTFOUND: i32 = -30798;
    pub const BAD_VALSIZE: i32 = -30781;
    pub const INCOMPATIBLE: i32 = -30784;
    pub const BAD_DBI: i32 = -30780;
    pub const EINVAL: i32 = 22;
}

/// Write flags.
pub mod wf {
    pub const NOOVERWRITE: u32 = 0x10;
    pub const NODUPDATA: u32 = 0x20;
    pub const CURRENT: u32 = 0x40;
    pub const APPEND: u32 = 0x20000;
    pub const APPENDDUP: u32 = 0x40000;
    pub const MULTIPLE: u32 = 0x80000;
}

/// Database and environment flags.
pub mod fl {
    pub const REVERSEKEY: u32 = 0x02;
    pub const DUPSORT: u32 = 0x04;
    pub const INTEGERKEY: u32 = 0x08;
    pub const DUPFIXED: u32 = 0x10;
    pub const INTEGERDUP: u32 = 0x20;
    pub const REVERSEDUP: u32 = 0x40;
    /// Ours only (DLMDB): prefix-compressed leaves.
    pub const PREFIX_COMPRESSION: u32 = 0x100;
    pub const CREATE: u32 = 0x40000;
    pub const NOSUBDIR: u32 = 0x4000;
    pub const RDONLY: u32 = 0x20000;
    pub const NOTLS: u32 = 0x200000;
    /// Ours only: create a version-1 stock-layout store.
    pub const FORMAT_LMDB: u32 = 0x4000_0000;
    /// Ours only: read version-1 files with DLMDB's padded layout.
    pub const FORMAT_DLMDB_V1: u32 = 0x0000_0800;
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
        -30796 => "CORRUPTED".into(),
        -30782 => "BAD_TXN".into(),
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
