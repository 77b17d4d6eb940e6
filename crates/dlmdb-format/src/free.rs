//! Free-list records of the free-page tree.
//!
//! ```text
//! key:  offset 0, 8 bytes   txn id that freed the pages (u64)
//! data: offset 0, 8 bytes   n, the number of page numbers that follow
//!       offset 8 + 8*i      page i, u64, strictly descending
//! ```
//! Bytes after `(n + 1) * 8` are reserved space and are ignored.

use crate::bytes::u64_at;
use crate::{FormatError, Result};

/// One record: the pages a transaction freed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FreeRecord {
    pub txnid: u64,
    /// As stored (descending).
    pub pages: Vec<u64>,
}

impl FreeRecord {
    /// Decode a free-tree entry.
    pub fn parse(key: &[u8], data: &[u8]) -> Result<FreeRecord> {
        if key.len() != 8 {
            return Err(FormatError::Invalid(format!(
                "free-list key of {} bytes (expected 8)",
                key.len()
            )));
        }
        let txnid = u64_at(key, 0).expect("8 bytes");
        let n = u64_at(data, 0).ok_or_else(|| {
            FormatError::Invalid(format!(
                "free-list data of {} bytes has no count",
                data.len()
            ))
        })?;
        let need = n
            .checked_add(1)
            .and_then(|k| k.checked_mul(8))
            .filter(|&need| need <= data.len() as u64)
            .ok_or_else(|| {
                FormatError::Invalid(format!(
                    "free-list record of txn {txnid} says {n} pages but holds {} bytes",
                    data.len()
                ))
            })?;
        let pages = (8..need as usize)
            .step_by(8)
            .map(|o| u64_at(data, o).expect("checked"))
            .collect();
        Ok(FreeRecord { txnid, pages })
    }

    /// Runs of consecutive page numbers, ascending: `(first, length)`.
    pub fn runs(&self) -> Vec<(u64, u64)> {
        let mut sorted = self.pages.clone();
        sorted.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::new();
        for p in sorted {
            match out.last_mut() {
                Some((first, len)) if *first + *len == p => *len += 1,
                _ => out.push((p, 1)),
            }
        }
        out
    }

    /// Pages are strictly descending, as writers must store them.
    pub fn is_descending(&self) -> bool {
        self.pages.windows(2).all(|w| w[0] > w[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(ids: &[u64], extra: usize) -> Vec<u8> {
        let mut v = (ids.len() as u64).to_le_bytes().to_vec();
        for p in ids {
            v.extend_from_slice(&p.to_le_bytes());
        }
        v.extend(std::iter::repeat_n(0xaa, extra));
        v
    }

    #[test]
    fn records_and_runs() {
        let r = FreeRecord::parse(&7u64.to_le_bytes(), &data(&[12, 11, 10, 5, 3], 16)).unwrap();
        assert_eq!(r.txnid, 7);
        assert_eq!(r.pages, vec![12, 11, 10, 5, 3]);
        assert!(r.is_descending());
        assert_eq!(r.runs(), vec![(3, 1), (5, 1), (10, 3)]);
        assert!(FreeRecord::parse(&[1, 2], &data(&[1], 0)).is_err());
        let mut short = data(&[9, 8], 0);
        short.truncate(20);
        assert!(FreeRecord::parse(&1u64.to_le_bytes(), &short).is_err());
        let huge = u64::MAX.to_le_bytes();
        assert!(FreeRecord::parse(&1u64.to_le_bytes(), &huge).is_err());
    }
}
