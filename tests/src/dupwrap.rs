//! DUPSORT test executor: one op-level interface, [`DupEngine`],
//! instantiated with identical code for stock LMDB (`lmdb-master-sys`) and for
//! our engine's raw bindings (`dlmdb-sys`). Tests drive both through the same
//! calls and compare the [`Out`] records (return code, key, data, count, list).
//!
//! The executor owns raw handles without lifetimes so that a test can hold
//! one write transaction, several cursors (by slot) and read snapshots (by
//! slot) at once, and reopen the environment in the middle of a run. Cursors
//! are closed before their transaction ends; everything is released on drop.
//!
//! Stock LMDB has no `mdb_cursor_list_dup`; its instantiation emulates the
//! newest DLMDB contract (dlmdb-extensions.md §2.4.8 as changed by N.5) with a
//! second cursor, so differential tests can compare the call too:
//! * DB not DUPSORT -> `MDB_INCOMPATIBLE`;
//! * cursor not positioned / past the end -> `MDB_NOTFOUND`;
//! * key whose node has no F_DUPDATA (a single plain value) -> `MDB_NOTFOUND`
//!   (detected with `MDB_FIRST_DUP`, which sets the key only for plain nodes);
//! * otherwise every duplicate of the key, inline or in a sub-database.

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

/// Tree statistics (`MDB_stat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DStat {
    pub psize: u32,
    pub depth: u32,
    pub branch_pages: u64,
    pub leaf_pages: u64,
    pub overflow_pages: u64,
    pub entries: u64,
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
    fn stat(&mut self, dbi: u32) -> Result<DStat, i32>;
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

#[macro_export]
#[doc(hidden)]
macro_rules! dup_executor {
    ($ffi:ident, $list:path) => {
        use ::$ffi as ffi;
        use std::path::{Path, PathBuf};
        use std::ptr;
        use $crate::dupwrap::{DStat, DupEngine, Out};

        fn ev() -> ffi::MDB_val {
            ffi::MDB_val {
                mv_size: 0,
                mv_data: ptr::null_mut(),
            }
        }
        fn vv(b: &[u8]) -> ffi::MDB_val {
            ffi::MDB_val {
                mv_size: b.len(),
                mv_data: b.as_ptr() as *mut _,
            }
        }
        fn ov(b: Option<&[u8]>) -> ffi::MDB_val {
            b.map_or_else(ev, vv)
        }
        /// # Safety: `v` must describe readable memory (or be NULL/empty).
        unsafe fn owned(v: &ffi::MDB_val) -> Vec<u8> {
            if v.mv_size == 0 || v.mv_data.is_null() {
                Vec::new()
            } else {
                std::slice::from_raw_parts(v.mv_data as *const u8, v.mv_size).to_vec()
            }
        }

        pub struct Exec {
            env: *mut ffi::MDB_env,
            path: PathBuf,
            flags: u32,
            maxdbs: u32,
            mapsize: usize,
            txn: *mut ffi::MDB_txn,
            curs: Vec<*mut ffi::MDB_cursor>,
            snaps: Vec<*mut ffi::MDB_txn>,
        }

        impl Exec {
            fn cur(&self, slot: usize) -> *mut ffi::MDB_cursor {
                self.curs.get(slot).copied().unwrap_or(ptr::null_mut())
            }
            fn close_all(&mut self) {
                // SAFETY: every handle is live or NULL; cursors go before txns.
                unsafe {
                    for c in self.curs.iter_mut() {
                        if !c.is_null() {
                            ffi::mdb_cursor_close(*c);
                            *c = ptr::null_mut();
                        }
                    }
                    if !self.txn.is_null() {
                        ffi::mdb_txn_abort(self.txn);
                        self.txn = ptr::null_mut();
                    }
                    for s in self.snaps.iter_mut() {
                        if !s.is_null() {
                            ffi::mdb_txn_abort(*s);
                            *s = ptr::null_mut();
                        }
                    }
                }
            }
            fn close_cursors(&mut self) {
                for c in self.curs.iter_mut() {
                    if !c.is_null() {
                        // SAFETY: live cursor of the current txn.
                        unsafe { ffi::mdb_cursor_close(*c) };
                        *c = ptr::null_mut();
                    }
                }
            }
            fn open_env(&mut self) -> Result<(), i32> {
                let cpath =
                    std::ffi::CString::new(self.path.as_os_str().to_string_lossy().as_bytes())
                        .unwrap();
                // SAFETY: plain FFI on a handle we own; closed on failure.
                unsafe {
                    let mut env = ptr::null_mut();
                    let rc = ffi::mdb_env_create(&mut env);
                    if rc != 0 {
                        return Err(rc);
                    }
                    let mut rc = ffi::mdb_env_set_maxdbs(env, self.maxdbs);
                    if rc == 0 && self.mapsize != 0 {
                        rc = ffi::mdb_env_set_mapsize(env, self.mapsize);
                    }
                    if rc == 0 {
                        rc = ffi::mdb_env_open(env, cpath.as_ptr(), self.flags as _, 0o644);
                    }
                    if rc != 0 {
                        ffi::mdb_env_close(env);
                        return Err(rc);
                    }
                    self.env = env;
                }
                Ok(())
            }
            fn walk_txn(
                txn: *mut ffi::MDB_txn,
                dbi: u32,
                forward: bool,
            ) -> Result<$crate::Pairs, i32> {
                let (first, step) = if forward {
                    (ffi::MDB_FIRST, ffi::MDB_NEXT)
                } else {
                    (ffi::MDB_LAST, ffi::MDB_PREV)
                };
                // SAFETY: local cursor closed before returning; values copied.
                unsafe {
                    let mut c = ptr::null_mut();
                    let rc = ffi::mdb_cursor_open(txn, dbi, &mut c);
                    if rc != 0 {
                        return Err(rc);
                    }
                    let mut out = Vec::new();
                    let mut op = first;
                    let rc = loop {
                        let (mut k, mut d) = (ev(), ev());
                        let rc = ffi::mdb_cursor_get(c, &mut k, &mut d, op);
                        if rc != 0 {
                            break rc;
                        }
                        out.push((owned(&k), owned(&d)));
                        op = step;
                    };
                    ffi::mdb_cursor_close(c);
                    if rc == ffi::MDB_NOTFOUND {
                        Ok(out)
                    } else {
                        Err(rc)
                    }
                }
            }
        }

        impl Drop for Exec {
            fn drop(&mut self) {
                self.close_all();
                if !self.env.is_null() {
                    // SAFETY: no txn or cursor is left.
                    unsafe { ffi::mdb_env_close(self.env) };
                }
            }
        }

        impl DupEngine for Exec {
            const NAME: &'static str = stringify!($ffi);

            fn open(path: &Path, env_flags: u32, maxdbs: u32, mapsize: usize) -> Result<Self, i32> {
                let mut e = Exec {
                    env: ptr::null_mut(),
                    path: path.to_path_buf(),
                    flags: env_flags,
                    maxdbs,
                    mapsize,
                    txn: ptr::null_mut(),
                    curs: Vec::new(),
                    snaps: Vec::new(),
                };
                e.open_env()?;
                Ok(e)
            }
            fn reopen(&mut self) -> Result<(), i32> {
                self.close_all();
                if !self.env.is_null() {
                    // SAFETY: nothing open on it any more.
                    unsafe { ffi::mdb_env_close(self.env) };
                    self.env = ptr::null_mut();
                }
                self.open_env()
            }
            fn info(&self) -> (u64, u64) {
                // SAFETY: plain data filled by the engine.
                unsafe {
                    let mut i: ffi::MDB_envinfo = std::mem::zeroed();
                    ffi::mdb_env_info(self.env, &mut i);
                    (i.me_last_pgno as u64, i.me_last_txnid as u64)
                }
            }
            fn begin_rw(&mut self) -> i32 {
                assert!(self.txn.is_null(), "a txn is already open");
                // SAFETY: env open.
                unsafe { ffi::mdb_txn_begin(self.env, ptr::null_mut(), 0, &mut self.txn) }
            }
            fn begin_ro(&mut self) -> i32 {
                assert!(self.txn.is_null(), "a txn is already open");
                // SAFETY: env open.
                unsafe {
                    ffi::mdb_txn_begin(self.env, ptr::null_mut(), ffi::MDB_RDONLY, &mut self.txn)
                }
            }
            fn commit(&mut self) -> i32 {
                self.close_cursors();
                let t = std::mem::replace(&mut self.txn, ptr::null_mut());
                // SAFETY: commit frees the handle whatever the outcome.
                unsafe { ffi::mdb_txn_commit(t) }
            }
            fn abort(&mut self) {
                self.close_cursors();
                let t = std::mem::replace(&mut self.txn, ptr::null_mut());
                if !t.is_null() {
                    // SAFETY: live txn.
                    unsafe { ffi::mdb_txn_abort(t) }
                }
            }
            fn in_txn(&self) -> bool {
                !self.txn.is_null()
            }
            fn open_db(&mut self, name: Option<&[u8]>, flags: u32) -> Result<u32, i32> {
                let cname = name.map(|n| std::ffi::CString::new(n).unwrap());
                let p = cname.as_ref().map_or(ptr::null(), |c| c.as_ptr());
                let mut dbi = 0;
                // SAFETY: live txn.
                let rc = unsafe { ffi::mdb_dbi_open(self.txn, p, flags as _, &mut dbi) };
                if rc == 0 {
                    Ok(dbi)
                } else {
                    Err(rc)
                }
            }
            fn db_flags(&mut self, dbi: u32) -> Result<u32, i32> {
                let mut f = 0;
                // SAFETY: live txn.
                let rc = unsafe { ffi::mdb_dbi_flags(self.txn, dbi, &mut f) };
                if rc == 0 {
                    Ok(f as u32)
                } else {
                    Err(rc)
                }
            }
            fn put(&mut self, dbi: u32, key: &[u8], data: &[u8], flags: u32) -> Out {
                let (mut k, mut d) = (vv(key), vv(data));
                // SAFETY: live write txn; returned data (KEYEXIST) copied at once.
                unsafe {
                    let rc = ffi::mdb_put(self.txn, dbi, &mut k, &mut d, flags as _);
                    let data = if rc == ffi::MDB_KEYEXIST
                        && flags & $crate::dupwrap::wf::NOOVERWRITE != 0
                    {
                        Some(owned(&d))
                    } else {
                        None
                    };
                    Out {
                        rc,
                        data,
                        ..Out::default()
                    }
                }
            }
            fn del(&mut self, dbi: u32, key: &[u8], data: Option<&[u8]>) -> i32 {
                let mut k = vv(key);
                let mut d = ov(data);
                let dp = if data.is_some() {
                    &mut d as *mut _
                } else {
                    ptr::null_mut()
                };
                // SAFETY: live write txn.
                unsafe { ffi::mdb_del(self.txn, dbi, &mut k, dp) }
            }
            fn get(&mut self, dbi: u32, key: &[u8]) -> Out {
                let (mut k, mut d) = (vv(key), ev());
                // SAFETY: live txn; copied at once.
                unsafe {
                    let rc = ffi::mdb_get(self.txn, dbi, &mut k, &mut d);
                    Out {
                        rc,
                        data: (rc == 0).then(|| owned(&d)),
                        ..Out::default()
                    }
                }
            }
            fn drop_db(&mut self, dbi: u32, del: bool) -> i32 {
                self.close_cursors();
                // SAFETY: live write txn, no cursor left.
                unsafe { ffi::mdb_drop(self.txn, dbi, del as _) }
            }
            fn stat(&mut self, dbi: u32) -> Result<DStat, i32> {
                // SAFETY: plain data.
                unsafe {
                    let mut s: ffi::MDB_stat = std::mem::zeroed();
                    let rc = ffi::mdb_stat(self.txn, dbi, &mut s);
                    if rc != 0 {
                        return Err(rc);
                    }
                    Ok(DStat {
                        psize: s.ms_psize as u32,
                        depth: s.ms_depth as u32,
                        branch_pages: s.ms_branch_pages as u64,
                        leaf_pages: s.ms_leaf_pages as u64,
                        overflow_pages: s.ms_overflow_pages as u64,
                        entries: s.ms_entries as u64,
                    })
                }
            }
            fn cursor_open(&mut self, slot: usize, dbi: u32) -> i32 {
                self.cursor_close(slot);
                if self.curs.len() <= slot {
                    self.curs.resize(slot + 1, ptr::null_mut());
                }
                // SAFETY: live txn.
                unsafe { ffi::mdb_cursor_open(self.txn, dbi, &mut self.curs[slot]) }
            }
            fn cursor_close(&mut self, slot: usize) {
                if let Some(c) = self.curs.get_mut(slot) {
                    if !c.is_null() {
                        // SAFETY: live cursor.
                        unsafe { ffi::mdb_cursor_close(*c) };
                        *c = ptr::null_mut();
                    }
                }
            }
            fn cget(
                &mut self,
                slot: usize,
                op: u32,
                key: Option<&[u8]>,
                data: Option<&[u8]>,
            ) -> Out {
                let c = self.cur(slot);
                assert!(!c.is_null(), "cursor slot {slot} not open");
                let (mut k, mut d) = (ov(key), ov(data));
                // SAFETY: live cursor; results copied at once.
                unsafe {
                    let rc = ffi::mdb_cursor_get(c, &mut k, &mut d, op as _);
                    if rc == 0 {
                        Out {
                            rc,
                            key: Some(owned(&k)),
                            data: Some(owned(&d)),
                            ..Out::default()
                        }
                    } else {
                        Out::rc(rc)
                    }
                }
            }
            fn cput(&mut self, slot: usize, key: &[u8], data: &[u8], flags: u32) -> Out {
                let c = self.cur(slot);
                assert!(!c.is_null(), "cursor slot {slot} not open");
                let (mut k, mut d) = (vv(key), vv(data));
                // SAFETY: live cursor in a write txn.
                unsafe {
                    let rc = ffi::mdb_cursor_put(c, &mut k, &mut d, flags as _);
                    let data = if rc == ffi::MDB_KEYEXIST
                        && flags & $crate::dupwrap::wf::NOOVERWRITE != 0
                    {
                        Some(owned(&d))
                    } else {
                        None
                    };
                    Out {
                        rc,
                        data,
                        ..Out::default()
                    }
                }
            }
            fn cput_multiple(
                &mut self,
                slot: usize,
                key: &[u8],
                items: &[u8],
                size: usize,
                flags: u32,
            ) -> Out {
                let c = self.cur(slot);
                assert!(!c.is_null(), "cursor slot {slot} not open");
                let mut k = vv(key);
                let mut d = [
                    ffi::MDB_val {
                        mv_size: size,
                        mv_data: items.as_ptr() as *mut _,
                    },
                    ffi::MDB_val {
                        mv_size: if size == 0 { 0 } else { items.len() / size },
                        mv_data: ptr::null_mut(),
                    },
                ];
                // SAFETY: the two-element array is what MDB_MULTIPLE expects.
                unsafe {
                    let rc = ffi::mdb_cursor_put(
                        c,
                        &mut k,
                        d.as_mut_ptr(),
                        (flags | $crate::dupwrap::wf::MULTIPLE) as _,
                    );
                    Out {
                        rc,
                        n: Some(d[1].mv_size as u64),
                        ..Out::default()
                    }
                }
            }
            fn cdel(&mut self, slot: usize, flags: u32) -> i32 {
                let c = self.cur(slot);
                assert!(!c.is_null(), "cursor slot {slot} not open");
                // SAFETY: live cursor.
                unsafe { ffi::mdb_cursor_del(c, flags as _) }
            }
            fn ccount(&mut self, slot: usize) -> Out {
                let c = self.cur(slot);
                assert!(!c.is_null(), "cursor slot {slot} not open");
                let mut n = 0;
                // SAFETY: live cursor.
                let rc = unsafe { ffi::mdb_cursor_count(c, &mut n) };
                Out {
                    rc,
                    n: (rc == 0).then_some(n as u64),
                    ..Out::default()
                }
            }
            fn clist(&mut self, slot: usize) -> Out {
                let c = self.cur(slot);
                assert!(!c.is_null(), "cursor slot {slot} not open");
                // SAFETY: live cursor of the current txn.
                let (rc, l) = unsafe { $list(self.txn, c) };
                Out {
                    rc,
                    n: (rc == 0).then_some(l.len() as u64),
                    list: (rc == 0).then_some(l),
                    ..Out::default()
                }
            }
            fn snap_begin(&mut self, slot: usize) -> i32 {
                self.snap_end(slot);
                if self.snaps.len() <= slot {
                    self.snaps.resize(slot + 1, ptr::null_mut());
                }
                // SAFETY: env open.
                unsafe {
                    ffi::mdb_txn_begin(
                        self.env,
                        ptr::null_mut(),
                        ffi::MDB_RDONLY,
                        &mut self.snaps[slot],
                    )
                }
            }
            fn snap_end(&mut self, slot: usize) {
                if let Some(s) = self.snaps.get_mut(slot) {
                    if !s.is_null() {
                        // SAFETY: live read txn.
                        unsafe { ffi::mdb_txn_abort(*s) };
                        *s = ptr::null_mut();
                    }
                }
            }
            fn snap_walk(&mut self, slot: usize, dbi: u32) -> Result<$crate::Pairs, i32> {
                let t = self.snaps.get(slot).copied().unwrap_or(ptr::null_mut());
                assert!(!t.is_null(), "snapshot slot {slot} not open");
                Self::walk_txn(t, dbi, true)
            }
            fn walk(&mut self, dbi: u32, forward: bool) -> Result<$crate::Pairs, i32> {
                Self::walk_txn(self.txn, dbi, forward)
            }
            fn raw_env(&self) -> usize {
                self.env as usize
            }
        }
    };
}

/// Stock LMDB (mdb.master) executor, with an emulated `mdb_cursor_list_dup`.
pub mod stock {
    crate::dup_executor!(lmdb_master_sys, emulated_list_dup);

    /// Emulation of the newest DLMDB `mdb_cursor_list_dup` (see module doc).
    ///
    /// # Safety
    /// `txn` and `cur` must be live handles, `cur` opened in `txn`.
    unsafe fn emulated_list_dup(
        txn: *mut ffi::MDB_txn,
        cur: *mut ffi::MDB_cursor,
    ) -> (i32, Vec<Vec<u8>>) {
        let dbi = ffi::mdb_cursor_dbi(cur);
        let mut f = 0;
        let rc = ffi::mdb_dbi_flags(txn, dbi, &mut f);
        if rc != 0 {
            return (rc, vec![]);
        }
        if f & ffi::MDB_DUPSORT == 0 {
            return (ffi::MDB_INCOMPATIBLE, vec![]);
        }
        let (mut k, mut d) = (ev(), ev());
        if ffi::mdb_cursor_get(cur, &mut k, &mut d, ffi::MDB_GET_CURRENT) != 0 {
            return (ffi::MDB_NOTFOUND, vec![]);
        }
        let (key, cur_data) = (owned(&k), owned(&d));
        let mut c2 = ptr::null_mut();
        let rc = ffi::mdb_cursor_open(txn, dbi, &mut c2);
        if rc != 0 {
            return (rc, vec![]);
        }
        let mut out = Vec::new();
        let (mut k, mut d) = (vv(&key), vv(&cur_data));
        let mut rc = ffi::mdb_cursor_get(c2, &mut k, &mut d, ffi::MDB_GET_BOTH);
        if rc == 0 {
            let (mut k, mut d) = (ev(), ev());
            rc = ffi::mdb_cursor_get(c2, &mut k, &mut d, ffi::MDB_FIRST_DUP);
            if rc == 0 && !k.mv_data.is_null() {
                rc = ffi::MDB_NOTFOUND; // plain node: key was set
            } else if rc == 0 {
                out.push(owned(&d));
                loop {
                    let (mut k, mut d) = (ev(), ev());
                    let r = ffi::mdb_cursor_get(c2, &mut k, &mut d, ffi::MDB_NEXT_DUP);
                    if r != 0 {
                        if r != ffi::MDB_NOTFOUND {
                            rc = r;
                        }
                        break;
                    }
                    out.push(owned(&d));
                }
            }
        }
        ffi::mdb_cursor_close(c2);
        (rc, if rc == 0 { out } else { vec![] })
    }
}

/// Our engine's executor (raw `dlmdb-sys` bindings, real `mdb_cursor_list_dup`).
pub mod ours {
    crate::dup_executor!(dlmdb_sys, native_list_dup);

    /// # Safety
    /// `cur` must be a live cursor.
    unsafe fn native_list_dup(
        _txn: *mut ffi::MDB_txn,
        cur: *mut ffi::MDB_cursor,
    ) -> (i32, Vec<Vec<u8>>) {
        let mut vals: *const ffi::MDB_val = ptr::null();
        let mut n = 0;
        let rc = ffi::mdb_cursor_list_dup(cur, &mut vals, &mut n);
        if rc != 0 {
            return (rc, vec![]);
        }
        if n > 0 && vals.is_null() {
            return (-1, vec![]); // contract violation: count without array
        }
        let out = (0..n).map(|i| owned(&*vals.add(i))).collect();
        (0, out)
    }
}
