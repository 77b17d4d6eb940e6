//! What a counted branch node's count means (DLMDB's `MDB_COUNTED`):
//! the entries of its child's subtree, where a leaf page's entries are the
//! sum of its nodes' contributions:
//!
//! | leaf node | contribution |
//! |---|---|
//! | LEAF2 item; plain value; overflow value; named-database record | 1 |
//! | `DUPDATA` (inline sub-page) | the sub-page's items |
//! | `DUPDATA|SUBDATA` (duplicate sub-database) | the record's `entries` |
//!
//! In a duplicate tree (a sub-database's pages) every node counts 1.

use crate::node::{Node, NodeFlags, NodeLayout};
use crate::page::{Page, PageKind};
use crate::record::DbRecord;
use crate::{FormatError, Result};

/// Entries leaf node `node` contributes (`dup_tree`: the node is a value of
/// a duplicate sub-database, which always counts 1).
pub fn leaf_contribution(node: &Node<'_>, dup_tree: bool) -> Result<u64> {
    if node.branch {
        return Err(FormatError::Invalid(
            "a branch node contributes its count".into(),
        ));
    }
    let f = node.flags();
    if dup_tree || !f.contains(NodeFlags::DUPDATA) {
        return Ok(1);
    }
    if f.contains(NodeFlags::SUBDATA) {
        return Ok(DbRecord::parse_exact(node.data)?.entries);
    }
    Ok(Page::parse_subpage(node.data)?.items()? as u64)
}

/// Entries of a leaf or LEAF2 page: the sum of its nodes' contributions.
pub fn leaf_page_entries(page: &Page<'_>, layout: NodeLayout, dup_tree: bool) -> Result<u64> {
    match page.kind() {
        PageKind::Leaf2 => Ok(page.items()? as u64),
        PageKind::Leaf => {
            let mut sum = 0u64;
            for i in 0..page.items()? {
                sum += leaf_contribution(&page.node(i, layout)?, dup_tree)?;
            }
            Ok(sum)
        }
        k => Err(FormatError::Invalid(format!(
            "a {} page is not a leaf",
            k.name()
        ))),
    }
}

/// Sum of a counted branch page's node counts (`None` for other pages).
pub fn branch_count_sum(page: &Page<'_>, layout: NodeLayout) -> Result<Option<u64>> {
    if !page.header.counted_branch() {
        return Ok(None);
    }
    let mut sum = 0u64;
    for i in 0..page.items()? {
        let c = page.node(i, layout)?.count.expect("counted branch node");
        sum = sum
            .checked_add(c)
            .ok_or_else(|| FormatError::Invalid("branch counts overflow u64".into()))?;
    }
    Ok(Some(sum))
}
