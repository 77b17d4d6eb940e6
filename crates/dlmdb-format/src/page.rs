//! Page header and page-level access, stock LMDB's and DLMDB's.
//!
//! ```text
//! offset size field
//!  0     8    pgno    page number (sub-pages: meaningless, ignore)
//!  8     2    pad     LEAF2: item size; compressed leaves: longest decoded
//!                     key; elsewhere stale, ignore
//! 10     2    flags   PageFlags
//! 12     2    lower   end of the pointer array (16 + 2 * items)
//! 14     2    upper   start of the node area
//! 12     4    pages   overflow pages only (overlays lower/upper): run length
//! 16     ...  ptr[i]  u16 node offsets, in key order (branch, leaf, sub-page)
//!             items   LEAF2: item i at 16 + i * pad, no pointers
//! ```
//!
//! A sub-page (the data of an `F_DUPDATA` leaf node) has the same layout
//! with the node's data size in place of the page size; its pointers are
//! relative to the sub-page's first byte. [`Page`] works on either: it is a
//! view over the page's bytes, however many there are.

use crate::bytes::{req_u16, slice};
use crate::node::{Node, NodeLayout};
use crate::{FormatError, Result};

/// Bytes of the page header.
pub const PAGE_HEADER_SIZE: usize = 16;
/// "No page": the root of an empty tree.
pub const P_INVALID: u64 = u64::MAX;

/// Offset of the overflow run length (u32, overflow pages only).
pub const OFF_OVERFLOW_PAGES: usize = 12;

bitflags::bitflags! {
    /// The page header's `flags` word.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct PageFlags: u16 {
        /// Internal page: nodes hold child page numbers.
        const BRANCH = 0x01;
        /// Leaf page: nodes hold key and data.
        const LEAF = 0x02;
        /// First page of an overflow run.
        const OVERFLOW = 0x04;
        /// Meta page (pages 0 and 1).
        const META = 0x08;
        /// In-memory "modified" bit; always set in sub-pages.
        const DIRTY = 0x10;
        /// Fixed-size items without node headers (DUPFIXED).
        const LEAF2 = 0x20;
        /// Sub-page stored inside a leaf node.
        const SUBP = 0x40;
        /// DLMDB: branch nodes carry their subtree's entry count.
        const COUNTED = 0x80;
        /// In-memory: freed in the transaction that allocated it.
        const LOOSE = 0x4000;
        /// In-memory: spill bookkeeping.
        const KEEP = 0x8000;
    }
}

impl PageFlags {
    /// The type bits: exactly one of them says what a page is.
    pub const TYPE: PageFlags = PageFlags::BRANCH
        .union(PageFlags::LEAF)
        .union(PageFlags::OVERFLOW)
        .union(PageFlags::META);
    /// Bits only a writer's memory uses; a page on disk never has them.
    pub const IN_MEMORY: PageFlags = PageFlags::DIRTY
        .union(PageFlags::LOOSE)
        .union(PageFlags::KEEP);

    /// Names of the set bits, `|`-separated (`BRANCH|COUNTED`), from the
    /// bitflags definitions; unknown bits in hex.
    pub fn names(self) -> String {
        crate::record::flag_names(self)
    }
}

/// What a page is, by its type bits (the other bits are ignored, as
/// readers must).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    Branch,
    Leaf,
    /// LEAF2 (fixed-size items, DUPFIXED sub-trees and sub-pages).
    Leaf2,
    Overflow,
    Meta,
    /// None of the type bits (not a page of any tree).
    Unknown,
}

impl PageKind {
    pub fn name(self) -> &'static str {
        match self {
            PageKind::Branch => "branch",
            PageKind::Leaf => "leaf",
            PageKind::Leaf2 => "leaf2",
            PageKind::Overflow => "overflow",
            PageKind::Meta => "meta",
            PageKind::Unknown => "unknown",
        }
    }
}

/// How a page's flags contradict the role of a B+tree page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleProblem {
    /// Not exactly one of BRANCH and LEAF, or OVERFLOW, META or SUBP set.
    NotTreePage,
    /// A branch page flagged LEAF2.
    BranchWithLeaf2,
    /// A leaf page flagged COUNTED.
    LeafWithCounted,
}

impl std::fmt::Display for RoleProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RoleProblem::NotTreePage => "not a branch or leaf page",
            RoleProblem::BranchWithLeaf2 => "branch page with P_LEAF2",
            RoleProblem::LeafWithCounted => "leaf page with P_COUNTED",
        })
    }
}

fixed_layout! {
    /// The 16-byte header, decoded.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct PageHeader {
        /// Page number (sub-pages: meaningless).
        pgno: u64 = OFF_PGNO @ 0,
        /// LEAF2: the item size; compressed leaves: the longest decoded
        /// key; elsewhere stale.
        pad: u16 = OFF_PAD @ 8,
        /// The flags word as stored (unknown bits kept).
        raw_flags: u16 = OFF_FLAGS @ 10,
        /// End of the pointer array (16 + 2 * items).
        lower: u16 = OFF_LOWER @ 12,
        /// Start of the node area.
        upper: u16 = OFF_UPPER @ 14,
    }
    derived {
        /// [`PageHeader::raw_flags`] as flags.
        flags: PageFlags = PageFlags::from_bits_retain(raw_flags),
    }
}

impl PageHeader {
    /// Decode the first 16 bytes of `b`.
    pub fn parse(b: &[u8]) -> Result<PageHeader> {
        slice(b, 0, PAGE_HEADER_SIZE, "page header")?;
        Ok(Self::read_fields(b).expect("in header"))
    }

    pub fn kind(&self) -> PageKind {
        let f = self.flags;
        if f.contains(PageFlags::BRANCH) {
            PageKind::Branch
        } else if f.contains(PageFlags::LEAF) && f.contains(PageFlags::LEAF2) {
            PageKind::Leaf2
        } else if f.contains(PageFlags::LEAF) {
            PageKind::Leaf
        } else if f.contains(PageFlags::OVERFLOW) {
            PageKind::Overflow
        } else if f.contains(PageFlags::META) {
            PageKind::Meta
        } else {
            PageKind::Unknown
        }
    }

    /// Overflow pages: the run length at offset 12 (overlays lower/upper).
    pub fn overflow_pages(&self) -> u32 {
        u32::from(self.lower) | (u32::from(self.upper) << 16)
    }

    /// Items on a branch, leaf or LEAF2 page: `(lower - 16) / 2`; `None`
    /// when `lower` is below the header or odd past it.
    pub fn items(&self) -> Option<usize> {
        let lower = usize::from(self.lower);
        (lower >= PAGE_HEADER_SIZE && (lower - PAGE_HEADER_SIZE).is_multiple_of(2))
            .then(|| (lower - PAGE_HEADER_SIZE) / 2)
    }

    /// Unused bytes between the pointer array and the nodes (`upper - lower`).
    pub fn free_bytes(&self) -> Option<usize> {
        usize::from(self.upper).checked_sub(usize::from(self.lower))
    }

    /// Whether nodes on this page carry an 8-byte subtree count.
    pub fn counted_branch(&self) -> bool {
        self.flags.contains(PageFlags::BRANCH | PageFlags::COUNTED)
    }

    /// Why the flags do not fit a page of a B+tree, or `None`: exactly one
    /// of BRANCH and LEAF, no OVERFLOW, META or SUBP; a branch page never
    /// LEAF2 (its nodes are not packed items) and a leaf page never
    /// COUNTED (a reader would skip 8 key bytes as a count).
    pub fn tree_role_problem(&self) -> Option<RoleProblem> {
        let f = self.flags;
        let branch = f.contains(PageFlags::BRANCH);
        if branch == f.contains(PageFlags::LEAF)
            || f.intersects(PageFlags::OVERFLOW | PageFlags::META | PageFlags::SUBP)
        {
            Some(RoleProblem::NotTreePage)
        } else if branch && f.contains(PageFlags::LEAF2) {
            Some(RoleProblem::BranchWithLeaf2)
        } else if !branch && f.contains(PageFlags::COUNTED) {
            Some(RoleProblem::LeafWithCounted)
        } else {
            None
        }
    }

    /// Why the flags do not fit a DUPSORT sub-page, or `None`: LEAF and
    /// SUBP, never BRANCH, OVERFLOW, META or COUNTED (LEAF2 allowed).
    pub fn sub_page_role_problem(&self) -> Option<&'static str> {
        let f = self.flags;
        (!f.contains(PageFlags::LEAF | PageFlags::SUBP)
            || f.intersects(
                PageFlags::BRANCH | PageFlags::OVERFLOW | PageFlags::META | PageFlags::COUNTED,
            ))
        .then_some("not a leaf sub-page")
    }

    /// Items on a LEAF2 page or sub-page of `size` bytes with `item_size`
    /// items, by the fit rule every reader applies: `lower` even, at least
    /// 16 and not above `upper`, and the packed items plus the free space
    /// `upper - lower` within `size` (LEAF2 bookkeeping moves `lower` up by
    /// 2 and `upper` down by `item_size - 2` per item).
    pub fn leaf2_items(&self, size: usize, item_size: usize) -> Result<usize> {
        let (lower, upper) = (usize::from(self.lower), usize::from(self.upper));
        if lower < PAGE_HEADER_SIZE || !lower.is_multiple_of(2) || lower > upper {
            return Err(FormatError::Invalid(format!(
                "bad lower/upper {lower}/{upper}"
            )));
        }
        let n = (lower - PAGE_HEADER_SIZE) / 2;
        let used = n
            .checked_mul(item_size)
            .and_then(|b| b.checked_add(PAGE_HEADER_SIZE + (upper - lower)));
        if used.is_none_or(|u| u > size) {
            return Err(FormatError::Invalid(format!(
                "{n} items of {item_size} bytes and {} free bytes (upper {upper}) exceed {size} bytes",
                upper - lower
            )));
        }
        Ok(n)
    }

    /// `upper` a LEAF2 page of `size` bytes holding `n` items of
    /// `item_size` bytes has when kept by the bookkeeping above:
    /// `size - n * (item_size - 2)`. Writers edit a LEAF2 page by these
    /// steps, so a page (not a sub-page, whose size follows its items)
    /// with another `upper` cannot be written.
    /// (For 1-byte items `upper` grows by one per item, past `size`.)
    pub fn leaf2_expected_upper(size: usize, n: usize, item_size: usize) -> Option<usize> {
        let per_item = i64::try_from(item_size).ok()? - 2;
        let upper = i64::try_from(size).ok()? - i64::try_from(n).ok()?.checked_mul(per_item)?;
        usize::try_from(upper).ok()
    }
}

/// A branch, leaf, LEAF2 or sub-page: its bytes and decoded header.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    pub bytes: &'a [u8],
    pub header: PageHeader,
}

impl<'a> Page<'a> {
    /// View `bytes` as a page. Checks only that the header is there.
    pub fn parse(bytes: &'a [u8]) -> Result<Page<'a>> {
        Ok(Page {
            bytes,
            header: PageHeader::parse(bytes)?,
        })
    }

    /// View the data of a `DUPDATA` leaf node as a sub-page: a leaf (or
    /// LEAF2) page the size of the data, flagged `SUBP`; its pointers are
    /// relative to its first byte and its `pgno` means nothing.
    pub fn parse_subpage(data: &'a [u8]) -> Result<Page<'a>> {
        let p = Page::parse(data)?;
        let f = p.header.flags;
        if !f.contains(PageFlags::SUBP) || !f.contains(PageFlags::LEAF) {
            return Err(FormatError::Invalid(format!(
                "sub-page flags {} ({:#06x}) lack LEAF|SUBP",
                f.names(),
                p.header.raw_flags
            )));
        }
        Ok(p)
    }

    pub fn kind(&self) -> PageKind {
        self.header.kind()
    }

    /// Number of nodes / items, checked against the page's size and
    /// `upper` (a `lower` past `upper` or past the end is an error).
    pub fn items(&self) -> Result<usize> {
        let h = &self.header;
        let n = h.items().ok_or_else(|| {
            FormatError::Invalid(format!("lower {} is not 16 + 2 * items", h.lower))
        })?;
        if usize::from(h.lower) > self.bytes.len() || h.lower > h.upper {
            return Err(FormatError::Invalid(format!(
                "lower {} / upper {} do not fit a {}-byte page",
                h.lower,
                h.upper,
                self.bytes.len()
            )));
        }
        if usize::from(h.upper) > self.bytes.len() {
            return Err(FormatError::Invalid(format!(
                "upper {} is past the end of a {}-byte page",
                h.upper,
                self.bytes.len()
            )));
        }
        Ok(n)
    }

    /// Node pointer `i` as stored (at `16 + 2 * i`), unchecked against
    /// `upper`; `None` when it lies past the bytes.
    pub fn pointer(&self, i: usize) -> Option<usize> {
        crate::bytes::u16_at(self.bytes, PAGE_HEADER_SIZE + 2 * i).map(usize::from)
    }

    /// Offset of node `i` (pointer at `16 + 2 * i`), checked to lie in the
    /// node area (`upper ..` end of page) and to be even.
    pub fn node_offset(&self, i: usize) -> Result<usize> {
        let n = self.items()?;
        if i >= n {
            return Err(FormatError::Invalid(format!("node {i} of {n}")));
        }
        let off = usize::from(req_u16(
            self.bytes,
            PAGE_HEADER_SIZE + 2 * i,
            "node pointer",
        )?);
        if off < usize::from(self.header.upper) || off >= self.bytes.len() || off % 2 == 1 {
            return Err(FormatError::Invalid(format!(
                "node {i} pointer {off} is outside the node area {}..{}",
                self.header.upper,
                self.bytes.len()
            )));
        }
        Ok(off)
    }

    /// Node `i` of a branch, leaf or non-LEAF2 sub-page.
    pub fn node(&self, i: usize, layout: NodeLayout) -> Result<Node<'a>> {
        match self.kind() {
            PageKind::Branch | PageKind::Leaf => {}
            k => {
                return Err(FormatError::Invalid(format!(
                    "a {} page has no nodes",
                    k.name()
                )))
            }
        }
        let off = self.node_offset(i)?;
        Node::parse(
            self.bytes,
            off,
            self.kind() == PageKind::Branch,
            self.header.counted_branch(),
            layout,
        )
    }

    /// Item size of a LEAF2 page or sub-page (`pad`); for a LEAF2 leaf of
    /// a sub-database the record's `md_pad` says the same.
    pub fn leaf2_item_size(&self) -> usize {
        usize::from(self.header.pad)
    }

    /// Item `i` of a LEAF2 page: `item_size` bytes at `16 + i * item_size`.
    pub fn leaf2_item(&self, i: usize, item_size: usize) -> Result<&'a [u8]> {
        if self.kind() != PageKind::Leaf2 {
            return Err(FormatError::Invalid("not a LEAF2 page".into()));
        }
        if item_size == 0 {
            return Err(FormatError::Invalid("LEAF2 item size 0".into()));
        }
        let n = self.items()?;
        if i >= n {
            return Err(FormatError::Invalid(format!("item {i} of {n}")));
        }
        let off = i
            .checked_mul(item_size)
            .and_then(|o| o.checked_add(PAGE_HEADER_SIZE))
            .ok_or_else(|| FormatError::Invalid("LEAF2 item offset overflows".into()))?;
        slice(self.bytes, off, item_size, "LEAF2 item")
    }

    /// Bytes the page's content uses: header, pointers and node area.
    pub fn used_bytes(&self) -> Option<usize> {
        Some(self.bytes.len() - self.header.free_bytes()?.min(self.bytes.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64-byte leaf with two stock nodes: "a"->"xy" and "bc"->"z".
    fn small_leaf() -> Vec<u8> {
        let mut p = vec![0u8; 64];
        p[0] = 7; // pgno
        p[10] = 0x02; // LEAF
        p[12] = 20; // lower: 2 items
        let n0 = 64 - 12; // 8 + 1 + 2 = 11 -> 12
        let n1 = n0 - 12; // 8 + 2 + 1 = 11 -> 12
        p[14] = n1 as u8;
        p[16] = n0 as u8;
        p[18] = n1 as u8;
        p[n0..n0 + 8].copy_from_slice(&[2, 0, 0, 0, 0, 0, 1, 0]);
        p[n0 + 8..n0 + 11].copy_from_slice(b"axy");
        p[n1..n1 + 8].copy_from_slice(&[1, 0, 0, 0, 0, 0, 2, 0]);
        p[n1 + 8..n1 + 11].copy_from_slice(b"bcz");
        p
    }

    #[test]
    fn header_fields_at_their_offsets() {
        let p = small_leaf();
        let h = PageHeader::parse(&p).unwrap();
        assert_eq!(h.pgno, 7);
        assert_eq!(h.kind(), PageKind::Leaf);
        assert_eq!(h.items(), Some(2));
        assert_eq!(h.free_bytes(), Some(40 - 20));
        assert_eq!(h.flags.names(), "LEAF");
        assert!(PageHeader::parse(&p[..15]).is_err());
        assert_eq!(h.tree_role_problem(), None);
        let role = |f: u16| {
            let mut q = p.clone();
            q[10..12].copy_from_slice(&f.to_le_bytes());
            PageHeader::parse(&q).unwrap().tree_role_problem()
        };
        assert_eq!(role(0x81), None);
        assert_eq!(role(0x03), Some(RoleProblem::NotTreePage));
        assert_eq!(role(0x42), Some(RoleProblem::NotTreePage));
        assert_eq!(role(0x21), Some(RoleProblem::BranchWithLeaf2));
        assert_eq!(role(0x82), Some(RoleProblem::LeafWithCounted));
    }

    #[test]
    fn nodes_and_their_keys() {
        let p = small_leaf();
        let page = Page::parse(&p).unwrap();
        assert_eq!(page.items().unwrap(), 2);
        let a = page.node(0, NodeLayout::Stock).unwrap();
        assert_eq!(a.key, b"a");
        assert_eq!(a.data, b"xy");
        let b = page.node(1, NodeLayout::Stock).unwrap();
        assert_eq!(b.key, b"bc");
        assert_eq!(b.data, b"z");
        // Padded layout: "a" is followed by one pad byte, so data is "y" + 1
        // byte past the node; it still fits the page here but differs.
        let a2 = page.node(0, NodeLayout::Padded).unwrap();
        assert_eq!(a2.data, b"y\0");
        assert!(page.node(2, NodeLayout::Stock).is_err());
    }

    #[test]
    fn bad_pointers_are_errors() {
        let mut p = small_leaf();
        p[16] = 3; // inside the header
        let page = Page::parse(&p).unwrap();
        assert!(page.node(0, NodeLayout::Stock).is_err());
        let mut p = small_leaf();
        p[12] = 200; // lower past the end
        assert!(Page::parse(&p).unwrap().items().is_err());
    }

    #[test]
    fn leaf2_items() {
        let mut p = vec![0u8; 48];
        p[8] = 4; // item size
        p[10] = 0x72; // LEAF|DIRTY|LEAF2|SUBP
        p[12] = 26; // 5 items
        p[14] = 38; // 48 - 5 * (4 - 2)
        for i in 0..5u8 {
            p[16 + 4 * i as usize] = i + 1;
        }
        let page = Page::parse(&p).unwrap();
        assert_eq!(page.kind(), PageKind::Leaf2);
        assert_eq!(page.items().unwrap(), 5);
        assert_eq!(page.leaf2_item(4, 4).unwrap(), &[5, 0, 0, 0]);
        assert!(page.leaf2_item(5, 4).is_err());
        assert_eq!(page.header.flags.names(), "LEAF|DIRTY|LEAF2|SUBP");
        assert!(Page::parse_subpage(&p).is_ok());
        let h = page.header;
        assert_eq!(h.leaf2_items(48, 4).unwrap(), 5);
        assert!(h.leaf2_items(47, 4).is_err());
        assert_eq!(PageHeader::leaf2_expected_upper(48, 5, 4), Some(38));
        assert_eq!(PageHeader::leaf2_expected_upper(4096, 3, 1), Some(4099));
        assert_eq!(PageHeader::leaf2_expected_upper(64, 10, 10), None);
        assert_eq!(h.sub_page_role_problem(), None);
        p[10] = 0x22;
        assert!(Page::parse_subpage(&p).is_err());
    }

    #[test]
    fn overflow_run_length_overlays_lower_upper() {
        let mut p = vec![0u8; 16];
        p[10] = 0x04;
        p[12..16].copy_from_slice(&70_000u32.to_le_bytes());
        let h = PageHeader::parse(&p).unwrap();
        assert_eq!(h.kind(), PageKind::Overflow);
        assert_eq!(h.overflow_pages(), 70_000);
    }
}
