//! A data file of another format (an LMDB 1.x store, data format 3; LMDB of
//! a 32-bit build or of a big-endian machine; libmdbx; bbolt) is named as
//! such, in one line, by every command that opens a store, and nothing is
//! written to it.

mod common;
use common::*;
use dlmdb_format::foreign::{BOLT_MAGIC, MDBX_MAGIC};
use dlmdb_format::MAGIC;
use dlmdb_tests::lmdb1x_store;
use std::path::Path;

/// Every command that opens a store fails on `file` with one error line
/// holding `named` (check with exit status 2), and leaves it as it was.
fn every_command_names(file: &Path, named: &str) {
    let before = std::fs::read(file).unwrap();
    let dir = file.parent().unwrap();
    let dump_in = dir.join("in.txt");
    std::fs::write(
        &dump_in,
        "VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n 61\n 62\nDATA=END\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let copy_dst = dir.join("copy.mdb");
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
        assert!(err.contains(named), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        if args[0] == "check" {
            assert_eq!(out.status.code(), Some(2), "check: {err}");
        }
    }
    assert_eq!(
        std::fs::read(file).unwrap(),
        before,
        "the store was written"
    );
}

#[test]
fn every_command_names_an_lmdb1x_store() {
    for wide in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("v3.mdb");
        lmdb1x_store(&file, wide);
        every_command_names(
            &file,
            "is an LMDB 1.x store (data format 3), which dlmdb does not support yet",
        );
    }
}

/// Two pages whose first holds `signature` bytes at their offsets.
fn first_page_with(file: &Path, signature: &[(usize, Vec<u8>)]) {
    let mut b = vec![0u8; 8192];
    for (at, bytes) in signature {
        b[*at..*at + bytes.len()].copy_from_slice(bytes);
    }
    std::fs::write(file, b).unwrap();
}

#[test]
fn every_command_names_other_engines_and_builds() {
    let le32 = |v: u32| v.to_le_bytes().to_vec();
    let be32 = |v: u32| v.to_be_bytes().to_vec();
    let cases = [
        (
            "lmdb32.mdb",
            // page header: pgno u32, pad u16, flags u16 (META), lower, upper
            vec![(6, vec![8, 0]), (12, le32(MAGIC)), (16, le32(1))],
            "is an LMDB store written by a 32-bit build",
        ),
        (
            "bigendian.mdb",
            vec![(10, vec![0, 8]), (16, be32(MAGIC)), (20, be32(1))],
            "is an LMDB store written on a big-endian machine",
        ),
        (
            "mdbx.dat",
            vec![(20, ((MDBX_MAGIC << 8) | 3).to_le_bytes().to_vec())],
            "is a libmdbx store (data format 3)",
        ),
        (
            "bolt.db",
            vec![(8, vec![4, 0]), (16, le32(BOLT_MAGIC)), (20, le32(2))],
            "is a bbolt (BoltDB) store",
        ),
    ];
    for (name, signature, named) in cases {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(name);
        first_page_with(&file, &signature);
        every_command_names(&file, named);
    }
}
