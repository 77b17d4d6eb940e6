//! Raw page access for the checker: plain positional reads of the data
//! file, every offset bounds-checked. Nothing here trusts the file.
//!
//! Page header (16 bytes, lmdb-format.md §4):
//!   0  u64 pgno    | 8 u16 pad (LEAF2 item size) | 10 u16 flags
//!   12 u16 lower   | 14 u16 upper   (overflow pages: 12 u32 page count)
//! Node header (8 bytes, §5.2): 0 u16 lo | 2 u16 hi | 4 u16 flags | 6 u16 ksize.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

pub const P_BRANCH: u16 = 0x01;
pub const P_LEAF: u16 = 0x02;
pub const P_OVERFLOW: u16 = 0x04;
pub const P_META: u16 = 0x08;
pub const P_DIRTY: u16 = 0x10;
pub const P_LEAF2: u16 = 0x20;
pub const P_SUBP: u16 = 0x40;
pub const P_COUNTED: u16 = 0x80;
pub const F_BIGDATA: u16 = 0x01;
pub const F_SUBDATA: u16 = 0x02;
pub const F_DUPDATA: u16 = 0x04;
pub const MAGIC: u32 = 0xBEEF_C0DE;
pub const P_INVALID: u64 = u64::MAX;

pub fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}
pub fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}
pub fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

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

/// The 48-byte database record (§9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct DbRecord {
    pub pad: u32,
    pub flags: u16,
    pub depth: u16,
    pub branch_pages: u64,
    pub leaf_pages: u64,
    pub overflow_pages: u64,
    pub entries: u64,
    pub root: u64,
}

impl DbRecord {
    pub fn parse(b: &[u8]) -> Option<DbRecord> {
        if b.len() < 48 {
            return None;
        }
        Some(DbRecord {
            pad: u32_at(b, 0)?,
            flags: u16_at(b, 4)?,
            depth: u16_at(b, 6)?,
            branch_pages: u64_at(b, 8)?,
            leaf_pages: u64_at(b, 16)?,
            overflow_pages: u64_at(b, 24)?,
            entries: u64_at(b, 32)?,
            root: u64_at(b, 40)?,
        })
    }
}

/// A meta page (§10.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Meta {
    pub version: u32,
    pub address: u64,
    pub mapsize: u64,
    pub free: DbRecord,
    pub main: DbRecord,
    pub last_pg: u64,
    pub txnid: u64,
}

/// Parse and validate the meta page image `b` that should be page `which`.
pub fn parse_meta(b: &[u8], which: u64) -> Result<Meta, String> {
    if b.len() < 152 {
        return Err("shorter than 152 bytes".into());
    }
    let magic = u32_at(b, 16).unwrap_or(0);
    if magic != MAGIC {
        return Err(format!("bad magic {magic:#010x}"));
    }
    let flags = u16_at(b, 10).unwrap_or(0);
    if flags & P_META == 0 {
        return Err(format!("page flags {flags:#06x} lack P_META"));
    }
    let pgno = u64_at(b, 0).unwrap_or(0);
    if pgno != which {
        return Err(format!("page number field says {pgno}"));
    }
    let version = u32_at(b, 20).unwrap_or(0);
    if version != 1 && version != 2 {
        return Err(format!("unsupported data version {version}"));
    }
    Ok(Meta {
        version,
        address: u64_at(b, 24).unwrap_or(0),
        mapsize: u64_at(b, 32).unwrap_or(0),
        free: DbRecord::parse(&b[40..88]).ok_or("short record")?,
        main: DbRecord::parse(&b[88..136]).ok_or("short record")?,
        last_pg: u64_at(b, 136).unwrap_or(0),
        txnid: u64_at(b, 144).unwrap_or(0),
    })
}

/// Big-endian base-128 varint of prefix-compressed keys (dlmdb-extensions
/// §3.8); `(value, length)` or `None` if it does not end within `min(len, 9)` bytes.
pub fn varint(e: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &b) in e.iter().take(9).enumerate() {
        v = (v << 7) | (b & 0x7f) as u64;
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

fn varint_len(mut s: u64) -> usize {
    let mut n = 1;
    while s >= 0x80 {
        s >>= 7;
        n += 1;
    }
    n
}

/// Decode the key of node `i >= 1` of a compressed page with trunk `t`
/// (§3.11 with the newest reader's raw-fallback rules, N.3.3).
pub fn decode_prefixed(t: &[u8], e: &[u8]) -> Result<Vec<u8>, String> {
    if e.is_empty() {
        return Err("empty encoded key".into());
    }
    let (s, h) = varint(e).ok_or("prefix varint does not terminate")?;
    let raw = s > t.len() as u64 || h > e.len() || varint_len(s) != h || {
        let s = s as usize;
        let suffix = &e[h..];
        !suffix.is_empty() && s < t.len() && suffix[0] == t[s]
    };
    if raw {
        return Ok(e.to_vec());
    }
    let mut k = t[..s as usize].to_vec();
    k.extend_from_slice(&e[h..]);
    Ok(k)
}

/// The exact form of a compressed page as this engine writes it (§3.8,
/// §3.10): every node `i >= 1` stored as `varint(s) || key[s..]` with the
/// minimal varint and `s` the full common prefix with the trunk, and
/// `mp_pad` equal to the longest decoded key. `stored` are the stored key
/// bytes, `keys` the decoded keys, in node order. Returns the deviations.
pub fn prefix_form_problems(mp_pad: u16, stored: &[&[u8]], keys: &[Vec<u8>]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(trunk) = keys.first() else {
        if mp_pad != 0 {
            out.push(format!("mp_pad {mp_pad} on an empty compressed page"));
        }
        return out;
    };
    for (i, (e, k)) in stored.iter().zip(keys).enumerate().skip(1) {
        let s = trunk
            .iter()
            .zip(k.iter())
            .take_while(|(a, b)| a == b)
            .count();
        let mut want = Vec::with_capacity(k.len() + 2);
        let n = varint_len(s as u64);
        for j in (0..n).rev() {
            let g = ((s >> (7 * j)) & 0x7f) as u8;
            want.push(if j > 0 { g | 0x80 } else { g });
        }
        want.extend_from_slice(&k[s..]);
        if *e != want.as_slice() {
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
    fn varints() {
        assert_eq!(varint(&[0x00]), Some((0, 1)));
        assert_eq!(varint(&[0x7f]), Some((127, 1)));
        assert_eq!(varint(&[0x81, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0x82, 0x2c]), Some((300, 2)));
        assert_eq!(varint(&[0x81, 0x80, 0x00]), Some((16384, 3)));
        assert_eq!(varint(&[0x80; 10]), None);
    }

    #[test]
    fn prefix_decoding() {
        let t = b"apple";
        assert_eq!(decode_prefixed(t, b"\x04y").unwrap(), b"apply".to_vec());
        assert_eq!(decode_prefixed(t, b"\x05").unwrap(), b"apple".to_vec());
        assert_eq!(
            decode_prefixed(t, b"\x02ricot").unwrap(),
            b"apricot".to_vec()
        );
        // shared length beyond the trunk: raw fallback
        assert_eq!(decode_prefixed(t, b"\x09xy").unwrap(), b"\x09xy".to_vec());
        // non-maximal prefix: raw under the newest rule
        assert_eq!(decode_prefixed(t, b"\x01pz").unwrap(), b"\x01pz".to_vec());
        assert!(decode_prefixed(t, b"").is_err());
    }
}
