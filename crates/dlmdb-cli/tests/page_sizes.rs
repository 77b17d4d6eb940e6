//! Stores made on machines with bigger pages and brought here: by stock
//! LMDB's `mdb_load` (Debian's 0.9) and by this tool, as on a machine with
//! 16 KiB pages (Apple silicon: stores of 16 KiB pages) and one with 64 KiB
//! pages (ARM64 kernels so built: 32 KiB, the engines' cap). On this
//! machine `dump`, `stat` and `check` read them as stock LMDB's tools do,
//! `load` writes to them, and stock LMDB reads what it wrote.

mod common;

use common::{bin, bytevalue_dump, check_clean, have_stock_tools, run_ok};
use dlmdb_tests::pages::{self, OTHER_MACHINES};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// The content of the two databases the tests load: `kv`, plain, with
/// values from empty to 100 KB (so inline, at every page size's overflow
/// boundary, and overflowing for every page size); `dups`, DUPSORT, with
/// one key holding more duplicates than a sub-page holds at any page size.
#[derive(Clone, Default)]
struct Content {
    kv: BTreeMap<Vec<u8>, Vec<u8>>,
    dups: BTreeMap<Vec<u8>, BTreeSet<Vec<u8>>>,
}

/// Value lengths around the largest inline value of each page size (half a
/// page, less headers) and well past it.
const VALUE_LENGTHS: &[usize] = &[
    0, 1, 7, 100, 2030, 2040, 2050, 4070, 4080, 4090, 8160, 8170, 8180, 16350, 16360, 16370, 16380,
    40_000, 100_000,
];

/// Deterministic bytes of length `len` for record `i` of `round`.
fn value(round: u8, i: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| {
            (j as u32)
                .wrapping_mul(31)
                .wrapping_add(i as u32 * 7 + round as u32) as u8
        })
        .collect()
}

/// Records of `round`: round 0 makes the store; round 1 overwrites half of
/// round 0's keys with other lengths, adds keys between them and after
/// them, and adds duplicates (new keys, and to round 0's sets).
fn records(round: u8, into: &mut Content) {
    let step = if round == 0 { 2 } else { 3 };
    for i in (0..300).step_by(step) {
        let len = VALUE_LENGTHS[(i * 7 + round as usize) % VALUE_LENGTHS.len()];
        into.kv
            .insert(format!("key{i:05}").into_bytes(), value(round, i, len));
    }
    let sets: &[(usize, usize)] = if round == 0 {
        &[(0, 1), (1, 5), (2, 200), (3, 6000)]
    } else {
        &[(1, 300), (3, 500), (4, 3), (5, 5000)]
    };
    for &(k, n) in sets {
        let set = into.dups.entry(format!("dup{k}").into_bytes()).or_default();
        for j in 0..n {
            set.insert(format!("r{round}v{:06}", j * 3 + k).into_bytes());
        }
    }
}

/// One dump text of both databases in Debian `mdb_load`'s input form, one
/// `DATA=END` block each.
fn dump_text(c: &Content) -> String {
    let head = "mapsize=268435456\n";
    let dups = c
        .dups
        .iter()
        .flat_map(|(k, set)| set.iter().map(move |v| (k.clone(), v.clone())));
    bytevalue_dump(&format!("database=kv\ntype=btree\n{head}"), c.kv.iter())
        + &bytevalue_dump(
            &format!("database=dups\ntype=btree\ndupsort=1\n{head}"),
            dups,
        )
}

/// The record lines of every database in a `mdb_dump -a` text, by name.
fn records_of(dump: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for block in dump.split_terminator("DATA=END\n") {
        let name = block
            .lines()
            .find_map(|l| l.strip_prefix("database="))
            .unwrap_or("")
            .to_string();
        let lines = block
            .lines()
            .filter(|l| l.starts_with(' '))
            .map(str::to_string)
            .collect();
        out.insert(name, lines);
    }
    out
}

/// `mdb_dump -a` and `dlmdb dump -a` of `store` print the same text, and
/// its records are `want`'s.
fn assert_dumps(store: &Path, want: &Content, what: &str) {
    let theirs = run_ok(Command::new("mdb_dump").arg("-a").arg(store));
    let ours = run_ok(bin().args(["dump", "-a"]).arg(store));
    let theirs = String::from_utf8(theirs.stdout).unwrap();
    assert_eq!(
        String::from_utf8(ours.stdout).unwrap(),
        theirs,
        "{what}: dlmdb dump -a differs from mdb_dump -a"
    );
    assert_eq!(
        records_of(&theirs),
        records_of(&dump_text(want)),
        "{what}: the records"
    );
}

/// `dlmdb stat` prints what `mdb_stat` prints, for the options that walk
/// the free list and every database.
fn assert_stats(store: &Path, what: &str) {
    for opts in [
        &["-e", "-f", "-a"][..],
        &["-s", "dups"],
        &["-s", "kv", "-ff"],
    ] {
        let theirs = run_ok(Command::new("mdb_stat").args(opts).arg(store));
        let ours = run_ok(bin().arg("stat").args(opts).arg(store));
        assert_eq!(
            String::from_utf8_lossy(&ours.stdout),
            String::from_utf8_lossy(&theirs.stdout),
            "{what}: dlmdb stat {opts:?} differs from mdb_stat"
        );
    }
}

/// Run `make`, which writes `store`, as on a machine with `system`-byte
/// pages, and check the store's page size; false when there is no shim.
fn made_as_on(make: &mut Command, system: u32, store: &Path, what: &str) -> bool {
    if !pages::as_on_machine(make, system) {
        return false;
    }
    run_ok(make);
    assert_eq!(
        dlmdb_tests::meta_pages(&store.join("data.mdb"))[0].page_size(),
        pages::store_page_size(system as u64),
        "{what}"
    );
    true
}

/// Load round 1 here (this machine's pages) into `store`, which holds
/// `before`, and check the store. Returns what it then holds.
fn continue_here(store: &Path, before: &Content) -> Content {
    let mut delta = Content::default();
    records(1, &mut delta);
    let input = store.with_extension("round1.txt");
    std::fs::write(&input, dump_text(&delta)).unwrap();
    run_ok(bin().args(["load", "-q", "-f"]).arg(&input).arg(store));
    check_clean(store);
    let mut after = before.clone();
    records(1, &mut after);
    after
}

#[test]
fn stock_stores_from_machines_with_bigger_pages() {
    if !have_stock_tools() {
        return;
    }
    let mut made = Content::default();
    records(0, &mut made);
    let text = dump_text(&made);
    for system in OTHER_MACHINES {
        let what = format!("mdb_load as on {system}-byte pages");
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("store");
        std::fs::create_dir(&store).unwrap();
        // Debian's 0.9 mdb_load opens two databases at most: a run each.
        for (i, block) in text.split_inclusive("DATA=END\n").enumerate() {
            let input = tmp.path().join(format!("block{i}.txt"));
            std::fs::write(&input, block).unwrap();
            let mut load = Command::new("mdb_load");
            load.arg("-f").arg(&input).arg(&store);
            if !made_as_on(&mut load, system, &store, &what) {
                return;
            }
        }
        assert_dumps(&store, &made, &what);
        assert_stats(&store, &what);
        check_clean(&store);

        let after = continue_here(&store, &made);
        let what = format!("{what}, then dlmdb load here");
        assert_dumps(&store, &after, &what);
        assert_stats(&store, &what);
    }
}

#[test]
fn our_stores_from_machines_with_bigger_pages() {
    let mut made = Content::default();
    records(0, &mut made);
    let stock_tools = have_stock_tools();
    for system in OTHER_MACHINES {
        for format in ["dlmdb", "lmdb"] {
            let what = format!("dlmdb load --format {format} as on {system}-byte pages");
            let tmp = tempfile::tempdir().unwrap();
            let store = tmp.path().join("store");
            let input = tmp.path().join("in.txt");
            std::fs::write(&input, dump_text(&made)).unwrap();
            let mut load = bin();
            load.args(["load", "-q", "--format", format, "-f"])
                .arg(&input)
                .arg(&store);
            if !made_as_on(&mut load, system, &store, &what) {
                return;
            }
            check_clean(&store);
            let after = continue_here(&store, &made);
            let dumped = run_ok(bin().args(["dump", "-a"]).arg(&store));
            assert_eq!(
                records_of(&String::from_utf8(dumped.stdout).unwrap()),
                records_of(&dump_text(&after)),
                "{what}, then dlmdb load here: the records"
            );
            if format == "lmdb" && stock_tools {
                assert_dumps(&store, &after, &what);
                assert_stats(&store, &what);
            }
        }
    }
}
