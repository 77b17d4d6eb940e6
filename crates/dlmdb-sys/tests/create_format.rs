//! Format of a store created without a format flag: DLMDB data version 2 by
//! default, stock LMDB (data version 1) when the crate is built with the
//! `stock-format` feature (`-DDLMDB_DEFAULT_FORMAT_LMDB`). Stock LMDB
//! (`lmdb-master-sys`) must open the stock-format store and refuse the other.
//!
//! Run both ways:
//!   cargo test -p dlmdb-sys --test create_format
//!   cargo test -p dlmdb-sys --test create_format --features stock-format

use std::ffi::CString;
use std::ptr;

/// An `MDB_val` of the binding `$sys` over the bytes `$b`.
macro_rules! val {
    ($sys:ident, $b:expr) => {
        $sys::MDB_val {
            mv_size: $b.len(),
            mv_data: $b.as_ptr() as *mut _,
        }
    };
}

/// Begin a transaction (`$flags`) on `$env` through the binding `$sys` and
/// open the main database in it: `(txn, dbi)`. Both engines take the same
/// steps, through bindings of different types.
macro_rules! main_db {
    ($sys:ident, $env:expr, $flags:expr) => {{
        let mut txn = ptr::null_mut();
        assert_eq!(
            $sys::mdb_txn_begin($env, ptr::null_mut(), $flags, &mut txn),
            0
        );
        let mut dbi = 0;
        assert_eq!($sys::mdb_dbi_open(txn, ptr::null(), 0, &mut dbi), 0);
        (txn, dbi)
    }};
}

/// Create a store at `dir` with our engine, no flags, one committed key.
fn create_with_ours(dir: &std::path::Path) {
    let path = CString::new(dir.to_str().unwrap()).unwrap();
    unsafe {
        let mut env = ptr::null_mut();
        assert_eq!(dlmdb_sys::mdb_env_create(&mut env), 0);
        assert_eq!(dlmdb_sys::mdb_env_open(env, path.as_ptr(), 0, 0o664), 0);
        let (txn, dbi) = main_db!(dlmdb_sys, env, 0);
        let mut k = val!(dlmdb_sys, b"odd");
        let mut v = val!(dlmdb_sys, b"value");
        assert_eq!(dlmdb_sys::mdb_put(txn, dbi, &mut k, &mut v, 0), 0);
        assert_eq!(dlmdb_sys::mdb_txn_commit(txn), 0);
        dlmdb_sys::mdb_env_close(env);
    }
}

/// Open `dir` with stock LMDB and read key "odd"; the open's error code or
/// the value read.
fn read_with_stock(dir: &std::path::Path) -> Result<Vec<u8>, i32> {
    use lmdb_master_sys as s;
    let path = CString::new(dir.to_str().unwrap()).unwrap();
    unsafe {
        let mut env = ptr::null_mut();
        assert_eq!(s::mdb_env_create(&mut env), 0);
        let rc = s::mdb_env_open(env, path.as_ptr(), s::MDB_RDONLY, 0o664);
        if rc != 0 {
            s::mdb_env_close(env);
            return Err(rc);
        }
        let (txn, dbi) = main_db!(s, env, s::MDB_RDONLY);
        let mut k = val!(s, b"odd");
        let mut v = s::MDB_val {
            mv_size: 0,
            mv_data: ptr::null_mut(),
        };
        let rc = s::mdb_get(txn, dbi, &mut k, &mut v);
        let out = if rc == 0 {
            Ok(std::slice::from_raw_parts(v.mv_data as *const u8, v.mv_size).to_vec())
        } else {
            Err(rc)
        };
        s::mdb_txn_abort(txn);
        s::mdb_env_close(env);
        out
    }
}

fn data_version(dir: &std::path::Path) -> u32 {
    let head = std::fs::read(dir.join("data.mdb")).unwrap();
    u32::from_le_bytes(head[20..24].try_into().unwrap())
}

#[test]
fn new_store_format_follows_the_build_default() {
    // The variable would override the build default: make sure it is unset.
    assert!(
        std::env::var_os("DLMDB_CREATE_FORMAT").is_none(),
        "unset DLMDB_CREATE_FORMAT to run this test"
    );
    let dir = tempfile::tempdir().unwrap();
    create_with_ours(dir.path());
    if cfg!(feature = "stock-format") {
        assert_eq!(data_version(dir.path()), 1);
        assert_eq!(read_with_stock(dir.path()), Ok(b"value".to_vec()));
    } else {
        assert_eq!(data_version(dir.path()), 2);
        assert_eq!(
            read_with_stock(dir.path()),
            Err(lmdb_master_sys::MDB_VERSION_MISMATCH)
        );
    }
}
