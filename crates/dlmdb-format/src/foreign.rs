//! Data files this format does not describe, told apart by their first page,
//! so that a tool can say what a file is instead of "not an LMDB file".
//!
//! Page 0 of each, at byte offset:
//!
//! ```text
//! file                                  page header          first page's signature
//! LMDB 0.9 / 1.0 / DLMDB (this crate)   16 bytes             u32 0xBEEFC0DE at 16
//! LMDB 1.x, data format 3               24 bytes (or 16)     META flag at 18, magic at 24, version 3 at 28 (20)
//! LMDB of a 32-bit build                12 bytes             META flag (u16) at 6, magic at 12, version 1 at 16
//! LMDB of a big-endian machine          16 bytes (12 32-bit) magic byte-swapped (0xDEC0EFBE read here) at 16 (12)
//! libmdbx                               20 bytes             u64 at 20: 0x59659DBDEF4C11 << 8 | data version
//! bbolt / BoltDB                        16 bytes             meta flag 0x04 (u16) at 8, u32 0xED0CDAED at 16
//! ```
//!
//! A 32-bit LMDB build has 4-byte page numbers and sizes: its page header
//! is `pgno u32, pad u16, flags u16, lower u16, upper u16`, and every later
//! structure is narrower too (as written by mdb.master's `mdb_load` built
//! with `-m32`). LMDB files hold integers in the writer's byte order, so a
//! big-endian machine's store reads byte-swapped here.

use crate::bytes::{u16_at, u32_at, u64_at};
use crate::meta::{data_version, MAGIC};
use crate::page::PageFlags;

/// A first page in a format other than the one this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForeignFormat {
    /// LMDB 1.x, data format 3.
    Lmdb1x,
    /// LMDB written by a 32-bit build (12-byte page headers).
    Lmdb32Bit,
    /// LMDB written on a big-endian machine.
    LmdbBigEndian,
    /// libmdbx, with its data version.
    Libmdbx { version: u8 },
    /// bbolt (BoltDB).
    Bbolt,
}

/// A 32-bit LMDB build's first page: its flags word, magic and version.
pub const LMDB32_OFF_FLAGS: usize = 6;
pub const LMDB32_OFF_MAGIC: usize = 12;
pub const LMDB32_OFF_VERSION: usize = 16;

/// libmdbx's 56-bit magic, shifted left a byte in the u64 at
/// [`MDBX_OFF_MAGIC`], whose low byte is the data version.
pub const MDBX_MAGIC: u64 = 0x0059_659D_BDEF_4C11;
pub const MDBX_OFF_MAGIC: usize = 20;

/// bbolt's meta page: page flags (u16) at 8 with its meta flag, magic at 16.
pub const BOLT_MAGIC: u32 = 0xED0C_DAED;
pub const BOLT_OFF_FLAGS: usize = 8;
pub const BOLT_META_FLAG: u16 = 0x04;
pub const BOLT_OFF_MAGIC: usize = 16;

/// What a data file whose first page is `b` is, when it is none of the
/// files this crate reads; `None` for those (and for anything unknown).
pub fn foreign_format(b: &[u8]) -> Option<ForeignFormat> {
    // Format 3 with either header length, as `data_version` reads it.
    if data_version(b) == Some(3) {
        return Some(ForeignFormat::Lmdb1x);
    }
    if u32_at(b, crate::meta::OFF_MAGIC)? == MAGIC {
        return None;
    }
    if u16_at(b, LMDB32_OFF_FLAGS)? & PageFlags::META.bits() != 0
        && u32_at(b, LMDB32_OFF_MAGIC)? == MAGIC
        && u32_at(b, LMDB32_OFF_VERSION)? == 1
    {
        return Some(ForeignFormat::Lmdb32Bit);
    }
    let swapped = MAGIC.swap_bytes();
    if u32_at(b, crate::meta::OFF_MAGIC)? == swapped || u32_at(b, LMDB32_OFF_MAGIC)? == swapped {
        return Some(ForeignFormat::LmdbBigEndian);
    }
    let mdbx = u64_at(b, MDBX_OFF_MAGIC)?;
    if mdbx >> 8 == MDBX_MAGIC {
        return Some(ForeignFormat::Libmdbx {
            version: mdbx as u8,
        });
    }
    if u16_at(b, BOLT_OFF_FLAGS)? & BOLT_META_FLAG != 0 && u32_at(b, BOLT_OFF_MAGIC)? == BOLT_MAGIC
    {
        return Some(ForeignFormat::Bbolt);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Vec<u8> {
        vec![0u8; 4096]
    }

    #[test]
    fn each_first_page_is_named() {
        let mut ours = page();
        ours[10] = 0x08;
        ours[16..20].copy_from_slice(&MAGIC.to_le_bytes());
        ours[20..24].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(foreign_format(&ours), None);

        let mut v3 = page();
        v3[18] = 0x08;
        v3[24..28].copy_from_slice(&MAGIC.to_le_bytes());
        v3[28..32].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(foreign_format(&v3), Some(ForeignFormat::Lmdb1x));

        // The first bytes of a store mdb.master's mdb_load built with -m32
        // wrote.
        let mut m32 = page();
        m32[..20].copy_from_slice(&[
            0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0xde, 0xc0, 0xef, 0xbe, 1, 0, 0, 0,
        ]);
        assert_eq!(foreign_format(&m32), Some(ForeignFormat::Lmdb32Bit));

        let mut be = page();
        be[10..12].copy_from_slice(&[0, 8]);
        be[16..20].copy_from_slice(&MAGIC.to_be_bytes());
        be[20..24].copy_from_slice(&1u32.to_be_bytes());
        assert_eq!(foreign_format(&be), Some(ForeignFormat::LmdbBigEndian));
        let mut be32 = page();
        be32[6..8].copy_from_slice(&[0, 8]);
        be32[12..16].copy_from_slice(&MAGIC.to_be_bytes());
        assert_eq!(foreign_format(&be32), Some(ForeignFormat::LmdbBigEndian));

        let mut mdbx = page();
        mdbx[20..28].copy_from_slice(&((MDBX_MAGIC << 8) | 3).to_le_bytes());
        assert_eq!(
            foreign_format(&mdbx),
            Some(ForeignFormat::Libmdbx { version: 3 })
        );

        let mut bolt = page();
        bolt[8] = 0x04;
        bolt[16..20].copy_from_slice(&BOLT_MAGIC.to_le_bytes());
        bolt[20..24].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(foreign_format(&bolt), Some(ForeignFormat::Bbolt));
        bolt[8] = 0x10; // a bbolt leaf page: not a first page
        assert_eq!(foreign_format(&bolt), None);

        assert_eq!(foreign_format(&page()), None);
        assert_eq!(foreign_format(&[0u8; 12]), None);
    }
}
