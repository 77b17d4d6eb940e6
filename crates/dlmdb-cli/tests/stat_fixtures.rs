//! `dlmdb stat` against the reference fixtures: the text must equal what
//! the reference `mdb_stat -a -e -f` printed, byte for byte.
//!
//! Fixtures: `$DLMDB_FIXTURES`, else `<repo>/tests/fixtures`. Each file is
//! copied to a temp dir first (opening creates a lock file beside it).

mod common;

use common::{fixture_copy, fixtures};
use dlmdb::Layout;
use dlmdb_cli::stat::{collect, render_text, LayoutChoice, StatOptions, StatReport};
use std::path::PathBuf;
use tempfile::TempDir;

/// `stat -a -e -f`.
fn opts(path: PathBuf, layout: LayoutChoice) -> StatOptions {
    StatOptions {
        all: true,
        env_info: true,
        freelist: 1,
        ..StatOptions::new(path, layout)
    }
}

/// `stat -a -e -f` of a copy of the fixture `v2/plain.mdb`, with what `set`
/// changes in the options: the report and its text; `None` when the
/// fixture is missing.
fn v2_plain_stat(set: impl FnOnce(&mut StatOptions)) -> Option<(TempDir, StatReport, String)> {
    let (tmp, path) = fixture_copy("v2/plain.mdb")?;
    let mut o = opts(path, LayoutChoice::Auto);
    set(&mut o);
    let report = collect(&o).unwrap();
    let text = render_text(&report, &o);
    Some((tmp, report, text))
}

/// Run `stat -a -e -f` on fixture `rel` and compare with `expected` (a fixture text file).
fn check(rel: &str, expected: &str, layout: LayoutChoice, want: Layout) {
    let Some((_tmp, path)) = fixture_copy(rel) else {
        return;
    };
    let o = opts(path, layout);
    let report = collect(&o).unwrap_or_else(|e| panic!("stat {rel}: {e:#}"));
    assert_eq!(
        report.layout, want,
        "layout of {rel} ({})",
        report.layout_reason
    );
    let rest = render_text(&report, &o);
    let mut with_layout = o.clone();
    with_layout.layout_info = true;
    let text = render_text(&report, &with_layout);
    let (first, after) = text.split_once('\n').unwrap();
    assert!(
        first.starts_with(&format!("layout: {} (", want.as_str())),
        "{first}"
    );
    assert_eq!(after, rest);
    let expected = std::fs::read_to_string(fixtures().unwrap().join(expected)).unwrap();
    assert_eq!(
        rest, expected,
        "stat output of {rel} differs from {expected}"
    );
}

#[test]
fn stat_v1_dlmdb_plain_auto_detects_padding() {
    check(
        "plain.mdb",
        "plain.stat.txt",
        LayoutChoice::Auto,
        Layout::DlmdbV1,
    );
}

#[test]
fn stat_v1_dlmdb_plain_forced() {
    check(
        "plain.mdb",
        "plain.stat.txt",
        LayoutChoice::Dlmdb,
        Layout::DlmdbV1,
    );
}

#[test]
fn stat_stock_auto() {
    check(
        "stock.mdb",
        "stock.stat.txt",
        LayoutChoice::Auto,
        Layout::Lmdb,
    );
}

#[test]
fn stat_plain_stock_twin() {
    check(
        "plain.stock.mdb",
        "plain.stock.stat.txt",
        LayoutChoice::Auto,
        Layout::Lmdb,
    );
}

#[test]
fn stat_main_only_reads_same_either_way() {
    check(
        "main_only.mdb",
        "main_only.stat.txt",
        LayoutChoice::Auto,
        Layout::Lmdb,
    );
    check(
        "main_only.mdb",
        "main_only.stat.txt",
        LayoutChoice::Dlmdb,
        Layout::DlmdbV1,
    );
}

#[test]
fn stat_v2_plain() {
    check(
        "v2/plain.mdb",
        "v2/plain.stat.txt",
        LayoutChoice::Auto,
        Layout::DlmdbV2,
    );
}

#[test]
fn stat_v2_main_only() {
    check(
        "v2/main_only.mdb",
        "v2/main_only.stat.txt",
        LayoutChoice::Auto,
        Layout::DlmdbV2,
    );
}

/// Every fixture with a reference `*.stat.txt`, with the layout `auto` must pick.
#[test]
fn stat_every_fixture_matches_reference_output() {
    let cases = [
        ("plain.mdb", Layout::DlmdbV1),
        ("main_only.mdb", Layout::Lmdb),
        ("dupsort.mdb", Layout::DlmdbV1),
        ("counted.mdb", Layout::DlmdbV1),
        ("prefix.mdb", Layout::DlmdbV1),
        ("stock.mdb", Layout::Lmdb),
        ("plain.stock.mdb", Layout::Lmdb),
        ("dupsort.stock.mdb", Layout::Lmdb),
        ("v2/plain.mdb", Layout::DlmdbV2),
        ("v2/main_only.mdb", Layout::DlmdbV2),
        ("v2/dupsort.mdb", Layout::DlmdbV2),
        ("v2/counted.mdb", Layout::DlmdbV2),
        ("v2/prefix.mdb", Layout::DlmdbV2),
    ];
    for (rel, want) in cases {
        let expected = rel.replace(".mdb", ".stat.txt");
        check(rel, &expected, LayoutChoice::Auto, want);
    }
}

/// The layout pair: same logical content, only odd-length keys/names differ.
#[test]
fn stat_layout_pair_is_told_apart() {
    for (rel, want) in [
        ("layout_dlmdb.mdb", Layout::DlmdbV1),
        ("layout_stock.mdb", Layout::Lmdb),
    ] {
        let Some((_tmp, path)) = fixture_copy(rel) else {
            return;
        };
        let report = collect(&opts(path, LayoutChoice::Auto)).unwrap();
        assert_eq!(report.layout, want, "{rel}: {}", report.layout_reason);
        let names: Vec<_> = report
            .databases
            .iter()
            .filter_map(|d| d.name.clone())
            .collect();
        assert_eq!(names, ["a", "ab", "abc", "abcd"], "{rel}");
        assert!(
            report.databases.iter().skip(1).all(|d| d.stat.entries == 9),
            "{rel}"
        );
    }
}

/// Forcing the wrong layout on a store the probe can classify gives a warning.
#[test]
fn stat_forced_wrong_layout_warns() {
    let Some((_tmp, path)) = fixture_copy("layout_stock.mdb") else {
        return;
    };
    // Refusing would be fine too; if it opens, it must say so.
    if let Ok(report) = collect(&opts(path, LayoutChoice::Dlmdb)) {
        assert!(
            report
                .warnings
                .iter()
                .any(|w| w.contains("probe says lmdb")),
            "{:?}",
            report.warnings
        );
    }
}

#[test]
fn stat_v2_refuses_layout_lmdb() {
    let Some((_tmp, path)) = fixture_copy("v2/plain.mdb") else {
        return;
    };
    let err = collect(&opts(path, LayoutChoice::Lmdb)).unwrap_err();
    assert!(format!("{err:#}").contains("version 2"), "{err:#}");
}

#[test]
fn stat_pages_walk_agrees_with_counters() {
    let Some((_tmp, report, text)) = v2_plain_stat(|o| o.pages = true) else {
        return;
    };
    for db in &report.databases {
        let walk = db.walk.as_ref().unwrap();
        assert_eq!(walk.verdict, "ok", "{:?}", walk.mismatches);
        let w = &walk.summary;
        let s = &db.stat;
        assert_eq!(
            (
                w.branch_pages,
                w.leaf_pages,
                w.overflow_pages,
                w.leaf_entries,
                w.depth
            ),
            (
                s.branch_pages,
                s.leaf_pages,
                s.overflow_pages,
                s.entries,
                s.depth
            ),
            "walk vs stat of {:?}",
            db.name
        );
    }
    assert!(!text.contains("MISMATCH"), "{text}");
    insta::assert_snapshot!("v2_plain_pages", text);
}

#[test]
fn stat_json_has_documented_fields() {
    let Some((_tmp, path)) = fixture_copy("plain.mdb") else {
        return;
    };
    let report = collect(&opts(path, LayoutChoice::Auto)).unwrap();
    let v: serde_json::Value = serde_json::to_value(&report).unwrap();
    assert_eq!(v["layout"], "dlmdb-v1");
    assert_eq!(v["data_version"], 1);
    assert_eq!(v["env"]["page_size"], 4096);
    assert_eq!(v["freelist"]["free_pages"], 200);
    let dbs = v["databases"].as_array().unwrap();
    assert!(dbs[0]["name"].is_null());
    let kv = dbs.iter().find(|d| d["name"] == "kv").unwrap();
    assert_eq!(kv["entries"], 2789);
    assert_eq!(kv["depth"], 3);
    assert_eq!(v["page_size"], 4096);
    assert!(v["txnid"].as_u64().unwrap() > 0);
    let ik = dbs.iter().find(|d| d["name"] == "intkey32").unwrap();
    assert_eq!(ik["flags"], serde_json::json!(["integerkey"]));
}

#[test]
fn human_sizes_follow_the_figures() {
    let Some((_tmp, report, text)) = v2_plain_stat(|o| o.human = true) else {
        return;
    };
    let map = text
        .lines()
        .find(|l| l.starts_with("  Map size: "))
        .unwrap();
    let expected = dlmdb_cli::stat::human_bytes(report.env.map_size);
    assert!(map.ends_with(&format!(" ({expected})")), "{map}");
    let used = text
        .lines()
        .find(|l| l.starts_with("  Number of pages used: "))
        .unwrap();
    let bytes = report.env.pages_used * u64::from(report.env.page_size);
    assert!(
        used.ends_with(&format!(" ({})", dlmdb_cli::stat::human_bytes(bytes))),
        "{used}"
    );
    assert_eq!(dlmdb_cli::stat::human_bytes(1023), "1023 B");
    assert_eq!(dlmdb_cli::stat::human_bytes(8 << 20), "8.0 MiB");
    assert_eq!(dlmdb_cli::stat::human_bytes(3 << 29), "1.5 GiB");
}
