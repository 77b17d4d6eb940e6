//! Ctrl-C (SIGINT sent to a child process) during load, dump and copy:
//! exit status 130 and no partial output left behind; an existing store
//! keeps its data file byte for byte.

mod common;

use common::{bin, bytevalue_dump, listing};
use std::io::Write;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn sigint(child: &Child) {
    // SAFETY: plain kill(2) on our own child.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0);
}

/// A dump header and `n` records.
fn dump_text(n: usize) -> Vec<u8> {
    bytevalue_dump(
        "type=btree\nmapsize=1073741824\nmaxreaders=126\ndb_pagesize=4096\n",
        (0..n).map(|i| (format!("key{i:010}"), [0xab; 100])),
    )
    .into_bytes()
}

/// A store of `n` entries with 1 KiB values, written through the safe API.
fn big_store(dir: &Path, n: u32) {
    std::fs::create_dir_all(dir).unwrap();
    let env = dlmdb::Env::builder().map_size(1 << 30).open(dir).unwrap();
    let mut txn = env.write_txn().unwrap();
    let db = txn.open_db(None).unwrap();
    let value = vec![0x5au8; 1024];
    for i in 0..n {
        txn.put(db, &i.to_be_bytes(), &value, dlmdb::WriteFlags::APPEND)
            .unwrap();
    }
    txn.commit().unwrap();
}

/// `dlmdb load target` fed `first` on its stdin, then SIGINT while it
/// still reads, then `rest` (which it may no longer take); its stdin is
/// closed when this returns.
fn load_interrupted(target: &Path, first: &[u8], rest: &[u8], stderr: Stdio) -> Child {
    let mut child = bin()
        .arg("load")
        .arg(target)
        .stdin(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(first).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    sigint(&child);
    let _ = stdin.write_all(rest);
    drop(stdin);
    child
}

#[test]
fn ctrl_c_during_load_into_a_new_path_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("new");
    let text = dump_text(20_000);
    // Half the input, then SIGINT while the load still reads; then the rest.
    let (first, rest) = text.split_at(text.len() / 2);
    let child = load_interrupted(&target, first, rest, Stdio::piped());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("interrupted"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!target.exists());
    assert!(listing(tmp.path()).is_empty(), "{:?}", listing(tmp.path()));
}

#[test]
fn ctrl_c_during_load_into_an_existing_store_keeps_its_file() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("s");
    big_store(&store, 100);
    let before = std::fs::read(store.join("data.mdb")).unwrap();
    let mut child = load_interrupted(&store, &dump_text(5000)[..10_000], &[], Stdio::null());
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert_eq!(std::fs::read(store.join("data.mdb")).unwrap(), before);
}

/// Start `args`, SIGINT it once `output` holds data, and check the result.
/// A run that finishes before the signal lands is retried (up to 5 times);
/// at least one must be interrupted mid-way.
fn interrupt_when_output_grows(
    args: &[&std::ffi::OsStr],
    output: &Path,
    leftover_dir: Option<&Path>,
) {
    for _ in 0..5 {
        let child = bin().args(args).stderr(Stdio::piped()).spawn().unwrap();
        let start = Instant::now();
        while std::fs::metadata(output).map_or(true, |m| m.len() == 0)
            && start.elapsed() < Duration::from_secs(30)
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        sigint(&child);
        let out = child.wait_with_output().unwrap();
        match out.status.code() {
            Some(0) => {
                // Finished first: clean up and try again.
                if let Some(d) = leftover_dir {
                    let _ = std::fs::remove_dir_all(d);
                } else {
                    let _ = std::fs::remove_file(output);
                }
                continue;
            }
            Some(130) => {
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(err.contains("interrupted"), "{err}");
                assert!(!output.exists(), "{} left behind", output.display());
                if let Some(d) = leftover_dir {
                    assert!(!d.exists(), "{} left behind", d.display());
                }
                return;
            }
            other => panic!(
                "{args:?}: exit {other:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }
    panic!("{args:?} always finished before SIGINT arrived");
}

#[test]
fn ctrl_c_during_dump_and_copy_removes_partial_output() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    big_store(&src, 120_000);
    let dump = tmp.path().join("dump.txt");
    interrupt_when_output_grows(
        &[
            "dump".as_ref(),
            "-o".as_ref(),
            dump.as_os_str(),
            src.as_os_str(),
        ],
        &dump,
        None,
    );
    let dst = tmp.path().join("copy");
    interrupt_when_output_grows(
        &[
            "copy".as_ref(),
            "-c".as_ref(),
            src.as_os_str(),
            dst.as_os_str(),
        ],
        &dst.join("data.mdb"),
        Some(&dst),
    );
    // To a pipe nobody reads, the copy blocks: the signal always lands.
    let mut child = bin()
        .arg("copy")
        .arg(&src)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    sigint(&child);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
}
