//! Raw FFI bindings to the dlmdb C engine (`vendor/dlmdb/lmdb.h`).
//!
//! The declarations mirror the header one to one: LMDB's API, DLMDB's additions
//! (counted databases, rank functions, `mdb_cursor_list_dup`, interrupts) and
//! dlmdb's own (`MDB_FORMAT_LMDB`, `MDB_FORMAT_DLMDB_V1`, `mdb_page_walk`).
//!
//! The engine is compiled with `-DDLMDB_PREFIX_SYMBOLS`, which renames every
//! exported C function `mdb_X` to `dlmdb_X`. On the Rust side the functions keep
//! their LMDB names and are bound with `#[link_name = "dlmdb_X"]`, so a binary can
//! link this crate and stock LMDB (`lmdb-master-sys`, plain `mdb_*` symbols) at
//! the same time without clashes.
//!
//! Everything here is `unsafe`; the safe API lives in the `dlmdb` crate.

#![allow(non_camel_case_types, non_upper_case_globals)]

use libc::{c_char, c_int, c_uint, c_void, size_t};

// ---------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------

/// Size type of the 1.0 API (`size_t` on every supported platform).
pub type mdb_size_t = size_t;
/// Permissions for newly created files.
pub type mdb_mode_t = libc::mode_t;
/// A file descriptor.
pub type mdb_filehandle_t = c_int;
/// Database handle.
pub type MDB_dbi = c_uint;
/// Cursor operation (`MDB_FIRST` ...).
pub type MDB_cursor_op = c_uint;

/// Opaque environment handle.
#[repr(C)]
pub struct MDB_env {
    _private: [u8; 0],
}
/// Opaque transaction handle.
#[repr(C)]
pub struct MDB_txn {
    _private: [u8; 0],
}
/// Opaque cursor handle.
#[repr(C)]
pub struct MDB_cursor {
    _private: [u8; 0],
}

/// A key or data item: size first, then pointer (the order is ABI).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MDB_val {
    pub mv_size: size_t,
    pub mv_data: *mut c_void,
}

impl Default for MDB_val {
    fn default() -> Self {
        MDB_val {
            mv_size: 0,
            mv_data: std::ptr::null_mut(),
        }
    }
}

/// Statistics of one B-tree (40 bytes on x86-64).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct MDB_stat {
    pub ms_psize: c_uint,
    pub ms_depth: c_uint,
    pub ms_branch_pages: mdb_size_t,
    pub ms_leaf_pages: mdb_size_t,
    pub ms_overflow_pages: mdb_size_t,
    pub ms_entries: mdb_size_t,
}

/// Environment information (40 bytes on x86-64).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MDB_envinfo {
    pub me_mapaddr: *mut c_void,
    pub me_mapsize: mdb_size_t,
    pub me_last_pgno: mdb_size_t,
    pub me_last_txnid: mdb_size_t,
    pub me_maxreaders: c_uint,
    pub me_numreaders: c_uint,
}

/// dlmdb addition: what `mdb_env_open` decided (`mdb_env_get_layout`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MDB_envlayout {
    /// Data version of the file: 1 or 2.
    pub ml_version: c_uint,
    /// 1 = DLMDB node layout (even key padding), 0 = stock.
    pub ml_padded: c_uint,
    /// `MDB_LAYOUT_*`: why that node layout.
    pub ml_reason: c_uint,
    /// Lock file layout: 1, 2, or 0 without a lock file.
    pub ml_lockver: c_uint,
    /// 1 = the lock file was held by other processes at open.
    pub ml_lockjoined: c_uint,
}

impl Default for MDB_envinfo {
    fn default() -> Self {
        MDB_envinfo {
            me_mapaddr: std::ptr::null_mut(),
            me_mapsize: 0,
            me_last_pgno: 0,
            me_last_txnid: 0,
            me_maxreaders: 0,
            me_numreaders: 0,
        }
    }
}

/// One page reported by [`mdb_page_walk`] (dlmdb addition).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct MDB_pageinfo {
    /// Page number (sub-page: page number of the leaf holding it).
    pub pi_pgno: mdb_size_t,
    /// Parent page number, or `mdb_size_t::MAX` for a root.
    pub pi_parent: mdb_size_t,
    /// `MDB_PAGE_*` bits.
    pub pi_type: c_uint,
    /// Raw on-disk page flags word.
    pub pi_flags: c_uint,
    /// 0 = root of the walked tree, +1 per level down.
    pub pi_level: c_uint,
    /// Nodes/items on the page, 0 for overflow pages.
    pub pi_entries: c_uint,
    /// Pages spanned: overflow run length, else 1 (0 for sub-pages).
    pub pi_pages: c_uint,
    /// Bytes used: header + pointer array + nodes (overflow: 16 + value bytes).
    pub pi_used: c_uint,
    /// Bytes unused (overflow: slack at the end of the run).
    pub pi_free: c_uint,
    /// 0 = the database's own tree, 1 = a dup sub-database / sub-page.
    pub pi_subtree: c_uint,
    /// Counted branch page: sum of its node counts; else 0.
    pub pi_count: u64,
}

/// Optional range-profiling counters (`MDB_PROFILE_RANGE` builds only).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct MDB_profile_stats {
    pub leaf_decode_ns: u64,
    pub leaf_decode_calls: u64,
    pub leaf_cache_prepare_ns: u64,
    pub leaf_cache_prepare_calls: u64,
    pub cursor_next_ns: u64,
    pub cursor_next_calls: u64,
    pub prefix_contrib_ns: u64,
    pub prefix_contrib_calls: u64,
    pub read_key_total_ns: u64,
    pub read_key_total_calls: u64,
    pub read_key_cache_ns: u64,
    pub read_key_cache_calls: u64,
    pub read_key_seq_ns: u64,
    pub read_key_seq_calls: u64,
    pub read_key_decode_ns: u64,
    pub read_key_decode_calls: u64,
}

pub type MDB_cmp_func = unsafe extern "C" fn(a: *const MDB_val, b: *const MDB_val) -> c_int;
pub type MDB_rel_func = unsafe extern "C" fn(
    item: *mut MDB_val,
    oldptr: *mut c_void,
    newptr: *mut c_void,
    relctx: *mut c_void,
);
pub type MDB_msg_func = unsafe extern "C" fn(msg: *const c_char, ctx: *mut c_void) -> c_int;
pub type MDB_assert_func = unsafe extern "C" fn(env: *mut MDB_env, msg: *const c_char);
/// Page-walk callback: a non-zero return stops the walk and is returned by it.
pub type MDB_page_func = unsafe extern "C" fn(ctx: *mut c_void, info: *const MDB_pageinfo) -> c_int;

// ---------------------------------------------------------------------------
// Environment flags
// ---------------------------------------------------------------------------

pub const MDB_FIXEDMAP: c_uint = 0x01;
pub const MDB_NOSUBDIR: c_uint = 0x4000;
pub const MDB_NOSYNC: c_uint = 0x10000;
pub const MDB_RDONLY: c_uint = 0x20000;
pub const MDB_NOMETASYNC: c_uint = 0x40000;
pub const MDB_WRITEMAP: c_uint = 0x80000;
pub const MDB_MAPASYNC: c_uint = 0x100000;
pub const MDB_NOTLS: c_uint = 0x200000;
pub const MDB_NOLOCK: c_uint = 0x400000;
pub const MDB_NORDAHEAD: c_uint = 0x800000;
pub const MDB_NOMEMINIT: c_uint = 0x1000000;
pub const MDB_PREVSNAPSHOT: c_uint = 0x2000000;
/// DLMDB v2: environment lives in anonymous memory only.
pub const MDB_INMEMORY: c_uint = 0x4000000;
/// dlmdb addition: create a new store in stock LMDB format (data version 1,
/// unpadded nodes); opening a version-2 store with it gives `MDB_INCOMPATIBLE`.
pub const MDB_FORMAT_LMDB: c_uint = 0x40000000;
/// dlmdb addition: read/write a version-1 store in DLMDB's even-padded layout.
pub const MDB_FORMAT_DLMDB_V1: c_uint = 0x00000800;
/// dlmdb addition: when this process initialises the lock file, lay it out as
/// lock version 1 (LMDB 0.9). Ignored when others hold the lock file.
pub const MDB_LOCK_V1: c_uint = 0x10000000;
/// dlmdb addition: when this process initialises the lock file, lay it out as
/// lock version 2 (LMDB 1.0, DLMDB). Ignored when others hold the lock file.
pub const MDB_LOCK_V2: c_uint = 0x20000000;

/// `MDB_envlayout::ml_reason`: data version 2.
pub const MDB_LAYOUT_VERSION2: c_uint = 1;
/// Created by this open.
pub const MDB_LAYOUT_NEW: c_uint = 2;
/// Named by `MDB_FORMAT_LMDB` / `MDB_FORMAT_DLMDB_V1`, not contradicted.
pub const MDB_LAYOUT_TOLD: c_uint = 3;
/// A database record carries DLMDB-only flags.
pub const MDB_LAYOUT_DBFLAGS: c_uint = 4;
/// A counted branch page was found.
pub const MDB_LAYOUT_COUNTED: c_uint = 5;
/// Sampled leaves parse in this layout only.
pub const MDB_LAYOUT_LEAVES: c_uint = 6;
/// Nothing tells the layouts apart: stock.
pub const MDB_LAYOUT_NO_EVIDENCE: c_uint = 7;

// ---------------------------------------------------------------------------
// Database flags
// ---------------------------------------------------------------------------

pub const MDB_REVERSEKEY: c_uint = 0x02;
pub const MDB_DUPSORT: c_uint = 0x04;
pub const MDB_INTEGERKEY: c_uint = 0x08;
pub const MDB_DUPFIXED: c_uint = 0x10;
pub const MDB_INTEGERDUP: c_uint = 0x20;
pub const MDB_REVERSEDUP: c_uint = 0x40;
/// DLMDB: maintain subtree entry counts (order statistics).
pub const MDB_COUNTED: c_uint = 0x80;
/// DLMDB: prefix-compress leaf keys (and DUPSORT values).
pub const MDB_PREFIX_COMPRESSION: c_uint = 0x100;
pub const MDB_CREATE: c_uint = 0x40000;

// ---------------------------------------------------------------------------
// Write flags
// ---------------------------------------------------------------------------

pub const MDB_NOOVERWRITE: c_uint = 0x10;
pub const MDB_NODUPDATA: c_uint = 0x20;
pub const MDB_CURRENT: c_uint = 0x40;
pub const MDB_RESERVE: c_uint = 0x10000;
pub const MDB_APPEND: c_uint = 0x20000;
pub const MDB_APPENDDUP: c_uint = 0x40000;
pub const MDB_MULTIPLE: c_uint = 0x80000;

/// Copy flag: compacting copy.
pub const MDB_CP_COMPACT: c_uint = 0x01;

/// Count functions: lower bound inclusive.
pub const MDB_COUNT_LOWER_INCL: c_uint = 0x02;
/// Count functions: upper bound inclusive.
pub const MDB_COUNT_UPPER_INCL: c_uint = 0x04;

// ---------------------------------------------------------------------------
// Page-walk page types (dlmdb addition)
// ---------------------------------------------------------------------------

pub const MDB_PAGE_BRANCH: c_uint = 0x01;
pub const MDB_PAGE_LEAF: c_uint = 0x02;
pub const MDB_PAGE_OVERFLOW: c_uint = 0x04;
pub const MDB_PAGE_LEAF2: c_uint = 0x20;
pub const MDB_PAGE_SUBPAGE: c_uint = 0x40;

// ---------------------------------------------------------------------------
// Cursor operations
// ---------------------------------------------------------------------------

pub const MDB_FIRST: MDB_cursor_op = 0;
pub const MDB_FIRST_DUP: MDB_cursor_op = 1;
pub const MDB_GET_BOTH: MDB_cursor_op = 2;
pub const MDB_GET_BOTH_RANGE: MDB_cursor_op = 3;
pub const MDB_GET_CURRENT: MDB_cursor_op = 4;
pub const MDB_GET_MULTIPLE: MDB_cursor_op = 5;
pub const MDB_LAST: MDB_cursor_op = 6;
pub const MDB_LAST_DUP: MDB_cursor_op = 7;
pub const MDB_NEXT: MDB_cursor_op = 8;
pub const MDB_NEXT_DUP: MDB_cursor_op = 9;
pub const MDB_NEXT_MULTIPLE: MDB_cursor_op = 10;
pub const MDB_NEXT_NODUP: MDB_cursor_op = 11;
pub const MDB_PREV: MDB_cursor_op = 12;
pub const MDB_PREV_DUP: MDB_cursor_op = 13;
pub const MDB_PREV_NODUP: MDB_cursor_op = 14;
pub const MDB_SET: MDB_cursor_op = 15;
pub const MDB_SET_KEY: MDB_cursor_op = 16;
pub const MDB_SET_RANGE: MDB_cursor_op = 17;
pub const MDB_PREV_MULTIPLE: MDB_cursor_op = 18;

// ---------------------------------------------------------------------------
// Return codes
// ---------------------------------------------------------------------------

pub const MDB_SUCCESS: c_int = 0;
pub const MDB_KEYEXIST: c_int = -30799;
pub const MDB_NOTFOUND: c_int = -30798;
pub const MDB_PAGE_NOTFOUND: c_int = -30797;
pub const MDB_CORRUPTED: c_int = -30796;
pub const MDB_PANIC: c_int = -30795;
pub const MDB_VERSION_MISMATCH: c_int = -30794;
pub const MDB_INVALID: c_int = -30793;
pub const MDB_MAP_FULL: c_int = -30792;
pub const MDB_DBS_FULL: c_int = -30791;
pub const MDB_READERS_FULL: c_int = -30790;
pub const MDB_TLS_FULL: c_int = -30789;
pub const MDB_TXN_FULL: c_int = -30788;
pub const MDB_CURSOR_FULL: c_int = -30787;
pub const MDB_PAGE_FULL: c_int = -30786;
pub const MDB_MAP_RESIZED: c_int = -30785;
pub const MDB_INCOMPATIBLE: c_int = -30784;
pub const MDB_BAD_RSLOT: c_int = -30783;
pub const MDB_BAD_TXN: c_int = -30782;
pub const MDB_BAD_VALSIZE: c_int = -30781;
pub const MDB_BAD_DBI: c_int = -30780;
pub const MDB_PROBLEM: c_int = -30779;
pub const MDB_DBIS_BUSY: c_int = -30778;
pub const MDB_LAST_ERRCODE: c_int = MDB_DBIS_BUSY;

/// Handle of the free-page database.
pub const FREE_DBI: MDB_dbi = 0;
/// Handle of the unnamed main database.
pub const MAIN_DBI: MDB_dbi = 1;

// ---------------------------------------------------------------------------
// Functions (C symbols carry the `dlmdb_` prefix)
// ---------------------------------------------------------------------------

extern "C" {
    // Library
    #[link_name = "dlmdb_version"]
    pub fn mdb_version(major: *mut c_int, minor: *mut c_int, patch: *mut c_int) -> *mut c_char;
    #[link_name = "dlmdb_strerror"]
    pub fn mdb_strerror(err: c_int) -> *mut c_char;

    // Environment
    #[link_name = "dlmdb_env_create"]
    pub fn mdb_env_create(env: *mut *mut MDB_env) -> c_int;
    #[link_name = "dlmdb_env_open"]
    pub fn mdb_env_open(
        env: *mut MDB_env,
        path: *const c_char,
        flags: c_uint,
        mode: mdb_mode_t,
    ) -> c_int;
    #[link_name = "dlmdb_env_copy"]
    pub fn mdb_env_copy(env: *mut MDB_env, path: *const c_char) -> c_int;
    #[link_name = "dlmdb_env_copyfd"]
    pub fn mdb_env_copyfd(env: *mut MDB_env, fd: mdb_filehandle_t) -> c_int;
    #[link_name = "dlmdb_env_copy2"]
    pub fn mdb_env_copy2(env: *mut MDB_env, path: *const c_char, flags: c_uint) -> c_int;
    #[link_name = "dlmdb_env_copyfd2"]
    pub fn mdb_env_copyfd2(env: *mut MDB_env, fd: mdb_filehandle_t, flags: c_uint) -> c_int;
    #[link_name = "dlmdb_env_stat"]
    pub fn mdb_env_stat(env: *mut MDB_env, stat: *mut MDB_stat) -> c_int;
    #[link_name = "dlmdb_env_info"]
    pub fn mdb_env_info(env: *mut MDB_env, stat: *mut MDB_envinfo) -> c_int;
    #[link_name = "dlmdb_env_sync"]
    pub fn mdb_env_sync(env: *mut MDB_env, force: c_int) -> c_int;
    #[link_name = "dlmdb_env_close"]
    pub fn mdb_env_close(env: *mut MDB_env);
    #[link_name = "dlmdb_env_set_flags"]
    pub fn mdb_env_set_flags(env: *mut MDB_env, flags: c_uint, onoff: c_int) -> c_int;
    #[link_name = "dlmdb_env_get_flags"]
    pub fn mdb_env_get_flags(env: *mut MDB_env, flags: *mut c_uint) -> c_int;
    #[link_name = "dlmdb_env_get_path"]
    pub fn mdb_env_get_path(env: *mut MDB_env, path: *mut *const c_char) -> c_int;
    #[link_name = "dlmdb_env_get_fd"]
    pub fn mdb_env_get_fd(env: *mut MDB_env, fd: *mut mdb_filehandle_t) -> c_int;
    #[link_name = "dlmdb_env_set_mapsize"]
    pub fn mdb_env_set_mapsize(env: *mut MDB_env, size: mdb_size_t) -> c_int;
    #[link_name = "dlmdb_env_set_maxreaders"]
    pub fn mdb_env_set_maxreaders(env: *mut MDB_env, readers: c_uint) -> c_int;
    #[link_name = "dlmdb_env_get_maxreaders"]
    pub fn mdb_env_get_maxreaders(env: *mut MDB_env, readers: *mut c_uint) -> c_int;
    #[link_name = "dlmdb_env_set_maxdbs"]
    pub fn mdb_env_set_maxdbs(env: *mut MDB_env, dbs: MDB_dbi) -> c_int;
    #[link_name = "dlmdb_env_get_maxkeysize"]
    pub fn mdb_env_get_maxkeysize(env: *mut MDB_env) -> c_int;
    #[link_name = "dlmdb_env_set_userctx"]
    pub fn mdb_env_set_userctx(env: *mut MDB_env, ctx: *mut c_void) -> c_int;
    #[link_name = "dlmdb_env_get_userctx"]
    pub fn mdb_env_get_userctx(env: *mut MDB_env) -> *mut c_void;
    #[link_name = "dlmdb_env_set_assert"]
    pub fn mdb_env_set_assert(env: *mut MDB_env, func: Option<MDB_assert_func>) -> c_int;
    /// DLMDB: make long operations return `EINTR` while `onoff` is non-zero.
    #[link_name = "dlmdb_env_set_interrupt"]
    pub fn mdb_env_set_interrupt(env: *mut MDB_env, onoff: c_int) -> c_int;

    // Transactions
    #[link_name = "dlmdb_txn_begin"]
    pub fn mdb_txn_begin(
        env: *mut MDB_env,
        parent: *mut MDB_txn,
        flags: c_uint,
        txn: *mut *mut MDB_txn,
    ) -> c_int;
    #[link_name = "dlmdb_txn_env"]
    pub fn mdb_txn_env(txn: *mut MDB_txn) -> *mut MDB_env;
    #[link_name = "dlmdb_txn_id"]
    pub fn mdb_txn_id(txn: *mut MDB_txn) -> mdb_size_t;
    #[link_name = "dlmdb_txn_commit"]
    pub fn mdb_txn_commit(txn: *mut MDB_txn) -> c_int;
    /// dlmdb addition: 1 when committing `txn` now would write (it or a
    /// live child changed something and none failed), else 0.
    #[link_name = "dlmdb_txn_changed"]
    pub fn mdb_txn_changed(txn: *mut MDB_txn) -> c_int;
    #[link_name = "dlmdb_txn_abort"]
    pub fn mdb_txn_abort(txn: *mut MDB_txn);
    #[link_name = "dlmdb_txn_reset"]
    pub fn mdb_txn_reset(txn: *mut MDB_txn);
    #[link_name = "dlmdb_txn_renew"]
    pub fn mdb_txn_renew(txn: *mut MDB_txn) -> c_int;

    // Databases
    #[link_name = "dlmdb_dbi_open"]
    pub fn mdb_dbi_open(
        txn: *mut MDB_txn,
        name: *const c_char,
        flags: c_uint,
        dbi: *mut MDB_dbi,
    ) -> c_int;
    #[link_name = "dlmdb_stat"]
    pub fn mdb_stat(txn: *mut MDB_txn, dbi: MDB_dbi, stat: *mut MDB_stat) -> c_int;
    #[link_name = "dlmdb_dbi_flags"]
    pub fn mdb_dbi_flags(txn: *mut MDB_txn, dbi: MDB_dbi, flags: *mut c_uint) -> c_int;
    #[link_name = "dlmdb_dbi_close"]
    pub fn mdb_dbi_close(env: *mut MDB_env, dbi: MDB_dbi);
    #[link_name = "dlmdb_drop"]
    pub fn mdb_drop(txn: *mut MDB_txn, dbi: MDB_dbi, del: c_int) -> c_int;
    #[link_name = "dlmdb_set_compare"]
    pub fn mdb_set_compare(txn: *mut MDB_txn, dbi: MDB_dbi, cmp: Option<MDB_cmp_func>) -> c_int;
    #[link_name = "dlmdb_set_dupsort"]
    pub fn mdb_set_dupsort(txn: *mut MDB_txn, dbi: MDB_dbi, cmp: Option<MDB_cmp_func>) -> c_int;
    #[link_name = "dlmdb_set_relfunc"]
    pub fn mdb_set_relfunc(txn: *mut MDB_txn, dbi: MDB_dbi, rel: Option<MDB_rel_func>) -> c_int;
    #[link_name = "dlmdb_set_relctx"]
    pub fn mdb_set_relctx(txn: *mut MDB_txn, dbi: MDB_dbi, ctx: *mut c_void) -> c_int;

    // Data access
    #[link_name = "dlmdb_get"]
    pub fn mdb_get(txn: *mut MDB_txn, dbi: MDB_dbi, key: *mut MDB_val, data: *mut MDB_val)
        -> c_int;
    #[link_name = "dlmdb_put"]
    pub fn mdb_put(
        txn: *mut MDB_txn,
        dbi: MDB_dbi,
        key: *mut MDB_val,
        data: *mut MDB_val,
        flags: c_uint,
    ) -> c_int;
    #[link_name = "dlmdb_del"]
    pub fn mdb_del(txn: *mut MDB_txn, dbi: MDB_dbi, key: *mut MDB_val, data: *mut MDB_val)
        -> c_int;

    // Cursors
    #[link_name = "dlmdb_cursor_open"]
    pub fn mdb_cursor_open(txn: *mut MDB_txn, dbi: MDB_dbi, cursor: *mut *mut MDB_cursor) -> c_int;
    #[link_name = "dlmdb_cursor_close"]
    pub fn mdb_cursor_close(cursor: *mut MDB_cursor);
    #[link_name = "dlmdb_cursor_renew"]
    pub fn mdb_cursor_renew(txn: *mut MDB_txn, cursor: *mut MDB_cursor) -> c_int;
    #[link_name = "dlmdb_cursor_txn"]
    pub fn mdb_cursor_txn(cursor: *mut MDB_cursor) -> *mut MDB_txn;
    #[link_name = "dlmdb_cursor_dbi"]
    pub fn mdb_cursor_dbi(cursor: *mut MDB_cursor) -> MDB_dbi;
    #[link_name = "dlmdb_cursor_get"]
    pub fn mdb_cursor_get(
        cursor: *mut MDB_cursor,
        key: *mut MDB_val,
        data: *mut MDB_val,
        op: MDB_cursor_op,
    ) -> c_int;
    #[link_name = "dlmdb_cursor_put"]
    pub fn mdb_cursor_put(
        cursor: *mut MDB_cursor,
        key: *mut MDB_val,
        data: *mut MDB_val,
        flags: c_uint,
    ) -> c_int;
    #[link_name = "dlmdb_cursor_del"]
    pub fn mdb_cursor_del(cursor: *mut MDB_cursor, flags: c_uint) -> c_int;
    #[link_name = "dlmdb_cursor_count"]
    pub fn mdb_cursor_count(cursor: *mut MDB_cursor, countp: *mut mdb_size_t) -> c_int;

    // Comparison
    #[link_name = "dlmdb_cmp"]
    pub fn mdb_cmp(txn: *mut MDB_txn, dbi: MDB_dbi, a: *const MDB_val, b: *const MDB_val) -> c_int;
    #[link_name = "dlmdb_dcmp"]
    pub fn mdb_dcmp(txn: *mut MDB_txn, dbi: MDB_dbi, a: *const MDB_val, b: *const MDB_val)
        -> c_int;

    // Reader table
    #[link_name = "dlmdb_reader_list"]
    pub fn mdb_reader_list(
        env: *mut MDB_env,
        func: Option<MDB_msg_func>,
        ctx: *mut c_void,
    ) -> c_int;
    #[link_name = "dlmdb_reader_check"]
    pub fn mdb_reader_check(env: *mut MDB_env, dead: *mut c_int) -> c_int;

    // DLMDB order statistics
    #[link_name = "dlmdb_count_all"]
    pub fn mdb_count_all(txn: *mut MDB_txn, dbi: MDB_dbi, flags: c_uint, out: *mut u64) -> c_int;
    #[link_name = "dlmdb_count_range"]
    pub fn mdb_count_range(
        txn: *mut MDB_txn,
        dbi: MDB_dbi,
        low: *const MDB_val,
        high: *const MDB_val,
        flags: c_uint,
        out: *mut u64,
    ) -> c_int;
    #[link_name = "dlmdb_range_count_keys"]
    pub fn mdb_range_count_keys(
        txn: *mut MDB_txn,
        dbi: MDB_dbi,
        key_low: *const MDB_val,
        key_high: *const MDB_val,
        flags: c_uint,
        out: *mut u64,
    ) -> c_int;
    #[link_name = "dlmdb_range_count_values"]
    pub fn mdb_range_count_values(
        txn: *mut MDB_txn,
        dbi: MDB_dbi,
        key_low: *const MDB_val,
        key_high: *const MDB_val,
        key_flags: c_uint,
        out: *mut u64,
    ) -> c_int;
    #[link_name = "dlmdb_cursor_get_rank"]
    pub fn mdb_cursor_get_rank(
        cursor: *mut MDB_cursor,
        rank: u64,
        key: *mut MDB_val,
        data: *mut MDB_val,
        flags: c_uint,
    ) -> c_int;
    #[link_name = "dlmdb_get_rank"]
    pub fn mdb_get_rank(
        txn: *mut MDB_txn,
        dbi: MDB_dbi,
        rank: u64,
        key: *mut MDB_val,
        data: *mut MDB_val,
    ) -> c_int;
    #[link_name = "dlmdb_cursor_key_rank"]
    pub fn mdb_cursor_key_rank(
        cursor: *mut MDB_cursor,
        key: *const MDB_val,
        data: *const MDB_val,
        flags: c_uint,
        rank: *mut u64,
    ) -> c_int;
    #[link_name = "dlmdb_get_key_rank"]
    pub fn mdb_get_key_rank(
        txn: *mut MDB_txn,
        dbi: MDB_dbi,
        key: *const MDB_val,
        data: *const MDB_val,
        rank: *mut u64,
    ) -> c_int;
    #[link_name = "dlmdb_cursor_list_dup"]
    pub fn mdb_cursor_list_dup(
        cursor: *mut MDB_cursor,
        values: *mut *const MDB_val,
        countp: *mut mdb_size_t,
    ) -> c_int;

    // dlmdb introspection
    /// Walk every page of one database (FREE_DBI and MAIN_DBI allowed), depth
    /// first, parent before children; overflow runs are reported when their leaf
    /// node is visited. A non-zero return from `func` stops the walk and is returned.
    #[link_name = "dlmdb_page_walk"]
    pub fn mdb_page_walk(
        txn: *mut MDB_txn,
        dbi: MDB_dbi,
        func: Option<MDB_page_func>,
        ctx: *mut c_void,
    ) -> c_int;

    /// dlmdb addition: the address range this process maps the data file
    /// (or MDB_INMEMORY memory) at; fixed while any txn of the process is
    /// alive. `EINVAL` when the env is not open.
    #[link_name = "dlmdb_env_get_map"]
    pub fn mdb_env_get_map(env: *mut MDB_env, addr: *mut *mut c_void, size: *mut usize) -> c_int;
    #[link_name = "dlmdb_env_get_layout"]
    pub fn mdb_env_get_layout(env: *mut MDB_env, out: *mut MDB_envlayout) -> c_int;
}

#[cfg(feature = "profile")]
extern "C" {
    #[link_name = "dlmdb_profile_reset"]
    pub fn mdb_profile_reset();
    #[link_name = "dlmdb_profile_snapshot"]
    pub fn mdb_profile_snapshot(out: *mut MDB_profile_stats);
}

/// `mdb_open` is a macro alias of `mdb_dbi_open` in the C header.
///
/// # Safety
/// Same contract as [`mdb_dbi_open`].
pub unsafe fn mdb_open(
    txn: *mut MDB_txn,
    name: *const c_char,
    flags: c_uint,
    dbi: *mut MDB_dbi,
) -> c_int {
    mdb_dbi_open(txn, name, flags, dbi)
}

/// `mdb_close` is a macro alias of `mdb_dbi_close` in the C header.
///
/// # Safety
/// Same contract as [`mdb_dbi_close`].
pub unsafe fn mdb_close(env: *mut MDB_env, dbi: MDB_dbi) {
    mdb_dbi_close(env, dbi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    #[test]
    fn struct_sizes_match_the_c_abi() {
        assert_eq!(size_of::<MDB_val>(), 16);
        assert_eq!(size_of::<MDB_stat>(), 40);
        assert_eq!(size_of::<MDB_envinfo>(), 40);
        // 2 x 8 + 8 x 4 + 8
        assert_eq!(size_of::<MDB_pageinfo>(), 56);
        assert_eq!(size_of::<MDB_profile_stats>(), 16 * 8);
    }

    #[test]
    fn constants_have_lmdb_values() {
        assert_eq!(MDB_NOSUBDIR, 0x4000);
        assert_eq!(MDB_RDONLY, 0x20000);
        assert_eq!(MDB_CREATE, 0x40000);
        assert_eq!(MDB_NOTFOUND, -30798);
        assert_eq!(MDB_BAD_DBI, -30780);
        assert_eq!(MDB_SET_RANGE, 17);
        assert_eq!(MDB_PREV_MULTIPLE, 18);
        // Our additions must not collide with any LMDB env flag.
        let lmdb_env_flags = MDB_FIXEDMAP
            | MDB_NOSUBDIR
            | MDB_NOSYNC
            | MDB_RDONLY
            | MDB_NOMETASYNC
            | MDB_WRITEMAP
            | MDB_MAPASYNC
            | MDB_NOTLS
            | MDB_NOLOCK
            | MDB_NORDAHEAD
            | MDB_NOMEMINIT
            | MDB_PREVSNAPSHOT
            | MDB_INMEMORY;
        assert_eq!(
            lmdb_env_flags & (MDB_FORMAT_LMDB | MDB_FORMAT_DLMDB_V1 | MDB_LOCK_V1 | MDB_LOCK_V2),
            0
        );
    }
}
