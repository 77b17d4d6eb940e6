//! The `dlmdb` binary end to end: argument parsing, exit codes, JSON output.

mod common;

use common::{assert_exit, bin, database, dlmdb_at, fixture_copy, run_ok};

#[test]
fn help_lists_subcommands() {
    let out = bin().arg("--help").output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("stat") && s.contains("bench"), "{s}");
}

#[test]
fn stat_missing_path_fails_cleanly() {
    let out = bin()
        .args(["stat", "/nonexistent/dlmdb/path"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nonexistent"));
}

#[test]
fn stat_random_bytes_is_an_error_not_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("junk.mdb");
    let junk: Vec<u8> = (0..3 * 4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&f, junk).unwrap();
    assert_exit(&bin().arg("stat").arg(&f).output().unwrap(), 1);
}

#[test]
fn stat_json_on_a_store_the_engine_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    {
        let env = dlmdb::Env::builder().max_dbs(2).open(tmp.path()).unwrap();
        let db = env
            .create_db(Some("abc"), dlmdb::DatabaseFlags::empty())
            .unwrap();
        let mut txn = env.write_txn().unwrap();
        for i in 0..100u32 {
            txn.put(
                db,
                format!("k{i}").as_bytes(),
                b"v",
                dlmdb::WriteFlags::empty(),
            )
            .unwrap();
        }
        txn.commit().unwrap();
    }
    let out = run_ok(
        bin()
            .arg("stat")
            .arg(tmp.path())
            .args(["-a", "-e", "-f", "--pages", "--json"]),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["layout"], "dlmdb-v2");
    assert_eq!(v["no_subdir"], false);
    let abc = database(&v, "abc");
    assert_eq!(abc["entries"], 100);
    assert_eq!(abc["walk"]["leaf_entries"], 100);
    assert_eq!(abc["walk"]["verdict"], "ok");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["command"], "stat");
}

#[test]
fn stat_text_on_stock_fixture() {
    let Some((_tmp, path)) = fixture_copy("stock.mdb") else {
        return;
    };
    let out = run_ok(bin().arg("stat").arg(&path).args(["-s", "accounts"]));
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.starts_with("Status of accounts\n"), "{s}");
    assert!(s.contains("  Entries: 1540\n"), "{s}");
}

#[test]
fn dump_into_a_closed_pipe_ends_quietly() {
    // A reader that goes away early (`dlmdb dump big | head`) must not make
    // the tool panic; it stops the way other Unix filters do.
    let Some((_tmp, f)) = fixture_copy("plain.dump.txt") else {
        return;
    };
    let store = f.with_extension("store");
    run_ok(bin().args(["load", "-n", "-f"]).arg(&f).arg(&store));
    let mut child = bin()
        .args(["dump", "-a", "-n"])
        .arg(&store)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The names of `.md` files in `text` (not `.mdb`).
fn md_names(text: &str) -> Vec<&str> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    text.match_indices(".md")
        .filter(|(i, _)| !text[i + 3..].starts_with(|c: char| c.is_ascii_alphanumeric()))
        .map(|(i, _)| {
            let start = text[..i].rfind(|c: char| !is_name(c)).map_or(0, |j| j + 1);
            &text[start..i + 3]
        })
        .filter(|n| *n != ".md")
        .collect()
}

/// README.md and the help of every command stand alone: every `.md` file
/// the README names is in the repository, and no help text cites a
/// document or a section (`§`) of one.
#[test]
fn readme_and_help_cite_only_what_the_repository_holds() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(!readme.contains('§'), "README.md cites a section sign");
    let crates: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|d| d.unwrap().path())
        .collect();
    // A bare file name may be at the root or in any crate.
    let missing: Vec<&str> = md_names(&readme)
        .into_iter()
        .filter(|n| {
            !(root.join(n).is_file()
                || (!n.contains('/') && crates.iter().any(|c| c.join(n).is_file())))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "README.md names missing files: {missing:?}"
    );
    assert!(!md_names("see lmdb-format.md, not data.mdb").contains(&"data.md"));
    assert_eq!(md_names("(`lmdb-format.md` §16)"), ["lmdb-format.md"]);
    for c in [
        "stat", "dump", "load", "copy", "count", "rank", "check", "get", "scan", "drop",
    ] {
        let out = run_ok(bin().args([c, "--help"]));
        let s = String::from_utf8_lossy(&out.stdout);
        assert!(
            !s.contains('§') && md_names(&s).is_empty(),
            "{c} --help: {s}"
        );
    }
}

#[test]
fn a_layout_the_file_contradicts_is_named_by_stat_and_check() {
    // Each fixture has odd-length database names, whose records only its
    // own layout reads where they are.
    for (rel, told, named) in [
        (
            "layout_dlmdb.mdb",
            "lmdb",
            "stock LMDB's node layout, given with --layout lmdb",
        ),
        (
            "layout_stock.mdb",
            "dlmdb",
            "DLMDB's padded node layout, given with --layout dlmdb",
        ),
    ] {
        let Some((_dir, path)) = fixture_copy(rel) else {
            return;
        };
        let stat = dlmdb_at(&["stat", "--layout", told], &path);
        assert_exit(&stat, 1);
        let err = String::from_utf8_lossy(&stat.stderr);
        assert!(
            err.contains(&format!("its pages contradict {named} (MDB_INCOMPATIBLE)"))
                && err.contains("--layout auto lets the engine decide"),
            "{rel}: {err}"
        );
        let check = dlmdb_at(&["check", "--layout", told], &path);
        assert_exit(&check, 1);
        let report = String::from_utf8_lossy(&check.stdout);
        let first = report.lines().find(|l| l.starts_with("PROBLEM"));
        assert_eq!(
            first.map(|l| l.starts_with(&format!(
                "PROBLEM [(meta)]: the engine refuses the store: its pages contradict {named}"
            ))),
            Some(true),
            "{rel}: {report}"
        );
        // Left to decide, the engine reads it, and check finds nothing.
        assert_exit(&bin().arg("check").arg(&path).output().unwrap(), 0);
    }
}
