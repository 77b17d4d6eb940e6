//! Child-process helpers for the multi-process, crash, copy and lifecycle
//! tests, plus a raw engine wrapper instantiated for both engines.
//!
//! **Child processes.** A test re-executes its own test binary
//! (`std::env::current_exe()`) running one `#[test]` function (`--exact`)
//! with `DLMDB_CHILD_ROLE` naming the role; that test function is a no-op
//! unless the variable is set, so no extra binary is needed. Parameters go
//! in `DLMDB_CHILD_*` variables. The child reports to the parent through its
//! stdout, one line per message prefixed with `@@ ` (libtest's own output is
//! filtered out), flushed before the child continues, so a line the parent
//! received describes something that really happened before any later kill.
//!
//! **Engines.** [`ours`] and [`stock`] are the two-engine kit's driver
//! (`dlmdb_kit`): the same code over `dlmdb-sys` and `lmdb-master-sys`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Environment variable selecting a child role.
pub const ROLE_VAR: &str = "DLMDB_CHILD_ROLE";

/// The role this process was started with, if it is a child.
pub fn role() -> Option<String> {
    std::env::var(ROLE_VAR).ok()
}

/// A child parameter (`DLMDB_CHILD_<name>`); panics if missing.
pub fn param(name: &str) -> String {
    std::env::var(format!("DLMDB_CHILD_{name}"))
        .unwrap_or_else(|_| panic!("child parameter {name} missing"))
}

/// A numeric child parameter.
pub fn param_u64(name: &str) -> u64 {
    param(name)
        .parse()
        .unwrap_or_else(|_| panic!("child parameter {name} is not a number"))
}

/// Send one report line to the parent (flushed before returning).
pub fn report(line: &str) {
    let mut out = std::io::stdout().lock();
    // A parent that went away makes the write fail: nothing left to do.
    let _ = writeln!(out, "@@ {line}");
    let _ = out.flush();
}

/// Microseconds since the Unix epoch (comparable across processes).
pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}

/// A running child process and its report lines.
pub struct Child {
    pub child: std::process::Child,
    lines: Receiver<String>,
    pub role: String,
}

/// The lines a child wrote with [`report`] (its `@@ ` prefix removed), read
/// from its stdout by a thread so they can be awaited with a deadline.
pub fn reported_lines(out: std::process::ChildStdout) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.strip_prefix("@@ ") {
                if tx.send(rest.to_string()).is_err() {
                    break;
                }
            }
        }
    });
    rx
}

/// Start `test` (the exact name of a `#[test]` function of the calling test
/// binary) as a child with `role` and parameters `vars` (names without the
/// `DLMDB_CHILD_` prefix).
pub fn spawn(test: &str, role: &str, vars: &[(&str, String)]) -> Child {
    let exe = std::env::current_exe().expect("current_exe");
    let mut cmd = Command::new(exe);
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1", "-q"])
        .env(ROLE_VAR, role)
        .env_remove("RUST_TEST_THREADS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in vars {
        cmd.env(format!("DLMDB_CHILD_{k}"), v);
    }
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start child {role}: {e}"));
    let rx = reported_lines(child.stdout.take().unwrap());
    Child {
        child,
        lines: rx,
        role: role.to_string(),
    }
}

impl Child {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Next report line, waiting at most `d`; `None` on timeout or when the
    /// child closed its stdout.
    pub fn recv_timeout(&self, d: Duration) -> Option<String> {
        match self.lines.recv_timeout(d) {
            Ok(l) => Some(l),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Wait for a report line starting with `prefix` (other lines are
    /// returned in the vector too); panics after `timeout`.
    pub fn expect(&self, prefix: &str, timeout: Duration) -> String {
        let end = Instant::now() + timeout;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.starts_with(prefix) => return l,
                Ok(_) => continue,
                Err(e) => panic!("child {}: no {prefix:?} line ({e:?})", self.role),
            }
        }
    }

    /// SIGKILL the child and reap it; returns every line it reported that
    /// had not been received yet (they were written before the kill).
    pub fn kill9(mut self) -> Vec<String> {
        let _ = self.child.kill(); // SIGKILL on Unix
        let _ = self.child.wait();
        self.lines.iter().collect()
    }

    /// Wait for a normal exit (panicking on failure) and return the lines not
    /// yet received.
    pub fn wait_ok(mut self, timeout: Duration) -> Vec<String> {
        let end = Instant::now() + timeout;
        loop {
            match self.child.try_wait().expect("try_wait") {
                Some(st) => {
                    let rest: Vec<String> = self.lines.iter().collect();
                    assert!(
                        st.success(),
                        "child {} failed: {st} (stderr above)",
                        self.role
                    );
                    return rest;
                }
                None if Instant::now() > end => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    panic!("child {} did not finish within {timeout:?}", self.role);
                }
                None => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // Never leave a child behind when a test fails half-way.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// 64-bit FNV-1a, fed incrementally.
#[derive(Debug, Clone, Copy)]
pub struct Fnv(pub u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    pub fn bytes(&mut self, b: &[u8]) {
        for &c in b {
            self.0 ^= c as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    /// Length-prefixed field (so concatenations cannot collide).
    pub fn field(&mut self, b: &[u8]) {
        self.bytes(&(b.len() as u64).to_le_bytes());
        self.bytes(b);
    }
}

/// Digest of named databases' contents: `(name, pairs in cursor order)`.
pub fn digest<'a>(dbs: impl IntoIterator<Item = (&'a str, &'a [crate::Pair])>) -> u64 {
    let mut h = Fnv::default();
    for (name, pairs) in dbs {
        h.field(name.as_bytes());
        h.bytes(&(pairs.len() as u64).to_le_bytes());
        for (k, v) in pairs {
            h.field(k);
            h.field(v);
        }
    }
    h.0
}

/// A fresh temp dir and the path of a data file `data.mdb` inside it (the
/// store the test and its children share; keep the dir alive).
pub fn temp_store() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.mdb");
    (dir, path)
}

/// Start the calling binary's `child_entry` test as a child with `role`,
/// working on the store at `path` with `engine` ("ours" or "stock"; the
/// child reads them back as `PATH` and `ENGINE`, see [`on_engine!`]).
pub fn spawn_on_store(role: &str, path: &std::path::Path, engine: &str) -> Child {
    spawn(
        "child_entry",
        role,
        &[
            ("PATH", path.display().to_string()),
            ("ENGINE", engine.to_string()),
        ],
    )
}

/// First statement of a parent test in a multi-process test file: return
/// at once in a child process (a child runs only its role, see
/// [`child_roles!`](crate::child_roles)).
#[macro_export]
macro_rules! parent_only {
    () => {
        if $crate::procs::role().is_some() {
            return;
        }
    };
}

/// The `child_entry` test of a multi-process test file: in a child
/// spawned with a role, run that role's function; in the parent (no role,
/// or a role of another file) do nothing.
#[macro_export]
macro_rules! child_roles {
    ($($role:pat => $run:expr),+ $(,)?) => {
        #[test]
        fn child_entry() {
            match $crate::procs::role().as_deref() {
                $(Some($role) => $run(),)+
                _ => {}
            }
        }
    };
}

/// In a child: run the caller's one-argument macro `$body` with the engine
/// module the parent chose in `ENGINE` (`ours`, else `stock`; both must be
/// in scope at the call site).
#[macro_export]
macro_rules! on_engine {
    ($body:ident) => {
        match $crate::procs::param("ENGINE").as_str() {
            "ours" => $body!(ours),
            _ => $body!(stock),
        }
    };
}

/// Pages in use by the newest snapshot of a data file: `last_pg + 1`,
/// read from the meta page with the larger txnid (16-byte page header
/// layouts; last_pg at byte 136, txnid at byte 144 of a meta page).
pub fn file_pages(data_file: &std::path::Path) -> u64 {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(data_file).expect("open data file");
    let mut m0 = [0u8; 152];
    f.read_exact_at(&mut m0, 0).expect("read meta 0");
    let psize = u32::from_le_bytes(m0[40..44].try_into().unwrap()) as u64;
    let mut m1 = [0u8; 152];
    f.read_exact_at(&mut m1, psize).expect("read meta 1");
    let t = |m: &[u8; 152]| u64::from_le_bytes(m[144..152].try_into().unwrap());
    let m = if t(&m1) > t(&m0) { m1 } else { m0 };
    u64::from_le_bytes(m[136..144].try_into().unwrap()) + 1
}

/// Our engine and stock LMDB through the two-engine kit's driver (raw
/// handles, raw return codes), the same code for both, so the stock-LMDB
/// validation of each expectation is fair.
pub use dlmdb_kit::{ours, stock};
