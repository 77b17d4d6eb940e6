//! Damaged, truncated and not-a-store files: every command says what is
//! wrong in exactly one line on stderr that names the file (and the
//! database, when one is involved). Snapshots of stderr, temp paths
//! redacted to `[TMP]`.

mod common;

use common::{bin, fixture_dir, load_input};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// stderr of `dlmdb ARGS` for each case, one block per command line.
fn stderr_of(cases: &[Vec<&str>], tmp: &Path) -> String {
    let mut all = String::new();
    for args in cases {
        let out = bin().args(args).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_ne!(out.status.code(), Some(0), "{args:?} succeeded");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        let shown: Vec<String> = args
            .iter()
            .map(|a| a.replace(tmp.to_str().unwrap(), "[TMP]"))
            .collect();
        all.push_str(&format!(
            "$ dlmdb {} (exit {:?})\n{}",
            shown.join(" "),
            out.status.code(),
            err.replace(tmp.to_str().unwrap(), "[TMP]")
        ));
    }
    all
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// A directory store `name` copied from the fixture `rel` into a new
/// temporary directory, and its data file; `None` when the fixture is
/// missing.
fn fixture_store(rel: &str, name: &str) -> Option<(TempDir, PathBuf, PathBuf)> {
    let tmp = tempfile::tempdir().unwrap();
    let store = fixture_dir(rel, tmp.path(), name)?;
    let data = store.join("data.mdb");
    Some((tmp, store, data))
}

/// Cut the file at `path` to `pages` pages of 4096 bytes.
fn truncate_to_pages(path: &Path, pages: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(pages * 4096).unwrap();
}

#[test]
fn not_a_store_is_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let text = tmp.path().join("notes.txt");
    std::fs::write(&text, "this is a text file, not a store\n".repeat(200)).unwrap();
    let empty_dir = tmp.path().join("emptydir");
    std::fs::create_dir(&empty_dir).unwrap();
    let t = s(&text);
    let stderr = stderr_of(
        &[
            vec!["stat", &t],
            vec!["stat", "-a", "-e", &t],
            vec!["check", &t],
            vec!["dump", "-a", &t],
            vec!["get", &t, "k"],
            vec!["scan", &t],
            vec!["copy", &t, "/nonexistent/dst"],
            vec!["count", &t],
            vec!["stat", &s(&empty_dir)],
            vec!["stat", &s(&tmp.path().join("missing"))],
        ],
        tmp.path(),
    );
    insta::assert_snapshot!("not_a_store", stderr);
}

#[test]
fn truncated_file_is_one_line_and_checks_first_problem() {
    let Some((tmp, store, data)) = fixture_store("stock.mdb", "cut") else {
        return;
    };
    // One page short: the engine opens it, stat warns in one line.
    truncate_to_pages(&data, 99);
    let out = bin().arg("stat").arg(&store).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("dlmdb: warning: "), "{err}");
    assert!(err.contains("has 99 pages, fewer than the 100"), "{err}");
    truncate_to_pages(&data, 20);
    let st = s(&store);
    let stderr = stderr_of(
        &[
            vec!["stat", "-a", &st],
            vec!["stat", "--pages", &st],
            vec!["dump", "-a", &st],
            vec!["scan", "-s", "accounts", &st],
            vec!["copy", &st, &s(&tmp.path().join("c"))],
        ],
        tmp.path(),
    );
    insta::assert_snapshot!("truncated", stderr);
    assert!(!tmp.path().join("c").exists());
    // check: the truncation is the first problem, in one line.
    let out = bin()
        .args(["check", "--json"])
        .arg(&store)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["problems"][0]["message"],
        "data file truncated: it has 20 pages, the meta page (txnid 40) says the store uses 100"
    );
}

#[test]
fn damaged_page_names_file_and_database() {
    let Some((tmp, store, data)) = fixture_store("v2/plain.mdb", "bad") else {
        return;
    };
    let mut b = std::fs::read(&data).unwrap();
    // Page 234 is a leaf of database "big" in this fixture: point its
    // first node offset past the page.
    let off = 234 * 4096;
    assert_eq!(u16::from_le_bytes([b[off + 10], b[off + 11]]) & 0x03, 0x02);
    b[off + 16..off + 18].copy_from_slice(&0xfff0u16.to_le_bytes());
    std::fs::write(&data, &b).unwrap();
    let st = s(&store);
    let stderr = stderr_of(
        &[
            vec!["stat", "-a", "--pages", &st],
            vec!["dump", "-a", &st],
            vec!["scan", "-s", "big", &st],
        ],
        tmp.path(),
    );
    insta::assert_snapshot!("damaged", stderr);
}

/// A named database whose record lies beyond the entries the open checks
/// (a main database that holds data) is checked when a command opens it:
/// the store opens, and every command that opens that database fails in
/// one line naming it and the problem.
#[test]
fn bad_record_past_the_open_check_named_when_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("big");
    let mut dump = String::from("VERSION=3\nformat=print\ntype=btree\nHEADER=END\n");
    for i in 0..3000 {
        dump.push_str(&format!(" k{i:06}\n v{i:015}\n"));
    }
    dump.push_str("DATA=END\n");
    dump.push_str("VERSION=3\nformat=print\ndatabase=zlate!\ntype=btree\nHEADER=END\n");
    dump.push_str(" key\n value\nDATA=END\n");
    let input = tmp.path().join("in.txt");
    std::fs::write(&input, dump).unwrap();
    let out = bin()
        .args([
            "load",
            "-q",
            "--format",
            "lmdb",
            "-f",
            &s(&input),
            &s(&store),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // The record sits in the leaf node flagged F_SUBDATA (0x02) with a
    // 48-byte value and the 6-byte key; its leaf-page counter is at 16.
    let data = store.join("data.mdb");
    let mut b = std::fs::read(&data).unwrap();
    let mut needle = vec![48, 0, 0, 0, 2, 0, 6, 0];
    needle.extend_from_slice(b"zlate!");
    let at: Vec<usize> = b
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle.as_slice())
        .map(|(i, _)| i + needle.len() + 16)
        .collect();
    assert_eq!(at.len(), 1);
    b[at[0]..at[0] + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    std::fs::write(&data, &b).unwrap();

    let st = s(&store);
    let out = bin().args(["stat", &st]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = stderr_of(
        &[
            vec!["stat", "-s", "zlate!", &st],
            vec!["count", "-s", "zlate!", &st],
            vec!["scan", "-s", "zlate!", &st],
            vec!["stat", "-a", &st],
        ],
        tmp.path(),
    );
    for line in stderr.lines().filter(|l| l.starts_with("dlmdb:")) {
        assert!(
            line.contains("record of database \"zlate!\": page counters 0/1099511627776/0"),
            "{line}"
        );
        assert!(line.contains("(layout lmdb: "), "{line}");
    }
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("dlmdb:")).count(),
        4
    );
    let out = bin()
        .args(["stat", "--json", "-s", "zlate!", &st])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("\"kind\":\"corrupted\""), "{err}");
    assert!(err.contains("\"database\":\"zlate!\""), "{err}");
}

/// A database that does not exist, or a key or rank missing from one: every
/// command builds the same line (`PATH: database "NAME": ...`) and, with
/// `--json`, names the database in `database`.
#[test]
fn missing_database_is_named_alike_by_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("db");
    let out = common::load_input(bin(), "alice\n42\n", &["-q", "-T", "-s", "users"], &store);
    assert!(out.status.success(), "{out:?}");
    let st = s(&store);
    let missing: Vec<Vec<&str>> = vec![
        vec!["stat", "-s", "nosuch", &st],
        vec!["dump", "-s", "nosuch", &st],
        vec!["get", "-s", "nosuch", &st, "k"],
        vec!["scan", "-s", "nosuch", &st],
        vec!["count", "-s", "nosuch", &st],
        vec!["rank", "-s", "nosuch", "--rank", "0", &st],
        vec!["rank", "-s", "nosuch", "--key", "k", &st],
        vec!["drop", "-s", "nosuch", "--yes", &st],
    ];
    let absent: Vec<Vec<&str>> = vec![
        vec!["get", "-s", "users", &st, "bob"],
        vec!["rank", "-s", "users", "--key", "bob", &st],
        vec!["rank", "-s", "users", "--key", "alice", "--value", "7", &st],
        vec!["rank", "-s", "users", "--rank", "5", &st],
    ];
    let mut cases = missing.clone();
    cases.extend(absent.iter().cloned());
    insta::assert_snapshot!("missing_database", stderr_of(&cases, tmp.path()));
    for args in missing.iter().chain(&absent) {
        let out = bin().args(args).arg("--json").output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stderr)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let e = &v["error"];
        assert_eq!(e["kind"], "not_found", "{args:?}: {v}");
        assert_eq!(e["database"], args[2], "{args:?}: {v}");
        assert_eq!(e["database_main"], false, "{args:?}: {v}");
        assert!(
            !e["message"].as_str().unwrap().contains(args[2]),
            "{args:?}: {v}"
        );
        if missing.contains(args) {
            assert_eq!(
                e["message"], "cannot open: MDB_NOTFOUND: No matching key/data pair found",
                "{args:?}: {v}"
            );
            assert_eq!(e["code"], dlmdb::Error::NotFound.code(), "{args:?}: {v}");
        }
    }
}

/// The truncation test reads only the meta page: the roots and page totals
/// of the main and free-list trees. A file cut inside a named database's
/// pages passes it, so `stat` (which reads no page of that database, as
/// mdb_stat) warns and succeeds, while the commands that read the pages
/// fail on the first missing one; a file cut before the main tree's root
/// is refused by every command.
#[test]
fn cut_inside_a_named_database_fails_where_its_pages_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("big");
    let mut input = String::new();
    for i in 0..40_000 {
        input.push_str(&format!("k{i:08}\n{}\n", "v".repeat(80)));
    }
    let out = common::load_input(bin(), input, &["-q", "-T", "-s", "data"], &store);
    assert!(out.status.success(), "{out:?}");
    let st = s(&store);
    let stat: serde_json::Value = serde_json::from_slice(
        &bin()
            .args(["stat", "--json", "-e", &st])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let pages = stat["env"]["pages_used"].as_u64().unwrap();
    assert!(pages > 1000, "{stat}");
    let data = store.join("data.mdb");
    truncate_to_pages(&data, 900);
    for args in [
        vec!["stat", &st],
        vec!["stat", "-a", &st],
        vec!["stat", "-s", "data", &st],
    ] {
        let out = bin().args(&args).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            err.starts_with("dlmdb: warning: ")
                && err.contains(&format!("has 900 pages, fewer than the {pages}")),
            "{args:?}: {err}"
        );
    }
    let check = bin().args(["check", "--json", &st]).output().unwrap();
    assert_eq!(check.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    assert!(
        v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["message"]
                .as_str()
                .unwrap()
                .contains("beyond the end of the file")),
        "{v}"
    );
    for args in [
        vec!["dump", "-a", &st],
        vec!["scan", "-s", "data", &st],
        vec!["count", "-s", "data", &st],
        vec!["get", "-s", "data", &st, "k00039999"],
    ] {
        let out = bin().args(&args).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("database \"data\": ") && err.contains("MDB_PAGE_NOTFOUND"),
            "{args:?}: {err}"
        );
    }
    // The main tree's root (page 2 here: the load wrote it first) cut off.
    truncate_to_pages(&data, 2);
    for args in [
        vec!["stat", &st],
        vec!["dump", "-a", &st],
        vec!["count", "-s", "data", &st],
    ] {
        let out = bin().args(&args).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&format!("data file truncated: it has 2 pages, the meta page (txnid 1) says the store uses {pages}")),
            "{args:?}: {err}"
        );
    }
}

/// A write the engine refuses because the store is damaged (its newest meta
/// sits in the page the next commit would overwrite) is one line that
/// points to `check`, and the file is left as it was; `check` itself says
/// what is wrong instead.
#[test]
fn refused_write_points_to_check() {
    use dlmdb_format::meta::{parse_meta, OFF_TXNID};
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("s.mdb");
    let dump = |from: u32| {
        let mut d = String::from("VERSION=3\nformat=print\ntype=btree\nHEADER=END\n");
        for i in from..from + 50 {
            d.push_str(&format!(" k{i:04}\n v{i}\n"));
        }
        d + "DATA=END\n"
    };
    let out = load_input(bin(), dump(0), &["-q", "-n"], &store);
    assert!(out.status.success(), "{out:?}");
    let mut file = std::fs::read(&store).unwrap();
    let page_size = parse_meta(&file, 0).unwrap().page_size() as usize;
    let meta = |m: usize| parse_meta(&file[m * page_size..], m as u64).unwrap();
    let newest = usize::from(meta(1).txnid > meta(0).txnid);
    let id = meta(newest).txnid + 1;
    let at = newest * page_size + OFF_TXNID;
    file[at..at + 8].copy_from_slice(&id.to_le_bytes());
    std::fs::write(&store, &file).unwrap();

    let out = load_input(bin(), dump(50), &["-q", "-n"], &store);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("MDB_CORRUPTED"), "{err}");
    let advice = format!(
        "the store is damaged; `dlmdb check {}` says where",
        store.display()
    );
    assert!(err.contains(&advice), "{err}");
    assert_eq!(
        std::fs::read(&store).unwrap(),
        file,
        "the refused load changed the file"
    );

    let out = bin().arg("check").arg(&store).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap();
    assert!(report.contains("the engine refuses to write"), "{report}");
    assert!(!report.contains("says where"), "{report}");
}
