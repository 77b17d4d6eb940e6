//! The `dlmdb` binary end to end: argument parsing, exit codes, JSON output.

mod common;

use common::{assert_exit, bin, database, fixture_copy, run_ok};

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
