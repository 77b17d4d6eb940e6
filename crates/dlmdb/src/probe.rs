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

use crate::flags::Layout;

const P_BRANCH: u16 = 0x01;
const P_LEAF: u16 = 0x02;
const P_OVERFLOW: u16 = 0x04;
const P_LEAF2: u16 = 0x20;
const P_SUBP: u16 = 0x40;
const F_BIGDATA: u16 = 0x01;
const F_SUBDATA: u16 = 0x02;
const F_DUPDATA: u16 = 0x04;
const MAGIC: u32 = 0xBEEF_C0DE;
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

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}
fn even(x: usize) -> usize {
    (x + 1) & !1
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
    let mut head = [0u8; 152];
    f.read_exact(&mut head)?;
    if u32_at(&head, 16) != MAGIC || u16_at(&head, 10) & 0x08 == 0 {
        return Err(bad());
    }
    let psize = u32_at(&head, 40) as usize;
    if !(512..=65536).contains(&psize) || !psize.is_power_of_two() {
        return Err(bad());
    }
    let mut meta1 = [0u8; 152];
    f.seek(SeekFrom::Start(psize as u64))?;
    f.read_exact(&mut meta1)?;
    let cur = if u32_at(&meta1, 16) == MAGIC && u64_at(&meta1, 144) > u64_at(&head, 144) {
        &meta1
    } else {
        &head
    };
    let mut p = LayoutProbe {
        data_version: u32_at(cur, 20),
        page_size: psize as u32,
        last_pgno: u64_at(cur, 136),
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
        let flags = u16_at(&page, 10);
        if u64_at(&page, 0) != pgno {
            pgno += 1;
            continue;
        }
        if flags & P_OVERFLOW != 0 {
            pgno += (u32_at(&page, 12) as u64).max(1);
            continue;
        }
        if flags & P_LEAF != 0 && flags & (P_LEAF2 | P_BRANCH | P_SUBP) == 0 {
            p.leaf_pages += 1;
            let (odd, stock_ok) = check_leaf(&page, psize, false, p.last_pgno);
            let (_, padded_ok) = check_leaf(&page, psize, true, p.last_pgno);
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
fn check_leaf(page: &[u8], area: usize, padded: bool, last_pgno: u64) -> (u64, bool) {
    let lower = u16_at(page, 12) as usize;
    let upper = u16_at(page, 14) as usize;
    if lower < 16 || lower > upper || upper > area || (lower & 1) != 0 {
        return (0, false);
    }
    let n = (lower - 16) / 2;
    let mut spans = Vec::with_capacity(n);
    let mut odd = 0;
    let mut ok = true;
    for i in 0..n {
        let off = u16_at(page, 16 + 2 * i) as usize;
        if off < upper || off + 8 > area {
            return (odd, false);
        }
        let dsize = u16_at(page, off) as usize | (u16_at(page, off + 2) as usize) << 16;
        let nflags = u16_at(page, off + 4);
        let ksize = u16_at(page, off + 6) as usize;
        if ksize % 2 == 1 {
            odd += 1;
        }
        let koff = if padded { even(ksize) } else { ksize };
        let data = off + 8 + koff;
        let dlen = if nflags & F_BIGDATA != 0 { 8 } else { dsize };
        let end = data + dlen;
        if end > area {
            return (odd, false);
        }
        let d = &page[data..end];
        ok &= match nflags & (F_BIGDATA | F_SUBDATA | F_DUPDATA) {
            0 => true,
            F_BIGDATA => {
                let ov = u64_at(d, 0);
                (2..=last_pgno).contains(&ov)
            }
            F_SUBDATA | 0x06 => dlen == 48 && plausible_record(d, last_pgno),
            F_DUPDATA => {
                dlen >= 16 && {
                    let sf = u16_at(d, 10);
                    sf & (P_LEAF | P_SUBP) == (P_LEAF | P_SUBP) && {
                        let (sl, su) = (u16_at(d, 12) as usize, u16_at(d, 14) as usize);
                        sl >= 16 && sl <= su && su <= dlen
                    }
                }
            }
            _ => false,
        };
        spans.push((off, even(end) - off));
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
    let flags = u16_at(r, 4);
    let depth = u16_at(r, 6) as u64;
    let root = u64_at(r, 40);
    if flags & !0x1fe != 0 || depth > 64 {
        return false;
    }
    if depth == 0 {
        return root == u64::MAX;
    }
    (2..=last_pgno).contains(&root)
}
