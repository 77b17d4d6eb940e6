//! Page-walk introspection (`mdb_page_walk`, a dlmdb addition).

use crate::error::{check, Result};
use crate::flags::Database;
use dlmdb_sys as ffi;
use std::os::raw::{c_int, c_void};

/// What kind of page a [`PageInfo`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageKind {
    Branch,
    Leaf,
    /// Leaf of fixed-size duplicate values (`P_LEAF2`).
    Leaf2,
    /// A run of overflow pages holding one large value.
    Overflow,
    /// An inline duplicate sub-page stored inside a leaf node.
    SubPage,
    /// Type bits this crate does not know.
    Unknown,
}

/// One page (or overflow run, or sub-page) visited by a page walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PageInfo {
    /// Page number (sub-page: the leaf holding it).
    pub pgno: u64,
    /// Parent page number; `None` for the root.
    pub parent: Option<u64>,
    pub kind: PageKind,
    /// Raw `MDB_PAGE_*` type bits.
    pub type_bits: u32,
    /// Raw on-disk page flags.
    pub flags: u32,
    /// 0 = root of the walked tree.
    pub level: u32,
    /// Nodes/items on the page (0 for overflow).
    pub entries: u32,
    /// Pages spanned (overflow run length, else 1; 0 for sub-pages).
    pub pages: u32,
    /// Bytes used.
    pub used: u32,
    /// Bytes unused.
    pub free: u32,
    /// True for pages of a duplicate sub-database / sub-page.
    pub in_subtree: bool,
    /// Counted branch page: sum of its node counts; else 0.
    pub count: u64,
}

impl From<&ffi::MDB_pageinfo> for PageInfo {
    fn from(p: &ffi::MDB_pageinfo) -> Self {
        let t = p.pi_type;
        let kind = if t & ffi::MDB_PAGE_SUBPAGE != 0 {
            PageKind::SubPage
        } else if t & ffi::MDB_PAGE_OVERFLOW != 0 {
            PageKind::Overflow
        } else if t & ffi::MDB_PAGE_BRANCH != 0 {
            PageKind::Branch
        } else if t & ffi::MDB_PAGE_LEAF2 != 0 {
            PageKind::Leaf2
        } else if t & ffi::MDB_PAGE_LEAF != 0 {
            PageKind::Leaf
        } else {
            PageKind::Unknown
        };
        PageInfo {
            pgno: p.pi_pgno as u64,
            parent: if p.pi_parent == ffi::mdb_size_t::MAX {
                None
            } else {
                Some(p.pi_parent as u64)
            },
            kind,
            type_bits: t,
            flags: p.pi_flags,
            level: p.pi_level,
            entries: p.pi_entries,
            pages: p.pi_pages,
            used: p.pi_used,
            free: p.pi_free,
            in_subtree: p.pi_subtree != 0,
            count: p.pi_count,
        }
    }
}

/// Totals over a walk, comparable with [`Stat`](crate::Stat).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct WalkSummary {
    pub branch_pages: u64,
    pub leaf_pages: u64,
    pub overflow_pages: u64,
    /// Overflow runs (one per large value).
    pub overflow_runs: u64,
    /// Leaf entries of the main tree (sub-tree items not included).
    pub leaf_entries: u64,
    /// Pages (branch + leaf) belonging to duplicate sub-databases.
    pub subtree_pages: u64,
    /// Inline duplicate sub-pages.
    pub sub_pages: u64,
    /// Bytes used / free over branch and leaf pages.
    pub used_bytes: u64,
    pub free_bytes: u64,
    /// Deepest branch/leaf level of the main tree + 1 (0 for an empty tree).
    pub depth: u32,
}

impl WalkSummary {
    /// Sum up a list of pages.
    pub fn of(pages: &[PageInfo]) -> WalkSummary {
        let mut s = WalkSummary::default();
        for p in pages {
            s.add(p);
        }
        s
    }

    /// Account one page.
    pub fn add(&mut self, p: &PageInfo) {
        if !p.in_subtree && matches!(p.kind, PageKind::Branch | PageKind::Leaf | PageKind::Leaf2) {
            self.depth = self.depth.max(p.level + 1);
        }
        match p.kind {
            PageKind::Overflow => {
                self.overflow_pages += p.pages as u64;
                self.overflow_runs += 1;
                return;
            }
            PageKind::SubPage => {
                self.sub_pages += 1;
                return;
            }
            PageKind::Branch => self.branch_pages += 1,
            PageKind::Leaf | PageKind::Leaf2 => {
                self.leaf_pages += 1;
                if !p.in_subtree {
                    self.leaf_entries += p.entries as u64;
                }
            }
            PageKind::Unknown => return,
        }
        if p.in_subtree {
            self.subtree_pages += 1;
        }
        self.used_bytes += p.used as u64;
        self.free_bytes += p.free as u64;
    }
}

/// Pages of one level of the main tree: what `stat --pages` and the
/// viewer's detail pane show per level. Duplicate sub-trees, sub-pages and
/// overflow runs are left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct LevelSummary {
    /// 0 = root.
    pub level: u32,
    pub branch_pages: u64,
    pub leaf_pages: u64,
    /// Nodes on the level's pages.
    pub nodes: u64,
    pub used_bytes: u64,
    pub free_bytes: u64,
    /// Pages by fill: under 20%, 40%, 60%, 80%, and 80% or more.
    pub fill_buckets: [u64; 5],
}

impl LevelSummary {
    /// The main tree's levels of a walk, root first (a level no page was
    /// reported for stays empty).
    pub fn of(pages: &[PageInfo]) -> Vec<LevelSummary> {
        let mut levels: Vec<LevelSummary> = Vec::new();
        for p in pages {
            let leaf = matches!(p.kind, PageKind::Leaf | PageKind::Leaf2);
            if p.in_subtree || !(leaf || p.kind == PageKind::Branch) {
                continue;
            }
            let i = p.level as usize;
            while levels.len() <= i {
                levels.push(LevelSummary {
                    level: levels.len() as u32,
                    ..Default::default()
                });
            }
            let l = &mut levels[i];
            if leaf {
                l.leaf_pages += 1;
            } else {
                l.branch_pages += 1;
            }
            l.nodes += u64::from(p.entries);
            let whole = u64::from(p.used) + u64::from(p.free);
            let bucket = (5 * u64::from(p.used))
                .checked_div(whole)
                .map_or(0, |b| b.min(4) as usize);
            l.fill_buckets[bucket] += 1;
            l.used_bytes += u64::from(p.used);
            l.free_bytes += u64::from(p.free);
        }
        levels
    }

    /// Used bytes in percent of the level's page bytes (0 when empty).
    pub fn fill_percent(&self) -> f64 {
        let whole = self.used_bytes + self.free_bytes;
        if whole == 0 {
            0.0
        } else {
            100.0 * self.used_bytes as f64 / whole as f64
        }
    }
}

struct Ctx<'a> {
    f: &'a mut dyn FnMut(&PageInfo),
    panic: Option<Box<dyn std::any::Any + Send>>,
}

unsafe extern "C" fn trampoline(ctx: *mut c_void, info: *const ffi::MDB_pageinfo) -> c_int {
    let ctx = &mut *(ctx as *mut Ctx<'_>);
    let info = PageInfo::from(&*info);
    // A panic must not unwind through C: catch it, stop the walk, re-raise later.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (ctx.f)(&info))) {
        Ok(()) => 0,
        Err(p) => {
            ctx.panic = Some(p);
            1
        }
    }
}

pub(crate) fn walk_pages<F: FnMut(&PageInfo)>(
    txn: *mut ffi::MDB_txn,
    db: Database,
    mut f: F,
) -> Result<()> {
    let mut ctx = Ctx {
        f: &mut f,
        panic: None,
    };
    let rc = unsafe {
        ffi::mdb_page_walk(
            txn,
            db.dbi,
            Some(trampoline),
            &mut ctx as *mut Ctx<'_> as *mut c_void,
        )
    };
    if let Some(p) = ctx.panic {
        std::panic::resume_unwind(p);
    }
    check(rc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(kind: PageKind, level: u32, entries: u32, used: u32, in_subtree: bool) -> PageInfo {
        PageInfo {
            pgno: 0,
            parent: None,
            kind,
            type_bits: 0,
            flags: 0,
            level,
            entries,
            pages: 1,
            used,
            free: 100 - used,
            in_subtree,
            count: 0,
        }
    }

    #[test]
    fn levels_count_main_tree_pages_only() {
        let pages = [
            page(PageKind::Branch, 0, 3, 30, false),
            page(PageKind::Leaf, 1, 10, 90, false),
            page(PageKind::Leaf2, 1, 20, 55, false),
            page(PageKind::Leaf, 1, 5, 10, true),
            page(PageKind::Overflow, 1, 0, 90, false),
            page(PageKind::SubPage, 1, 4, 40, false),
        ];
        let levels = LevelSummary::of(&pages);
        // (level, branch, leaf, nodes, used, free, fill buckets) per level.
        let got: Vec<_> = levels
            .iter()
            .map(|l| {
                (
                    l.level,
                    l.branch_pages,
                    l.leaf_pages,
                    l.nodes,
                    l.used_bytes,
                    l.free_bytes,
                    l.fill_buckets,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (0, 1, 0, 3, 30, 70, [0, 1, 0, 0, 0]),
                (1, 0, 2, 30, 145, 55, [0, 0, 1, 0, 1]),
            ]
        );
        assert_eq!(levels[1].fill_percent(), 72.5);
        assert_eq!(LevelSummary::default().fill_percent(), 0.0);
    }
}
