//! Meta pages 0 and 1. Page header (flags META),
//! then at page offset:
//!
//! ```text
//! offset size field
//!  16    4    magic      0xBEEFC0DE
//!  20    4    version    1 (stock LMDB, DLMDB padded v1) or 2 (DLMDB v2)
//!  24    8    address    fixed map address, else 0
//!  32    8    mapsize    map size last committed
//!  40    48   free tree  DbRecord; its pad is the page size
//!  88    48   main tree  DbRecord
//! 136    8    last_pg    highest page in use
//! 144    8    txnid      transaction that wrote this meta
//! ```
//! The current meta is the valid one with the larger txn id.

use crate::bytes::{u16_at, u32_at, u64_at};
use crate::page::{PageFlags, OFF_FLAGS, OFF_PGNO};
use crate::record::DbRecord;
use crate::{FormatError, Result};

/// `mm_magic`.
pub const MAGIC: u32 = 0xBEEF_C0DE;
/// Bytes of page header + meta body.
pub const META_SIZE: usize = 152;

/// Offset of `mm_magic` ([`MAGIC`], `u32`).
pub const OFF_MAGIC: usize = 16;

fixed_layout! {
    /// A meta page, decoded (offsets in the page).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    pub struct Meta {
        /// 1 (stock LMDB, DLMDB padded v1) or 2 (DLMDB v2).
        version: u32 = OFF_VERSION @ 20,
        /// Fixed map address, else 0.
        address: u64 = OFF_ADDRESS @ 24,
        /// Map size last committed.
        mapsize: u64 = OFF_MAPSIZE @ 32,
        /// The free-page tree; its `pad` is the page size.
        free: DbRecord = OFF_FREE_DB @ 40,
        /// The main tree.
        main: DbRecord = OFF_MAIN_DB @ 88,
        /// Highest page in use.
        last_pg: u64 = OFF_LAST_PG @ 136,
        /// Transaction that wrote this meta.
        txnid: u64 = OFF_TXNID @ 144,
    }
}

impl Meta {
    /// The fields of a meta page image whose magic is right, with none of
    /// the other checks of [`parse_meta`] (for readers that only need the
    /// figures); `None` when shorter than [`META_SIZE`] or the magic is wrong.
    pub fn decode(b: &[u8]) -> Option<Meta> {
        if b.len() < META_SIZE || u32_at(b, OFF_MAGIC)? != MAGIC {
            return None;
        }
        Self::read_fields(b)
    }

    /// Page size recorded in the free tree's `pad`.
    pub fn page_size(&self) -> u32 {
        self.free.pad
    }
}

/// The page size a meta page image records (the free tree's `pad`, page
/// offset 40), when its magic is right; not yet checked to be a power of two.
pub fn recorded_page_size(b: &[u8]) -> Option<u32> {
    (u32_at(b, OFF_MAGIC)? == MAGIC).then_some(())?;
    u32_at(b, OFF_FREE_DB + crate::record::OFF_PAD)
}

/// Page sizes any writer uses: powers of two from 512 to 65536 bytes.
pub fn page_size_ok(psize: usize) -> bool {
    (512..=65536).contains(&psize) && psize.is_power_of_two()
}

/// Decode and validate the meta page image `b` that should be page `which`
/// (magic, META flag, page number, version 1 or 2).
pub fn parse_meta(b: &[u8], which: u64) -> Result<Meta> {
    if b.len() < META_SIZE {
        return Err(FormatError::Invalid(format!(
            "meta page of {} bytes (needs {META_SIZE})",
            b.len()
        )));
    }
    let magic = u32_at(b, OFF_MAGIC).expect("in meta");
    if magic != MAGIC {
        return Err(FormatError::Invalid(format!("bad magic {magic:#010x}")));
    }
    let flags = u16_at(b, OFF_FLAGS).expect("in meta");
    if !PageFlags::from_bits_retain(flags).contains(PageFlags::META) {
        return Err(FormatError::Invalid(format!(
            "page flags {flags:#06x} lack META"
        )));
    }
    let pgno = u64_at(b, OFF_PGNO).expect("in meta");
    if pgno != which {
        return Err(FormatError::Invalid(format!(
            "page number field says {pgno}, expected {which}"
        )));
    }
    let meta = Meta::decode(b).expect("size and magic checked");
    if meta.version != 1 && meta.version != 2 {
        return Err(FormatError::Invalid(format!(
            "unsupported data version {}",
            meta.version
        )));
    }
    Ok(meta)
}

/// LMDB 1.x (data format 3) puts a 24-byte header before the meta body:
/// its flags word at byte 18, magic at 24 and version at 28.
pub const LMDB1X_OFF_FLAGS: usize = 18;
pub const LMDB1X_OFF_MAGIC: usize = 24;
pub const LMDB1X_OFF_VERSION: usize = 28;

/// `mm_version` of a meta page image in either header layout: the 16-byte
/// header of LMDB 0.9, 1.0 and DLMDB (magic at 16, version at 20), or LMDB
/// 1.x's 24-byte one (a META flags word at 18, magic at 24, version at 28);
/// `None` when neither carries the magic.
pub fn data_version(b: &[u8]) -> Option<u32> {
    if u32_at(b, OFF_MAGIC)? == MAGIC {
        return u32_at(b, OFF_VERSION);
    }
    let flags = PageFlags::from_bits_retain(u16_at(b, LMDB1X_OFF_FLAGS)?);
    (flags.contains(PageFlags::META) && u32_at(b, LMDB1X_OFF_MAGIC)? == MAGIC)
        .then(|| u32_at(b, LMDB1X_OFF_VERSION))?
}

/// The current meta of two page images: the valid one with the larger txn
/// id; `Err` when neither is valid (both reasons given).
pub fn current_meta(page0: &[u8], page1: &[u8]) -> Result<Meta> {
    match (parse_meta(page0, 0), parse_meta(page1, 1)) {
        (Ok(a), Ok(b)) => Ok(if b.txnid > a.txnid { b } else { a }),
        (Ok(a), Err(_)) => Ok(a),
        (Err(_), Ok(b)) => Ok(b),
        (Err(a), Err(b)) => Err(FormatError::Invalid(format!(
            "no valid meta page: page 0: {a}; page 1: {b}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta_page(which: u64, txnid: u64) -> Vec<u8> {
        let mut b = vec![0u8; 4096];
        b[0..8].copy_from_slice(&which.to_le_bytes());
        b[10] = 0x08;
        b[16..20].copy_from_slice(&MAGIC.to_le_bytes());
        b[20..24].copy_from_slice(&2u32.to_le_bytes());
        b[40..44].copy_from_slice(&4096u32.to_le_bytes());
        b[128..136].copy_from_slice(&u64::MAX.to_le_bytes());
        b[136..144].copy_from_slice(&9u64.to_le_bytes());
        b[144..152].copy_from_slice(&txnid.to_le_bytes());
        b
    }

    #[test]
    fn meta_fields_and_choice() {
        let m = parse_meta(&meta_page(1, 5), 1).unwrap();
        assert_eq!(
            (m.version, m.page_size(), m.last_pg, m.txnid),
            (2, 4096, 9, 5)
        );
        assert!(m.main.is_empty());
        assert!(parse_meta(&meta_page(1, 5), 0).is_err());
        let mut bad = meta_page(0, 1);
        bad[16] = 0;
        assert!(parse_meta(&bad, 0).is_err());
        assert_eq!(
            current_meta(&meta_page(0, 4), &meta_page(1, 5))
                .unwrap()
                .txnid,
            5
        );
        assert_eq!(
            current_meta(&meta_page(0, 6), &meta_page(1, 5))
                .unwrap()
                .txnid,
            6
        );
        assert_eq!(current_meta(&meta_page(0, 6), &bad).unwrap().txnid, 6);
        assert!(current_meta(&bad, &bad).is_err());
        assert_eq!(recorded_page_size(&meta_page(0, 1)), Some(4096));
        assert_eq!(recorded_page_size(&bad), None);
        assert_eq!(data_version(&meta_page(0, 1)), Some(2));
        assert_eq!(data_version(&bad), None);
        let mut v3 = vec![0u8; 64];
        v3[18] = 0x08;
        v3[24..28].copy_from_slice(&MAGIC.to_le_bytes());
        v3[28..32].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(data_version(&v3), Some(3));
        assert_eq!(Meta::decode(&bad), None);
        let mut loose = meta_page(1, 3);
        loose[10] = 0; // no META flag: decode still reads the figures
        assert_eq!(Meta::decode(&loose).unwrap().txnid, 3);
        assert!(parse_meta(&loose, 1).is_err());
        assert!(page_size_ok(4096) && !page_size_ok(4000) && !page_size_ok(256));
    }
}
