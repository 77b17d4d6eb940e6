//! Structural checks of a store through our engine's raw API: every tree is
//! walked with `mdb_page_walk`, the free list is read through a FREE_DBI
//! cursor, and the page accounting invariant of lmdb-format.md §12.2 is
//! verified:
//!
//! `2 + Σ pages of all trees + Σ n over FREE_DBI records == last_pg + 1`
//!
//! and, stronger, every page 2..=last_pg is used or free exactly once. The
//! per-tree page counts found by the walk must also equal the counters stored
//! in each database record (`mdb_stat`), for plain (non-DUPSORT) databases.

use std::collections::HashMap;
use std::os::raw::{c_int, c_void};

use crate::raw::{Env, Txn};
use dlmdb_sys as ffi;

/// Pages found by the walk of one tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreePages {
    pub branch: u64,
    pub leaf: u64,
    pub overflow: u64,
    /// (first pgno, pages) of every page or overflow run.
    pub runs: Vec<(u64, u64)>,
}

/// Summary of a successful accounting check.
#[derive(Debug, Clone)]
pub struct AccountingReport {
    pub last_pg: u64,
    pub tree_pages: u64,
    pub free_pages: u64,
    pub trees: Vec<(String, TreePages)>,
}

unsafe extern "C" fn collect(ctx: *mut c_void, info: *const ffi::MDB_pageinfo) -> c_int {
    let v = &mut *(ctx as *mut Vec<ffi::MDB_pageinfo>);
    v.push(*info);
    0
}

/// Every page `mdb_page_walk` reports for `dbi`.
pub fn walk_pages(txn: &Txn<'_>, dbi: u32) -> Result<Vec<ffi::MDB_pageinfo>, i32> {
    let mut v: Vec<ffi::MDB_pageinfo> = Vec::new();
    // SAFETY: the callback only pushes copies into `v`, which outlives the call.
    let rc = unsafe {
        ffi::mdb_page_walk(
            txn.raw(),
            dbi,
            Some(collect),
            &mut v as *mut _ as *mut c_void,
        )
    };
    if rc == 0 {
        Ok(v)
    } else {
        Err(rc)
    }
}

fn tree_pages(infos: &[ffi::MDB_pageinfo]) -> TreePages {
    let mut t = TreePages::default();
    for i in infos {
        if i.pi_pages == 0 {
            continue; // sub-page inside a leaf node: no page of its own
        }
        if i.pi_type & ffi::MDB_PAGE_OVERFLOW != 0 {
            t.overflow += i.pi_pages as u64;
        } else if i.pi_type & ffi::MDB_PAGE_BRANCH != 0 {
            t.branch += 1;
        } else if i.pi_type & ffi::MDB_PAGE_LEAF != 0 {
            t.leaf += 1;
        }
        t.runs.push((i.pi_pgno as u64, i.pi_pages as u64));
    }
    t
}

/// Decode one FREE_DBI record: `[n, p1 > p2 > ... > pn]` (native u64s).
pub fn decode_free_record(data: &[u8]) -> Result<Vec<u64>, String> {
    let word = |i: usize| -> Option<u64> {
        data.get(i * 8..i * 8 + 8)
            .map(|b| u64::from_ne_bytes(b.try_into().unwrap()))
    };
    let n = word(0).ok_or("free-list record shorter than 8 bytes")? as usize;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(word(i + 1).ok_or_else(|| {
            format!(
                "free-list record says {n} pages but has {} bytes",
                data.len()
            )
        })?);
    }
    if out.windows(2).any(|w| w[0] <= w[1]) {
        return Err(format!("free-list record not strictly descending: {out:?}"));
    }
    Ok(out)
}

/// Run the full accounting check on the newest snapshot of `env`.
/// `dupsort_names` lists named DBs whose record counters follow other rules
/// (their page counts are not compared).
pub fn check_accounting(env: &Env) -> Result<AccountingReport, String> {
    let last_pg = env.info().map_err(|e| format!("env_info: {e}"))?.last_pgno;
    let txn = env.begin_ro().map_err(|e| format!("txn_begin: {e}"))?;
    let mut owner: HashMap<u64, String> = HashMap::new();
    let mut trees = Vec::new();
    let mut tree_total = 0u64;

    let names = txn
        .named_dbs()
        .map_err(|e| format!("listing named DBs: {e}"))?;
    let mut dbis: Vec<(String, u32)> = vec![("FREE_DBI".into(), 0), ("MAIN_DBI".into(), 1)];
    for n in &names {
        let dbi = txn
            .open_db(Some(n), 0)
            .map_err(|e| format!("open {:?}: {e}", n))?;
        dbis.push((String::from_utf8_lossy(n).into_owned(), dbi));
    }
    for (name, dbi) in &dbis {
        let infos = walk_pages(&txn, *dbi).map_err(|e| format!("page_walk({name}): error {e}"))?;
        let t = tree_pages(&infos);
        let st = txn.stat(*dbi).map_err(|e| format!("stat({name}): {e}"))?;
        let flags = if *dbi > 1 {
            txn.db_flags(*dbi).unwrap_or(0)
        } else {
            0
        };
        let dupsort = flags & ffi::MDB_DUPSORT != 0;
        if !dupsort
            && (t.branch, t.leaf, t.overflow) != (st.branch_pages, st.leaf_pages, st.overflow_pages)
        {
            return Err(format!(
                "{name}: walk found branch/leaf/overflow {}/{}/{} but the record says {}/{}/{}",
                t.branch, t.leaf, t.overflow, st.branch_pages, st.leaf_pages, st.overflow_pages
            ));
        }
        for &(p, n) in &t.runs {
            for pg in p..p + n {
                if pg < 2 || pg > last_pg {
                    return Err(format!("{name}: page {pg} outside 2..={last_pg}"));
                }
                if let Some(o) = owner.insert(pg, name.clone()) {
                    return Err(format!("page {pg} used by both {o} and {name}"));
                }
            }
            tree_total += n;
        }
        trees.push((name.clone(), t));
    }

    let mut free_total = 0u64;
    for (k, v) in txn
        .walk(0, true)
        .map_err(|e| format!("FREE_DBI cursor: {e}"))?
    {
        let pages =
            decode_free_record(&v).map_err(|e| format!("FREE_DBI key {}: {e}", crate::show(&k)))?;
        for pg in pages {
            if pg < 2 || pg > last_pg {
                return Err(format!("free page {pg} outside 2..={last_pg}"));
            }
            if let Some(o) = owner.insert(pg, "free list".into()) {
                return Err(format!("page {pg} is free but also used by {o}"));
            }
            free_total += 1;
        }
    }
    if 2 + tree_total + free_total != last_pg + 1 {
        let missing: Vec<u64> = (2..=last_pg)
            .filter(|p| !owner.contains_key(p))
            .take(20)
            .collect();
        return Err(format!(
            "accounting: 2 + {tree_total} tree pages + {free_total} free pages != last_pg {last_pg} + 1; \
             unaccounted pages (first 20): {missing:?}"
        ));
    }
    Ok(AccountingReport {
        last_pg,
        tree_pages: tree_total,
        free_pages: free_total,
        trees,
    })
}
