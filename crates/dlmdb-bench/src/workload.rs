//! The timed workloads. Each is one generic function over [`Backend`], so the
//! code timed for our engine and for LMDB is the same machine code modulo the
//! call target.
//!
//! Adding a row: add a variant to [`Workload`], give it a name in
//! [`Workload::name`], say whether it needs a fresh environment
//! ([`Workload::is_write`]) and add its arm in [`run_write`] or [`run_read`].
//! Rows that need other database flags (DUPSORT), several reader
//! transactions, or ours-only calls (count/rank) are meant to slot in the same
//! way; ours-only rows would set `lmdb_ns_per_op` to `None`.

use std::hint::black_box;

use anyhow::{ensure, Context, Result};

use crate::data::Dataset;
use crate::engine::{Backend, CursorOp};

/// Puts per write transaction.
pub const BATCH: usize = 10_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// `mdb_put` in ascending key order, committed every [`BATCH`] puts.
    SeqPut,
    /// `mdb_put` in a random order, committed every [`BATCH`] puts.
    RandPut,
    /// `mdb_cursor_put` (flags 0, no APPEND) in ascending key order, one
    /// cursor per transaction, committed every [`BATCH`] puts.
    CursorPut,
    /// One read txn: `MDB_FIRST` then `MDB_NEXT` over every record.
    SeqRead,
    /// One read txn: `mdb_get` of every key in a random order.
    RandGet,
    /// One read txn: `MDB_SET_RANGE` on an absent key just below every
    /// record, in a random order.
    RandSeek,
}

impl Workload {
    pub const ALL: [Workload; 6] = [
        Workload::SeqPut,
        Workload::RandPut,
        Workload::CursorPut,
        Workload::SeqRead,
        Workload::RandGet,
        Workload::RandSeek,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Workload::SeqPut => "seq_put",
            Workload::RandPut => "rand_put",
            Workload::CursorPut => "cursor_put",
            Workload::SeqRead => "seq_read",
            Workload::RandGet => "rand_get",
            Workload::RandSeek => "rand_seek",
        }
    }

    /// Write rows build a fresh environment each round; read rows share one
    /// loaded environment per engine.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            Workload::SeqPut | Workload::RandPut | Workload::CursorPut
        )
    }
}

/// Load `d` into `b` with `mdb_put` in the order given by `order`
/// (`None` = ascending), committing every [`BATCH`] puts.
#[inline(never)]
fn put_all<B: Backend>(b: &mut B, d: &Dataset, random: bool) -> Result<()> {
    let mut i = 0;
    while i < d.entries {
        let end = (i + BATCH).min(d.entries);
        b.begin(false)?;
        for j in i..end {
            let r = if random { d.perm[j] as usize } else { j };
            b.put(d.keys.get(r), d.values.get(r))?;
        }
        b.commit()?;
        i = end;
    }
    Ok(())
}

#[inline(never)]
fn cursor_put_all<B: Backend>(b: &mut B, d: &Dataset) -> Result<()> {
    let mut i = 0;
    while i < d.entries {
        let end = (i + BATCH).min(d.entries);
        b.begin(false)?;
        b.cursor_open()?;
        for j in i..end {
            b.cursor_put(d.keys.get(j), d.values.get(j))?;
        }
        b.commit()?;
        i = end;
    }
    Ok(())
}

/// Fold a key/value pair into a checksum that depends on bytes at both ends,
/// so the engine's pointers are really dereferenced.
#[inline(always)]
fn fold(acc: u64, k: &[u8], v: &[u8]) -> u64 {
    let kb = k.last().copied().unwrap_or(0) as u64;
    let vb = v.first().copied().unwrap_or(0) as u64;
    acc.wrapping_mul(31)
        .wrapping_add(k.len() as u64 ^ (v.len() as u64) << 20 ^ kb << 8 ^ vb)
}

/// Run a write workload on a freshly opened, empty backend. Returns elapsed ns.
pub fn run_write<B: Backend>(w: Workload, b: &mut B, d: &Dataset) -> Result<u128> {
    let t0 = crate::measure::Stamp::now();
    match w {
        Workload::SeqPut => put_all(b, d, false)?,
        Workload::RandPut => put_all(b, d, true)?,
        Workload::CursorPut => cursor_put_all(b, d)?,
        _ => unreachable!("{w:?} is not a write workload"),
    }
    let ns = t0.elapsed().as_nanos();
    // Untimed sanity check: every put landed.
    b.begin(true)?;
    let n = b.entries()?;
    b.abort();
    ensure!(
        n == d.entries as u64,
        "{}: {} left {n} entries, expected {}",
        B::LABEL,
        w.name(),
        d.entries
    );
    Ok(ns)
}

/// Untimed: load `d` in ascending order (what the read rows run against).
pub fn load<B: Backend>(b: &mut B, d: &Dataset) -> Result<()> {
    put_all(b, d, false)
}

/// Run a read workload on a loaded backend. Returns (elapsed ns, checksum).
/// The checksum must match between engines.
pub fn run_read<B: Backend>(w: Workload, b: &mut B, d: &Dataset) -> Result<(u128, u64)> {
    b.begin(true)?;
    let r = read_inner(w, b, d);
    b.abort();
    r
}

#[inline(never)]
fn read_inner<B: Backend>(w: Workload, b: &mut B, d: &Dataset) -> Result<(u128, u64)> {
    let mut acc = 0u64;
    let mut seen = 0usize;
    let t0;
    match w {
        Workload::SeqRead => {
            b.cursor_open()?;
            t0 = crate::measure::Stamp::now();
            let mut op = CursorOp::First;
            while let Some((k, v)) = b.cursor_get(op, &[])? {
                acc = fold(acc, k, v);
                seen += 1;
                op = CursorOp::Next;
            }
        }
        Workload::RandGet => {
            t0 = crate::measure::Stamp::now();
            for &r in &d.perm {
                let k = d.keys.get(r as usize);
                if let Some(v) = b.get(k)? {
                    acc = fold(acc, k, v);
                    seen += 1;
                }
            }
        }
        Workload::RandSeek => {
            b.cursor_open()?;
            t0 = crate::measure::Stamp::now();
            for &r in &d.perm {
                if let Some((k, v)) =
                    b.cursor_get(CursorOp::SetRange, d.seek_keys.get(r as usize))?
                {
                    acc = fold(acc, k, v);
                    seen += 1;
                }
            }
        }
        _ => unreachable!("{w:?} is not a read workload"),
    }
    let ns = t0.elapsed().as_nanos();
    black_box(acc);
    ensure!(
        seen == d.entries,
        "{}: {} found {seen} records, expected {}",
        B::LABEL,
        w.name(),
        d.entries
    );
    Ok((ns, acc))
}

/// Untimed full check that `b` holds exactly `d`: a cursor walk compares every
/// key and value, and each seek key must land on its own record. A misread
/// store must never produce a benchmark number.
pub fn verify<B: Backend>(b: &mut B, d: &Dataset) -> Result<()> {
    b.begin(true)?;
    let r = verify_inner(b, d);
    b.abort();
    r.with_context(|| format!("{}: verification failed", B::LABEL))
}

fn verify_inner<B: Backend>(b: &mut B, d: &Dataset) -> Result<()> {
    b.cursor_open()?;
    let mut i = 0usize;
    let mut op = CursorOp::First;
    while let Some((k, v)) = b.cursor_get(op, &[])? {
        ensure!(i < d.entries, "more records than loaded ({})", d.entries);
        ensure!(k == d.keys.get(i), "key #{i} differs");
        ensure!(v == d.values.get(i), "value #{i} differs");
        i += 1;
        op = CursorOp::Next;
    }
    ensure!(
        i == d.entries,
        "cursor walk saw {i} of {} records",
        d.entries
    );
    // Point lookups and seeks on a sample spread over the whole key range.
    let step = (d.entries / 2000).max(1);
    for i in (0..d.entries).step_by(step) {
        let got = b.get(d.keys.get(i))?.map(|v| v.to_vec());
        ensure!(
            got.as_deref() == Some(d.values.get(i)),
            "mdb_get of key #{i} wrong"
        );
        let got = b
            .cursor_get(CursorOp::SetRange, d.seek_keys.get(i))?
            .map(|(k, _)| k.to_vec());
        ensure!(
            got.as_deref() == Some(d.keys.get(i)),
            "SET_RANGE to record #{i} wrong"
        );
    }
    Ok(())
}
