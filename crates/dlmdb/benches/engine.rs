//! criterion benchmarks of the engine's hot paths through the safe API:
//! point get, cursor seek, put (fresh txn per batch), cursor next, counted
//! rank lookup, prefix-compressed get and put, and list_dup.
//!
//!   cargo bench -p dlmdb --bench engine
//!   cargo bench -p dlmdb --bench engine -- prefix     (one group)
//!
//! Every environment lives in a temporary directory on /dev/shm when it is
//! available (so fsync does not dominate) and uses MDB_NOSYNC.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use dlmdb::{Database, DatabaseFlags, Env, EnvFlags, WriteFlags};

const N: u64 = 100_000;

fn scratch() -> tempfile::TempDir {
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(t) = tempfile::Builder::new()
            .prefix("dlmdb-criterion-")
            .tempdir_in(shm)
        {
            return t;
        }
    }
    tempfile::tempdir().unwrap()
}

fn env(dir: &std::path::Path) -> Env {
    Env::builder()
        .map_size(1 << 30)
        .max_dbs(4)
        .flags(EnvFlags::NO_SYNC)
        .open(dir)
        .unwrap()
}

/// 16-byte keys sharing a 8-byte prefix, in key order.
fn key(i: u64) -> [u8; 16] {
    let mut k = *b"datoms::00000000";
    k[8..].copy_from_slice(format!("{:08x}", i).as_bytes());
    k
}

/// A spread of indexes (a multiplicative walk over 0..N).
fn probe(i: u64) -> u64 {
    i.wrapping_mul(2_654_435_761) % N
}

fn loaded(dir: &std::path::Path, name: &str, flags: DatabaseFlags) -> (Env, Database) {
    let e = env(dir);
    let db = {
        let mut t = e.write_txn().unwrap();
        let db = t.create_db(Some(name), flags).unwrap();
        for i in 0..N {
            t.put(db, &key(i), &i.to_le_bytes(), WriteFlags::empty())
                .unwrap();
        }
        t.commit().unwrap();
        db
    };
    (e, db)
}

fn reads(c: &mut Criterion) {
    let dir = scratch();
    let (e, db) = loaded(dir.path(), "plain", DatabaseFlags::empty());
    let (_, cdb) = {
        let mut t = e.write_txn().unwrap();
        let cdb = t
            .create_db(Some("counted"), DatabaseFlags::COUNTED)
            .unwrap();
        for i in 0..N {
            t.put(cdb, &key(i), &i.to_le_bytes(), WriteFlags::empty())
                .unwrap();
        }
        t.commit().unwrap();
        ((), cdb)
    };
    let mut g = c.benchmark_group("read");
    g.throughput(Throughput::Elements(1));
    let txn = e.read_txn().unwrap();
    let mut i = 0u64;
    g.bench_function("get", |b| {
        b.iter(|| {
            i += 1;
            black_box(txn.get(db, &key(probe(i))).unwrap())
        })
    });
    let mut cur = txn.cursor(db).unwrap();
    g.bench_function("seek", |b| {
        b.iter(|| {
            i += 1;
            black_box(cur.set_range(&key(probe(i))).unwrap().is_some())
        })
    });
    g.bench_function("cursor_next", |b| {
        cur.first().unwrap();
        b.iter(|| {
            if cur.next().unwrap().is_none() {
                cur.first().unwrap();
            }
        })
    });
    let mut ccur = txn.cursor(cdb).unwrap();
    g.bench_function("counted_rank", |b| {
        b.iter(|| {
            i += 1;
            black_box(ccur.get_rank(probe(i)).unwrap().is_some())
        })
    });
    g.finish();
}

fn writes(c: &mut Criterion) {
    let mut g = c.benchmark_group("write");
    const BATCH: u64 = 1000;
    g.throughput(Throughput::Elements(BATCH));
    for (label, flags) in [
        ("put", DatabaseFlags::empty()),
        ("prefix_put", DatabaseFlags::PREFIX_COMPRESSION),
    ] {
        let dir = scratch();
        let (e, db) = loaded(dir.path(), label, flags);
        let mut round = 0u64;
        // One write txn of BATCH random-order overwrites, committed.
        g.bench_function(label, |b| {
            b.iter_batched(
                || {
                    round += 1;
                    round
                },
                |r| {
                    let mut t = e.write_txn().unwrap();
                    for j in 0..BATCH {
                        let k = key(probe(r * BATCH + j));
                        t.put(db, &k, &(r + j).to_le_bytes(), WriteFlags::empty())
                            .unwrap();
                    }
                    t.commit().unwrap();
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

fn prefix_get(c: &mut Criterion) {
    let dir = scratch();
    let (e, db) = loaded(dir.path(), "prefix", DatabaseFlags::PREFIX_COMPRESSION);
    let txn = e.read_txn().unwrap();
    let mut g = c.benchmark_group("read");
    g.throughput(Throughput::Elements(1));
    let mut i = 0u64;
    g.bench_function("prefix_get", |b| {
        b.iter(|| {
            i += 1;
            black_box(txn.get(db, &key(probe(i))).unwrap())
        })
    });
    g.finish();
}

fn list_dup(c: &mut Criterion) {
    let dir = scratch();
    let e = env(dir.path());
    const KEYS: u64 = 2000;
    const DUPS: u64 = 20;
    let db = {
        let mut t = e.write_txn().unwrap();
        let db = t
            .create_db(
                Some("dups"),
                DatabaseFlags::DUP_SORT
                    | DatabaseFlags::COUNTED
                    | DatabaseFlags::PREFIX_COMPRESSION,
            )
            .unwrap();
        for k in 0..KEYS {
            for d in 0..DUPS {
                let v = format!("{k:016}-value-{d:04}");
                t.put(db, &key(k), v.as_bytes(), WriteFlags::empty())
                    .unwrap();
            }
        }
        t.commit().unwrap();
        db
    };
    let txn = e.read_txn().unwrap();
    let mut cur = txn.cursor(db).unwrap();
    let mut g = c.benchmark_group("dups");
    g.throughput(Throughput::Elements(DUPS));
    let mut i = 0u64;
    g.bench_function("list_dup", |b| {
        b.iter(|| {
            i += 1;
            cur.set(&key(i % KEYS)).unwrap();
            let vals = cur.list_dup().unwrap().unwrap_or_default();
            black_box(vals.len())
        })
    });
    g.finish();
}

criterion_group!(benches, reads, prefix_get, writes, list_dup);
criterion_main!(benches);
