//! Every numeric `#define` of `vendor/dlmdb/lmdb.h` that this crate mirrors
//! must have the same value here (guards against drift between the two).

use dlmdb_sys::*;
use std::collections::HashMap;

const HEADER: &str = include_str!("../../../vendor/dlmdb/lmdb.h");

fn header_defines() -> HashMap<String, i64> {
    let mut m = HashMap::new();
    for line in HEADER.lines() {
        let mut it = line.split_whitespace();
        if it.next() != Some("#define") {
            continue;
        }
        let (Some(name), Some(value)) = (it.next(), it.next()) else {
            continue;
        };
        let v = value.trim_start_matches('(').trim_end_matches(')');
        let parsed = if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
            i64::from_str_radix(h, 16).ok()
        } else {
            v.parse::<i64>().ok()
        };
        if let Some(p) = parsed {
            m.insert(name.to_string(), p);
        }
    }
    m
}

#[test]
fn constants_match_header() {
    let h = header_defines();
    let ours: &[(&str, i64)] = &[
        ("MDB_FIXEDMAP", MDB_FIXEDMAP as i64),
        ("MDB_NOSUBDIR", MDB_NOSUBDIR as i64),
        ("MDB_NOSYNC", MDB_NOSYNC as i64),
        ("MDB_RDONLY", MDB_RDONLY as i64),
        ("MDB_NOMETASYNC", MDB_NOMETASYNC as i64),
        ("MDB_WRITEMAP", MDB_WRITEMAP as i64),
        ("MDB_MAPASYNC", MDB_MAPASYNC as i64),
        ("MDB_NOTLS", MDB_NOTLS as i64),
        ("MDB_NOLOCK", MDB_NOLOCK as i64),
        ("MDB_NORDAHEAD", MDB_NORDAHEAD as i64),
        ("MDB_NOMEMINIT", MDB_NOMEMINIT as i64),
        ("MDB_PREVSNAPSHOT", MDB_PREVSNAPSHOT as i64),
        ("MDB_INMEMORY", MDB_INMEMORY as i64),
        ("MDB_FORMAT_LMDB", MDB_FORMAT_LMDB as i64),
        ("MDB_FORMAT_DLMDB_V1", MDB_FORMAT_DLMDB_V1 as i64),
        ("MDB_LOCK_V1", MDB_LOCK_V1 as i64),
        ("MDB_LOCK_V2", MDB_LOCK_V2 as i64),
        ("MDB_LAYOUT_VERSION2", MDB_LAYOUT_VERSION2 as i64),
        ("MDB_LAYOUT_NEW", MDB_LAYOUT_NEW as i64),
        ("MDB_LAYOUT_TOLD", MDB_LAYOUT_TOLD as i64),
        ("MDB_LAYOUT_DBFLAGS", MDB_LAYOUT_DBFLAGS as i64),
        ("MDB_LAYOUT_COUNTED", MDB_LAYOUT_COUNTED as i64),
        ("MDB_LAYOUT_LEAVES", MDB_LAYOUT_LEAVES as i64),
        ("MDB_LAYOUT_NO_EVIDENCE", MDB_LAYOUT_NO_EVIDENCE as i64),
        ("MDB_REVERSEKEY", MDB_REVERSEKEY as i64),
        ("MDB_DUPSORT", MDB_DUPSORT as i64),
        ("MDB_INTEGERKEY", MDB_INTEGERKEY as i64),
        ("MDB_DUPFIXED", MDB_DUPFIXED as i64),
        ("MDB_INTEGERDUP", MDB_INTEGERDUP as i64),
        ("MDB_REVERSEDUP", MDB_REVERSEDUP as i64),
        ("MDB_COUNTED", MDB_COUNTED as i64),
        ("MDB_PREFIX_COMPRESSION", MDB_PREFIX_COMPRESSION as i64),
        ("MDB_CREATE", MDB_CREATE as i64),
        ("MDB_NOOVERWRITE", MDB_NOOVERWRITE as i64),
        ("MDB_NODUPDATA", MDB_NODUPDATA as i64),
        ("MDB_CURRENT", MDB_CURRENT as i64),
        ("MDB_RESERVE", MDB_RESERVE as i64),
        ("MDB_APPEND", MDB_APPEND as i64),
        ("MDB_APPENDDUP", MDB_APPENDDUP as i64),
        ("MDB_MULTIPLE", MDB_MULTIPLE as i64),
        ("MDB_CP_COMPACT", MDB_CP_COMPACT as i64),
        ("MDB_COUNT_LOWER_INCL", MDB_COUNT_LOWER_INCL as i64),
        ("MDB_COUNT_UPPER_INCL", MDB_COUNT_UPPER_INCL as i64),
        ("MDB_PAGE_BRANCH", MDB_PAGE_BRANCH as i64),
        ("MDB_PAGE_LEAF", MDB_PAGE_LEAF as i64),
        ("MDB_PAGE_OVERFLOW", MDB_PAGE_OVERFLOW as i64),
        ("MDB_PAGE_LEAF2", MDB_PAGE_LEAF2 as i64),
        ("MDB_PAGE_SUBPAGE", MDB_PAGE_SUBPAGE as i64),
        ("MDB_SUCCESS", MDB_SUCCESS as i64),
        ("MDB_KEYEXIST", MDB_KEYEXIST as i64),
        ("MDB_NOTFOUND", MDB_NOTFOUND as i64),
        ("MDB_PAGE_NOTFOUND", MDB_PAGE_NOTFOUND as i64),
        ("MDB_CORRUPTED", MDB_CORRUPTED as i64),
        ("MDB_PANIC", MDB_PANIC as i64),
        ("MDB_VERSION_MISMATCH", MDB_VERSION_MISMATCH as i64),
        ("MDB_INVALID", MDB_INVALID as i64),
        ("MDB_MAP_FULL", MDB_MAP_FULL as i64),
        ("MDB_DBS_FULL", MDB_DBS_FULL as i64),
        ("MDB_READERS_FULL", MDB_READERS_FULL as i64),
        ("MDB_TLS_FULL", MDB_TLS_FULL as i64),
        ("MDB_TXN_FULL", MDB_TXN_FULL as i64),
        ("MDB_CURSOR_FULL", MDB_CURSOR_FULL as i64),
        ("MDB_PAGE_FULL", MDB_PAGE_FULL as i64),
        ("MDB_MAP_RESIZED", MDB_MAP_RESIZED as i64),
        ("MDB_INCOMPATIBLE", MDB_INCOMPATIBLE as i64),
        ("MDB_BAD_RSLOT", MDB_BAD_RSLOT as i64),
        ("MDB_BAD_TXN", MDB_BAD_TXN as i64),
        ("MDB_BAD_VALSIZE", MDB_BAD_VALSIZE as i64),
        ("MDB_BAD_DBI", MDB_BAD_DBI as i64),
        ("MDB_PROBLEM", MDB_PROBLEM as i64),
        ("MDB_DBIS_BUSY", MDB_DBIS_BUSY as i64),
    ];
    let mut missing = Vec::new();
    for &(name, v) in ours {
        match h.get(name) {
            Some(&hv) => assert_eq!(hv, v, "{name}: header {hv:#x}, Rust {v:#x}"),
            None => missing.push(name),
        }
    }
    assert!(
        missing.is_empty(),
        "not found as numeric #define in lmdb.h: {missing:?}"
    );
}

#[test]
fn cursor_ops_match_header_enum_order() {
    let start = HEADER
        .find("typedef enum MDB_cursor_op")
        .expect("enum in header");
    let body = &HEADER[start..HEADER[start..].find('}').unwrap() + start];
    let names: Vec<&str> = body
        .lines()
        .skip(1)
        .filter_map(|l| {
            l.trim()
                .split(|c: char| c == ',' || c.is_whitespace())
                .next()
        })
        .filter(|n| n.starts_with("MDB_"))
        .collect();
    let ours = [
        ("MDB_FIRST", MDB_FIRST),
        ("MDB_FIRST_DUP", MDB_FIRST_DUP),
        ("MDB_GET_BOTH", MDB_GET_BOTH),
        ("MDB_GET_BOTH_RANGE", MDB_GET_BOTH_RANGE),
        ("MDB_GET_CURRENT", MDB_GET_CURRENT),
        ("MDB_GET_MULTIPLE", MDB_GET_MULTIPLE),
        ("MDB_LAST", MDB_LAST),
        ("MDB_LAST_DUP", MDB_LAST_DUP),
        ("MDB_NEXT", MDB_NEXT),
        ("MDB_NEXT_DUP", MDB_NEXT_DUP),
        ("MDB_NEXT_MULTIPLE", MDB_NEXT_MULTIPLE),
        ("MDB_NEXT_NODUP", MDB_NEXT_NODUP),
        ("MDB_PREV", MDB_PREV),
        ("MDB_PREV_DUP", MDB_PREV_DUP),
        ("MDB_PREV_NODUP", MDB_PREV_NODUP),
        ("MDB_SET", MDB_SET),
        ("MDB_SET_KEY", MDB_SET_KEY),
        ("MDB_SET_RANGE", MDB_SET_RANGE),
        ("MDB_PREV_MULTIPLE", MDB_PREV_MULTIPLE),
    ];
    assert_eq!(names.len(), ours.len(), "{names:?}");
    for (i, (name, v)) in ours.iter().enumerate() {
        assert_eq!(names[i], *name);
        assert_eq!(*v as usize, i, "{name}");
    }
}
