//! Copies taken while a writer keeps writing: `mdb_env_copy`,
//! `mdb_env_copy2(MDB_CP_COMPACT)`, `mdb_env_copyfd`, `mdb_env_copyfd2(COMPACT)`
//! on a store in stock LMDB format (read back through stock LMDB, the
//! oracle, and through our engine) and on a default version-2 store (read
//! back through our engine). A writer thread records the digest of every
//! committed snapshot; then
//! * a plain copy holds exactly the snapshot its txn id names;
//! * a compacting copy holds exactly one committed snapshot, restarts the
//!   txn ids at 1 (format spec §17.2), has an empty free list and pages
//!   numbered 2.. with no gap (`last_pg + 1 == 2 + used pages`);
//! * stock LMDB's own compacting copy of the same snapshot has the same page
//!   count and contents as ours.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dlmdb_tests::procs::{self, ours, stock};
use dlmdb_tests::{raw, remove_lock};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const MAP: usize = 256 << 20;
const DBS: [&str; 3] = ["x", "y", "z"];

fn db_flags() -> [(&'static str, u32); 3] {
    [("x", 0), ("y", ours::ffi::MDB_DUPSORT), ("z", 0)]
}

macro_rules! digest_fn {
    ($name:ident, $m:ident) => {
        /// (txn id, digest) of the three DBs in a read txn of `env`.
        fn $name(env: &$m::Env) -> (u64, u64) {
            let t = env.begin_ro().unwrap();
            let mut all = Vec::new();
            for n in DBS {
                let d = t
                    .open_db(Some(n.as_bytes()), 0)
                    .unwrap_or_else(|e| panic!("open {n}: {}", $m::strerror(e)));
                all.push((
                    n,
                    t.walk(d, true)
                        .unwrap_or_else(|e| panic!("walk {n}: {}", $m::strerror(e))),
                ));
            }
            (
                t.id(),
                procs::digest(all.iter().map(|(n, p)| (*n, p.as_slice()))),
            )
        }
    };
}
digest_fn!(digest_ours, ours);
digest_fn!(digest_stock, stock);

fn write_txn(env: &ours::Env, dbis: &[u32], rng: &mut ChaCha8Rng) -> (u64, u64) {
    let t = env.begin_rw().unwrap();
    for _ in 0..rng.gen_range(1..60) {
        let r: u32 = rng.gen_range(0..100);
        match r {
            0..=39 => {
                let k = format!("x{:05}", rng.gen_range(0..3000));
                let v: Vec<u8> = (0..rng.gen_range(0..400)).map(|_| rng.gen()).collect();
                t.put(dbis[0], k.as_bytes(), &v, 0).unwrap();
            }
            40..=54 => {
                let k = format!("x{:05}", rng.gen_range(0..3000));
                t.del(dbis[0], k.as_bytes(), None).unwrap();
            }
            55..=79 => {
                let k = format!("y{:03}", rng.gen_range(0..100));
                let (id, fill) = (rng.gen_range(0..500), rng.gen_range(0..30));
                let v = format!("{id:04}{}", "d".repeat(fill));
                t.put(dbis[1], k.as_bytes(), v.as_bytes(), 0).unwrap();
            }
            80..=84 => {
                let k = format!("y{:03}", rng.gen_range(0..100));
                t.del(dbis[1], k.as_bytes(), None).unwrap();
            }
            85..=95 => {
                let k = format!("z{:03}", rng.gen_range(0..60));
                let v: Vec<u8> = (0..rng.gen_range(2000..40_000))
                    .map(|_| rng.gen())
                    .collect();
                t.put(dbis[2], k.as_bytes(), &v, 0).unwrap();
            }
            _ => {
                let k = format!("z{:03}", rng.gen_range(0..60));
                t.del(dbis[2], k.as_bytes(), None).unwrap();
            }
        }
    }
    t.put(dbis[0], b"~seq", &t.id().to_le_bytes(), 0).unwrap();
    let id = t.id();
    let mut all = Vec::new();
    for (i, n) in DBS.iter().enumerate() {
        all.push((*n, t.walk(dbis[i], true).unwrap()));
    }
    let d = procs::digest(all.iter().map(|(n, p)| (*n, p.as_slice())));
    t.commit().unwrap();
    (id, d)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Copy,
    Copy2Compact,
    CopyFd,
    CopyFd2Compact,
}

impl Kind {
    fn compact(self) -> bool {
        matches!(self, Kind::Copy2Compact | Kind::CopyFd2Compact)
    }
}

fn take_copy(env: &ours::Env, kind: Kind, dst: &Path) {
    let r = match kind {
        Kind::Copy => env.copy(dst),
        Kind::Copy2Compact => env.copy2(dst, ours::ffi::MDB_CP_COMPACT),
        Kind::CopyFd | Kind::CopyFd2Compact => {
            use std::os::fd::AsRawFd;
            let f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(dst)
                .unwrap();
            if kind == Kind::CopyFd {
                env.copyfd(f.as_raw_fd())
            } else {
                env.copyfd2(f.as_raw_fd(), ours::ffi::MDB_CP_COMPACT)
            }
        }
    };
    r.unwrap_or_else(|e| panic!("{kind:?} under load failed: {}", ours::strerror(e)));
}

/// Structural checks of a copy through our engine; returns the accounting.
fn accounting(path: &Path, what: &str) -> raw::AccountingReport {
    let rep = {
        let env = raw::Env::open(path, ours::ffi::MDB_NOSUBDIR, 4, 0)
            .unwrap_or_else(|e| panic!("{what}: open: {e}"));
        raw::check_accounting(&env).unwrap_or_else(|e| panic!("{what}: accounting: {e}"))
    };
    dlmdb_tests::counted::check_file(path, false)
        .unwrap_or_else(|e| panic!("{what}: check_file: {e}"));
    remove_lock(path);
    rep
}

fn run(flags: u32, label: &str, seed: u64) {
    eprintln!("copy_under_load {label}: seed {seed} (replay: DLMDB_SEED={seed})");
    let stock_format = flags & ours::ffi::MDB_FORMAT_LMDB != 0;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.mdb");
    let env = Arc::new(ours::Env::open_file(&path, flags, 4, MAP).unwrap());
    let dbis = env.create_dbs(&db_flags()).unwrap();
    let snaps: Arc<Mutex<HashMap<u64, u64>>> = Arc::new(Mutex::new(HashMap::new()));
    {
        let (id, d) = digest_ours(&env);
        snaps.lock().unwrap().insert(id, d);
    }
    // Preload so the copies have some size.
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..150 {
        let (id, d) = write_txn(&env, &dbis, &mut rng);
        snaps.lock().unwrap().insert(id, d);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (env, snaps, stop, dbis) = (env.clone(), snaps.clone(), stop.clone(), dbis.clone());
        std::thread::spawn(move || {
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let (id, d) = write_txn(&env, &dbis, &mut rng);
                snaps.lock().unwrap().insert(id, d);
                n += 1;
            }
            n
        })
    };
    let kinds = [
        Kind::Copy,
        Kind::Copy2Compact,
        Kind::CopyFd,
        Kind::CopyFd2Compact,
    ];
    let mut copies: Vec<(Kind, PathBuf)> = Vec::new();
    for round in 0..3 {
        for k in kinds {
            std::thread::sleep(Duration::from_millis(20));
            let dst = dir.path().join(format!("copy-{round}-{k:?}.mdb"));
            take_copy(&env, k, &dst);
            copies.push((k, dst));
        }
    }
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    eprintln!("{label}: writer committed {written} txns during the copies");
    drop(env);
    let snaps = snaps.lock().unwrap().clone();
    let last_written = *snaps.keys().max().unwrap();
    let mut distinct = std::collections::HashSet::new();

    for (kind, p) in &copies {
        let what = format!("{label} seed {seed}: {kind:?} {}", p.display());
        let (id, d) = {
            let e = ours::Env::open_file(p, 0, 4, 0)
                .unwrap_or_else(|e| panic!("{what}: open: {}", ours::strerror(e)));
            digest_ours(&e)
        };
        remove_lock(p);
        if stock_format {
            let e = stock::Env::open_file(p, 0, 4, 0)
                .unwrap_or_else(|e| panic!("{what}: stock open: {}", stock::strerror(e)));
            let s = digest_stock(&e);
            assert_eq!(
                s,
                (id, d),
                "{what}: stock LMDB reads (txn, digest) {s:x?}, our engine {:x?}",
                (id, d)
            );
            drop(e);
            remove_lock(p);
        }
        let rep = accounting(p, &what);
        if kind.compact() {
            assert!(
                id <= 1,
                "{what}: compacted copy has txn id {id} (spec §17.2: ids restart at 1)"
            );
            assert!(
                snaps.values().any(|&x| x == d),
                "{what}: compacted copy equals no committed snapshot"
            );
            assert_eq!(rep.free_pages, 0, "{what}: compacted copy has free pages");
            assert_eq!(
                2 + rep.tree_pages,
                rep.last_pg + 1,
                "{what}: compacted copy pages not renumbered without gaps"
            );
            let len = std::fs::metadata(p).unwrap().len();
            assert_eq!(
                len,
                (rep.last_pg + 1) * 4096,
                "{what}: compacted file length"
            );
        } else {
            assert_eq!(
                snaps.get(&id),
                Some(&d),
                "{what}: plain copy of txn {id} does not hold that snapshot"
            );
            assert!(id <= last_written);
            distinct.insert(id);
        }
    }
    assert!(
        distinct.len() >= 2,
        "{label}: all plain copies show the same snapshot; the writer was not running?"
    );

    // Stock LMDB's compacting copy of the same snapshot (a plain copy)
    // against ours.
    let (_, plain) = copies.iter().find(|(k, _)| *k == Kind::Copy).unwrap();
    let ours_c = dir.path().join("recompact-ours.mdb");
    let stock_c = dir.path().join("recompact-stock.mdb");
    {
        let e = ours::Env::open_file(plain, 0, 4, 0).unwrap();
        e.copy2(&ours_c, ours::ffi::MDB_CP_COMPACT).unwrap();
    }
    remove_lock(plain);
    if stock_format {
        {
            let e = stock::Env::open_file(plain, 0, 4, 0).unwrap();
            e.copy2(&stock_c, stock::ffi::MDB_CP_COMPACT).unwrap();
        }
        remove_lock(plain);
        let (po, ps) = (procs::file_pages(&ours_c), procs::file_pages(&stock_c));
        assert_eq!(
            po, ps,
            "{label}: our compacted copy has {po} pages, stock LMDB's {ps}"
        );
        let (a, b) = (
            std::fs::read(&ours_c).unwrap(),
            std::fs::read(&stock_c).unwrap(),
        );
        if a != b {
            let first = a.iter().zip(&b).position(|(x, y)| x != y);
            eprintln!("{label}: note: compacted copies differ in bytes (first at {first:?}); contents compared below");
            if let Some(d) = std::env::var_os("DLMDB_COPY_DEBUG") {
                let _ = std::fs::copy(&ours_c, Path::new(&d).join("ours.mdb"));
                let _ = std::fs::copy(&stock_c, Path::new(&d).join("stock.mdb"));
            }
        }
        let d_ours = {
            let e = stock::Env::open_file(&ours_c, 0, 4, 0).unwrap();
            digest_stock(&e)
        };
        let d_stock = {
            let e = ours::Env::open_file(&stock_c, 0, 4, 0).unwrap();
            digest_ours(&e)
        };
        assert_eq!(
            d_ours.1, d_stock.1,
            "{label}: the two compacted copies hold different contents"
        );
    } else {
        let rep = accounting(&ours_c, "recompacted v2 copy");
        assert_eq!(rep.free_pages, 0);
    }
}

fn seed() -> u64 {
    std::env::var("DLMDB_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xc0_9101)
}

#[test]
fn copies_under_load_lmdb_format() {
    run(ours::ffi::MDB_FORMAT_LMDB, "lmdb-format", seed());
}

#[test]
fn copies_under_load_v2() {
    run(0, "v2", seed() + 1);
}

/// `mdb_env_copyfd2` into a pipe (a blocking descriptor that cannot seek,
/// as `mdb_copy` writing to stdout): plain and compacting copies stream out
/// whole and open as stores equal to the source. Stock LMDB runs the same.
macro_rules! pipe_copy_test {
    ($name:ident, $m:ident, $digest:ident, $flags:expr $(, #[$attr:meta])?) => {
        #[test]
        $(#[$attr])?
        fn $name() {
            use $m as m;
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("data.mdb");
            let env = m::Env::open_file(&path, $flags, 4, MAP).unwrap();
            let dbis = env.create_dbs(&db_flags()).unwrap();
            {
                let t = env.begin_rw().unwrap();
                for i in 0..3000u32 {
                    t.put(dbis[0], format!("x{i:05}").as_bytes(), &vec![(i % 251) as u8; (i % 700) as usize], 0).unwrap();
                    t.put(dbis[1], format!("y{:03}", i % 97).as_bytes(), format!("{i:06}").as_bytes(), 0).unwrap();
                    if i % 50 == 0 {
                        t.put(dbis[2], format!("z{i:05}").as_bytes(), &vec![1u8; 9000 + i as usize], 0).unwrap();
                    }
                }
                t.commit().unwrap();
                // Some free pages, so compaction has something to drop.
                let t = env.begin_rw().unwrap();
                for i in (0..3000u32).step_by(3) {
                    t.del(dbis[0], format!("x{i:05}").as_bytes(), None).unwrap();
                }
                t.commit().unwrap();
            }
            let want = $digest(&env);
            for compact in [false, true] {
                let mut fds = [0i32; 2];
                // SAFETY: plain pipe creation.
                assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
                let (rd, wr) = (fds[0], fds[1]);
                let reader = std::thread::spawn(move || {
                    use std::io::Read;
                    use std::os::fd::FromRawFd;
                    // SAFETY: we own the read end.
                    let mut f = unsafe { std::fs::File::from_raw_fd(rd) };
                    let mut buf = Vec::new();
                    f.read_to_end(&mut buf).unwrap();
                    buf
                });
                let flags = if compact { m::ffi::MDB_CP_COMPACT } else { 0 };
                let r = env.copyfd2(wr, flags);
                // SAFETY: we own the write end; closing it ends the stream.
                unsafe { libc::close(wr) };
                r.unwrap_or_else(|e| panic!("copyfd2 to a pipe (compact {compact}): {}", m::strerror(e)));
                let bytes = reader.join().unwrap();
                assert_eq!(bytes.len() % 4096, 0, "stream length {} (compact {compact})", bytes.len());
                let out = dir.path().join(format!("piped-{compact}.mdb"));
                std::fs::write(&out, &bytes).unwrap();
                let e = m::Env::open_file(&out, 0, 4, 0).unwrap();
                let got = $digest(&e);
                assert_eq!(got.1, want.1, "piped copy (compact {compact}) holds other contents");
                if !compact {
                    assert_eq!(got.0, want.0, "piped plain copy txn id");
                }
            }
        }
    };
}

pipe_copy_test!(copyfd_to_pipe_ours, ours, digest_ours, 0);
pipe_copy_test!(copyfd_to_pipe_stock, stock, digest_stock, 0);
