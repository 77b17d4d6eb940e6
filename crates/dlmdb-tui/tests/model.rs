//! Figures gathered by `model` on stores built with the safe API.

mod common;

use common::*;
use dlmdb::DatabaseFlags;
use dlmdb_tui::model::{DbDetail, Pos, Start};

fn name(s: &str) -> Option<String> {
    Some(s.to_string())
}

/// The details of the built store's databases called `names`.
fn details<const N: usize>(names: [&str; N]) -> [DbDetail; N] {
    let mut b = built();
    let v = b.store.view().unwrap();
    names.map(|n| v.detail(&name(n)).unwrap())
}

#[test]
fn snapshot_lists_every_database_with_stat_figures() {
    let mut b = built();
    assert!(!b.store.no_subdir);
    let v = b.store.view().unwrap();
    let s = v.snapshot("r", Some(2)).unwrap();
    let names: Vec<String> = s.dbs.iter().map(|d| d.label()).collect();
    assert_eq!(
        names,
        ["(main)", "big", "counted", "dups", "plain", "prefixed"]
    );
    let get = |n: &str| s.dbs.iter().find(|d| d.label() == n).unwrap();
    assert_eq!(get("(main)").stat.entries, 5);
    assert_eq!(get("plain").stat.entries, 3000);
    assert_eq!(
        get("dups").stat.entries,
        1500 + (0..200u64).map(|i| 1 + i % 4).sum::<u64>()
    );
    assert!(get("dups").flags.contains(DatabaseFlags::DUP_SORT));
    assert_eq!(get("counted").counted, Some(2500));
    assert!(get("prefixed")
        .flags
        .contains(DatabaseFlags::PREFIX_COMPRESSION));
    assert_eq!(get("big").stat.overflow_pages, 5); // 16 + 20000 bytes in 4 KiB pages
    assert_eq!(s.env.page_size, 4096);
    assert_eq!(s.env.map_size, 64 << 20);
    assert_eq!(s.env.layout, Some(dlmdb::Layout::DlmdbV2));
    assert_eq!(s.env.readers_held, Some(1));
    assert_eq!(s.env.readers_reading, Some(1));
    assert!(s.env.last_txnid >= 1);
    assert_eq!(s.txnid, s.env.last_txnid);
    for d in &s.dbs {
        assert!(d.error.is_none());
        assert_eq!(
            d.bytes(),
            (d.stat.branch_pages + d.stat.leaf_pages + d.stat.overflow_pages) * 4096
        );
    }
}

#[test]
fn plain_detail_levels_add_up_to_stat() {
    let [d] = details(["plain"]);
    assert!(d.stat.depth >= 2);
    assert_eq!(d.levels.len() as u32, d.stat.depth);
    let branch: u64 = d.levels.iter().map(|l| l.branch_pages).sum();
    let leaf: u64 = d.levels.iter().map(|l| l.leaf_pages).sum();
    assert_eq!((branch, leaf), (d.stat.branch_pages, d.stat.leaf_pages));
    assert_eq!(d.levels[0].branch_pages, 1, "root level is one page");
    let last = d.levels.last().unwrap();
    assert_eq!(last.leaf_pages, d.stat.leaf_pages);
    assert_eq!(last.nodes, 3000);
    assert!(last.fill_percent() > 40.0 && last.fill_percent() <= 100.0);
    assert!(d.walk_matches_stat);
    assert!(d.dup.is_none() && d.counted.is_none());
    let c = d.compression.unwrap();
    assert!(!c.prefix);
    assert_eq!(c.keys, 3000);
    assert_eq!(c.logical_key_bytes, 3000 * 7);
    assert_eq!(c.stored_key_bytes, c.logical_key_bytes);
    assert!(c.if_compressed_bytes < c.logical_key_bytes);
    // Every leaf's used bytes rebuilt exactly from key and value sizes.
    assert_eq!(c.node_check, Some((d.stat.leaf_pages, d.stat.leaf_pages)));
}

#[test]
fn prefix_compression_ratio_is_measured_from_the_leaves() {
    let [d, plain_like] = details(["prefixed", "plain"]);
    let c = d.compression.unwrap();
    assert!(c.prefix);
    assert_eq!(c.keys, 2000);
    let logical: u64 = (0..2000).map(|i| attr_key(i).len() as u64).sum();
    assert_eq!(c.logical_key_bytes, logical);
    // Keys share ~30 of ~40 bytes with their page's first key.
    assert!(c.ratio() > 2.0, "ratio {}", c.ratio());
    assert!(c.stored_key_bytes < logical / 2);
    assert_eq!(c.stored_key_bytes, c.if_compressed_bytes);
    assert!(!c.partial());
    assert_eq!(c.node_check, Some((d.stat.leaf_pages, d.stat.leaf_pages)));
    // And the compressed tree really is smaller than the same keys uncompressed.
    assert!(plain_like.compression.unwrap().ratio() == 1.0);
}

#[test]
fn dupsort_detail_counts_sub_pages_and_sub_trees() {
    let [d] = details(["dups"]);
    let dup = d.dup.unwrap();
    assert_eq!(dup.keys, 201);
    assert_eq!(dup.values, d.stat.entries);
    assert_eq!(dup.sub_trees, 1, "`hot` has its own sub-tree");
    assert!(dup.sub_tree_pages >= 2);
    // key-NNN with 2..4 values live in inline sub-pages (150 of them).
    assert_eq!(dup.sub_pages, 150);
    assert!(d.walk_matches_stat, "pages and depth agree");
    assert!(
        d.counters_include_subtrees,
        "version 2 counts sub-tree pages"
    );
    let outer: u64 = d.levels.iter().map(|l| l.branch_pages + l.leaf_pages).sum();
    assert_eq!(
        d.stat.branch_pages + d.stat.leaf_pages,
        outer + dup.sub_tree_pages
    );
    let c = d.compression.unwrap();
    assert_eq!(c.keys, 201);
    // Sub-page sizes and sub-database records included, leaves rebuild exactly.
    assert_eq!(
        c.node_check,
        Some((d.levels[1].leaf_pages, d.levels[1].leaf_pages))
    );
    // Values in sub-pages / the sub-tree: `hot`'s 1500 and the 150 keys with 2..4.
    assert_eq!(c.dup_values, 1500 + 50 * (2 + 3 + 4));
    assert_eq!(c.logical_value_bytes, 1500 * 11 + 450 * 2);
    assert_eq!(
        c.stored_value_bytes, c.logical_value_bytes,
        "not prefix-compressed"
    );
    assert!(c.if_compressed_value_bytes < c.logical_value_bytes / 2);
}

#[test]
fn counted_totals_agree() {
    let [d] = details(["counted"]);
    let c = d.counted.unwrap();
    assert_eq!(c.count_all, Some(2500));
    assert_eq!(c.root_sum, Some(2500));
    assert_eq!(c.counted_branches, d.stat.branch_pages);
    assert!(d.walk_matches_stat);
}

#[test]
fn overflow_usage() {
    let [d] = details(["big"]);
    let o = d.overflow;
    assert_eq!(o.runs, 1);
    assert_eq!(o.pages, 5);
    assert_eq!(o.largest_run, 5);
    assert_eq!(o.used_bytes, 16 + 20000);
    assert_eq!(o.allocated_bytes, 5 * 4096);
    assert_eq!(d.stat.overflow_pages, 5);
    // The leaf holding the 8-byte overflow reference still rebuilds exactly.
    assert_eq!(d.compression.unwrap().node_check, Some((1, 1)));
}

#[test]
fn rows_page_forward_and_back() {
    let mut b = built();
    let v = b.store.view().unwrap();
    let db = name("plain");
    let rows = v.rows_from(&db, &Start::First, 5).unwrap();
    let keys: Vec<&[u8]> = rows.iter().map(|r| r.key.as_slice()).collect();
    assert_eq!(
        keys,
        [
            &b"k000000"[..],
            b"k000001",
            b"k000002",
            b"k000003",
            b"k000004"
        ]
    );
    assert!(rows.iter().all(|r| r.first_dup && r.dups == 1));
    let at = Start::At(rows[3].pos(false));
    assert_eq!(v.rows_from(&db, &at, 1).unwrap()[0].key, b"k000003");
    let seek = Start::Key(b"k0015".to_vec());
    assert_eq!(v.rows_from(&db, &seek, 1).unwrap()[0].key, b"k001500");
    // Five before k000100 is k000095; before the start clamps to the first.
    let p = Pos {
        key: b"k000100".to_vec(),
        val: None,
    };
    let s = v.start_before(&db, Some(&p), 5).unwrap();
    assert_eq!(
        s,
        Start::At(Pos {
            key: b"k000095".to_vec(),
            val: None
        })
    );
    let p = Pos {
        key: b"k000002".to_vec(),
        val: None,
    };
    let s = v.start_before(&db, Some(&p), 5).unwrap();
    assert_eq!(v.rows_from(&db, &s, 1).unwrap()[0].key, b"k000000");
    // From the end.
    let s = v.start_before(&db, None, 3).unwrap();
    let tail = v.rows_from(&db, &s, 10).unwrap();
    assert_eq!(tail.len(), 3);
    assert_eq!(tail[2].key, b"k002999");
    // Past the last key: nothing.
    assert!(v
        .rows_from(&db, &Start::Key(b"z".to_vec()), 3)
        .unwrap()
        .is_empty());
}

#[test]
fn dup_rows_are_listed_under_their_key() {
    let mut b = built();
    let v = b.store.view().unwrap();
    let db = name("dups");
    let rows = v
        .rows_from(&db, &Start::Key(b"key-003".to_vec()), 6)
        .unwrap();
    let got: Vec<(String, String, bool, u64)> = rows
        .iter()
        .map(|r| {
            (
                String::from_utf8(r.key.clone()).unwrap(),
                String::from_utf8(r.val.clone()).unwrap(),
                r.first_dup,
                r.dups,
            )
        })
        .collect();
    let want = [
        ("key-003", "v0", true, 4),
        ("key-003", "v1", false, 4),
        ("key-003", "v2", false, 4),
        ("key-003", "v3", false, 4),
        ("key-004", "v0", true, 1),
        ("key-005", "v0", true, 2),
    ];
    let want: Vec<(String, String, bool, u64)> = want
        .iter()
        .map(|(k, v, f, n)| (k.to_string(), v.to_string(), *f, *n))
        .collect();
    assert_eq!(got, want);
    // A window starting in the middle of a key's values knows it is a continuation.
    let mid = Start::At(rows[2].pos(true));
    let r = v.rows_from(&db, &mid, 2).unwrap();
    assert_eq!((r[0].val.as_slice(), r[0].first_dup), (&b"v2"[..], false));
    // A value between two stored ones positions on the next one; past the
    // key's last value, on the next key.
    let between = Start::At(Pos {
        key: b"hot".to_vec(),
        val: Some(b"value-00010x".to_vec()),
    });
    assert_eq!(
        v.rows_from(&db, &between, 1).unwrap()[0].val,
        b"value-00011"
    );
    let past = Start::At(Pos {
        key: b"key-003".to_vec(),
        val: Some(b"v9".to_vec()),
    });
    assert_eq!(v.rows_from(&db, &past, 1).unwrap()[0].key, b"key-004");
    // Stepping back over a dup set.
    let p = rows[4].pos(true); // key-004
    let s = v.start_before(&db, Some(&p), 2).unwrap();
    assert_eq!(s, Start::At(rows[2].pos(true)));
}

#[test]
fn empty_database_and_missing_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e");
    std::fs::create_dir_all(&path).unwrap();
    {
        let env = dlmdb::Env::builder().max_dbs(4).open(&path).unwrap();
        env.create_db(Some("empty"), DatabaseFlags::empty())
            .unwrap();
    }
    let mut store = open(&path);
    let v = store.view().unwrap();
    let d = v.detail(&name("empty")).unwrap();
    assert_eq!(d.stat.depth, 0);
    assert!(d.levels.is_empty() && d.compression.is_none());
    assert!(v
        .rows_from(&name("empty"), &Start::First, 5)
        .unwrap()
        .is_empty());
    assert_eq!(
        v.start_before(&name("empty"), None, 5).unwrap(),
        Start::First
    );
    let e = v.detail(&name("nope")).unwrap_err();
    assert!(format!("{e:#}").contains("MDB_NOTFOUND"), "{e:#}");
}

#[test]
fn single_file_store_and_no_lock() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one.mdb");
    {
        let env = dlmdb::Env::builder()
            .flags(dlmdb::EnvFlags::NO_SUB_DIR)
            .open(&file)
            .unwrap();
        let mut t = env.write_txn().unwrap();
        t.put(
            dlmdb::Database::MAIN,
            b"a",
            b"1",
            dlmdb::WriteFlags::empty(),
        )
        .unwrap();
        t.commit().unwrap();
    }
    let lock = dir.path().join("one.mdb-lock");
    std::fs::remove_file(&lock).unwrap();
    let mut opts = dlmdb_tui::model::OpenOptions::new(&file);
    opts.no_lock = true;
    let mut store = dlmdb_tui::model::Store::open(&opts).unwrap();
    assert!(store.no_subdir && store.no_lock);
    assert!(!lock.exists(), "MDB_NOLOCK creates no lock file");
    let s = store.view().unwrap().snapshot("", Some(2)).unwrap();
    assert_eq!(s.env.readers_held, None);
    assert_eq!(s.dbs[0].stat.entries, 1);
    // The data file was not written.
    let before = std::fs::read(&file).unwrap();
    drop(store);
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn open_errors_are_reported_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let e = dlmdb_tui::model::Store::open(&dlmdb_tui::model::OpenOptions::new(
        dir.path().join("missing"),
    ))
    .err()
    .unwrap();
    assert!(format!("{e:#}").contains("cannot access"), "{e:#}");
    // A file that is not a store.
    let junk = dir.path().join("junk.mdb");
    std::fs::write(&junk, vec![0x5a; 16384]).unwrap();
    assert!(dlmdb_tui::model::Store::open(&dlmdb_tui::model::OpenOptions::new(&junk)).is_err());
    // A directory without data.mdb.
    let e = dlmdb_tui::model::Store::open(&dlmdb_tui::model::OpenOptions::new(dir.path()))
        .err()
        .unwrap();
    assert!(format!("{e:#}").contains("data.mdb"), "{e:#}");
}

#[test]
fn lmdb1x_store_is_named_in_one_line() {
    for wide in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("v3.mdb");
        dlmdb_tests::lmdb1x_store(&file, wide);
        let e = dlmdb_tui::model::Store::open(&dlmdb_tui::model::OpenOptions::new(&file))
            .err()
            .unwrap();
        let text = format!("{e:#}");
        assert!(
            text.contains("LMDB 1.x store (data format 3)") && text.contains("not support"),
            "{text}"
        );
        assert!(!text.contains('\n'), "one line: {text}");
    }
}
