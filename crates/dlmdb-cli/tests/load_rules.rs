//! `dlmdb load` refuses, before writing, what the target cannot hold or what
//! `dlmdb check` would reject; any failure leaves a new path absent and an
//! existing store's data file byte for byte as it was.

mod common;

use common::{bin, listing, load_input};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

const HEAD: &str = "VERSION=3\nformat=bytevalue\ntype=btree\nmapsize=1048576\nmaxreaders=126\n";

/// Run `dlmdb load ARGS -f INPUT TARGET`; (exit status, stderr).
fn load(input: &str, target: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = load_input(bin(), input, args, target);
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

/// Load `input` (with `args`) into a new store `name` in a new temporary
/// directory; the load must succeed.
fn new_store(name: &str, input: &str, args: &[&str]) -> (TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join(name);
    let (code, err) = load(input, &target, args);
    assert_eq!(code, Some(0), "{err}");
    (tmp, target)
}

/// One block with the extra `header` lines, holding the one record `a` = `1`.
fn one_record(header: &str) -> String {
    format!("{HEAD}{header}HEADER=END\n 61\n 31\nDATA=END\n")
}

#[test]
fn refused_inputs_name_the_line_and_create_nothing() {
    let cases: Vec<(String, &[&str], &str)> = vec![
        (
            one_record("counted=1\n"),
            &["--format", "lmdb"],
            "line 6: counted=1 is a DLMDB flag",
        ),
        (
            one_record("prefix_compression=1\n"),
            &["--format", "lmdb"],
            "line 6: prefix_compression=1 is a DLMDB flag",
        ),
        (
            one_record("reversekey=1\n"),
            &[],
            "line 1: reversekey=1 on the main database",
        ),
        (
            format!(
                "{HEAD}reversekey=1\nHEADER=END\nDATA=END\n{HEAD}database=x\nHEADER=END\n 61\n 31\nDATA=END\n"
            ),
            &[],
            "reversekey=1 on the main database with records or named databases",
        ),
        (
            format!("{HEAD}integerkey=1\nHEADER=END\n 01000000\n 31\n 0200000000000000\n 32\nDATA=END\n"),
            &[],
            "line 10: integerkey database mixes keys of 4 bytes (line 8) and 8 bytes",
        ),
        (
            format!("{HEAD}dupsort=1\nintegerdup=1\nHEADER=END\n 61\n 01000000\n 61\n 0200000000000000\nDATA=END\n"),
            &[],
            "integerdup database mixes values of 4 bytes",
        ),
    ];
    for (input, args, want) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("t");
        let (code, err) = load(&input, &target, args);
        assert_eq!(code, Some(1), "{input}");
        assert!(err.contains(want), "{err}");
        assert!(err.contains("nothing was written"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(listing(tmp.path()).is_empty(), "{:?}", listing(tmp.path()));
    }
    // The same inputs a stock-format store can hold load fine without the flags.
    let (tmp, target) = new_store(
        "ok",
        &format!("{HEAD}integerkey=1\nHEADER=END\n 01000000\n 31\n 02000000\n 32\nDATA=END\n"),
        &["--format", "lmdb"],
    );
    assert_eq!(listing(tmp.path()), ["ok"]);
    assert_eq!(listing(&target), ["data.mdb"]);
}

#[test]
fn a_failure_while_writing_a_new_store_leaves_nothing() {
    // The second block names the same database with other flags: found only
    // when writing (after the first block was written).
    let input = format!(
        "{HEAD}database=x\ndupsort=1\nHEADER=END\n 61\n 31\nDATA=END\n{HEAD}database=x\nHEADER=END\n 62\n 32\nDATA=END\n"
    );
    for args in [&[][..], &["-n"][..]] {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("t");
        let (code, err) = load(&input, &target, args);
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains("database \"x\""), "{err}");
        assert!(err.contains("flags"), "{err}");
        assert!(listing(tmp.path()).is_empty(), "{:?}", listing(tmp.path()));
    }
}

#[test]
fn a_new_single_file_store_has_no_leftovers() {
    let (tmp, target) = new_store("one.mdb", &one_record(""), &["-n"]);
    assert_eq!(listing(tmp.path()), ["one.mdb"]);
    let out = bin().args(["get"]).arg(&target).arg("a").output().unwrap();
    assert_eq!(out.stdout, b"1\n");
}

#[test]
fn failures_into_an_existing_store_keep_its_data_file() {
    let (_tmp, store) = new_store("s", &one_record("database=x\ndupsort=1\n"), &[]);
    let before = std::fs::read(store.join("data.mdb")).unwrap();
    let bad = [
        // Refused at validation.
        format!("{HEAD}database=y\nintegerkey=1\nHEADER=END\n 01\n 31\nDATA=END\n"),
        // Refused while writing: flags differ from the existing database.
        format!(
            "{HEAD}database=z\nHEADER=END\n{}DATA=END\n{HEAD}database=x\nHEADER=END\n 62\n 32\nDATA=END\n",
            (0..2000)
                .map(|i| format!(" {:08x}\n {}\n", i, "ab".repeat(200)))
                .collect::<String>()
        ),
        // --format lmdb does not apply to an existing version-2 store.
        one_record(""),
    ];
    for (i, input) in bad.iter().enumerate() {
        let args: &[&str] = if i == 2 { &["--format", "lmdb"] } else { &[] };
        let (code, err) = load(input, &store, args);
        assert_eq!(code, Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        let after = std::fs::read(store.join("data.mdb")).unwrap();
        assert_eq!(after.len(), before.len(), "size changed: {err}");
        assert!(after == before, "data file changed: {err}");
    }
}

/// `n` records with keys in a scrambled order (a bijection of 0..n: 7919
/// is prime and does not divide n).
fn scrambled(n: u32, mapsize: u64) -> String {
    let mut s = format!(
        "VERSION=3\nformat=bytevalue\ntype=btree\nmapsize={mapsize}\nmaxreaders=126\nHEADER=END\n"
    );
    for i in 0..n {
        let k = ((u64::from(i) * 7919 % u64::from(n)) as u32).to_be_bytes();
        s.push_str(&format!(
            " {}\n {}\n",
            dlmdb_cli::util::hex(&k),
            "cd".repeat(100)
        ));
    }
    s.push_str("DATA=END\n");
    s
}

#[test]
fn a_new_store_is_streamed_over_many_commits_and_is_complete() {
    // A 1 MiB map in the header: the load commits in many small steps and
    // grows the map as it goes; the result must hold every record.
    let n = 30_011;
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("t");
    let out = {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("in.txt");
        std::fs::write(&f, scrambled(n, 1 << 20)).unwrap();
        bin()
            .args(["load", "--json", "--commit-bytes", "200000", "-f"])
            .arg(&f)
            .arg(&target)
            .output()
            .unwrap()
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["txnid"].as_u64().unwrap() > 3, "{v}");
    assert_eq!(v["databases"][0]["written"], n);
    assert_eq!(v["databases"][0]["appended"], false);
    let stat = bin().arg("stat").arg(&target).output().unwrap();
    assert!(String::from_utf8_lossy(&stat.stdout).contains(&format!("  Entries: {n}\n")));
    let check = bin().arg("check").arg(&target).output().unwrap();
    assert_eq!(check.status.code(), Some(0));
    // Keys 0..n, in order.
    let keys = bin()
        .args(["scan", "--keys-only", "--format", "hex"])
        .arg(&target)
        .output()
        .unwrap();
    let want: String = (0..n)
        .map(|i| format!("{}\n", dlmdb_cli::util::hex(&i.to_be_bytes())))
        .collect();
    assert_eq!(String::from_utf8(keys.stdout).unwrap(), want);
    assert_eq!(listing(tmp.path()), ["t"]);
}

#[test]
fn a_duplicate_found_by_the_store_leaves_nothing() {
    let mut input = scrambled(5000, 1 << 20);
    // Repeat an early key near the end (not next to its first occurrence).
    let dup = format!(
        " {}\n {}\n",
        dlmdb_cli::util::hex(&7u32.to_be_bytes()),
        "00"
    );
    let end = input.rfind("DATA=END").unwrap();
    input.insert_str(end, &dup);
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("t");
    let (code, err) = load(&input, &target, &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("line 10007: duplicate key"), "{err}");
    assert!(listing(tmp.path()).is_empty(), "{:?}", listing(tmp.path()));
}
