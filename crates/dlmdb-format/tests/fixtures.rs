//! Read the reference fixtures (written by DLMDB and stock LMDB) with the
//! format layer alone: every tree's leaves must hold exactly the entries
//! its record counts. Skips with a message when the fixtures are absent.

use dlmdb_format::meta::current_meta;
use dlmdb_format::prefix::page_keys;
use dlmdb_format::{DbFlags, DbRecord, NodeFlags, NodeLayout, Order, Page, PageKind};

use dlmdb_kit::fixtures;

struct File {
    bytes: Vec<u8>,
    psize: usize,
    layout: NodeLayout,
}

impl File {
    fn page(&self, pgno: u64) -> Page<'_> {
        let off = pgno as usize * self.psize;
        Page::parse(&self.bytes[off..off + self.psize]).unwrap()
    }

    /// Entries below `pgno` (a leaf counts its items, sub-pages their
    /// items, sub-databases their record's entries); counted branch nodes
    /// are checked against their child's total on the way.
    fn entries(&self, pgno: u64, flags: DbFlags, sub: bool) -> u64 {
        let page = self.page(pgno);
        let n = page.items().unwrap();
        match page.kind() {
            PageKind::Branch => {
                let sum = dlmdb_format::counted::branch_count_sum(&page, self.layout).unwrap();
                let total: u64 = (0..n)
                    .map(|i| {
                        let node = page.node(i, self.layout).unwrap();
                        let below = self.entries(node.child_pgno(), flags, sub);
                        // The format crate's own sum agrees with the walk.
                        let child = self.page(node.child_pgno());
                        if child.kind() != PageKind::Branch {
                            let c =
                                dlmdb_format::counted::leaf_page_entries(&child, self.layout, sub)
                                    .unwrap();
                            assert_eq!(c, below);
                        }
                        if let Some(c) = node.count {
                            assert_eq!(c, below, "count of node {i} on page {pgno}");
                        }
                        below
                    })
                    .sum();
                if let Some(sum) = sum {
                    assert_eq!(sum, total, "count sum of page {pgno}");
                }
                total
            }
            PageKind::Leaf2 => n as u64,
            PageKind::Leaf => {
                let compressed = flags.contains(DbFlags::PREFIX_COMPRESSION);
                let keys = page_keys(&page, self.layout, compressed).unwrap();
                assert_eq!(keys.len(), n);
                let order = if sub {
                    Order::for_dups(flags)
                } else {
                    Order::for_keys(flags)
                };
                for w in keys.windows(2) {
                    assert_eq!(
                        order.cmp(&w[0].key, &w[1].key),
                        std::cmp::Ordering::Less,
                        "keys out of order on page {pgno}"
                    );
                }
                (0..n)
                    .map(|i| {
                        let node = page.node(i, self.layout).unwrap();
                        let f = node.flags();
                        if sub || !flags.contains(DbFlags::DUP_SORT) {
                            1
                        } else if f.contains(NodeFlags::DUPDATA | NodeFlags::SUBDATA) {
                            let r = DbRecord::parse_exact(node.data).unwrap();
                            let below = self.entries(r.root, flags, true);
                            assert_eq!(below, r.entries);
                            below
                        } else if f.contains(NodeFlags::DUPDATA) {
                            let sp = Page::parse(node.data).unwrap();
                            if sp.kind() == PageKind::Leaf {
                                page_keys(&sp, self.layout, compressed).unwrap();
                            }
                            sp.items().unwrap() as u64
                        } else {
                            1
                        }
                    })
                    .sum()
            }
            k => panic!("page {pgno} is {k:?}"),
        }
    }
}

#[test]
fn every_tree_of_every_fixture_adds_up() {
    let Some(dir) = fixtures() else {
        eprintln!("fixtures not found; set DLMDB_FIXTURES");
        return;
    };
    let mut checked = 0;
    for name in [
        "v2/plain.mdb",
        "v2/counted.mdb",
        "v2/prefix.mdb",
        "v2/dupsort.mdb",
        "v2/main_only.mdb",
        "plain.stock.mdb",
        "dupsort.stock.mdb",
        "stock.mdb",
    ] {
        // Version-2 files are DLMDB's, with padded nodes; the rest are
        // stock LMDB's.
        let layout = if name.starts_with("v2/") {
            NodeLayout::Padded
        } else {
            NodeLayout::Stock
        };
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let m = current_meta(&bytes[..4096], &bytes[4096..8192]).unwrap();
        let psize = m.page_size() as usize;
        let m = current_meta(&bytes[..psize], &bytes[psize..2 * psize]).unwrap();
        let f = File {
            bytes,
            psize,
            layout,
        };
        if m.main.is_empty() {
            continue;
        }
        let main_flags = m.main.db_flags();
        assert_eq!(
            f.entries(m.main.root, main_flags, false),
            m.main.entries,
            "{name} main"
        );
        // Named databases: SUBDATA records in the main tree's leaves.
        let mut stack = vec![m.main.root];
        while let Some(p) = stack.pop() {
            let page = f.page(p);
            let n = page.items().unwrap();
            for i in 0..n {
                let node = page.node(i, layout).unwrap();
                match page.kind() {
                    PageKind::Branch => stack.push(node.child_pgno()),
                    _ if node.flags() == NodeFlags::SUBDATA => {
                        let r = DbRecord::parse_exact(node.data).unwrap();
                        if !r.is_empty() {
                            let got = f.entries(r.root, r.db_flags(), false);
                            assert_eq!(
                                got,
                                r.entries,
                                "{name} db {:?}",
                                String::from_utf8_lossy(node.key)
                            );
                            checked += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(checked > 5, "only {checked} named databases checked");
}
