//! In-memory model of plain (non-DUPSORT) databases: a `BTreeMap` whose order
//! matches the stock comparators (lmdb-format.md §13).
//!
//! The map is indexed by a *sort key*, a byte string whose plain lexicographic
//! order equals the database's key order:
//! * default: the key itself;
//! * REVERSEKEY: the key reversed (comparing from the last byte, a key that is
//!   a suffix of the other sorts first — exactly reversed lexicographic order);
//! * INTEGERKEY: native little-endian unsigned integers of one fixed size, whose
//!   numeric order is again the reversed byte order (REVERSEKEY wins over
//!   INTEGERKEY in LMDB, and both map to the same transform anyway).

use std::collections::BTreeMap;
use std::ops::Bound;

pub const REVERSEKEY: u32 = 0x02;
pub const INTEGERKEY: u32 = 0x08;

/// The sort key for `key` in a database with `flags`.
pub fn sort_key(flags: u32, key: &[u8]) -> Vec<u8> {
    if flags & (REVERSEKEY | INTEGERKEY) != 0 {
        key.iter().rev().copied().collect()
    } else {
        key.to_vec()
    }
}

/// One database of the model.
#[derive(Debug, Clone, Default)]
pub struct ModelDb {
    pub flags: u32,
    map: BTreeMap<Vec<u8>, (Vec<u8>, Vec<u8>)>,
}

impl ModelDb {
    pub fn new(flags: u32) -> Self {
        ModelDb {
            flags,
            map: BTreeMap::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.map
            .get(&sort_key(self.flags, key))
            .map(|(_, v)| v.as_slice())
    }

    /// Insert or replace; returns the previous value.
    pub fn put(&mut self, key: &[u8], val: &[u8]) -> Option<Vec<u8>> {
        self.map
            .insert(sort_key(self.flags, key), (key.to_vec(), val.to_vec()))
            .map(|(_, v)| v)
    }

    pub fn del(&mut self, key: &[u8]) -> Option<Vec<u8>> {
        self.map.remove(&sort_key(self.flags, key)).map(|(_, v)| v)
    }

    /// Pairs in database order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&[u8], &[u8])> {
        self.map.values().map(|(k, v)| (k.as_slice(), v.as_slice()))
    }

    pub fn pairs(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.map.values().cloned().collect()
    }

    pub fn first(&self) -> Option<(&[u8], &[u8])> {
        self.iter().next()
    }

    pub fn last(&self) -> Option<(&[u8], &[u8])> {
        self.iter().next_back()
    }

    /// First pair with key >= `key` (MDB_SET_RANGE).
    pub fn ceil(&self, key: &[u8]) -> Option<(&[u8], &[u8])> {
        self.map
            .range((Bound::Included(sort_key(self.flags, key)), Bound::Unbounded))
            .next()
            .map(|(_, (k, v))| (k.as_slice(), v.as_slice()))
    }

    /// First pair with key > `key` (MDB_NEXT from `key`).
    pub fn after(&self, key: &[u8]) -> Option<(&[u8], &[u8])> {
        self.map
            .range((Bound::Excluded(sort_key(self.flags, key)), Bound::Unbounded))
            .next()
            .map(|(_, (k, v))| (k.as_slice(), v.as_slice()))
    }

    /// Last pair with key < `key` (MDB_PREV from `key`).
    pub fn before(&self, key: &[u8]) -> Option<(&[u8], &[u8])> {
        self.map
            .range((Bound::Unbounded, Bound::Excluded(sort_key(self.flags, key))))
            .next_back()
            .map(|(_, (k, v))| (k.as_slice(), v.as_slice()))
    }

    /// The key at index `i` in order (for picking existing keys at random).
    pub fn nth_key(&self, i: usize) -> Option<Vec<u8>> {
        self.map.values().nth(i).map(|(k, _)| k.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders() {
        let mut m = ModelDb::new(INTEGERKEY);
        for n in [5u32, 256, 1, u32::MAX, 0] {
            m.put(&n.to_ne_bytes(), b"");
        }
        let got: Vec<u32> = m
            .iter()
            .map(|(k, _)| u32::from_ne_bytes(k.try_into().unwrap()))
            .collect();
        assert_eq!(got, vec![0, 1, 5, 256, u32::MAX]);

        let mut r = ModelDb::new(REVERSEKEY);
        for k in [&b"ab"[..], b"b", b"ba", b"a", b"cb"] {
            r.put(k, b"");
        }
        let got: Vec<&[u8]> = r.iter().map(|(k, _)| k).collect();
        // compared from the end: "a" < "ba" < "b" < "ab" < "cb"
        assert_eq!(got, vec![&b"a"[..], b"ba", b"b", b"ab", b"cb"]);
    }
}
