//! Environments: opening, settings, statistics, copies.

use crate::error::{check, Error, Result};
use crate::flags::{Database, DatabaseFlags, EnvFlags, EnvInfo, Layout, Stat};
use crate::txn::{RoTxn, RwTxn};
use dlmdb_sys as ffi;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Settings for opening an [`Env`]. Create with [`Env::builder`].
#[derive(Debug, Clone)]
pub struct EnvBuilder {
    map_size: Option<usize>,
    max_readers: Option<u32>,
    max_dbs: Option<u32>,
    flags: EnvFlags,
    mode: u32,
}

impl Default for EnvBuilder {
    fn default() -> Self {
        EnvBuilder {
            map_size: None,
            max_readers: None,
            max_dbs: None,
            flags: EnvFlags::empty(),
            mode: 0o644,
        }
    }
}

impl EnvBuilder {
    /// Maximum size of the data file in bytes (default: what the file says, 1 MiB for new files).
    pub fn map_size(mut self, bytes: usize) -> Self {
        self.map_size = Some(bytes);
        self
    }
    /// Number of reader slots (default 126).
    pub fn max_readers(mut self, n: u32) -> Self {
        self.max_readers = Some(n);
        self
    }
    /// Number of named databases allowed (default 0: only the main database).
    pub fn max_dbs(mut self, n: u32) -> Self {
        self.max_dbs = Some(n);
        self
    }
    /// Environment flags (replaces any set before).
    pub fn flags(mut self, flags: EnvFlags) -> Self {
        self.flags = flags;
        self
    }
    /// Permissions for newly created files (default 0o644).
    pub fn mode(mut self, mode: u32) -> Self {
        self.mode = mode;
        self
    }

    /// Open (or create) the environment at `path`: a directory, or the data
    /// file itself with [`EnvFlags::NO_SUB_DIR`].
    pub fn open(&self, path: impl AsRef<Path>) -> Result<Env> {
        let path = path.as_ref();
        let cpath = CString::new(path.as_os_str().as_bytes()).map_err(|_| Error::einval())?;
        let mut raw: *mut ffi::MDB_env = std::ptr::null_mut();
        // SAFETY: plain handle creation; on any later failure we close the handle.
        check(unsafe { ffi::mdb_env_create(&mut raw) })?;
        let guard = EnvGuard(raw);
        unsafe {
            if let Some(sz) = self.map_size {
                check(ffi::mdb_env_set_mapsize(raw, sz))?;
            }
            if let Some(n) = self.max_readers {
                check(ffi::mdb_env_set_maxreaders(raw, n))?;
            }
            if let Some(n) = self.max_dbs {
                check(ffi::mdb_env_set_maxdbs(raw, n))?;
            }
            check(ffi::mdb_env_open(
                raw,
                cpath.as_ptr(),
                self.flags.bits(),
                self.mode as ffi::mdb_mode_t,
            ))?;
        }
        std::mem::forget(guard);
        let layout = engine_layout(raw);
        Ok(Env {
            raw,
            path: path.to_path_buf(),
            open_flags: self.flags,
            layout,
            record_check: None,
            dbi_lock: Mutex::new(()),
        })
    }
}

/// Closes a half-opened environment on early return.
struct EnvGuard(*mut ffi::MDB_env);
impl Drop for EnvGuard {
    fn drop(&mut self) {
        // SAFETY: the handle was created and never handed out.
        unsafe { ffi::mdb_env_close(self.0) }
    }
}

/// An open environment: one data file holding the main database and any
/// named databases.
///
/// Transactions borrow the environment, so it cannot be closed (dropped)
/// while any of them is alive. `Env` is `Send + Sync`; transactions are not
/// `Send` (LMDB ties reader slots and the writer lock to the thread).
#[derive(Debug)]
pub struct Env {
    raw: *mut ffi::MDB_env,
    path: PathBuf,
    open_flags: EnvFlags,
    layout: Layout,
    /// Set by [`Env::open_detect`] to the reason for the layout: every named
    /// database opened by name then has its record checked (the open-time
    /// catalog check reads only a bounded prefix of the main database).
    pub(crate) record_check: Option<String>,
    /// `mdb_dbi_open` must not run in two transactions of one process at once.
    pub(crate) dbi_lock: Mutex<()>,
}

// SAFETY: MDB_env is designed for use from many threads; per-thread rules
// apply to transactions, which are !Send.
unsafe impl Send for Env {}
unsafe impl Sync for Env {}

impl Drop for Env {
    fn drop(&mut self) {
        // SAFETY: no transaction can outlive the borrow of `self`.
        unsafe { ffi::mdb_env_close(self.raw) }
    }
}

impl Env {
    /// Settings builder.
    pub fn builder() -> EnvBuilder {
        EnvBuilder::default()
    }

    /// Open with default settings.
    pub fn open(path: impl AsRef<Path>) -> Result<Env> {
        EnvBuilder::default().open(path)
    }

    /// The raw handle, for use with `dlmdb-sys`.
    pub fn raw(&self) -> *mut ffi::MDB_env {
        self.raw
    }

    /// The path the environment was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The data file: `path` itself with `NO_SUB_DIR`, else `path/data.mdb`.
    pub fn data_file(&self) -> PathBuf {
        data_file_of(&self.path, self.open_flags)
    }

    /// Flags given at open (including the dlmdb format flags, which the
    /// engine does not report back).
    pub fn open_flags(&self) -> EnvFlags {
        self.open_flags
    }

    /// The node layout of this store.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Begin a read-only transaction.
    pub fn read_txn(&self) -> Result<RoTxn<'_>> {
        RoTxn::begin(self)
    }

    /// Begin a read-write transaction (waits for the writer lock).
    pub fn write_txn(&self) -> Result<RwTxn<'_>> {
        RwTxn::begin(self)
    }

    /// Open an existing database (`None` = main database) in its own
    /// transaction, committed so the handle stays valid.
    pub fn open_db(&self, name: Option<&str>) -> Result<Database> {
        let txn = self.read_txn()?;
        let db = txn.open_db(name)?;
        txn.commit()?;
        Ok(db)
    }

    /// Open a database, creating it if missing, in its own committed write
    /// transaction.
    pub fn create_db(&self, name: Option<&str>, flags: DatabaseFlags) -> Result<Database> {
        let txn = self.write_txn()?;
        let db = txn.create_db(name, flags)?;
        txn.commit()?;
        Ok(db)
    }

    /// Statistics of the main database in the newest snapshot.
    pub fn stat(&self) -> Result<Stat> {
        let mut s = ffi::MDB_stat::default();
        check(unsafe { ffi::mdb_env_stat(self.raw, &mut s) })?;
        Ok(s.into())
    }

    /// Environment information.
    pub fn info(&self) -> Result<EnvInfo> {
        let mut i = ffi::MDB_envinfo::default();
        check(unsafe { ffi::mdb_env_info(self.raw, &mut i) })?;
        Ok(i.into())
    }

    /// Flags as reported by the engine (`mdb_env_get_flags`).
    pub fn flags(&self) -> Result<EnvFlags> {
        let mut f = 0;
        check(unsafe { ffi::mdb_env_get_flags(self.raw, &mut f) })?;
        Ok(EnvFlags::from_bits_retain(f))
    }

    /// Set or clear changeable flags (`NO_SYNC`, `NO_META_SYNC`, `MAP_ASYNC`, `NO_MEM_INIT`).
    pub fn set_flags(&self, flags: EnvFlags, on: bool) -> Result<()> {
        check(unsafe { ffi::mdb_env_set_flags(self.raw, flags.bits(), on as c_int) })
    }

    /// Flush committed data to disk.
    pub fn sync(&self, force: bool) -> Result<()> {
        check(unsafe { ffi::mdb_env_sync(self.raw, force as c_int) })
    }

    /// Change the map size. Takes `&mut self` so no transaction of this
    /// handle can be alive. `0` adopts the size stored in the file.
    pub fn set_map_size(&mut self, bytes: usize) -> Result<()> {
        check(unsafe { ffi::mdb_env_set_mapsize(self.raw, bytes) })
    }

    /// The address range of this environment's memory map (the engine's
    /// `mdb_env_get_map`, a dlmdb addition; for `IN_MEMORY` environments
    /// the anonymous memory). `None` only if the engine cannot tell.
    ///
    /// The safe API uses it to tell pointers into the map (valid for the
    /// whole transaction) from pointers into a cursor's decoding buffer
    /// (prefix-compressed databases); without it, such keys are copied.
    /// The range stays fixed while any transaction is alive: only
    /// [`set_map_size`](Self::set_map_size), which needs `&mut self`, moves it.
    pub fn map_region(&self) -> Option<std::ops::Range<usize>> {
        let mut addr = std::ptr::null_mut();
        let mut size = 0usize;
        // SAFETY: live env; out-pointers are valid locals.
        let rc = unsafe { ffi::mdb_env_get_map(self.raw, &mut addr, &mut size) };
        (rc == 0 && !addr.is_null() && size > 0).then(|| addr as usize..addr as usize + size)
    }

    /// Largest key size accepted (511).
    pub fn max_key_size(&self) -> usize {
        unsafe { ffi::mdb_env_get_maxkeysize(self.raw) as usize }
    }

    /// Reader slots of the lock table.
    pub fn max_readers(&self) -> Result<u32> {
        let mut n = 0;
        check(unsafe { ffi::mdb_env_get_maxreaders(self.raw, &mut n) })?;
        Ok(n)
    }

    /// Copy the environment to `path` (a directory, or a file when the
    /// environment uses `NO_SUB_DIR`); `compact` omits free pages.
    pub fn copy(&self, path: impl AsRef<Path>, compact: bool) -> Result<()> {
        let c = CString::new(path.as_ref().as_os_str().as_bytes()).map_err(|_| Error::einval())?;
        let flags = if compact { ffi::MDB_CP_COMPACT } else { 0 };
        check(unsafe { ffi::mdb_env_copy2(self.raw, c.as_ptr(), flags) })
    }

    /// Write a consistent copy of the data file to `fd` (a file, pipe or
    /// socket open for writing), as `mdb_env_copyfd2`; `compact` omits free
    /// pages. The data is written sequentially, so pipes work.
    pub fn copy_to_fd(&self, fd: std::os::fd::BorrowedFd<'_>, compact: bool) -> Result<()> {
        use std::os::fd::AsRawFd;
        let flags = if compact { ffi::MDB_CP_COMPACT } else { 0 };
        check(unsafe { ffi::mdb_env_copyfd2(self.raw, fd.as_raw_fd(), flags) })
    }

    /// Clear reader slots of dead processes; returns how many were cleared.
    pub fn reader_check(&self) -> Result<u32> {
        let mut dead: c_int = 0;
        check(unsafe { ffi::mdb_reader_check(self.raw, &mut dead) })?;
        Ok(dead as u32)
    }

    /// The reader table as printed by `mdb_reader_list` (one line per entry).
    pub fn reader_list(&self) -> Result<String> {
        unsafe extern "C" fn collect(msg: *const c_char, ctx: *mut c_void) -> c_int {
            let out = &mut *(ctx as *mut String);
            out.push_str(&CStr::from_ptr(msg).to_string_lossy());
            0
        }
        let mut out = String::new();
        let rc = unsafe {
            ffi::mdb_reader_list(
                self.raw,
                Some(collect),
                &mut out as *mut String as *mut c_void,
            )
        };
        if rc < 0 {
            return Err(Error::from_code(rc));
        }
        Ok(out)
    }

    /// Make running long operations return `EINTR` (`on = true`) or resume
    /// normal operation (DLMDB `mdb_env_set_interrupt`).
    pub fn set_interrupt(&self, on: bool) -> Result<()> {
        check(unsafe { ffi::mdb_env_set_interrupt(self.raw, on as c_int) })
    }
}

fn data_file_of(path: &Path, flags: EnvFlags) -> PathBuf {
    if flags.contains(EnvFlags::NO_SUB_DIR) {
        path.to_path_buf()
    } else {
        path.join("data.mdb")
    }
}

/// Read the data version from the first meta page; the engine opened the
/// file successfully already, so this only classifies it.
/// What the engine decided at open (`mdb_env_get_layout`).
pub(crate) fn engine_layout_raw(raw: *mut ffi::MDB_env) -> ffi::MDB_envlayout {
    let mut l = ffi::MDB_envlayout::default();
    // SAFETY: an opened environment; plain data out.
    let rc = unsafe { ffi::mdb_env_get_layout(raw, &mut l) };
    debug_assert_eq!(rc, 0);
    l
}

fn engine_layout(raw: *mut ffi::MDB_env) -> Layout {
    let l = engine_layout_raw(raw);
    match (l.ml_version, l.ml_padded) {
        (2, _) => Layout::DlmdbV2,
        (_, 0) => Layout::Lmdb,
        _ => Layout::DlmdbV1,
    }
}

/// `mm_version` of meta page 0. LMDB 0.9, 1.0 and DLMDB follow the 16-byte
/// page header with the magic (u32 at byte 16) and the version (u32 at byte
/// 20); LMDB 1.x (data format 3) has a 24-byte page header, so its magic and
/// version sit at bytes 24 and 28. The header's flags word (u16 at byte 10,
/// or 18 in the longer header) marks a meta page either way.
pub fn read_data_version(data_file: &Path) -> Option<u32> {
    dlmdb_format::meta::data_version(&first_bytes(data_file)?)
}

/// The first 32 bytes of a data file: enough for every first-page signature
/// `dlmdb-format` tells apart.
fn first_bytes(data_file: &Path) -> Option<[u8; 32]> {
    use std::io::Read;
    let mut head = [0u8; 32];
    std::fs::File::open(data_file)
        .ok()?
        .read_exact(&mut head)
        .ok()?;
    Some(head)
}

/// One line naming a data file in a format this engine does not read (the
/// engine refuses them all, `MDB_VERSION_MISMATCH` or `MDB_INVALID`): what
/// wrote it and what reads it; `None` for any other file.
pub fn unsupported_format_note(data_file: &Path) -> Option<String> {
    use dlmdb_format::foreign::{foreign_format, ForeignFormat};
    let path = data_file.display();
    Some(match foreign_format(&first_bytes(data_file)?)? {
        ForeignFormat::Lmdb1x => {
            format!("{path} is an LMDB 1.x store (data format 3), which dlmdb does not support yet")
        }
        ForeignFormat::Lmdb32Bit => format!(
            "{path} is an LMDB store written by a 32-bit build (4-byte page numbers), which \
             64-bit builds of LMDB and dlmdb do not read: dump it with mdb_dump on a 32-bit \
             system and load the dump here"
        ),
        ForeignFormat::LmdbBigEndian => format!(
            "{path} is an LMDB store written on a big-endian machine (LMDB stores keep the \
             writer's byte order): dump it with mdb_dump on such a machine and load the dump here"
        ),
        ForeignFormat::Libmdbx { version } => format!(
            "{path} is a libmdbx store (data format {version}), not an LMDB one: libmdbx's own \
             tools (mdbx_stat, mdbx_dump, mdbx_chk) read it"
        ),
        ForeignFormat::Bbolt => {
            format!("{path} is a bbolt (BoltDB) store, not an LMDB one: bbolt's own tools read it")
        }
    })
}

/// The engine's version string and numbers (`mdb_version`).
pub fn version() -> (String, i32, i32, i32) {
    let (mut a, mut b, mut c) = (0, 0, 0);
    let s = unsafe { CStr::from_ptr(ffi::mdb_version(&mut a, &mut b, &mut c)) };
    (s.to_string_lossy().into_owned(), a, b, c)
}
