//! `bench peers --scale` at a tiny size: the option parsing, the store
//! building, the lookup and put rows and their JSON, cheaply enough for CI.

use std::process::Command;

fn peers() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dlmdb-bench-peers"))
}

/// Run `--scale-test` with `args` on a fresh scratch dir; it must succeed
/// (the panic shows its stderr). The dir is returned for a look inside.
fn scale_run(args: &[&str]) -> (tempfile::TempDir, std::process::Output) {
    let dir = scratch();
    let out = peers()
        .arg("--scale-test")
        .args(args)
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, out)
}

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("scale-test-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

#[test]
fn tiny_scale_run_builds_every_row() {
    let (dir, out) = scale_run(&[
        "--scale",
        "2e4,3e4",
        "--scale-puts",
        "5e4",
        "--scale-lookups",
        "5000",
        "--scale-cold-lookups",
        "500",
        "--rounds",
        "2",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let lookups = v["lookups"].as_array().unwrap();
    assert_eq!(lookups.len(), 4, "two sizes x two engines: {v:#}");
    for (row, (n, engine)) in lookups.iter().zip([
        (20_000, "ours"),
        (20_000, "lmdb"),
        (30_000, "ours"),
        (30_000, "lmdb"),
    ]) {
        assert_eq!(row["entries"], n);
        assert_eq!(row["engine"], engine);
        let depth = row["depth"].as_u64().unwrap();
        assert!((2..=4).contains(&depth), "depth {depth} for {n} entries");
        // 8-byte keys and 100-byte values: at least 118 bytes per entry.
        let leaves = row["leaf_pages"].as_u64().unwrap();
        assert!(leaves * 4096 >= n * 118, "{leaves} leaves for {n} entries");
        for f in ["get_warm_ns", "seek_warm_ns", "get_warm_ns_per_level"] {
            assert!(row[f].as_f64().unwrap() > 0.0, "{f}: {row}");
        }
        let per_level = row["get_warm_ns"].as_f64().unwrap() / depth as f64;
        assert!((row["get_warm_ns_per_level"].as_f64().unwrap() - per_level).abs() < 1e-6);
        // Cold rows either ran or say why not.
        if row["get_cold_ns"].is_null() {
            assert!(v["cold_method"].as_str().unwrap().contains("skipped"));
        } else {
            assert!(row["resident_after_drop"].as_f64().unwrap() <= 0.05);
        }
    }
    let puts = v["puts"].as_array().unwrap();
    assert_eq!(puts.len(), 2);
    for p in puts {
        assert_eq!(p["puts"], 50_000);
        assert_eq!(p["outcome"], "ok", "{p}");
        assert!(p["seconds"].as_f64().unwrap() > 0.0);
        // The child's own peak: above the 6 MB of records it wrote, far
        // below what the test process and its parent hold together.
        let rss = p["peak_rss_bytes"].as_u64().unwrap();
        assert!(rss > 5_000_000 && rss < 2_000_000_000, "{rss}");
        assert!(p["data_file_bytes"].as_u64().unwrap() >= 50_000 * 118);
    }
    // Every store was removed after measuring.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn text_report_names_depth_and_ratios() {
    let (_dir, out) = scale_run(&[
        "--scale",
        "2e4",
        "--scale-puts",
        "none",
        "--scale-lookups",
        "2000",
        "--scale-cold-lookups",
        "0",
        "--rounds",
        "1",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("depth"), "{text}");
    assert!(text.contains("20K ours/lmdb: get "), "{text}");
    assert!(text.contains("cold: cold rows not asked for"), "{text}");
    assert!(!text.contains("one write transaction"), "{text}");
}

#[test]
fn usage_errors() {
    let dir = scratch();
    // No --dir.
    let out = peers().args(["--scale", "1e7"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--scale needs --dir"));
    // Not a count.
    let out = peers().args(["--scale", "lots"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Small sizes need the test switch.
    let out = peers()
        .args(["--scale", "2e4", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("sizes start at 1e6"));
}

#[test]
fn memory_filesystems_are_refused() {
    let shm = std::path::Path::new("/dev/shm");
    let on_tmpfs = std::fs::read_to_string("/proc/mounts")
        .unwrap()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("/dev/shm") && l.contains(" tmpfs "));
    if !on_tmpfs {
        eprintln!("/dev/shm is not a tmpfs here; checking the real-disk path only");
    } else {
        let e = dlmdb_bench::scale::check_real_disk(shm, false).unwrap_err();
        assert!(format!("{e}").contains("memory filesystem"), "{e}");
        assert!(dlmdb_bench::scale::check_real_disk(shm, true).is_ok());
    }
    let dir = scratch();
    let disk_is_memory = std::fs::read_to_string("/proc/mounts")
        .unwrap()
        .lines()
        .any(|l| l.contains(" tmpfs ") || l.contains(" ramfs "))
        && dlmdb_bench::sysinfo::fs_type(dir.path()).is_some_and(|t| t == "tmpfs" || t == "ramfs");
    assert_eq!(
        dlmdb_bench::scale::check_real_disk(dir.path(), false).is_ok(),
        !disk_is_memory
    );
}
