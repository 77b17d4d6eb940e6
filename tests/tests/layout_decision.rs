//! The engine's node-layout decision on every fixture, opened without any
//! layout flag: DLMDB's padded version-1 files open padded (by their DLMDB
//! database flags or by leaves only the padded layout parses), stock files
//! open as stock, a file without evidence opens as stock, version 2 is
//! version 2; and each reads exactly like its dump. A layout named by flag
//! that the file contradicts is refused. (lmdb.h, MDB_LAYOUT_*.)

use dlmdb::{EnvFlags, Layout};
use dlmdb_sys as ffi;
use dlmdb_tests::dump::parse_dump;
use dlmdb_tests::{assert_pairs_eq, copy_fixture, fixture_text, procs::stock};

struct Case {
    file: &'static str,
    dump: Option<&'static str>,
    layout: Layout,
    reason: u32,
}

const CASES: &[Case] = &[
    Case {
        file: "counted.mdb",
        dump: Some("counted.dump.txt"),
        layout: Layout::DlmdbV1,
        reason: ffi::MDB_LAYOUT_DBFLAGS,
    },
    Case {
        file: "prefix.mdb",
        dump: Some("prefix.dump.txt"),
        layout: Layout::DlmdbV1,
        reason: ffi::MDB_LAYOUT_DBFLAGS,
    },
    Case {
        file: "dupsort.mdb",
        dump: Some("dupsort.dump.txt"),
        layout: Layout::DlmdbV1,
        reason: ffi::MDB_LAYOUT_LEAVES,
    },
    Case {
        file: "plain.mdb",
        dump: Some("plain.dump.txt"),
        layout: Layout::DlmdbV1,
        reason: ffi::MDB_LAYOUT_LEAVES,
    },
    Case {
        file: "layout_dlmdb.mdb",
        dump: Some("layout_dlmdb.dump-p.txt"),
        layout: Layout::DlmdbV1,
        reason: ffi::MDB_LAYOUT_LEAVES,
    },
    Case {
        file: "main_only.mdb",
        dump: Some("main_only.dump.txt"),
        layout: Layout::Lmdb,
        reason: ffi::MDB_LAYOUT_NO_EVIDENCE,
    },
    Case {
        file: "stock.mdb",
        dump: Some("stock.dump.txt"),
        layout: Layout::Lmdb,
        reason: ffi::MDB_LAYOUT_LEAVES,
    },
    Case {
        file: "plain.stock.mdb",
        dump: Some("plain.dump.txt"),
        layout: Layout::Lmdb,
        reason: ffi::MDB_LAYOUT_LEAVES,
    },
    Case {
        file: "dupsort.stock.mdb",
        dump: Some("dupsort.dump.txt"),
        layout: Layout::Lmdb,
        reason: ffi::MDB_LAYOUT_LEAVES,
    },
    Case {
        file: "layout_stock.mdb",
        dump: Some("layout_stock.dump-p.txt"),
        layout: Layout::Lmdb,
        reason: ffi::MDB_LAYOUT_LEAVES,
    },
    Case {
        file: "v2/counted.mdb",
        dump: Some("v2/counted.dump.txt"),
        layout: Layout::DlmdbV2,
        reason: ffi::MDB_LAYOUT_VERSION2,
    },
    Case {
        file: "v2/dupsort.mdb",
        dump: Some("v2/dupsort.dump.txt"),
        layout: Layout::DlmdbV2,
        reason: ffi::MDB_LAYOUT_VERSION2,
    },
    Case {
        file: "v2/main_only.mdb",
        dump: Some("v2/main_only.dump.txt"),
        layout: Layout::DlmdbV2,
        reason: ffi::MDB_LAYOUT_VERSION2,
    },
    Case {
        file: "v2/plain.mdb",
        dump: Some("v2/plain.dump.txt"),
        layout: Layout::DlmdbV2,
        reason: ffi::MDB_LAYOUT_VERSION2,
    },
    // Its dump is stored compressed; the layout decision is what is checked here.
    Case {
        file: "v2/prefix.mdb",
        dump: None,
        layout: Layout::DlmdbV2,
        reason: ffi::MDB_LAYOUT_VERSION2,
    },
];

/// Open the data file `path` (`NO_SUB_DIR`) with `flags`.
fn open(path: &std::path::Path, flags: EnvFlags) -> dlmdb::Result<dlmdb::Env> {
    dlmdb::Env::builder()
        .flags(EnvFlags::NO_SUB_DIR | flags)
        .max_dbs(64)
        .open(path)
}

fn reason_of(env: &dlmdb::Env) -> ffi::MDB_envlayout {
    let mut l = ffi::MDB_envlayout::default();
    // SAFETY: an opened environment; plain data out.
    assert_eq!(unsafe { ffi::mdb_env_get_layout(env.raw(), &mut l) }, 0);
    l
}

#[test]
fn every_fixture_opens_in_its_layout_without_flags() {
    for c in CASES {
        let (_dir, path) = copy_fixture(c.file);
        let env = open(&path, EnvFlags::READ_ONLY).unwrap_or_else(|e| panic!("{}: {e}", c.file));
        assert_eq!(env.layout(), c.layout, "{}", c.file);
        let l = reason_of(&env);
        assert_eq!(l.ml_reason, c.reason, "{}: reason", c.file);
        let Some(dump) = c.dump else { continue };
        let txn = env.read_txn().unwrap();
        for block in parse_dump(&fixture_text(dump)).unwrap() {
            let name = block
                .name
                .as_ref()
                .map(|n| String::from_utf8(n.clone()).unwrap());
            let db = txn
                .open_db(name.as_deref())
                .unwrap_or_else(|e| panic!("{}: open {name:?}: {e}", c.file));
            let got: Vec<(Vec<u8>, Vec<u8>)> = txn
                .cursor(db)
                .unwrap()
                .iter()
                .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
                .collect();
            assert_pairs_eq(&format!("{} db {name:?}", c.file), &got, &block.records);
        }
    }
}

/// A layout named by flag that the file's evidence contradicts is refused
/// (MDB_INCOMPATIBLE), never read.
#[test]
fn contradicted_layout_flags_are_refused() {
    for (file, flags) in [
        ("plain.stock.mdb", EnvFlags::FORMAT_DLMDB_V1),
        ("layout_stock.mdb", EnvFlags::FORMAT_DLMDB_V1),
        ("plain.mdb", EnvFlags::FORMAT_LMDB),
        ("counted.mdb", EnvFlags::FORMAT_LMDB),
        ("prefix.mdb", EnvFlags::FORMAT_LMDB),
        ("layout_dlmdb.mdb", EnvFlags::FORMAT_LMDB),
    ] {
        let (_dir, path) = copy_fixture(file);
        let r = open(&path, EnvFlags::READ_ONLY | flags);
        assert!(
            matches!(r, Err(dlmdb::Error::Incompatible)),
            "{file} with {flags:?}: {:?}",
            r.err()
        );
    }
    // Named layouts the file agrees with open, and say so.
    for (file, flags) in [
        ("plain.mdb", EnvFlags::FORMAT_DLMDB_V1),
        ("stock.mdb", EnvFlags::FORMAT_LMDB),
        ("main_only.mdb", EnvFlags::FORMAT_DLMDB_V1),
    ] {
        let (_dir, path) = copy_fixture(file);
        let env =
            open(&path, EnvFlags::READ_ONLY | flags).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(reason_of(&env).ml_reason, ffi::MDB_LAYOUT_TOLD, "{file}");
    }
}

/// No evidence either way: the store opens as stock, and an odd-length key
/// written then is in stock layout, so stock LMDB reads it back.
#[test]
fn store_without_evidence_stays_stock_when_written() {
    let (_dir, path) = copy_fixture("main_only.mdb");
    {
        let env = open(&path, EnvFlags::empty()).unwrap();
        assert_eq!(reason_of(&env).ml_reason, ffi::MDB_LAYOUT_NO_EVIDENCE);
        let db = env.open_db(None).unwrap();
        let mut t = env.write_txn().unwrap();
        t.put(
            db,
            b"odd",
            b"value-behind-an-odd-key",
            dlmdb::WriteFlags::empty(),
        )
        .unwrap();
        t.commit().unwrap();
    }
    let _ = std::fs::remove_file(path.with_file_name("main_only.mdb-lock"));
    let env = stock::Env::open_file(&path, lmdb_master_sys::MDB_RDONLY, 4, 0).unwrap();
    let t = env.begin_ro().unwrap();
    let main = t.open_db(None, 0).unwrap();
    assert_eq!(
        t.get(main, b"odd").unwrap().as_deref(),
        Some(&b"value-behind-an-odd-key"[..])
    );
    drop(t);
    drop(env);
    // And we now find evidence of stock layout.
    let env = open(&path, EnvFlags::READ_ONLY).unwrap();
    assert_eq!(env.layout(), Layout::Lmdb);
    assert_eq!(reason_of(&env).ml_reason, ffi::MDB_LAYOUT_LEAVES);
}
