//! The stateful driver the peers workloads use, built on the two-engine
//! kit's raw driver ([`dlmdb_kit::eng::Eng`]).
//!
//! [`Backend`] is the whole surface the peers workloads use: at most one
//! open transaction and one cursor at a time, so each per-op call is a
//! single FFI call. [`Driver`] implements it once for any [`Eng`]; `Ours`
//! and `Lmdb` are that driver over our engine (`dlmdb-sys`, `dlmdb_*`
//! symbols) and over stock LMDB (`lmdb-master-sys`). Workloads are generic
//! over `B: Backend`, so every call is monomorphised and inlined the same
//! way for both engines; there is no dynamic dispatch in timed loops.

use std::path::Path;
use std::ptr;

use anyhow::Result;

use dlmdb_kit::eng::{k, open_main_db, Cur, Eng, Env, LmdbE, OursE, Txn};

/// How an environment is opened for a run. Identical for both engines except
/// `ours_extra_flags`, which carries dlmdb-only format flags (none by default).
#[derive(Clone, Debug)]
pub struct EnvConfig {
    pub map_size: usize,
    /// `mdb_env_open` flags given to both engines (0 = fully durable default).
    pub env_flags: u32,
    /// Extra `mdb_env_open` flags given to our engine only.
    pub ours_extra_flags: u32,
}

/// Cursor operations the workloads use.
#[derive(Clone, Copy, Debug)]
pub enum CursorOp {
    First,
    Next,
    SetRange,
}

impl CursorOp {
    #[inline(always)]
    fn raw(self) -> u32 {
        match self {
            CursorOp::First => k::MDB_FIRST,
            CursorOp::Next => k::MDB_NEXT,
            CursorOp::SetRange => k::MDB_SET_RANGE,
        }
    }
}

/// The minimal engine surface the workloads drive.
pub trait Backend: Sized {
    /// Short label used in reports ("ours" / "lmdb").
    const LABEL: &'static str;

    /// Version string reported by the library's `mdb_version`.
    fn version() -> String;
    /// Create and open an environment in `dir` (which must exist) and open the
    /// main database handle.
    fn open(dir: &Path, cfg: &EnvConfig) -> Result<Self>;
    fn begin(&mut self, read_only: bool) -> Result<()>;
    fn commit(&mut self) -> Result<()>;
    fn abort(&mut self);
    /// `mdb_put` with flags 0.
    fn put(&mut self, key: &[u8], val: &[u8]) -> Result<()>;
    /// `mdb_get`; `None` on `MDB_NOTFOUND`.
    fn get(&mut self, key: &[u8]) -> Result<Option<&[u8]>>;
    fn cursor_open(&mut self) -> Result<()>;
    fn cursor_close(&mut self);
    /// `mdb_cursor_put` with flags 0.
    fn cursor_put(&mut self, key: &[u8], val: &[u8]) -> Result<()>;
    /// `mdb_cursor_get`; `key` is the input key for `SetRange`.
    fn cursor_get(&mut self, op: CursorOp, key: &[u8]) -> Result<Option<(&[u8], &[u8])>>;
    /// `ms_entries` of the main DB in the current transaction.
    fn entries(&mut self) -> Result<u64>;
}

/// One environment, its main DB, and at most one txn and one cursor.
pub struct Driver<E: Eng> {
    env: Env,
    txn: Txn,
    cur: Cur,
    dbi: u32,
    _e: std::marker::PhantomData<E>,
}

/// Our engine (stock LMDB in a `DLMDB_BENCH_LMDB_ONLY=1` build, see
/// build.rs).
#[cfg(not(ours_is_lmdb))]
pub type Ours = Driver<OursE>;
#[cfg(ours_is_lmdb)]
pub type Ours = Driver<LmdbE>;
/// Stock LMDB.
pub type Lmdb = Driver<LmdbE>;

/// True in the harness self-test build, where "ours" is stock LMDB too.
pub const OURS_IS_LMDB: bool = cfg!(ours_is_lmdb);

impl<E: Eng> Backend for Driver<E> {
    const LABEL: &'static str = E::LABEL;

    fn version() -> String {
        E::version()
    }

    fn open(dir: &Path, cfg: &EnvConfig) -> Result<Self> {
        let mut flags = cfg.env_flags;
        if E::LABEL == OursE::LABEL {
            flags |= cfg.ours_extra_flags;
        }
        let env = E::env_open(dir, flags, 0, cfg.map_size)?;
        let mut me = Driver {
            env,
            txn: ptr::null_mut(),
            cur: ptr::null_mut(),
            dbi: 0,
            _e: std::marker::PhantomData,
        };
        me.dbi = open_main_db::<E>(env)?;
        Ok(me)
    }

    #[inline]
    fn begin(&mut self, read_only: bool) -> Result<()> {
        debug_assert!(self.txn.is_null());
        let flags = if read_only { k::MDB_RDONLY } else { 0 };
        self.txn = E::txn_begin(self.env, ptr::null_mut(), flags)?;
        Ok(())
    }

    #[inline]
    fn commit(&mut self) -> Result<()> {
        self.cursor_close();
        let t = std::mem::replace(&mut self.txn, ptr::null_mut());
        E::txn_commit(t)
    }

    fn abort(&mut self) {
        self.cursor_close();
        let t = std::mem::replace(&mut self.txn, ptr::null_mut());
        if !t.is_null() {
            E::txn_abort(t);
        }
    }

    #[inline(always)]
    fn put(&mut self, key: &[u8], val: &[u8]) -> Result<()> {
        E::put(self.txn, self.dbi, key, val, 0)
    }

    #[inline(always)]
    fn get(&mut self, key: &[u8]) -> Result<Option<&[u8]>> {
        E::get(self.txn, self.dbi, key)
    }

    fn cursor_open(&mut self) -> Result<()> {
        debug_assert!(self.cur.is_null());
        self.cur = E::cursor_open(self.txn, self.dbi)?;
        Ok(())
    }

    fn cursor_close(&mut self) {
        let cur = std::mem::replace(&mut self.cur, ptr::null_mut());
        if !cur.is_null() {
            E::cursor_close(cur);
        }
    }

    #[inline(always)]
    fn cursor_put(&mut self, key: &[u8], val: &[u8]) -> Result<()> {
        E::cursor_put(self.cur, key, val, 0)
    }

    #[inline(always)]
    fn cursor_get(&mut self, op: CursorOp, key: &[u8]) -> Result<Option<(&[u8], &[u8])>> {
        E::cursor_get(self.cur, key, &[], op.raw())
    }

    fn entries(&mut self) -> Result<u64> {
        E::entries(self.txn, self.dbi)
    }
}

impl<E: Eng> Drop for Driver<E> {
    fn drop(&mut self) {
        self.abort();
        E::env_close(self.env);
    }
}
