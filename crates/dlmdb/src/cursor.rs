//! Cursors and iterators.
//!
//! [`Cursor`] reads through any transaction and returns values that live as
//! long as the transaction. [`RwCursor`] can also write; because a write may
//! move data, its values only live until the cursor is next used mutably.

use crate::error::{check, check_found, Error, Result};
use crate::flags::{CursorOp, Database, WriteFlags};
use crate::txn::{reserve_val, reserved, slice, val};
use dlmdb_sys as ffi;
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

/// A read cursor. Values live as long as the transaction (`'txn`).
pub struct Cursor<'txn> {
    raw: *mut ffi::MDB_cursor,
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

/// Shorthand for a key/value pair borrowed for `'a`.
pub type Item<'a> = (&'a [u8], &'a [u8]);

macro_rules! movement_helpers {
    ($lt:lifetime, $self_ty:ty) => {
        /// Move to the first item.
        pub fn first(self: $self_ty) -> Result<Option<Item<$lt>>> {
            self.get(None, None, CursorOp::First)
        }
        /// Move to the last item.
        pub fn last(self: $self_ty) -> Result<Option<Item<$lt>>> {
            self.get(None, None, CursorOp::Last)
        }
        /// Move to the next item (the first one if unpositioned).
        #[allow(clippy::should_implement_trait)]
        pub fn next(self: $self_ty) -> Result<Option<Item<$lt>>> {
            self.get(None, None, CursorOp::Next)
        }
        /// Move to the previous item (the last one if unpositioned).
        pub fn prev(self: $self_ty) -> Result<Option<Item<$lt>>> {
            self.get(None, None, CursorOp::Prev)
        }
        /// The item under the cursor.
        pub fn current(self: $self_ty) -> Result<Option<Item<$lt>>> {
            self.get(None, None, CursorOp::GetCurrent)
        }
        /// Move to exactly `key` (`MDB_SET_KEY`).
        pub fn set(self: $self_ty, key: &[u8]) -> Result<Option<Item<$lt>>> {
            self.get(Some(key), None, CursorOp::SetKey)
        }
        /// Move to the first key >= `key` (`MDB_SET_RANGE`).
        pub fn set_range(self: $self_ty, key: &[u8]) -> Result<Option<Item<$lt>>> {
            self.get(Some(key), None, CursorOp::SetRange)
        }
    };
}

/// Methods both cursor kinds share; `$lt` is how long returned values live
/// (`'txn` for [`Cursor`], the cursor borrow `'_` for [`RwCursor`]).
macro_rules! shared_methods {
    ($lt:lifetime) => {
        pub(crate) fn open(txn: *mut ffi::MDB_txn, db: Database) -> Result<Self> {
            Ok(Self {
                raw: open_raw(txn, db)?,
                _txn: PhantomData,
                _not_send: PhantomData,
            })
        }

        /// The raw handle, for use with `dlmdb-sys`.
        pub fn raw(&self) -> *mut ffi::MDB_cursor {
            self.raw
        }

        /// Run `op` (with `key`/`data` input where the op needs it).
        /// `Ok(None)` means `MDB_NOTFOUND`.
        pub fn get(
            &mut self,
            key: Option<&[u8]>,
            data: Option<&[u8]>,
            op: CursorOp,
        ) -> Result<Option<Item<$lt>>> {
            Ok(raw_get(self.raw, key, data, op)?.map(|(k, d)| unsafe { (slice(&k), slice(&d)) }))
        }

        movement_helpers!($lt, &mut Self);

        /// Number of values of the current key (DUPSORT only).
        pub fn count(&self) -> Result<u64> {
            raw_count(self.raw)
        }

        /// Iterate from the first item.
        pub fn iter(&mut self) -> Iter<'_, $lt> {
            Iter::new(self.raw, Start::Op(CursorOp::First), CursorOp::Next)
        }

        /// Iterate from the first key >= `key`.
        pub fn iter_from(&mut self, key: &[u8]) -> Iter<'_, $lt> {
            Iter::new(self.raw, Start::Range(key.to_vec()), CursorOp::Next)
        }

        /// Iterate backwards from the last item.
        pub fn iter_rev(&mut self) -> Iter<'_, $lt> {
            Iter::new(self.raw, Start::Op(CursorOp::Last), CursorOp::Prev)
        }

        /// Iterate over the values of `key` only (DUPSORT: every duplicate in
        /// order; otherwise at most one item).
        pub fn iter_dup_of(&mut self, key: &[u8]) -> Iter<'_, $lt> {
            Iter::new(self.raw, Start::Key(key.to_vec()), CursorOp::NextDup)
        }

        /// All values of the current key at once (DLMDB `mdb_cursor_list_dup`).
        /// `Ok(None)` when the key has a single plain value or the cursor is not
        /// on an item; [`Error::Incompatible`] for non-DUPSORT databases. The
        /// slices live until the cursor is used again.
        pub fn list_dup(&mut self) -> Result<Option<Vec<&[u8]>>> {
            raw_list_dup(self.raw)
        }
    };
}

impl<'txn> Cursor<'txn> {
    shared_methods!('txn);

    /// Iterate from the current position onwards (the item after it).
    pub fn iter_next(&mut self) -> Iter<'_, 'txn> {
        Iter::new(self.raw, Start::Op(CursorOp::Next), CursorOp::Next)
    }

    /// Move to the item at position `rank` (0-based) of a COUNTED database.
    pub fn get_rank(&mut self, rank: u64) -> Result<Option<Item<'txn>>> {
        let (mut k, mut d) = (ffi::MDB_val::default(), ffi::MDB_val::default());
        if check_found(unsafe { ffi::mdb_cursor_get_rank(self.raw, rank, &mut k, &mut d, 0) })? {
            Ok(Some(unsafe { (slice(&k), slice(&d)) }))
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

/// A write cursor: borrows its [`RwTxn`](crate::RwTxn) mutably. Values it
/// returns borrow the cursor, so they are gone before the next write.
pub struct RwCursor<'txn> {
    raw: *mut ffi::MDB_cursor,
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
        let mut k = val(key);
        let mut d = reserve_val(len);
        check(unsafe {
            ffi::mdb_cursor_put(
                self.raw,
                &mut k,
                &mut d,
                (flags | WriteFlags::RESERVE).bits(),
            )
        })?;
        // SAFETY: the engine returned `len` writable bytes valid until the
        // cursor is used again (the borrow of `self`).
        Ok(unsafe { reserved(&d, len) })
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

/// Iterator over a borrowed cursor; items live for `'v`.
pub struct Iter<'c, 'v> {
    raw: *mut ffi::MDB_cursor,
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
    fn new(raw: *mut ffi::MDB_cursor, start: Start, step: CursorOp) -> Self {
        let only_key = match &start {
            Start::Key(k) => Some(k.clone()),
            _ => None,
        };
        Iter {
            raw,
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
        match r {
            Ok(Some((k, d))) => {
                let item: Item<'v> = unsafe { (slice(&k), slice(&d)) };
                if self.only_key.as_deref().is_some_and(|want| want != item.0) {
                    self.done = true;
                    return None;
                }
                Some(Ok(item))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
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
        match r {
            Ok(Some(kv)) => Some(Ok(kv)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
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
