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
//! **Raw wrapper.** [`ours`] and [`stock`] are the same small wrapper over
//! `dlmdb-sys` and `lmdb-master-sys` (raw handles, raw return codes), with
//! the calls these tests need that the shared `wrap.rs` wrapper lacks:
//! reader table, copies, map size, sync and flags, explicit txn flags and
//! parents, cursors that can outlive a child transaction. Using one body for
//! both engines keeps the stock-LMDB validation of each expectation fair.

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
    let out = child.stdout.take().unwrap();
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

/// The raw wrapper body, instantiated for both engines below.
#[macro_export]
#[doc(hidden)]
macro_rules! procs_raw_wrapper {
    ($ffi:ident) => {
        use std::ffi::{CStr, CString};
        use std::os::raw::{c_char, c_int, c_void};
        use std::os::unix::ffi::OsStrExt;
        use std::path::Path;
        use std::ptr;

        pub use ::$ffi as ffi;

        /// Result with a raw return code as the error.
        pub type Res<T> = Result<T, i32>;

        $crate::raw_val_helpers!(pub);

        pub fn strerror(rc: i32) -> String {
            // SAFETY: mdb_strerror returns a static C string.
            unsafe {
                CStr::from_ptr(ffi::mdb_strerror(rc))
                    .to_string_lossy()
                    .into_owned()
            }
        }

        /// Options for [`Env::open_with`].
        #[derive(Debug, Clone, Copy, Default)]
        pub struct Opts {
            pub flags: u32,
            pub maxdbs: u32,
            /// 0: not set (the file's size is used).
            pub mapsize: usize,
            /// 0: default (126).
            pub maxreaders: u32,
        }

        /// An open environment (raw handle). `Send + Sync` like `MDB_env`.
        pub struct Env {
            pub env: *mut ffi::MDB_env,
        }
        unsafe impl Send for Env {}
        unsafe impl Sync for Env {}

        impl Env {
            /// Open `path` (NULL when `None`, for MDB_INMEMORY) with mode 0644.
            pub fn open_with(path: Option<&Path>, o: Opts) -> Res<Env> {
                let cpath = path.map(|p| CString::new(p.as_os_str().as_bytes()).unwrap());
                let mut env = ptr::null_mut();
                // SAFETY: handle owned here; closed by Drop on failure.
                unsafe {
                    check(ffi::mdb_env_create(&mut env))?;
                    let this = Env { env };
                    if o.maxdbs != 0 {
                        check(ffi::mdb_env_set_maxdbs(env, o.maxdbs))?;
                    }
                    if o.mapsize != 0 {
                        check(ffi::mdb_env_set_mapsize(env, o.mapsize as _))?;
                    }
                    if o.maxreaders != 0 {
                        check(ffi::mdb_env_set_maxreaders(env, o.maxreaders))?;
                    }
                    check(ffi::mdb_env_open(
                        env,
                        cpath.as_ref().map_or(ptr::null(), |c| c.as_ptr()),
                        o.flags,
                        0o644,
                    ))?;
                    Ok(this)
                }
            }

            /// Single-file environment (`MDB_NOSUBDIR` added).
            pub fn open(path: &Path, flags: u32, maxdbs: u32, mapsize: usize) -> Res<Env> {
                Env::open_with(
                    Some(path),
                    Opts {
                        flags: flags | ffi::MDB_NOSUBDIR,
                        maxdbs,
                        mapsize,
                        maxreaders: 0,
                    },
                )
            }

            pub fn begin(&self, parent: Option<&Txn>, flags: u32) -> Res<Txn> {
                let mut t = ptr::null_mut();
                // SAFETY: live env; parent (if any) is a live write txn.
                check(unsafe {
                    ffi::mdb_txn_begin(
                        self.env,
                        parent.map_or(ptr::null_mut(), |p| p.txn),
                        flags,
                        &mut t,
                    )
                })?;
                Ok(Txn { txn: t })
            }
            pub fn ro(&self) -> Res<Txn> {
                self.begin(None, ffi::MDB_RDONLY)
            }
            pub fn rw(&self) -> Res<Txn> {
                self.begin(None, 0)
            }

            /// (last_pgno, last_txnid, mapsize, numreaders).
            pub fn info(&self) -> (u64, u64, u64, u32) {
                // SAFETY: plain data filled in by the engine.
                unsafe {
                    let mut i: ffi::MDB_envinfo = std::mem::zeroed();
                    assert_eq!(ffi::mdb_env_info(self.env, &mut i), 0);
                    (
                        i.me_last_pgno as u64,
                        i.me_last_txnid as u64,
                        i.me_mapsize as u64,
                        i.me_numreaders,
                    )
                }
            }
            pub fn set_mapsize(&self, size: usize) -> Res<()> {
                // SAFETY: caller has no txn of this env active.
                check(unsafe { ffi::mdb_env_set_mapsize(self.env, size as _) })
            }
            pub fn reader_check(&self) -> Res<i32> {
                let mut dead: c_int = -1;
                // SAFETY: live env.
                check(unsafe { ffi::mdb_reader_check(self.env, &mut dead) })?;
                Ok(dead)
            }
            /// Lines of `mdb_reader_list`, and its return value.
            pub fn reader_list(&self) -> (Vec<String>, i32) {
                unsafe extern "C" fn cb(msg: *const c_char, ctx: *mut c_void) -> c_int {
                    let v = &mut *(ctx as *mut Vec<String>);
                    v.push(CStr::from_ptr(msg).to_string_lossy().into_owned());
                    0
                }
                let mut v: Vec<String> = Vec::new();
                // SAFETY: the callback only appends to `v`.
                let rc = unsafe {
                    ffi::mdb_reader_list(self.env, Some(cb), &mut v as *mut _ as *mut c_void)
                };
                (v, rc)
            }
            pub fn copy2(&self, path: &Path, flags: u32) -> Res<()> {
                let c = CString::new(path.as_os_str().as_bytes()).unwrap();
                // SAFETY: live env.
                check(unsafe { ffi::mdb_env_copy2(self.env, c.as_ptr(), flags) })
            }
            pub fn copy(&self, path: &Path) -> Res<()> {
                let c = CString::new(path.as_os_str().as_bytes()).unwrap();
                // SAFETY: live env.
                check(unsafe { ffi::mdb_env_copy(self.env, c.as_ptr()) })
            }
            pub fn copyfd(&self, fd: i32) -> Res<()> {
                // SAFETY: fd is an open writable descriptor.
                check(unsafe { ffi::mdb_env_copyfd(self.env, fd as _) })
            }
            pub fn copyfd2(&self, fd: i32, flags: u32) -> Res<()> {
                // SAFETY: fd is an open writable descriptor.
                check(unsafe { ffi::mdb_env_copyfd2(self.env, fd as _, flags) })
            }
            pub fn sync(&self, force: bool) -> Res<()> {
                // SAFETY: live env.
                check(unsafe { ffi::mdb_env_sync(self.env, force as c_int) })
            }
            pub fn set_flags(&self, flags: u32, on: bool) -> Res<()> {
                // SAFETY: live env.
                check(unsafe { ffi::mdb_env_set_flags(self.env, flags, on as c_int) })
            }
            pub fn get_flags(&self) -> u32 {
                let mut f = 0;
                // SAFETY: live env.
                assert_eq!(unsafe { ffi::mdb_env_get_flags(self.env, &mut f) }, 0);
                f
            }
            pub fn maxreaders(&self) -> u32 {
                let mut n = 0;
                // SAFETY: live env.
                assert_eq!(unsafe { ffi::mdb_env_get_maxreaders(self.env, &mut n) }, 0);
                n
            }

            /// Open (creating if missing) the named DBs in one committed
            /// write txn; returns their handles.
            pub fn create_dbs(&self, names: &[(&str, u32)]) -> Res<Vec<u32>> {
                let t = self.rw()?;
                let mut v = Vec::new();
                for (n, f) in names {
                    v.push(t.open_db(Some(n), f | ffi::MDB_CREATE)?);
                }
                t.commit()?;
                Ok(v)
            }
            /// Open existing named DBs in one committed read txn.
            pub fn open_dbs(&self, names: &[&str]) -> Res<Vec<u32>> {
                let t = self.ro()?;
                let mut v = Vec::new();
                for n in names {
                    v.push(t.open_db(Some(n), 0)?);
                }
                t.commit()?;
                Ok(v)
            }
        }

        impl Drop for Env {
            fn drop(&mut self) {
                // SAFETY: callers end their txns first (tests are written so).
                unsafe { ffi::mdb_env_close(self.env) }
            }
        }

        /// A transaction (raw handle, no lifetime so a test can hold it
        /// across threads with MDB_NOTLS or hold a parent and a child).
        /// Dropped without commit = abort.
        pub struct Txn {
            pub txn: *mut ffi::MDB_txn,
        }
        unsafe impl Send for Txn {}

        impl Txn {
            pub fn id(&self) -> u64 {
                // SAFETY: live txn.
                unsafe { ffi::mdb_txn_id(self.txn) as u64 }
            }
            pub fn open_db(&self, name: Option<&str>, flags: u32) -> Res<u32> {
                let c = name.map(|n| CString::new(n).unwrap());
                let mut dbi = 0;
                // SAFETY: live txn.
                check(unsafe {
                    ffi::mdb_dbi_open(
                        self.txn,
                        c.as_ref().map_or(ptr::null(), |c| c.as_ptr()),
                        flags,
                        &mut dbi,
                    )
                })?;
                Ok(dbi)
            }
            pub fn get(&self, dbi: u32, key: &[u8]) -> Res<Option<Vec<u8>>> {
                let mut k = val(key);
                let mut d = empty_val();
                // SAFETY: live txn; copied at once.
                match unsafe { ffi::mdb_get(self.txn, dbi, &mut k, &mut d) } {
                    0 => Ok(Some(unsafe { owned(&d) })),
                    ffi::MDB_NOTFOUND => Ok(None),
                    e => Err(e),
                }
            }
            pub fn put(&self, dbi: u32, key: &[u8], data: &[u8], flags: u32) -> Res<()> {
                let mut k = val(key);
                let mut d = val(data);
                // SAFETY: live write txn.
                check(unsafe { ffi::mdb_put(self.txn, dbi, &mut k, &mut d, flags) })
            }
            /// Delete a key (all its duplicates) or, with `data`, one pair.
            pub fn del(&self, dbi: u32, key: &[u8], data: Option<&[u8]>) -> Res<bool> {
                let mut k = val(key);
                let mut d = data.map(val);
                // SAFETY: live write txn.
                match unsafe {
                    ffi::mdb_del(
                        self.txn,
                        dbi,
                        &mut k,
                        d.as_mut().map_or(ptr::null_mut(), |v| v as *mut _),
                    )
                } {
                    0 => Ok(true),
                    ffi::MDB_NOTFOUND => Ok(false),
                    e => Err(e),
                }
            }
            pub fn entries(&self, dbi: u32) -> Res<u64> {
                // SAFETY: plain data.
                unsafe {
                    let mut s: ffi::MDB_stat = std::mem::zeroed();
                    check(ffi::mdb_stat(self.txn, dbi, &mut s))?;
                    Ok(s.ms_entries as u64)
                }
            }
            /// Every pair (every duplicate) in cursor order.
            pub fn walk(&self, dbi: u32) -> Res<$crate::Pairs> {
                let mut c = Cursor::open(self, dbi)?;
                let mut out = Vec::new();
                let mut op = ffi::MDB_FIRST;
                loop {
                    match c.get(None, op) {
                        Ok(Some(p)) => out.push(p),
                        Ok(None) => return Ok(out),
                        Err(e) => return Err(e),
                    }
                    op = ffi::MDB_NEXT;
                }
            }
            pub fn commit(mut self) -> Res<()> {
                let t = std::mem::replace(&mut self.txn, ptr::null_mut());
                // SAFETY: commit frees the handle in every case.
                check(unsafe { ffi::mdb_txn_commit(t) })
            }
            pub fn abort(self) {}
            pub fn reset(&self) {
                // SAFETY: read-only txn.
                unsafe { ffi::mdb_txn_reset(self.txn) }
            }
            pub fn renew(&self) -> Res<()> {
                // SAFETY: reset read-only txn.
                check(unsafe { ffi::mdb_txn_renew(self.txn) })
            }
        }

        impl Drop for Txn {
            fn drop(&mut self) {
                if !self.txn.is_null() {
                    // SAFETY: still live.
                    unsafe { ffi::mdb_txn_abort(self.txn) }
                }
            }
        }

        /// A cursor. For write txns it must not be used (nor closed) after
        /// the txn ended: call [`Cursor::forget`] then.
        pub struct Cursor {
            pub cur: *mut ffi::MDB_cursor,
        }

        impl Cursor {
            pub fn open(txn: &Txn, dbi: u32) -> Res<Cursor> {
                let mut c = ptr::null_mut();
                // SAFETY: live txn.
                check(unsafe { ffi::mdb_cursor_open(txn.txn, dbi, &mut c) })?;
                Ok(Cursor { cur: c })
            }
            /// `Ok(None)` for MDB_NOTFOUND.
            pub fn get(&mut self, key: Option<&[u8]>, op: u32) -> Res<Option<$crate::Pair>> {
                let mut k = key.map_or_else(empty_val, val);
                let mut d = empty_val();
                // SAFETY: live cursor; results copied at once.
                match unsafe { ffi::mdb_cursor_get(self.cur, &mut k, &mut d, op as _) } {
                    0 => Ok(Some(unsafe { (owned(&k), owned(&d)) })),
                    ffi::MDB_NOTFOUND => Ok(None),
                    e => Err(e),
                }
            }
            pub fn put(&mut self, key: &[u8], data: &[u8], flags: u32) -> Res<()> {
                let mut k = val(key);
                let mut d = val(data);
                // SAFETY: live write cursor.
                check(unsafe { ffi::mdb_cursor_put(self.cur, &mut k, &mut d, flags) })
            }
            /// Drop the handle without closing it (its write txn freed it).
            pub fn forget(mut self) {
                self.cur = ptr::null_mut();
            }
        }

        impl Drop for Cursor {
            fn drop(&mut self) {
                if !self.cur.is_null() {
                    // SAFETY: the owning txn is still live (see type docs).
                    unsafe { ffi::mdb_cursor_close(self.cur) }
                }
            }
        }
    };
}

/// Our engine (`dlmdb-sys`).
pub mod ours {
    crate::procs_raw_wrapper!(dlmdb_sys);
}

/// Stock LMDB (`lmdb-master-sys`).
pub mod stock {
    crate::procs_raw_wrapper!(lmdb_master_sys);
}
