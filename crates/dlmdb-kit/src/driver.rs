//! The one driver body, [`driver!`], expanded once per FFI crate.

/// Generates, in the calling module, the whole driver over the FFI crate
/// given last (`::dlmdb_sys` or `::lmdb_master_sys`):
///
/// * `$marker`: the engine's marker type, implementing [`crate::eng::Eng`]
///   with label `$label`;
/// * `Env`, `Txn`, `Cursor`: owned raw handles, raw return codes;
/// * `Exec`: the [`crate::dup::DupEngine`] executor, named `$name`, whose
///   `clist` calls `$list(txn, cursor)`, a function the calling module
///   defines.
///
/// The raw calls every face shares (`*_raw`) are written once here.
#[macro_export]
#[doc(hidden)]
macro_rules! driver {
    ($marker:ident, $label:literal, $name:literal, $list:ident, $($ffi:tt)+) => {
        pub use $($ffi)+ as ffi;

        use std::ffi::{CStr, CString};
        use std::marker::PhantomData;
        use std::os::raw::{c_char, c_int, c_void};
        use std::os::unix::ffi::OsStrExt;
        use std::path::{Path, PathBuf};
        use std::ptr;

        pub use $crate::{DbStat, EnvInfo, Opts};
        use $crate::dup::{DupEngine, Out};
        use $crate::{Pair, Pairs};

        /// Result with a raw return code as the error.
        pub type Res<T> = Result<T, i32>;

        $crate::raw_val_helpers!(pub);

        /// The engine's message for a return code.
        pub fn strerror(rc: i32) -> String {
            // SAFETY: mdb_strerror returns a static NUL-terminated string.
            unsafe {
                let p = ffi::mdb_strerror(rc as _);
                if p.is_null() {
                    String::from("?")
                } else {
                    CStr::from_ptr(p as *const _).to_string_lossy().into_owned()
                }
            }
        }

        fn c_path(p: &Path) -> CString {
            CString::new(p.as_os_str().as_bytes()).expect("path without NUL")
        }

        // ------------------------------------------------------------ raw calls

        /// Create and open an environment (`path` NULL for `MDB_INMEMORY`),
        /// mode 0644. On failure it is closed and the error names the call.
        ///
        /// # Safety
        /// Plain FFI; the returned handle is the caller's to close.
        unsafe fn env_open_raw(
            path: Option<&CStr>,
            o: &Opts,
        ) -> Result<*mut ffi::MDB_env, (&'static str, i32)> {
            let mut env = ptr::null_mut();
            let rc = ffi::mdb_env_create(&mut env);
            if rc != 0 {
                return Err(("mdb_env_create", rc));
            }
            let step = |call: &'static str, rc: c_int| if rc == 0 { Ok(()) } else { Err((call, rc)) };
            let r = (|| {
                if o.mapsize != 0 {
                    step("mdb_env_set_mapsize", ffi::mdb_env_set_mapsize(env, o.mapsize as _))?;
                }
                if o.maxdbs != 0 {
                    step("mdb_env_set_maxdbs", ffi::mdb_env_set_maxdbs(env, o.maxdbs as _))?;
                }
                if o.maxreaders != 0 {
                    step("mdb_env_set_maxreaders", ffi::mdb_env_set_maxreaders(env, o.maxreaders as _))?;
                }
                let p = path.map_or(ptr::null(), |c| c.as_ptr());
                step("mdb_env_open", ffi::mdb_env_open(env, p as *const _, o.flags as _, 0o644 as _))
            })();
            match r {
                Ok(()) => Ok(env),
                Err(e) => {
                    ffi::mdb_env_close(env);
                    Err(e)
                }
            }
        }

        /// # Safety
        /// Live env; `parent` NULL or a live write txn of it.
        #[inline(always)]
        unsafe fn txn_begin_raw(
            env: *mut ffi::MDB_env,
            parent: *mut ffi::MDB_txn,
            flags: u32,
        ) -> Res<*mut ffi::MDB_txn> {
            let mut t = ptr::null_mut();
            check(ffi::mdb_txn_begin(env, parent, flags as _, &mut t) as i32)?;
            Ok(t)
        }

        /// `name` None is the main database.
        ///
        /// # Safety
        /// Live txn.
        unsafe fn dbi_open_raw(txn: *mut ffi::MDB_txn, name: Option<&[u8]>, flags: u32) -> Res<u32> {
            let cname = name.map(|n| CString::new(n).expect("db name without NUL"));
            let p = cname.as_ref().map_or(ptr::null(), |c| c.as_ptr());
            let mut dbi: ffi::MDB_dbi = 0 as _;
            check(ffi::mdb_dbi_open(txn, p as *const _, flags as _, &mut dbi) as i32)?;
            Ok(dbi as u32)
        }

        /// # Safety
        /// Live write txn.
        #[inline(always)]
        unsafe fn put_raw(txn: *mut ffi::MDB_txn, dbi: u32, key: &[u8], data: &[u8], flags: u32) -> i32 {
            let (mut k, mut d) = (val(key), val(data));
            ffi::mdb_put(txn, dbi as _, &mut k, &mut d, flags as _) as i32
        }

        /// `mdb_get`; on 0, `out` points into the map.
        ///
        /// # Safety
        /// Live txn.
        #[inline(always)]
        unsafe fn get_raw(txn: *mut ffi::MDB_txn, dbi: u32, key: &[u8], out: &mut ffi::MDB_val) -> i32 {
            let mut k = val(key);
            ffi::mdb_get(txn, dbi as _, &mut k, out) as i32
        }

        /// `data` None deletes the key with all its values.
        ///
        /// # Safety
        /// Live write txn.
        #[inline(always)]
        unsafe fn del_raw(txn: *mut ffi::MDB_txn, dbi: u32, key: &[u8], data: Option<&[u8]>) -> i32 {
            let mut k = val(key);
            let mut d = data.map(val);
            let dp = d.as_mut().map_or(ptr::null_mut(), |v| v as *mut ffi::MDB_val);
            ffi::mdb_del(txn, dbi as _, &mut k, dp) as i32
        }

        /// # Safety
        /// Live cursor; `k`/`d` are inputs where `op` reads them.
        #[inline(always)]
        unsafe fn cursor_get_raw(
            cur: *mut ffi::MDB_cursor,
            k: &mut ffi::MDB_val,
            d: &mut ffi::MDB_val,
            op: u32,
        ) -> i32 {
            ffi::mdb_cursor_get(cur, k, d, op as _) as i32
        }

        /// # Safety
        /// Live cursor of a write txn.
        #[inline(always)]
        unsafe fn cursor_put_raw(cur: *mut ffi::MDB_cursor, key: &[u8], data: &[u8], flags: u32) -> i32 {
            let (mut k, mut d) = (val(key), val(data));
            ffi::mdb_cursor_put(cur, &mut k, &mut d, flags as _) as i32
        }

        /// # Safety
        /// Live txn.
        unsafe fn stat_raw(txn: *mut ffi::MDB_txn, dbi: u32) -> Res<DbStat> {
            let mut s: ffi::MDB_stat = std::mem::zeroed();
            check(ffi::mdb_stat(txn, dbi as _, &mut s) as i32)?;
            Ok(DbStat {
                psize: s.ms_psize as u32,
                depth: s.ms_depth as u32,
                branch_pages: s.ms_branch_pages as u64,
                leaf_pages: s.ms_leaf_pages as u64,
                overflow_pages: s.ms_overflow_pages as u64,
                entries: s.ms_entries as u64,
            })
        }

        /// # Safety
        /// Live env.
        unsafe fn info_raw(env: *mut ffi::MDB_env) -> Res<EnvInfo> {
            let mut i: ffi::MDB_envinfo = std::mem::zeroed();
            check(ffi::mdb_env_info(env, &mut i) as i32)?;
            Ok(EnvInfo {
                last_pgno: i.me_last_pgno as u64,
                last_txnid: i.me_last_txnid as u64,
                map_size: i.me_mapsize as u64,
                num_readers: i.me_numreaders as u32,
            })
        }

        /// Every pair of `dbi` (every duplicate), copied, in cursor order
        /// or reversed.
        ///
        /// # Safety
        /// Live txn.
        unsafe fn walk_raw(txn: *mut ffi::MDB_txn, dbi: u32, forward: bool) -> Res<Pairs> {
            let (first, step) = if forward {
                (ffi::MDB_FIRST, ffi::MDB_NEXT)
            } else {
                (ffi::MDB_LAST, ffi::MDB_PREV)
            };
            let mut c = ptr::null_mut();
            check(ffi::mdb_cursor_open(txn, dbi as _, &mut c) as i32)?;
            let mut out = Vec::new();
            let mut op = first;
            let rc = loop {
                let (mut k, mut d) = (empty_val(), empty_val());
                let rc = cursor_get_raw(c, &mut k, &mut d, op as u32);
                if rc != 0 {
                    break rc;
                }
                out.push((owned(&k), owned(&d)));
                op = step;
            };
            ffi::mdb_cursor_close(c);
            if rc == ffi::MDB_NOTFOUND as i32 {
                Ok(out)
            } else {
                Err(rc)
            }
        }

        // ------------------------------------------------------------ Env, Txn, Cursor

        /// An open environment (raw handle). `Send + Sync` like `MDB_env`.
        pub struct Env {
            pub env: *mut ffi::MDB_env,
        }
        // SAFETY: the C env is thread-safe; each thread uses its own txns.
        unsafe impl Send for Env {}
        unsafe impl Sync for Env {}

        impl Env {
            /// Open `path` (NULL when `None`, for `MDB_INMEMORY`) with mode 0644.
            pub fn open_with(path: Option<&Path>, o: Opts) -> Res<Env> {
                let cpath = path.map(c_path);
                // SAFETY: the handle is ours from here on (closed by Drop).
                unsafe { env_open_raw(cpath.as_deref(), &o) }
                    .map(|env| Env { env })
                    .map_err(|(_, rc)| rc)
            }

            /// Open (or create) an environment; `flags` are passed as given,
            /// `mapsize` 0 keeps the file's stored size.
            pub fn open(path: &Path, flags: u32, maxdbs: u32, mapsize: usize) -> Res<Env> {
                Env::open_with(Some(path), Opts { flags, maxdbs, mapsize, maxreaders: 0 })
            }

            /// A single-file environment (`MDB_NOSUBDIR` added to `flags`).
            pub fn open_file(path: &Path, flags: u32, maxdbs: u32, mapsize: usize) -> Res<Env> {
                Env::open(path, flags | ffi::MDB_NOSUBDIR, maxdbs, mapsize)
            }

            /// A read-only transaction tied to this environment.
            pub fn begin_ro(&self) -> Res<Txn<'_>> {
                self.begin(None, ffi::MDB_RDONLY)
            }

            /// A write transaction tied to this environment.
            pub fn begin_rw(&self) -> Res<Txn<'_>> {
                self.begin(None, 0)
            }

            /// A transaction with explicit flags and parent. The result is
            /// not tied to `self` (so it can cross threads or sit beside its
            /// parent); the caller ends it before closing the environment.
            pub fn begin(&self, parent: Option<&Txn<'_>>, flags: u32) -> Res<Txn<'static>> {
                // SAFETY: live env; the parent, if any, is a live write txn.
                let txn = unsafe {
                    txn_begin_raw(self.env, parent.map_or(ptr::null_mut(), |p| p.txn), flags)?
                };
                Ok(Txn { txn, _env: PhantomData })
            }

            pub fn info(&self) -> Res<EnvInfo> {
                // SAFETY: live env.
                unsafe { info_raw(self.env) }
            }
            pub fn set_mapsize(&self, size: usize) -> Res<()> {
                // SAFETY: the caller has no txn of this env active.
                check(unsafe { ffi::mdb_env_set_mapsize(self.env, size as _) })
            }
            pub fn reader_check(&self) -> Res<i32> {
                let mut dead: c_int = -1;
                // SAFETY: live env.
                check(unsafe { ffi::mdb_reader_check(self.env, &mut dead) })?;
                Ok(dead)
            }
            /// Lines of `mdb_reader_list`, and its return value.
            pub fn reader_list(&self) -> (Vec<String>, i32) {
                unsafe extern "C" fn cb(msg: *const c_char, ctx: *mut c_void) -> c_int {
                    let v = &mut *(ctx as *mut Vec<String>);
                    v.push(CStr::from_ptr(msg).to_string_lossy().into_owned());
                    0
                }
                let mut v: Vec<String> = Vec::new();
                // SAFETY: the callback only appends to `v`.
                let rc = unsafe {
                    ffi::mdb_reader_list(self.env, Some(cb), &mut v as *mut _ as *mut c_void)
                };
                (v, rc)
            }
            pub fn copy2(&self, path: &Path, flags: u32) -> Res<()> {
                let c = c_path(path);
                // SAFETY: live env.
                check(unsafe { ffi::mdb_env_copy2(self.env, c.as_ptr(), flags) })
            }
            pub fn copy(&self, path: &Path) -> Res<()> {
                let c = c_path(path);
                // SAFETY: live env.
                check(unsafe { ffi::mdb_env_copy(self.env, c.as_ptr()) })
            }
            pub fn copyfd(&self, fd: i32) -> Res<()> {
                // SAFETY: fd is an open writable descriptor.
                check(unsafe { ffi::mdb_env_copyfd(self.env, fd as _) })
            }
            pub fn copyfd2(&self, fd: i32, flags: u32) -> Res<()> {
                // SAFETY: fd is an open writable descriptor.
                check(unsafe { ffi::mdb_env_copyfd2(self.env, fd as _, flags) })
            }
            pub fn sync(&self, force: bool) -> Res<()> {
                // SAFETY: live env.
                check(unsafe { ffi::mdb_env_sync(self.env, force as c_int) })
            }
            pub fn set_flags(&self, flags: u32, on: bool) -> Res<()> {
                // SAFETY: live env.
                check(unsafe { ffi::mdb_env_set_flags(self.env, flags, on as c_int) })
            }
            pub fn get_flags(&self) -> u32 {
                let mut f = 0;
                // SAFETY: live env.
                assert_eq!(unsafe { ffi::mdb_env_get_flags(self.env, &mut f) }, 0);
                f
            }
            pub fn maxreaders(&self) -> u32 {
                let mut n = 0;
                // SAFETY: live env.
                assert_eq!(unsafe { ffi::mdb_env_get_maxreaders(self.env, &mut n) }, 0);
                n
            }

            /// Open (creating if missing) the named DBs in one committed
            /// write txn; returns their handles.
            pub fn create_dbs(&self, names: &[(&str, u32)]) -> Res<Vec<u32>> {
                let t = self.begin_rw()?;
                let mut v = Vec::new();
                for (n, f) in names {
                    v.push(t.open_db(Some(n.as_bytes()), f | ffi::MDB_CREATE)?);
                }
                t.commit()?;
                Ok(v)
            }
            /// Open existing named DBs in one committed read txn.
            pub fn open_dbs(&self, names: &[&str]) -> Res<Vec<u32>> {
                let t = self.begin_ro()?;
                let mut v = Vec::new();
                for n in names {
                    v.push(t.open_db(Some(n.as_bytes()), 0)?);
                }
                t.commit()?;
                Ok(v)
            }
        }

        impl Drop for Env {
            fn drop(&mut self) {
                // SAFETY: callers end their txns first (the tied ones cannot
                // outlive the env; detached ones are ended by hand).
                unsafe { ffi::mdb_env_close(self.env) }
            }
        }

        /// A transaction; dropped without commit means abort. `'e` ties it
        /// to its environment when it came from `begin_ro`/`begin_rw`.
        pub struct Txn<'e> {
            pub txn: *mut ffi::MDB_txn,
            _env: PhantomData<&'e Env>,
        }
        // SAFETY: a txn may be used from another thread under MDB_NOTLS,
        // one thread at a time; the tests that move txns set it.
        unsafe impl Send for Txn<'_> {}

        impl Txn<'_> {
            /// The raw transaction pointer (for calls this driver does not cover).
            pub fn raw(&self) -> *mut ffi::MDB_txn {
                self.txn
            }
            pub fn id(&self) -> u64 {
                // SAFETY: live txn.
                unsafe { ffi::mdb_txn_id(self.txn) as u64 }
            }
            /// Open a database: `None` is the main database.
            pub fn open_db(&self, name: Option<&[u8]>, flags: u32) -> Res<u32> {
                // SAFETY: live txn.
                unsafe { dbi_open_raw(self.txn, name, flags) }
            }
            pub fn db_flags(&self, dbi: u32) -> Res<u32> {
                let mut f = 0;
                // SAFETY: live txn.
                check(unsafe { ffi::mdb_dbi_flags(self.txn, dbi, &mut f) })?;
                Ok(f as u32)
            }
            /// The value of `key` (the first duplicate), copied.
            pub fn get(&self, dbi: u32, key: &[u8]) -> Res<Option<Vec<u8>>> {
                let mut d = empty_val();
                // SAFETY: live txn; the result is copied at once.
                match unsafe { get_raw(self.txn, dbi, key, &mut d) } {
                    0 => Ok(Some(unsafe { owned(&d) })),
                    ffi::MDB_NOTFOUND => Ok(None),
                    e => Err(e),
                }
            }
            pub fn put(&self, dbi: u32, key: &[u8], data: &[u8], flags: u32) -> Res<()> {
                // SAFETY: live write txn; the engine copies the bytes.
                check(unsafe { put_raw(self.txn, dbi, key, data, flags) })
            }
            /// Delete a key (all its duplicates) or, with `data`, one pair;
            /// `Ok(false)` when it was not there.
            pub fn del(&self, dbi: u32, key: &[u8], data: Option<&[u8]>) -> Res<bool> {
                // SAFETY: live write txn.
                match unsafe { del_raw(self.txn, dbi, key, data) } {
                    0 => Ok(true),
                    ffi::MDB_NOTFOUND => Ok(false),
                    e => Err(e),
                }
            }
            pub fn stat(&self, dbi: u32) -> Res<DbStat> {
                // SAFETY: live txn.
                unsafe { stat_raw(self.txn, dbi) }
            }
            pub fn entries(&self, dbi: u32) -> Res<u64> {
                Ok(self.stat(dbi)?.entries)
            }
            /// Every pair (every duplicate) in cursor order (`forward`) or reversed.
            pub fn walk(&self, dbi: u32, forward: bool) -> Res<Pairs> {
                // SAFETY: live txn.
                unsafe { walk_raw(self.txn, dbi, forward) }
            }
            /// Names of the named databases: main-DB keys (without NUL bytes)
            /// that open as databases, in main-DB order; plain records are skipped.
            pub fn named_dbs(&self) -> Res<Vec<Vec<u8>>> {
                let mut names = Vec::new();
                for (k, _) in self.walk(1, true)? {
                    if k.contains(&0) {
                        continue;
                    }
                    match self.open_db(Some(&k), 0) {
                        Ok(_) => names.push(k),
                        Err(ffi::MDB_INCOMPATIBLE) => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(names)
            }
            pub fn commit(mut self) -> Res<()> {
                let t = std::mem::replace(&mut self.txn, ptr::null_mut());
                // SAFETY: commit frees the handle whatever the outcome.
                check(unsafe { ffi::mdb_txn_commit(t) })
            }
            pub fn abort(self) {}
            pub fn reset(&self) {
                // SAFETY: read-only txn.
                unsafe { ffi::mdb_txn_reset(self.txn) }
            }
            pub fn renew(&self) -> Res<()> {
                // SAFETY: reset read-only txn.
                check(unsafe { ffi::mdb_txn_renew(self.txn) })
            }
        }

        impl Drop for Txn<'_> {
            fn drop(&mut self) {
                if !self.txn.is_null() {
                    // SAFETY: still live (not committed).
                    unsafe { ffi::mdb_txn_abort(self.txn) }
                }
            }
        }

        /// A cursor. For write txns it must not be used (nor closed) after
        /// the txn ended: call [`Cursor::forget`] then.
        pub struct Cursor {
            pub cur: *mut ffi::MDB_cursor,
        }

        impl Cursor {
            pub fn open(txn: &Txn<'_>, dbi: u32) -> Res<Cursor> {
                let mut c = ptr::null_mut();
                // SAFETY: live txn.
                check(unsafe { ffi::mdb_cursor_open(txn.txn, dbi, &mut c) })?;
                Ok(Cursor { cur: c })
            }
            /// `Ok(None)` for `MDB_NOTFOUND`; the pair is copied.
            pub fn get(&mut self, key: Option<&[u8]>, op: u32) -> Res<Option<Pair>> {
                let mut k = key.map_or_else(empty_val, val);
                let mut d = empty_val();
                // SAFETY: live cursor; results copied at once.
                match unsafe { cursor_get_raw(self.cur, &mut k, &mut d, op) } {
                    0 => Ok(Some(unsafe { (owned(&k), owned(&d)) })),
                    ffi::MDB_NOTFOUND => Ok(None),
                    e => Err(e),
                }
            }
            pub fn put(&mut self, key: &[u8], data: &[u8], flags: u32) -> Res<()> {
                // SAFETY: live write cursor.
                check(unsafe { cursor_put_raw(self.cur, key, data, flags) })
            }
            /// Drop the handle without closing it (its write txn freed it).
            pub fn forget(mut self) {
                self.cur = ptr::null_mut();
            }
        }

        impl Drop for Cursor {
            fn drop(&mut self) {
                if !self.cur.is_null() {
                    // SAFETY: the owning txn is still live (see type docs).
                    unsafe { ffi::mdb_cursor_close(self.cur) }
                }
            }
        }

        // ------------------------------------------------------------ Eng

        /// This engine's marker for [`$crate::eng::Eng`].
        pub struct $marker;

        #[cold]
        fn eng_err(call: &str, rc: i32) -> anyhow::Error {
            anyhow::anyhow!("{}: {call} failed: {} ({rc})", $label, strerror(rc))
        }

        #[inline(always)]
        fn eng_check(call: &str, rc: i32) -> anyhow::Result<()> {
            if rc == 0 { Ok(()) } else { Err(eng_err(call, rc)) }
        }

        /// # Safety
        /// `v` came from the engine within a live txn.
        #[inline(always)]
        unsafe fn slice<'a>(v: &ffi::MDB_val) -> &'a [u8] {
            if v.mv_size == 0 || v.mv_data.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(v.mv_data as *const u8, v.mv_size)
            }
        }

        impl $crate::eng::Eng for $marker {
            const LABEL: &'static str = $label;

            fn version() -> String {
                let (mut a, mut b, mut c) = (0 as _, 0 as _, 0 as _);
                // SAFETY: writes three ints, returns a static string.
                unsafe {
                    let p = ffi::mdb_version(&mut a, &mut b, &mut c);
                    if p.is_null() {
                        format!("{a}.{b}.{c}")
                    } else {
                        CStr::from_ptr(p as *const _).to_string_lossy().into_owned()
                    }
                }
            }

            fn env_open(dir: &Path, flags: u32, maxdbs: u32, map_size: usize) -> anyhow::Result<$crate::eng::Env> {
                let path = $crate::eng::c_path(dir)?;
                let o = Opts { flags, maxdbs, mapsize: map_size, maxreaders: 126 };
                // SAFETY: the handle is the caller's to close.
                match unsafe { env_open_raw(Some(&path), &o) } {
                    Ok(env) => Ok(env as $crate::eng::Env),
                    Err((call, rc)) => Err(eng_err(call, rc)),
                }
            }

            fn env_close(env: $crate::eng::Env) {
                // SAFETY: the caller closed every txn and cursor of this env.
                unsafe { ffi::mdb_env_close(env as *mut ffi::MDB_env) }
            }

            #[inline(always)]
            fn txn_begin(env: $crate::eng::Env, parent: $crate::eng::Txn, flags: u32) -> anyhow::Result<$crate::eng::Txn> {
                // SAFETY: live env; parent is null or a live write txn.
                match unsafe { txn_begin_raw(env as *mut _, parent as *mut _, flags) } {
                    Ok(t) => Ok(t as $crate::eng::Txn),
                    Err(rc) => Err(eng_err("mdb_txn_begin", rc)),
                }
            }

            #[inline(always)]
            fn txn_commit(txn: $crate::eng::Txn) -> anyhow::Result<()> {
                // SAFETY: live txn; freed even on error.
                eng_check("mdb_txn_commit", unsafe { ffi::mdb_txn_commit(txn as *mut _) as i32 })
            }

            #[inline(always)]
            fn txn_abort(txn: $crate::eng::Txn) {
                // SAFETY: live txn.
                unsafe { ffi::mdb_txn_abort(txn as *mut _) }
            }

            #[inline(always)]
            fn txn_reset(txn: $crate::eng::Txn) {
                // SAFETY: live read-only txn.
                unsafe { ffi::mdb_txn_reset(txn as *mut _) }
            }

            #[inline(always)]
            fn txn_renew(txn: $crate::eng::Txn) -> anyhow::Result<()> {
                // SAFETY: a reset read-only txn.
                eng_check("mdb_txn_renew", unsafe { ffi::mdb_txn_renew(txn as *mut _) as i32 })
            }

            fn dbi_open(txn: $crate::eng::Txn, name: Option<&str>, flags: u32) -> anyhow::Result<u32> {
                if let Some(n) = name {
                    anyhow::ensure!(!n.contains('\0'), "database name {n:?} holds a NUL byte");
                }
                // SAFETY: live txn.
                unsafe { dbi_open_raw(txn as *mut _, name.map(str::as_bytes), flags) }
                    .map_err(|rc| eng_err("mdb_dbi_open", rc))
            }

            #[inline(always)]
            fn put(txn: $crate::eng::Txn, dbi: u32, key: &[u8], v: &[u8], flags: u32) -> anyhow::Result<()> {
                // SAFETY: live write txn; inputs point at caller memory.
                eng_check("mdb_put", unsafe { put_raw(txn as *mut _, dbi, key, v, flags) })
            }

            #[inline(always)]
            fn get<'a>(txn: $crate::eng::Txn, dbi: u32, key: &[u8]) -> anyhow::Result<Option<&'a [u8]>> {
                let mut d = empty_val();
                // SAFETY: live txn.
                unsafe {
                    match get_raw(txn as *mut _, dbi, key, &mut d) {
                        0 => Ok(Some(slice(&d))),
                        ffi::MDB_NOTFOUND => Ok(None),
                        rc => Err(eng_err("mdb_get", rc)),
                    }
                }
            }

            fn entries(txn: $crate::eng::Txn, dbi: u32) -> anyhow::Result<u64> {
                Self::stat(txn, dbi).map(|s| s.entries)
            }

            fn cursor_open(txn: $crate::eng::Txn, dbi: u32) -> anyhow::Result<$crate::eng::Cur> {
                let mut c: *mut ffi::MDB_cursor = ptr::null_mut();
                // SAFETY: live txn.
                eng_check("mdb_cursor_open", unsafe { ffi::mdb_cursor_open(txn as *mut _, dbi as _, &mut c) as i32 })?;
                Ok(c as $crate::eng::Cur)
            }

            fn cursor_close(cur: $crate::eng::Cur) {
                // SAFETY: cursor of a live txn.
                unsafe { ffi::mdb_cursor_close(cur as *mut _) }
            }

            #[inline(always)]
            fn cursor_get<'a>(cur: $crate::eng::Cur, key: &[u8], v: &[u8], op: u32) -> anyhow::Result<Option<(&'a [u8], &'a [u8])>> {
                let (mut k, mut d) = (val(key), val(v));
                // SAFETY: live cursor.
                unsafe {
                    match cursor_get_raw(cur as *mut _, &mut k, &mut d, op) {
                        0 => Ok(Some((slice(&k), slice(&d)))),
                        ffi::MDB_NOTFOUND => Ok(None),
                        rc => Err(eng_err("mdb_cursor_get", rc)),
                    }
                }
            }

            #[inline(always)]
            fn cursor_count(cur: $crate::eng::Cur) -> anyhow::Result<u64> {
                let mut n = 0 as _;
                // SAFETY: live, positioned cursor.
                eng_check("mdb_cursor_count", unsafe { ffi::mdb_cursor_count(cur as *mut _, &mut n) as i32 })?;
                Ok(n as u64)
            }

            #[inline(always)]
            fn cursor_put(cur: $crate::eng::Cur, key: &[u8], v: &[u8], flags: u32) -> anyhow::Result<()> {
                // SAFETY: live cursor of a write txn; inputs point at caller memory.
                eng_check("mdb_cursor_put", unsafe { cursor_put_raw(cur as *mut _, key, v, flags) })
            }

            #[inline(always)]
            fn del(txn: $crate::eng::Txn, dbi: u32, key: &[u8], v: Option<&[u8]>) -> anyhow::Result<bool> {
                // SAFETY: live write txn; inputs point at caller memory.
                match unsafe { del_raw(txn as *mut _, dbi, key, v) } {
                    0 => Ok(true),
                    ffi::MDB_NOTFOUND => Ok(false),
                    rc => Err(eng_err("mdb_del", rc)),
                }
            }

            #[inline(always)]
            fn cursor_del(cur: $crate::eng::Cur, flags: u32) -> anyhow::Result<()> {
                // SAFETY: live, positioned cursor of a write txn.
                eng_check("mdb_cursor_del", unsafe { ffi::mdb_cursor_del(cur as *mut _, flags as _) as i32 })
            }

            fn stat(txn: $crate::eng::Txn, dbi: u32) -> anyhow::Result<DbStat> {
                // SAFETY: live txn.
                unsafe { stat_raw(txn as *mut _, dbi) }.map_err(|rc| eng_err("mdb_stat", rc))
            }

            fn last_pgno(env: $crate::eng::Env) -> anyhow::Result<u64> {
                // SAFETY: env is open.
                unsafe { info_raw(env as *mut _) }
                    .map(|i| i.last_pgno)
                    .map_err(|rc| eng_err("mdb_env_info", rc))
            }

            fn env_sync(env: $crate::eng::Env, force: bool) -> anyhow::Result<()> {
                // SAFETY: env is open.
                eng_check("mdb_env_sync", unsafe { ffi::mdb_env_sync(env as *mut _, force as _) as i32 })
            }

            fn env_copy2(env: $crate::eng::Env, dir: &Path, flags: u32) -> anyhow::Result<()> {
                let path = $crate::eng::c_path(dir)?;
                // SAFETY: env is open; path is NUL-terminated.
                eng_check("mdb_env_copy2", unsafe { ffi::mdb_env_copy2(env as *mut _, path.as_ptr() as *const _, flags as _) as i32 })
            }
        }

        // ------------------------------------------------------------ Exec

        /// The [`DupEngine`] executor over this engine.
        pub struct Exec {
            env: *mut ffi::MDB_env,
            path: PathBuf,
            opts: Opts,
            txn: *mut ffi::MDB_txn,
            curs: Vec<*mut ffi::MDB_cursor>,
            snaps: Vec<*mut ffi::MDB_txn>,
        }

        impl Exec {
            fn cur(&self, slot: usize) -> *mut ffi::MDB_cursor {
                let c = self.curs.get(slot).copied().unwrap_or(ptr::null_mut());
                assert!(!c.is_null(), "cursor slot {slot} not open");
                c
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
            /// Cursors, then the write txn, then the snapshots.
            fn close_all(&mut self) {
                self.close_cursors();
                self.abort();
                for s in 0..self.snaps.len() {
                    self.snap_end(s);
                }
            }
            fn open_env(&mut self) -> Result<(), i32> {
                let cpath = c_path(&self.path);
                // SAFETY: the handle is ours (closed by Drop or reopen).
                self.env = unsafe { env_open_raw(Some(&cpath), &self.opts) }.map_err(|(_, rc)| rc)?;
                Ok(())
            }
            /// Copy what a put left in `d` when `MDB_NOOVERWRITE` met a key.
            ///
            /// # Safety
            /// `d` came from the put just made in a live txn.
            unsafe fn put_out(rc: i32, flags: u32, d: &ffi::MDB_val) -> Out {
                let data = (rc == ffi::MDB_KEYEXIST && flags & $crate::dup::wf::NOOVERWRITE != 0)
                    .then(|| owned(d));
                Out { rc, data, ..Out::default() }
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
            const NAME: &'static str = $name;

            fn open(path: &Path, env_flags: u32, maxdbs: u32, mapsize: usize) -> Result<Self, i32> {
                let mut e = Exec {
                    env: ptr::null_mut(),
                    path: path.to_path_buf(),
                    opts: Opts { flags: env_flags, maxdbs, mapsize, maxreaders: 0 },
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
                // SAFETY: live env.
                let i = unsafe { info_raw(self.env) }.unwrap_or_default();
                (i.last_pgno, i.last_txnid)
            }
            fn begin_rw(&mut self) -> i32 {
                assert!(self.txn.is_null(), "a txn is already open");
                // SAFETY: env open.
                match unsafe { txn_begin_raw(self.env, ptr::null_mut(), 0) } {
                    Ok(t) => { self.txn = t; 0 }
                    Err(rc) => rc,
                }
            }
            fn begin_ro(&mut self) -> i32 {
                assert!(self.txn.is_null(), "a txn is already open");
                // SAFETY: env open.
                match unsafe { txn_begin_raw(self.env, ptr::null_mut(), ffi::MDB_RDONLY) } {
                    Ok(t) => { self.txn = t; 0 }
                    Err(rc) => rc,
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
                // SAFETY: live txn.
                unsafe { dbi_open_raw(self.txn, name, flags) }
            }
            fn db_flags(&mut self, dbi: u32) -> Result<u32, i32> {
                let mut f = 0;
                // SAFETY: live txn.
                check(unsafe { ffi::mdb_dbi_flags(self.txn, dbi, &mut f) })?;
                Ok(f as u32)
            }
            fn put(&mut self, dbi: u32, key: &[u8], data: &[u8], flags: u32) -> Out {
                let (mut k, mut d) = (val(key), val(data));
                // SAFETY: live write txn; returned data (KEYEXIST) copied at once.
                unsafe {
                    let rc = ffi::mdb_put(self.txn, dbi, &mut k, &mut d, flags as _);
                    Self::put_out(rc, flags, &d)
                }
            }
            fn del(&mut self, dbi: u32, key: &[u8], data: Option<&[u8]>) -> i32 {
                // SAFETY: live write txn.
                unsafe { del_raw(self.txn, dbi, key, data) }
            }
            fn get(&mut self, dbi: u32, key: &[u8]) -> Out {
                let mut d = empty_val();
                // SAFETY: live txn; copied at once.
                unsafe {
                    let rc = get_raw(self.txn, dbi, key, &mut d);
                    Out { rc, data: (rc == 0).then(|| owned(&d)), ..Out::default() }
                }
            }
            fn drop_db(&mut self, dbi: u32, del: bool) -> i32 {
                self.close_cursors();
                // SAFETY: live write txn, no cursor left.
                unsafe { ffi::mdb_drop(self.txn, dbi, del as _) }
            }
            fn stat(&mut self, dbi: u32) -> Result<DbStat, i32> {
                // SAFETY: live txn.
                unsafe { stat_raw(self.txn, dbi) }
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
            fn cget(&mut self, slot: usize, op: u32, key: Option<&[u8]>, data: Option<&[u8]>) -> Out {
                let c = self.cur(slot);
                let mut k = key.map_or_else(empty_val, val);
                let mut d = data.map_or_else(empty_val, val);
                // SAFETY: live cursor; results copied at once.
                unsafe {
                    match cursor_get_raw(c, &mut k, &mut d, op) {
                        0 => Out { rc: 0, key: Some(owned(&k)), data: Some(owned(&d)), ..Out::default() },
                        rc => Out::rc(rc),
                    }
                }
            }
            fn cput(&mut self, slot: usize, key: &[u8], data: &[u8], flags: u32) -> Out {
                let c = self.cur(slot);
                let (mut k, mut d) = (val(key), val(data));
                // SAFETY: live cursor in a write txn; returned data copied at once.
                unsafe {
                    let rc = ffi::mdb_cursor_put(c, &mut k, &mut d, flags as _);
                    Self::put_out(rc, flags, &d)
                }
            }
            fn cput_multiple(&mut self, slot: usize, key: &[u8], items: &[u8], size: usize, flags: u32) -> Out {
                let c = self.cur(slot);
                let mut k = val(key);
                let mut d = [
                    ffi::MDB_val { mv_size: size, mv_data: items.as_ptr() as *mut _ },
                    ffi::MDB_val {
                        mv_size: if size == 0 { 0 } else { items.len() / size },
                        mv_data: ptr::null_mut(),
                    },
                ];
                // SAFETY: the two-element array is what MDB_MULTIPLE expects.
                unsafe {
                    let rc = ffi::mdb_cursor_put(c, &mut k, d.as_mut_ptr(), (flags | $crate::dup::wf::MULTIPLE) as _);
                    Out { rc, n: Some(d[1].mv_size as u64), ..Out::default() }
                }
            }
            fn cdel(&mut self, slot: usize, flags: u32) -> i32 {
                let c = self.cur(slot);
                // SAFETY: live cursor.
                unsafe { ffi::mdb_cursor_del(c, flags as _) }
            }
            fn ccount(&mut self, slot: usize) -> Out {
                let c = self.cur(slot);
                let mut n = 0;
                // SAFETY: live cursor.
                let rc = unsafe { ffi::mdb_cursor_count(c, &mut n) };
                Out { rc, n: (rc == 0).then_some(n as u64), ..Out::default() }
            }
            fn clist(&mut self, slot: usize) -> Out {
                let c = self.cur(slot);
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
                match unsafe { txn_begin_raw(self.env, ptr::null_mut(), ffi::MDB_RDONLY) } {
                    Ok(t) => { self.snaps[slot] = t; 0 }
                    Err(rc) => rc,
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
            fn snap_walk(&mut self, slot: usize, dbi: u32) -> Result<Pairs, i32> {
                let t = self.snaps.get(slot).copied().unwrap_or(ptr::null_mut());
                assert!(!t.is_null(), "snapshot slot {slot} not open");
                // SAFETY: live read txn.
                unsafe { walk_raw(t, dbi, true) }
            }
            fn walk(&mut self, dbi: u32, forward: bool) -> Result<Pairs, i32> {
                // SAFETY: live txn.
                unsafe { walk_raw(self.txn, dbi, forward) }
            }
            fn raw_env(&self) -> usize {
                self.env as usize
            }
        }
    };
}
