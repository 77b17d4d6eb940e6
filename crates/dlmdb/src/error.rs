//! Error type: one variant per LMDB return code, plus OS errors.

use dlmdb_sys as ffi;
use std::ffi::CStr;
use std::os::raw::c_int;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The engine's text for a return code (`mdb_strerror`).
pub fn strerror(code: i32) -> String {
    // SAFETY: mdb_strerror always returns a pointer to a static NUL-terminated string.
    unsafe { CStr::from_ptr(ffi::mdb_strerror(code as c_int)) }
        .to_string_lossy()
        .into_owned()
}

/// An error returned by the engine.
///
/// Each LMDB code has its own variant; its `Display` text is the engine's
/// `mdb_strerror` message (which starts with the constant's name, e.g.
/// `"MDB_NOTFOUND: ..."`). Positive codes are OS `errno` values and become
/// [`Error::Io`]. [`Error::code`] gives back the raw C return code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `MDB_KEYEXIST`: key/data pair already exists.
    #[error("{}", strerror(ffi::MDB_KEYEXIST))]
    KeyExist,
    /// `MDB_NOTFOUND`: no matching key/data pair.
    #[error("{}", strerror(ffi::MDB_NOTFOUND))]
    NotFound,
    /// `MDB_PAGE_NOTFOUND`: a referenced page does not exist.
    #[error("{}", strerror(ffi::MDB_PAGE_NOTFOUND))]
    PageNotFound,
    /// `MDB_CORRUPTED`: a page of the wrong type was found.
    #[error("{}", strerror(ffi::MDB_CORRUPTED))]
    Corrupted,
    /// `MDB_PANIC`: fatal environment error.
    #[error("{}", strerror(ffi::MDB_PANIC))]
    Panic,
    /// `MDB_VERSION_MISMATCH`: data or lock file version mismatch.
    #[error("{}", strerror(ffi::MDB_VERSION_MISMATCH))]
    VersionMismatch,
    /// `MDB_INVALID`: not an LMDB/DLMDB file.
    #[error("{}", strerror(ffi::MDB_INVALID))]
    Invalid,
    /// `MDB_MAP_FULL`: map size limit reached.
    #[error("{}", strerror(ffi::MDB_MAP_FULL))]
    MapFull,
    /// `MDB_DBS_FULL`: max_dbs limit reached.
    #[error("{}", strerror(ffi::MDB_DBS_FULL))]
    DbsFull,
    /// `MDB_READERS_FULL`: max_readers limit reached.
    #[error("{}", strerror(ffi::MDB_READERS_FULL))]
    ReadersFull,
    /// `MDB_TLS_FULL`.
    #[error("{}", strerror(ffi::MDB_TLS_FULL))]
    TlsFull,
    /// `MDB_TXN_FULL`: too many dirty pages.
    #[error("{}", strerror(ffi::MDB_TXN_FULL))]
    TxnFull,
    /// `MDB_CURSOR_FULL`: cursor stack too deep.
    #[error("{}", strerror(ffi::MDB_CURSOR_FULL))]
    CursorFull,
    /// `MDB_PAGE_FULL`: page out of space.
    #[error("{}", strerror(ffi::MDB_PAGE_FULL))]
    PageFull,
    /// `MDB_MAP_RESIZED`: another process grew the map.
    #[error("{}", strerror(ffi::MDB_MAP_RESIZED))]
    MapResized,
    /// `MDB_INCOMPATIBLE`: operation invalid for this database / flags changed.
    #[error("{}", strerror(ffi::MDB_INCOMPATIBLE))]
    Incompatible,
    /// `MDB_BAD_RSLOT`: invalid reuse of a reader slot.
    #[error("{}", strerror(ffi::MDB_BAD_RSLOT))]
    BadRslot,
    /// `MDB_BAD_TXN`: transaction must abort, has a child, or is invalid.
    #[error("{}", strerror(ffi::MDB_BAD_TXN))]
    BadTxn,
    /// `MDB_BAD_VALSIZE`: unsupported size of key, name or data.
    #[error("{}", strerror(ffi::MDB_BAD_VALSIZE))]
    BadValSize,
    /// `MDB_BAD_DBI`: database handle closed or changed.
    #[error("{}", strerror(ffi::MDB_BAD_DBI))]
    BadDbi,
    /// `MDB_PROBLEM`: unexpected internal problem.
    #[error("{}", strerror(ffi::MDB_PROBLEM))]
    Problem,
    /// `MDB_DBIS_BUSY`: other database handles are open (main-DB drop).
    #[error("{}", strerror(ffi::MDB_DBIS_BUSY))]
    DbisBusy,
    /// A positive `errno` value (`EINVAL`, `EACCES`, `ENOENT`, `EINTR`, ...).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Any other (unknown negative) code.
    #[error("{}", strerror(*.0))]
    Other(i32),
    /// The record of named database `name` is not a plausible database
    /// record in the layout the store is read in (a misread layout or a
    /// damaged catalog). Only stores opened with
    /// [`Env::open_detect`](crate::Env::open_detect) check it; the code is
    /// `MDB_CORRUPTED`.
    #[error("record of database {name:?}: {problem} (layout {layout}: {reason})")]
    BadRecord {
        name: String,
        problem: String,
        layout: crate::flags::Layout,
        /// Why the store is read in that layout.
        reason: String,
    },
}

impl Error {
    /// Map a non-zero C return code to an error.
    pub fn from_code(code: i32) -> Error {
        match code {
            ffi::MDB_KEYEXIST => Error::KeyExist,
            ffi::MDB_NOTFOUND => Error::NotFound,
            ffi::MDB_PAGE_NOTFOUND => Error::PageNotFound,
            ffi::MDB_CORRUPTED => Error::Corrupted,
            ffi::MDB_PANIC => Error::Panic,
            ffi::MDB_VERSION_MISMATCH => Error::VersionMismatch,
            ffi::MDB_INVALID => Error::Invalid,
            ffi::MDB_MAP_FULL => Error::MapFull,
            ffi::MDB_DBS_FULL => Error::DbsFull,
            ffi::MDB_READERS_FULL => Error::ReadersFull,
            ffi::MDB_TLS_FULL => Error::TlsFull,
            ffi::MDB_TXN_FULL => Error::TxnFull,
            ffi::MDB_CURSOR_FULL => Error::CursorFull,
            ffi::MDB_PAGE_FULL => Error::PageFull,
            ffi::MDB_MAP_RESIZED => Error::MapResized,
            ffi::MDB_INCOMPATIBLE => Error::Incompatible,
            ffi::MDB_BAD_RSLOT => Error::BadRslot,
            ffi::MDB_BAD_TXN => Error::BadTxn,
            ffi::MDB_BAD_VALSIZE => Error::BadValSize,
            ffi::MDB_BAD_DBI => Error::BadDbi,
            ffi::MDB_PROBLEM => Error::Problem,
            ffi::MDB_DBIS_BUSY => Error::DbisBusy,
            c if c > 0 => Error::Io(std::io::Error::from_raw_os_error(c)),
            c => Error::Other(c),
        }
    }

    /// The raw C return code (negative LMDB code or positive `errno`).
    pub fn code(&self) -> i32 {
        match self {
            Error::KeyExist => ffi::MDB_KEYEXIST,
            Error::NotFound => ffi::MDB_NOTFOUND,
            Error::PageNotFound => ffi::MDB_PAGE_NOTFOUND,
            Error::Corrupted => ffi::MDB_CORRUPTED,
            Error::Panic => ffi::MDB_PANIC,
            Error::VersionMismatch => ffi::MDB_VERSION_MISMATCH,
            Error::Invalid => ffi::MDB_INVALID,
            Error::MapFull => ffi::MDB_MAP_FULL,
            Error::DbsFull => ffi::MDB_DBS_FULL,
            Error::ReadersFull => ffi::MDB_READERS_FULL,
            Error::TlsFull => ffi::MDB_TLS_FULL,
            Error::TxnFull => ffi::MDB_TXN_FULL,
            Error::CursorFull => ffi::MDB_CURSOR_FULL,
            Error::PageFull => ffi::MDB_PAGE_FULL,
            Error::MapResized => ffi::MDB_MAP_RESIZED,
            Error::Incompatible => ffi::MDB_INCOMPATIBLE,
            Error::BadRslot => ffi::MDB_BAD_RSLOT,
            Error::BadTxn => ffi::MDB_BAD_TXN,
            Error::BadValSize => ffi::MDB_BAD_VALSIZE,
            Error::BadDbi => ffi::MDB_BAD_DBI,
            Error::Problem => ffi::MDB_PROBLEM,
            Error::DbisBusy => ffi::MDB_DBIS_BUSY,
            Error::Io(e) => e.raw_os_error().unwrap_or(libc::EIO),
            Error::Other(c) => *c,
            Error::BadRecord { .. } => ffi::MDB_CORRUPTED,
        }
    }

    /// `EINVAL` as an error value.
    pub(crate) fn einval() -> Error {
        Error::Io(std::io::Error::from_raw_os_error(libc::EINVAL))
    }

    /// True for [`Error::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound)
    }
}

/// Turn a C return code into a `Result`.
#[inline]
pub(crate) fn check(rc: c_int) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::from_code(rc))
    }
}

/// Like [`check`] but maps `MDB_NOTFOUND` to `Ok(false)`.
#[inline]
pub(crate) fn check_found(rc: c_int) -> Result<bool> {
    match rc {
        0 => Ok(true),
        ffi::MDB_NOTFOUND => Ok(false),
        rc => Err(Error::from_code(rc)),
    }
}
