//! The benchmarks' face of the driver: [`Eng`], static calls on opaque
//! handles with `anyhow` errors, implemented by `ours::Ours` and
//! `stock::Lmdb` from the one driver body. The timed loops are generic over
//! `E: Eng`, so both engines' calls are monomorphised and inlined alike.
//! Handles are raw pointers; every caller closes what it opens, in order.

use std::ffi::c_void;
use std::path::Path;

use anyhow::{bail, Result};

/// Our engine's marker.
pub use crate::ours::Ours as OursE;
/// Stock LMDB's marker.
pub use crate::stock::Lmdb as LmdbE;
pub use crate::DbStat;

/// Flag and op values fixed by the C API contract (identical in both
/// engines; written down once, in `dlmdb-sys`).
pub mod k {
    pub use dlmdb_sys::{
        MDB_COUNTED, MDB_COUNT_LOWER_INCL, MDB_COUNT_UPPER_INCL, MDB_CREATE, MDB_DUPFIXED,
        MDB_DUPSORT, MDB_FIRST, MDB_FIRST_DUP, MDB_GET_BOTH, MDB_GET_CURRENT, MDB_GET_MULTIPLE,
        MDB_NEXT, MDB_NEXT_DUP, MDB_NEXT_MULTIPLE, MDB_NEXT_NODUP, MDB_NOLOCK, MDB_NOMETASYNC,
        MDB_NOSUBDIR, MDB_NOSYNC, MDB_NOTFOUND, MDB_PREFIX_COMPRESSION, MDB_RDONLY, MDB_SET,
        MDB_SET_RANGE,
    };
}

/// Opaque engine handles. The engine owns what they point to; the suites
/// close every handle they open before the env that holds it.
pub type Env = *mut c_void;
pub type Txn = *mut c_void;
pub type Cur = *mut c_void;

/// An env pointer that may be shared with reader/writer threads. Both
/// engines allow concurrent transactions from different threads on one env
/// (each thread uses only the txns it began).
#[derive(Clone, Copy)]
pub struct SharedEnv(pub Env);
// SAFETY: see above — the C env is thread-safe for per-thread txns.
unsafe impl Send for SharedEnv {}
unsafe impl Sync for SharedEnv {}

/// Thin wrappers over one engine's C API. Returned slices point into the
/// map and are valid only until the txn/cursor they came from moves or ends;
/// the suites use them immediately.
pub trait Eng: Send + Sync + 'static {
    const LABEL: &'static str;
    fn version() -> String;
    fn env_open(dir: &Path, flags: u32, maxdbs: u32, map_size: usize) -> Result<Env>;
    fn env_close(env: Env);
    fn txn_begin(env: Env, parent: Txn, flags: u32) -> Result<Txn>;
    fn txn_commit(txn: Txn) -> Result<()>;
    fn txn_abort(txn: Txn);
    fn txn_reset(txn: Txn);
    fn txn_renew(txn: Txn) -> Result<()>;
    /// `name` None = main DB.
    fn dbi_open(txn: Txn, name: Option<&str>, flags: u32) -> Result<u32>;
    fn put(txn: Txn, dbi: u32, key: &[u8], val: &[u8], flags: u32) -> Result<()>;
    fn get<'a>(txn: Txn, dbi: u32, key: &[u8]) -> Result<Option<&'a [u8]>>;
    fn entries(txn: Txn, dbi: u32) -> Result<u64>;
    fn cursor_open(txn: Txn, dbi: u32) -> Result<Cur>;
    fn cursor_close(cur: Cur);
    /// `mdb_cursor_get`; `key`/`val` are inputs where the op reads them.
    fn cursor_get<'a>(
        cur: Cur,
        key: &[u8],
        val: &[u8],
        op: u32,
    ) -> Result<Option<(&'a [u8], &'a [u8])>>;
    fn cursor_count(cur: Cur) -> Result<u64>;
    /// `mdb_cursor_put`.
    fn cursor_put(cur: Cur, key: &[u8], val: &[u8], flags: u32) -> Result<()>;
    /// `mdb_del`; `val` None deletes the key (all its values). `Ok(false)`
    /// on `MDB_NOTFOUND`.
    fn del(txn: Txn, dbi: u32, key: &[u8], val: Option<&[u8]>) -> Result<bool>;
    /// `mdb_cursor_del` at the cursor's position.
    fn cursor_del(cur: Cur, flags: u32) -> Result<()>;
    /// `mdb_stat` of one DB.
    fn stat(txn: Txn, dbi: u32) -> Result<DbStat>;
    /// `mdb_env_info`'s last used page number.
    fn last_pgno(env: Env) -> Result<u64>;
    /// `mdb_env_sync(env, force)`.
    fn env_sync(env: Env, force: bool) -> Result<()>;
    /// `mdb_env_copy2` into an existing directory.
    fn env_copy2(env: Env, dir: &Path, flags: u32) -> Result<()>;
}

/// `dir` as a C string (UTF-8 paths only, as the benchmarks make them).
pub fn c_path(dir: &Path) -> Result<std::ffi::CString> {
    let Some(s) = dir.to_str() else {
        bail!("path is not UTF-8: {}", dir.display())
    };
    Ok(std::ffi::CString::new(s)?)
}

/// Closes an env (and removes its directory) when dropped, so early `?`
/// returns do not leak maps on a tmpfs.
pub struct EnvGuard<E: Eng> {
    pub env: Env,
    dir: std::path::PathBuf,
    _e: std::marker::PhantomData<E>,
}

impl<E: Eng> EnvGuard<E> {
    pub fn open(dir: &Path, flags: u32, maxdbs: u32, map_size: usize) -> Result<Self> {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir)?;
        let env = E::env_open(dir, flags, maxdbs, map_size)?;
        Ok(EnvGuard {
            env,
            dir: dir.to_path_buf(),
            _e: std::marker::PhantomData,
        })
    }
}

impl<E: Eng> Drop for EnvGuard<E> {
    fn drop(&mut self) {
        E::env_close(self.env);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Open a DB (`None`: the main DB) in its own committed write txn.
fn open_db_committed<E: Eng>(env: Env, name: Option<&str>, flags: u32) -> Result<u32> {
    let t = E::txn_begin(env, std::ptr::null_mut(), 0)?;
    match E::dbi_open(t, name, flags) {
        Ok(d) => {
            E::txn_commit(t)?;
            Ok(d)
        }
        Err(e) => {
            E::txn_abort(t);
            Err(e)
        }
    }
}

/// Open the main (unnamed) DB in its own committed write txn.
pub fn open_main_db<E: Eng>(env: Env) -> Result<u32> {
    open_db_committed::<E>(env, None, 0)
}

/// Open (creating) a named DB in its own committed write txn.
pub fn create_db<E: Eng>(env: Env, name: &str, flags: u32) -> Result<u32> {
    open_db_committed::<E>(env, Some(name), flags | k::MDB_CREATE)
}
