//! Free-page reuse and crash safety (format spec §12.3):
//! * churn (many small transactions overwriting and deleting) must reuse
//!   freed pages: the file may not grow much more than stock LMDB's does for
//!   the same workload;
//! * pages freed by the last committed transaction are never reused by the
//!   next one, so the previous snapshot stays intact: making the older meta
//!   page current again (as if the newest meta write had been lost in a
//!   crash) must show exactly the state before the last commit;
//! * a long-lived reader keeps its snapshot readable while writers churn.

use std::path::Path;

use dlmdb::EnvFlags;
use dlmdb_tests::workload::{self, generate, generate_from, DbSpec, KeyShape, ValShape, Workload};
use dlmdb_tests::{ours, raw, remove_lock, stock};

const MAP: usize = 256 << 20;

fn specs() -> Vec<DbSpec> {
    vec![
        DbSpec::named("churn", 0, KeyShape::Text, ValShape::Mixed),
        DbSpec::named(
            "ints",
            dlmdb_tests::model::INTEGERKEY,
            KeyShape::Int8,
            ValShape::Mixed,
        ),
        DbSpec::named("blobs", 0, KeyShape::Binary, ValShape::Big),
    ]
}

fn run_ours(path: &Path, w: &Workload) -> u64 {
    let env = ours::open(path, EnvFlags::FORMAT_LMDB, MAP, 8).unwrap();
    ours::write_workload(&env, w, "dlmdb churn");
    env.info().unwrap().last_pgno
}

fn run_stock(path: &Path, w: &Workload) -> u64 {
    let env = stock::Env::open(path, stock::MDB_NOSUBDIR, 8, MAP).unwrap();
    stock::write_workload(&env, w, "stock churn");
    env.info().unwrap().last_pgno
}

#[test]
fn churn_reuses_free_pages_like_stock() {
    // many transactions with few operations each: most page writes replace
    // pages that older transactions freed
    let w = generate(11, specs(), 400, 30);
    let dir = tempfile::tempdir().unwrap();
    let (po, ps) = (dir.path().join("ours.mdb"), dir.path().join("stock.mdb"));
    let ours_last = run_ours(&po, &w);
    let stock_last = run_stock(&ps, &w);
    eprintln!("after churn: last_pg ours {ours_last}, stock {stock_last}");
    assert!(
        ours_last <= stock_last * 3 / 2 + 16,
        "file grew to {ours_last} pages where stock LMDB needs {stock_last}: freed pages are not reused"
    );
    remove_lock(&po);
    let env = raw::Env::open(&po, dlmdb_sys::MDB_NOSUBDIR | dlmdb_sys::MDB_RDONLY, 8, 0).unwrap();
    let rep = raw::check_accounting(&env).unwrap_or_else(|e| panic!("after churn: {e}"));
    assert!(rep.free_pages > 0, "churn left no free pages at all");
}

/// Make the older meta page current by zeroing the newest one's txnid, as if
/// the last commit's meta write never reached the disk.
fn roll_back_last_meta(path: &Path) {
    let (which, meta) = dlmdb_tests::newest_meta(path);
    let mut b = std::fs::read(path).unwrap();
    let txnid = which * meta.page_size() as usize + dlmdb_format::meta::OFF_TXNID;
    b[txnid..][..8].copy_from_slice(&0u64.to_le_bytes());
    std::fs::write(path, &b).unwrap();
    remove_lock(path);
}

/// The roll-back workloads: the state before, and one more transaction,
/// always committed (the first of a generated run is).
fn before_and_last() -> (Workload, Workload) {
    let before = generate(21, specs(), 60, 40);
    let last = generate_from(22, &before, 1, 60);
    (before, last)
}

fn verify_ours(path: &Path, layout: EnvFlags, w: &Workload, what: &str) {
    // FORMAT_LMDB only matters when creating; DLMDB_V1 selects the layout
    let env = ours::open(
        path,
        (layout - EnvFlags::FORMAT_LMDB) | EnvFlags::READ_ONLY,
        0,
        8,
    )
    .unwrap_or_else(|e| panic!("{what}: open: {e}"));
    let txn = env.read_txn().unwrap();
    workload::verify(&txn, w, what, 1);
}

#[test]
fn previous_snapshot_survives_the_last_commit() {
    for layout in [
        EnvFlags::empty(),
        EnvFlags::FORMAT_LMDB,
        EnvFlags::FORMAT_DLMDB_V1,
    ] {
        let (before, last) = before_and_last();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("snap.mdb");
        {
            let env = ours::open(&path, layout, MAP, 8).unwrap();
            ours::write_workload(&env, &before, "before");
            ours::write_workload(&env, &last, "last");
        }
        remove_lock(&path);
        verify_ours(
            &path,
            layout,
            &last,
            &format!("{layout:?}: newest snapshot"),
        );
        let copy = dir.path().join("rolled-back.mdb");
        std::fs::copy(&path, &copy).unwrap();
        roll_back_last_meta(&copy);
        let layout_ro = layout - EnvFlags::FORMAT_LMDB; // only a creation flag
        let env = ours::open(&copy, layout_ro | EnvFlags::READ_ONLY, 0, 8).unwrap();
        let txn = env.read_txn().unwrap();
        workload::verify(
            &txn,
            &before,
            &format!("{layout:?}: previous snapshot after losing the newest meta"),
            1,
        );
    }
}

/// The same roll-back on a stock-written file read by stock LMDB: checks the
/// test's own premise (stock keeps the previous snapshot intact).
#[test]
fn previous_snapshot_premise_holds_for_stock() {
    let (before, last) = before_and_last();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("snap.mdb");
    {
        let env = stock::Env::open(&path, stock::MDB_NOSUBDIR, 8, MAP).unwrap();
        for w in [&before, &last] {
            stock::write_workload(&env, w, "stock");
        }
    }
    roll_back_last_meta(&path);
    let env = stock::open_ro(&path, 8).unwrap();
    let txn = env.begin_ro().unwrap();
    workload::verify(&txn, &before, "stock: previous snapshot", 1);
    drop(txn);
    drop(env);
    // and our engine reads the rolled-back stock file the same way
    verify_ours(
        &path,
        EnvFlags::empty(),
        &before,
        "dlmdb reading rolled-back stock file",
    );
}

/// A reader opened early keeps seeing its snapshot while 200 transactions
/// churn; afterwards the file stops growing once the reader is gone.
#[test]
fn long_lived_reader_keeps_its_snapshot() {
    let base = generate(31, specs(), 20, 60);
    let churn = generate_from(32, &base, 200, 20);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reader.mdb");
    let env = ours::open(&path, EnvFlags::NO_TLS, MAP, 8).unwrap();
    ours::write_workload(&env, &base, "base");
    let reader = env.read_txn().unwrap();
    ours::write_workload(&env, &churn, "churn under a reader");
    workload::verify(&reader, &base, "long-lived reader", 2);
    drop(reader);
    let grown = env.info().unwrap().last_pgno;
    // with the reader gone, more churn of the same kind must mostly reuse pages
    let more = generate_from(33, &churn, 200, 20);
    ours::write_workload(&env, &more, "churn after the reader");
    let after = env.info().unwrap().last_pgno;
    eprintln!("last_pg with reader {grown}, after 200 more txns without {after}");
    assert!(
        after <= grown + grown / 2 + 16,
        "file kept growing after the reader ended: {grown} -> {after}"
    );
    let txn = env.read_txn().unwrap();
    workload::verify(&txn, &more, "after churn", 3);
}
