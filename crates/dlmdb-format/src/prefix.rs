//! Prefix-compressed leaf keys (DLMDB's `MDB_PREFIX_COMPRESSION`).
//!
//! Compressed pages: leaf pages (not LEAF2) and non-LEAF2 sub-pages of a
//! tree whose database has `PREFIX_COMPRESSION`. There is no page flag.
//! Node 0 (the *trunk*) stores its key whole. Node `i >= 1` stores
//!
//! ```text
//! varint(s) ++ key[s..]      s = longest common prefix of key and trunk
//! ```
//!
//! The varint is big-endian base-128: 7-bit groups, most significant
//! first, bit 0x80 set on every byte but the last; at most 9 bytes.
//! `mp_pad` of a compressed page holds its longest decoded key (a hint
//! only). Branch keys, values, records and LEAF2 items are never compressed.

use crate::node::NodeLayout;
use crate::page::{Page, PageKind};
use crate::{FormatError, Result};

/// Longest varint a reader accepts.
pub const MAX_VARINT_BYTES: usize = 9;

/// Bytes of the varint of `s`.
pub fn varint_len(mut s: u64) -> usize {
    let mut n = 1;
    while s >= 0x80 {
        s >>= 7;
        n += 1;
    }
    n
}

/// Append the varint of `s` to `out`.
pub fn write_varint(out: &mut Vec<u8>, s: u64) {
    let n = varint_len(s);
    for i in (0..n).rev() {
        let group = ((s >> (7 * i)) & 0x7f) as u8;
        out.push(if i == 0 { group } else { group | 0x80 });
    }
}

/// `(value, length)` of the varint at the start of `e`, read over at most
/// `min(e.len(), 9)` bytes; `None` if no byte in that range ends it.
pub fn read_varint(e: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &b) in e.iter().take(MAX_VARINT_BYTES).enumerate() {
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// Length of the common prefix of `a` and `b`.
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Encoded form of `key` against `trunk` (maximal prefix, minimal varint).
pub fn encode(trunk: &[u8], key: &[u8]) -> Vec<u8> {
    let s = common_prefix(trunk, key);
    let mut out = Vec::with_capacity(varint_len(s as u64) + key.len() - s);
    write_varint(&mut out, s as u64);
    out.extend_from_slice(&key[s..]);
    out
}

/// Bytes [`encode`] produces, without building it.
pub fn encoded_len(trunk: &[u8], key: &[u8]) -> usize {
    let s = common_prefix(trunk, key);
    varint_len(s as u64) + key.len() - s
}

/// A key of a compressed page, decoded, with how it was stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixedKey {
    /// The full key.
    pub key: Vec<u8>,
    /// Bytes taken from the trunk (0 for the trunk and raw keys).
    pub shared: usize,
    /// Bytes of the varint (0 for the trunk and raw keys).
    pub header_len: usize,
    /// Bytes stored (`mn_ksize`).
    pub encoded_len: usize,
    /// Stored whole: node 0, or a node the raw-fallback rule reads as is.
    pub raw: bool,
}

/// Decode the stored key `e` of a node `i >= 1` against `trunk`, with the
/// newest reader's rules: an empty key or a varint that does not end within
/// 9 bytes is an error; the key is `e` itself (raw) when the shared length
/// exceeds the trunk, when the varint is not minimal, or when the first
/// suffix byte equals `trunk[s]` (the prefix was not maximal).
pub fn decode_prefixed(trunk: &[u8], e: &[u8]) -> Result<PrefixedKey> {
    if e.is_empty() {
        return Err(FormatError::Invalid("empty encoded key".into()));
    }
    let (s, h) =
        read_varint(e).ok_or_else(|| FormatError::Invalid("prefix varint does not end".into()))?;
    let raw_fallback = s > trunk.len() as u64 || h > e.len() || varint_len(s) != h || {
        let s = s as usize;
        let suffix = &e[h..];
        !suffix.is_empty() && s < trunk.len() && suffix[0] == trunk[s]
    };
    if raw_fallback {
        return Ok(PrefixedKey {
            key: e.to_vec(),
            shared: 0,
            header_len: 0,
            encoded_len: e.len(),
            raw: true,
        });
    }
    let s = s as usize;
    let mut key = Vec::with_capacity(s + e.len() - h);
    key.extend_from_slice(&trunk[..s]);
    key.extend_from_slice(&e[h..]);
    Ok(PrefixedKey {
        key,
        shared: s,
        header_len: h,
        encoded_len: e.len(),
        raw: false,
    })
}

/// Every key of a leaf page or non-LEAF2 sub-page, decoded when
/// `compressed` (the tree's database has `PREFIX_COMPRESSION`), else as
/// stored (each with `raw` set, `shared` 0).
pub fn page_keys(
    page: &Page<'_>,
    layout: NodeLayout,
    compressed: bool,
) -> Result<Vec<PrefixedKey>> {
    if page.kind() != PageKind::Leaf {
        return Err(FormatError::Invalid(format!(
            "keys of a {} page are not prefix-compressed",
            page.kind().name()
        )));
    }
    let n = page.items()?;
    let mut out = Vec::with_capacity(n);
    let mut trunk: &[u8] = &[];
    for i in 0..n {
        let node = page.node(i, layout)?;
        let k = if i == 0 || !compressed {
            if i == 0 {
                trunk = node.key;
            }
            PrefixedKey {
                key: node.key.to_vec(),
                shared: 0,
                header_len: 0,
                encoded_len: node.key.len(),
                raw: true,
            }
        } else {
            decode_prefixed(trunk, node.key)?
        };
        out.push(k);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        for (v, bytes) in [
            (0u64, &[0x00][..]),
            (5, &[0x05]),
            (127, &[0x7f]),
            (128, &[0x81, 0x00]),
            (300, &[0x82, 0x2c]),
            (16383, &[0xff, 0x7f]),
            (16384, &[0x81, 0x80, 0x00]),
        ] {
            let mut out = Vec::new();
            write_varint(&mut out, v);
            assert_eq!(out, bytes, "{v}");
            assert_eq!(read_varint(bytes), Some((v, bytes.len())));
            assert_eq!(varint_len(v), bytes.len());
        }
        assert_eq!(read_varint(&[0x80; 10]), None);
        assert_eq!(read_varint(&[]), None);
    }

    #[test]
    fn decoding_and_raw_fallback() {
        let t = b"apple";
        let d = decode_prefixed(t, b"\x04y").unwrap();
        assert_eq!(
            (d.key.as_slice(), d.shared, d.header_len, d.raw),
            (&b"apply"[..], 4, 1, false)
        );
        assert_eq!(decode_prefixed(t, b"\x05").unwrap().key, b"apple");
        assert_eq!(decode_prefixed(t, b"\x02ricot").unwrap().key, b"apricot");
        // Shared length beyond the trunk: the stored bytes are the key.
        let raw = decode_prefixed(t, b"\x09xy").unwrap();
        assert!(raw.raw);
        assert_eq!(raw.key, b"\x09xy");
        // Prefix not maximal: raw.
        assert!(decode_prefixed(t, b"\x01pz").unwrap().raw);
        // Varint not minimal (0x80 0x04 is 4 in two bytes): raw.
        assert!(decode_prefixed(t, b"\x80\x04y").unwrap().raw);
        assert!(decode_prefixed(t, b"").is_err());
        assert!(decode_prefixed(t, &[0x80; 9]).is_err());
    }

    #[test]
    fn encode_round_trips() {
        let t = b":example.org/attribute-1/value-000001";
        for k in [
            &b":example.org/attribute-1/value-000002"[..],
            b":example.org/b",
            b"zzz",
            b"",
        ] {
            let e = encode(t, k);
            assert_eq!(e.len(), encoded_len(t, k));
            if !e.is_empty() {
                assert_eq!(decode_prefixed(t, &e).unwrap().key, k);
            }
        }
    }
}
