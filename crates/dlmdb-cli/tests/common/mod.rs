//! Helpers shared by the `dlmdb-cli` integration tests: locating the
//! reference fixtures and copying them into a temp dir (opening a store
//! creates a lock file beside it, so the shared fixtures are never opened
//! in place). Each test binary uses only part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `dlmdb` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dlmdb"))
}

/// `dlmdb ARGS`, run to completion.
pub fn dlmdb(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

/// `dlmdb ARGS PATH`, run to completion.
pub fn dlmdb_at(args: &[&str], path: &Path) -> Output {
    bin().args(args).arg(path).output().unwrap()
}

/// The standard output of `dlmdb ARGS PATH`; panics with its stderr unless
/// it succeeds.
pub fn stdout_at(args: &[&str], path: &Path) -> String {
    String::from_utf8(succeeded(dlmdb_at(args, path))).unwrap()
}

/// The standard output of a finished command; panics with its stderr
/// unless it succeeded.
#[track_caller]
pub fn succeeded(out: Output) -> Vec<u8> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A dump in the `bytevalue` format: `header` (lines ending in a newline,
/// between `format=bytevalue` and `HEADER=END`), then `records` in hex.
pub fn bytevalue_dump<K: AsRef<[u8]>, V: AsRef<[u8]>>(
    header: &str,
    records: impl IntoIterator<Item = (K, V)>,
) -> String {
    let mut s = format!("VERSION=3\nformat=bytevalue\n{header}HEADER=END\n");
    for (k, v) in records {
        s.push_str(&format!(
            " {}\n {}\n",
            dlmdb_cli::util::hex(k.as_ref()),
            dlmdb_cli::util::hex(v.as_ref())
        ));
    }
    s.push_str("DATA=END\n");
    s
}

/// `cmd load ARGS -f FILE TARGET`, FILE holding `input` (`cmd` is `bin()`,
/// perhaps with its environment or limits set), run to completion.
pub fn load_input(
    mut cmd: Command,
    input: impl AsRef<[u8]>,
    args: &[&str],
    target: &Path,
) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.txt");
    std::fs::write(&file, input).unwrap();
    cmd.arg("load")
        .args(args)
        .arg("-f")
        .arg(&file)
        .arg(target)
        .output()
        .unwrap()
}

/// The command that gave `out` exited with `code` (the panic shows what it
/// printed).
#[track_caller]
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The entry of a JSON report's `databases` array named `name`.
#[track_caller]
pub fn database<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["databases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("no database {name:?} in {report}"))
}

/// Run a command to completion; panics with its stderr unless it succeeds.
#[allow(unused_imports)] // not every test file runs commands this way
pub use dlmdb_tests::output_ok as run_ok;

/// `dlmdb check` finds nothing wrong with `store` (exit status 0; the panic
/// shows the report).
pub fn check_clean(store: &Path) {
    let out = bin().arg("check").arg(store).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `$DLMDB_FIXTURES`, else `<repo>/tests/fixtures`; `None` (with a
/// SKIP note) when the directory is absent.
pub use dlmdb_tests::fixtures;

/// Copy `src` into a fresh temp dir, keeping its file name.
pub fn copy_to_temp(src: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join(src.file_name().unwrap());
    std::fs::copy(src, &dst).unwrap_or_else(|e| panic!("copy {}: {e}", src.display()));
    (tmp, dst)
}

/// The fixture file `rel` (relative to the fixtures dir); `None` (with a
/// SKIP note) when it is missing.
fn fixture_file(rel: &str) -> Option<PathBuf> {
    let src = fixtures()?.join(rel);
    if !src.is_file() {
        eprintln!("SKIP: fixture {} not found", src.display());
        return None;
    }
    Some(src)
}

/// Copy the fixture `rel` (relative to the fixtures dir) into a fresh temp
/// dir; `None` (with a SKIP note) when the fixture is missing.
pub fn fixture_copy(rel: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    Some(copy_to_temp(&fixture_file(rel)?))
}

/// Validate `doc` (JSON text) against `schemas/<name>.schema.json` with the
/// Python `jsonschema` package (Draft 2020-12); panics with the validation
/// errors. The schema itself is checked first.
pub fn validate_json(name: &str, doc: &[u8]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schemas")
        .join(format!("{name}.schema.json"));
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::draft202012::new(&schema)
        .unwrap_or_else(|e| panic!("{} does not compile: {e}", path.display()));
    let value: serde_json::Value = serde_json::from_slice(doc)
        .unwrap_or_else(|e| panic!("{name}: not JSON ({e}): {}", String::from_utf8_lossy(doc)));
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("{} {e}", e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{name} schema rejects the document:\n{}\ndocument: {}",
        errors.join("\n"),
        String::from_utf8_lossy(doc)
    );
}

/// Names in `dir`, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Copy fixture `rel` into `dir/name/data.mdb` (a directory store).
pub fn fixture_dir(rel: &str, dir: &Path, name: &str) -> Option<PathBuf> {
    let src = fixture_file(rel)?;
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(&src, d.join("data.mdb")).unwrap();
    Some(d)
}

/// Whether Debian's lmdb-utils (`mdb_stat`, `mdb_dump`, `mdb_load`) are
/// installed; in CI their absence is a failure, elsewhere a loud SKIP.
pub fn have_stock_tools() -> bool {
    let found = Command::new("mdb_stat").arg("-V").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "lmdb-utils must be installed in CI"
        );
        eprintln!("SKIP (LOUD): Debian lmdb-utils not installed; comparisons with them not run");
    }
    found
}
