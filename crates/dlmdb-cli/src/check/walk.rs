//! The tree walk: visits every page of one B+tree from its record, checks
//! headers, node bounds, key order, counts and overflow runs, and marks
//! each page in the shared page map.

use super::page::*;
use super::{Checker, Interrupted};
use dlmdb_format::bytes::u64_at;
use dlmdb_format::node::{subtree_count, NodeHeader};
use dlmdb_format::prefix::decode_prefixed;
use dlmdb_format::{
    DbFlags, DbRecord, FreeRecord, NodeFlags, NodeLayout, Order, Page, PageFlags, PageHeader,
    DB_RECORD_SIZE, MAX_KEY_SIZE, NODE_HEADER_SIZE, PAGE_HEADER_SIZE, P_INVALID,
};
use std::cmp::Ordering;

/// How to read one tree.
#[derive(Debug, Clone)]
pub struct TreeKind {
    /// Display name for reports.
    pub label: String,
    /// Owner id in the page map.
    pub owner: u16,
    /// Order of the keys of this tree.
    pub order: Order,
    /// Database flags of the owning database (decide DUPSORT handling).
    pub db_flags: u16,
    /// A duplicate tree (keys are values of one key; data parts empty).
    pub dup_tree: bool,
    /// Leaves are prefix-compressed.
    pub prefix: bool,
    /// Branch pages must carry P_COUNTED.
    pub counted: bool,
    /// LEAF2 item size for DUPFIXED duplicate trees.
    pub leaf2: Option<usize>,
    /// The main database: F_SUBDATA nodes are named databases.
    pub is_main: bool,
    /// The free-page database: values are page lists.
    pub is_free: bool,
}

impl TreeKind {
    /// The owning database's flags (unknown bits dropped).
    pub fn flags(&self) -> DbFlags {
        DbFlags::from_bits_truncate(self.db_flags)
    }
}

/// What a walk found, to compare with the tree's record.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Tally {
    pub depth: u16,
    pub branch_pages: u64,
    pub leaf_pages: u64,
    pub overflow_pages: u64,
    pub entries: u64,
    /// Pages of duplicate sub-trees below this tree.
    pub dup_tree_pages: u64,
    /// Branch and leaf pages among `dup_tree_pages` (data version 2 records
    /// include them in the owner's counters).
    #[serde(skip)]
    pub dup_tree_branch: u64,
    #[serde(skip)]
    pub dup_tree_leaf: u64,
}

/// A named database record found in the main tree.
pub struct NamedDb {
    pub name: Vec<u8>,
    pub record: DbRecord,
    pub pgno: u64,
}

/// A free-list record: (txnid, pages, leaf page it was found on).
pub struct FreeRec {
    pub txnid: u64,
    pub pages: Vec<u64>,
    pub pgno: u64,
}

pub struct TreeOut {
    pub tally: Tally,
    pub named: Vec<NamedDb>,
    pub free: Vec<FreeRec>,
}

struct Ctx<'k> {
    kind: &'k TreeKind,
    depth: u16,
    last_key: Option<Vec<u8>>,
    out: TreeOut,
}

impl Checker {
    /// Walk the tree described by `rec`. Problems go to `self.problems`.
    pub fn walk_tree(&mut self, kind: &TreeKind, rec: &DbRecord) -> Result<TreeOut, Interrupted> {
        let mut cx = Ctx {
            kind,
            depth: rec.depth,
            last_key: None,
            out: TreeOut {
                tally: Tally::default(),
                named: Vec::new(),
                free: Vec::new(),
            },
        };
        if rec.root == P_INVALID || rec.depth == 0 {
            if rec.root != P_INVALID || rec.depth != 0 || rec.entries != 0 || rec.leaf_pages != 0 {
                self.problem(
                    None,
                    &kind.label,
                    format!(
                    "inconsistent empty-tree record: root {}, depth {}, entries {}, leaf pages {}",
                    fmt_pg(rec.root), rec.depth, rec.entries, rec.leaf_pages
                ),
                );
            }
            return Ok(cx.out);
        }
        if rec.depth > 32 {
            self.problem(
                None,
                &kind.label,
                format!("implausible tree depth {}", rec.depth),
            );
            return Ok(cx.out);
        }
        let n = self.visit(&mut cx, rec.root, 1, None, None, None)?;
        cx.out.tally.depth = rec.depth;
        let t = cx.out.tally;
        let label = &kind.label;
        let mismatch = |what: &str, rec_v: u64, seen: u64| {
            (rec_v != seen).then(|| format!("record says {rec_v} {what}, the walk found {seen}"))
        };
        // Data version 2 (newest DLMDB) counts the pages of duplicate
        // sub-trees in the owner's record; stock and version 1 do not.
        let with_dups = self.version == 2
            && (t.dup_tree_branch | t.dup_tree_leaf) != 0
            && rec.branch_pages == t.branch_pages + t.dup_tree_branch
            && rec.leaf_pages == t.leaf_pages + t.dup_tree_leaf;
        let (wb, wl) = if with_dups {
            (
                t.branch_pages + t.dup_tree_branch,
                t.leaf_pages + t.dup_tree_leaf,
            )
        } else {
            (t.branch_pages, t.leaf_pages)
        };
        for m in [
            mismatch("branch pages", rec.branch_pages, wb),
            mismatch("leaf pages", rec.leaf_pages, wl),
            mismatch("overflow pages", rec.overflow_pages, t.overflow_pages),
            mismatch("entries", rec.entries, t.entries),
        ]
        .into_iter()
        .flatten()
        {
            self.problem(Some(rec.root), label, m);
        }
        if let Some(n) = n {
            if n != t.entries {
                self.problem(
                    Some(rec.root),
                    label,
                    format!("entry total {n} differs from walked entries {}", t.entries),
                );
            }
        }
        Ok(cx.out)
    }

    /// Visit page `pgno` at `level` (1 = root); keys must lie in
    /// `[lo, hi)`. Returns the number of entries below (None if unreadable).
    fn visit(
        &mut self,
        cx: &mut Ctx<'_>,
        pgno: u64,
        level: u16,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
        parent: Option<u64>,
    ) -> Result<Option<u64>, Interrupted> {
        self.tick()?;
        let label = cx.kind.label.clone();
        let from = parent.map_or(String::new(), |p| format!(" (referenced from page {p})"));
        if !self.claim(pgno, cx.kind.owner, &label, &from) {
            return Ok(None);
        }
        let page = match self.file.page(pgno) {
            Ok(Some(p)) => p,
            Ok(None) => {
                self.problem(
                    Some(pgno),
                    &label,
                    format!("page is beyond the end of the file{from}"),
                );
                return Ok(None);
            }
            Err(e) => {
                self.problem(Some(pgno), &label, format!("read error: {e}"));
                return Ok(None);
            }
        };
        let Ok(hdr) = PageHeader::parse(&page) else {
            self.problem(
                Some(pgno),
                &label,
                format!("page shorter than its header{from}"),
            );
            return Ok(None);
        };
        let flags = hdr.raw_flags;
        if hdr.pgno != pgno {
            self.problem(
                Some(pgno),
                &label,
                format!("header page number is {}{from}", hdr.pgno),
            );
            return Ok(None);
        }
        let is_branch = hdr.flags.contains(PageFlags::BRANCH);
        let is_leaf = !is_branch;
        // Flags that contradict the page's role: the engine would read the
        // nodes at the wrong offsets, so it refuses the page (MDB_CORRUPTED).
        if let Some(why) = hdr.tree_role_problem() {
            self.problem(
                Some(pgno),
                &label,
                format!("{why} (flags {flags:#06x}){from}"),
            );
            return Ok(None);
        }
        // Nodes are even-sized and pages even, so node pages keep upper
        // even; the engine refuses to write a page with an odd one.
        if !hdr.flags.contains(PageFlags::LEAF2) && hdr.upper % 2 == 1 {
            self.problem(
                Some(pgno),
                &label,
                format!("node page with an odd upper {}{from}", hdr.upper),
            );
        }
        if hdr.flags.intersects(PageFlags::IN_MEMORY) {
            self.problem(
                Some(pgno),
                &label,
                format!("in-memory flag bits set on disk ({flags:#06x})"),
            );
        }
        if is_branch && level >= cx.depth {
            self.problem(
                Some(pgno),
                &label,
                format!(
                    "branch page at level {level} but the tree depth is {}",
                    cx.depth
                ),
            );
            return Ok(None);
        }
        if is_leaf && level != cx.depth {
            self.problem(
                Some(pgno),
                &label,
                format!(
                    "leaf page at level {level} but the tree depth is {}",
                    cx.depth
                ),
            );
        }
        if is_branch {
            cx.out.tally.branch_pages += 1;
            self.branch(cx, &page, pgno, hdr.flags, level, lo, hi)
        } else {
            cx.out.tally.leaf_pages += 1;
            self.leaf(cx, &page, pgno, hdr.flags, lo, hi)
        }
    }

    /// Check `lower`/`upper` and the pointer array of a node page of size
    /// `size`; return the node offsets (in key order).
    fn node_offsets(
        &mut self,
        page: &[u8],
        pgno: u64,
        label: &str,
        what: &str,
    ) -> Option<Vec<usize>> {
        let size = page.len();
        let p = Page::parse(page).ok()?;
        let (lower, upper) = (usize::from(p.header.lower), usize::from(p.header.upper));
        let Some(n) = p.header.items().filter(|_| lower <= upper && upper <= size) else {
            self.problem(
                Some(pgno),
                label,
                format!("{what}: bad lower/upper {lower}/{upper} for size {size}"),
            );
            return None;
        };
        let mut offs = Vec::with_capacity(n);
        for i in 0..n {
            let o = p.pointer(i)?;
            if o < upper || !o.is_multiple_of(2) || o + NODE_HEADER_SIZE > size {
                self.problem(
                    Some(pgno),
                    label,
                    format!("{what}: node {i} offset {o} outside {upper}..{size}"),
                );
                return None;
            }
            offs.push(o);
        }
        Some(offs)
    }

    /// Node extents must not overlap.
    fn check_overlap(
        &mut self,
        mut ext: Vec<(usize, usize, usize)>,
        pgno: u64,
        label: &str,
        what: &str,
    ) -> bool {
        ext.sort_unstable();
        for w in ext.windows(2) {
            if w[0].1 > w[1].0 {
                self.problem(
                    Some(pgno),
                    label,
                    format!("{what}: nodes {} and {} overlap", w[0].2, w[1].2),
                );
                return false;
            }
        }
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn branch(
        &mut self,
        cx: &mut Ctx<'_>,
        page: &[u8],
        pgno: u64,
        flags: PageFlags,
        level: u16,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
    ) -> Result<Option<u64>, Interrupted> {
        let label = cx.kind.label.clone();
        let Some(offs) = self.node_offsets(page, pgno, &label, "branch page") else {
            return Ok(None);
        };
        if offs.is_empty() {
            self.problem(Some(pgno), &label, "branch page without nodes".into());
            return Ok(None);
        }
        let counted_page = flags.contains(PageFlags::COUNTED);
        if counted_page != cx.kind.counted {
            self.problem(
                Some(pgno),
                &label,
                if cx.kind.counted {
                    "branch page of a counted tree lacks P_COUNTED".into()
                } else {
                    "P_COUNTED branch page in a tree that is not counted".into()
                },
            );
        }
        let layout = self.layout();
        // (child, count, key)
        let mut nodes: Vec<(u64, Option<u64>, Vec<u8>)> = Vec::with_capacity(offs.len());
        let mut ext = Vec::with_capacity(offs.len());
        for (i, &o) in offs.iter().enumerate() {
            let h = NodeHeader::parse(page, o).expect("pointer checked");
            let ks = usize::from(h.ksize);
            let kstart = h.key_offset(counted_page);
            let end = kstart + ks;
            if end > page.len() {
                self.problem(
                    Some(pgno),
                    &label,
                    format!("branch node {i} (key {ks} bytes) runs past the page end"),
                );
                return Ok(None);
            }
            ext.push((o, o + layout.branch_node_size(ks, counted_page), i));
            let count = counted_page.then(|| subtree_count(page, o).expect("key fits"));
            nodes.push((h.child_pgno(), count, page[kstart..end].to_vec()));
        }
        if !self.check_overlap(ext, pgno, &label, "branch page") {
            return Ok(None);
        }
        let order = cx.kind.order;
        for i in 1..nodes.len() {
            let k = &nodes[i].2;
            if let Some(why) = key_too_long(k) {
                self.problem(Some(pgno), &label, format!("branch separator {i}: {why}"));
            }
            if i >= 2 && order.cmp(&nodes[i - 1].2, k) != Ordering::Less {
                self.problem(
                    Some(pgno),
                    &label,
                    format!("branch separators {} and {} out of order", i - 1, i),
                );
            }
            if lo.is_some_and(|l| order.cmp(k, l) == Ordering::Less)
                || hi.is_some_and(|h| order.cmp(k, h) != Ordering::Less)
            {
                self.problem(
                    Some(pgno),
                    &label,
                    format!("branch separator {i} lies outside the parent's key range"),
                );
            }
        }
        let mut total = Some(0u64);
        for i in 0..nodes.len() {
            let clo = if i == 0 {
                lo.map(<[u8]>::to_vec)
            } else {
                Some(nodes[i].2.clone())
            };
            let chi = if i + 1 < nodes.len() {
                Some(nodes[i + 1].2.clone())
            } else {
                hi.map(<[u8]>::to_vec)
            };
            let child = nodes[i].0;
            let below = self.visit(
                cx,
                child,
                level + 1,
                clo.as_deref(),
                chi.as_deref(),
                Some(pgno),
            )?;
            if let (Some(c), Some(b)) = (nodes[i].1, below) {
                if c != b {
                    self.problem(Some(pgno), &label, format!("counted branch node {i} (child {child}) says {c} entries, the subtree holds {b}"));
                }
            }
            total = match (total, below) {
                (Some(t), Some(b)) => Some(t.saturating_add(b)),
                _ => None,
            };
        }
        Ok(total)
    }

    fn leaf(
        &mut self,
        cx: &mut Ctx<'_>,
        page: &[u8],
        pgno: u64,
        flags: PageFlags,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
    ) -> Result<Option<u64>, Interrupted> {
        let label = cx.kind.label.clone();
        if flags.contains(PageFlags::LEAF2) {
            return Ok(self.leaf2_page(cx, page, pgno, lo, hi, &label));
        }
        if cx.kind.leaf2.is_some() {
            self.problem(
                Some(pgno),
                &label,
                "ordinary leaf page in a DUPFIXED duplicate tree".into(),
            );
        }
        let Some(offs) = self.node_offsets(page, pgno, &label, "leaf page") else {
            return Ok(None);
        };
        if offs.is_empty() {
            self.problem(Some(pgno), &label, "empty leaf page".into());
        }
        let layout = self.layout();
        let mut ext = Vec::with_capacity(offs.len());
        let mut total = 0u64;
        let mut trunk: Vec<u8> = Vec::new();
        let strict = self.strict_prefix && cx.kind.prefix;
        let mut form: (Vec<&[u8]>, Vec<Vec<u8>>) = (Vec::new(), Vec::new());
        for (i, &o) in offs.iter().enumerate() {
            let h = NodeHeader::parse(page, o).expect("pointer checked");
            let dsize = u64::from(h.data_size());
            let nflags = h.flags_word;
            let ks = usize::from(h.ksize);
            let kstart = h.key_offset(false);
            let dstart = h.data_offset(layout);
            let end = dstart.saturating_add(h.data_len());
            if kstart + ks > page.len() || end > page.len() {
                self.problem(Some(pgno), &label, format!("leaf node {i} (key {ks}, data {dsize} bytes, flags {nflags:#x}) runs past the page end"));
                return Ok(None);
            }
            ext.push((o, dlmdb_format::even(end), i));
            let raw_key = &page[kstart..kstart + ks];
            let key = if cx.kind.prefix && i > 0 {
                match decode_prefixed(&trunk, raw_key) {
                    Ok(k) => k.key,
                    Err(e) => {
                        self.problem(Some(pgno), &label, format!("leaf node {i}: {e}"));
                        return Ok(None);
                    }
                }
            } else {
                raw_key.to_vec()
            };
            if i == 0 {
                trunk = key.clone();
            }
            if strict {
                form.0.push(raw_key);
                form.1.push(key.clone());
            }
            self.key_in_order(cx, &key, lo, hi, pgno, &format!("leaf node {i}"));
            let data = &page[dstart..end];
            total = total.saturating_add(self.leaf_node(cx, pgno, i, nflags, dsize, &key, data)?);
        }
        let used: usize = ext.iter().map(|&(start, end, _)| end - start).sum();
        if self.check_overlap(ext, pgno, &label, "leaf page") && !cx.kind.prefix {
            self.leaf_compact(page, pgno, &label, used);
        }
        if strict {
            let pad = PageHeader::parse(page).expect("header checked").pad;
            for e in prefix_form_problems(pad, &form.0, &form.1) {
                self.problem(Some(pgno), &label, format!("compressed leaf: {e}"));
            }
        }
        cx.out.tally.entries = cx.out.tally.entries.saturating_add(total);
        Ok(Some(total))
    }

    /// The nodes of a leaf (not packed, not prefix-compressed), `used` bytes
    /// between them and not overlapping, must fill the page from `upper` to
    /// its end: LMDB and DLMDB place each node right below the last and
    /// close the gap a deleted one leaves. The engine takes a version-1 leaf
    /// that only one node layout fills as evidence of that layout, and
    /// refuses a store opened in the other one; in a version-1 store the
    /// message says when the other layout fills the page.
    fn leaf_compact(&mut self, page: &[u8], pgno: u64, label: &str, used: usize) {
        let upper = usize::from(PageHeader::parse(page).expect("header checked").upper);
        let span = page.len() - upper;
        // An odd upper is reported as such; even nodes cannot fill from it.
        if used == span || upper % 2 == 1 {
            return;
        }
        let other = match self.layout() {
            NodeLayout::Stock => NodeLayout::Padded,
            NodeLayout::Padded => NodeLayout::Stock,
        };
        let other_fills = self.version == 1
            && Page::parse(page).ok().is_some_and(|p| {
                let sizes = (0..p.header.items().unwrap_or(0)).map(|i| {
                    let o = p.pointer(i).expect("pointer checked");
                    let h = NodeHeader::parse(page, o).expect("header checked");
                    other.leaf_node_size(usize::from(h.ksize), h.data_len())
                });
                sizes.sum::<usize>() == span
            });
        let hint = if other_fills {
            match other {
                NodeLayout::Padded => "; DLMDB's padded layout fills it exactly (--layout dlmdb)",
                NodeLayout::Stock => "; stock LMDB's layout fills it exactly (--layout lmdb)",
            }
        } else {
            ""
        };
        self.problem(
            Some(pgno),
            label,
            format!(
                "leaf page: its nodes take {used} of the {span} bytes from upper ({upper}) to the page end, where writers leave no gap{hint}"
            ),
        );
    }

    /// Keys strictly ascending across the whole tree and inside `[lo, hi)`.
    fn key_in_order(
        &mut self,
        cx: &mut Ctx<'_>,
        key: &[u8],
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
        pgno: u64,
        what: &str,
    ) {
        let order = cx.kind.order;
        let label = &cx.kind.label;
        if let Some(why) = key_too_long(key) {
            self.problem(Some(pgno), label, format!("{what}: {why}"));
        }
        if !order.size_ok(key) {
            self.problem(
                Some(pgno),
                label,
                format!("{what}: {}-byte key in an integer-keyed tree", key.len()),
            );
        }
        if let Some(prev) = &cx.last_key {
            if order.cmp(prev, key) != Ordering::Less {
                self.problem(
                    Some(pgno),
                    label,
                    format!(
                        "{what}: key {} not greater than the previous key {}",
                        short(key),
                        short(prev)
                    ),
                );
            }
        }
        if lo.is_some_and(|l| order.cmp(key, l) == Ordering::Less)
            || hi.is_some_and(|h| order.cmp(key, h) != Ordering::Less)
        {
            self.problem(
                Some(pgno),
                label,
                format!(
                    "{what}: key {} lies outside the range its parent separators allow",
                    short(key)
                ),
            );
        }
        cx.last_key = Some(key.to_vec());
    }

    /// Check one leaf node's data; return its entry contribution.
    #[allow(clippy::too_many_arguments)]
    fn leaf_node(
        &mut self,
        cx: &mut Ctx<'_>,
        pgno: u64,
        i: usize,
        nflags: u16,
        dsize: u64,
        key: &[u8],
        data: &[u8],
    ) -> Result<u64, Interrupted> {
        let kind = cx.kind;
        let label = &kind.label;
        let dupsort = kind.flags().contains(DbFlags::DUP_SORT) && !kind.dup_tree;
        const BIGDATA: u16 = NodeFlags::BIGDATA.bits();
        const SUBDATA: u16 = NodeFlags::SUBDATA.bits();
        const DUPDATA: u16 = NodeFlags::DUPDATA.bits();
        const DUP_SUBDATA: u16 = DUPDATA | SUBDATA;
        if kind.dup_tree && (nflags != 0 || dsize != 0) {
            self.problem(Some(pgno), label, format!("duplicate-tree node {i} has flags {nflags:#x} / data {dsize} bytes (expected none)"));
            return Ok(1);
        }
        match nflags {
            0 => {
                if dupsort && dsize > MAX_KEY_SIZE as u64 {
                    self.problem(
                        Some(pgno),
                        label,
                        format!(
                            "node {i}: duplicate value of {dsize} bytes exceeds {MAX_KEY_SIZE}"
                        ),
                    );
                }
                if kind.is_free {
                    self.free_record(cx, pgno, key, data.to_vec());
                }
                Ok(1)
            }
            BIGDATA => {
                let first = u64_at(data, 0).unwrap_or(0);
                if dupsort {
                    self.problem(
                        Some(pgno),
                        label,
                        format!("node {i}: overflow value in a DUPSORT database"),
                    );
                }
                let value = self.overflow(cx, pgno, i, first, dsize, kind.is_free)?;
                if let Some(v) = value {
                    self.free_record(cx, pgno, key, v);
                }
                Ok(1)
            }
            SUBDATA => {
                if !kind.is_main {
                    self.problem(
                        Some(pgno),
                        label,
                        format!("node {i}: named-database record outside the main database"),
                    );
                    return Ok(1);
                }
                // A DUPSORT main database holds duplicates, not named
                // databases: the engine refuses such a node
                // (MDB_INCOMPATIBLE).
                if dupsort {
                    self.problem(
                        Some(pgno),
                        label,
                        format!(
                            "node {i}: named-database record in a DUPSORT main database (the engine refuses it)"
                        ),
                    );
                }
                match DbRecord::parse(data).filter(|_| dsize == DB_RECORD_SIZE as u64) {
                    Some(r) => cx.out.named.push(NamedDb {
                        name: key.to_vec(),
                        record: r,
                        pgno,
                    }),
                    None => self.problem(
                        Some(pgno),
                        label,
                        format!("node {i}: named-database record of {dsize} bytes (expected 48)"),
                    ),
                }
                Ok(1)
            }
            DUPDATA | DUP_SUBDATA if !dupsort => {
                let what = if nflags == DUPDATA {
                    "sub-page"
                } else {
                    "sub-database"
                };
                self.problem(
                    Some(pgno),
                    label,
                    format!("node {i}: duplicate {what} in a database without DUPSORT"),
                );
                Ok(1)
            }
            DUPDATA => Ok(self.sub_page(cx, pgno, i, data)),
            DUP_SUBDATA => {
                let Some(rec) = DbRecord::parse(data).filter(|_| dsize == DB_RECORD_SIZE as u64)
                else {
                    self.problem(
                        Some(pgno),
                        label,
                        format!("node {i}: sub-database record of {dsize} bytes (expected 48)"),
                    );
                    return Ok(1);
                };
                // DLMDB stores its owner's COUNTED and PREFIX_COMPRESSION
                // bits in a duplicate sub-database record; this engine reads
                // the sub-tree by the record's bits, so a record that lost
                // or gained one makes it refuse the sub-tree's pages.
                let owner_bits = kind.flags() & DbFlags::DLMDB_ONLY;
                let rec_bits = rec.db_flags() & DbFlags::DLMDB_ONLY;
                if owner_bits != rec_bits {
                    self.problem(
                        Some(pgno),
                        label,
                        format!(
                            "node {i}: sub-database record flags {:#x} disagree with the database's DLMDB-only flags {:#x}",
                            rec.flags,
                            owner_bits.bits()
                        ),
                    );
                }
                // LMDB's own bits in such a record: DUPFIXED for a DUPFIXED
                // owner, with INTEGERKEY when the owner is INTEGERDUP too; the
                // engine takes the sub-tree's packed pages from them.
                let owner = kind.flags();
                let want_lmdb = if owner.contains(DbFlags::DUP_FIXED) {
                    DbFlags::DUP_FIXED
                        | if owner.contains(DbFlags::INTEGER_DUP) {
                            DbFlags::INTEGER_KEY
                        } else {
                            DbFlags::empty()
                        }
                } else {
                    DbFlags::empty()
                };
                let rec_lmdb = rec.db_flags() & (DbFlags::DUP_FIXED | DbFlags::INTEGER_KEY);
                if rec_lmdb != want_lmdb {
                    self.problem(
                        Some(pgno),
                        label,
                        format!(
                            "node {i}: sub-database record flags {:#x}, but the database's flags {:#x} call for DUPFIXED/INTEGERKEY bits {:#x}",
                            rec.flags,
                            kind.db_flags,
                            want_lmdb.bits()
                        ),
                    );
                }
                let dup_flags = kind.db_flags;
                let dup_fixed = kind.flags().contains(DbFlags::DUP_FIXED);
                let sub = TreeKind {
                    label: format!("{label} (duplicates of key {})", short(key)),
                    owner: kind.owner,
                    order: Order::for_dups(kind.flags()),
                    db_flags: dup_flags,
                    dup_tree: true,
                    prefix: kind.prefix && !dup_fixed,
                    counted: kind.counted,
                    leaf2: dup_fixed.then_some(rec.pad as usize),
                    is_main: false,
                    is_free: false,
                };
                let out = self.walk_tree(&sub, &rec)?;
                let t = out.tally;
                cx.out.tally.dup_tree_pages += t.branch_pages + t.leaf_pages + t.overflow_pages;
                cx.out.tally.dup_tree_branch += t.branch_pages;
                cx.out.tally.dup_tree_leaf += t.leaf_pages;
                if rec.entries == 0 {
                    self.problem(
                        Some(pgno),
                        label,
                        format!("node {i}: empty duplicate sub-database"),
                    );
                }
                Ok(rec.entries)
            }
            _ => {
                self.problem(
                    Some(pgno),
                    label,
                    format!("node {i}: invalid node flags {nflags:#x}"),
                );
                Ok(1)
            }
        }
    }

    /// An inline duplicate sub-page; returns its item count.
    fn sub_page(&mut self, cx: &mut Ctx<'_>, pgno: u64, i: usize, data: &[u8]) -> u64 {
        let label = cx.kind.label.clone();
        let what = format!("sub-page of node {i}");
        let Ok(hdr) = PageHeader::parse(data) else {
            self.problem(
                Some(pgno),
                &label,
                format!("{what}: only {} bytes", data.len()),
            );
            return 1;
        };
        if hdr.sub_page_role_problem().is_some() {
            self.problem(
                Some(pgno),
                &label,
                format!(
                    "{what}: flags {:#06x} (expected P_LEAF|P_SUBP)",
                    hdr.raw_flags
                ),
            );
            return 1;
        }
        let order = Order::for_dups(cx.kind.flags());
        let mut items: Vec<Vec<u8>> = Vec::new();
        if hdr.flags.contains(PageFlags::LEAF2) {
            let k = usize::from(hdr.pad);
            let n = usize::from(hdr.lower).saturating_sub(PAGE_HEADER_SIZE) / 2;
            // Packed items only in DUPFIXED databases, as for the pages of
            // a duplicate sub-database (the engine refuses to read them
            // elsewhere).
            if !cx.kind.flags().contains(DbFlags::DUP_FIXED) {
                self.problem(
                    Some(pgno),
                    &label,
                    format!("{what}: LEAF2 sub-page in a database without DUPFIXED"),
                );
                return n.max(1) as u64;
            }
            if k == 0 {
                self.problem(
                    Some(pgno),
                    &label,
                    format!("{what}: fixed items of 0 bytes"),
                );
                return n.max(1) as u64;
            }
            // The fit rule is the engine's for sub-pages: a sub-page is as
            // large as its items and free space, not a whole page.
            if let Err(why) = hdr.leaf2_items(data.len(), k) {
                self.problem(Some(pgno), &label, format!("{what}: {why}"));
                return n.max(1) as u64;
            }
            let page = Page::parse(data).expect("header checked");
            for j in 0..n {
                items.push(page.leaf2_item(j, k).expect("items fit").to_vec());
            }
        } else {
            let Some(offs) = self.node_offsets(data, pgno, &label, &what) else {
                return 1;
            };
            let prefix = cx.kind.prefix;
            let layout = self.layout();
            let mut trunk = Vec::new();
            let mut ext = Vec::new();
            let mut stored: Vec<&[u8]> = Vec::new();
            for (j, &o) in offs.iter().enumerate() {
                let h = NodeHeader::parse(data, o).expect("pointer checked");
                let ks = usize::from(h.ksize);
                let (dsz, nfl) = (h.data_size(), h.flags_word);
                let kstart = h.key_offset(false);
                // The node's whole even-sized extent lies in the sub-page
                // (a sub-page may be odd-sized; the engine refuses a node
                // whose padding runs past it).
                let end = o + layout.leaf_node_size(ks, 0);
                if end > data.len() || dsz != 0 || nfl != 0 {
                    self.problem(Some(pgno), &label, format!("{what}: item {j} malformed (key {ks} bytes, data {dsz}, flags {nfl:#x}, node end {end} of {})", data.len()));
                    return offs.len() as u64;
                }
                ext.push((o, end, j));
                let raw = &data[kstart..kstart + ks];
                let item = if prefix && j > 0 {
                    match decode_prefixed(&trunk, raw) {
                        Ok(v) => v.key,
                        Err(e) => {
                            self.problem(Some(pgno), &label, format!("{what}: item {j}: {e}"));
                            return offs.len() as u64;
                        }
                    }
                } else {
                    raw.to_vec()
                };
                if j == 0 {
                    trunk = item.clone();
                }
                stored.push(raw);
                items.push(item);
            }
            self.check_overlap(ext, pgno, &label, &what);
            if prefix && self.strict_prefix {
                for e in prefix_form_problems(hdr.pad, &stored, &items) {
                    self.problem(Some(pgno), &label, format!("{what} (compressed): {e}"));
                }
            }
        }
        if items.is_empty() {
            self.problem(Some(pgno), &label, format!("{what}: no items"));
        }
        if let Some((j, why)) = items
            .iter()
            .enumerate()
            .find_map(|(j, it)| key_too_long(it).map(|w| (j, w)))
        {
            self.problem(Some(pgno), &label, format!("{what}: item {j}: {why}"));
        }
        for j in 1..items.len() {
            if order.cmp(&items[j - 1], &items[j]) != Ordering::Less {
                self.problem(
                    Some(pgno),
                    &label,
                    format!("{what}: items {} and {j} out of order", j - 1),
                );
                break;
            }
        }
        items.len() as u64
    }

    /// A LEAF2 page of a DUPFIXED duplicate tree.
    fn leaf2_page(
        &mut self,
        cx: &mut Ctx<'_>,
        page: &[u8],
        pgno: u64,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
        label: &str,
    ) -> Option<u64> {
        let Some(k) = cx.kind.leaf2 else {
            self.problem(
                Some(pgno),
                label,
                "LEAF2 page outside a DUPFIXED duplicate tree".into(),
            );
            return None;
        };
        let hdr = PageHeader::parse(page).expect("header checked");
        let pad = usize::from(hdr.pad);
        if pad != k {
            self.problem(
                Some(pgno),
                label,
                format!("LEAF2 page: item size field {pad} differs from the database's {k}"),
            );
            return None;
        }
        if k == 0 {
            self.problem(Some(pgno), label, "LEAF2 page: items of 0 bytes".into());
            return None;
        }
        let n = match hdr.leaf2_items(page.len(), k) {
            Ok(n) => n,
            Err(why) => {
                self.problem(Some(pgno), label, format!("LEAF2 page: {why}"));
                return None;
            }
        };
        // Writers move upper by the item size at every insert and delete, so
        // a page whose upper is off that count cannot be written: the engine
        // refuses it (MDB_CORRUPTED).
        let want = PageHeader::leaf2_expected_upper(page.len(), n, k);
        if want != Some(usize::from(hdr.upper)) {
            self.problem(
                Some(pgno),
                label,
                format!(
                    "LEAF2 page: upper {} but {n} items of {k} bytes in {} bytes keep it at {}",
                    hdr.upper,
                    page.len(),
                    want.map_or("no valid offset".into(), |w| w.to_string())
                ),
            );
        }
        let p = Page::parse(page).expect("header checked");
        for j in 0..n {
            let item = p.leaf2_item(j, k).expect("items fit").to_vec();
            self.key_in_order(cx, &item, lo, hi, pgno, &format!("LEAF2 item {j}"));
        }
        cx.out.tally.entries = cx.out.tally.entries.saturating_add(n as u64);
        Some(n as u64)
    }

    /// Claim an overflow run; with `want_value`, return the value bytes
    /// (for free-list records, bounded by the run).
    fn overflow(
        &mut self,
        cx: &mut Ctx<'_>,
        pgno: u64,
        i: usize,
        first: u64,
        dsize: u64,
        want_value: bool,
    ) -> Result<Option<Vec<u8>>, Interrupted> {
        let label = cx.kind.label.clone();
        let what = format!("node {i}: overflow run at page {first}");
        if first < 2 || first > self.last_pg {
            self.problem(
                Some(pgno),
                &label,
                format!("{what}: page number outside 2..={}", self.last_pg),
            );
            return Ok(None);
        }
        let head = match self.file.page(first) {
            Ok(Some(p)) => p,
            _ => {
                self.problem(
                    Some(pgno),
                    &label,
                    format!("{what}: page beyond the end of the file"),
                );
                return Ok(None);
            }
        };
        let h = PageHeader::parse(&head).expect("a whole page");
        let (flags, hp) = (h.raw_flags, h.pgno);
        if !h.flags.contains(PageFlags::OVERFLOW) || hp != first {
            self.problem(Some(first), &label, format!("{what}: not an overflow page (flags {flags:#06x}, header page number {hp}) (from page {pgno})"));
            self.claim(first, cx.kind.owner, &label, "");
            return Ok(None);
        }
        let n = u64::from(h.overflow_pages());
        let psize = self.file.psize as u64;
        let need = (PAGE_HEADER_SIZE as u64 + dsize).div_ceil(psize);
        if n < need || n == 0 {
            self.problem(
                Some(first),
                &label,
                format!("{what}: run of {n} pages cannot hold {dsize} bytes (needs {need})"),
            );
        }
        let n = n.max(1);
        if first + n - 1 > self.last_pg || first.saturating_add(n) > self.file.pages() {
            self.problem(
                Some(first),
                &label,
                format!("{what}: run of {n} pages goes past the last page / end of file"),
            );
            return Ok(None);
        }
        for p in first..first + n {
            self.tick()?;
            self.claim(
                p,
                cx.kind.owner,
                &label,
                &format!(" (overflow run from page {pgno})"),
            );
        }
        cx.out.tally.overflow_pages += n;
        if want_value && n >= need {
            return Ok(self
                .file
                .read_at(first * psize + PAGE_HEADER_SIZE as u64, dsize as usize)
                .ok()
                .flatten());
        }
        Ok(None)
    }

    /// Decode one FREE_DBI record (key txnid, value `[n, p1 > p2 > ...]`).
    fn free_record(&mut self, cx: &mut Ctx<'_>, pgno: u64, key: &[u8], v: Vec<u8>) {
        let label = cx.kind.label.clone();
        let FreeRecord { txnid, pages } = match FreeRecord::parse(key, &v) {
            Ok(r) if !r.is_descending() => {
                self.problem(
                    Some(pgno),
                    &label,
                    format!(
                        "free-list record of txn {}: page numbers not strictly descending",
                        r.txnid
                    ),
                );
                r
            }
            Ok(r) => r,
            Err(e) => {
                self.problem(Some(pgno), &label, e.to_string());
                return;
            }
        };
        cx.out.free.push(FreeRec { txnid, pages, pgno });
    }
}

/// Why a key, separator or duplicate (decoded, when prefix-compressed)
/// is too long for the engine: none is written longer than
/// [`MAX_KEY_SIZE`]; a longer decoded key fails every read of its node
/// (`MDB_BAD_VALSIZE`) and any longer one a compacting copy
/// (`MDB_CORRUPTED`).
fn key_too_long(key: &[u8]) -> Option<String> {
    (key.len() > MAX_KEY_SIZE).then(|| {
        format!(
            "{} bytes, longer than the {MAX_KEY_SIZE}-byte key limit",
            key.len()
        )
    })
}

/// Short printable form of a key for messages.
pub fn short(k: &[u8]) -> String {
    let s = crate::util::printable(&k[..k.len().min(48)]);
    if k.len() > 48 {
        format!("\"{s}\"...")
    } else {
        format!("\"{s}\"")
    }
}

pub fn fmt_pg(p: u64) -> String {
    if p == P_INVALID {
        "P_INVALID".into()
    } else {
        p.to_string()
    }
}
