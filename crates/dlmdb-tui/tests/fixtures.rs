//! The viewer on real DLMDB / stock LMDB files from the reference fixtures
//! (`$DLMDB_FIXTURES` or `<workspace>/tests/fixtures`). Each file is
//! copied to a temp dir first: opening creates a lock file beside it.

mod common;

use common::*;
use dlmdb::Layout;
use dlmdb_tui::model::{DbDetail, Snapshot};
use std::path::{Path, PathBuf};

/// Copy a fixture data file into `dir`; `None` (and a message) when the
/// fixtures are not there.
fn fixture(dir: &tempfile::TempDir, rel: &str) -> Option<PathBuf> {
    let src = fixtures_dir().join(rel);
    if !src.exists() {
        eprintln!(
            "skipping: fixture {} not found (set DLMDB_FIXTURES)",
            src.display()
        );
        return None;
    }
    let dst = dir.path().join(rel.replace('/', "_"));
    std::fs::copy(&src, &dst).unwrap();
    Some(dst)
}

fn load(path: &Path) -> (Layout, Snapshot, Vec<DbDetail>) {
    let mut store = open(path);
    assert!(store.no_subdir, "a single file opens as MDB_NOSUBDIR");
    let layout = store.layout();
    let (reason, version) = (store.layout_reason.clone(), store.data_version);
    let v = store.view().unwrap();
    let snap = v.snapshot(&reason, version).unwrap();
    let details = snap
        .dbs
        .iter()
        .map(|d| v.detail(&d.name).unwrap())
        .collect();
    (layout, snap, details)
}

/// [`load`] on a copy of the fixture `rel`; `None` when it is not there.
fn loaded(rel: &str) -> Option<(Layout, Snapshot, Vec<DbDetail>)> {
    let dir = tempfile::tempdir().unwrap();
    Some(load(&fixture(&dir, rel)?))
}

/// [`loaded`], with the layout the probe must recognise in the fixture.
fn loaded_as(rel: &str, want: Layout) -> Option<(Snapshot, Vec<DbDetail>)> {
    let (layout, snap, details) = loaded(rel)?;
    assert_eq!(layout, want, "the probe's layout of {rel}");
    Some((snap, details))
}

fn find<'a>(details: &'a [DbDetail], name: &str) -> &'a DbDetail {
    details
        .iter()
        .find(|d| d.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no database {name}"))
}

/// Every non-DUPSORT leaf rebuilds byte-exact from the key sizes.
fn assert_leaves_exact(details: &[DbDetail]) {
    for d in details {
        assert!(d.walk_matches_stat, "{:?}: walk differs from stat", d.name);
        if let Some(c) = &d.compression {
            if let Some((ok, n)) = c.node_check {
                assert_eq!(ok, n, "{:?}: {ok}/{n} leaves rebuilt", d.name);
            }
        }
    }
}

#[test]
fn dlmdb_v1_prefix_fixture() {
    // The probe recognises DLMDB's padded v1.
    let Some((snap, details)) = loaded_as("prefix.mdb", Layout::DlmdbV1) else {
        return;
    };
    assert_eq!(snap.env.data_version, Some(1));
    let p = find(&details, "prefix");
    assert_eq!(
        (
            p.stat.entries,
            p.stat.depth,
            p.stat.branch_pages,
            p.stat.leaf_pages
        ),
        (2438, 2, 1, 38)
    );
    let c = p.compression.unwrap();
    assert!(c.prefix && c.keys == 2438);
    assert!(c.ratio() > 1.5, "ratio {}", c.ratio());
    let pc = find(&details, "prefix_counted");
    assert_eq!(pc.stat.entries, 7147);
    let counted = pc.counted.unwrap();
    assert_eq!(
        (counted.count_all, counted.root_sum),
        (Some(7147), Some(7147))
    );
    let pd = find(&details, "prefix_dups");
    assert_eq!((pd.dup.unwrap().keys, pd.stat.entries), (967, 4232));
    let c = pd.compression.unwrap();
    // Values of keys with duplicates are compressed too (8-byte ids sharing
    // their high bytes).
    assert!(c.dup_values > 3000 && c.dup_values <= 4232);
    assert!(c.value_ratio() > 1.2, "value ratio {}", c.value_ratio());
    assert_leaves_exact(&details);
}

#[test]
fn dlmdb_v2_plain_fixture() {
    let Some((_snap, details)) = loaded_as("v2/plain.mdb", Layout::DlmdbV2) else {
        return;
    };
    let kv = find(&details, "kv");
    assert_eq!(
        (kv.stat.entries, kv.stat.depth, kv.levels.len()),
        (2789, 3, 3)
    );
    let big = find(&details, "big");
    assert_eq!(big.overflow.pages, big.stat.overflow_pages);
    assert!(big.overflow.runs > 0 && big.overflow.runs <= 22);
    assert_eq!(find(&details, "empty").stat.depth, 0);
    for d in &details {
        assert!(d.walk_matches_stat, "{:?}", d.name);
    }
    assert_leaves_exact(&details);
}

#[test]
fn stock_lmdb_fixture() {
    let Some((_snap, details)) = loaded_as("stock.mdb", Layout::Lmdb) else {
        return;
    };
    assert_eq!(find(&details, "accounts").stat.entries, 1540);
    let tags = find(&details, "tags");
    let dup = tags.dup.unwrap();
    assert_eq!((dup.keys, dup.values, dup.sub_trees), (200, 1585, 1));
    assert_eq!(find(&details, "seq").stat.entries, 800);
    assert!(find(&details, "accounts").overflow.runs > 0);
    assert_leaves_exact(&details);
}

#[test]
fn browse_a_fixture_in_the_app() {
    let dir = tempfile::tempdir().unwrap();
    let Some(path) = fixture(&dir, "dupsort.mdb") else {
        return;
    };
    let mut store = open(&path);
    let mut app = loaded_app(&mut store, 8);
    select(&mut app, "dups");
    app.open_in_browser(Some("dups".into()));
    app.browser.pending = Some(dlmdb_tui::app::Nav::Seek(b"hot-1".to_vec()));
    app.sync(&mut store);
    let rows = app.browser.visible();
    assert_eq!(rows[0].key, b"hot-1");
    assert!(rows[0].first_dup);
    assert_eq!(rows[0].dups, 900);
    assert!(rows[1..].iter().all(|r| !r.first_dup && r.key == b"hot-1"));
    assert!(app.status.is_none(), "{:?}", app.status);
}

#[test]
fn dupsort_counters_v1_and_v2() {
    let (Some((_, _, d1)), Some((l2, _, d2))) = (loaded("dupsort.mdb"), loaded("v2/dupsort.mdb"))
    else {
        return;
    };
    assert_eq!(l2, Layout::DlmdbV2);
    for name in ["dups", "dupfixed", "intdup", "revdup"] {
        let (a, b) = (find(&d1, name), find(&d2, name));
        assert!(!a.counters_include_subtrees && b.counters_include_subtrees);
        assert!(a.walk_matches_stat && b.walk_matches_stat, "{name}");
        assert_eq!(a.dup.unwrap().values, b.dup.unwrap().values);
    }
    // The README's example: dupfixed records 2/23 in version 2.
    let df = find(&d2, "dupfixed");
    assert_eq!((df.stat.branch_pages, df.stat.leaf_pages), (2, 23));
    assert_leaves_exact(&d1);
    assert_leaves_exact(&d2);
}
