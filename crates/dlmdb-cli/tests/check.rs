//! `dlmdb check`: passes every fixture and every store the engine writes;
//! finds deliberately damaged stores; never crashes; graded exit codes.

mod common;

use common::{bin, fixture_copy};
use dlmdb::{DatabaseFlags, Env, EnvFlags, WriteFlags};
use std::path::{Path, PathBuf};
use std::process::Output;
use tempfile::TempDir;

fn check(path: &Path, extra: &[&str]) -> (Option<i32>, serde_json::Value, Output) {
    let out = bin()
        .arg("check")
        .arg("--json")
        .args(extra)
        .arg(path)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code(), v, out)
}

fn problems(v: &serde_json::Value) -> String {
    v["problems"]
        .as_array()
        .map(|a| a.iter().map(|p| format!("{p}\n")).collect())
        .unwrap_or_default()
}

const ALL_FIXTURES: [&str; 15] = [
    "plain.mdb",
    "counted.mdb",
    "dupsort.mdb",
    "prefix.mdb",
    "stock.mdb",
    "main_only.mdb",
    "layout_dlmdb.mdb",
    "layout_stock.mdb",
    "plain.stock.mdb",
    "dupsort.stock.mdb",
    "v2/plain.mdb",
    "v2/counted.mdb",
    "v2/dupsort.mdb",
    "v2/prefix.mdb",
    "v2/main_only.mdb",
];

#[test]
fn every_fixture_is_clean() {
    for f in ALL_FIXTURES {
        let Some((_t, p)) = fixture_copy(f) else {
            continue;
        };
        let (code, v, out) = check(&p, &[]);
        assert_eq!(
            code,
            Some(0),
            "{f}: {}{}",
            problems(&v),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(v["lost_pages"], 0, "{f}");
        assert_eq!(
            v["accounted_pages"].as_u64(),
            Some(v["last_pgno"].as_u64().unwrap() + 1),
            "{f}"
        );
    }
}

#[test]
fn check_reports_snapshot() {
    let Some((t, p)) = fixture_copy("v2/dupsort.mdb") else {
        return;
    };
    let out = bin().arg("check").arg(&p).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).replace(&t.path().display().to_string(), "[TMP]");
    insta::assert_snapshot!("check_v2_dupsort_text", text);
    let (_, mut v, _) = check(&p, &[]);
    v["path"] = "[TMP]".into();
    v["data_file"] = "[TMP]".into();
    insta::assert_snapshot!(
        "check_v2_dupsort_json",
        serde_json::to_string_pretty(&v).unwrap()
    );
    let (code, v, _) = check(&p, &["-s", "intdup"]);
    assert_eq!(code, Some(0));
    assert_eq!(v["scope"], "database");
    assert_eq!(v["databases"].as_array().unwrap().len(), 3); // free, main, intdup
    let (code, v, _) = check(&p, &["-s", "nope"]);
    assert_eq!(code, Some(1), "{v}");
}

/// Stores written by the engine in every format, with churn (free pages,
/// overflow values, several databases and flag combinations).
#[test]
fn stores_the_engine_writes_are_clean() {
    for (fmt, flags) in [
        ("v2", EnvFlags::empty()),
        ("lmdb", EnvFlags::FORMAT_LMDB),
        ("dlmdb-v1", EnvFlags::FORMAT_DLMDB_V1),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        {
            let env = Env::builder()
                .flags(flags)
                .max_dbs(16)
                .map_size(64 << 20)
                .open(tmp.path())
                .unwrap();
            let mut specs = vec![
                ("plain", DatabaseFlags::empty()),
                ("rev", DatabaseFlags::REVERSE_KEY),
                ("int", DatabaseFlags::INTEGER_KEY),
                ("dups", DatabaseFlags::DUP_SORT),
                ("fixed", DatabaseFlags::DUP_SORT | DatabaseFlags::DUP_FIXED),
            ];
            if fmt != "lmdb" {
                // DLMDB's flags exist only in DLMDB layouts.
                specs.push(("counted", DatabaseFlags::COUNTED));
                specs.push(("cdups", DatabaseFlags::DUP_SORT | DatabaseFlags::COUNTED));
            }
            let mut dbs = Vec::new();
            for (n, f) in specs {
                dbs.push((n, env.create_db(Some(n), f).unwrap()));
            }
            let mut seed = 12345u64;
            let mut rnd = move || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            for round in 0..6 {
                let mut txn = env.write_txn().unwrap();
                for i in 0..1500u64 {
                    let r = rnd();
                    for (n, db) in &dbs {
                        let key: Vec<u8> = match *n {
                            "int" => (r % 5000).to_le_bytes().to_vec(),
                            _ => format!("key-{:05}-{}", r % 5000, "x".repeat((r % 7) as usize))
                                .into_bytes(),
                        };
                        let dupsort = matches!(*n, "dups" | "fixed" | "cdups");
                        let vlen = if *n == "fixed" {
                            8
                        } else if i % 97 == 0 && !dupsort {
                            5000
                        } else {
                            (r % 60) as usize
                        };
                        let mut val = vec![b'a' + (round as u8); vlen];
                        if dupsort && vlen > 0 {
                            val[0] = (r >> 20) as u8 % 8; // several values per key
                        }
                        if r % 5 == 0 {
                            let _ = txn.del(*db, &key, None);
                        } else {
                            txn.put(*db, &key, &val, WriteFlags::empty()).unwrap();
                        }
                    }
                }
                txn.commit().unwrap();
            }
        }
        let (code, v, out) = check(tmp.path(), &[]);
        assert_eq!(
            code,
            Some(0),
            "{fmt}: {}{}",
            problems(&v),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            v["free_pages"].as_u64().unwrap() > 0,
            "{fmt}: churn should leave free pages"
        );
    }
}

/// Page `p` of the file as a mutable slice helper.
fn patch(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut b = std::fs::read(path).unwrap();
    f(&mut b);
    std::fs::write(path, b).unwrap();
}
const PS: usize = 4096;
fn u16_at(b: &[u8], o: usize) -> usize {
    u16::from_le_bytes([b[o], b[o + 1]]) as usize
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}
/// Offset of the current meta page.
fn cur_meta(b: &[u8]) -> usize {
    if u64_at(b, PS + 144) > u64_at(b, 144) {
        PS
    } else {
        0
    }
}
/// A copy of the fixture `rel` and a branch page reachable in its named
/// database `db` (found with the engine's page walk, so it is live, not a
/// stale page on the free list); `None` when the fixture is missing.
fn fixture_branch_page(rel: &str, db: &str) -> Option<(TempDir, PathBuf, usize)> {
    let (tmp, path) = fixture_copy(rel)?;
    let env = Env::builder()
        .flags(EnvFlags::NO_SUB_DIR | EnvFlags::READ_ONLY)
        .max_dbs(8)
        .open(&path)
        .unwrap();
    let txn = env.read_txn().unwrap();
    let d = txn.open_db(Some(db)).unwrap();
    let pages = txn.pages(d).unwrap();
    let pg = pages
        .iter()
        .find(|p| p.kind == dlmdb::PageKind::Branch)
        .expect("a branch page")
        .pgno as usize;
    drop(txn);
    drop(env);
    let _ = std::fs::remove_file(format!("{}-lock", path.display()));
    Some((tmp, path, pg))
}
fn reported(v: &serde_json::Value, page: usize) -> bool {
    v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["page"] == page as u64)
}

#[test]
fn damaged_branch_page_is_found() {
    let Some((_t, p, page)) = fixture_branch_page("v2/plain.mdb", "revkey") else {
        return;
    };
    patch(&p, |b| {
        // Flip bytes in the middle of the node area and in the pointer array.
        let base = page * PS;
        for o in [18, 19, 2000, 2001, 3000, 4090] {
            b[base + o] ^= 0x5a;
        }
    });
    let (code, v, out) = check(&p, &[]);
    assert_eq!(code, Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(reported(&v, page), "{}", problems(&v));
}

#[test]
fn wrong_count_on_a_counted_branch_page_is_found() {
    let Some((_t, p, page)) = fixture_branch_page("v2/counted.mdb", "counted") else {
        return;
    };
    patch(&p, |b| {
        assert_eq!(u16_at(b, page * PS + 10), 0x81);
        let base = page * PS;
        let node = u16_at(b, base + 16); // node 0
        let c = u64_at(b, base + node + 8);
        b[base + node + 8..base + node + 16].copy_from_slice(&(c + 1).to_le_bytes());
    });
    let (code, v, _) = check(&p, &[]);
    assert_eq!(code, Some(1));
    let hit = v["problems"].as_array().unwrap().iter().any(|x| {
        x["page"] == page as u64
            && x["message"]
                .as_str()
                .unwrap()
                .contains("counted branch node 0")
    });
    assert!(hit, "{}", problems(&v));
}

#[test]
fn truncated_file_is_found_without_crashing() {
    let Some((_t, p)) = fixture_copy("v2/counted.mdb") else {
        return;
    };
    let len = std::fs::metadata(&p).unwrap().len();
    for keep in [len / 2, 3 * PS as u64 / 2, 1000, 0] {
        let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        f.set_len(keep).unwrap();
        drop(f);
        let (code, v, out) = check(&p, &[]);
        assert_eq!(
            code,
            Some(1),
            "keep {keep}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(v["problems_total"].as_u64().unwrap() > 0);
    }
}

#[test]
fn page_both_free_and_used_is_found() {
    let Some((_t, p)) = fixture_copy("v2/plain.mdb") else {
        return;
    };
    let mut used = 0;
    patch(&p, |b| {
        let m = cur_meta(b);
        let free_root = u64_at(b, m + 40 + 40) as usize;
        used = u64_at(b, m + 88 + 40) as usize; // main DB root: certainly in use
        let base = free_root * PS;
        assert_eq!(
            u16_at(b, base + 10) & 0x02,
            0x02,
            "free DB root should be a leaf here"
        );
        let node = base + u16_at(b, base + 16);
        assert_eq!(u16_at(b, node + 4), 0, "inline free-list record expected");
        let ks = u16_at(b, node + 6);
        let data = node + 8 + ((ks + 1) & !1);
        // [n, p1, ...]: make p1 the main root (keeps the list descending if
        // it is larger than p2; the checker reports order problems anyway).
        b[data + 8..data + 16].copy_from_slice(&(used as u64).to_le_bytes());
    });
    let (code, v, _) = check(&p, &[]);
    assert_eq!(code, Some(1));
    let hit =
        v["problems"].as_array().unwrap().iter().any(|x| {
            x["page"] == used as u64 && x["message"].as_str().unwrap().contains("free list")
        });
    assert!(hit, "{}", problems(&v));
}

#[test]
fn garbage_files_give_problems_or_errors_never_crashes() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("junk.mdb");
    let junk: Vec<u8> = (0..5 * PS as u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&f, &junk).unwrap();
    let (code, _, _) = check(&f, &[]);
    assert_eq!(code, Some(1));
    let (code, _, _) = check(&tmp.path().join("missing.mdb"), &[]);
    assert_eq!(code, Some(2));
    // Random damage anywhere in a real store: must terminate with 0 or 1.
    let Some((_t, p)) = fixture_copy("v2/dupsort.mdb") else {
        return;
    };
    let orig = std::fs::read(&p).unwrap();
    let mut seed = 99u64;
    for _ in 0..40 {
        let mut b = orig.clone();
        for _ in 0..8 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let at = (seed >> 16) as usize % (b.len() - 2 * PS) + 2 * PS;
            b[at] = (seed >> 8) as u8;
        }
        std::fs::write(&p, &b).unwrap();
        let (code, _, out) = check(&p, &[]);
        assert!(
            matches!(code, Some(0) | Some(1)),
            "crash/odd exit {code:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
