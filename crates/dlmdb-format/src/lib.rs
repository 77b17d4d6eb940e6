//! The on-disk format of LMDB / DLMDB data files, as plain byte layouts.
//!
//! No `unsafe`, no engine: every accessor takes a byte slice, checks the
//! bounds and returns an error rather than reading past the end, so the
//! crate can be pointed at damaged files. Every structure's field offsets
//! are written beside its accessor.
//!
//! | Structure | Module | Size |
//! |---|---|---|
//! | page header (branch, leaf, LEAF2, overflow, meta, sub-page) | [`page`] | 16 bytes |
//! | node header, branch / leaf / counted-branch nodes | [`node`] | 8 bytes (+8 counted) |
//! | meta page body | [`meta`] | 136 bytes at offset 16 |
//! | database record (`MDB_db`) | [`record`] | 48 bytes |
//! | free-list record (txn id -> page list) | [`free`] | 8-byte key, `(n+1)*8` data |
//! | prefix-compressed keys: varint, trunk, decoding | [`prefix`] | — |
//! | DUPSORT sub-pages | [`page`] (a page whose bytes are a node's data) | node data size |
//! | stock key and duplicate orderings | [`order`] | — |
//! | lock file header: magic and format word | [`lock`] | 8 bytes |
//! | what counted branch counts add up (leaf contributions) | [`counted`] | — |
//! | other engines' and builds' first pages (LMDB 1.x, 32-bit, big-endian, libmdbx, bbolt) | [`foreign`] | — |
//!
//! Two node layouts exist for the same page structures ([`NodeLayout`]):
//! stock LMDB puts a leaf node's data right after its key; DLMDB (its
//! padded version 1 and data version 2) pads every odd-length key with one
//! byte so data starts at an even offset. The meta page says version 1 for
//! both stock and padded DLMDB files; version 2 is always padded.
//!
//! All integers are little-endian (the files are only portable between
//! little-endian hosts; the counted-branch count is in host order, which is
//! little-endian everywhere these files are written).

#![forbid(unsafe_code)]

#[macro_use]
pub mod bytes;
pub mod counted;
pub mod foreign;
pub mod free;
pub mod lock;
pub mod meta;
pub mod node;
pub mod order;
pub mod page;
pub mod prefix;
pub mod record;

pub use free::FreeRecord;
pub use meta::{Meta, MAGIC, META_SIZE};
pub use node::{Node, NodeFlags, NodeHeader, NodeLayout, MAX_KEY_SIZE, NODE_HEADER_SIZE};
pub use order::Order;
pub use page::{Page, PageFlags, PageHeader, PageKind, RoleProblem, PAGE_HEADER_SIZE, P_INVALID};
pub use prefix::{decode_prefixed, read_varint, varint_len, write_varint, PrefixedKey};
pub use record::{DbFlags, DbRecord, DB_RECORD_SIZE};

/// Why bytes could not be read as the structure asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// A field or area lies (partly) outside the bytes given.
    #[error("{what} at offset {offset} (+{len}) runs past the end of {available} bytes")]
    OutOfBounds {
        what: &'static str,
        offset: usize,
        len: usize,
        available: usize,
    },
    /// The bytes are there but break a rule of the format.
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T> = std::result::Result<T, FormatError>;

/// `x` rounded up to a multiple of 2 (node sizes, padded keys).
pub const fn even(x: usize) -> usize {
    x + (x & 1)
}
