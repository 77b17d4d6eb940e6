//! `dlmdb copy --compact` of a damaged store fails with MDB_CORRUPTED and
//! leaves no copy behind (the compacting walk checks what it reads); the
//! same command on the sound store succeeds and its copy passes check.

mod common;
use common::*;

const PS: usize = 4096;

/// A single-file store with a counted database of 3000 keys, loaded by the
/// CLI itself.
fn counted_store(dir: &std::path::Path) -> std::path::PathBuf {
    let mut text =
        String::from("VERSION=3\nformat=print\ndatabase=c\ntype=btree\ncounted=1\nHEADER=END\n");
    for i in 0..3000 {
        text.push_str(&format!(" k{i:06}\n v{i}\n"));
    }
    text.push_str("DATA=END\n");
    let input = dir.join("in.txt");
    std::fs::write(&input, text).unwrap();
    let store = dir.join("s.mdb");
    run_ok(bin().args(["load", "-n", "-f"]).arg(&input).arg(&store));
    store
}

/// Add one to the count of node 0 of the first counted branch page.
fn damage_first_count(store: &std::path::Path) {
    let mut file = std::fs::read(store).unwrap();
    let pg = (2..file.len() / PS)
        .find(|&p| u16::from_le_bytes([file[p * PS + 10], file[p * PS + 11]]) == 0x81)
        .expect("a counted branch page");
    let base = pg * PS;
    let ptr0 = u16::from_le_bytes([file[base + 16], file[base + 17]]) as usize;
    let at = base + ptr0 + 8;
    let cnt = u64::from_le_bytes(file[at..at + 8].try_into().unwrap()) + 1;
    file[at..at + 8].copy_from_slice(&cnt.to_le_bytes());
    std::fs::write(store, file).unwrap();
}

#[test]
fn compact_copy_of_damaged_store_fails_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = counted_store(dir.path());
    // Sound: the copy succeeds and checks clean.
    let good = dir.path().join("good.mdb");
    run_ok(bin().args(["copy", "--compact"]).arg(&store).arg(&good));
    check_clean(&good);
    // Damaged: refused, nothing written.
    damage_first_count(&store);
    let bad = dir.path().join("bad.mdb");
    let out = bin()
        .args(["copy", "--compact"])
        .arg(&store)
        .arg(&bad)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "copy succeeded");
    assert!(err.contains("MDB_CORRUPTED"), "{err}");
    assert!(!bad.exists(), "a partial copy was left behind");
    // check sees the same damage.
    assert_exit(&bin().arg("check").arg(&store).output().unwrap(), 1);
}
