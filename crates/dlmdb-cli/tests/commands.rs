//! End-to-end tests of `dlmdb dump`, `load`, `copy`, `count`, `rank` on
//! the reference fixtures, and interop with Debian's lmdb-utils.

mod common;

use common::{bin, check_clean, database, fixture_copy, fixtures, run_ok, succeeded};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run")
}

/// A copy of fixture `data` and the text of the fixture file `text`;
/// `None` (skipped) where the fixtures are missing.
fn fixture_and_text(data: &str, text: &str) -> Option<(tempfile::TempDir, PathBuf, String)> {
    let (t, f) = fixture_copy(data)?;
    let text = std::fs::read_to_string(fixtures()?.join(text)).unwrap();
    Some((t, f, text))
}

fn ok(cmd: &mut Command) -> Vec<u8> {
    run_ok(cmd).stdout
}

/// Run `cmd` with `input` on its stdin; assert it succeeds (`what` names it).
fn ok_with_input(cmd: &mut Command, input: &[u8], what: &str) {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Replace temp paths so snapshots are stable.
fn redact(s: &str, tmp: &Path) -> String {
    s.replace(&tmp.display().to_string(), "[TMP]")
}

fn have_lmdb_utils() -> bool {
    let found = Command::new("mdb_dump")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !found {
        eprintln!(
            "SKIP (LOUD): Debian lmdb-utils (mdb_dump/mdb_load) not installed; interop not tested"
        );
    }
    found
}

/// Insert `name=1` lines before `db_pagesize=` of the databases listed.
fn with_extra_lines(dump: &str, extra: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut current: Option<String> = None;
    for line in dump.split_inclusive('\n') {
        if let Some(n) = line.strip_prefix("database=") {
            current = Some(n.trim_end().to_string());
        }
        if line.starts_with("db_pagesize=") {
            for (db, word) in extra {
                if current.as_deref() == Some(*db) {
                    out.push_str(word);
                    out.push_str("=1\n");
                }
            }
        }
        out.push_str(line);
    }
    out
}

#[test]
fn dump_matches_reference_dumps_of_every_fixture() {
    let Some(fx) = fixtures() else { return };
    // (data file, reference, args); prefix.mdb needs the engine's prefix
    // reading (dump of it is checked separately below).
    let all: &[&str] = &["-a", "--stock"];
    let mut cases: Vec<(String, String, &[&str])> = Vec::new();
    // The same fixtures in the first data version and in v2/.
    for v in ["", "v2/"] {
        for name in ["plain", "counted", "dupsort"] {
            cases.push((format!("{v}{name}.mdb"), format!("{v}{name}.dump.txt"), all));
        }
        for (name, dump, args) in [
            ("plain", "main-dump", &[][..]),
            ("counted", "main-dump", &[]),
            ("dupsort", "main-dump", &[]),
            ("prefix", "main-dump", &[]),
            ("main_only", "dump", &[]),
            ("main_only", "dump-p", &["-p"]),
        ] {
            cases.push((
                format!("{v}{name}.mdb"),
                format!("{v}{name}.{dump}.txt"),
                args,
            ));
        }
    }
    for (data, reference, args) in [
        ("stock.mdb", "stock.dump.txt", &["-a"][..]),
        ("stock.mdb", "stock.main-dump.txt", &[]),
        ("layout_dlmdb.mdb", "layout_dlmdb.dump-p.txt", &["-a", "-p"]),
        ("layout_stock.mdb", "layout_stock.dump-p.txt", &["-a", "-p"]),
    ] {
        cases.push((data.into(), reference.into(), args));
    }
    assert_eq!(cases.len(), 22);
    let mut failures = Vec::new();
    for (data, reference, args) in cases {
        let Some((_t, f)) = fixture_copy(&data) else {
            continue;
        };
        let want = std::fs::read(fx.join(&reference)).unwrap();
        let out = run(bin().arg("dump").args(args).arg(&f));
        if !out.status.success() || out.stdout != want {
            failures.push(format!(
                "{data} {args:?} vs {reference}: exit {:?}, {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "dump mismatches:\n{}",
        failures.join("\n")
    );
}

#[test]
fn dump_prefix_fixture_named_databases() {
    let Some((_t, f, want)) = fixture_and_text("prefix.mdb", "prefix.dump.txt") else {
        return;
    };
    let got = ok(bin().args(["dump", "-a", "--stock"]).arg(&f));
    assert!(String::from_utf8(got).unwrap() == want);
}

#[test]
fn dump_adds_dlmdb_flag_lines_that_load_restores() {
    let Some((t, f, reference)) = fixture_and_text("v2/counted.mdb", "v2/counted.dump.txt") else {
        return;
    };
    let got = String::from_utf8(ok(bin().args(["dump", "-a"]).arg(&f))).unwrap();
    let want = with_extra_lines(
        &reference,
        &[
            ("counted", "counted"),
            ("counted_dupfixed", "counted"),
            ("counted_dups", "counted"),
            ("counted_int", "counted"),
        ],
    );
    assert!(got == want, "extra header lines not as documented");
    // Lossless: load it, dump again, same text; the flags are back.
    let dump_file = t.path().join("d.txt");
    std::fs::write(&dump_file, &got).unwrap();
    let target = t.path().join("restored");
    ok(bin()
        .args(["load", "-q", "-f"])
        .arg(&dump_file)
        .arg(&target));
    let again = String::from_utf8(ok(bin().args(["dump", "-a"]).arg(&target))).unwrap();
    // mapsize may differ (the loader sizes the map); compare the rest.
    let strip = |s: &str| -> String {
        s.lines()
            .filter(|l| !l.starts_with("mapsize="))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        strip(&again) == strip(&got),
        "dump -> load -> dump is not lossless"
    );
    let stat = String::from_utf8(ok(bin().args(["stat", "--json", "-a"]).arg(&target))).unwrap();
    let v: serde_json::Value = serde_json::from_str(&stat).unwrap();
    let counted = database(&v, "counted");
    assert!(counted["flags"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "counted"));
    assert_eq!(counted["counted_entries"], 2467);
    // And the restored store is sound.
    check_clean(&target);
}

#[test]
fn interop_with_debian_mdb_dump_byte_for_byte() {
    if !have_lmdb_utils() {
        return;
    }
    let Some(fx) = fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    // (a) a store written by stock LMDB: mdb_load of the stock fixture dump.
    let stock = tmp.path().join("stock");
    std::fs::create_dir(&stock).unwrap();
    let out = run(Command::new("mdb_load")
        .arg("-f")
        .arg(fx.join("stock.dump.txt"))
        .arg(&stock));
    assert!(
        out.status.success(),
        "mdb_load: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // (b) stores written by our engine in stock format.
    let ours = tmp.path().join("ours");
    ok(bin()
        .args(["load", "-q", "--format", "lmdb", "-f"])
        .arg(fx.join("plain.dump.txt"))
        .arg(&ours));
    let ours_dup = tmp.path().join("ours_dup");
    ok(bin()
        .args(["load", "-q", "--format", "lmdb", "-f"])
        .arg(fx.join("dupsort.dump.txt"))
        .arg(&ours_dup));
    for store in [&stock, &ours, &ours_dup] {
        for args in [&["-a"][..], &[][..], &["-a", "-p"][..]] {
            let theirs = ok(Command::new("mdb_dump").args(args).arg(store));
            let mut mine_cmd = bin();
            mine_cmd.arg("dump").args(args);
            if args.contains(&"-p") {
                mine_cmd.arg("--legacy-print"); // 0.9.24 does not double backslashes
            }
            let mine = ok(mine_cmd.arg(store));
            assert!(
                theirs == mine,
                "dlmdb dump {args:?} differs from mdb_dump on {}",
                store.display()
            );
        }
    }
    // Our engine's store in stock format has the fixture's content exactly
    // (mapsize aside: the loader sizes the map).
    let d = String::from_utf8(ok(Command::new("mdb_dump").arg("-a").arg(&ours))).unwrap();
    let want = std::fs::read_to_string(fx.join("plain.dump.txt")).unwrap();
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("mapsize="))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(strip(&d) == strip(&want));
}

#[test]
fn interop_round_trips_with_mdb_load_and_mdb_dump() {
    if !have_lmdb_utils() {
        return;
    }
    if fixtures().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let strip = |s: &[u8]| {
        String::from_utf8_lossy(s)
            .lines()
            .filter(|l| !l.starts_with("mapsize="))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    for fixture in ["v2/dupsort.mdb", "v2/counted.mdb", "stock.mdb", "plain.mdb"] {
        let Some((_t, f)) = fixture_copy(fixture) else {
            continue;
        };
        // dlmdb dump | mdb_load  (extra header lines must be tolerated)
        let dump = ok(bin().args(["dump", "-a"]).arg(&f));
        let stock_dir = tmp
            .path()
            .join(format!("stock-{}", fixture.replace('/', "_")));
        std::fs::create_dir(&stock_dir).unwrap();
        ok_with_input(
            Command::new("mdb_load").arg(&stock_dir),
            &dump,
            &format!("mdb_load of dlmdb dump ({fixture})"),
        );
        let back = ok(Command::new("mdb_dump").arg("-a").arg(&stock_dir));
        let stock_view = ok(bin().args(["dump", "-a", "--stock"]).arg(&f));
        assert_eq!(
            strip(&back),
            strip(&stock_view),
            "dlmdb dump | mdb_load lost data ({fixture})"
        );
        // mdb_dump | dlmdb load (stock store -> our default v2 store)
        let theirs = ok(Command::new("mdb_dump").arg("-a").arg(&stock_dir));
        let ours_dir = tmp
            .path()
            .join(format!("ours-{}", fixture.replace('/', "_")));
        ok_with_input(
            bin().args(["load", "-q"]).arg(&ours_dir),
            &theirs,
            &format!("dlmdb load of mdb_dump ({fixture})"),
        );
        let again = ok(bin().args(["dump", "-a"]).arg(&ours_dir));
        assert_eq!(
            strip(&again),
            strip(&theirs),
            "mdb_dump | dlmdb load lost data ({fixture})"
        );
    }
}

/// Malformed inputs: line-numbered error, non-zero exit, target unchanged.
#[test]
fn malformed_dumps_leave_the_target_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("db");
    let good = "VERSION=3\nformat=bytevalue\ndatabase=x\ntype=btree\nmapsize=1048576\nmaxreaders=126\ndb_pagesize=4096\nHEADER=END\n 61\n 31\n 62\n 32\nDATA=END\n";
    let input = tmp.path().join("in.txt");
    std::fs::write(&input, good).unwrap();
    ok(bin().args(["load", "-q", "-f"]).arg(&input).arg(&target));
    let data = target.join("data.mdb");
    let before = std::fs::read(&data).unwrap();
    let head = "VERSION=3\nformat=bytevalue\ndatabase=x\ntype=btree\nHEADER=END\n";
    let cases = [
        (
            "bad hex",
            format!("{head} 7a\n 3g\nDATA=END\n"),
            "line 7",
            "invalid hex digit",
        ),
        (
            "odd length",
            format!("{head} 7a\n 333\nDATA=END\n"),
            "line 7",
            "odd number",
        ),
        (
            "missing HEADER=END",
            "VERSION=3\nformat=bytevalue\ndatabase=x\n 7a\n 33\nDATA=END\n".to_string(),
            "line 4",
            "before HEADER=END",
        ),
        (
            "unknown header key",
            format!("VERSION=3\nfrobnicate=1\n{}", &head[10..]),
            "line 2",
            "unknown header keyword",
        ),
        (
            "truncated data",
            format!("{head} 7a\n 33\n 7b\n"),
            "line 8",
            "without a value",
        ),
        (
            "truncated before DATA=END",
            format!("{head} 7a\n 33\n"),
            "line 7",
            "before DATA=END",
        ),
        (
            "duplicate key",
            format!("{head} 7a\n 33\n 7a\n 34\nDATA=END\n"),
            "line 8",
            "duplicate key",
        ),
        (
            // Valid input, but the database exists with other flags: the
            // write transaction is abandoned before anything is stored.
            "flags conflict",
            "VERSION=3\nformat=bytevalue\ndatabase=x\ntype=btree\ndupsort=1\nHEADER=END\n 7a\n 33\nDATA=END\n".to_string(),
            "input line 1",
            "flags differ",
        ),
    ];
    for (what, text, line, msg) in cases {
        std::fs::write(&input, &text).unwrap();
        let out = run(bin().args(["load", "-q", "-f"]).arg(&input).arg(&target));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{what}: accepted");
        assert!(
            err.contains(line) && err.contains(msg),
            "{what}: message {err:?}"
        );
        assert_eq!(
            std::fs::read(&data).unwrap(),
            before,
            "{what}: target changed"
        );
    }
    // A malformed input never creates a new store either.
    std::fs::write(&input, format!("{head} 7a\n")).unwrap();
    let fresh = tmp.path().join("fresh");
    let out = run(bin().args(["load", "-q", "-f"]).arg(&input).arg(&fresh));
    assert_ne!(out.status.code(), Some(0));
    assert!(!fresh.exists());
    // The unknown keyword is accepted with --skip-unknown (like stock, a warning).
    std::fs::write(
        &input,
        format!(
            "VERSION=3\nfrobnicate=1\n{} 7a\n 33\nDATA=END\n",
            &head[10..]
        ),
    )
    .unwrap();
    let out = run(bin()
        .args(["load", "-q", "--skip-unknown", "-f"])
        .arg(&input)
        .arg(&target));
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("line 2: unrecognized keyword ignored: frobnicate"));
}

#[test]
fn load_plain_text_and_no_overwrite() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("db");
    let input = tmp.path().join("in.txt");
    std::fs::write(&input, "b\nvalue b\na\nvalue \\5c a\n").unwrap();
    ok(bin()
        .args(["load", "-q", "-T", "-s", "t", "-f"])
        .arg(&input)
        .arg(&target));
    let d = String::from_utf8(ok(bin().args(["dump", "-p", "-s", "t"]).arg(&target))).unwrap();
    assert!(
        d.ends_with("HEADER=END\n a\n value \\\\ a\n b\n value b\nDATA=END\n"),
        "{d}"
    );
    // -N keeps the existing value and counts the skip.
    std::fs::write(&input, "a\nnew\nc\nvalue c\n").unwrap();
    let j = ok(bin()
        .args(["load", "--json", "-N", "-T", "-s", "t", "-f"])
        .arg(&input)
        .arg(&target));
    let v: serde_json::Value = serde_json::from_slice(&j).unwrap();
    assert_eq!(v["databases"][0]["skipped"], 1);
    assert_eq!(v["databases"][0]["written"], 1);
    let d = String::from_utf8(ok(bin().args(["dump", "-p", "-s", "t"]).arg(&target))).unwrap();
    assert!(d.contains(" a\n value \\\\ a\n") && d.contains(" c\n value c\n"));
}

#[test]
fn copy_plain_and_compact() {
    let Some((t, f)) = fixture_copy("v2/plain.mdb") else {
        return;
    };
    let plain = t.path().join("copy.mdb");
    let compact = t.path().join("compact.mdb");
    ok(bin().arg("copy").arg(&f).arg(&plain));
    let j = ok(bin()
        .args(["copy", "--compact", "--json"])
        .arg(&f)
        .arg(&compact));
    let v: serde_json::Value = serde_json::from_slice(&j).unwrap();
    assert_eq!(v["compact"], true);
    let orig = ok(bin().args(["dump", "-a"]).arg(&f));
    for c in [&plain, &compact] {
        assert_eq!(ok(bin().args(["dump", "-a"]).arg(c)), orig);
        check_clean(c);
    }
    assert!(std::fs::metadata(&compact).unwrap().len() < std::fs::metadata(&plain).unwrap().len());
    // Refuses to overwrite.
    assert_ne!(
        run(bin().arg("copy").arg(&f).arg(&plain)).status.code(),
        Some(0)
    );
}

#[test]
fn count_and_rank_snapshots() {
    let Some((t, f)) = fixture_copy("v2/counted.mdb") else {
        return;
    };
    let mut all = String::new();
    let cases: &[&[&str]] = &[
        &["count", "-s", "counted"],
        &[
            "count",
            "-s",
            "counted",
            "--from",
            "tenant-00/collection-alpha   /document-00008",
            "--to",
            "tenant-01",
            "--json",
        ],
        &["count", "-s", "counted_dups", "--keys"],
        &["count", "-s", "counted_dups", "--json"],
        &[
            "count",
            "-s",
            "counted_int",
            "--hex",
            "--from",
            "b4c3000000000000",
            "--include-to",
            "--to",
            "dd35040000000000",
        ],
        &["rank", "-s", "counted", "--rank", "5"],
        &["rank", "-s", "counted", "--rank", "0", "--json"],
        &["rank", "-s", "counted_dups", "--rank", "100", "--hex"],
    ];
    for args in cases {
        let out = run(bin().args(&args[..1]).arg(&f).args(&args[1..]));
        all.push_str(&format!(
            "$ dlmdb {}\nexit {:?}\n{}{}\n",
            args.join(" "),
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    insta::assert_snapshot!("count_rank_v2_counted", redact(&all, t.path()));
}

#[test]
fn count_and_rank_agree_with_a_scan_and_fixture_facts() {
    let Some(fx) = fixtures() else { return };
    let Some((t, f)) = fixture_copy("v2/counted.mdb") else {
        return;
    };
    // A non-counted copy of the same data: load the dump without the flags.
    let dump = ok(bin().args(["dump", "-a", "--stock"]).arg(&f));
    let d = t.path().join("plain.txt");
    std::fs::write(&d, &dump).unwrap();
    let plain = t.path().join("plain");
    ok(bin().args(["load", "-q", "-f"]).arg(&d).arg(&plain));
    let expect: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fx.join("v2/counted.expect.json")).unwrap()).unwrap();
    for db in ["counted", "counted_dups", "counted_dupfixed", "counted_int"] {
        let total = expect["dbs"][db]["count_all"]["value"].as_u64();
        for keys in [false, true] {
            let mut a = bin();
            a.arg("count").arg(&f).args(["-s", db, "--json"]);
            let mut b = bin();
            b.arg("count").arg(&plain).args(["-s", db, "--json"]);
            if keys {
                a.arg("--keys");
                b.arg("--keys");
            }
            let va: serde_json::Value = serde_json::from_slice(&ok(&mut a)).unwrap();
            let vb: serde_json::Value = serde_json::from_slice(&ok(&mut b)).unwrap();
            assert_eq!(va["method"], "counted");
            assert_eq!(vb["method"], "scan");
            assert_eq!(va["count"], vb["count"], "{db} keys={keys}");
            if !keys {
                if let Some(t) = total {
                    assert_eq!(va["count"].as_u64(), Some(t), "{db}");
                }
            }
        }
        for r in [0u64, 7, 1000] {
            let rank = r.to_string();
            let args = ["-s", db, "--hex", "--json", "--rank", &rank];
            let a = run(bin().arg("rank").arg(&f).args(args));
            let b = run(bin().arg("rank").arg(&plain).args(args));
            assert_eq!(a.status.code(), b.status.code());
            if !a.status.success() {
                continue;
            }
            let va: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
            let vb: serde_json::Value = serde_json::from_slice(&b.stdout).unwrap();
            assert_eq!(va["key_hex"], vb["key_hex"]);
            assert_eq!(va["value_hex"], vb["value_hex"]);
            // And back: rank of that pair.
            let k = va["key_hex"].as_str().unwrap();
            let v = va["value_hex"].as_str().unwrap();
            let back = ok(bin()
                .arg("rank")
                .arg(&f)
                .args(["-s", db, "--hex", "--json", "--key", k, "--value", v]));
            let vr: serde_json::Value = serde_json::from_slice(&back).unwrap();
            assert_eq!(vr["rank"], r, "{db}");
        }
    }
}

#[test]
fn dump_errors_name_path_and_database() {
    let Some((_t, f)) = fixture_copy("v2/plain.mdb") else {
        return;
    };
    let out = run(bin().args(["dump", "-s", "no-such-db"]).arg(&f));
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("no-such-db") && e.contains("MDB_NOTFOUND") && e.contains("plain.mdb"),
        "{e}"
    );
    // Stock rules for -a: keys but no databases -> nothing, exit 0; no keys -> error.
    let Some((_t2, m)) = fixture_copy("v2/main_only.mdb") else {
        return;
    };
    let out = run(bin().args(["dump", "-a"]).arg(&m));
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let empty = _t2.path().join("empty");
    drop(
        dlmdb::Env::builder()
            .open(&{
                std::fs::create_dir(&empty).unwrap();
                empty.clone()
            })
            .unwrap(),
    );
    let out = run(bin().args(["dump", "-a"]).arg(&empty));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not contain multiple databases"));
}

#[test]
fn help_has_examples_for_every_command() {
    for c in [
        "stat", "dump", "load", "copy", "count", "rank", "check", "get", "scan", "drop",
    ] {
        let out = ok(bin().args([c, "--help"]));
        let s = String::from_utf8_lossy(&out);
        assert!(s.contains("Examples:"), "{c} --help lacks examples");
    }
    let s = String::from_utf8(ok(bin().args(["check", "--help"]))).unwrap();
    assert!(s.contains("0 clean, 1 problems found, 2 library/system/usage error, 130 interrupted"));
}

#[test]
fn load_copy_dump_json_snapshots() {
    let Some(fx) = fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("restored");
    let mut all = String::new();
    let load = ok(bin()
        .args(["load", "--json", "-f"])
        .arg(fx.join("v2/dupsort.dump.txt"))
        .arg(&target));
    all.push_str(&format!(
        "$ dlmdb load --json -f v2/dupsort.dump.txt [TMP]/restored\n{}\n",
        String::from_utf8_lossy(&load)
    ));
    let dump = run(bin()
        .args(["dump", "-a", "--json", "-o"])
        .arg(tmp.path().join("d.txt"))
        .arg(&target));
    assert!(dump.status.success());
    all.push_str(&format!(
        "$ dlmdb dump -a --json -o [TMP]/d.txt [TMP]/restored (stderr)\n{}\n",
        String::from_utf8_lossy(&dump.stderr)
    ));
    let copy = ok(bin()
        .args(["copy", "--compact", "--json"])
        .arg(&target)
        .arg(tmp.path().join("c")));
    let mut v: serde_json::Value = serde_json::from_slice(&copy).unwrap();
    v["bytes"] = "[SIZE]".into(); // depends on the engine's page use
    all.push_str(&format!(
        "$ dlmdb copy --compact --json [TMP]/restored [TMP]/c\n{}\n",
        serde_json::to_string_pretty(&v).unwrap()
    ));
    insta::assert_snapshot!("load_dump_copy_json", redact(&all, tmp.path()));
    // The reloaded store dumps exactly like the fixture (mapsize aside).
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("mapsize="))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let want = std::fs::read_to_string(fx.join("v2/dupsort.dump.txt")).unwrap();
    let got = std::fs::read_to_string(tmp.path().join("d.txt")).unwrap();
    assert!(strip(&got) == strip(&want));
}

#[test]
fn prefix_and_counted_flags_survive_dump_and_load_and_stock_mdb_load_accepts_them() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("p.txt");
    let text = "VERSION=3\nformat=print\ndatabase=p\ntype=btree\ncounted=1\nprefix_compression=1\nHEADER=END\n apple\n 1\n apricot\n 2\n banana\n 3\nDATA=END\n";
    std::fs::write(&input, text).unwrap();
    let a = tmp.path().join("a");
    ok(bin().args(["load", "-q", "-f"]).arg(&input).arg(&a));
    let dump = String::from_utf8(ok(bin().args(["dump", "-a", "-p"]).arg(&a))).unwrap();
    let body = |s: &str| {
        s.lines()
            .filter(|l| {
                !l.starts_with("mapsize=")
                    && !l.starts_with("maxreaders=")
                    && !l.starts_with("db_pagesize=")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&dump), body(text));
    check_clean(&a);
    if !have_lmdb_utils() {
        return;
    }
    let d = tmp.path().join("d.txt");
    std::fs::write(&d, &dump).unwrap();
    let s = tmp.path().join("s");
    std::fs::create_dir(&s).unwrap();
    let out = run(Command::new("mdb_load").arg("-f").arg(&d).arg(&s));
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unrecognized keyword ignored: counted"),
        "{err}"
    );
    assert!(
        err.contains("unrecognized keyword ignored: prefix_compression"),
        "{err}"
    );
    let theirs =
        String::from_utf8(ok(Command::new("mdb_dump").args(["-a", "-p"]).arg(&s))).unwrap();
    assert!(theirs.ends_with("HEADER=END\n apple\n 1\n apricot\n 2\n banana\n 3\nDATA=END\n"));
}

/// Free-list records may be longer than their page count needs (the
/// committing txn reserves room first); `stat -f` must read them by the
/// count, as mdb_stat does. Three loads into one store leave such a record.
#[test]
fn stat_freelist_reads_records_with_spare_room() {
    let dir = tempfile::tempdir().unwrap();
    let env = dir.path().join("env");
    std::fs::create_dir(&env).unwrap();
    for (db, text) in [
        ("users", "k1\nv1\nk2\nv2\n"),
        ("users", "k1\nv1\nk2\nv2\n"),
        ("tags", "a\nb\n"),
    ] {
        ok_with_input(
            bin().args(["load", "-T", "-s", db]).arg(&env),
            text.as_bytes(),
            "load",
        );
    }
    let out = String::from_utf8(ok(bin().args(["stat", "-ff"]).arg(&env))).unwrap();
    assert!(out.contains("Free pages: 4"), "{out}");
    let js = ok(bin().args(["stat", "-f", "--json"]).arg(&env));
    let v: serde_json::Value = serde_json::from_slice(&js).unwrap();
    assert!(v.to_string().contains("records"), "{v}");
}

/// `dlmdb copy SRC -` (and with no destination) writes the data file to
/// standard output, like mdb_copy; the stream opens as the same store.
#[test]
fn copy_to_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let env = dir.path().join("env");
    std::fs::create_dir(&env).unwrap();
    let text: String = (0..300)
        .map(|i| format!("key{i:04}\nvalue {i}\n"))
        .collect();
    ok_with_input(
        bin().args(["load", "-T", "-s", "t"]).arg(&env),
        text.as_bytes(),
        "load",
    );
    let want = ok(bin().args(["dump", "-s", "t"]).arg(&env));
    for (args, name) in [(vec!["copy", "-c"], "a.mdb"), (vec!["copy"], "b.mdb")] {
        let mut cmd = bin();
        cmd.args(&args).arg(&env);
        if name == "a.mdb" {
            cmd.arg("-");
        }
        let data = ok(&mut cmd);
        let file = dir.path().join(name);
        std::fs::write(&file, &data).unwrap();
        let got = ok(bin().args(["dump", "-n", "-s", "t"]).arg(&file));
        assert_eq!(got, want, "{args:?}");
    }
    let out = run(bin().args(["copy", "--json"]).arg(&env).arg("-"));
    assert!(!out.status.success(), "--json with stdout must be refused");
}

/// `--json` of `dlmdb ARGS PATH`, which must succeed.
fn json_at(args: &[&str], path: &Path) -> serde_json::Value {
    serde_json::from_slice(&ok(bin().args(args).arg(path))).unwrap()
}

/// The last committed transaction as `stat -e` reports it.
fn last_txnid(path: &Path) -> serde_json::Value {
    json_at(&["stat", "--json", "-e"], path)["env"]["txnid"].clone()
}

#[test]
fn rank_of_a_key_shows_its_first_value() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("db");
    // The duplicates are given out of order: the first value of a DUPSORT
    // key is its smallest one, not the first one loaded.
    let mut dump = String::new();
    for (name, extra) in [("tags", ""), ("ctags", "counted=1\n")] {
        dump.push_str(&format!(
            "VERSION=3\nformat=print\ndatabase={name}\ntype=btree\ndupsort=1\n{extra}HEADER=END\n"
        ));
        for (k, v) in [("a", "x"), ("b", "q"), ("b", "m"), ("b", "z"), ("c", "y")] {
            dump.push_str(&format!(" {k}\n {v}\n"));
        }
        dump.push_str("DATA=END\n");
    }
    let out = common::load_input(bin(), dump, &["-q"], &store);
    assert!(out.status.success(), "{out:?}");
    for (db, method) in [("tags", "scan"), ("ctags", "counted")] {
        let r = json_at(&["rank", "--json", "-s", db, "--key", "b"], &store);
        assert_eq!(r["method"], method, "{db}: {r}");
        assert_eq!(r["rank"], 1, "{db}: {r}");
        assert_eq!(r["value"], "m", "{db}: {r}");
        assert_eq!(r["value_hex"], "6d", "{db}: {r}");
        // The same entry as the one at that rank.
        let at = json_at(&["rank", "--json", "-s", db, "--rank", "1"], &store);
        assert_eq!((&at["key"], &at["value"]), (&r["key"], &r["value"]), "{db}");
        // And a pair names its own value and rank.
        let pair = json_at(
            &["rank", "--json", "-s", db, "--key", "b", "--value", "z"],
            &store,
        );
        assert_eq!((&pair["rank"], &pair["value"]), (&3.into(), &"z".into()));
        let text = String::from_utf8(ok(bin()
            .arg("rank")
            .arg(&store)
            .args(["-s", db, "--key", "b"])))
        .unwrap();
        assert_eq!(text, "rank: 1\nkey: b\nvalue: m\n", "{db}");
    }
}

#[test]
fn load_json_txnid_is_the_last_committed_transaction() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("db");
    let load = |input: &str, args: &[&str], target: &Path| -> serde_json::Value {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let out = common::load_input(bin(), input, &a, target);
        serde_json::from_slice(&succeeded(out)).unwrap()
    };
    // A new store.
    let r = load("k\nv1\n", &["-T", "-s", "names"], &store);
    assert_eq!(r["created"], true);
    let first = last_txnid(&store);
    assert_eq!(r["txnid"], first, "{r}");
    // Something written: the new transaction.
    let r = load("k2\nv2\n", &["-T", "-N", "-s", "names"], &store);
    assert_eq!(r["databases"][0]["written"], 1, "{r}");
    assert_eq!(r["txnid"], first.as_u64().unwrap() + 1, "{r}");
    assert_eq!(r["txnid"], last_txnid(&store), "{r}");
    // Nothing written (the key exists, -N keeps it): no new commit.
    let r = load("k\nv3\n", &["-T", "-N", "-s", "names"], &store);
    assert_eq!(r["databases"][0]["written"], 0, "{r}");
    assert_eq!(r["databases"][0]["skipped"], 1, "{r}");
    assert_eq!(r["txnid"], first.as_u64().unwrap() + 1, "{r}");
    assert_eq!(r["txnid"], last_txnid(&store), "{r}");
    // A new store committed in steps whose last transaction only sees the
    // end of the input.
    let stepped = tmp.path().join("stepped");
    let r = load(
        "a\n1\nb\n2\nc\n3\n",
        &["-T", "--commit-bytes", "1"],
        &stepped,
    );
    assert_eq!(r["txnid"], last_txnid(&stepped), "{r}");
    assert_eq!(
        String::from_utf8(ok(bin().arg("count").arg(&stepped))).unwrap(),
        "3\n"
    );
}

#[test]
fn load_help_describes_the_streamed_load() {
    let s = String::from_utf8(ok(bin().args(["load", "--help"]))).unwrap();
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    for want in [
        "The input is streamed",
        "committed every 64 MiB of input and renamed into place after its last commit",
        "an existing store is loaded in one write transaction",
    ] {
        assert!(flat.contains(want), "load --help lacks {want:?}:\n{s}");
    }
    assert!(!flat.contains("validated first"), "{s}");
}

/// `-n` (MDB_NOSUBDIR) of mdb_stat, mdb_dump, mdb_copy and mdb_drop is
/// accepted: a data file path says the same.
#[test]
fn stock_tools_n_is_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src.mdb");
    let out = common::load_input(bin(), "k\nv\n", &["-q", "-T", "-n", "-s", "names"], &src);
    assert!(out.status.success(), "{out:?}");
    assert!(src.is_file());
    succeeded(run(bin().args(["stat", "-n"]).arg(&src)));
    succeeded(run(bin().args(["dump", "-n", "-a"]).arg(&src)));
    let dst = tmp.path().join("dst.mdb");
    succeeded(run(bin().args(["copy", "-n"]).arg(&src).arg(&dst)));
    let get =
        |path: &Path| String::from_utf8(ok(bin().arg("get").arg(path).args(["-s", "names", "k"])));
    assert_eq!(get(&dst).unwrap(), "v\n");
    // As `mdb_copy -c -n SRC`: a compacted data file on standard output.
    let piped = run(bin().args(["copy", "-c", "-n"]).arg(&src));
    assert!(piped.status.success(), "{piped:?}");
    let from_pipe = tmp.path().join("piped.mdb");
    std::fs::write(&from_pipe, &piped.stdout).unwrap();
    assert_eq!(get(&from_pipe).unwrap(), "v\n");
    succeeded(run(bin()
        .args(["drop", "-n", "-d", "-s", "names", "--yes"])
        .arg(&dst)));
    let gone = run(bin().arg("get").arg(&dst).args(["-s", "names", "k"]));
    assert_eq!(gone.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&gone.stderr)
        .contains("database \"names\": cannot open: MDB_NOTFOUND"));
}
