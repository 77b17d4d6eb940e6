//! Cursors and iterators.
//!
//! [`Cursor`] reads through any transaction and returns items that live as
//! long as the transaction ([`Item`]: zero-copy unless the engine decoded a
//! prefix-compressed key into the cursor's buffer, then a copy).
//! [`RwCursor`] can also write; because a write may move data, what it
//! returns only lives until the cursor is next used mutably.

use crate::error::{check, check_found, Error, Result};
use crate::flags::{CursorOp, Database, DatabaseFlags, WriteFlags};
use crate::txn::{reserve_with, slice, val, RoTxn};
use dlmdb_sys as ffi;
use std::borrow::Cow;
use std::marker::PhantomData;

type Pair = (ffi::MDB_val, ffi::MDB_val);

/// Run one cursor operation. The engine leaves `key` (and for some ops
/// `data`) untouched when it does not return them (e.g. `MDB_SET`); then we
/// ask for the current item so the result always points into the database.
fn raw_get(
    c: *mut ffi::MDB_cursor,
    key: Option<&[u8]>,
    data: Option<&[u8]>,
    op: CursorOp,
) -> Result<Option<Pair>> {
    let mut k = key.map(val).unwrap_or_default();
    let mut d = data.map(val).unwrap_or_default();
    let (k_in, d_in) = (k.mv_data, d.mv_data);
    if !check_found(unsafe { ffi::mdb_cursor_get(c, &mut k, &mut d, op as ffi::MDB_cursor_op) })? {
        return Ok(None);
    }
    let stale_key = k.mv_data.is_null() || (key.is_some() && k.mv_data == k_in);
    let stale_data = data.is_some() && d.mv_data == d_in;
    if (stale_key || stale_data) && !matches!(op, CursorOp::GetCurrent) {
        let (mut k2, mut d2) = (ffi::MDB_val::default(), ffi::MDB_val::default());
        check(unsafe { ffi::mdb_cursor_get(c, &mut k2, &mut d2, ffi::MDB_GET_CURRENT) })?;
        if stale_key {
            k = k2;
        }
        if stale_data
            && !matches!(
                op,
                CursorOp::GetMultiple | CursorOp::NextMultiple | CursorOp::PrevMultiple
            )
        {
            d = d2;
        }
    }
    Ok(Some((k, d)))
}

fn raw_list_dup<'a>(c: *mut ffi::MDB_cursor) -> Result<Option<Vec<&'a [u8]>>> {
    let mut vals: *const ffi::MDB_val = std::ptr::null();
    let mut n: ffi::mdb_size_t = 0;
    if !check_found(unsafe { ffi::mdb_cursor_list_dup(c, &mut vals, &mut n) })? {
        return Ok(None);
    }
    if n == 0 || vals.is_null() {
        return Ok(Some(Vec::new()));
    }
    // SAFETY: the engine returned `n` MDB_vals valid until the cursor moves;
    // the caller's borrow of the cursor bounds 'a.
    let arr = unsafe { std::slice::from_raw_parts(vals, n) };
    Ok(Some(arr.iter().map(|v| unsafe { slice(v) }).collect()))
}

fn raw_count(c: *mut ffi::MDB_cursor) -> Result<u64> {
    let mut n: ffi::mdb_size_t = 0;
    check(unsafe { ffi::mdb_cursor_count(c, &mut n) })?;
    Ok(n as u64)
}

fn open_raw(txn: *mut ffi::MDB_txn, db: Database) -> Result<*mut ffi::MDB_cursor> {
    let mut c = std::ptr::null_mut();
    check(unsafe { ffi::mdb_cursor_open(txn, db.dbi, &mut c) })?;
    Ok(c)
}

/// How to turn what the engine returns into values that may be held for
/// the transaction. In a prefix-compressed database the engine may return
/// a key (and, with DUPSORT, a duplicate value) decoded into a buffer the
/// cursor owns and overwrites on its next operation (dlmdb-extensions
/// §2.5); everything else points into the database's pages, which stay put
/// while the transaction is borrowed. Such pages are in the memory map, or
/// (write transactions without `WRITE_MAP`) in dirty pages the transaction
/// owns; a cursor's buffer is neither, and never in the map. So a pointer
/// is borrowed when it lies inside the map, or when it cannot be a cursor's
/// (database not prefix-compressed); otherwise it is copied.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Keep {
    /// Keys may be cursor-owned: borrow only those inside the map.
    keys: bool,
    /// Values may be cursor-owned: borrow only those inside the map.
    values: bool,
    /// The map's address range (start, end); `None` = unknown: copy.
    map: Option<(usize, usize)>,
}

impl Keep {
    pub(crate) fn for_db(txn: &RoTxn<'_>, db: Database) -> Keep {
        let flags = if db == Database::FREE {
            // Not a user database (`mdb_dbi_flags` refuses it); never compressed.
            DatabaseFlags::empty()
        } else {
            // Unknown flags: assume the worst (copy what is outside the map).
            txn.db_flags(db)
                .unwrap_or(DatabaseFlags::PREFIX_COMPRESSION | DatabaseFlags::DUP_SORT)
        };
        let prefix = flags.contains(DatabaseFlags::PREFIX_COMPRESSION);
        if !prefix && !txn.read_only {
            return Keep {
                keys: false,
                values: false,
                map: None,
            };
        }
        let map = txn.env().map_region().map(|r| (r.start, r.end));
        // A read-only transaction only ever sees pages in the map, so when
        // the map is known its range alone decides, whatever the flags say
        // (it costs two comparisons per pointer).
        let all = txn.read_only && map.is_some();
        Keep {
            keys: prefix || all,
            values: (prefix && flags.contains(DatabaseFlags::DUP_SORT)) || all,
            map,
        }
    }

    #[inline]
    fn in_map(&self, s: &[u8]) -> bool {
        match self.map {
            Some((a, b)) => {
                let p = s.as_ptr() as usize;
                p >= a && p <= b && s.len() <= b - p
            }
            None => false,
        }
    }

    /// # Safety
    /// `v` must be valid until the cursor's next operation, and point into
    /// the database's pages (valid for `'a`) unless `may_own`.
    #[inline]
    unsafe fn cow<'a>(&self, v: &ffi::MDB_val, may_own: bool) -> Cow<'a, [u8]> {
        let s: &'a [u8] = slice(v);
        if !may_own || s.is_empty() || self.in_map(s) {
            Cow::Borrowed(s)
        } else {
            Cow::Owned(s.to_vec())
        }
    }

    /// # Safety
    /// `k`/`d` come from a successful engine call on a cursor or transaction
    /// whose pages stay valid for `'a` (see [`Keep`]).
    #[inline]
    pub(crate) unsafe fn item<'a>(&self, k: &ffi::MDB_val, d: &ffi::MDB_val) -> Item<'a> {
        (self.cow(k, self.keys), self.cow(d, self.values))
    }
}

/// A read cursor. Items it returns live as long as the transaction
/// (`'txn`) and never change, even in prefix-compressed databases (where
/// keys not stored whole on their page are copied, see [`Item`]);
/// [`get_ref`](Self::get_ref) lends zero-copy views valid until the
/// cursor's next use.
///
/// ```
/// # fn main() -> dlmdb::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let env = dlmdb::Env::builder().max_dbs(1).open(dir.path())?;
/// # let db = env.create_db(Some("t"), dlmdb::DatabaseFlags::PREFIX_COMPRESSION)?;
/// # let mut w = env.write_txn()?;
/// # for k in [&b"user/1"[..], b"user/2"] { w.put(db, k, b"v", dlmdb::WriteFlags::empty())?; }
/// # w.commit()?;
/// let txn = env.read_txn()?;
/// let mut c = txn.cursor(db)?;
/// let a = c.first()?.unwrap();
/// let b = c.next()?.unwrap();
/// drop(c);
/// assert_eq!((&*a.0, &*b.0), (&b"user/1"[..], &b"user/2"[..]));
/// # Ok(()) }
/// ```
///
/// Items cannot outlive the transaction:
///
/// ```compile_fail
/// # fn f(env: &dlmdb::Env, db: dlmdb::Database) -> dlmdb::Result<()> {
/// let item = {
///     let txn = env.read_txn()?;
///     let mut c = txn.cursor(db)?;
///     c.first()?
/// }; // error: `txn` does not live long enough
/// drop(item);
/// # Ok(()) }
/// ```
pub struct Cursor<'txn> {
    raw: *mut ffi::MDB_cursor,
    keep: Keep,
    _txn: PhantomData<&'txn ()>,
    _not_send: PhantomData<*mut ()>,
}

impl Drop for Cursor<'_> {
    fn drop(&mut self) {
        // SAFETY: the cursor cannot outlive its transaction (borrow), so
        // closing here is valid for read and write transactions alike.
        unsafe { ffi::mdb_cursor_close(self.raw) }
    }
}

/// A key/value pair that stays valid and unchanged for `'a`: borrowed from
/// the database's pages when possible (zero-copy), an owned copy when the
/// engine returned it in a cursor's decoding buffer (prefix-compressed
/// databases, see [`Env::map_region`](crate::Env::map_region)).
/// Both parts dereference to `[u8]`.
pub type Item<'a> = (Cow<'a, [u8]>, Cow<'a, [u8]>);

/// A key/value pair lent by a cursor until its next use (always zero-copy).
pub type ItemRef<'a> = (&'a [u8], &'a [u8]);

macro_rules! movement_helpers {
    ($item:ty) => {
        /// Move to the first item.
        pub fn first(&mut self) -> Result<Option<$item>> {
            self.get(None, None, CursorOp::First)
        }
        /// Move to the last item.
        pub fn last(&mut self) -> Result<Option<$item>> {
            self.get(None, None, CursorOp::Last)
        }
        /// Move to the next item (the first one if unpositioned).
        #[allow(clippy::should_implement_trait)]
        pub fn next(&mut self) -> Result<Option<$item>> {
            self.get(None, None, CursorOp::Next)
        }
        /// Move to the previous item (the last one if unpositioned).
        pub fn prev(&mut self) -> Result<Option<$item>> {
            self.get(None, None, CursorOp::Prev)
        }
        /// The item under the cursor.
        pub fn current(&mut self) -> Result<Option<$item>> {
            self.get(None, None, CursorOp::GetCurrent)
        }
        /// Move to exactly `key` (`MDB_SET_KEY`).
        pub fn set(&mut self, key: &[u8]) -> Result<Option<$item>> {
            self.get(Some(key), None, CursorOp::SetKey)
        }
        /// Move to the first key >= `key` (`MDB_SET_RANGE`).
        pub fn set_range(&mut self, key: &[u8]) -> Result<Option<$item>> {
            self.get(Some(key), None, CursorOp::SetRange)
        }
    };
}

/// Methods both cursor kinds share; `$lt` is how long iterator items live
/// (`'txn` for [`Cursor`], the cursor borrow `'_` for [`RwCursor`]).
macro_rules! shared_methods {
    ($lt:lifetime) => {
        pub(crate) fn open(txn: &RoTxn<'_>, db: Database) -> Result<Self> {
            let raw = open_raw(txn.raw, db)?;
            Ok(Self {
                raw,
                keep: Keep::for_db(txn, db),
                _txn: PhantomData,
                _not_send: PhantomData,
            })
        }

        /// The raw handle, for use with `dlmdb-sys`.
        pub fn raw(&self) -> *mut ffi::MDB_cursor {
            self.raw
        }

        /// Run `op` like `get`, but lend the result zero-copy until the
        /// cursor is used again (the key may be in the cursor's decoding
        /// buffer in a prefix-compressed database, so it cannot be held
        /// across the next operation):
        ///
        /// ```compile_fail
        /// # fn f(txn: &dlmdb::RoTxn<'_>, db: dlmdb::Database) -> dlmdb::Result<()> {
        /// use dlmdb::CursorOp;
        /// let mut c = txn.cursor(db)?;
        /// let a = c.get_ref(None, None, CursorOp::First)?.unwrap();
        /// let b = c.get_ref(None, None, CursorOp::Next)?; // error: `c` still lent to `a`
        /// assert_ne!(Some(a), b);
        /// # Ok(()) }
        /// ```
        pub fn get_ref(
            &mut self,
            key: Option<&[u8]>,
            data: Option<&[u8]>,
            op: CursorOp,
        ) -> Result<Option<ItemRef<'_>>> {
            // SAFETY: valid until the cursor's next operation; the result
            // borrows `self` mutably until then.
            Ok(raw_get(self.raw, key, data, op)?.map(|(k, d)| unsafe { (slice(&k), slice(&d)) }))
        }

        /// Number of values of the current key (DUPSORT only).
        pub fn count(&self) -> Result<u64> {
            raw_count(self.raw)
        }

        /// Iterate from the first item.
        pub fn iter(&mut self) -> Iter<'_, $lt> {
            Iter::new(
                self.raw,
                self.keep,
                Start::Op(CursorOp::First),
                CursorOp::Next,
            )
        }

        /// Iterate from the first key >= `key`.
        pub fn iter_from(&mut self, key: &[u8]) -> Iter<'_, $lt> {
            Iter::new(
                self.raw,
                self.keep,
                Start::Range(key.to_vec()),
                CursorOp::Next,
            )
        }

        /// Iterate backwards from the last item.
        pub fn iter_rev(&mut self) -> Iter<'_, $lt> {
            Iter::new(
                self.raw,
                self.keep,
                Start::Op(CursorOp::Last),
                CursorOp::Prev,
            )
        }

        /// Iterate over the values of `key` only (DUPSORT: every duplicate in
        /// order; otherwise at most one item).
        pub fn iter_dup_of(&mut self, key: &[u8]) -> Iter<'_, $lt> {
            Iter::new(
                self.raw,
                self.keep,
                Start::Key(key.to_vec()),
                CursorOp::NextDup,
            )
        }

        /// All values of the current key at once (DLMDB `mdb_cursor_list_dup`).
        /// `Ok(None)` when the key has a single plain value or the cursor is not
        /// on an item; [`Error::Incompatible`] for non-DUPSORT databases. The
        /// slices live until the cursor is used again:
        ///
        /// ```compile_fail
        /// # fn f(txn: &dlmdb::RoTxn<'_>, db: dlmdb::Database) -> dlmdb::Result<()> {
        /// let mut c = txn.cursor(db)?;
        /// c.first()?;
        /// let vals = c.list_dup()?.unwrap_or_default();
        /// c.next()?; // error: `c` is still lent to `vals`
        /// drop(vals);
        /// # Ok(()) }
        /// ```
        pub fn list_dup(&mut self) -> Result<Option<Vec<&[u8]>>> {
            raw_list_dup(self.raw)
        }
    };
}

impl<'txn> Cursor<'txn> {
    shared_methods!('txn);

    /// Run `op` (with `key`/`data` input where the op needs it).
    /// `Ok(None)` means `MDB_NOTFOUND`. The item stays valid for the
    /// transaction (see [`Item`]).
    pub fn get(
        &mut self,
        key: Option<&[u8]>,
        data: Option<&[u8]>,
        op: CursorOp,
    ) -> Result<Option<Item<'txn>>> {
        // SAFETY: see `Keep`: page pointers live for 'txn, the rest is copied.
        Ok(raw_get(self.raw, key, data, op)?.map(|(k, d)| unsafe { self.keep.item(&k, &d) }))
    }

    movement_helpers!(Item<'txn>);

    /// Iterate from the current position onwards (the item after it).
    pub fn iter_next(&mut self) -> Iter<'_, 'txn> {
        Iter::new(
            self.raw,
            self.keep,
            Start::Op(CursorOp::Next),
            CursorOp::Next,
        )
    }

    /// Move to the item at position `rank` (0-based) of a COUNTED database.
    pub fn get_rank(&mut self, rank: u64) -> Result<Option<Item<'txn>>> {
        let (mut k, mut d) = (ffi::MDB_val::default(), ffi::MDB_val::default());
        if check_found(unsafe { ffi::mdb_cursor_get_rank(self.raw, rank, &mut k, &mut d, 0) })? {
            Ok(Some(unsafe { self.keep.item(&k, &d) }))
        } else {
            Ok(None)
        }
    }

    /// Turn the cursor into an owning forward iterator from the first item.
    pub fn into_iter_all(self) -> IntoIter<'txn> {
        IntoIter {
            cursor: self,
            op: CursorOp::First,
            done: false,
        }
    }
}

/// A write cursor: borrows its [`RwTxn`](crate::RwTxn) mutably. Items it
/// returns borrow the cursor, so they are gone before the next write:
///
/// ```compile_fail
/// # fn f(txn: &mut dlmdb::RwTxn<'_>, db: dlmdb::Database) -> dlmdb::Result<()> {
/// use dlmdb::WriteFlags;
/// let mut c = txn.cursor_mut(db)?;
/// let all: Vec<_> = c.iter().collect();
/// c.put(b"k", b"v", WriteFlags::empty())?; // error: `c` is still borrowed by `all`
/// drop(all);
/// # Ok(()) }
/// ```
///
/// ```compile_fail
/// # fn f(txn: &mut dlmdb::RwTxn<'_>, db: dlmdb::Database) -> dlmdb::Result<()> {
/// let mut c = txn.cursor_mut(db)?;
/// let a = c.first()?.unwrap();
/// let b = c.next()?; // error: `c` is still lent to `a`
/// drop((a, b));
/// # Ok(()) }
/// ```
pub struct RwCursor<'txn> {
    raw: *mut ffi::MDB_cursor,
    keep: Keep,
    _txn: PhantomData<&'txn mut ()>,
    _not_send: PhantomData<*mut ()>,
}

impl Drop for RwCursor<'_> {
    fn drop(&mut self) {
        // SAFETY: dropped before the transaction ends (borrow), so closing is allowed.
        unsafe { ffi::mdb_cursor_close(self.raw) }
    }
}

impl<'txn> RwCursor<'txn> {
    shared_methods!('_);

    /// Run `op` (with `key`/`data` input where the op needs it);
    /// `Ok(None)` means `MDB_NOTFOUND`. Same as [`get_ref`](Self::get_ref):
    /// the item is lent until the cursor is used again.
    pub fn get(
        &mut self,
        key: Option<&[u8]>,
        data: Option<&[u8]>,
        op: CursorOp,
    ) -> Result<Option<ItemRef<'_>>> {
        self.get_ref(key, data, op)
    }

    movement_helpers!(ItemRef<'_>);

    /// Store `key`/`data` through the cursor; it is left on the new item.
    pub fn put(&mut self, key: &[u8], data: &[u8], flags: WriteFlags) -> Result<()> {
        let mut k = val(key);
        let mut d = val(data);
        check(unsafe { ffi::mdb_cursor_put(self.raw, &mut k, &mut d, flags.bits()) })
    }

    /// Replace the value under the cursor (`MDB_CURRENT`); `key` must equal the current key.
    pub fn put_current(&mut self, key: &[u8], data: &[u8]) -> Result<()> {
        self.put(key, data, WriteFlags::CURRENT)
    }

    /// Reserve `len` bytes for `key` through the cursor and return them.
    pub fn reserve(&mut self, key: &[u8], len: usize, flags: WriteFlags) -> Result<&mut [u8]> {
        // SAFETY: the space is valid until the cursor is used again (the
        // borrow of `self`).
        unsafe {
            reserve_with(key, len, flags, |k, d, f| {
                ffi::mdb_cursor_put(self.raw, k, d, f)
            })
        }
    }

    /// Delete the item under the cursor (`NO_DUP_DATA`: all values of the key).
    pub fn del(&mut self, flags: WriteFlags) -> Result<()> {
        check(unsafe { ffi::mdb_cursor_del(self.raw, flags.bits()) })
    }
}

enum Start {
    Op(CursorOp),
    Range(Vec<u8>),
    /// Exactly this key (`MDB_SET_KEY`); a missing key yields nothing.
    Key(Vec<u8>),
}

/// Iterator over a borrowed cursor; items live for `'v` (see [`Item`]).
pub struct Iter<'c, 'v> {
    raw: *mut ffi::MDB_cursor,
    keep: Keep,
    start: Option<Start>,
    /// Stop at the first item whose key differs (for `iter_dup_of`: on a
    /// plain database `MDB_NEXT_DUP` moves on to the next key).
    only_key: Option<Vec<u8>>,
    step: CursorOp,
    done: bool,
    _cursor: PhantomData<&'c mut ()>,
    _values: PhantomData<&'v [u8]>,
}

impl<'c, 'v> Iter<'c, 'v> {
    fn new(raw: *mut ffi::MDB_cursor, keep: Keep, start: Start, step: CursorOp) -> Self {
        let only_key = match &start {
            Start::Key(k) => Some(k.clone()),
            _ => None,
        };
        Iter {
            raw,
            keep,
            only_key,
            start: Some(start),
            step,
            done: false,
            _cursor: PhantomData,
            _values: PhantomData,
        }
    }
}

impl<'c, 'v> Iterator for Iter<'c, 'v> {
    type Item = Result<Item<'v>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = match self.start.take() {
            Some(Start::Op(op)) => raw_get(self.raw, None, None, op),
            Some(Start::Range(k)) => raw_get(self.raw, Some(&k), None, CursorOp::SetRange),
            Some(Start::Key(k)) => raw_get(self.raw, Some(&k), None, CursorOp::SetKey),
            None => raw_get(self.raw, None, None, self.step),
        };
        let (only_key, keep) = (self.only_key.as_deref(), self.keep);
        let r = r.map(|found| {
            found.and_then(|(k, d)| {
                // SAFETY: compared before the cursor moves again.
                if only_key.is_some_and(|want| want != unsafe { slice(&k) }) {
                    return None;
                }
                // SAFETY: 'v is the transaction ('txn, Cursor) or the
                // cursor's borrow (RwCursor), during which pages stay put;
                // `keep` copies what may be in the cursor's buffer.
                Some(unsafe { keep.item(&k, &d) })
            })
        });
        fused_step(&mut self.done, r)
    }
}

/// One step of a fused iterator: an item, or the end (`Ok(None)`) or an
/// error, after which the iterator (`done`) yields nothing more.
fn fused_step<T>(done: &mut bool, r: Result<Option<T>>) -> Option<Result<T>> {
    let out = r.transpose();
    if !matches!(out, Some(Ok(_))) {
        *done = true;
    }
    out
}

/// Owning forward iterator (see [`Cursor::into_iter_all`] and [`crate::RoTxn::iter`]).
pub struct IntoIter<'txn> {
    cursor: Cursor<'txn>,
    op: CursorOp,
    done: bool,
}

impl<'txn> Iterator for IntoIter<'txn> {
    type Item = Result<Item<'txn>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.cursor.get(None, None, self.op);
        self.op = CursorOp::Next;
        fused_step(&mut self.done, r)
    }
}

impl<'txn> crate::RoTxn<'txn> {
    /// Iterate over all items of `db` in key order with an owned cursor.
    pub fn iter(&self, db: Database) -> Result<IntoIter<'_>> {
        Ok(self.cursor(db)?.into_iter_all())
    }
}

#[allow(dead_code)]
fn _assert_error_is_send_sync() {
    fn f<T: Send + Sync>() {}
    f::<Error>();
}
