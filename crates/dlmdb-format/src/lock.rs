//! The lock file's header: a magic word, then the format word that names the
//! lock layout (0x0001_0001 for LMDB 0.9's, 0x2C2F_6002 for LMDB 1.0's and
//! DLMDB's).
//!
//! | Offset | Size | Field |
//! |---|---|---|
//! | 0 | 4 | magic 0xBEEFC0DE |
//! | 4 | 4 | format word |

use crate::bytes::slice;

/// Byte offset of the format word.
pub const FORMAT_WORD_OFFSET: usize = 4;

/// The format word of a lock file's bytes.
pub fn format_word(lock: &[u8]) -> crate::Result<u32> {
    let s = slice(lock, FORMAT_WORD_OFFSET, 4, "lock format word")?;
    Ok(u32::from_le_bytes(s.try_into().expect("4 bytes")))
}

/// Overwrite the format word in a lock file's bytes.
pub fn set_format_word(lock: &mut [u8], word: u32) -> crate::Result<()> {
    slice(lock, FORMAT_WORD_OFFSET, 4, "lock format word")?;
    lock[FORMAT_WORD_OFFSET..FORMAT_WORD_OFFSET + 4].copy_from_slice(&word.to_le_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_word_round_trip_and_bounds() {
        let mut b = 0xBEEF_C0DEu32.to_le_bytes().to_vec();
        b.extend_from_slice(&0x2C2F_6002u32.to_le_bytes());
        assert_eq!(format_word(&b).unwrap(), 0x2C2F_6002);
        set_format_word(&mut b, 0x0001_0001).unwrap();
        assert_eq!(format_word(&b).unwrap(), 0x0001_0001);
        assert_eq!(&b[..4], &0xBEEF_C0DEu32.to_le_bytes());
        assert!(format_word(&b[..7]).is_err());
        assert!(set_format_word(&mut b[..6], 1).is_err());
    }
}
