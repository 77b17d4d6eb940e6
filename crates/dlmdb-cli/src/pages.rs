//! `stat --pages`: a page walk of one database compared with the counters
//! its record stores (the walk verdict), pages and fill per tree level, and
//! for prefix-compressed databases the logical vs stored key bytes.

use crate::stat::DbSection;
use anyhow::Result;
use dlmdb::{
    CursorOp, Database, DatabaseFlags, LevelSummary, PageInfo, PageKind, RoTxn, Stat, WalkSummary,
};
use serde::Serialize;
use std::collections::HashSet;
use std::fmt::Write as _;

/// The `walk` object of a database in `stat --pages --json`.
#[derive(Debug, Clone, Serialize)]
pub struct WalkReport {
    #[serde(flatten)]
    pub summary: WalkSummary,
    /// Entries found by the walk, every duplicate value counted.
    pub walked_entries: u64,
    /// `ok` when the walk matches the record's depth (main tree), branch,
    /// leaf and overflow pages and entries (every duplicate); `mismatch`
    /// otherwise. Branch and leaf pages are compared with or without the
    /// duplicate sub-trees' pages, as the record counts them.
    pub verdict: &'static str,
    /// What differs (`"leaf_pages: record 5, walk 6"`), empty when `ok`.
    pub mismatches: Vec<String>,
    /// The record's branch/leaf counters include duplicate sub-tree pages
    /// (DLMDB engine) rather than leaving them out (stock LMDB).
    pub subtrees_in_record: bool,
    /// Main-tree pages per level, root first.
    pub levels: Vec<LevelReport>,
    /// Prefix-compressed databases only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compression: Option<CompressionReport>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct LevelReport {
    /// 0 = root.
    pub level: u32,
    pub branch_pages: u64,
    pub leaf_pages: u64,
    pub used_bytes: u64,
    pub free_bytes: u64,
    /// used / (used + free), in percent.
    pub fill_percent: f64,
}

/// Key bytes of the main tree's leaves. On a prefix-compressed leaf the
/// first key is stored whole and each other key as a varint of its common
/// prefix length with the first key plus the rest; leaves are matched to keys in walk order by their node counts.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CompressionReport {
    pub keys: u64,
    pub logical_key_bytes: u64,
    pub stored_key_bytes: u64,
    /// logical / stored.
    pub ratio: f64,
    /// Key bytes saved divided by a page's usable bytes, rounded down: the
    /// leaf pages the uncompressed keys would need at least in addition.
    pub pages_saved: u64,
}

fn percent(used: u64, free: u64) -> f64 {
    if used + free == 0 {
        0.0
    } else {
        (1000.0 * used as f64 / (used + free) as f64).round() / 10.0
    }
}

/// Walk `db` and compare with its record.
pub fn walk_report(
    txn: &RoTxn<'_>,
    db: Database,
    flags: DatabaseFlags,
    stat: &Stat,
) -> Result<WalkReport> {
    let pages = txn.pages(db)?;
    let summary = WalkSummary::of(&pages);
    let walked_entries = walked_entries(&pages);
    let mut mismatches = Vec::new();
    let mut cmp = |what: &str, record: u64, walk: u64| {
        if record != walk {
            mismatches.push(format!("{what}: record {record}, walk {walk}"));
        }
    };
    cmp("depth", u64::from(stat.depth), u64::from(summary.depth));
    // Whether the record's page counters include the pages of duplicate
    // sub-trees differs between writers (stock LMDB leaves them out, the
    // DLMDB engine counts them): either convention is consistent.
    let sub_branch = subtree_count(&pages, &[PageKind::Branch]);
    let sub_leaf = subtree_count(&pages, &[PageKind::Leaf, PageKind::Leaf2]);
    let main_only = (
        summary.branch_pages - sub_branch,
        summary.leaf_pages - sub_leaf,
    );
    let subtrees_in_record = (stat.branch_pages, stat.leaf_pages) != main_only
        && (stat.branch_pages, stat.leaf_pages) == (summary.branch_pages, summary.leaf_pages);
    let (branch, leaf) = if subtrees_in_record {
        (summary.branch_pages, summary.leaf_pages)
    } else {
        main_only
    };
    cmp("branch_pages", stat.branch_pages, branch);
    cmp("leaf_pages", stat.leaf_pages, leaf);
    cmp(
        "overflow_pages",
        stat.overflow_pages,
        summary.overflow_pages,
    );
    cmp("entries", stat.entries, walked_entries);
    let levels = LevelSummary::of(&pages)
        .into_iter()
        .map(|l| LevelReport {
            level: l.level,
            branch_pages: l.branch_pages,
            leaf_pages: l.leaf_pages,
            used_bytes: l.used_bytes,
            free_bytes: l.free_bytes,
            fill_percent: percent(l.used_bytes, l.free_bytes),
        })
        .collect();
    let compression = if flags.contains(DatabaseFlags::PREFIX_COMPRESSION) {
        Some(compression(txn, db, flags, &pages, stat.page_size)?)
    } else {
        None
    };
    Ok(WalkReport {
        summary,
        walked_entries,
        verdict: if mismatches.is_empty() {
            "ok"
        } else {
            "mismatch"
        },
        mismatches,
        subtrees_in_record,
        levels,
        compression,
    })
}

fn subtree_count(pages: &[PageInfo], kinds: &[PageKind]) -> u64 {
    pages
        .iter()
        .filter(|p| p.in_subtree && kinds.contains(&p.kind))
        .count() as u64
}

/// Entries with every duplicate counted: main-tree leaf nodes, where a node
/// holding a sub-page or the root of a sub-tree is replaced by its values.
fn walked_entries(pages: &[PageInfo]) -> u64 {
    let is_leaf = |p: &PageInfo| matches!(p.kind, PageKind::Leaf | PageKind::Leaf2);
    let main_leaves: HashSet<u64> = pages
        .iter()
        .filter(|p| !p.in_subtree && is_leaf(p))
        .map(|p| p.pgno)
        .collect();
    let mut n: i64 = 0;
    for p in pages {
        let entries = i64::from(p.entries);
        match p.kind {
            PageKind::SubPage => n += entries - 1,
            PageKind::Leaf | PageKind::Leaf2 | PageKind::Branch if p.in_subtree => {
                if is_leaf(p) {
                    n += entries;
                }
                if p.parent.is_some_and(|q| main_leaves.contains(&q)) {
                    n -= 1; // the sub-tree's node in the main leaf
                }
            }
            PageKind::Leaf | PageKind::Leaf2 => n += entries,
            _ => {}
        }
    }
    n.max(0) as u64
}

fn compression(
    txn: &RoTxn<'_>,
    db: Database,
    flags: DatabaseFlags,
    pages: &[PageInfo],
    page_size: u32,
) -> Result<CompressionReport> {
    let step = if flags.contains(DatabaseFlags::DUP_SORT) {
        CursorOp::NextNoDup
    } else {
        CursorOp::Next
    };
    let mut r = CompressionReport::default();
    let mut cur = txn.cursor(db)?;
    let mut op = CursorOp::First;
    let mut trunk: Vec<u8> = Vec::new();
    'leaves: for leaf in pages
        .iter()
        .filter(|p| !p.in_subtree && matches!(p.kind, PageKind::Leaf | PageKind::Leaf2))
    {
        for i in 0..leaf.entries {
            let Some((k, _)) = cur.get_ref(None, None, op)? else {
                break 'leaves;
            };
            op = step;
            let klen = k.len() as u64;
            let stored = if i == 0 {
                trunk.clear();
                trunk.extend_from_slice(k);
                klen
            } else {
                dlmdb_format::prefix::encoded_len(&trunk, k) as u64
            };
            r.keys += 1;
            r.logical_key_bytes += klen;
            r.stored_key_bytes += stored;
        }
    }
    r.ratio = if r.stored_key_bytes == 0 {
        1.0
    } else {
        (1000.0 * r.logical_key_bytes as f64 / r.stored_key_bytes as f64).round() / 1000.0
    };
    let usable = u64::from(page_size).saturating_sub(16).max(1);
    r.pages_saved = r.logical_key_bytes.saturating_sub(r.stored_key_bytes) / usable;
    Ok(r)
}

/// The text lines `stat --pages` adds after a database's counters.
pub fn render_walk(out: &mut String, db: &DbSection, w: &WalkReport) {
    let s = &w.summary;
    let flags = if db.flags.is_empty() {
        "none".to_string()
    } else {
        db.flags.join(",")
    };
    let _ = writeln!(out, "  Flags: {flags}");
    if let Some(n) = db.counted_entries {
        let _ = writeln!(out, "  Counted entries: {n}");
    }
    if db.prefix_compression {
        out.push_str("  Prefix compression: on\n");
    }
    let _ = writeln!(
        out,
        "  Walked pages: {} branch, {} leaf, {} overflow in {} runs, {} sub-pages, {} sub-tree pages",
        s.branch_pages, s.leaf_pages, s.overflow_pages, s.overflow_runs, s.sub_pages, s.subtree_pages
    );
    let _ = writeln!(
        out,
        "  Walked bytes: {} used, {} free ({:.1}% full)",
        s.used_bytes,
        s.free_bytes,
        percent(s.used_bytes, s.free_bytes)
    );
    for l in &w.levels {
        let _ = writeln!(
            out,
            "  Level {}: {} branch, {} leaf pages, {:.1}% full",
            l.level, l.branch_pages, l.leaf_pages, l.fill_percent
        );
    }
    if let Some(c) = &w.compression {
        let _ = writeln!(
            out,
            "  Key bytes: {} logical, {} stored (ratio {:.3}, at least {} pages saved)",
            c.logical_key_bytes, c.stored_key_bytes, c.ratio, c.pages_saved
        );
    }
    if w.mismatches.is_empty() {
        out.push_str("  Walk check: ok\n");
    } else {
        let _ = writeln!(
            out,
            "  Walk check: MISMATCH with the stored counters ({})",
            w.mismatches.join("; ")
        );
    }
}
