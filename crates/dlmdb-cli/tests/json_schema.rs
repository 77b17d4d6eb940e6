//! Every command's `--json` output, and the JSON errors, validated against
//! the JSON Schema files in `schemas/` (the `jsonschema` crate, Draft 2020-12).

mod common;

use common::{bin, database, dlmdb, fixture_dir, fixtures, run_ok, validate_json};

fn stdout_ok(args: &[&str]) -> Vec<u8> {
    run_ok(bin().args(args)).stdout
}

#[test]
fn schema_validator_rejects_a_wrong_document() {
    // The validator must be able to fail: a stat report without `txnid`.
    let doc = br#"{"schema_version":1,"command":"stat","path":"x"}"#;
    let r = std::panic::catch_unwind(|| validate_json("stat", doc));
    assert!(r.is_err(), "an incomplete stat report passed validation");
}

#[test]
fn every_command_output_matches_its_schema() {
    let Some(fx) = fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let counted = fixture_dir("v2/counted.mdb", t, "counted").unwrap();
    let prefix = fixture_dir("v2/prefix.mdb", t, "prefix").unwrap();
    let dups = fixture_dir("v2/dupsort.mdb", t, "dups").unwrap();
    let stock = fixture_dir("stock.mdb", t, "stock").unwrap();
    let p = |d: &std::path::Path| d.to_str().unwrap().to_string();
    for store in [&counted, &prefix, &dups, &stock] {
        let s = p(store);
        validate_json(
            "stat",
            &stdout_ok(&["stat", "--json", "-e", "-fff", "-r", "-a", "--pages", &s]),
        );
        validate_json("check", &stdout_ok(&["check", "--json", &s]));
    }
    validate_json("stat", &stdout_ok(&["stat", "--json", "-rr", &p(&stock)]));
    // Walk verdicts and compression figures are present where they apply.
    let v: serde_json::Value = serde_json::from_slice(&stdout_ok(&[
        "stat",
        "--json",
        "-a",
        "--pages",
        &p(&prefix),
    ]))
    .unwrap();
    let pc = database(&v, "prefix_dups");
    assert_eq!(pc["walk"]["verdict"], "ok");
    let c = &pc["walk"]["compression"];
    assert!(c["logical_key_bytes"].as_u64().unwrap() > c["stored_key_bytes"].as_u64().unwrap());
    let v: serde_json::Value =
        serde_json::from_slice(&stdout_ok(&["stat", "--json", "-a", "--pages", &p(&dups)]))
            .unwrap();
    for d in v["databases"].as_array().unwrap() {
        assert_eq!(d["walk"]["verdict"], "ok", "{d}");
        assert!(!d["walk"]["levels"].as_array().unwrap().is_empty());
    }

    let out = dlmdb(&[
        "dump",
        "--json",
        "-a",
        "-o",
        &format!("{}/d.txt", p(t)),
        &p(&dups),
    ]);
    assert!(out.status.success());
    validate_json("dump", &out.stderr);
    let dump_file = fx.join("v2/dupsort.dump.txt");
    let first_key = stdout_ok(&[
        "scan",
        "-s",
        "accounts",
        "--limit",
        "1",
        "--keys-only",
        &p(&stock),
    ]);
    let first_key = String::from_utf8(first_key).unwrap();
    let (dups, counted, stock) = (p(&dups), p(&counted), p(&stock));
    let (loaded, copy, copyc) = (
        format!("{}/loaded", p(t)),
        format!("{}/copy", p(t)),
        format!("{}/copyc", p(t)),
    );
    // In this order: the drop changes the stock store last.
    let cases: [(&str, &[&str]); 9] = [
        (
            "load",
            &["load", "--json", "-f", dump_file.to_str().unwrap(), &loaded],
        ),
        ("copy", &["copy", "--json", &dups, &copy]),
        ("copy", &["copy", "-c", "--json", &dups, &copyc]),
        ("count", &["count", "--json", "-s", "counted", &counted]),
        (
            "rank",
            &["rank", "--json", "-s", "counted", "--rank", "3", &counted],
        ),
        (
            "get",
            &[
                "get",
                "--json",
                "-s",
                "accounts",
                &stock,
                first_key.trim_end(),
            ],
        ),
        (
            "scan",
            &[
                "scan",
                "--json",
                "-s",
                "counted",
                "--from-rank",
                "10",
                "--limit",
                "3",
                &counted,
            ],
        ),
        (
            "scan",
            &[
                "scan",
                "--json",
                "-s",
                "accounts",
                "--keys-only",
                "--reverse",
                "--limit",
                "2",
                &stock,
            ],
        ),
        ("drop", &["drop", "--json", "--yes", "-s", "tags", &stock]),
    ];
    for (schema, args) in cases {
        validate_json(schema, &stdout_ok(args));
    }
}

#[test]
fn errors_are_json_on_stderr_with_the_usual_exit_status() {
    let Some(_) = fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let text = t.join("text.txt");
    std::fs::write(&text, "just some words\n".repeat(100)).unwrap();
    let stock = fixture_dir("stock.mdb", t, "stock").unwrap();
    let (text, stock) = (text.to_str().unwrap(), stock.to_str().unwrap());
    let missing = format!("{}/missing", t.display());
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["stat", "--json", text], 1, "not_a_store"),
        (vec!["dump", "--json", text], 1, "not_a_store"),
        (vec!["check", "--json", &missing], 2, "not_found"),
        (
            vec!["stat", "--json", "-s", "nosuch", stock],
            1,
            "not_found",
        ),
        (
            vec!["get", "--json", "-s", "accounts", stock, "no-such-key"],
            1,
            "not_found",
        ),
        (
            vec!["count", "--json", "-s", "nosuch", stock],
            1,
            "not_found",
        ),
        (
            vec![
                "rank",
                "--json",
                "-s",
                "accounts",
                "--key",
                "no-such-key",
                stock,
            ],
            1,
            "not_found",
        ),
        (
            vec![
                "rank", "--json", "-s", "accounts", "--hex", "--key", "zz", stock,
            ],
            2,
            "usage",
        ),
        (vec!["scan", "--json", "--bogus-flag", stock], 2, "usage"),
        (
            vec!["drop", "--json", "--delete", "--yes", stock],
            1,
            "refused",
        ),
    ];
    for (args, status, kind) in cases {
        let out = dlmdb(&args);
        assert_eq!(out.status.code(), Some(status), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        validate_json("error", &out.stderr);
        let v: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
        assert_eq!(v["error"]["kind"], kind, "{args:?}: {v}");
    }
    let out = dlmdb(&["stat", "--json", "-s", "nosuch", stock]);
    let v: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(v["error"]["database"], "nosuch");
    assert_eq!(v["error"]["path"], stock);
    assert_eq!(v["error"]["code"], -30798);
}
