//! Safe Rust API for **dlmdb**, an embedded memory-mapped transactional
//! key-value engine compatible with LMDB's and DLMDB's file formats.
//!
//! ```no_run
//! use dlmdb::{Env, EnvFlags, DatabaseFlags, WriteFlags};
//! # fn main() -> dlmdb::Result<()> {
//! let env = Env::builder().map_size(64 << 20).max_dbs(4).open("/tmp/my-env")?;
//! let db = env.create_db(Some("users"), DatabaseFlags::empty())?;
//! let mut txn = env.write_txn()?;
//! txn.put(db, b"alice", b"1", WriteFlags::empty())?;
//! txn.commit()?;
//! let txn = env.read_txn()?;
//! assert_eq!(txn.get(db, b"alice")?, Some(&b"1"[..]));
//! for item in txn.cursor(db)?.iter() {
//!     let (k, v) = item?;
//!     println!("{:?} = {:?}", k, v);
//! }
//! # Ok(()) }
//! ```
//!
//! Lifetimes encode LMDB's rules: transactions borrow the [`Env`]; values
//! borrow the transaction; writes take `&mut` so values read from a write
//! transaction cannot be held across an update; cursors borrow their
//! transaction and are closed on drop. Transactions are not `Send`.
//!
//! Cursor items ([`Item`]) are pairs of `Cow<[u8]>`: borrowed straight from
//! the memory map (or the write transaction's pages) whenever possible, and
//! copied only where the engine returns a key or duplicate value decoded
//! into the cursor's own buffer (prefix-compressed databases), which the
//! cursor's next operation would overwrite. So items can be held, collected
//! and kept after the cursor is gone, for any kind of database. The
//! lending [`Cursor::get_ref`] is zero-copy in every case, for loops that
//! consume each item before moving on.
//!
//! Layouts: new stores are DLMDB data version 2 unless created with
//! [`EnvFlags::FORMAT_LMDB`] (stock LMDB, version 1). For existing
//! version-1 stores the engine decides from evidence in the file (DLMDB-only
//! database flags, counted branch pages, leaves only one layout parses) and
//! reads a file without evidence in stock layout; [`EnvFlags::FORMAT_LMDB`]
//! and [`EnvFlags::FORMAT_DLMDB_V1`] name a layout instead (refused when the
//! file contradicts it). [`Env::layout`] says which one is in use.
//!
//! Live stores: the lock file is shared with running LMDB 0.9, LMDB 1.0 and
//! DLMDB processes in their own layout. Tools opening stores they did not
//! create use [`Env::open_detect`].

mod cursor;
mod env;
mod error;
mod flags;
mod open;
pub mod probe;
mod txn;
mod units;
mod walk;

pub use cursor::{Cursor, IntoIter, Item, ItemRef, Iter, RwCursor};
pub use env::{read_data_version, unsupported_format_note, version, Env, EnvBuilder};
pub use error::{strerror, Error, Result};
pub use flags::{
    CountFlags, CursorOp, Database, DatabaseFlags, EnvFlags, EnvInfo, Layout, Stat, WriteFlags,
};
pub use open::{
    locate_data_file, LayoutChoice, LockFormat, LockUse, OpenError, OpenOptions, Opened,
    CATALOG_CHECK_BUDGET,
};
pub use probe::{probe_layout, probe_layout_limited, LayoutProbe, ProbeVerdict};
pub use txn::{FreeRecord, ResetTxn, RoTxn, RwTxn};
pub use units::human_bytes;
pub use walk::{LevelSummary, PageInfo, PageKind, WalkSummary};

/// The raw bindings, re-exported for callers that need something the safe
/// API does not cover.
pub use dlmdb_sys as sys;

#[cfg(test)]
mod tests;
