//! Nodes of branch and leaf pages, stock LMDB's and DLMDB's.
//!
//! ```text
//! offset in node  size   branch node               leaf node
//!  0              2      child pgno bits 0-15      data size bits 0-15
//!  2              2      child pgno bits 16-31     data size bits 16-31
//!  4              2      child pgno bits 32-47     NodeFlags
//!  6              2      key size                  key size
//!  8              8      subtree count (COUNTED branch pages only)
//!  8 (16 counted) ksize  key                       key
//!  then                  -                         data: value, 8-byte overflow
//!                                                  pgno, 48-byte record or sub-page
//! ```
//!
//! The key area is `ksize` bytes in stock LMDB and `EVEN(ksize)` bytes in
//! DLMDB's layouts (one pad byte, value meaningless, after odd keys); on a
//! counted branch page it is always even. A node occupies
//! `EVEN(8 [+8] + key area + data area)` bytes plus its 2-byte pointer.

use crate::bytes::{req_u64, slice};
use crate::{even, Result};

/// Bytes of the node header.
pub const NODE_HEADER_SIZE: usize = 8;
/// Bytes of the subtree count on counted branch pages.
pub const COUNT_SIZE: usize = 8;
/// Longest key (and DUPSORT duplicate) LMDB and DLMDB write: 511 bytes,
/// the stock `mdb_env_get_maxkeysize`. A key on a page may be longer only
/// when damaged: a prefix-compressed node whose decoded key is longer
/// cannot be read (`MDB_BAD_VALSIZE`), and a compacting copy refuses any
/// longer key, separator or duplicate (`MDB_CORRUPTED`).
pub const MAX_KEY_SIZE: usize = 511;

/// Offset in the node of the subtree count (u64, counted branch pages).
pub const OFF_COUNT: usize = 8;

bitflags::bitflags! {
    /// A leaf node's flags word.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct NodeFlags: u16 {
        /// Data is the 8-byte first page of an overflow run; the data size
        /// is the value's.
        const BIGDATA = 0x01;
        /// Data is a 48-byte database record (named database; with
        /// DUPDATA a duplicate sub-database).
        const SUBDATA = 0x02;
        /// Data is a sub-page of duplicates (with SUBDATA: a sub-database).
        const DUPDATA = 0x04;
    }
}

impl NodeFlags {
    /// `BIGDATA|...` names of the set bits, unknown bits in hex.
    pub fn names(self) -> String {
        crate::record::flag_names(self)
    }
}

/// Where a leaf node's data starts relative to its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeLayout {
    /// Stock LMDB: data right after the key.
    Stock,
    /// DLMDB (padded version 1 and data version 2): odd keys get one pad byte.
    Padded,
}

impl NodeLayout {
    /// `Padded` when `padded`, else `Stock`.
    pub fn from_padded(padded: bool) -> NodeLayout {
        if padded {
            NodeLayout::Padded
        } else {
            NodeLayout::Stock
        }
    }

    /// Bytes the key of `ksize` bytes occupies in a leaf or uncounted branch node.
    pub fn key_area(self, ksize: usize) -> usize {
        match self {
            NodeLayout::Stock => ksize,
            NodeLayout::Padded => even(ksize),
        }
    }

    /// Bytes a leaf node occupies (without its pointer): `data_area` is the
    /// value size, 8 for an overflow reference, 48 for a record, or the
    /// sub-page size.
    pub fn leaf_node_size(self, ksize: usize, data_area: usize) -> usize {
        even(NODE_HEADER_SIZE + self.key_area(ksize) + data_area)
    }

    /// Bytes a branch node occupies (without its pointer).
    pub fn branch_node_size(self, ksize: usize, counted: bool) -> usize {
        if counted {
            NODE_HEADER_SIZE + COUNT_SIZE + even(ksize)
        } else {
            even(NODE_HEADER_SIZE + self.key_area(ksize))
        }
    }
}

fixed_layout! {
    /// The 8-byte header of the node at `offset` of a page or sub-page,
    /// decoded without its key or data, so that a reader can judge a node
    /// whose key or data would run past the page. Offsets are in the node.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct NodeHeader {
        /// Branch: child pgno bits 0-15; leaf: data size bits 0-15.
        lo: u16 = OFF_LO @ 0,
        /// Branch: child pgno bits 16-31; leaf: data size bits 16-31.
        hi: u16 = OFF_HI @ 2,
        /// Branch: child pgno bits 32-47; leaf: the flags.
        flags_word: u16 = OFF_FLAGS @ 4,
        /// Key size.
        ksize: u16 = OFF_KSIZE @ 6,
    }
    derived {
        /// Offset of the node in its page (or sub-page); set by
        /// [`NodeHeader::parse`].
        offset: usize = 0,
    }
}

impl NodeHeader {
    /// Decode the header at `offset` of `page`.
    pub fn parse(page: &[u8], offset: usize) -> Result<NodeHeader> {
        let h = slice(page, offset, NODE_HEADER_SIZE, "node header")?;
        Ok(NodeHeader {
            offset,
            ..Self::read_fields(h).expect("8 bytes")
        })
    }

    /// Branch nodes: the child page number (48 bits: lo, hi, flags word).
    pub fn child_pgno(&self) -> u64 {
        u64::from(self.lo) | (u64::from(self.hi) << 16) | (u64::from(self.flags_word) << 32)
    }

    /// Leaf nodes: the data size field (lo, hi).
    pub fn data_size(&self) -> u32 {
        u32::from(self.lo) | (u32::from(self.hi) << 16)
    }

    /// Leaf nodes: the flags, unknown bits kept.
    pub fn flags(&self) -> NodeFlags {
        NodeFlags::from_bits_retain(self.flags_word)
    }

    /// Offset in the page of the key: after the header, and after the
    /// subtree count on a counted branch page.
    pub fn key_offset(&self, counted_branch: bool) -> usize {
        self.offset + NODE_HEADER_SIZE + if counted_branch { COUNT_SIZE } else { 0 }
    }

    /// Leaf nodes: offset in the page of the data, after the key area.
    pub fn data_offset(&self, layout: NodeLayout) -> usize {
        self.key_offset(false) + layout.key_area(usize::from(self.ksize))
    }

    /// Leaf nodes: bytes of the data area (8 for an overflow reference).
    pub fn data_len(&self) -> usize {
        if self.flags().contains(NodeFlags::BIGDATA) {
            8
        } else {
            self.data_size() as usize
        }
    }
}

/// The subtree count of the counted branch node at `offset` of `page`.
pub fn subtree_count(page: &[u8], offset: usize) -> Result<u64> {
    req_u64(page, offset + OFF_COUNT, "subtree count")
}

/// One node, decoded in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node<'a> {
    /// Offset of the node in its page (or sub-page).
    pub offset: usize,
    /// Offset 0.
    pub lo: u16,
    /// Offset 2.
    pub hi: u16,
    /// Offset 4.
    pub flags_word: u16,
    /// Offset 6: key size as stored (on compressed pages the encoded size).
    pub ksize: u16,
    /// Offset 8 on counted branch pages.
    pub count: Option<u64>,
    /// The key bytes as stored.
    pub key: &'a [u8],
    /// Leaf nodes: the data area (value, 8-byte overflow pgno, 48-byte
    /// record or sub-page); empty for branch nodes.
    pub data: &'a [u8],
    /// Branch node (no data; `lo|hi|flags` is the child).
    pub branch: bool,
    /// Bytes the node occupies on the page (even), pointer not included.
    pub size: usize,
}

impl<'a> Node<'a> {
    /// Decode the node at `offset` of `page` (a page or sub-page image).
    pub fn parse(
        page: &'a [u8],
        offset: usize,
        branch: bool,
        counted: bool,
        layout: NodeLayout,
    ) -> Result<Node<'a>> {
        let h = NodeHeader::parse(page, offset)?;
        let counted = branch && counted;
        let count = if counted {
            Some(subtree_count(page, offset)?)
        } else {
            None
        };
        let k = usize::from(h.ksize);
        let key = slice(page, h.key_offset(counted), k, "node key")?;
        let (data, size) = if branch {
            (&page[0..0], layout.branch_node_size(k, counted))
        } else {
            let dlen = h.data_len();
            let data = slice(page, h.data_offset(layout), dlen, "node data")?;
            (data, layout.leaf_node_size(k, dlen))
        };
        Ok(Node {
            offset,
            lo: h.lo,
            hi: h.hi,
            flags_word: h.flags_word,
            ksize: h.ksize,
            count,
            key,
            data,
            branch,
            size,
        })
    }

    /// The 8-byte header alone.
    pub fn header(&self) -> NodeHeader {
        NodeHeader {
            offset: self.offset,
            lo: self.lo,
            hi: self.hi,
            flags_word: self.flags_word,
            ksize: self.ksize,
        }
    }

    /// Branch nodes: the child page number (48 bits).
    pub fn child_pgno(&self) -> u64 {
        self.header().child_pgno()
    }

    /// Leaf nodes: the flags.
    pub fn flags(&self) -> NodeFlags {
        if self.branch {
            NodeFlags::empty()
        } else {
            NodeFlags::from_bits_retain(self.flags_word)
        }
    }

    /// Leaf nodes: the data size field (the value's size for overflow values).
    pub fn data_size(&self) -> u32 {
        self.header().data_size()
    }

    /// `BIGDATA` leaf nodes: first page of the overflow run.
    pub fn overflow_pgno(&self) -> Option<u64> {
        (self.flags().contains(NodeFlags::BIGDATA) && self.data.len() == 8)
            .then(|| u64::from_le_bytes(self.data.try_into().expect("8 bytes")))
    }

    /// Byte range of the node in its page (for highlighting).
    pub fn span(&self) -> std::ops::Range<usize> {
        self.offset..self.offset + self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_branch_node() {
        // ksize 3, count 1234, child pgno 0x0001_0002_0003, key "abc" + pad.
        let mut b = vec![0u8; 32];
        b[0..8].copy_from_slice(&[3, 0, 2, 0, 1, 0, 3, 0]);
        b[8..16].copy_from_slice(&1234u64.to_le_bytes());
        b[16..19].copy_from_slice(b"abc");
        let n = Node::parse(&b, 0, true, true, NodeLayout::Padded).unwrap();
        assert_eq!(n.child_pgno(), 0x0001_0002_0003);
        assert_eq!(n.count, Some(1234));
        assert_eq!(n.key, b"abc");
        assert_eq!(n.size, 20);
        let plain = Node::parse(&b, 0, true, false, NodeLayout::Stock).unwrap();
        assert_eq!(plain.count, None);
        assert_eq!(plain.size, 12);
    }

    #[test]
    fn overflow_reference() {
        let mut b = vec![0u8; 24];
        b[0..8].copy_from_slice(&[0x20, 0x4e, 0, 0, 1, 0, 2, 0]); // 20000 bytes, BIGDATA, ksize 2
        b[8..10].copy_from_slice(b"ok");
        b[10..18].copy_from_slice(&77u64.to_le_bytes());
        let n = Node::parse(&b, 0, false, false, NodeLayout::Stock).unwrap();
        assert_eq!(n.data_size(), 20000);
        assert_eq!(n.overflow_pgno(), Some(77));
        assert_eq!(n.flags().names(), "BIGDATA");
        assert_eq!(n.size, 18);
    }

    #[test]
    fn sizes() {
        assert_eq!(NodeLayout::Stock.leaf_node_size(3, 4), 16);
        assert_eq!(NodeLayout::Padded.leaf_node_size(3, 4), 16);
        assert_eq!(NodeLayout::Stock.leaf_node_size(3, 3), 14);
        assert_eq!(NodeLayout::Padded.leaf_node_size(3, 3), 16);
        assert_eq!(NodeLayout::Padded.branch_node_size(0, true), 16);
    }

    #[test]
    fn data_past_the_end_is_an_error() {
        let b = [0xff, 0xff, 0, 0, 0, 0, 1, 0, b'k', 0];
        assert!(Node::parse(&b, 0, false, false, NodeLayout::Stock).is_err());
        assert!(Node::parse(&b, 4, false, false, NodeLayout::Stock).is_err());
    }
}
