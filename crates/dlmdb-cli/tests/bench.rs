//! `dlmdb bench`: every suite runs at its quick sizes and its JSON report
//! validates against the schema in the repo; `bench compare` on crafted
//! reports gives the documented exit codes; the text of DLMDB's four
//! programs keeps their line formats (snapshots with the numbers masked);
//! usage errors exit 2. No timing is asserted: targets are measured claims,
//! not test conditions.

mod common;

use std::path::Path;
use std::process::Output;

use common::bin;
use dlmdb_bench::report::{Measure, Report, Row, TargetKind};

const SUITES: [&str; 7] = [
    "peers", "dups", "txns", "count", "sample", "compress", "dup-iter",
];

fn schema() -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dlmdb-bench/report.schema.json");
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn run(args: &[&str]) -> Output {
    bin().arg("bench").args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Numbers (with their sign) replaced by `#`, so the line formats can be
/// snapshotted.
fn mask(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_num = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let sign = c == '-' && !in_num && chars.peek().is_some_and(|n| n.is_ascii_digit());
        if sign || c.is_ascii_digit() || (in_num && c == '.') {
            if !in_num {
                out.push('#');
                in_num = true;
            }
        } else {
            in_num = false;
            out.push(c);
        }
    }
    out
}

#[test]
fn every_suite_quick_json_validates_against_the_schema() {
    let schema = schema();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let documented = readme_report_schema();
    for suite in SUITES {
        let o = run(&[suite, "--quick", "--json", "-q"]);
        assert_eq!(o.status.code(), Some(0), "{suite}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{suite}: not JSON: {e}\n{}", stdout(&o)));
        let errors: Vec<String> = validator
            .iter_errors(&v)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{suite}: {errors:#?}");
        let rep = Report::from_json(&stdout(&o)).unwrap();
        assert_eq!(rep.suite, suite);
        assert!(rep.quick, "{suite}");
        let mut names: Vec<&str> = rep.rows.iter().map(|r| r.name.as_str()).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "{suite}: row names are not unique");
        for r in &rep.rows {
            assert!(r.error.is_none(), "{suite}/{}: {:?}", r.name, r.error);
            assert!(r.value.is_some(), "{suite}/{}", r.name);
            assert!(
                documented.contains(&format!("`{}`", r.unit)),
                "{suite}/{}: unit {:?} is not in README.md's report schema",
                r.name,
                r.unit
            );
        }
    }
}

/// The "Report schema" section of README.md, where the row units are listed.
fn readme_report_schema() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(p).unwrap();
    let start = readme
        .find("### Report schema")
        .expect("README has the section");
    let rest = &readme[start..];
    let end = rest
        .find("**Noise.**")
        .expect("the section ends before the noise rules");
    rest[..end].to_string()
}

#[test]
fn a_crafted_report_breaks_the_schema() {
    let schema = schema();
    let mut rep = Report::new("peers", Measure::Wall, true, 1);
    rep.rows.push(Row::exact("a/size", "bytes", 1.0));
    let mut v = serde_json::to_value(&rep).unwrap();
    assert!(jsonschema::is_valid(&schema, &v));
    v["rows"][0]["unit"] = serde_json::Value::Null;
    assert!(!jsonschema::is_valid(&schema, &v));
}

fn write(dir: &Path, name: &str, rep: &Report) -> String {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string(rep).unwrap()).unwrap();
    p.display().to_string()
}

fn report(rows: Vec<Row>) -> Report {
    let mut r = Report::new("peers", Measure::Wall, false, 5);
    r.rows = rows;
    r
}

fn base_rows() -> Vec<Row> {
    vec![
        Row::measured(
            "rand_get/k8/v100/10K",
            "ns/op",
            true,
            vec![100.0, 101.0, 99.0, 100.5, 99.5],
        )
        .with_reference("lmdb", vec![110.0, 111.0, 109.0, 110.0, 110.0]),
        Row::measured(
            "seq_put/k8/v100/10K",
            "ns/op",
            true,
            vec![500.0, 900.0, 300.0],
        ),
        Row::exact("size/leaf_pages", "pages", 771.0),
    ]
}

#[test]
fn compare_exit_codes_on_crafted_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let base = write(tmp.path(), "base.json", &report(base_rows()));
    // The base rows with row `i` replaced by `row`, written to `name`.
    let with_row = |i: usize, row: Row, name: &str| {
        let mut rows = base_rows();
        rows[i] = row;
        write(tmp.path(), name, &report(rows))
    };
    // Base row `i` (name and unit; no reference) with other samples.
    let remeasured = |i: usize, samples: Vec<f64>| {
        let b = &base_rows()[i];
        Row::measured(b.name.clone(), &b.unit, true, samples)
    };
    let cmp = |new: &str, extra: &[&str]| {
        let mut a = vec!["compare"];
        a.extend_from_slice(extra);
        a.push(&base);
        a.push(new);
        run(&a)
    };

    // Identical -> 0.
    let o = cmp(&base, &[]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));

    // One row 3x slower with a narrow spread -> 1.
    let slow = with_row(0, remeasured(0, vec![300.0, 301.0, 299.0]), "slow.json");
    let o = cmp(&slow, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("REGRESSED"), "{}", stdout(&o));
    // ... unless that row's own threshold allows it.
    let o = cmp(&slow, &["--row-threshold", "rand_get=250%"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));

    // 40% slower, but the runs' spreads are wider than that -> 0.
    let noisy = with_row(1, remeasured(1, vec![700.0, 1260.0, 420.0]), "noisy.json");
    let o = cmp(&noisy, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));

    // An exact metric changed (by one page) -> 1.
    let exact = with_row(
        2,
        Row::exact("size/leaf_pages", "pages", 772.0),
        "exact.json",
    );
    let o = cmp(&exact, &["--max-regression", "50%"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("CHANGED (exact)"), "{}", stdout(&o));

    // JSON output of the differences.
    let o = cmp(&slow, &["--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["regressions"], 1);
    assert_eq!(v["rows"][0]["status"], "regressed");

    // A different schema version -> 2.
    let text = std::fs::read_to_string(&base)
        .unwrap()
        .replace("\"schema_version\":1", "\"schema_version\":2");
    let other = tmp.path().join("v2.json");
    std::fs::write(&other, text).unwrap();
    let o = cmp(&other.display().to_string(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("schema_version 2"), "{}", stderr(&o));

    // Not a report, unknown filter -> 2.
    let junk = tmp.path().join("junk.json");
    std::fs::write(&junk, "{}").unwrap();
    assert_eq!(cmp(&junk.display().to_string(), &[]).status.code(), Some(2));
    assert_eq!(
        cmp(&base, &["--filter", "nosuchrow"]).status.code(),
        Some(2)
    );
}

#[test]
fn unknown_filter_is_a_usage_error() {
    let o = run(&["peers", "--quick", "--filter", "nosuchrow"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("nosuchrow"));
    let o = run(&[
        "dup-iter",
        "--keys",
        "200",
        "--dups",
        "4",
        "--runs",
        "1",
        "--filter",
        "nosuchrow",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn ci_formats() {
    let o = run(&[
        "dup-iter", "--keys", "300", "--dups", "4", "--runs", "2", "--rounds", "3", "--format",
        "bmf",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let m = &v["list_dup"]["ns_per_value"];
    assert!(
        m["value"].is_number() && m["lower_value"].is_number() && m["upper_value"].is_number(),
        "{v:#}"
    );
    let o = run(&[
        "dup-iter", "--keys", "300", "--dups", "4", "--runs", "2", "--format", "gab",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = v.as_array().unwrap();
    assert!(a
        .iter()
        .any(|x| x["name"] == "list_dup" && x["unit"] == "ns/value" && x["value"].is_number()));
}

#[test]
fn counted_is_an_alias_of_count() {
    let o = run(&[
        "counted",
        "--entries",
        "300",
        "--queries",
        "20",
        "--dups",
        "2",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("Benchmark with 300 entries, 20 queries, span 200\n"));
}

#[test]
fn dlmdb_program_text_keeps_its_line_formats() {
    // (snapshot, arguments separated by spaces)
    for (snapshot, args) in [
        (
            "count_text",
            "count --entries 400 --queries 30 --dups 3 --shuffle -q",
        ),
        (
            "sample_text",
            "sample --entries 5000 --samples 40 --batch 1000 -q",
        ),
        ("dup_iter_text", "dup-iter --keys 300 --dups 4 --runs 2 -q"),
        (
            "compress_text",
            "compress -n 3000 -r 500 -U 100 -X 50 -D 5 -P -m 64 -q",
        ),
    ] {
        let o = run(&args.split(' ').collect::<Vec<_>>());
        insta::assert_snapshot!(snapshot, mask(&stdout(&o)));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
}

#[test]
fn compress_options_are_checked_like_compress_bench() {
    let o = run(&["compress", "-n", "0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("Entry count must be > 0"));
    let o = run(&["compress", "-n", "100", "-C", "zip"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // Base-0 numbers: 0x64 = 100 entries.
    let o = run(&[
        "compress", "-n", "0x64", "-r", "010", "-C", "off", "-q", "--json", "-m", "16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rep = Report::from_json(&stdout(&o)).unwrap();
    assert_eq!(rep.options["entries"], 100);
    assert_eq!(rep.options["reads"], 8);
    let e = rep.rows.iter().find(|r| r.name == "plain/entries").unwrap();
    assert_eq!(e.value, Some(100.0));
    assert!(e.exact);
}

#[test]
fn compress_holds_plain_dups_against_plain() {
    // DLMDB's published proportions: a plain-dups delete no dearer than a
    // plain delete, an update at most about 2.3 times a plain update.
    let o = run(&[
        "compress", "-n", "400", "-r", "100", "-U", "50", "-X", "50", "-D", "4", "-C", "off", "-q",
        "--json", "-m", "16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rep = Report::from_json(&stdout(&o)).unwrap();
    let row = |name: &str| rep.rows.iter().find(|r| r.name == name).unwrap().clone();
    for (phase, bound) in [("delete", 1.0), ("update", 2.3)] {
        let r = row(&format!("plain-dups/{phase}"));
        assert_eq!(r.reference.as_ref().unwrap().label, "plain", "{phase}");
        let t = r.target.unwrap();
        assert_eq!(
            (t.kind, t.bound),
            (TargetKind::RatioAtMost, bound),
            "{phase}"
        );
    }
    let r = row("plain-dups/insert");
    assert_eq!(r.reference.unwrap().label, "plain");
    assert!(r.target.is_none());
    assert!(row("plain/delete").reference.is_none());
}

#[test]
fn fail_on_miss_turns_a_missed_target_into_exit_1() {
    // A report whose target is missed, through the same output path the
    // suites use.
    let mut rep = Report::new("dups", Measure::Wall, true, 3);
    rep.rows.push(
        Row::measured("x", "ns/op", true, vec![3.0, 3.0, 3.0])
            .with_reference("lmdb", vec![1.0, 1.0, 1.0])
            .with_target(TargetKind::RatioAtMost, 1.25),
    );
    let parse = |extra: &[&str]| {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct P {
            #[command(flatten)]
            out: dlmdb_bench::args::OutputArgs,
        }
        let mut a = vec!["p", "--format", "json"];
        a.extend_from_slice(extra);
        P::parse_from(a).out
    };
    assert_eq!(parse(&[]).emit(rep.clone(), None), 0);
    assert_eq!(parse(&["--fail-on-miss"]).emit(rep, None), 1);
}

#[test]
fn ctrl_c_removes_the_scratch_environment_and_exits_130() {
    let tmp = tempfile::tempdir().unwrap();
    let env = tmp.path().join("env");
    let mut child = bin()
        .args([
            "bench", "dup-iter", "--keys", "3000000", "--dups", "20", "-q", "--path",
        ])
        .arg(&env)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the population has started writing.
    let t0 = std::time::Instant::now();
    while !env.join("data.mdb").exists() && t0.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        env.join("data.mdb").exists(),
        "the suite never created its environment"
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(!env.exists(), "{} left behind", env.display());
}
