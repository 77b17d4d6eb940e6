//! `dlmdb stat` stdout byte for byte against Debian's `mdb_stat` (0.9) for
//! every option both have, on stores stock LMDB wrote (fixtures, and
//! `mdb_load`) and on a store this tool wrote in stock format
//! (`load --format lmdb`).

mod common;

use common::{bin, fixture_dir, fixtures, have_stock_tools, run_ok};
use std::path::Path;
use std::process::Command;

const OPTION_SETS: &[&[&str]] = &[
    &[],
    &["-e"],
    &["-a"],
    &["-f"],
    &["-ff"],
    &["-fff"],
    &["-r"],
    &["-rr"],
    &["-r", "-a"],
    &["-e", "-a", "-f"],
    &["-e", "-r", "-fff", "-a"],
];

fn compare(store: &Path, extra: &[&[&str]]) {
    for opts in OPTION_SETS.iter().chain(extra) {
        let theirs = Command::new("mdb_stat")
            .args(*opts)
            .arg(store)
            .output()
            .unwrap();
        let ours = bin().arg("stat").args(*opts).arg(store).output().unwrap();
        assert!(
            ours.status.success(),
            "dlmdb stat {opts:?}: {}",
            String::from_utf8_lossy(&ours.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&ours.stdout),
            String::from_utf8_lossy(&theirs.stdout),
            "dlmdb stat {opts:?} differs from mdb_stat on {}",
            store.display()
        );
    }
}

#[test]
fn stat_matches_mdb_stat_on_stock_fixtures() {
    if fixtures().is_none() || !have_stock_tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for (rel, sub) in [
        ("stock.mdb", "accounts"),
        ("dupsort.stock.mdb", "dups"),
        ("plain.stock.mdb", "kv"),
    ] {
        let Some(store) = fixture_dir(rel, tmp.path(), rel) else {
            continue;
        };
        compare(&store, &[&["-s", sub], &["-s", sub, "-e", "-f"]]);
    }
}

#[test]
fn stat_matches_mdb_stat_on_stores_both_tools_wrote() {
    let Some(fx) = fixtures() else { return };
    if !have_stock_tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dump = fx.join("stock.dump.txt");
    // Written by stock mdb_load (into a directory that exists), and by
    // this tool in stock format.
    let by_stock = tmp.path().join("by_stock");
    std::fs::create_dir(&by_stock).unwrap();
    let mut ours = bin();
    ours.args(["load", "--format", "lmdb"]);
    for (mut load, store) in [
        (Command::new("mdb_load"), by_stock),
        (ours, tmp.path().join("by_us")),
    ] {
        run_ok(load.arg("-f").arg(&dump).arg(&store));
        compare(&store, &[&["-s", "accounts"]]);
    }
}

#[test]
fn layout_goes_to_stdout_only_when_asked() {
    let Some(_) = fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let store = fixture_dir("stock.mdb", tmp.path(), "s").unwrap();
    let plain = bin().arg("stat").arg(&store).output().unwrap();
    let info = bin()
        .args(["stat", "--layout-info"])
        .arg(&store)
        .output()
        .unwrap();
    let plain = String::from_utf8(plain.stdout).unwrap();
    let info = String::from_utf8(info.stdout).unwrap();
    let (first, rest) = info.split_once('\n').unwrap();
    assert!(first.starts_with("layout: lmdb ("), "{first}");
    assert_eq!(rest, plain);
    assert!(plain.starts_with("Status of Main DB\n"), "{plain}");
}

#[test]
fn version_is_one_number_for_cli_and_engine() {
    let out = bin().arg("--version").output().unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    let v = env!("CARGO_PKG_VERSION");
    let (engine, a, b, c) = dlmdb::version();
    assert_eq!(format!("{a}.{b}.{c}"), v, "engine {engine} vs crate {v}");
    assert_eq!(s.trim_end(), format!("dlmdb {v} (engine: {engine})"));
    assert!(engine.contains(&format!(" {v}: (")), "{engine}");
}
