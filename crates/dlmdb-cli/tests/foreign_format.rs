//! An LMDB 1.x store (data format 3) is named as such, in one line, by every
//! command that opens a store, and nothing is written to it.

mod common;
use common::*;
use dlmdb_tests::lmdb1x_store;

#[test]
fn every_command_names_an_lmdb1x_store() {
    for wide in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("v3.mdb");
        lmdb1x_store(&file, wide);
        let before = std::fs::read(&file).unwrap();
        let dump_in = dir.path().join("in.txt");
        std::fs::write(
            &dump_in,
            "VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n 61\n 62\nDATA=END\n",
        )
        .unwrap();
        let f = file.to_str().unwrap();
        let copy_dst = dir.path().join("copy.mdb");
        let runs: Vec<Vec<&str>> = vec![
            vec!["stat", "-a", f],
            vec!["dump", "-a", f],
            vec!["count", f],
            vec!["copy", f, copy_dst.to_str().unwrap()],
            vec!["check", f],
            vec!["load", "-f", dump_in.to_str().unwrap(), f],
        ];
        for args in runs {
            let out = bin().args(&args).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{args:?} succeeded");
            assert!(
                err.contains(
                    "is an LMDB 1.x store (data format 3), which dlmdb does not support yet"
                ),
                "{args:?}: {err}"
            );
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
            if args[0] == "check" {
                assert_eq!(out.status.code(), Some(2), "check: {err}");
            }
        }
        assert_eq!(
            std::fs::read(&file).unwrap(),
            before,
            "the store was written"
        );
    }
}
