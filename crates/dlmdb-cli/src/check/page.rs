//! Raw page access for the checker: plain positional reads of the data
//! file, every offset bounds-checked. Nothing here trusts the file; what
//! the bytes mean (header, node, record and meta layouts, the varint, the
//! flag bits) comes from `dlmdb_format` alone, never from the engine.

use dlmdb_format::prefix::encode;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The data file, read page by page.
pub struct DataFile {
    file: File,
    pub len: u64,
    pub psize: usize,
}

impl DataFile {
    pub fn open(path: &Path) -> std::io::Result<DataFile> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(DataFile {
            file,
            len,
            psize: 0,
        })
    }

    /// Pages physically present in the file.
    pub fn pages(&self) -> u64 {
        if self.psize == 0 {
            0
        } else {
            self.len / self.psize as u64
        }
    }

    /// Read `len` bytes at `off`; `None` if they are not all in the file.
    pub fn read_at(&self, off: u64, len: usize) -> std::io::Result<Option<Vec<u8>>> {
        if off.checked_add(len as u64).is_none_or(|end| end > self.len) {
            return Ok(None);
        }
        let mut buf = vec![0u8; len];
        self.file.read_exact_at(&mut buf, off)?;
        Ok(Some(buf))
    }

    /// One whole page; `None` past the end of the file.
    pub fn page(&self, pgno: u64) -> std::io::Result<Option<Vec<u8>>> {
        match pgno.checked_mul(self.psize as u64) {
            Some(off) => self.read_at(off, self.psize),
            None => Ok(None),
        }
    }
}

/// The exact form of a compressed page as this engine writes it: every
/// node `i >= 1` stored as `varint(s) || key[s..]` with the minimal varint
/// and `s` the full common prefix with the trunk, and `mp_pad` equal to
/// the longest decoded key. `stored` are the stored key bytes, `keys` the
/// decoded keys, in node order. Returns the deviations.
pub fn prefix_form_problems(mp_pad: u16, stored: &[&[u8]], keys: &[Vec<u8>]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(trunk) = keys.first() else {
        if mp_pad != 0 {
            out.push(format!("mp_pad {mp_pad} on an empty compressed page"));
        }
        return out;
    };
    for (i, (e, k)) in stored.iter().zip(keys).enumerate().skip(1) {
        let want = encode(trunk, k);
        if *e != want.as_slice() {
            let s = dlmdb_format::prefix::common_prefix(trunk, k);
            out.push(format!(
                "node {i}: stored key is not the canonical encoding (shared length {s} with the trunk)"
            ));
        }
    }
    let longest = keys.iter().map(|k| k.len()).max().unwrap_or(0).min(65535);
    if mp_pad as usize != longest {
        out.push(format!(
            "mp_pad {mp_pad}, but the longest decoded key is {longest} bytes"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_prefix_form() {
        let keys = [b"apple".to_vec(), b"apply".to_vec()];
        assert!(prefix_form_problems(5, &[b"apple", b"\x04y"], &keys).is_empty());
        // Raw second key and a stale mp_pad: both reported.
        let p = prefix_form_problems(9, &[b"apple", b"apply"], &keys);
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(prefix_form_problems(1, &[], &[]).len() == 1);
    }
}
