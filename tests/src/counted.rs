//! Order statistics (`MDB_COUNTED`): shared helpers for the
//! `counted_*` tests.
//!
//! * Raw calls of the count and rank functions through `dlmdb-sys` (the
//!   shared wrapper in `wrap.rs` covers only stock LMDB's API), plus a small
//!   raw cursor and DUPSORT put/delete helpers.
//! * [`CountModel`] / [`CountSnap`]: an in-memory model of plain and DUPSORT
//!   databases whose snapshot answers every rank, key-rank and range-count
//!   query the way dlmdb-extensions.md §2.4 defines it, error codes included.
//! * [`check_file`]: a structural checker that parses the data file itself
//!   (no engine code involved) and verifies, for every tree, that each node
//!   of a `P_COUNTED` branch page holds the exact entry count of its child
//!   subtree (spec §3.4-§3.5, invariants C1-C4), that counted DBs have only
//!   counted branch pages and other DBs none, and that every leaf sits at the
//!   recorded depth. It trusts nothing stored in the file except structure,
//!   so it also catches the separator-resize defect of old DLMDB builds
//!   (spec N.3.4). The CLI's `dlmdb check` can mirror it.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs::File;
use std::marker::PhantomData;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::ptr;

use dlmdb_sys as ffi;

use crate::model::sort_key;
use crate::raw::{Res, Txn};
use crate::Pair;

pub const COUNTED: u32 = 0x80;
pub const DUPSORT: u32 = 0x04;
pub const DUPFIXED: u32 = 0x10;
pub const INTEGERKEY: u32 = 0x08;
pub const LOWER_INCL: u32 = 0x02;
pub const UPPER_INCL: u32 = 0x04;
/// The four inclusivity combinations every range query is checked with.
pub const FLAG_COMBOS: [u32; 4] = [0, LOWER_INCL, UPPER_INCL, LOWER_INCL | UPPER_INCL];
pub const EINVAL: i32 = 22;

crate::raw_val_helpers!();

/// `Some(bytes)` -> pointer to an `MDB_val` kept in `slot`; `None` -> NULL.
fn opt_ptr(b: Option<&[u8]>, slot: &mut ffi::MDB_val) -> *const ffi::MDB_val {
    match b {
        Some(b) => {
            *slot = val(b);
            slot as *const _
        }
        None => ptr::null(),
    }
}

// ---------------------------------------------------------------------------
// Raw calls (our engine only: stock LMDB has no order statistics)
// ---------------------------------------------------------------------------

/// `mdb_count_all`.
pub fn count_all(txn: &impl AsTxn, dbi: u32, flags: u32) -> Res<u64> {
    let mut out = u64::MAX;
    // SAFETY: live txn, out pointer valid.
    check(unsafe { ffi::mdb_count_all(txn.txn_ptr(), dbi, flags, &mut out) })?;
    Ok(out)
}

/// Which range-count function to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeFn {
    /// `mdb_count_range` (entries, plain DBs only).
    CountRange,
    /// `mdb_range_count_keys` (distinct keys).
    Keys,
    /// `mdb_range_count_values` (entries, DUPSORT DBs only).
    Values,
}

impl RangeFn {
    pub const ALL: [RangeFn; 3] = [RangeFn::CountRange, RangeFn::Keys, RangeFn::Values];
    pub fn name(self) -> &'static str {
        match self {
            RangeFn::CountRange => "mdb_count_range",
            RangeFn::Keys => "mdb_range_count_keys",
            RangeFn::Values => "mdb_range_count_values",
        }
    }
}

/// One end of a counted range; `None` is open (a NULL bound).
pub type Bound<'a> = Option<&'a [u8]>;

/// Call one of the range-count functions; `None` bounds are NULL (open).
pub fn range_count(
    txn: &impl AsTxn,
    dbi: u32,
    f: RangeFn,
    low: Option<&[u8]>,
    high: Option<&[u8]>,
    flags: u32,
) -> Res<u64> {
    let (mut ls, mut hs) = (empty_val(), empty_val());
    let lp = opt_ptr(low, &mut ls);
    let hp = opt_ptr(high, &mut hs);
    let mut out = u64::MAX;
    // SAFETY: live txn; bound pointers are NULL or point at live MDB_vals.
    let rc = unsafe {
        match f {
            RangeFn::CountRange => {
                ffi::mdb_count_range(txn.txn_ptr(), dbi, lp, hp, flags, &mut out)
            }
            RangeFn::Keys => ffi::mdb_range_count_keys(txn.txn_ptr(), dbi, lp, hp, flags, &mut out),
            RangeFn::Values => {
                ffi::mdb_range_count_values(txn.txn_ptr(), dbi, lp, hp, flags, &mut out)
            }
        }
    };
    check(rc)?;
    Ok(out)
}

/// `mdb_get_rank` returning (key, data).
pub fn get_rank(txn: &impl AsTxn, dbi: u32, rank: u64) -> Res<Pair> {
    let (mut k, mut d) = (empty_val(), empty_val());
    // SAFETY: live txn; outputs copied before any other call.
    unsafe {
        check(ffi::mdb_get_rank(txn.txn_ptr(), dbi, rank, &mut k, &mut d))?;
        Ok((owned(&k), owned(&d)))
    }
}

/// The key and the value `get_rank_partial` was asked for.
pub type RankItem = (Option<Vec<u8>>, Option<Vec<u8>>);

/// `mdb_get_rank` with NULL key and/or data outputs (returns what was asked).
pub fn get_rank_partial(
    txn: &impl AsTxn,
    dbi: u32,
    rank: u64,
    want_key: bool,
    want_data: bool,
) -> Res<RankItem> {
    let (mut k, mut d) = (empty_val(), empty_val());
    let kp: *mut ffi::MDB_val = if want_key { &mut k } else { ptr::null_mut() };
    let dp: *mut ffi::MDB_val = if want_data { &mut d } else { ptr::null_mut() };
    // SAFETY: as above; NULL outputs are allowed by the contract.
    unsafe {
        check(ffi::mdb_get_rank(txn.txn_ptr(), dbi, rank, kp, dp))?;
        Ok((want_key.then(|| owned(&k)), want_data.then(|| owned(&d))))
    }
}

/// `mdb_get_key_rank`; `data` None is a NULL data argument.
pub fn get_key_rank(txn: &impl AsTxn, dbi: u32, key: &[u8], data: Option<&[u8]>) -> Res<u64> {
    let k = val(key);
    let mut ds = empty_val();
    let dp = opt_ptr(data, &mut ds);
    let mut out = u64::MAX;
    // SAFETY: live txn, valid pointers.
    check(unsafe { ffi::mdb_get_key_rank(txn.txn_ptr(), dbi, &k, dp, &mut out) })?;
    Ok(out)
}

/// `mdb_put` with any flags (the shared wrapper's `put` does the same; kept
/// here so DUPSORT tests read uniformly).
pub fn put(txn: &impl AsTxn, dbi: u32, key: &[u8], data: &[u8], flags: u32) -> Res<()> {
    let mut k = val(key);
    let mut d = val(data);
    // SAFETY: live write txn; LMDB copies the bytes.
    check(unsafe { ffi::mdb_put(txn.txn_ptr(), dbi, &mut k, &mut d, flags) })
}

/// `mdb_put(MDB_RESERVE)` then fill the reserved space with `data`.
pub fn put_reserve(txn: &impl AsTxn, dbi: u32, key: &[u8], data: &[u8], flags: u32) -> Res<()> {
    let mut k = val(key);
    let mut d = ffi::MDB_val {
        mv_size: data.len(),
        mv_data: ptr::null_mut(),
    };
    // SAFETY: on success the engine returns `data.len()` writable bytes
    // valid until the next update in this txn; they are filled at once.
    unsafe {
        check(ffi::mdb_put(
            txn.txn_ptr(),
            dbi,
            &mut k,
            &mut d,
            flags | ffi::MDB_RESERVE,
        ))?;
        assert_eq!(
            d.mv_size,
            data.len(),
            "MDB_RESERVE returned a different size"
        );
        if !data.is_empty() {
            ptr::copy_nonoverlapping(data.as_ptr(), d.mv_data as *mut u8, data.len());
        }
    }
    Ok(())
}

/// `md_entries` through `mdb_stat`.
pub fn entries(txn: &impl AsTxn, dbi: u32) -> Res<u64> {
    // SAFETY: plain data filled by the engine.
    unsafe {
        let mut st: ffi::MDB_stat = std::mem::zeroed();
        check(ffi::mdb_stat(txn.txn_ptr(), dbi, &mut st))?;
        Ok(st.ms_entries as u64)
    }
}

/// Every pair in cursor order.
pub fn walk(txn: &impl AsTxn, dbi: u32) -> Res<crate::Pairs> {
    let mut c = Cursor::open(txn, dbi)?;
    let mut out = Vec::new();
    let mut op = ffi::MDB_FIRST;
    loop {
        match c.get(op, None, None) {
            Ok(p) => out.push(p),
            Err(ffi::MDB_NOTFOUND) => return Ok(out),
            Err(e) => return Err(e),
        }
        op = ffi::MDB_NEXT;
    }
}

/// Anything that is a live transaction of our engine.
pub trait AsTxn {
    fn txn_ptr(&self) -> *mut ffi::MDB_txn;
}

impl AsTxn for Txn<'_> {
    fn txn_ptr(&self) -> *mut ffi::MDB_txn {
        self.raw()
    }
}

/// `mdb_del` with optional data (DUPSORT: `Some` deletes one duplicate,
/// `None` the key with all its duplicates). `Ok(false)` on MDB_NOTFOUND.
pub fn del(txn: &impl AsTxn, dbi: u32, key: &[u8], data: Option<&[u8]>) -> Res<bool> {
    let mut k = val(key);
    let mut d = data.map(val);
    let dp = d.as_mut().map_or(ptr::null_mut(), |d| d as *mut _);
    // SAFETY: live write txn, valid pointers.
    match unsafe { ffi::mdb_del(txn.txn_ptr(), dbi, &mut k, dp) } {
        0 => Ok(true),
        ffi::MDB_NOTFOUND => Ok(false),
        e => Err(e),
    }
}

/// `mdb_cursor_put(MDB_MULTIPLE)` on a DUPFIXED DB: `items` holds
/// `items.len() / size` values of `size` bytes. Returns how many were
/// written (LMDB stores the number in the second `MDB_val`).
pub fn put_multiple(
    txn: &impl AsTxn,
    dbi: u32,
    key: &[u8],
    items: &[u8],
    size: usize,
) -> Res<usize> {
    assert!(size > 0 && items.len().is_multiple_of(size));
    let c = Cursor::open(txn, dbi)?;
    let mut k = val(key);
    let mut d = [
        ffi::MDB_val {
            mv_size: size,
            mv_data: items.as_ptr() as *mut _,
        },
        ffi::MDB_val {
            mv_size: items.len() / size,
            mv_data: ptr::null_mut(),
        },
    ];
    // SAFETY: MDB_MULTIPLE reads an array of two MDB_vals; both live here.
    check(unsafe { ffi::mdb_cursor_put(c.cur, &mut k, d.as_mut_ptr(), ffi::MDB_MULTIPLE) })?;
    Ok(d[1].mv_size)
}

/// A raw cursor of our engine, closed on drop.
pub struct Cursor<'t> {
    cur: *mut ffi::MDB_cursor,
    _txn: PhantomData<&'t ()>,
}

impl<'t> Cursor<'t> {
    pub fn open(txn: &'t impl AsTxn, dbi: u32) -> Res<Cursor<'t>> {
        let mut cur = ptr::null_mut();
        // SAFETY: live txn; the cursor borrows it.
        check(unsafe { ffi::mdb_cursor_open(txn.txn_ptr(), dbi, &mut cur) })?;
        Ok(Cursor {
            cur,
            _txn: PhantomData,
        })
    }

    /// `mdb_cursor_get_rank` returning the positioned (key, data).
    pub fn get_rank(&mut self, rank: u64, flags: u32) -> Res<Pair> {
        let (mut k, mut d) = (empty_val(), empty_val());
        // SAFETY: live cursor; outputs copied at once.
        unsafe {
            check(ffi::mdb_cursor_get_rank(
                self.cur, rank, &mut k, &mut d, flags,
            ))?;
            Ok((owned(&k), owned(&d)))
        }
    }

    /// `mdb_cursor_get_rank` with NULL outputs (position only).
    pub fn seek_rank(&mut self, rank: u64) -> Res<()> {
        // SAFETY: NULL outputs are allowed.
        check(unsafe {
            ffi::mdb_cursor_get_rank(self.cur, rank, ptr::null_mut(), ptr::null_mut(), 0)
        })
    }

    /// `mdb_cursor_key_rank`.
    pub fn key_rank(&mut self, key: &[u8], data: Option<&[u8]>, flags: u32) -> Res<u64> {
        let k = val(key);
        let mut ds = empty_val();
        let dp = opt_ptr(data, &mut ds);
        let mut out = u64::MAX;
        // SAFETY: live cursor, valid pointers.
        check(unsafe { ffi::mdb_cursor_key_rank(self.cur, &k, dp, flags, &mut out) })?;
        Ok(out)
    }

    /// `mdb_cursor_get` with an op; `key`/`data` are inputs where the op
    /// reads them. Returns the output pair.
    pub fn get(
        &mut self,
        op: ffi::MDB_cursor_op,
        key: Option<&[u8]>,
        data: Option<&[u8]>,
    ) -> Res<Pair> {
        let mut k = key.map_or_else(empty_val, val);
        let mut d = data.map_or_else(empty_val, val);
        // SAFETY: live cursor; outputs copied at once.
        unsafe {
            check(ffi::mdb_cursor_get(self.cur, &mut k, &mut d, op))?;
            Ok((owned(&k), owned(&d)))
        }
    }

    /// `mdb_cursor_count`.
    pub fn count(&mut self) -> Res<u64> {
        let mut n = 0;
        // SAFETY: live cursor.
        check(unsafe { ffi::mdb_cursor_count(self.cur, &mut n) })?;
        Ok(n as u64)
    }

    /// `mdb_cursor_put`.
    pub fn put(&mut self, key: &[u8], data: &[u8], flags: u32) -> Res<()> {
        let mut k = val(key);
        let mut d = val(data);
        // SAFETY: live cursor in a write txn; LMDB copies the bytes.
        check(unsafe { ffi::mdb_cursor_put(self.cur, &mut k, &mut d, flags) })
    }

    /// `mdb_cursor_del`.
    pub fn del(&mut self, flags: u32) -> Res<()> {
        // SAFETY: live cursor in a write txn.
        check(unsafe { ffi::mdb_cursor_del(self.cur, flags) })
    }

    /// `mdb_cursor_list_dup`: copies of the current key's duplicates.
    pub fn list_dup(&mut self) -> Res<Vec<Vec<u8>>> {
        let mut vals: *const ffi::MDB_val = ptr::null();
        let mut n = 0;
        // SAFETY: the array is valid until the cursor moves; copied at once.
        unsafe {
            check(ffi::mdb_cursor_list_dup(self.cur, &mut vals, &mut n))?;
            Ok((0..n).map(|i| owned(&*vals.add(i))).collect())
        }
    }
}

impl Drop for Cursor<'_> {
    fn drop(&mut self) {
        // SAFETY: opened by us, closed once.
        unsafe { ffi::mdb_cursor_close(self.cur) }
    }
}

// ---------------------------------------------------------------------------
// Model
// ---------------------------------------------------------------------------

/// A key's sort key paired with its duplicates in the default order.
type SortedDups = (Vec<u8>, BTreeSet<Vec<u8>>);

/// In-memory model of one plain or DUPSORT database, ordered like the
/// default comparators (keys via [`sort_key`], duplicates bytewise — the
/// default dup comparator, also for DUPFIXED without INTEGERDUP).
#[derive(Debug, Clone, Default)]
pub struct CountModel {
    pub flags: u32,
    map: BTreeMap<Vec<u8>, SortedDups>,
    entries: usize,
}

impl CountModel {
    pub fn new(flags: u32) -> Self {
        CountModel {
            flags,
            ..Default::default()
        }
    }
    pub fn dupsort(&self) -> bool {
        self.flags & DUPSORT != 0
    }
    pub fn entries(&self) -> usize {
        self.entries
    }
    pub fn keys(&self) -> usize {
        self.map.len()
    }
    /// Put: plain DBs replace the value; DUPSORT adds the duplicate. Returns
    /// true when an entry was added.
    pub fn put(&mut self, key: &[u8], data: &[u8]) -> bool {
        let dup = self.dupsort();
        let e = self
            .map
            .entry(sort_key(self.flags, key))
            .or_insert_with(|| (key.to_vec(), BTreeSet::new()));
        if !dup && !e.1.is_empty() {
            e.1.clear();
            e.1.insert(data.to_vec());
            return false;
        }
        let added = e.1.insert(data.to_vec());
        if added {
            self.entries += 1;
        }
        added
    }
    /// Delete a key with all its duplicates; returns how many entries went.
    pub fn del_key(&mut self, key: &[u8]) -> usize {
        match self.map.remove(&sort_key(self.flags, key)) {
            Some((_, v)) => {
                self.entries -= v.len();
                v.len()
            }
            None => 0,
        }
    }
    /// Delete one duplicate; true if it existed.
    pub fn del_pair(&mut self, key: &[u8], data: &[u8]) -> bool {
        let sk = sort_key(self.flags, key);
        let Some(e) = self.map.get_mut(&sk) else {
            return false;
        };
        if !e.1.remove(data) {
            return false;
        }
        self.entries -= 1;
        if e.1.is_empty() {
            self.map.remove(&sk);
        }
        true
    }
    pub fn contains_key(&self, key: &[u8]) -> bool {
        self.map.contains_key(&sort_key(self.flags, key))
    }
    /// Duplicates of `key` in order (empty if absent).
    pub fn values(&self, key: &[u8]) -> Vec<Vec<u8>> {
        self.map
            .get(&sort_key(self.flags, key))
            .map(|e| e.1.iter().cloned().collect())
            .unwrap_or_default()
    }
    /// Number of distinct keys sorting before `key`.
    pub fn key_pos(&self, key: &[u8]) -> usize {
        self.map.range(..sort_key(self.flags, key)).count()
    }
    /// The i-th distinct key.
    pub fn nth_key(&self, i: usize) -> Option<Vec<u8>> {
        self.map.values().nth(i).map(|e| e.0.clone())
    }
    /// A frozen, indexable view answering the queries.
    pub fn snap(&self, counted: bool) -> CountSnap {
        let mut s = CountSnap {
            flags: self.flags,
            counted,
            ..Default::default()
        };
        for (sk, (k, vals)) in &self.map {
            s.sort_keys.push(sk.clone());
            s.key_start.push(s.entries.len());
            for v in vals {
                s.entries.push((k.clone(), v.clone()));
            }
        }
        s.key_start.push(s.entries.len());
        s
    }
    /// Build from pairs in database order (e.g. a fixture dump).
    pub fn from_pairs(flags: u32, pairs: &[Pair]) -> Self {
        let mut m = CountModel::new(flags);
        for (k, v) in pairs {
            m.put(k, v);
        }
        m
    }
}

/// Frozen model: every entry in order, with per-key start offsets.
#[derive(Debug, Clone, Default)]
pub struct CountSnap {
    pub flags: u32,
    /// Whether the modelled DB has `MDB_COUNTED` (else every call must give
    /// MDB_INCOMPATIBLE after the argument checks).
    pub counted: bool,
    pub entries: Vec<Pair>,
    pub sort_keys: Vec<Vec<u8>>,
    /// `key_start[i]` = rank of key i's first duplicate; one extra sentinel.
    pub key_start: Vec<usize>,
}

impl CountSnap {
    pub fn dupsort(&self) -> bool {
        self.flags & DUPSORT != 0
    }
    pub fn total(&self) -> u64 {
        self.entries.len() as u64
    }
    pub fn keys(&self) -> u64 {
        self.sort_keys.len() as u64
    }
    /// Index of the key in `sort_keys`, if present.
    fn key_index(&self, key: &[u8]) -> Result<usize, usize> {
        let sk = sort_key(self.flags, key);
        self.sort_keys.binary_search(&sk)
    }

    /// Expected `mdb_count_all` result.
    pub fn count_all(&self, flags: u32) -> Res<u64> {
        if flags & !(LOWER_INCL | UPPER_INCL) != 0 {
            return Err(EINVAL);
        }
        if !self.counted {
            return Err(ffi::MDB_INCOMPATIBLE);
        }
        Ok(self.total())
    }

    /// Expected `mdb_get_rank` / `mdb_cursor_get_rank` result.
    pub fn rank(&self, r: u64) -> Res<&Pair> {
        if !self.counted {
            return Err(ffi::MDB_INCOMPATIBLE);
        }
        self.entries.get(r as usize).ok_or(ffi::MDB_NOTFOUND)
    }

    /// Expected `mdb_get_key_rank` result (§2.4.7).
    pub fn key_rank(&self, key: &[u8], data: Option<&[u8]>) -> Res<u64> {
        if !self.counted {
            return Err(ffi::MDB_INCOMPATIBLE);
        }
        let i = self.key_index(key).map_err(|_| ffi::MDB_NOTFOUND)?;
        let (a, b) = (self.key_start[i], self.key_start[i + 1]);
        match data {
            None => Ok(a as u64),
            Some(d) => {
                let vals = &self.entries[a..b];
                if self.dupsort() {
                    match vals.binary_search_by(|(_, v)| v.as_slice().cmp(d)) {
                        Ok(j) => Ok((a + j) as u64),
                        Err(_) => Err(ffi::MDB_NOTFOUND),
                    }
                } else if vals[0].1 == d {
                    Ok(a as u64)
                } else {
                    Err(ffi::MDB_NOTFOUND)
                }
            }
        }
    }

    /// (entries, distinct keys) sorting before `key`, plus key's own if
    /// `incl` and it exists — `before(K, incl)` of §2.4.3.
    pub fn before(&self, key: &[u8], incl: bool) -> (u64, u64) {
        match self.key_index(key) {
            Ok(i) if incl => (self.key_start[i + 1] as u64, i as u64 + 1),
            Ok(i) | Err(i) => (self.key_start[i] as u64, i as u64),
        }
    }

    /// Range count per §2.4.3/§2.4.5 arithmetic: entries (`keys` false) or
    /// distinct keys (`keys` true) with `low ⋈ k ⋈ high`.
    pub fn range(&self, low: Bound, high: Bound, flags: u32, keys: bool) -> u64 {
        if let (Some(l), Some(h)) = (low, high) {
            let (ls, hs) = (sort_key(self.flags, l), sort_key(self.flags, h));
            if ls > hs {
                return 0;
            }
            if ls == hs && flags & (LOWER_INCL | UPPER_INCL) != (LOWER_INCL | UPPER_INCL) {
                return 0;
            }
        }
        let pick = |p: (u64, u64)| if keys { p.1 } else { p.0 };
        let total = if keys { self.keys() } else { self.total() };
        let u = high.map_or(total, |h| pick(self.before(h, flags & UPPER_INCL != 0)));
        let l = low.map_or(0, |l| pick(self.before(l, flags & LOWER_INCL == 0)));
        u.saturating_sub(l)
    }

    /// Expected result of one of the range functions, error codes included
    /// (the argument checks of the three tables in §2.4.3-§2.4.5, in order).
    pub fn range_fn(&self, f: RangeFn, low: Bound, high: Bound, flags: u32) -> Res<u64> {
        if flags & !(LOWER_INCL | UPPER_INCL) != 0 {
            return Err(EINVAL);
        }
        match f {
            RangeFn::CountRange => {
                if !self.counted || self.dupsort() {
                    return Err(ffi::MDB_INCOMPATIBLE);
                }
                Ok(self.range(low, high, flags, false))
            }
            RangeFn::Keys => {
                if !self.counted {
                    return Err(ffi::MDB_INCOMPATIBLE);
                }
                Ok(self.range(low, high, flags, true))
            }
            RangeFn::Values => {
                if !self.dupsort() || !self.counted {
                    return Err(ffi::MDB_INCOMPATIBLE);
                }
                Ok(self.range(low, high, flags, false))
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Structural checker (parses the data file; spec §3.4-§3.5)
// ---------------------------------------------------------------------------

use dlmdb_format::meta::{page_size_ok, parse_meta, recorded_page_size, META_SIZE};
use dlmdb_format::node::subtree_count;
pub use dlmdb_format::DbRecord;
use dlmdb_format::{
    DbFlags, NodeFlags, NodeHeader, NodeLayout, Page, PageFlags, PageHeader, NODE_HEADER_SIZE,
    PAGE_HEADER_SIZE, P_INVALID,
};

/// What the checker found in one tree (a DB's own tree; dup sub-DBs are
/// folded into their owner's numbers, except `subdbs`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeReport {
    /// Entries found (sum of leaf contributions), == md_entries.
    pub entries: u64,
    /// Leaf nodes of the outer tree (distinct keys).
    pub keys: u64,
    pub branch_pages: u64,
    pub counted_branch_pages: u64,
    pub leaf_pages: u64,
    /// Branch nodes whose stored count was verified.
    pub counts_checked: u64,
    /// Dup sub-databases (F_SUBDATA|F_DUPDATA nodes) and inline dup sub-pages.
    pub subdbs: u64,
    pub subpages: u64,
    /// Of `branch_pages` / `leaf_pages`: the pages of dup sub-databases.
    pub sub_branch_pages: u64,
    pub sub_leaf_pages: u64,
    /// Overflow pages (sum of the runs of F_BIGDATA values).
    pub overflow_pages: u64,
}

/// Result of [`check_file`].
#[derive(Debug, Clone, Default)]
pub struct FileReport {
    pub version: u32,
    pub txnid: u64,
    pub last_pg: u64,
    pub main: TreeReport,
    /// (name, record, report) of every named database.
    pub dbs: Vec<(Vec<u8>, DbRecord, TreeReport)>,
}

impl FileReport {
    pub fn db(&self, name: &str) -> Option<&(Vec<u8>, DbRecord, TreeReport)> {
        self.dbs.iter().find(|d| d.0 == name.as_bytes())
    }
}

struct Image {
    file: File,
    psize: usize,
    last_pg: u64,
    /// Stock, or DLMDB's even key padding in leaf nodes.
    layout: NodeLayout,
}

/// Context of the tree being walked.
struct TreeCtx<'a> {
    what: &'a str,
    counted: bool,
    dupfixed: bool,
    depth: u16,
    /// Walking a dup sub-database (values are the entries).
    sub: bool,
}

impl Image {
    fn page(&self, pgno: u64) -> Result<Vec<u8>, String> {
        if pgno > self.last_pg {
            return Err(format!("page {pgno} beyond last_pg {}", self.last_pg));
        }
        let mut buf = vec![0u8; self.psize];
        self.file
            .read_exact_at(&mut buf, pgno * self.psize as u64)
            .map_err(|e| format!("cannot read page {pgno}: {e}"))?;
        let said = PageHeader::parse(&buf).map_err(|e| e.to_string())?.pgno;
        if said != pgno {
            return Err(format!("page {pgno} says it is page {said}"));
        }
        Ok(buf)
    }

    /// Node offsets of a page (or sub-page) image `p`, bounds-checked.
    fn nodes(p: &[u8], what: &str) -> Result<Vec<usize>, String> {
        let page = Page::parse(p).map_err(|e| format!("{what}: {e}"))?;
        let lower = usize::from(page.header.lower);
        let Some(n) = page.header.items().filter(|_| lower <= p.len()) else {
            return Err(format!("{what}: bad mp_lower {lower}"));
        };
        let mut v = Vec::with_capacity(n);
        for i in 0..n {
            let o = page.pointer(i).expect("pointer below lower");
            if o < lower || o + NODE_HEADER_SIZE > p.len() {
                return Err(format!("{what}: node {i} at bad offset {o}"));
            }
            v.push(o);
        }
        Ok(v)
    }

    /// Header of the node at `o` (checked to fit by [`Image::nodes`]).
    fn node(p: &[u8], o: usize) -> NodeHeader {
        NodeHeader::parse(p, o).expect("node header within the page")
    }

    fn data_off(&self, p: &[u8], o: usize) -> usize {
        Self::node(p, o).data_offset(self.layout)
    }

    /// Walk the tree of `rec`; returns its report after checking C1-C4.
    fn tree(
        &self,
        rec: &DbRecord,
        ctx: &TreeCtx<'_>,
        seen: &mut HashSet<u64>,
    ) -> Result<TreeReport, String> {
        let mut rep = TreeReport::default();
        if rec.root == P_INVALID {
            if rec.entries != 0 || rec.depth != 0 {
                return Err(format!(
                    "{}: empty tree but md_entries {} depth {}",
                    ctx.what, rec.entries, rec.depth
                ));
            }
            return Ok(rep);
        }
        if rec.depth == 0 {
            return Err(format!("{}: root {} but md_depth 0", ctx.what, rec.root));
        }
        let total = self.walk(rec.root, 0, ctx, seen, &mut rep)?;
        rep.entries = total;
        if total != rec.entries {
            return Err(format!(
                "{}: md_entries {} but the tree holds {} entries (C2/C4)",
                ctx.what, rec.entries, total
            ));
        }
        Ok(rep)
    }

    fn walk(
        &self,
        pgno: u64,
        level: u16,
        ctx: &TreeCtx<'_>,
        seen: &mut HashSet<u64>,
        rep: &mut TreeReport,
    ) -> Result<u64, String> {
        let w = ctx.what;
        if !seen.insert(pgno) {
            return Err(format!("{w}: page {pgno} reached twice"));
        }
        let p = self.page(pgno)?;
        let hdr = PageHeader::parse(&p).expect("a whole page");
        let flags = hdr.raw_flags;
        if hdr
            .flags
            .intersects(PageFlags::OVERFLOW | PageFlags::META | PageFlags::SUBP)
        {
            return Err(format!(
                "{w}: page {pgno} has flags {flags:#x} inside a tree"
            ));
        }
        if hdr.flags.contains(PageFlags::LEAF2) {
            // LEAF2: no pointer array; mp_lower still grows by 2 per item,
            // and the items (mp_pad bytes each) follow the header.
            rep.leaf_pages += 1;
            let lower = usize::from(hdr.lower);
            let width = usize::from(hdr.pad);
            if !(ctx.sub && ctx.dupfixed)
                || hdr.flags.intersects(PageFlags::BRANCH | PageFlags::COUNTED)
            {
                return Err(format!(
                    "{w}: LEAF2 page {pgno} (flags {flags:#x}) outside a DUPFIXED sub-database"
                ));
            }
            if level + 1 != ctx.depth {
                return Err(format!(
                    "{w}: leaf page {pgno} at level {level} but md_depth {}",
                    ctx.depth
                ));
            }
            let Some(n) = hdr
                .items()
                .filter(|n| PAGE_HEADER_SIZE + n * width <= p.len())
            else {
                return Err(format!(
                    "{w}: LEAF2 page {pgno}: mp_lower {lower} with item size {width}"
                ));
            };
            let n = n as u64;
            if n == 0 && level > 0 {
                return Err(format!("{w}: non-root LEAF2 page {pgno} is empty"));
            }
            rep.keys += n;
            return Ok(n);
        }
        let nodes = Self::nodes(&p, &format!("{w}: page {pgno}"))?;
        if hdr.flags.contains(PageFlags::BRANCH) {
            rep.branch_pages += 1;
            if level + 1 >= ctx.depth {
                return Err(format!(
                    "{w}: branch page {pgno} at level {level} but md_depth {}",
                    ctx.depth
                ));
            }
            let counted = hdr.counted_branch();
            if counted != ctx.counted {
                return Err(format!(
                    "{w}: branch page {pgno} flags {flags:#x}: P_COUNTED {} in a {} tree",
                    if counted { "set" } else { "missing" },
                    if ctx.counted {
                        "counted"
                    } else {
                        "non-counted"
                    }
                ));
            }
            if counted {
                rep.counted_branch_pages += 1;
            }
            if nodes.is_empty() {
                return Err(format!("{w}: branch page {pgno} has no nodes"));
            }
            let mut sum = 0u64;
            for (i, &o) in nodes.iter().enumerate() {
                let stored = subtree_count(&p, o);
                if counted && stored.is_err() {
                    return Err(format!("{w}: branch page {pgno} node {i} truncated"));
                }
                let child = Self::node(&p, o).child_pgno();
                let sub = self.walk(child, level + 1, ctx, seen, rep)?;
                if let (true, Ok(stored)) = (counted, stored) {
                    rep.counts_checked += 1;
                    if stored != sub {
                        return Err(format!(
                            "{w}: branch page {pgno} (level {level}) node {i} -> page {child}: stored count {stored} ({stored:#x}) but the subtree holds {sub} entries (C1)"
                        ));
                    }
                }
                sum += sub;
            }
            return Ok(sum);
        }
        if !hdr.flags.contains(PageFlags::LEAF) {
            return Err(format!(
                "{w}: page {pgno} has flags {flags:#x} (neither branch nor leaf)"
            ));
        }
        rep.leaf_pages += 1;
        if level + 1 != ctx.depth {
            return Err(format!(
                "{w}: leaf page {pgno} at level {level} but md_depth {}",
                ctx.depth
            ));
        }
        if hdr.flags.contains(PageFlags::COUNTED) {
            return Err(format!(
                "{w}: leaf page {pgno} carries P_COUNTED ({flags:#x})"
            ));
        }
        if nodes.is_empty() && level > 0 {
            return Err(format!("{w}: non-root leaf page {pgno} is empty"));
        }
        let mut sum = 0u64;
        for (i, &o) in nodes.iter().enumerate() {
            rep.keys += 1;
            let node = Self::node(&p, o);
            let nf = node.flags();
            if nf.contains(NodeFlags::BIGDATA) {
                // data = 8-byte page number of an overflow run
                let doff = self.data_off(&p, o);
                if doff + 8 > p.len() {
                    return Err(format!(
                        "{w}: leaf page {pgno} node {i}: overflow reference beyond the page"
                    ));
                }
                let opg = dlmdb_format::bytes::u64_at(&p, doff).expect("checked");
                if !seen.insert(opg) {
                    return Err(format!("{w}: overflow page {opg} reached twice"));
                }
                let op = PageHeader::parse(&self.page(opg)?).expect("a whole page");
                if !op.flags.contains(PageFlags::OVERFLOW) {
                    return Err(format!(
                        "{w}: leaf page {pgno} node {i}: page {opg} is not an overflow page"
                    ));
                }
                let n = u64::from(op.overflow_pages());
                if n == 0 || opg + n - 1 > self.last_pg {
                    return Err(format!("{w}: overflow run at {opg} of {n} pages"));
                }
                rep.overflow_pages += n;
            }
            if ctx.sub || !nf.contains(NodeFlags::DUPDATA) {
                sum += 1;
                continue;
            }
            let dsize = node.data_size() as usize;
            let doff = self.data_off(&p, o);
            if doff + dsize > p.len() {
                return Err(format!(
                    "{w}: leaf page {pgno} node {i}: data beyond the page"
                ));
            }
            let data = &p[doff..doff + dsize];
            if nf.contains(NodeFlags::SUBDATA) {
                let sr = DbRecord::parse(data).ok_or_else(|| {
                    format!(
                        "{w}: leaf page {pgno} node {i}: database record of {} bytes (need 48)",
                        data.len()
                    )
                })?;
                let what = format!("{w} / dup sub-DB in page {pgno} node {i}");
                let sctx = TreeCtx {
                    what: &what,
                    counted: ctx.counted,
                    dupfixed: ctx.dupfixed,
                    depth: sr.depth,
                    sub: true,
                };
                let srep = self.tree(&sr, &sctx, seen)?;
                if srep.entries == 0 {
                    return Err(format!("{what}: empty dup sub-database"));
                }
                rep.subdbs += 1;
                rep.sub_branch_pages += srep.branch_pages;
                rep.sub_leaf_pages += srep.leaf_pages;
                rep.branch_pages += srep.branch_pages;
                rep.counted_branch_pages += srep.counted_branch_pages;
                rep.leaf_pages += srep.leaf_pages;
                rep.counts_checked += srep.counts_checked;
                sum += sr.entries;
            } else {
                let Ok(sh) = PageHeader::parse(data) else {
                    return Err(format!(
                        "{w}: leaf page {pgno} node {i}: dup sub-page of {} bytes",
                        data.len()
                    ));
                };
                let sf = sh.flags;
                if !sf.contains(PageFlags::SUBP | PageFlags::LEAF)
                    || sf.intersects(PageFlags::BRANCH | PageFlags::COUNTED)
                {
                    return Err(format!(
                        "{w}: leaf page {pgno} node {i}: dup sub-page flags {:#x}",
                        sh.raw_flags
                    ));
                }
                let lower = usize::from(sh.lower);
                if lower < PAGE_HEADER_SIZE || lower > data.len() {
                    return Err(format!(
                        "{w}: leaf page {pgno} node {i}: sub-page mp_lower {lower}"
                    ));
                }
                let n = ((lower - PAGE_HEADER_SIZE) / 2) as u64;
                if n == 0 {
                    return Err(format!(
                        "{w}: leaf page {pgno} node {i}: empty dup sub-page"
                    ));
                }
                rep.subpages += 1;
                sum += n;
            }
        }
        Ok(sum)
    }
}

/// Parse the data file at `path` and check every tree (main DB and all
/// named DBs). `v1_padded`: a version-1 file uses DLMDB's even key padding
/// (the `MDB_FORMAT_DLMDB_V1` case); version 2 is always padded. Reads the
/// newest committed snapshot (the meta with the larger txnid).
pub fn check_file(path: &Path, v1_padded: bool) -> Result<FileReport, String> {
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut hdr = vec![0u8; META_SIZE];
    file.read_exact_at(&mut hdr, 0)
        .map_err(|e| format!("cannot read meta 0: {e}"))?;
    let psize = recorded_page_size(&hdr)
        .ok_or("meta 0: bad magic (or not a 16-byte-header layout)")? as usize;
    if !page_size_ok(psize) {
        return Err(format!("meta 0: page size {psize}"));
    }
    let mut m1 = vec![0u8; META_SIZE];
    file.read_exact_at(&mut m1, psize as u64)
        .map_err(|e| format!("cannot read meta 1: {e}"))?;
    let m0 = parse_meta(&hdr, 0).map_err(|e| format!("meta 0: {e}"))?;
    let m1 = parse_meta(&m1, 1).map_err(|e| format!("meta 1: {e}"))?;
    let meta = if m1.txnid > m0.txnid { m1 } else { m0 };
    let version = meta.version;
    let layout = NodeLayout::from_padded(version == 2 || v1_padded);
    let img = Image {
        file,
        psize,
        last_pg: meta.last_pg,
        layout,
    };
    let main = meta.main;
    let mut rep = FileReport {
        version,
        txnid: meta.txnid,
        last_pg: img.last_pg,
        ..Default::default()
    };
    let mut seen = HashSet::new();
    let mctx = TreeCtx {
        what: "main DB",
        counted: main.db_flags().contains(DbFlags::COUNTED),
        dupfixed: main.db_flags().contains(DbFlags::DUP_FIXED),
        depth: main.depth,
        sub: false,
    };
    rep.main = img.tree(&main, &mctx, &mut seen)?;
    if main.db_flags().contains(DbFlags::PREFIX_COMPRESSION) {
        return Err(
            "main DB is prefix-compressed: named-DB names not decoded by this checker".into(),
        );
    }
    // Named DBs: F_SUBDATA leaf nodes of the main tree (main DB not DUPSORT).
    if !main.db_flags().contains(DbFlags::DUP_SORT) {
        for (name, rec) in img.named_records(&main)? {
            let what = format!("DB {}", crate::show(&name));
            let ctx = TreeCtx {
                what: &what,
                counted: rec.db_flags().contains(DbFlags::COUNTED),
                dupfixed: rec.db_flags().contains(DbFlags::DUP_FIXED),
                depth: rec.depth,
                sub: false,
            };
            let r = img.tree(&rec, &ctx, &mut seen)?;
            rep.dbs.push((name, rec, r));
        }
    }
    Ok(rep)
}

impl Image {
    /// (name, record) of every F_SUBDATA node in the main tree's leaves.
    fn named_records(&self, main: &DbRecord) -> Result<Vec<(Vec<u8>, DbRecord)>, String> {
        let mut out = Vec::new();
        if main.root == P_INVALID {
            return Ok(out);
        }
        let mut stack = vec![main.root];
        let mut leaves = Vec::new();
        // Depth-first, left to right: collect leaves in key order.
        while let Some(pg) = stack.pop() {
            let p = self.page(pg)?;
            let nodes = Self::nodes(&p, &format!("main DB page {pg}"))?;
            if PageHeader::parse(&p)
                .expect("a whole page")
                .flags
                .contains(PageFlags::BRANCH)
            {
                for &o in nodes.iter().rev() {
                    stack.push(Self::node(&p, o).child_pgno());
                }
            } else {
                leaves.push((p, nodes));
            }
        }
        for (p, nodes) in leaves {
            for o in nodes {
                let node = Self::node(&p, o);
                let nf = node.flags();
                if !nf.contains(NodeFlags::SUBDATA) || nf.contains(NodeFlags::DUPDATA) {
                    continue;
                }
                let kstart = node.key_offset(false);
                let name = p[kstart..kstart + usize::from(node.ksize)].to_vec();
                let doff = self.data_off(&p, o);
                let rec = p.get(doff..).and_then(DbRecord::parse).ok_or_else(|| {
                    format!(
                        "main DB page: record of {} past the page",
                        crate::show(&name)
                    )
                })?;
                out.push((name, rec));
            }
        }
        Ok(out)
    }
}

/// The page counters stored in each DB record against the pages found.
/// Version 1 (stock LMDB and old DLMDB) counts the outer tree only; the
/// newest DLMDB (version 2) counts a DUPSORT DB's sub-database pages too
/// (spec N.7). Overflow pages are counted in both.
pub fn check_page_counters(rep: &FileReport) -> Result<(), String> {
    for (name, rec, tr) in &rep.dbs {
        let with_sub = rep.version == 2 && rec.flags as u32 & DUPSORT != 0;
        let (b, l) = if with_sub {
            (tr.branch_pages, tr.leaf_pages)
        } else {
            (
                tr.branch_pages - tr.sub_branch_pages,
                tr.leaf_pages - tr.sub_leaf_pages,
            )
        };
        let got = (b, l, tr.overflow_pages);
        let want = (rec.branch_pages, rec.leaf_pages, rec.overflow_pages);
        if got != want {
            return Err(format!(
                "DB {}: record says branch/leaf/overflow {want:?} but the {} holds {got:?} (version {})",
                crate::show(name),
                if with_sub { "tree with its sub-databases" } else { "outer tree" },
                rep.version
            ));
        }
    }
    Ok(())
}

/// [`check_file`], panicking with the checker's message on failure.
pub fn assert_structure(path: &Path, v1_padded: bool, what: &str) -> FileReport {
    check_file(path, v1_padded)
        .unwrap_or_else(|e| panic!("{what}: structural check of {} failed: {e}", path.display()))
}

// ---------------------------------------------------------------------------
// Exhaustive verification against a snapshot
// ---------------------------------------------------------------------------

fn pair_show(r: &Res<Pair>) -> String {
    match r {
        Ok((k, d)) => format!("({}, {})", crate::show(k), crate::show(d)),
        Err(rc) => format!("Err({rc} {})", crate::raw::strerror(*rc)),
    }
}

/// Every rank and every key rank of a counted DB against `snap`:
/// `mdb_get_rank(r)` and a rising `mdb_cursor_get_rank(r)` on one cursor
/// return entry r; `mdb_get_key_rank` maps each entry back to r (with data)
/// and to its key's first rank (without); count_all, rank = total, and the
/// entry/key range counts of a few windows (bounds at every 97th entry).
pub fn verify_every_rank(txn: &impl AsTxn, dbi: u32, snap: &CountSnap, what: &str) {
    let total = snap.total();
    assert_eq!(count_all(txn, dbi, 0), Ok(total), "{what}: count_all");
    let mut cur = Cursor::open(txn, dbi).expect("cursor");
    for (r, (k, d)) in snap.entries.iter().enumerate() {
        let r = r as u64;
        let want: Res<Pair> = Ok((k.clone(), d.clone()));
        let got = get_rank(txn, dbi, r);
        if got != want {
            panic!(
                "{what}: get_rank({r}) = {} but expected {}",
                pair_show(&got),
                pair_show(&want)
            );
        }
        let got = cur.get_rank(r, 0);
        if got != want {
            panic!(
                "{what}: rising cursor_get_rank({r}) = {} but expected {}",
                pair_show(&got),
                pair_show(&want)
            );
        }
        let kr = get_key_rank(txn, dbi, k, Some(d));
        if kr != Ok(r) {
            panic!(
                "{what}: get_key_rank({}, {}) = {kr:?} but expected Ok({r})",
                crate::show(k),
                crate::show(d)
            );
        }
        let first = snap.key_rank(k, None);
        let kr0 = get_key_rank(txn, dbi, k, None);
        if kr0 != first {
            panic!(
                "{what}: get_key_rank({}, NULL) = {kr0:?} but expected {first:?}",
                crate::show(k)
            );
        }
    }
    assert_eq!(
        get_rank(txn, dbi, total),
        Err(ffi::MDB_NOTFOUND),
        "{what}: rank = total"
    );
    assert_eq!(
        cur.get_rank(total, 0),
        Err(ffi::MDB_NOTFOUND),
        "{what}: cursor rank = total"
    );
    // windows
    let n = snap.entries.len();
    let bounds: Vec<Option<Vec<u8>>> = std::iter::once(None)
        .chain((0..n).step_by(97).map(|i| Some(snap.entries[i].0.clone())))
        .chain(std::iter::once(None))
        .collect();
    for w in bounds.windows(3) {
        for (lo, hi) in [(&w[0], &w[2]), (&w[1], &w[2]), (&w[0], &w[1])] {
            for flags in FLAG_COMBOS {
                for f in RangeFn::ALL {
                    let want = snap.range_fn(f, lo.as_deref(), hi.as_deref(), flags);
                    let got = range_count(txn, dbi, f, lo.as_deref(), hi.as_deref(), flags);
                    assert_eq!(
                        got,
                        want,
                        "{what}: {}({}, {}, flags {flags})",
                        f.name(),
                        lo.as_deref().map_or("NULL".into(), crate::show),
                        hi.as_deref().map_or("NULL".into(), crate::show)
                    );
                }
            }
        }
    }
}
