//! Layout probe for data-version-1 files.
//!
//! Version 1 is shared by stock LMDB (data right after the key) and DLMDB
//! before data version 2 (odd-length keys followed by one pad byte), and the
//! meta page does not say which. This probe reads the data file directly
//! (plain file I/O, no engine) and tests both hypotheses against structural
//! invariants that hold for every leaf page either writer produces:
//!
//! * the nodes of a page tile the area from `upper` to the end of the page
//!   exactly (writers keep pages compact), with node sizes computed under
//!   the hypothesis (`EVEN(8 + k + d)` stock vs `EVEN(8 + EVEN(k) + d)`);
//! * data found at the hypothesised offset makes sense: an overflow page
//!   number within the file, a sub-page header with `P_LEAF|P_SUBP`, a
//!   48-byte database record with known flags.
//!
//! Only nodes with odd-length keys can tell the layouts apart; the pad
//! byte's value is never used (DLMDB does not always zero it).
//!
//! Opening a store decides its layout in the engine (see
//! [`Env::open_detect`](crate::Env::open_detect)); this file-level probe is
//! for readers that work without the engine, such as `dlmdb check` on a
//! file the engine refuses.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use dlmdb_format::bytes::{u32_at, u64_at};
use dlmdb_format::meta::{
    page_size_ok, recorded_page_size, MAGIC, META_SIZE, OFF_LAST_PG, OFF_MAGIC, OFF_TXNID,
    OFF_VERSION,
};
use dlmdb_format::{
    DbFlags, DbRecord, NodeFlags, NodeHeader, NodeLayout, PageFlags, PageHeader, DB_RECORD_SIZE,
    NODE_HEADER_SIZE, PAGE_HEADER_SIZE, P_INVALID,
};

use crate::flags::Layout;

/// Upper bound on pages read (4 GiB of 4 KiB pages), so huge stores stay quick.
const MAX_SCAN_PAGES: u64 = 1 << 20;

/// What the probe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct LayoutProbe {
    /// `mm_version` of the current meta page.
    pub data_version: u32,
    pub page_size: u32,
    pub last_pgno: u64,
    /// Leaf pages examined (the scan stops early once one layout is
    /// contradicted by 32 pages and the other by none).
    pub leaf_pages: u64,
    /// Leaf nodes with an odd-length key (the only ones that differ).
    pub odd_key_nodes: u64,
    /// Pages that break an invariant when read in stock layout.
    pub stock_bad_pages: u64,
    /// Pages that break an invariant when read in DLMDB (padded) layout.
    pub padded_bad_pages: u64,
}

/// Verdict of a [`LayoutProbe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeVerdict {
    /// Only this layout is consistent with the file.
    Proven(Layout),
    /// No odd-length keys: both layouts read the file identically.
    Identical,
    /// Odd-length keys exist but none told the layouts apart.
    Ambiguous,
    /// Both layouts break invariants (damaged file or not a v1 file).
    Inconsistent,
}

impl LayoutProbe {
    /// Interpret the counters.
    pub fn verdict(&self) -> ProbeVerdict {
        if self.data_version == 2 {
            return ProbeVerdict::Proven(Layout::DlmdbV2);
        }
        match (self.stock_bad_pages, self.padded_bad_pages) {
            (0, 0) if self.odd_key_nodes == 0 => ProbeVerdict::Identical,
            (0, 0) => ProbeVerdict::Ambiguous,
            (0, _) => ProbeVerdict::Proven(Layout::Lmdb),
            (_, 0) => ProbeVerdict::Proven(Layout::DlmdbV1),
            _ => ProbeVerdict::Inconsistent,
        }
    }
}

/// Probe the data file at `data_file` (the file itself, not the directory).
pub fn probe_layout(data_file: &Path) -> std::io::Result<LayoutProbe> {
    probe_layout_limited(data_file, MAX_SCAN_PAGES)
}

/// [`probe_layout`] reading at most `max_pages` pages after the metas, for
/// callers that must answer quickly on big stores (`dlmdb stat`). Fewer
/// pages can only make the verdict less conclusive, never wrong.
pub fn probe_layout_limited(data_file: &Path, max_pages: u64) -> std::io::Result<LayoutProbe> {
    let bad = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not an LMDB/DLMDB data file",
        )
    };
    let mut f = File::open(data_file)?;
    let mut head = [0u8; META_SIZE];
    f.read_exact(&mut head)?;
    let head_flags = PageHeader::parse(&head).map_err(|_| bad())?.flags;
    let psize = recorded_page_size(&head).unwrap_or(0) as usize;
    if !head_flags.contains(PageFlags::META) || !page_size_ok(psize) {
        return Err(bad());
    }
    let mut meta1 = [0u8; META_SIZE];
    f.seek(SeekFrom::Start(psize as u64))?;
    f.read_exact(&mut meta1)?;
    let field = |m: &[u8], off| u64_at(m, off).expect("in meta");
    let cur = if u32_at(&meta1, OFF_MAGIC) == Some(MAGIC)
        && field(&meta1, OFF_TXNID) > field(&head, OFF_TXNID)
    {
        &meta1
    } else {
        &head
    };
    let mut p = LayoutProbe {
        data_version: u32_at(cur, OFF_VERSION).expect("in meta"),
        page_size: psize as u32,
        last_pgno: field(cur, OFF_LAST_PG),
        ..Default::default()
    };
    if p.data_version != 1 {
        return Ok(p);
    }
    let file_pages = f.metadata()?.len() / psize as u64;
    let last = p.last_pgno.min(file_pages.saturating_sub(1));
    let mut page = vec![0u8; psize];
    let mut pgno = 2u64;
    while pgno <= last {
        f.seek(SeekFrom::Start(pgno * psize as u64))?;
        f.read_exact(&mut page)?;
        let h = PageHeader::parse(&page).expect("a whole page");
        if h.pgno != pgno {
            pgno += 1;
            continue;
        }
        if h.flags.contains(PageFlags::OVERFLOW) {
            pgno += u64::from(h.overflow_pages()).max(1);
            continue;
        }
        if h.flags.contains(PageFlags::LEAF)
            && !h
                .flags
                .intersects(PageFlags::LEAF2 | PageFlags::BRANCH | PageFlags::SUBP)
        {
            p.leaf_pages += 1;
            let (odd, stock_ok) = check_leaf(&page, psize, NodeLayout::Stock, p.last_pgno);
            let (_, padded_ok) = check_leaf(&page, psize, NodeLayout::Padded, p.last_pgno);
            p.odd_key_nodes += odd;
            p.stock_bad_pages += (!stock_ok) as u64;
            p.padded_bad_pages += (!padded_ok) as u64;
        }
        pgno += 1;
        // Enough evidence: a correct hypothesis never breaks an invariant.
        let decided = (p.stock_bad_pages >= 32 && p.padded_bad_pages == 0)
            || (p.padded_bad_pages >= 32 && p.stock_bad_pages == 0);
        if decided || pgno - 2 >= max_pages {
            break;
        }
    }
    Ok(p)
}

/// Check one leaf page (or sub-page: `area` = its size) under one layout.
/// Returns (odd-length-key nodes, page consistent).
fn check_leaf(page: &[u8], area: usize, layout: NodeLayout, last_pgno: u64) -> (u64, bool) {
    let Ok(h) = PageHeader::parse(page) else {
        return (0, false);
    };
    let upper = usize::from(h.upper);
    let Some(n) = h.items().filter(|_| h.lower <= h.upper && upper <= area) else {
        return (0, false);
    };
    let mut spans = Vec::with_capacity(n);
    let mut odd = 0;
    let mut ok = true;
    for i in 0..n {
        let off =
            dlmdb_format::bytes::u16_at(page, PAGE_HEADER_SIZE + 2 * i).map_or(0, usize::from);
        if off < upper || off + NODE_HEADER_SIZE > area {
            return (odd, false);
        }
        let node = NodeHeader::parse(page, off).expect("header within the area");
        if node.ksize % 2 == 1 {
            odd += 1;
        }
        let data = node.data_offset(layout);
        let dlen = node.data_len();
        let end = data + dlen;
        if end > area {
            return (odd, false);
        }
        let d = &page[data..end];
        let kind = node.flags() & (NodeFlags::BIGDATA | NodeFlags::SUBDATA | NodeFlags::DUPDATA);
        ok &= if kind.is_empty() {
            true
        } else if kind == NodeFlags::BIGDATA {
            u64_at(d, 0).is_some_and(|ov| (2..=last_pgno).contains(&ov))
        } else if kind == NodeFlags::SUBDATA || kind == NodeFlags::SUBDATA | NodeFlags::DUPDATA {
            dlen == DB_RECORD_SIZE && plausible_record(d, last_pgno)
        } else if kind == NodeFlags::DUPDATA {
            PageHeader::parse(d).is_ok_and(|sh| {
                sh.flags.contains(PageFlags::LEAF | PageFlags::SUBP)
                    && sh.lower >= PAGE_HEADER_SIZE as u16
                    && sh.lower <= sh.upper
                    && usize::from(sh.upper) <= dlen
            })
        } else {
            false
        };
        spans.push((off, dlmdb_format::even(end) - off));
    }
    // Compact pages: nodes tile [upper, area) with no gap and no overlap.
    spans.sort_unstable();
    let mut at = upper;
    for (start, len) in spans {
        if start != at {
            return (odd, false);
        }
        at = start + len;
    }
    (odd, ok && at == area)
}

/// A 48-byte database record that could have been written by either writer.
fn plausible_record(r: &[u8], last_pgno: u64) -> bool {
    let Some(rec) = DbRecord::parse(r) else {
        return false;
    };
    if DbFlags::from_bits(rec.flags).is_none() || rec.depth > 64 {
        return false;
    }
    if rec.depth == 0 {
        return rec.root == P_INVALID;
    }
    (2..=last_pgno).contains(&rec.root)
}
