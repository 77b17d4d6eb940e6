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
/// child reads them back as `PATH` and `ENGINE`, see [`engine_roles!`]).
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

/// The `child_entry` test of a multi-process test file whose children work
/// on a store with the engine the parent chose (see [`spawn_on_store`]):
/// in a child spawned with one of these roles, run that role's body with
/// the engine's driver module (`ours` or `stock`) under the first name
/// and the store's data file (`PATH`) under the second; in the parent (no
/// role, or a role of another file) do nothing.
#[macro_export]
macro_rules! engine_roles {
    ($($role:literal => |$m:ident, $path:ident| $body:block)+) => {
        #[test]
        fn child_entry() {
            let Some(role) = $crate::procs::role() else {
                return;
            };
            let engine = $crate::procs::param("ENGINE");
            match (role.as_str(), engine.as_str()) {
                $(
                    ($role, "ours") => {
                        use $crate::procs::ours as $m;
                        let $path = std::path::PathBuf::from($crate::procs::param("PATH"));
                        $body
                    }
                    ($role, _) => {
                        use $crate::procs::stock as $m;
                        let $path = std::path::PathBuf::from($crate::procs::param("PATH"));
                        $body
                    }
                )+
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

/// One test body run as two tests of a multi-process test file, the first
/// on our engine and the second on stock LMDB (the oracle). In the body,
/// the first name in parentheses is the engine's driver module
/// ([`ours`] or [`stock`]) and the optional second one its name as a
/// `&str` (`"ours"` or `"stock"`, as [`spawn_on_store`] takes it). Like
/// every parent test, both return at once in a child process.
///
/// ```ignore
/// dlmdb_tests::engine_tests! {
///     /// What the test checks.
///     fn readers_ours, readers_stock(m, engine) {
///         let env = m::Env::open_file(&path, 0, 2, MAP).unwrap();
///     }
/// }
/// ```
#[macro_export]
macro_rules! engine_tests {
    ($(#[$attr:meta])* fn $ours:ident, $stock:ident($m:ident $(, $engine:ident)?) $body:block) => {
        $crate::engine_tests!(@on ours $(#[$attr])* fn $ours($m $(, $engine)?) $body);
        $crate::engine_tests!(@on stock $(#[$attr])* fn $stock($m $(, $engine)?) $body);
    };
    (@on $which:ident $(#[$attr:meta])* fn $name:ident($m:ident $(, $engine:ident)?) $body:block) => {
        $(#[$attr])*
        #[test]
        fn $name() {
            $crate::parent_only!();
            use $crate::procs::$which as $m;
            $(let $engine = stringify!($which);)?
            $body
        }
    };
}

/// Pages in use by the newest snapshot of a data file: `last_pg + 1` of
/// the meta page with the larger txnid.
pub fn file_pages(data_file: &std::path::Path) -> u64 {
    crate::newest_meta(data_file).1.last_pg + 1
}

/// Our engine and stock LMDB through the two-engine kit's driver (raw
/// handles, raw return codes), the same code for both, so the stock-LMDB
/// validation of each expectation is fair.
pub use dlmdb_kit::{ours, stock};
