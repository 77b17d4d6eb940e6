//! Peers for the live-store tests: separate processes of each LMDB family
//! driven line by line over one environment.
//!
//! * [`Family::Lmdb09`]: `tests/peers/lmdb_peer.c` built against the
//!   system's liblmdb (Debian's LMDB 0.9, lock file version 1);
//! * [`Family::Master`]: this test binary re-executed as a child serving the
//!   same protocol on `lmdb-master-sys` (LMDB 1.0 line, lock version 2);
//! * [`Family::Ours`]: the same child on our engine.
//!
//! The protocol is described at the top of `lmdb_peer.c`; [`serve`] is its
//! Rust implementation. Every answer is awaited with a deadline, so a test
//! never hangs on a peer.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::sync::OnceLock;
use std::time::Duration;

use crate::procs;

/// Which LMDB a peer process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Lmdb09,
    Master,
    Ours,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Lmdb09 => "lmdb-0.9",
            Family::Master => "lmdb-master",
            Family::Ours => "dlmdb",
        }
    }
}

/// Role name of the Rust peer child (the calling test binary must dispatch
/// it to [`serve`] from its `child_entry` test).
pub const PEER_ROLE: &str = "live_peer";

/// Role name of a child that holds a shared lock on byte 0 of the file
/// named by its `PATH` parameter (as every process using an environment
/// does to its lock file) without any LMDB; dispatch it to
/// [`hold_lock_byte`].
pub const HOLD_LOCK_BYTE_ROLE: &str = "hold_lock_byte";

/// Child: hold a shared fcntl lock on byte 0 of `PATH`, report `holding`,
/// then wait to be killed.
pub fn hold_lock_byte() {
    use std::os::unix::io::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(procs::param("PATH"))
        .unwrap();
    // SAFETY: plain fcntl on an open descriptor.
    let rc = unsafe {
        let mut fl: libc::flock = std::mem::zeroed();
        fl.l_type = libc::F_RDLCK as i16;
        fl.l_whence = libc::SEEK_SET as i16;
        fl.l_start = 0;
        fl.l_len = 1;
        libc::fcntl(f.as_raw_fd(), libc::F_SETLK, &fl)
    };
    assert_eq!(rc, 0, "lock byte 0");
    procs::report("holding");
    std::thread::sleep(Duration::from_secs(120));
}

/// Start a [`HOLD_LOCK_BYTE_ROLE`] child on the lock file of data file
/// `data` and wait until it holds the byte: from then on the lock file
/// counts as in use, so no opener may re-initialise it.
pub fn hold_lock_file(data: &Path) -> procs::Child {
    let holder = procs::spawn(
        "child_entry",
        HOLD_LOCK_BYTE_ROLE,
        &[("PATH", lock_file(data).display().to_string())],
    );
    holder.expect("holding", Duration::from_secs(30));
    holder
}

/// The stock families available here (LMDB 0.9 needs a C compiler and
/// liblmdb; CI installs both, and there a missing one is an error).
pub fn stock_families() -> Vec<Family> {
    let mut v = vec![Family::Master];
    if lmdb09_peer_binary().is_some() {
        v.insert(0, Family::Lmdb09);
    } else if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI must be able to build the LMDB 0.9 peer (cc, liblmdb-dev)");
    }
    v
}

/// Lock file of the store whose data file is `data` (`<data>-lock`).
pub fn lock_file(data: &Path) -> PathBuf {
    let mut l = data.as_os_str().to_owned();
    l.push("-lock");
    PathBuf::from(l)
}

/// The format word of the lock file of data file `data`.
pub fn lock_word(data: &Path) -> u32 {
    let b = std::fs::read(lock_file(data)).unwrap();
    dlmdb_format::lock::format_word(&b).unwrap()
}

/// Overwrite the format word of the lock file of data file `data`.
pub fn set_lock_word(data: &Path, word: u32) {
    let lock = lock_file(data);
    let mut b = std::fs::read(&lock).unwrap();
    dlmdb_format::lock::set_format_word(&mut b, word).unwrap();
    std::fs::write(&lock, &b).unwrap();
}

/// Build `tests/peers/lmdb_peer.c` against the system liblmdb once per test
/// binary; `None` (with a note) when no C compiler or liblmdb is available.
pub fn lmdb09_peer_binary() -> Option<PathBuf> {
    static BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    BIN.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/lmdb_peer.c");
        let out = std::env::temp_dir().join(format!("dlmdb-lmdb09-peer-{}", std::process::id()));
        let st = Command::new("cc")
            .args(["-O1", "-Wall", "-Werror", "-o"])
            .arg(&out)
            .arg(&src)
            .arg("-llmdb")
            .status();
        match st {
            Ok(s) if s.success() => Some(out),
            other => {
                crate::skip_note(&format!("cannot build the LMDB 0.9 peer: {other:?}"));
                None
            }
        }
    })
    .clone()
}

/// A peer process and its answer lines.
pub struct Peer {
    pub family: Family,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

/// Deadline for one answer (a write txn waiting for the other family's
/// writer mutex answers when it gets it; tests that expect a wait use
/// [`Peer::send`] and [`Peer::answer`] with their own deadline).
pub const ANSWER: Duration = Duration::from_secs(30);

impl Peer {
    /// Start a peer of `family` (`Lmdb09` needs [`lmdb09_peer_binary`]).
    /// `vars` are extra environment variables for the process.
    pub fn spawn(family: Family, vars: &[(&str, &str)]) -> Peer {
        let mut cmd = match family {
            Family::Lmdb09 => Command::new(lmdb09_peer_binary().expect("LMDB 0.9 peer")),
            Family::Master | Family::Ours => {
                let mut c = Command::new(std::env::current_exe().unwrap());
                c.args([
                    "child_entry",
                    "--exact",
                    "--nocapture",
                    "--test-threads=1",
                    "-q",
                ])
                .env(procs::ROLE_VAR, PEER_ROLE)
                .env_remove("RUST_TEST_THREADS")
                .env(
                    "DLMDB_CHILD_ENGINE",
                    if family == Family::Ours {
                        "ours"
                    } else {
                        "stock"
                    },
                );
                c
            }
        };
        for (k, v) in vars {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("start peer");
        let lines = procs::reported_lines(child.stdout.take().unwrap());
        Peer {
            family,
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Send one command without waiting for its answer.
    pub fn send(&mut self, line: &str) {
        let w = self.stdin.as_mut().expect("peer stdin");
        writeln!(w, "{line}")
            .and_then(|_| w.flush())
            .unwrap_or_else(|e| panic!("{}: cannot send {line:?}: {e}", self.family.name()));
    }

    /// The next answer within `d`: `Ok(rest)` for "ok rest", `Err(rc)` for
    /// "err rc ...". Panics on timeout.
    pub fn answer(&self, what: &str, d: Duration) -> Result<String, i32> {
        let line = self.lines.recv_timeout(d).unwrap_or_else(|e| {
            panic!(
                "{}: no answer to {what:?} within {d:?} ({e:?})",
                self.family.name()
            )
        });
        Self::parse(&line)
    }

    /// The next answer if one arrives within `d` (None otherwise).
    pub fn try_answer(&self, d: Duration) -> Option<Result<String, i32>> {
        self.lines.recv_timeout(d).ok().map(|l| Self::parse(&l))
    }

    fn parse(line: &str) -> Result<String, i32> {
        if let Some(rest) = line.strip_prefix("ok") {
            return Ok(rest.trim_start().to_string());
        }
        let rc = line
            .strip_prefix("err ")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("peer answer not understood: {line:?}"));
        Err(rc)
    }

    /// Send a command and wait for its answer.
    pub fn cmd(&mut self, line: &str) -> Result<String, i32> {
        self.send(line);
        self.answer(line, ANSWER)
    }

    /// [`Peer::cmd`] that must succeed.
    pub fn ok(&mut self, line: &str) -> String {
        let fam = self.family.name();
        self.cmd(line)
            .unwrap_or_else(|rc| panic!("{fam}: {line:?} failed with {rc}"))
    }

    pub fn open(&mut self, path: &Path, mapsize: usize) -> Result<String, i32> {
        self.cmd(&format!("open {} {mapsize}", path.display()))
    }

    pub fn put(&mut self, k: &[u8], v: &[u8]) {
        self.ok(&format!("put {} {}", hex_or_dash(k), hex_or_dash(v)));
    }

    pub fn del(&mut self, k: &[u8]) -> bool {
        self.ok(&format!("del {}", hex_or_dash(k))) == "1"
    }

    pub fn get(&mut self, k: &[u8]) -> Option<Vec<u8>> {
        match self.ok(&format!("get {}", hex_or_dash(k))).as_str() {
            "-" => None,
            "=" => Some(Vec::new()),
            h => Some(hex::decode(h).expect("hex value")),
        }
    }

    /// (entries, digest) of the main DB as the peer sees it.
    pub fn digest(&mut self) -> (u64, u64) {
        let a = self.ok("digest");
        let mut it = a.split(' ');
        let n = it.next().unwrap().parse().unwrap();
        let h = u64::from_str_radix(it.next().unwrap(), 16).unwrap();
        (n, h)
    }

    /// SIGKILL the peer and reap it.
    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Ask the peer to close its environment and exit; wait for it.
    pub fn quit(mut self) {
        self.send("quit");
        drop(self.stdin.take());
        for _ in 0..2000 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("{}: did not exit after quit", self.family.name());
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn hex_or_dash(b: &[u8]) -> String {
    if b.is_empty() {
        "-".into()
    } else {
        hex::encode(b)
    }
}

/// Digest of the main DB's pairs, as the peers compute it.
pub fn digest_of(pairs: &[crate::Pair]) -> u64 {
    procs::digest([("", pairs)])
}

/// Serve the peer protocol on stdin/stdout with the engine the parent chose
/// (`DLMDB_CHILD_ENGINE`: `ours` or `stock`). Called from `child_entry`.
pub fn serve() {
    macro_rules! go {
        ($m:ident) => {{
            use crate::procs::$m as m;
            let out = |s: String| procs::report(&s);
            let err = |rc: i32| procs::report(&format!("err {rc} {}", m::strerror(rc)));
            let mut env: Option<m::Env> = None;
            let mut rtxn: Option<m::Txn> = None;
            let mut wtxn: Option<m::Txn> = None;
            let stdin = std::io::stdin();
            for line in stdin.lock().lines() {
                let Ok(line) = line else { break };
                let a: Vec<&str> = line.split_whitespace().collect();
                if a.is_empty() {
                    continue;
                }
                let unhex = |s: &str| -> Vec<u8> {
                    if s == "-" {
                        Vec::new()
                    } else {
                        hex::decode(s).expect("hex")
                    }
                };
                match (a[0], env.as_ref()) {
                    ("quit", _) => break,
                    ("open", _) if a.len() == 3 => {
                        let map: usize = a[2].parse().unwrap();
                        // The main DB's comparators are set up when it is
                        // opened once (stock LMDB needs this before use).
                        let opened = m::Env::open_file(Path::new(a[1]), 0, 0, map).and_then(|e| {
                            e.begin(None, m::ffi::MDB_RDONLY)?.open_db(None, 0)?;
                            Ok(e)
                        });
                        match opened {
                            Ok(e) => {
                                env = Some(e);
                                out("ok".into());
                            }
                            Err(rc) => err(rc),
                        }
                    }
                    (_, None) => err(libc::EINVAL),
                    ("rbegin", Some(e)) => match e.begin(None, m::ffi::MDB_RDONLY) {
                        Ok(t) => {
                            out(format!("ok {}", t.id()));
                            rtxn = Some(t);
                        }
                        Err(rc) => err(rc),
                    },
                    ("rend", _) => {
                        rtxn = None;
                        out("ok".into());
                    }
                    ("wbegin", Some(e)) => match e.begin(None, 0) {
                        Ok(t) => {
                            out(format!("ok {}", t.id()));
                            wtxn = Some(t);
                        }
                        Err(rc) => err(rc),
                    },
                    ("put", _) if a.len() == 3 && wtxn.is_some() => {
                        match wtxn.as_ref().unwrap().put(1, &unhex(a[1]), &unhex(a[2]), 0) {
                            Ok(()) => out("ok".into()),
                            Err(rc) => err(rc),
                        }
                    }
                    ("del", _) if a.len() == 2 && wtxn.is_some() => {
                        match wtxn.as_ref().unwrap().del(1, &unhex(a[1]), None) {
                            Ok(d) => out(format!("ok {}", d as u8)),
                            Err(rc) => err(rc),
                        }
                    }
                    ("commit", _) if wtxn.is_some() => {
                        let t = wtxn.take().unwrap();
                        let id = t.id();
                        match t.commit() {
                            Ok(()) => out(format!("ok {id}")),
                            Err(rc) => err(rc),
                        }
                    }
                    ("abort", _) if wtxn.is_some() => {
                        wtxn = None;
                        out("ok".into());
                    }
                    // Reads: in the open read txn, else in a fresh one.
                    (cmd @ ("get" | "digest"), Some(e)) if cmd == "digest" || a.len() == 2 => {
                        let fresh;
                        let t = match rtxn.as_ref() {
                            Some(t) => t,
                            None => match e.begin(None, m::ffi::MDB_RDONLY) {
                                Ok(t) => {
                                    fresh = t;
                                    &fresh
                                }
                                Err(rc) => {
                                    err(rc);
                                    continue;
                                }
                            },
                        };
                        if cmd == "get" {
                            match t.get(1, &unhex(a[1])) {
                                Ok(None) => out("ok -".into()),
                                Ok(Some(v)) if v.is_empty() => out("ok =".into()),
                                Ok(Some(v)) => out(format!("ok {}", hex::encode(v))),
                                Err(rc) => err(rc),
                            }
                        } else {
                            match t.walk(1, true) {
                                Ok(p) => out(format!("ok {} {:016x}", p.len(), digest_of(&p))),
                                Err(rc) => err(rc),
                            }
                        }
                    }
                    ("readercheck", Some(e)) => match e.reader_check() {
                        Ok(d) => out(format!("ok {d}")),
                        Err(rc) => err(rc),
                    },
                    ("info", Some(e)) => match e.info() {
                        Ok(i) => out(format!("ok {} {}", i.last_txnid, i.num_readers)),
                        Err(rc) => err(rc),
                    },
                    _ => err(libc::EINVAL),
                }
            }
            drop(wtxn);
            drop(rtxn);
            drop(env);
        }};
    }
    crate::on_engine!(go);
}

/// Cancels its [`watchdog`] when dropped.
pub struct Watchdog(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Release);
    }
}

/// Abort the test process (after naming `what`, e.g. the test and its seed)
/// if the returned guard is still alive after `limit`: an engine call that
/// blocks forever (a misread lock file can do that) fails instead of hanging.
pub fn watchdog(what: String, limit: Duration) -> Watchdog {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    std::thread::spawn(move || {
        let end = std::time::Instant::now() + limit;
        while std::time::Instant::now() < end {
            if flag.load(std::sync::atomic::Ordering::Acquire) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Straight to the stderr stream: the test harness captures the
        // print macros, and the capture dies with the process.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "{what}: still running after {limit:?}; aborting"
        );
        std::process::abort();
    });
    Watchdog(done)
}
