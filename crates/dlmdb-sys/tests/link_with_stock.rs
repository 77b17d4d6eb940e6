//! Our engine and stock LMDB (`lmdb-master-sys`, plain `mdb_*` symbols) must link
//! into one binary side by side: ours exports only `dlmdb_*` names.

use std::ffi::CStr;

fn ours() -> (String, i32, i32, i32) {
    let (mut a, mut b, mut c) = (0, 0, 0);
    let s = unsafe { CStr::from_ptr(dlmdb_sys::mdb_version(&mut a, &mut b, &mut c)) };
    (s.to_string_lossy().into_owned(), a, b, c)
}

fn stock() -> (String, i32, i32, i32) {
    let (mut a, mut b, mut c) = (0, 0, 0);
    let s = unsafe { CStr::from_ptr(lmdb_master_sys::mdb_version(&mut a, &mut b, &mut c)) };
    (s.to_string_lossy().into_owned(), a, b, c)
}

#[test]
fn both_engines_link_and_report_different_versions() {
    let (o, ..) = ours();
    let (s, ..) = stock();
    assert!(s.starts_with("LMDB"), "stock version string: {s}");
    assert_ne!(o, s, "our mdb_version must not resolve to stock LMDB's");
}

#[test]
fn strerror_has_lmdb_prefix_convention() {
    let msg = unsafe { CStr::from_ptr(dlmdb_sys::mdb_strerror(dlmdb_sys::MDB_NOTFOUND)) };
    assert!(
        msg.to_string_lossy().starts_with("MDB_NOTFOUND: "),
        "{msg:?}"
    );
}
