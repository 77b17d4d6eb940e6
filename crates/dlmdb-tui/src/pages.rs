//! Page-level reading for the page browser, the free-list and reader panes:
//! raw pages of the data file decoded through `dlmdb-format`, inside an open
//! read transaction (so every page reachable from its roots stays as it was
//! while the pages are read). Plain owned results; nothing renders here.

use crate::model::{display_name, DbName, View};
use anyhow::{anyhow, bail, Context, Result};
use dlmdb_format::order::integer_value;
use dlmdb_format::prefix::{decode_prefixed, PrefixedKey};
use dlmdb_format::{
    DbFlags, DbRecord, NodeFlags, NodeLayout, Order, Page, PageHeader, PageKind, P_INVALID,
};
use std::cmp::Ordering;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Which tree a page belongs to, so its keys can be decoded and shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeCtx {
    /// Database the tree belongs to.
    pub db: DbName,
    /// That database's flags (for a duplicate tree: the owner's).
    pub flags: DbFlags,
    /// The tree holds duplicate values of one key (a sub-database or a
    /// sub-page): its "keys" are values, its leaves carry no data.
    pub dup_tree: bool,
    /// LEAF2 item size from the sub-database record (`md_pad`).
    pub leaf2_size: usize,
}

impl TreeCtx {
    pub fn of_db(db: DbName, flags: DbFlags) -> TreeCtx {
        TreeCtx {
            db,
            flags,
            dup_tree: false,
            leaf2_size: 0,
        }
    }

    /// Order of this tree's keys.
    pub fn order(&self) -> Order {
        if self.dup_tree {
            Order::for_dups(self.flags)
        } else {
            Order::for_keys(self.flags)
        }
    }

    /// Keys of this tree are native integers (INTEGERKEY, or INTEGERDUP
    /// for duplicate trees).
    pub fn integer_keys(&self) -> bool {
        if self.dup_tree {
            self.flags.contains(DbFlags::INTEGER_DUP)
        } else {
            self.flags.contains(DbFlags::INTEGER_KEY)
        }
    }

    /// Values of this tree's leaves are integers (INTEGERDUP, main tree of a
    /// DUPSORT database holding one inline value).
    pub fn integer_values(&self) -> bool {
        !self.dup_tree
            && self.flags.contains(DbFlags::DUP_SORT)
            && self.flags.contains(DbFlags::INTEGER_DUP)
    }

    fn compressed(&self) -> bool {
        self.flags.contains(DbFlags::PREFIX_COMPRESSION)
    }
}

/// Where a page lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageAt {
    /// A page of the file.
    Page(u64),
    /// The sub-page stored in node `node` of leaf page `leaf`.
    SubPage { leaf: u64, node: usize },
}

impl PageAt {
    pub fn label(&self) -> String {
        match self {
            PageAt::Page(p) => p.to_string(),
            PageAt::SubPage { leaf, node } => format!("{leaf}#{node}"),
        }
    }
}

/// What a node's data is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemData {
    /// Branch node: the child page and, on counted pages, its entry count.
    Child { pgno: u64, count: Option<u64> },
    /// Inline value.
    Value { size: u64, bytes: Vec<u8> },
    /// Value in an overflow run; `pages` read from the run's first page.
    Overflow {
        pgno: u64,
        size: u64,
        pages: Option<u32>,
    },
    /// Duplicates in a sub-page of `size` bytes holding `items` values.
    SubPage { size: usize, items: usize },
    /// Duplicates in a sub-database.
    SubDb(DbRecord),
    /// A named database's record (main tree).
    NamedDb(DbRecord),
    /// A duplicate value (leaf of a duplicate tree: no data).
    DupValue,
    /// Fixed-size item of a LEAF2 page.
    Leaf2,
    /// The node's data could not be read as its flags say.
    Bad(String),
}

/// One node or LEAF2 item of a page, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub index: usize,
    /// Offset of the node in the page (LEAF2: of the item).
    pub offset: usize,
    /// Bytes the node occupies (LEAF2: the item size).
    pub size: usize,
    /// The full key (decoded on compressed pages). Branch node 0: empty.
    pub key: Vec<u8>,
    /// Bytes stored for the key (`mn_ksize`).
    pub key_stored: usize,
    /// Compressed pages, nodes >= 1: bytes shared with node 0.
    pub shared: Option<usize>,
    /// Raw node flags word (leaf nodes).
    pub node_flags: NodeFlags,
    pub data: ItemData,
}

/// Overflow run header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverflowRun {
    pub pages: u32,
    /// Size of the value, when reached from its node.
    pub value_size: Option<u64>,
}

/// A decoded page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageDump {
    pub at: PageAt,
    pub ctx: TreeCtx,
    /// The page's bytes (sub-page: the node's data; overflow: first page).
    pub bytes: Vec<u8>,
    pub header: PageHeader,
    pub kind: PageKind,
    /// Keys are stored against node 0.
    pub compressed: bool,
    pub items: Vec<Item>,
    pub overflow: Option<OverflowRun>,
    /// What could not be decoded (shown, never guessed around).
    pub problem: Option<String>,
    /// Read transaction the page was read in.
    pub txnid: u64,
}

impl PageDump {
    /// Fill: bytes used (header, pointers, nodes) out of the page size.
    pub fn used_bytes(&self) -> usize {
        match self.kind {
            PageKind::Branch | PageKind::Leaf | PageKind::Leaf2 => self
                .header
                .free_bytes()
                .map_or(self.bytes.len(), |f| self.bytes.len().saturating_sub(f)),
            _ => self.bytes.len(),
        }
    }

    pub fn free_bytes(&self) -> usize {
        self.bytes.len() - self.used_bytes()
    }

    /// Index of the item whose key is `key` under `order`.
    pub fn find(&self, key: &[u8], order: Order) -> Option<usize> {
        self.items
            .iter()
            .position(|it| order.cmp(&it.key, key) == Ordering::Equal)
    }
}

/// A key or value as a number when the tree says it is one.
pub fn as_integer(bytes: &[u8], integer: bool) -> Option<u64> {
    if integer {
        integer_value(bytes)
    } else {
        None
    }
}

/// One reader slot from the reader table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderSlot {
    pub pid: i64,
    pub thread: String,
    /// Snapshot held; `None` for an idle slot.
    pub txnid: Option<u64>,
}

/// Parse `mdb_reader_list` text (`pid thread txnid` lines, `-` when idle).
pub fn parse_readers(text: &str) -> Vec<ReaderSlot> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() != 3 {
                return None;
            }
            let pid = f[0].parse::<i64>().ok()?;
            let txnid = match f[2] {
                "-" => None,
                t => Some(t.parse::<u64>().ok()?),
            };
            Some(ReaderSlot {
                pid,
                thread: f[1].to_string(),
                txnid,
            })
        })
        .collect()
}

impl View<'_> {
    fn node_layout(&self) -> NodeLayout {
        match self.layout() {
            dlmdb::Layout::Lmdb => NodeLayout::Stock,
            _ => NodeLayout::Padded,
        }
    }

    fn page_size(&self) -> Result<usize> {
        Ok(self.env_stat()?.page_size as usize)
    }

    /// `len` bytes of the data file at page `pgno`.
    fn read_pages(&self, pgno: u64, count: usize) -> Result<Vec<u8>> {
        let psize = self.page_size()?;
        let file = File::open(self.data_file())
            .with_context(|| format!("opening {}", self.data_file().display()))?;
        let file_len = file.metadata()?.len();
        let off = pgno
            .checked_mul(psize as u64)
            .ok_or_else(|| anyhow!("page {pgno} is beyond any file"))?;
        let len = psize * count;
        if off + len as u64 > file_len {
            bail!(
                "page {pgno} is past the end of the data file ({} pages)",
                file_len / psize as u64
            );
        }
        let mut buf = vec![0u8; len];
        file.read_exact_at(&mut buf, off)
            .with_context(|| format!("reading page {pgno}"))?;
        Ok(buf)
    }

    /// Root page and tree context of a database in this transaction.
    pub fn tree_root(&self, db: &DbName) -> Result<(u64, TreeCtx)> {
        let record = match db {
            None => {
                // The main tree's record is in the meta page this
                // transaction read: the one with its txn id.
                let psize = self.page_size()?;
                let metas = self.read_pages(0, 2)?;
                let txnid = self.txnid();
                [0usize, 1]
                    .iter()
                    .filter_map(|&i| {
                        dlmdb_format::meta::parse_meta(&metas[i * psize..(i + 1) * psize], i as u64)
                            .ok()
                    })
                    .find(|m| m.txnid == txnid)
                    .map(|m| m.main)
                    .ok_or_else(|| {
                        anyhow!("the meta page of txn {txnid} was overwritten; refresh (r)")
                    })?
            }
            Some(name) => {
                let bytes = self
                    .catalog_record(name)?
                    .ok_or_else(|| anyhow!("no database named {name:?}"))?;
                DbRecord::parse_exact(&bytes).map_err(|e| anyhow!("record of {name:?}: {e}"))?
            }
        };
        if record.is_empty() {
            bail!("database {} is empty (no root page)", display_name(db));
        }
        Ok((
            record.root,
            TreeCtx::of_db(db.clone(), DbFlags::from_bits_retain(record.flags)),
        ))
    }

    /// Read and decode the page at `at` as part of the tree `ctx`.
    pub fn page(&self, at: &PageAt, ctx: &TreeCtx) -> Result<PageDump> {
        let layout = self.node_layout();
        let bytes = match at {
            PageAt::Page(p) => {
                if *p == P_INVALID {
                    bail!("no page (P_INVALID)");
                }
                self.read_pages(*p, 1)?
            }
            PageAt::SubPage { leaf, node } => {
                let b = self.read_pages(*leaf, 1)?;
                let page = Page::parse(&b)?;
                let n = page.node(*node, layout)?;
                if !n.flags().contains(NodeFlags::DUPDATA) || n.flags().contains(NodeFlags::SUBDATA)
                {
                    bail!("node {node} of page {leaf} holds no sub-page");
                }
                n.data.to_vec()
            }
        };
        Ok(decode(
            at.clone(),
            ctx.clone(),
            bytes,
            layout,
            self.txnid(),
            |pgno| {
                self.read_pages(pgno, 1)
                    .ok()
                    .and_then(|b| PageHeader::parse(&b).ok())
                    .filter(|h| h.kind() == PageKind::Overflow)
                    .map(|h| h.overflow_pages())
            },
        ))
    }

    /// The path of pages from the root of `db` to the leaf that holds
    /// `key`, and the key's index there (`None` if the leaf lacks it).
    pub fn path_to_key(&self, db: &DbName, key: &[u8]) -> Result<(Vec<PageDump>, Option<usize>)> {
        let (root, ctx) = self.tree_root(db)?;
        let order = ctx.order();
        let mut path = Vec::new();
        let mut at = PageAt::Page(root);
        for _ in 0..64 {
            let page = self.page(&at, &ctx)?;
            if let Some(p) = &page.problem {
                bail!("page {}: {p}", at.label());
            }
            match page.kind {
                PageKind::Branch => {
                    // The last child whose separator is <= key (child 0 otherwise).
                    let mut child = 0;
                    for it in page.items.iter().skip(1) {
                        if order.cmp(&it.key, key) != Ordering::Greater {
                            child = it.index;
                        } else {
                            break;
                        }
                    }
                    let ItemData::Child { pgno, .. } = page.items[child].data else {
                        bail!("branch node without a child");
                    };
                    at = PageAt::Page(pgno);
                    path.push(page);
                }
                _ => {
                    let idx = page.find(key, order);
                    path.push(page);
                    return Ok((path, idx));
                }
            }
        }
        bail!("tree deeper than 64 levels")
    }

    /// The reader table (`None` without a lock file).
    pub fn readers(&self) -> Result<Option<Vec<ReaderSlot>>> {
        if self.no_lock() {
            return Ok(None);
        }
        Ok(Some(parse_readers(&self.reader_list()?)))
    }

    /// Free-list records of this snapshot (the format layer's record type).
    pub fn free_records(&self) -> Result<Vec<dlmdb_format::FreeRecord>> {
        self.freelist()
    }
}

/// Decode page bytes. Problems end up in `problem`, with the items decoded
/// up to that point.
pub fn decode(
    at: PageAt,
    ctx: TreeCtx,
    bytes: Vec<u8>,
    layout: NodeLayout,
    txnid: u64,
    overflow_run: impl Fn(u64) -> Option<u32>,
) -> PageDump {
    let header = match PageHeader::parse(&bytes) {
        Ok(h) => h,
        Err(e) => {
            return PageDump {
                at,
                ctx,
                header: PageHeader::parse(&[0u8; 16]).expect("16 bytes"),
                bytes,
                kind: PageKind::Unknown,
                compressed: false,
                items: Vec::new(),
                overflow: None,
                problem: Some(e.to_string()),
                txnid,
            }
        }
    };
    let kind = header.kind();
    let compressed = kind == PageKind::Leaf && ctx.compressed();
    let mut dump = PageDump {
        at,
        ctx,
        header,
        kind,
        compressed,
        items: Vec::new(),
        overflow: None,
        problem: None,
        txnid,
        bytes: Vec::new(),
    };
    let res = fill_items(&mut dump, &bytes, layout, &overflow_run);
    if let Err(e) = res {
        dump.problem = Some(e.to_string());
    }
    if kind == PageKind::Overflow {
        dump.overflow = Some(OverflowRun {
            pages: header.overflow_pages(),
            value_size: None,
        });
    } else if matches!(kind, PageKind::Meta | PageKind::Unknown) && dump.problem.is_none() {
        dump.problem = Some(format!(
            "page flags {} ({:#06x}): not a page of a tree",
            header.flags.names(),
            header.raw_flags
        ));
    }
    dump.bytes = bytes;
    dump
}

fn fill_items(
    dump: &mut PageDump,
    bytes: &[u8],
    layout: NodeLayout,
    overflow_run: &impl Fn(u64) -> Option<u32>,
) -> dlmdb_format::Result<()> {
    let page = Page::parse(bytes)?;
    match dump.kind {
        PageKind::Leaf2 => {
            let size = if dump.ctx.leaf2_size > 0 && !matches!(dump.at, PageAt::SubPage { .. }) {
                dump.ctx.leaf2_size
            } else {
                page.leaf2_item_size()
            };
            for i in 0..page.items()? {
                let item = page.leaf2_item(i, size)?;
                dump.items.push(Item {
                    index: i,
                    offset: 16 + i * size,
                    size,
                    key: item.to_vec(),
                    key_stored: size,
                    shared: None,
                    node_flags: NodeFlags::empty(),
                    data: ItemData::Leaf2,
                });
            }
        }
        PageKind::Branch | PageKind::Leaf => {
            let mut trunk: Vec<u8> = Vec::new();
            for i in 0..page.items()? {
                let node = page.node(i, layout)?;
                let (key, shared) = if dump.compressed && i > 0 {
                    let PrefixedKey {
                        key, shared, raw, ..
                    } = decode_prefixed(&trunk, node.key)?;
                    (key, (!raw).then_some(shared))
                } else {
                    if i == 0 {
                        trunk = node.key.to_vec();
                    }
                    (node.key.to_vec(), None)
                };
                let flags = node.flags();
                let data = if node.branch {
                    ItemData::Child {
                        pgno: node.child_pgno(),
                        count: node.count,
                    }
                } else if flags.contains(NodeFlags::BIGDATA) {
                    match node.overflow_pgno() {
                        Some(p) => ItemData::Overflow {
                            pgno: p,
                            size: u64::from(node.data_size()),
                            pages: overflow_run(p),
                        },
                        None => ItemData::Bad("overflow reference is not 8 bytes".into()),
                    }
                } else if flags.contains(NodeFlags::SUBDATA) {
                    match DbRecord::parse_exact(node.data) {
                        Ok(r) if flags.contains(NodeFlags::DUPDATA) => ItemData::SubDb(r),
                        Ok(r) => ItemData::NamedDb(r),
                        Err(e) => ItemData::Bad(e.to_string()),
                    }
                } else if flags.contains(NodeFlags::DUPDATA) {
                    match Page::parse_subpage(node.data).and_then(|sp| sp.items()) {
                        Ok(n) => ItemData::SubPage {
                            size: node.data.len(),
                            items: n,
                        },
                        Err(e) => ItemData::Bad(format!("sub-page: {e}")),
                    }
                } else if dump.ctx.dup_tree {
                    ItemData::DupValue
                } else {
                    ItemData::Value {
                        size: u64::from(node.data_size()),
                        bytes: node.data[..node.data.len().min(256)].to_vec(),
                    }
                };
                dump.items.push(Item {
                    index: i,
                    offset: node.offset,
                    size: node.size,
                    key,
                    key_stored: node.key.len(),
                    shared,
                    node_flags: flags,
                    data,
                });
            }
        }
        _ => {}
    }
    Ok(())
}

/// The tree context for following item `item` of `page` into what it
/// points to, and where that is.
pub fn follow(page: &PageDump, item: usize) -> Option<(PageAt, TreeCtx)> {
    let it = page.items.get(item)?;
    let PageAt::Page(here) = page.at else {
        return None; // sub-pages point nowhere
    };
    match &it.data {
        ItemData::Child { pgno, .. } => Some((PageAt::Page(*pgno), page.ctx.clone())),
        ItemData::Overflow { pgno, .. } => Some((PageAt::Page(*pgno), page.ctx.clone())),
        ItemData::SubPage { .. } => Some((
            PageAt::SubPage {
                leaf: here,
                node: item,
            },
            TreeCtx {
                dup_tree: true,
                ..page.ctx.clone()
            },
        )),
        ItemData::SubDb(r) if !r.is_empty() => Some((
            PageAt::Page(r.root),
            TreeCtx {
                dup_tree: true,
                leaf2_size: r.pad as usize,
                ..page.ctx.clone()
            },
        )),
        ItemData::NamedDb(r) if !r.is_empty() => {
            let name = String::from_utf8(it.key.clone()).ok()?;
            Some((
                PageAt::Page(r.root),
                TreeCtx::of_db(Some(name), DbFlags::from_bits_retain(r.flags)),
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn reader_lines() {
        let t = "    pid     thread     txnid\n      123 7f00 -\n      124 7f01 55\n";
        let r = parse_readers(t);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].txnid, None);
        assert_eq!(r[1].txnid, Some(55));
        assert!(parse_readers("(no active readers)\n").is_empty());
    }
}
