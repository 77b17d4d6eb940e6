//! The 48-byte database record `MDB_db`. It describes the free-page and
//! main trees in the meta page, every named database (catalog value in the
//! main tree, node flag `SUBDATA`) and every duplicate sub-database
//! (`DUPDATA|SUBDATA`).
//!
//! ```text
//! offset size field
//!  0     4    pad            free tree in a meta page: page size;
//!                            DUPFIXED sub-database: item size; else 0
//!  4     2    flags          DbFlags
//!  6     2    depth          0 empty, 1 root is a leaf, ...
//!  8     8    branch_pages
//! 16     8    leaf_pages     LEAF2 leaves included
//! 24     8    overflow_pages by run length
//! 32     8    entries        DUPSORT: every duplicate
//! 40     8    root           P_INVALID when empty
//! ```

use crate::page::P_INVALID;
use crate::{FormatError, Result};

/// Bytes of a database record.
pub const DB_RECORD_SIZE: usize = 48;

bitflags::bitflags! {
    /// Persisted database flags (`md_flags`), the `mdb_dbi_open` values.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct DbFlags: u16 {
        /// Keys compared from the last byte backwards.
        const REVERSE_KEY = 0x02;
        /// Sorted duplicates per key.
        const DUP_SORT = 0x04;
        /// Keys are native unsigned integers (4 or 8 bytes).
        const INTEGER_KEY = 0x08;
        /// Duplicates all have one size (LEAF2 pages).
        const DUP_FIXED = 0x10;
        /// Duplicates are native unsigned integers.
        const INTEGER_DUP = 0x20;
        /// Duplicates compared from the last byte backwards.
        const REVERSE_DUP = 0x40;
        /// DLMDB: branch pages carry subtree entry counts.
        const COUNTED = 0x80;
        /// DLMDB: leaf keys stored against the page's first key.
        const PREFIX_COMPRESSION = 0x100;
    }
}

impl DbFlags {
    /// DLMDB's additions: they need DLMDB's padded node layout, so a
    /// stock-layout store cannot hold a database with them.
    pub const DLMDB_ONLY: DbFlags = DbFlags::COUNTED.union(DbFlags::PREFIX_COMPRESSION);

    /// `DUP_SORT|COUNTED` names of the set bits, unknown bits in hex.
    pub fn names(self) -> String {
        flag_names(self)
    }
}

/// The names of the set bits joined with `|`, from the bitflags
/// definitions, then any unknown bits in hex; `-` when none.
pub(crate) fn flag_names<F>(f: F) -> String
where
    F: bitflags::Flags,
    F::Bits: Into<u64>,
{
    let mut v: Vec<String> = f.iter_names().map(|(n, _)| n.to_string()).collect();
    let unknown = (f.bits() & !F::all().bits()).into();
    if unknown != 0 {
        v.push(format!("{unknown:#x}"));
    }
    if v.is_empty() {
        "-".to_string()
    } else {
        v.join("|")
    }
}

fixed_layout! {
    /// A database record, decoded.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    pub struct DbRecord {
        /// Free tree in a meta page: the page size; DUPFIXED sub-database:
        /// the item size; else 0.
        pad: u32 = OFF_PAD @ 0,
        /// As stored (unknown bits kept; see [`DbRecord::db_flags`]).
        flags: u16 = OFF_FLAGS @ 4,
        /// 0 empty, 1 the root is a leaf, ...
        depth: u16 = OFF_DEPTH @ 6,
        branch_pages: u64 = OFF_BRANCH_PAGES @ 8,
        /// LEAF2 leaves included.
        leaf_pages: u64 = OFF_LEAF_PAGES @ 16,
        /// By run length.
        overflow_pages: u64 = OFF_OVERFLOW_PAGES @ 24,
        /// DUPSORT: every duplicate.
        entries: u64 = OFF_ENTRIES @ 32,
        /// [`P_INVALID`] when empty.
        root: u64 = OFF_ROOT @ 40,
    }
}

impl crate::bytes::ReadLe for DbRecord {
    fn read_le(b: &[u8], off: usize) -> Option<DbRecord> {
        DbRecord::parse(b.get(off..)?)
    }
}

impl DbRecord {
    /// Decode the first 48 bytes of `b`; `None` when shorter.
    pub fn parse(b: &[u8]) -> Option<DbRecord> {
        if b.len() < DB_RECORD_SIZE {
            return None;
        }
        Self::read_fields(b)
    }

    /// As [`DbRecord::parse`], requiring exactly 48 bytes (a node's data).
    pub fn parse_exact(b: &[u8]) -> Result<DbRecord> {
        if b.len() != DB_RECORD_SIZE {
            return Err(FormatError::Invalid(format!(
                "database record of {} bytes (expected 48)",
                b.len()
            )));
        }
        Ok(Self::parse(b).expect("48 bytes"))
    }

    pub fn db_flags(&self) -> DbFlags {
        DbFlags::from_bits_retain(self.flags)
    }

    /// The tree has no pages.
    pub fn is_empty(&self) -> bool {
        self.root == P_INVALID
    }

    /// Pages the record's counters account for.
    pub fn pages(&self) -> u64 {
        self.branch_pages
            .saturating_add(self.leaf_pages)
            .saturating_add(self.overflow_pages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_fields_at_their_offsets() {
        let mut b = [0u8; 48];
        b[0..4].copy_from_slice(&4096u32.to_le_bytes());
        b[4..6].copy_from_slice(&0x184u16.to_le_bytes());
        b[6..8].copy_from_slice(&3u16.to_le_bytes());
        b[8..16].copy_from_slice(&5u64.to_le_bytes());
        b[16..24].copy_from_slice(&40u64.to_le_bytes());
        b[24..32].copy_from_slice(&2u64.to_le_bytes());
        b[32..40].copy_from_slice(&999u64.to_le_bytes());
        b[40..48].copy_from_slice(&17u64.to_le_bytes());
        let r = DbRecord::parse(&b).unwrap();
        assert_eq!(r.pad, 4096);
        assert_eq!(r.depth, 3);
        assert_eq!((r.branch_pages, r.leaf_pages, r.overflow_pages), (5, 40, 2));
        assert_eq!(r.entries, 999);
        assert_eq!(r.root, 17);
        assert_eq!(r.pages(), 47);
        assert_eq!(r.db_flags().names(), "DUP_SORT|COUNTED|PREFIX_COMPRESSION");
        assert!(DbRecord::parse(&b[..47]).is_none());
        assert!(DbRecord::parse_exact(&[0u8; 49]).is_err());
        assert_eq!(DbFlags::from_bits_retain(0x8001).names(), "0x8001");
        assert_eq!(DbFlags::empty().names(), "-");
    }
}
