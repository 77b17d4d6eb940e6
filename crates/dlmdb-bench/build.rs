//! Build facts for the benchmark harness:
//!
//! * `DLMDB_GIT_REVISION`: the checkout's revision, recorded in reports;
//! * `DLMDB_BENCH_LMDB_ONLY=1` at build time makes the peers suite's "ours"
//!   side a second copy of stock LMDB (cfg `ours_is_lmdb`): a fairness
//!   check of the harness, whose ratios should all be close to 1.

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
    println!("cargo:rustc-check-cfg=cfg(ours_is_lmdb)");
    println!("cargo:rerun-if-env-changed=DLMDB_BENCH_LMDB_ONLY");
    if std::env::var("DLMDB_BENCH_LMDB_ONLY").is_ok_and(|v| v == "1") {
        println!("cargo:rustc-cfg=ours_is_lmdb");
    }
}
