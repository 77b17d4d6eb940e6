//! A minimal safe wrapper over an LMDB-style raw FFI crate, instantiated twice:
//! for stock LMDB (`lmdb-master-sys`, the mdb.master branch, the living oracle)
//! and for our engine's raw bindings (`dlmdb-sys`). Both crates expose the same
//! function names and struct layouts, so one macro body serves both; using the
//! very same wrapper code on both sides keeps the comparison fair.
//!
//! Only what the tests need is wrapped. Errors are the raw LMDB return codes
//! (`i32`), because the tests compare codes and nothing here should hide one.
//! Lifetimes tie transactions to their environment so a test cannot close an
//! environment under a live transaction by accident.

#[macro_export]
#[doc(hidden)]
macro_rules! lmdb_wrapper {
    ($ffi:ident) => {
        use std::ffi::{CStr, CString};
        use std::marker::PhantomData;
        use std::os::unix::ffi::OsStrExt;
        use std::path::Path;
        use std::ptr;

        use ::$ffi as ffi;

        /// Result with a raw LMDB return code as the error.
        pub type Res<T> = Result<T, i32>;

        $crate::raw_val_helpers!();

        /// Stock LMDB's message for a return code (for assertion messages).
        pub fn strerror(rc: i32) -> String {
            // SAFETY: mdb_strerror always returns a valid static C string.
            unsafe {
                CStr::from_ptr(ffi::mdb_strerror(rc))
                    .to_string_lossy()
                    .into_owned()
            }
        }

        /// Database statistics (the fields of `MDB_stat`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct Stat {
            pub psize: u32,
            pub depth: u32,
            pub branch_pages: u64,
            pub leaf_pages: u64,
            pub overflow_pages: u64,
            pub entries: u64,
        }

        /// An open stock-LMDB environment.
        pub struct Env {
            env: *mut ffi::MDB_env,
        }

        impl Env {
            /// Open (or create) an environment. `flags` are LMDB env flags
            /// (typically `MDB_NOSUBDIR`); `mapsize` 0 keeps the file's stored size.
            pub fn open(path: &Path, flags: u32, maxdbs: u32, mapsize: usize) -> Res<Env> {
                let cpath = CString::new(path.as_os_str().as_bytes()).expect("path without NUL");
                let mut env = ptr::null_mut();
                // SAFETY: plain FFI calls on a handle we own; on failure it is closed.
                unsafe {
                    check(ffi::mdb_env_create(&mut env))?;
                    let this = Env { env };
                    check(ffi::mdb_env_set_maxdbs(env, maxdbs))?;
                    if mapsize != 0 {
                        check(ffi::mdb_env_set_mapsize(env, mapsize))?;
                    }
                    check(ffi::mdb_env_open(env, cpath.as_ptr(), flags, 0o644))?;
                    Ok(this)
                }
            }

            pub fn begin_ro(&self) -> Res<Txn<'_>> {
                self.begin(ffi::MDB_RDONLY)
            }

            pub fn begin_rw(&self) -> Res<Txn<'_>> {
                self.begin(0)
            }

            fn begin(&self, flags: u32) -> Res<Txn<'_>> {
                let mut txn = ptr::null_mut();
                // SAFETY: env is open; txn is written only on success.
                check(unsafe { ffi::mdb_txn_begin(self.env, ptr::null_mut(), flags, &mut txn) })?;
                Ok(Txn {
                    txn,
                    _env: PhantomData,
                })
            }

            /// (last page number, last txn id, map size) of the newest snapshot.
            pub fn info(&self) -> Res<(u64, u64, u64)> {
                // SAFETY: MDB_envinfo is plain data; LMDB fills it.
                unsafe {
                    let mut info: ffi::MDB_envinfo = std::mem::zeroed();
                    check(ffi::mdb_env_info(self.env, &mut info))?;
                    Ok((
                        info.me_last_pgno as u64,
                        info.me_last_txnid as u64,
                        info.me_mapsize as u64,
                    ))
                }
            }
        }

        impl Drop for Env {
            fn drop(&mut self) {
                // SAFETY: transactions borrow the env, so none is alive here.
                unsafe { ffi::mdb_env_close(self.env) }
            }
        }

        /// A stock-LMDB transaction; dropped without commit means abort.
        pub struct Txn<'e> {
            txn: *mut ffi::MDB_txn,
            _env: PhantomData<&'e Env>,
        }

        impl<'e> Txn<'e> {
            /// Open a database: `None` is the main database.
            pub fn open_db(&self, name: Option<&[u8]>, flags: u32) -> Res<u32> {
                let cname = name.map(|n| CString::new(n).expect("db name without NUL"));
                let p = cname.as_ref().map_or(ptr::null(), |c| c.as_ptr());
                let mut dbi = 0;
                // SAFETY: live txn, valid C string or NULL.
                check(unsafe { ffi::mdb_dbi_open(self.txn, p, flags, &mut dbi) })?;
                Ok(dbi)
            }

            pub fn db_flags(&self, dbi: u32) -> Res<u32> {
                let mut f = 0;
                // SAFETY: live txn.
                check(unsafe { ffi::mdb_dbi_flags(self.txn, dbi, &mut f) })?;
                Ok(f)
            }

            pub fn get(&self, dbi: u32, key: &[u8]) -> Res<Option<Vec<u8>>> {
                let mut k = val(key);
                let mut d = empty_val();
                // SAFETY: live txn; the result is copied before the next call.
                let rc = unsafe { ffi::mdb_get(self.txn, dbi, &mut k, &mut d) };
                match rc {
                    0 => Ok(Some(unsafe { owned(&d) })),
                    ffi::MDB_NOTFOUND => Ok(None),
                    e => Err(e),
                }
            }

            pub fn put(&self, dbi: u32, key: &[u8], data: &[u8], flags: u32) -> Res<()> {
                let mut k = val(key);
                let mut d = val(data);
                // SAFETY: live write txn; LMDB copies the bytes.
                check(unsafe { ffi::mdb_put(self.txn, dbi, &mut k, &mut d, flags) })
            }

            /// Delete a key; `Ok(false)` when it was not there.
            pub fn del(&self, dbi: u32, key: &[u8]) -> Res<bool> {
                let mut k = val(key);
                // SAFETY: live write txn.
                match unsafe { ffi::mdb_del(self.txn, dbi, &mut k, ptr::null_mut()) } {
                    0 => Ok(true),
                    ffi::MDB_NOTFOUND => Ok(false),
                    e => Err(e),
                }
            }

            pub fn stat(&self, dbi: u32) -> Res<Stat> {
                // SAFETY: plain data filled by LMDB.
                unsafe {
                    let mut s: ffi::MDB_stat = std::mem::zeroed();
                    check(ffi::mdb_stat(self.txn, dbi, &mut s))?;
                    Ok(Stat {
                        psize: s.ms_psize,
                        depth: s.ms_depth,
                        branch_pages: s.ms_branch_pages as u64,
                        leaf_pages: s.ms_leaf_pages as u64,
                        overflow_pages: s.ms_overflow_pages as u64,
                        entries: s.ms_entries as u64,
                    })
                }
            }

            /// Every pair of the database in cursor order (`forward`) or reversed.
            pub fn walk(&self, dbi: u32, forward: bool) -> Res<$crate::Pairs> {
                let (first, step) = if forward {
                    (ffi::MDB_FIRST, ffi::MDB_NEXT)
                } else {
                    (ffi::MDB_LAST, ffi::MDB_PREV)
                };
                let mut cur = ptr::null_mut();
                // SAFETY: the cursor lives only inside this function and is closed
                // before returning; values are copied immediately.
                unsafe {
                    check(ffi::mdb_cursor_open(self.txn, dbi, &mut cur))?;
                    let mut out = Vec::new();
                    let mut op = first;
                    let rc = loop {
                        let mut k = empty_val();
                        let mut d = empty_val();
                        let rc = ffi::mdb_cursor_get(cur, &mut k, &mut d, op);
                        if rc != 0 {
                            break rc;
                        }
                        out.push((owned(&k), owned(&d)));
                        op = step;
                    };
                    ffi::mdb_cursor_close(cur);
                    if rc == ffi::MDB_NOTFOUND {
                        Ok(out)
                    } else {
                        Err(rc)
                    }
                }
            }

            /// The raw transaction pointer (for calls this wrapper does not cover).
            pub fn raw(&self) -> *mut ffi::MDB_txn {
                self.txn
            }

            /// Names of the named databases: main-DB keys (without NUL bytes) that
            /// open as databases, in main-DB order; plain records are skipped.
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
                let txn = std::mem::replace(&mut self.txn, ptr::null_mut());
                // SAFETY: commit frees the handle whatever the outcome.
                check(unsafe { ffi::mdb_txn_commit(txn) })
            }
        }

        impl $crate::workload::KvWrite for Txn<'_> {
            fn open_db(&mut self, name: Option<&[u8]>, flags: u32) -> Res<u32> {
                Txn::open_db(self, name, flags)
            }
            fn put(&mut self, dbi: u32, key: &[u8], val: &[u8]) -> Res<()> {
                Txn::put(self, dbi, key, val, 0)
            }
            fn del(&mut self, dbi: u32, key: &[u8]) -> Res<bool> {
                Txn::del(self, dbi, key)
            }
        }

        impl $crate::workload::KvRead for Txn<'_> {
            fn open_db(&self, name: Option<&[u8]>) -> Res<u32> {
                Txn::open_db(self, name, 0)
            }
            fn db_flags(&self, dbi: u32) -> Res<u32> {
                Txn::db_flags(self, dbi)
            }
            fn get(&self, dbi: u32, key: &[u8]) -> Res<Option<Vec<u8>>> {
                Txn::get(self, dbi, key)
            }
            fn walk(&self, dbi: u32, forward: bool) -> Res<$crate::Pairs> {
                Txn::walk(self, dbi, forward)
            }
            fn entries(&self, dbi: u32) -> Res<u64> {
                Ok(Txn::stat(self, dbi)?.entries)
            }
        }

        impl Drop for Txn<'_> {
            fn drop(&mut self) {
                if !self.txn.is_null() {
                    // SAFETY: the handle is still live (not committed).
                    unsafe { ffi::mdb_txn_abort(self.txn) }
                }
            }
        }
    };
}
