//! Transactions. Values read through a transaction borrow it, so they cannot
//! outlive it; writes take `&mut self`, so no value read from a write
//! transaction can be held across an update (LMDB may move or reuse that
//! memory).

use crate::cursor::{Cursor, Item, Keep, RwCursor};
use crate::env::Env;
use crate::error::{check, check_found, Error, Result};
use crate::flags::{CountFlags, Database, DatabaseFlags, Stat, WriteFlags};
use crate::walk::{walk_pages, PageInfo};
use dlmdb_sys as ffi;
use std::ffi::CString;
use std::marker::PhantomData;
use std::os::raw::c_int;

/// `MDB_val` pointing at a Rust slice (the engine never writes through it).
#[inline]
pub(crate) fn val(bytes: &[u8]) -> ffi::MDB_val {
    ffi::MDB_val {
        mv_size: bytes.len(),
        mv_data: bytes.as_ptr() as *mut _,
    }
}

/// Slice view of an `MDB_val` returned by the engine.
///
/// # Safety
/// `v` must point at `mv_size` readable bytes valid for `'a`.
#[inline]
pub(crate) unsafe fn slice<'a>(v: &ffi::MDB_val) -> &'a [u8] {
    if v.mv_size == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(v.mv_data as *const u8, v.mv_size)
    }
}

/// Put `key` with `MDB_RESERVE` through `put` (an engine put, given the
/// key, a request for `len` bytes and the flags) and return the space the
/// engine reserved, for the caller to fill.
///
/// # Safety
/// `put` must store through a live transaction or cursor; the caller ties
/// `'a` to a borrow that ends before that transaction's next update.
pub(crate) unsafe fn reserve_with<'a>(
    key: &[u8],
    len: usize,
    flags: WriteFlags,
    put: impl FnOnce(*mut ffi::MDB_val, *mut ffi::MDB_val, std::os::raw::c_uint) -> c_int,
) -> Result<&'a mut [u8]> {
    let mut k = val(key);
    let mut d = ffi::MDB_val {
        mv_size: len,
        mv_data: std::ptr::null_mut(),
    };
    check(put(&mut k, &mut d, (flags | WriteFlags::RESERVE).bits()))?;
    Ok(if len == 0 {
        &mut []
    } else {
        std::slice::from_raw_parts_mut(d.mv_data as *mut u8, len)
    })
}

/// The bounded counting calls: one method each, with the same arguments,
/// over `RoTxn::bounded_count`.
macro_rules! bounded_counts {
    ($( $(#[$doc:meta])* $name:ident => $call:path; )*) => {
        $(
            $(#[$doc])*
            pub fn $name(
                &self,
                db: Database,
                low: Option<&[u8]>,
                high: Option<&[u8]>,
                flags: CountFlags,
            ) -> Result<u64> {
                self.bounded_count($call, db, low, high, flags)
            }
        )*
    };
}

/// One free-list record of the free-page database: the transaction that
/// freed the pages and their numbers as stored (descending).
pub use dlmdb_format::FreeRecord;

/// A read-only transaction: a stable snapshot of the environment.
///
/// Dropping it aborts (for a reader this only releases the snapshot).
/// [`RwTxn`] dereferences to `RoTxn`, so every read method works on both.
pub struct RoTxn<'env> {
    pub(crate) raw: *mut ffi::MDB_txn,
    pub(crate) env: &'env Env,
    /// A read-only transaction (not the inside of an [`RwTxn`]).
    pub(crate) read_only: bool,
    /// LMDB ties transactions to their thread: not `Send`, not `Sync`.
    _not_send: PhantomData<*mut ()>,
}

impl std::fmt::Debug for RoTxn<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoTxn").field("id", &self.id()).finish()
    }
}

impl Drop for RoTxn<'_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: live handle; all cursors borrowing it are gone.
            unsafe { ffi::mdb_txn_abort(self.raw) }
        }
    }
}

impl<'env> RoTxn<'env> {
    pub(crate) fn begin(env: &'env Env) -> Result<Self> {
        let mut raw = std::ptr::null_mut();
        check(unsafe {
            ffi::mdb_txn_begin(env.raw(), std::ptr::null_mut(), ffi::MDB_RDONLY, &mut raw)
        })?;
        Ok(RoTxn::from_raw(env, raw, true))
    }

    fn from_raw(env: &'env Env, raw: *mut ffi::MDB_txn, read_only: bool) -> Self {
        RoTxn {
            raw,
            env,
            read_only,
            _not_send: PhantomData,
        }
    }

    /// The raw handle, for use with `dlmdb-sys`.
    pub fn raw(&self) -> *mut ffi::MDB_txn {
        self.raw
    }

    /// The environment this transaction belongs to.
    pub fn env(&self) -> &'env Env {
        self.env
    }

    /// Transaction id: the snapshot's id for readers, last committed + 1 for writers.
    pub fn id(&self) -> u64 {
        unsafe { ffi::mdb_txn_id(self.raw) as u64 }
    }

    /// Commit. For a reader this keeps database handles it opened valid
    /// environment-wide; otherwise it is the same as dropping it.
    pub fn commit(mut self) -> Result<()> {
        let raw = std::mem::replace(&mut self.raw, std::ptr::null_mut());
        check(unsafe { ffi::mdb_txn_commit(raw) })
    }

    /// Abort (same as dropping).
    pub fn abort(self) {}

    /// End the snapshot but keep the handle and its reader slot for
    /// [`ResetTxn::renew`]. Nothing read through the transaction can be
    /// held across it:
    ///
    /// ```compile_fail
    /// # fn f(env: &dlmdb::Env, db: dlmdb::Database) -> dlmdb::Result<()> {
    /// let txn = env.read_txn()?;
    /// let item = txn.cursor(db)?.first()?;
    /// let txn = txn.reset().renew()?; // error: `txn` is still borrowed by `item`
    /// drop((item, txn));
    /// # Ok(()) }
    /// ```
    pub fn reset(mut self) -> ResetTxn<'env> {
        let raw = std::mem::replace(&mut self.raw, std::ptr::null_mut());
        unsafe { ffi::mdb_txn_reset(raw) };
        ResetTxn {
            raw,
            env: self.env,
            _not_send: PhantomData,
        }
    }

    fn open_db_flags(&self, name: Option<&str>, flags: u32) -> Result<Database> {
        let cname = match name {
            Some(n) => Some(CString::new(n).map_err(|_| Error::einval())?),
            None => None,
        };
        let mut dbi = 0;
        {
            let _guard = self.env.dbi_lock.lock().unwrap_or_else(|e| e.into_inner());
            check(unsafe {
                ffi::mdb_dbi_open(
                    self.raw,
                    cname.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
                    flags,
                    &mut dbi,
                )
            })?;
        }
        // The open-time catalog check of `Env::open_detect` stops after a
        // bounded number of main-database entries, so a record it may not
        // have seen is checked here, before anything reads the tree.
        if let (Some(name), Some(reason)) = (name, &self.env.record_check) {
            if let Some(problem) = crate::open::named_record_problem(self, name)? {
                return Err(Error::BadRecord {
                    name: name.to_string(),
                    problem,
                    layout: self.env.layout(),
                    reason: reason.clone(),
                });
            }
        }
        Ok(Database { dbi })
    }

    /// Open an existing database (`None` = main database). Fails with
    /// [`Error::NotFound`] if a named database does not exist.
    pub fn open_db(&self, name: Option<&str>) -> Result<Database> {
        self.open_db_flags(name, 0)
    }

    /// Look up `key`; `Ok(None)` when absent. For DUPSORT, the first value.
    ///
    /// Zero-copy in every kind of database: `mdb_get` returns a pointer into
    /// the page (even in a DUPSORT prefix-compressed database the first
    /// duplicate is stored whole, as node 0 of its page), valid while the
    /// transaction is borrowed.
    pub fn get(&self, db: Database, key: &[u8]) -> Result<Option<&[u8]>> {
        let mut k = val(key);
        let mut d = ffi::MDB_val::default();
        if check_found(unsafe { ffi::mdb_get(self.raw, db.dbi, &mut k, &mut d) })? {
            Ok(Some(unsafe { slice(&d) }))
        } else {
            Ok(None)
        }
    }

    /// Open a read cursor on `db`.
    pub fn cursor(&self, db: Database) -> Result<Cursor<'_>> {
        Cursor::open(self, db)
    }

    /// Statistics of `db` as seen by this transaction.
    pub fn stat(&self, db: Database) -> Result<Stat> {
        let mut s = ffi::MDB_stat::default();
        check(unsafe { ffi::mdb_stat(self.raw, db.dbi, &mut s) })?;
        Ok(s.into())
    }

    /// Stored flags of `db`.
    pub fn db_flags(&self, db: Database) -> Result<DatabaseFlags> {
        let mut f = 0;
        check(unsafe { ffi::mdb_dbi_flags(self.raw, db.dbi, &mut f) })?;
        Ok(DatabaseFlags::from_bits_retain(f))
    }

    /// Compare two keys the way `db` orders them.
    pub fn cmp_keys(&self, db: Database, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        let (va, vb) = (val(a), val(b));
        unsafe { ffi::mdb_cmp(self.raw, db.dbi, &va, &vb) }.cmp(&0)
    }

    /// Visit every page of `db` (parents before children; overflow runs when
    /// their leaf is visited). For the main database only the main tree.
    pub fn page_walk<F: FnMut(&PageInfo)>(&self, db: Database, f: F) -> Result<()> {
        walk_pages(self.raw, db, f)
    }

    /// All pages of `db`, in walk order.
    pub fn pages(&self, db: Database) -> Result<Vec<PageInfo>> {
        let mut v = Vec::new();
        self.page_walk(db, |p| v.push(*p))?;
        Ok(v)
    }

    /// Names of the named databases: main-database keys whose records open
    /// as databases (keys containing NUL bytes are skipped, like `mdb_stat -a`).
    /// Needs the environment to allow named databases (`max_dbs` > 0).
    pub fn db_names(&self) -> Result<Vec<String>> {
        let mut keys = Vec::new();
        {
            let main = self.open_db(None)?;
            let mut c = self.cursor(main)?;
            for item in c.iter() {
                let (k, _) = item?;
                if !k.contains(&0) {
                    keys.push(k.to_vec());
                }
            }
        }
        let mut names = Vec::new();
        for k in keys {
            let Ok(name) = String::from_utf8(k) else {
                continue;
            };
            match self.open_db(Some(&name)) {
                Ok(_) => names.push(name),
                Err(Error::Incompatible) | Err(Error::NotFound) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(names)
    }

    /// Records of the free-page database (read-only transactions only).
    pub fn freelist(&self) -> Result<Vec<FreeRecord>> {
        let mut out = Vec::new();
        let mut c = self.cursor(Database::FREE)?;
        for item in c.iter() {
            let (k, d) = item?;
            // The record may be longer than its count needs: the committing
            // txn reserves room before it knows the final list (LMDB does
            // the same), and readers go by the leading count. It is always
            // whole page numbers.
            if d.len() % 8 != 0 {
                return Err(Error::Corrupted);
            }
            out.push(FreeRecord::parse(&k, &d).map_err(|_| Error::Corrupted)?);
        }
        Ok(out)
    }

    // ---- DLMDB order statistics (COUNTED databases) ----

    /// Shared body of the three bounded counting calls, which take the same
    /// arguments: optional low/high bounds (null = unbounded) and flags.
    fn bounded_count(
        &self,
        call: unsafe extern "C" fn(
            *mut ffi::MDB_txn,
            ffi::MDB_dbi,
            *const ffi::MDB_val,
            *const ffi::MDB_val,
            std::os::raw::c_uint,
            *mut u64,
        ) -> c_int,
        db: Database,
        low: Option<&[u8]>,
        high: Option<&[u8]>,
        flags: CountFlags,
    ) -> Result<u64> {
        let (l, h) = (low.map(val), high.map(val));
        let mut n = 0;
        check(unsafe {
            call(
                self.raw,
                db.dbi,
                l.as_ref().map_or(std::ptr::null(), |v| v as *const _),
                h.as_ref().map_or(std::ptr::null(), |v| v as *const _),
                flags.bits(),
                &mut n,
            )
        })?;
        Ok(n)
    }

    /// Number of items (`flags` empty) in `db` (`mdb_count_all`).
    pub fn count_all(&self, db: Database, flags: CountFlags) -> Result<u64> {
        let mut n = 0;
        check(unsafe { ffi::mdb_count_all(self.raw, db.dbi, flags.bits(), &mut n) })?;
        Ok(n)
    }

    bounded_counts! {
        /// Items with keys between `low` and `high` (`None` = unbounded) (`mdb_count_range`).
        count_range => ffi::mdb_count_range;
        /// Distinct keys between `low` and `high` (`mdb_range_count_keys`).
        range_count_keys => ffi::mdb_range_count_keys;
        /// Values (all duplicates) of the keys between `low` and `high`
        /// (`mdb_range_count_values`, DUPSORT only).
        range_count_values => ffi::mdb_range_count_values;
    }

    /// The pair at position `rank` (0-based); `Ok(None)` past the end.
    ///
    /// In a prefix-compressed database the engine returns a decoded key in
    /// a per-transaction buffer that the next `get_rank` overwrites; such
    /// parts are copied (see [`Item`]).
    pub fn get_rank(&self, db: Database, rank: u64) -> Result<Option<Item<'_>>> {
        let keep = Keep::for_db(self, db);
        let (mut k, mut d) = (ffi::MDB_val::default(), ffi::MDB_val::default());
        if check_found(unsafe { ffi::mdb_get_rank(self.raw, db.dbi, rank, &mut k, &mut d) })? {
            // SAFETY: page pointers live while the txn is borrowed; the
            // txn's rank buffer (not in the map) is copied by `keep`.
            Ok(Some(unsafe { keep.item(&k, &d) }))
        } else {
            Ok(None)
        }
    }

    /// Rank of `key` (and of the exact pair when `data` is given); `Ok(None)` if absent.
    pub fn get_key_rank(
        &self,
        db: Database,
        key: &[u8],
        data: Option<&[u8]>,
    ) -> Result<Option<u64>> {
        let k = val(key);
        let d = data.map(val);
        let mut r = 0;
        let found = check_found(unsafe {
            ffi::mdb_get_key_rank(
                self.raw,
                db.dbi,
                &k,
                d.as_ref().map_or(std::ptr::null(), |v| v as *const _),
                &mut r,
            )
        })?;
        Ok(found.then_some(r))
    }
}

/// A reset read transaction: no snapshot, but keeps its handle for [`renew`](Self::renew).
pub struct ResetTxn<'env> {
    raw: *mut ffi::MDB_txn,
    env: &'env Env,
    _not_send: PhantomData<*mut ()>,
}

impl<'env> ResetTxn<'env> {
    /// Start a new snapshot on the same handle.
    pub fn renew(mut self) -> Result<RoTxn<'env>> {
        let raw = std::mem::replace(&mut self.raw, std::ptr::null_mut());
        let rc = unsafe { ffi::mdb_txn_renew(raw) };
        if rc != 0 {
            unsafe { ffi::mdb_txn_abort(raw) };
            return Err(Error::from_code(rc));
        }
        Ok(RoTxn::from_raw(self.env, raw, true))
    }
}

impl Drop for ResetTxn<'_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            unsafe { ffi::mdb_txn_abort(self.raw) }
        }
    }
}

/// A read-write transaction. Only one exists per environment at a time
/// (beginning another waits). Dropping it aborts; [`commit`](Self::commit)
/// makes the changes durable.
///
/// Dereferences to [`RoTxn`] for all read methods.
pub struct RwTxn<'env> {
    inner: RoTxn<'env>,
}

impl std::fmt::Debug for RwTxn<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RwTxn").field("id", &self.id()).finish()
    }
}

impl<'env> std::ops::Deref for RwTxn<'env> {
    type Target = RoTxn<'env>;
    fn deref(&self) -> &RoTxn<'env> {
        &self.inner
    }
}

impl<'env> RwTxn<'env> {
    pub(crate) fn begin(env: &'env Env) -> Result<Self> {
        let mut raw = std::ptr::null_mut();
        check(unsafe { ffi::mdb_txn_begin(env.raw(), std::ptr::null_mut(), 0, &mut raw) })?;
        Ok(RwTxn {
            inner: RoTxn::from_raw(env, raw, false),
        })
    }

    /// Begin a nested transaction; the parent is unusable until it ends.
    pub fn nested(&mut self) -> Result<RwTxn<'_>> {
        let mut raw = std::ptr::null_mut();
        check(unsafe { ffi::mdb_txn_begin(self.inner.env.raw(), self.inner.raw, 0, &mut raw) })?;
        Ok(RwTxn {
            inner: RoTxn::from_raw(self.inner.env, raw, false),
        })
    }

    /// Commit the changes. On error the transaction is aborted.
    pub fn commit(self) -> Result<()> {
        self.inner.commit()
    }

    /// Whether [`commit`](Self::commit) would write now: this transaction
    /// (or a nested one it committed) changed something and nothing failed.
    /// A top-level transaction that changed something commits under its own
    /// [`id`](RoTxn::id); one that did not leaves the store at `id() - 1`,
    /// and the next writer then takes `id()`.
    pub fn changed(&self) -> bool {
        unsafe { ffi::mdb_txn_changed(self.inner.raw) != 0 }
    }

    /// Abort (same as dropping).
    pub fn abort(self) {}

    /// Open a database, creating it with `flags` if missing (`None` = main
    /// database, whose persistent flags are OR'ed in).
    pub fn create_db(&self, name: Option<&str>, flags: DatabaseFlags) -> Result<Database> {
        self.inner
            .open_db_flags(name, (flags | DatabaseFlags::CREATE).bits())
    }

    /// Store `data` under `key`.
    pub fn put(&mut self, db: Database, key: &[u8], data: &[u8], flags: WriteFlags) -> Result<()> {
        let mut k = val(key);
        let mut d = val(data);
        check(unsafe { ffi::mdb_put(self.inner.raw, db.dbi, &mut k, &mut d, flags.bits()) })
    }

    /// Insert `key` only if it is absent. Returns `Ok(None)` when inserted,
    /// `Ok(Some(existing))` when the key was already there (`MDB_NOOVERWRITE`).
    pub fn put_no_overwrite(
        &mut self,
        db: Database,
        key: &[u8],
        data: &[u8],
    ) -> Result<Option<&[u8]>> {
        let mut k = val(key);
        let mut d = val(data);
        let rc =
            unsafe { ffi::mdb_put(self.inner.raw, db.dbi, &mut k, &mut d, ffi::MDB_NOOVERWRITE) };
        match rc {
            0 => Ok(None),
            ffi::MDB_KEYEXIST => Ok(Some(unsafe { slice(&d) })),
            rc => Err(Error::from_code(rc)),
        }
    }

    /// Reserve `len` bytes for `key` and return them to be filled in
    /// (`MDB_RESERVE`). Not for DUPSORT databases.
    pub fn reserve(
        &mut self,
        db: Database,
        key: &[u8],
        len: usize,
        flags: WriteFlags,
    ) -> Result<&mut [u8]> {
        // SAFETY: the space is valid until the next update, which needs
        // the `&mut self` the result borrows.
        unsafe {
            reserve_with(key, len, flags, |k, d, f| {
                ffi::mdb_put(self.inner.raw, db.dbi, k, d, f)
            })
        }
    }

    /// Delete `key` (for DUPSORT with `data`: only that pair). Returns
    /// `false` if nothing matched.
    pub fn del(&mut self, db: Database, key: &[u8], data: Option<&[u8]>) -> Result<bool> {
        let mut k = val(key);
        let mut d = data.map(val);
        check_found(unsafe {
            ffi::mdb_del(
                self.inner.raw,
                db.dbi,
                &mut k,
                d.as_mut().map_or(std::ptr::null_mut(), |v| v as *mut _),
            )
        })
    }

    /// Remove every item of `db`, keeping the database.
    pub fn clear_db(&mut self, db: Database) -> Result<()> {
        check(unsafe { ffi::mdb_drop(self.inner.raw, db.dbi, 0) })
    }

    /// Delete the named database `db` (its handle is closed); for the main
    /// database this only empties it.
    pub fn drop_db(&mut self, db: Database) -> Result<()> {
        check(unsafe { ffi::mdb_drop(self.inner.raw, db.dbi, 1 as c_int) })
    }

    /// Open a write cursor on `db`. It borrows the transaction mutably, so
    /// no other update can happen while it lives.
    pub fn cursor_mut(&mut self, db: Database) -> Result<RwCursor<'_>> {
        RwCursor::open(&self.inner, db)
    }
}
