//! The real binary in a pseudo-terminal (tmux): open a store, walk from a
//! database's root page down to a leaf page, quit, and check the exit
//! status and that the terminal was handed back. Skips when tmux is absent.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux").args(args).output().expect("tmux runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Poll the pane until `pred` holds (or fail after 20 s with the screen).
fn wait_screen(session: &str, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let screen = tmux(&["capture-pane", "-p", "-t", session]);
        if pred(&screen) {
            return screen;
        }
        if Instant::now() > deadline {
            let _ = tmux(&["kill-session", "-t", session]);
            panic!("timed out waiting for {what}; screen:\n{screen}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn binary_opens_walks_to_a_leaf_and_quits() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux not installed: end-to-end test skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = build_store(dir.path());
    let status_file = dir.path().join("exit-status");
    let bin = env!("CARGO_BIN_EXE_dlmdb-tui");
    let session = format!("dlmdb-tui-e2e-{}", std::process::id());
    let cmd = format!(
        "{} {} -s plain; echo $? > {}",
        shell_quote(Path::new(bin)),
        shell_quote(&store),
        shell_quote(&status_file)
    );
    tmux(&[
        "new-session",
        "-d",
        "-s",
        &session,
        "-x",
        "80",
        "-y",
        "24",
        &cmd,
    ]);
    wait_screen(&session, "the entries of plain", |s| {
        s.contains("▶ Entries: \"plain\"") && s.contains("k000000")
    });
    // o: the leaf holding the selected entry.
    tmux(&["send-keys", "-t", &session, "o"]);
    let leaf = wait_screen(&session, "the leaf page", |s| {
        s.contains("▶ Pages: \"plain\"") && s.contains("LEAF (0x0002)")
    });
    assert!(leaf.contains("k000000"), "{leaf}");
    // Backspace: its parent, the root branch; Enter on child 1: a leaf again.
    tmux(&["send-keys", "-t", &session, "BSpace"]);
    wait_screen(&session, "the root branch", |s| {
        s.contains("BRANCH (0x0001)")
    });
    tmux(&["send-keys", "-t", &session, "Down", "Enter"]);
    wait_screen(&session, "the second leaf", |s| {
        s.contains("LEAF (0x0002)") && !s.contains("k000000")
    });
    tmux(&["send-keys", "-t", &session, "q"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !status_file.exists() {
        assert!(Instant::now() < deadline, "the binary did not quit");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(100));
    let status = std::fs::read_to_string(&status_file).unwrap();
    let _ = tmux(&["kill-session", "-t", &session]);
    assert_eq!(status.trim(), "0", "exit status");
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}
