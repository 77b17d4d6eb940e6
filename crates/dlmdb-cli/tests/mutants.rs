//! Damaged stores through the CLI: the corrupted-store fuzzer of the engine
//! (`vendor/dlmdb/fuzz/fuzz_store.c`) writes a fixed seed list of mutants of
//! the fixtures and of generated stores, with the engine's own verdict for
//! each; every mutant then goes through `check`, `dump -a`, `stat -a
//! --pages`, `copy` and `copy -c`.  None may die from a signal or panic or
//! hang, and `check` exits only 0, 1 or 2.  Mutants the engine rejects but
//! `check` passes are listed and fail the test (`DLMDB_MUTANTS_STRICT=0`
//! only lists them).
//!
//! `DLMDB_MUTANTS=N` sets the number of mutants (default 600),
//! `DLMDB_MUTANTS_SEED=S` the seed (default 11).

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Build the fuzzer with the engine's own Makefile.
fn mutator() -> PathBuf {
    let c_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vendor/dlmdb");
    let status = Command::new("make")
        .arg("-C")
        .arg(&c_dir)
        .arg("--no-print-directory")
        .arg("build/release/fuzz/fuzz_store")
        .stdout(Stdio::null())
        .status()
        .expect("run make");
    assert!(status.success(), "building fuzz_store failed");
    c_dir.join("build/release/fuzz/fuzz_store")
}

struct Outcome {
    status: Option<ExitStatus>,
    stderr: String,
}

/// Run cmd with a deadline; `status` is None when it had to be killed.
fn run(mut cmd: Command, limit: Duration) -> Outcome {
    let errfile = tempfile::NamedTempFile::new().unwrap();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(errfile.reopen().unwrap())
        .spawn()
        .expect("spawn dlmdb");
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stderr = std::fs::read_to_string(errfile.path()).unwrap_or_default();
    Outcome { status, stderr }
}

/// Error numbers of the engine that mean "this store is damaged"
/// (not resource limits of the fuzzer's own writes).
fn engine_rejects(rc: i32) -> bool {
    const ENOMEM: i32 = 12;
    const MDB_MAP_FULL: i32 = -30792;
    rc != 0 && rc != ENOMEM && rc != MDB_MAP_FULL
}

#[test]
fn mutants_through_the_cli() {
    let n: u64 = std::env::var("DLMDB_MUTANTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let seed: u64 = std::env::var("DLMDB_MUTANTS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(11);
    let strict = !std::env::var("DLMDB_MUTANTS_STRICT").is_ok_and(|v| v == "0");
    let fuzz = mutator();
    let tmp = tempfile::tempdir().unwrap();
    let emit = tmp.path().join("mutants");
    let mut gen = Command::new(&fuzz);
    gen.args([
        "--seed",
        &seed.to_string(),
        "--cases",
        &n.to_string(),
        "--emit",
    ])
    .arg(&emit);
    if let Some(fx) = common::fixtures() {
        gen.env("DLMDB_FIXTURES", fx);
    }
    let out = gen.output().expect("run fuzz_store");
    assert!(
        out.status.success(),
        "the engine itself failed on a mutant:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verdicts = std::fs::read_to_string(emit.join("verdicts.txt")).unwrap();
    let limit = Duration::from_secs(60);
    let mut failures = Vec::new();
    let mut misses = Vec::new();
    let (mut checked, mut check_problems) = (0u64, 0u64);
    for line in verdicts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 4, "verdict line {line:?}");
        let (name, ro, rw, layout) = (
            f[0],
            f[1].parse::<i32>().unwrap(),
            f[2].parse::<i32>().unwrap(),
            f[3],
        );
        let src = emit.join(format!("{name}.mdb"));
        // Each command gets its own copy: opening creates a lock file and
        // `copy` writes beside it.
        let work = tmp.path().join("work");
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir(&work).unwrap();
        let store = work.join("m.mdb");
        std::fs::copy(&src, &store).unwrap();
        let commands: [(&str, Vec<String>); 5] = [
            ("check", vec!["check".into(), "-q".into()]),
            ("dump -a", vec!["dump".into(), "-a".into()]),
            (
                "stat -a --pages",
                vec!["stat".into(), "-a".into(), "--pages".into()],
            ),
            (
                "copy",
                vec![
                    "copy".into(),
                    store.to_string_lossy().into_owned(),
                    work.join("copy.mdb").to_string_lossy().into_owned(),
                ],
            ),
            (
                "copy -c",
                vec![
                    "copy".into(),
                    "-c".into(),
                    store.to_string_lossy().into_owned(),
                    work.join("compact.mdb").to_string_lossy().into_owned(),
                ],
            ),
        ];
        let mut check_code = None;
        for (what, args) in commands {
            let mut cmd = common::bin();
            cmd.args(&args).args(["--layout", layout]);
            if !what.starts_with("copy") {
                cmd.arg(&store);
            }
            let o = run(cmd, limit);
            let desc = format!("{name} ({layout}): dlmdb {what}");
            match o.status {
                None => failures.push(format!("{desc}: still running after {limit:?}")),
                Some(st) => {
                    if let Some(sig) = st.signal() {
                        failures.push(format!("{desc}: killed by signal {sig}"));
                    } else if o.stderr.contains("panicked") || st.code() == Some(101) {
                        failures.push(format!("{desc}: panic: {}", o.stderr.trim()));
                    } else if what == "check" {
                        let code = st.code().unwrap_or(-1);
                        if !(0..=2).contains(&code) {
                            failures.push(format!("{desc}: exit status {code}"));
                        }
                        check_code = Some(code);
                    }
                }
            }
        }
        checked += 1;
        if check_code == Some(1) {
            check_problems += 1;
        }
        let rejected = engine_rejects(ro) || engine_rejects(rw);
        if rejected && check_code == Some(0) {
            misses.push(format!(
                "{name} ({layout}): engine {ro}/{rw}, check says ok"
            ));
        }
    }
    eprintln!(
        "mutants: {checked} through the CLI, check found problems in {check_problems}, \
         {} misses (engine rejects, check passes), {} failures",
        misses.len(),
        failures.len()
    );
    for m in &misses {
        eprintln!("  miss: {m}");
    }
    assert!(
        failures.is_empty(),
        "{} CLI failures on mutants (seed {seed}):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        !strict || misses.is_empty(),
        "{} mutants the engine rejects pass check",
        misses.len()
    );
}
