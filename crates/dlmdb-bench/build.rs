//! Detects whether dlmdb-sys compiled an engine that defines what we call.
//!
//! While vendor/dlmdb is still being written, dlmdb-sys builds but may lack
//! symbols; then the harness compares stock LMDB against itself (a useful
//! fairness check) instead of failing to link. dlmdb-sys publishes the engine
//! directory as `DEP_DLMDB_INCLUDE` (its `links = "dlmdb"` metadata).
//! `DLMDB_BENCH_LMDB_ONLY=1` forces the self-test build.

/// Every engine function the harness calls.
const NEEDED: &[&str] = &[
    "mdb_version",
    "mdb_strerror",
    "mdb_env_create",
    "mdb_env_set_mapsize",
    "mdb_env_open",
    "mdb_env_close",
    "mdb_txn_begin",
    "mdb_txn_commit",
    "mdb_txn_abort",
    "mdb_dbi_open",
    "mdb_put",
    "mdb_get",
    "mdb_stat",
    "mdb_cursor_open",
    "mdb_cursor_close",
    "mdb_cursor_put",
    "mdb_cursor_get",
];

/// Record the checkout's revision for reports (`DLMDB_GIT_REVISION`), and
/// rebuild when HEAD, the branch or the index change.
fn git_revision() {
    let git = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git").args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let Some(rev) = git(&["describe", "--always", "--dirty", "--abbrev=12"]) else {
        return;
    };
    println!("cargo:rustc-env=DLMDB_GIT_REVISION={rev}");
    let mut watch = vec!["HEAD".to_string(), "index".to_string()];
    if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch.push(r);
    }
    for w in watch {
        if let Some(p) = git(&["rev-parse", "--path-format=absolute", "--git-path", &w]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}

fn main() {
    git_revision();
    println!("cargo:rustc-check-cfg=cfg(has_dlmdb_engine)");
    println!("cargo:rerun-if-env-changed=DEP_DLMDB_INCLUDE");
    println!("cargo:rerun-if-env-changed=DLMDB_BENCH_LMDB_ONLY");
    if std::env::var("DLMDB_BENCH_LMDB_ONLY").is_ok_and(|v| v == "1") {
        return;
    }
    let Ok(dir) = std::env::var("DEP_DLMDB_INCLUDE") else {
        return;
    };
    println!("cargo:rerun-if-changed={dir}");
    let mut text = String::new();
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "c") {
                println!("cargo:rerun-if-changed={}", p.display());
                text.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    // A definition starts a line with the name (LMDB style `int\nmdb_put(`) or
    // follows the return type on the same line.
    let defined = |f: &str| {
        text.lines().any(|l| {
            let l = l.trim_start();
            let rest = l.split_once(f);
            matches!(rest, Some((pre, post)) if post.starts_with('(')
                && !l.ends_with(';')
                && (pre.is_empty() || pre.ends_with(' ') || pre.ends_with('*'))
                && !pre.contains('=') && !pre.contains("return"))
        })
    };
    let missing: Vec<&str> = NEEDED.iter().copied().filter(|f| !defined(f)).collect();
    if missing.is_empty() {
        println!("cargo:rustc-cfg=has_dlmdb_engine");
    } else {
        println!(
            "cargo:warning=dlmdb engine incomplete (no {}); benchmarking LMDB against itself",
            missing.join(", ")
        );
    }
}
