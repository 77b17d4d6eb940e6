//! Format compatibility with stock LMDB, both ways, over seeded random
//! workloads (plain databases: default, INTEGERKEY 4/8-byte, REVERSEKEY, big
//! values across the overflow boundary, odd and even names and keys).
//!
//! (a) our engine writes with `FORMAT_LMDB` -> stock LMDB (mdb.master through
//!     `lmdb-master-sys`) and Debian's `mdb_dump -a` read it back exactly;
//! (b) stock LMDB writes -> our engine reads it (no flag) -> our engine
//!     modifies it -> stock LMDB reads the result;
//! (c) Debian's `mdb_load` loads a dump made from the model -> our engine
//!     reads it.
//! Every store our engine wrote also passes the page accounting check.
//!
//! Seeds: `DLMDB_SEED=1,2,3` to replay; otherwise a fixed list plus one
//! time-based seed (printed).

use std::ffi::OsStr;
use std::path::Path;

use dlmdb::EnvFlags;
use dlmdb_tests::dump::{render_bytevalue, DumpHeader};
use dlmdb_tests::workload::{self, generate, generate_from, verify, Workload};
use dlmdb_tests::{ours, pages, raw, remove_lock, run_tool, seeds, skip_note, stock};

const MAP: usize = 64 << 20;
const MAXDBS: u32 = 16;
const TXNS: usize = 16;
const OPS: usize = 250;

fn fixed_seeds() -> Vec<u64> {
    seeds(&[1, 0xdead_beef])
}

/// Data version (`mm_version`) of both meta pages.
fn meta_versions(path: &Path) -> (u32, u32) {
    let [m0, m1] = dlmdb_tests::meta_pages(path);
    (m0.version, m1.version)
}

fn write_with_stock(path: &Path, w: &Workload) {
    let env = stock::Env::open(path, stock::MDB_NOSUBDIR, MAXDBS, MAP).expect("stock: open env");
    stock::write_workload(&env, w, "stock");
}

fn verify_with_stock(path: &Path, w: &Workload, seed: u64) {
    remove_lock(path);
    let env = stock::open_ro(path, MAXDBS).unwrap_or_else(|e| {
        panic!(
            "stock LMDB cannot open the store: {} ({e})",
            stock::strerror(e)
        )
    });
    let txn = env.begin_ro().expect("stock: begin_ro");
    verify(&txn, w, "stock LMDB reading", seed);
}

/// Read back through our engine: the safe API and the raw bindings, then the
/// page accounting check. Every store here was made in this process or by a
/// tool it ran, so its pages are the size this process gives new stores.
fn verify_with_ours(
    path: &Path,
    w: &Workload,
    seed: u64,
    flags: EnvFlags,
) -> raw::AccountingReport {
    assert_eq!(
        dlmdb_tests::meta_pages(path)[0].page_size(),
        pages::new_store_page_size(),
        "page size of the store (seed {seed})"
    );
    remove_lock(path);
    {
        let env = ours::open(path, flags | EnvFlags::READ_ONLY, 0, MAXDBS)
            .unwrap_or_else(|e| panic!("our engine cannot open the store: {e}"));
        let txn = env.read_txn().expect("ours: read_txn");
        verify(&txn, w, "dlmdb (safe API) reading", seed);
    }
    let env = raw::Env::open(path, raw_flags(flags) | dlmdb_sys::MDB_RDONLY, MAXDBS, 0)
        .expect("ours raw: open");
    {
        let txn = env.begin_ro().expect("ours raw: begin_ro");
        verify(&txn, w, "dlmdb (raw) reading", seed);
    }
    raw::check_accounting(&env)
        .unwrap_or_else(|e| panic!("page accounting check failed (seed {seed}): {e}"))
}

fn raw_flags(f: EnvFlags) -> u32 {
    f.bits() | dlmdb_sys::MDB_NOSUBDIR
}

/// The exact text Debian's `mdb_dump -a` must print for the workload's named
/// databases (in main-DB key order, which is name order).
fn expected_dump(w: &Workload, mapsize: u64, pagesize: u32) -> String {
    let mut named: Vec<_> = w
        .specs
        .iter()
        .zip(&w.models)
        .filter(|(s, _)| s.name.is_some())
        .collect();
    named.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    let mut out = String::new();
    for (s, m) in named {
        let h = DumpHeader {
            name: s.name.as_deref(),
            mapsize,
            maxreaders: 126,
            flags: s.flags,
            pagesize,
        };
        out.push_str(&render_bytevalue(&h, m.iter()));
    }
    out
}

fn check_mdb_dump(path: &Path, w: &Workload, mapsize: u64, what: &str) {
    let pagesize = dlmdb_tests::meta_pages(path)[0].page_size();
    dlmdb_tests::stock_dump_matches(path, &expected_dump(w, mapsize, pagesize), what);
}

/// Debian's `mdb_stat -a -e -f` on our store: the page counts, the free
/// list total and the entry counts must match what our engine reports.
fn check_mdb_stat(path: &Path, w: &Workload, acc: &raw::AccountingReport, what: &str) {
    if !dlmdb_tests::have_tool("mdb_stat") {
        skip_note("mdb_stat (Debian lmdb-utils) not installed: stat comparison not run");
        return;
    }
    remove_lock(path);
    let (ok, out, err) = run_tool(
        "mdb_stat",
        &[
            OsStr::new("-n"),
            OsStr::new("-a"),
            OsStr::new("-e"),
            OsStr::new("-f"),
            path.as_os_str(),
        ],
    );
    remove_lock(path);
    assert!(ok, "{what}: mdb_stat failed: {err}");
    let rep = dlmdb_tests::stat::parse_stat(&out);
    assert_eq!(
        rep.pages_used,
        acc.last_pg + 1,
        "{what}: mdb_stat pages used"
    );
    assert_eq!(
        rep.free_pages, acc.free_pages,
        "{what}: mdb_stat free pages"
    );
    assert_eq!(rep.map_size, MAP as u64, "{what}: mdb_stat map size");
    for (s, m) in w.specs.iter().zip(&w.models) {
        if let Some(n) = &s.name {
            let n = String::from_utf8_lossy(n);
            let st = rep
                .db(&n)
                .unwrap_or_else(|| panic!("{what}: mdb_stat does not list {n}"));
            assert_eq!(
                st.entries,
                m.len() as u64,
                "{what}: mdb_stat entries of {n}"
            );
            let (_, t) = acc
                .trees
                .iter()
                .find(|(tn, _)| *tn == n)
                .expect("tree in accounting report");
            assert_eq!(
                (st.branch_pages, st.leaf_pages, st.overflow_pages),
                (t.branch, t.leaf, t.overflow),
                "{what}: mdb_stat pages of {n}"
            );
        }
    }
}

/// Run `scenario` once per fixed seed (printed first), on a fresh store
/// path, with the seed's first workload.
fn each_seed(test: &str, scenario: impl Fn(u64, &Path, Workload)) {
    for seed in fixed_seeds() {
        eprintln!("{test}: seed {seed}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.mdb");
        scenario(
            seed,
            &path,
            generate(seed, workload::standard_specs(), TXNS, OPS),
        );
    }
}

/// (a) our engine writes a stock-format store; stock LMDB reads it.
#[test]
fn ours_lmdb_format_read_by_stock() {
    each_seed("ours_lmdb_format_read_by_stock", |seed, path, w| {
        {
            let env = ours::open(path, EnvFlags::FORMAT_LMDB, MAP, MAXDBS)
                .expect("ours: create FORMAT_LMDB store");
            ours::write_workload(&env, &w, "dlmdb");
        }
        assert_eq!(
            meta_versions(path),
            (1, 1),
            "a FORMAT_LMDB store must have data version 1 in both metas"
        );
        // An existing version-1 store without a flag is read in stock layout.
        let acc = verify_with_ours(path, &w, seed, EnvFlags::empty());
        verify_with_stock(path, &w, seed);
        check_mdb_dump(path, &w, MAP as u64, &format!("seed {seed}"));
        check_mdb_stat(path, &w, &acc, &format!("seed {seed}"));

        // stock LMDB keeps writing to the store we created; we read the result
        let w2 = generate_from(seed.wrapping_add(3000), &w, 4, OPS);
        remove_lock(path);
        write_with_stock(path, &w2);
        verify_with_ours(path, &w2, seed, EnvFlags::empty());
        verify_with_stock(path, &w2, seed);
    });
}

/// (b) stock LMDB writes; our engine reads, modifies; stock reads again.
#[test]
fn stock_written_read_and_modified_by_ours() {
    each_seed("stock store modified by ours", |seed, path, w1| {
        write_with_stock(path, &w1);
        assert_eq!(meta_versions(path), (1, 1));
        verify_with_ours(path, &w1, seed, EnvFlags::empty());

        // our engine continues the history on the stock-written file
        let w2 = generate_from(seed.wrapping_add(1000), &w1, TXNS, OPS);
        remove_lock(path);
        {
            let env = ours::open(path, EnvFlags::empty(), MAP, MAXDBS)
                .expect("ours: open stock store rw");
            ours::write_workload(&env, &w2, "dlmdb on stock file");
        }
        assert_eq!(
            meta_versions(path),
            (1, 1),
            "modifying a stock store must keep data version 1"
        );
        verify_with_ours(path, &w2, seed, EnvFlags::empty());
        verify_with_stock(path, &w2, seed);
        check_mdb_dump(
            path,
            &w2,
            MAP as u64,
            &format!("seed {seed} (after our writes)"),
        );

        // and stock LMDB can keep writing to what we wrote
        let w3 = generate_from(seed.wrapping_add(2000), &w2, 3, OPS);
        remove_lock(path);
        write_with_stock(path, &w3);
        verify_with_ours(path, &w3, seed, EnvFlags::empty());
    });
}

/// Our engine opening a store with FORMAT_LMDB that stock LMDB created works
/// too (the flag only matters for creation).
#[test]
fn format_lmdb_flag_on_existing_stock_store() {
    let seed = 7;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.mdb");
    let w = generate(seed, workload::standard_specs(), 3, 60);
    write_with_stock(&path, &w);
    verify_with_ours(&path, &w, seed, EnvFlags::FORMAT_LMDB);
}

/// (c) Debian's mdb_load builds the store from a dump of the model.
#[test]
fn mdb_load_then_ours_reads() {
    if !dlmdb_tests::have_tool("mdb_load") {
        skip_note("mdb_load (Debian lmdb-utils) not installed: load test not run");
        return;
    }
    for seed in fixed_seeds() {
        eprintln!("mdb_load_then_ours_reads: seed {seed}");
        let mut w = generate(seed, workload::standard_specs(), TXNS, OPS);
        // mdb_load fills only what the dump holds: drop the main-DB records
        // from the model (named databases only, as `mdb_dump -a` writes).
        let keep: Vec<usize> = (0..w.specs.len())
            .filter(|&i| w.specs[i].name.is_some())
            .collect();
        w.specs = keep.iter().map(|&i| w.specs[i].clone()).collect();
        w.models = keep.iter().map(|&i| w.models[i].clone()).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.mdb");
        let text = expected_dump(&w, MAP as u64, pages::new_store_page_size());
        dlmdb_tests::stock_load_dump(&path, &text);
        verify_with_ours(&path, &w, seed, EnvFlags::empty());
    }
}

/// (a), (b) and (c) again as on machines with 16 KiB and 64 KiB pages: both
/// engines and Debian's tools make stores with 16 KiB and 32 KiB pages.
#[test]
fn every_direction_as_on_machines_with_bigger_pages() {
    pages::rerun_as_on_other_machines(&[
        "ours_lmdb_format_read_by_stock",
        "stock_written_read_and_modified_by_ours",
        "format_lmdb_flag_on_existing_stock_store",
        "mdb_load_then_ours_reads",
    ]);
}
