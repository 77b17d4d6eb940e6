//! Many processes on one environment:
//! * one writer process and three reader processes for a few seconds. Every
//!   write txn keeps an invariant: 16 counters whose sum is constant, a
//!   `seq` key equal to the txn id, and a `chk` key holding a digest of all
//!   other records (filler records come and go, big and small, so pages
//!   split, merge and get reused). Each reader checks the invariant on every
//!   snapshot (it never sees a half-committed txn), that `seq` matches its
//!   txn id (see [`check_seq`]), that snapshots never go backwards, and
//!   that a snapshot held while the writer moves on stays identical;
//! * the writer lock is exclusive across processes: two processes each
//!   increment a shared counter in write txns and the final count is exact;
//!   a process holding a write txn blocks another process's write txn until
//!   it ends, but not a reader process (timestamps).

use std::path::Path;
use std::time::{Duration, Instant};

use dlmdb_tests::procs::{self, ours, Fnv};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const MAP: usize = 256 << 20;
const COUNTERS: usize = 16;
const TOTAL: u64 = 1_000_000;

fn counter_key(i: usize) -> Vec<u8> {
    format!("c{i:02}").into_bytes()
}

/// Digest of every record except `chk`.
fn checksum(pairs: &[(Vec<u8>, Vec<u8>)]) -> u64 {
    let mut h = Fnv::default();
    for (k, v) in pairs {
        if k != b"chk" {
            h.field(k);
            h.field(v);
        }
    }
    h.0
}

fn u64_of(v: &[u8]) -> u64 {
    u64::from_le_bytes(v.try_into().expect("8-byte value"))
}

/// The snapshot a read txn sees is the one its id names, or a newer one
/// written into the same meta page (id + 2k): the begin protocol of
/// lmdb-format.md §16.6 reads the header txnid, then meta page `txnid mod 2`,
/// so two commits landing in between make it read the newer meta. Stock
/// LMDB does the same (see `read_txn_begin_races_fast_commits_stock`). Never
/// an older snapshot, never one from the other meta page.
fn check_seq(id: u64, seq: u64, who: &str) {
    assert!(
        seq >= id && (seq - id).is_multiple_of(2),
        "{who}: read txn id {id} but its data is txn {seq}'s (older, or from the other meta page)"
    );
}

/// Check the invariant on one snapshot; returns (seq, checksum).
fn check_snapshot(txn: &ours::Txn, dbi: u32, who: &str) -> (u64, u64) {
    let pairs = txn
        .walk(dbi, true)
        .unwrap_or_else(|e| panic!("{who}: walk: {}", ours::strerror(e)));
    let get = |k: &[u8]| pairs.iter().find(|p| p.0 == k).map(|p| p.1.clone());
    let sum: u64 = (0..COUNTERS)
        .map(|i| {
            u64_of(&get(&counter_key(i)).unwrap_or_else(|| panic!("{who}: counter {i} missing")))
        })
        .sum();
    let id = txn.id();
    assert_eq!(sum, TOTAL, "{who}: snapshot {id}: counters sum to {sum}");
    let seq = u64_of(&get(b"seq").unwrap_or_else(|| panic!("{who}: seq missing")));
    check_seq(id, seq, who);
    let chk = u64_of(&get(b"chk").unwrap_or_else(|| panic!("{who}: chk missing")));
    let c = checksum(&pairs);
    assert_eq!(
        chk, c,
        "{who}: snapshot {id}: stored checksum {chk:x} but records digest to {c:x}"
    );
    (seq, c)
}

/// One invariant-keeping write txn.
fn write_step(env: &ours::Env, dbi: u32, rng: &mut ChaCha8Rng) -> u64 {
    let txn = env.begin_rw().expect("writer: begin");
    let id = txn.id();
    let i = rng.gen_range(0..COUNTERS);
    let j = rng.gen_range(0..COUNTERS);
    let ci = u64_of(&txn.get(dbi, &counter_key(i)).unwrap().unwrap());
    let cj = u64_of(&txn.get(dbi, &counter_key(j)).unwrap().unwrap());
    if i != j {
        let amt = rng.gen_range(0..=ci);
        txn.put(dbi, &counter_key(i), &(ci - amt).to_le_bytes(), 0)
            .unwrap();
        txn.put(dbi, &counter_key(j), &(cj + amt).to_le_bytes(), 0)
            .unwrap();
    }
    for _ in 0..rng.gen_range(0..30) {
        let k = format!("f{:03}", rng.gen_range(0..500));
        if rng.gen_bool(0.3) {
            txn.del(dbi, k.as_bytes(), None).unwrap();
        } else {
            let n = if rng.gen_bool(0.05) {
                rng.gen_range(4000..20_000)
            } else {
                rng.gen_range(0..1500)
            };
            let v: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
            txn.put(dbi, k.as_bytes(), &v, 0).unwrap();
        }
    }
    txn.put(dbi, b"seq", &id.to_le_bytes(), 0).unwrap();
    let c = checksum(&txn.walk(dbi, true).unwrap());
    txn.put(dbi, b"chk", &c.to_le_bytes(), 0).unwrap();
    txn.commit()
        .unwrap_or_else(|e| panic!("writer: commit {id}: {}", ours::strerror(e)));
    id
}

fn open(path: &str) -> (ours::Env, u32) {
    let env = ours::Env::open_file(Path::new(path), 0, 2, MAP).expect("open");
    let dbi = env.open_dbs(&["inv"]).expect("open db")[0];
    (env, dbi)
}

fn role_writer() {
    let (env, dbi) = open(&procs::param("PATH"));
    let mut rng = ChaCha8Rng::seed_from_u64(procs::param_u64("SEED"));
    let end = Instant::now() + Duration::from_millis(procs::param_u64("MS"));
    let (mut n, mut last) = (0u64, 0u64);
    while Instant::now() < end {
        last = write_step(&env, dbi, &mut rng);
        n += 1;
    }
    procs::report(&format!("done {n} {last}"));
}

fn role_reader() {
    let who = format!("reader {}", procs::param("ID"));
    let (env, dbi) = open(&procs::param("PATH"));
    let end = Instant::now() + Duration::from_millis(procs::param_u64("MS"));
    let (mut snaps, mut distinct, mut prev, mut held) = (0u64, 0u64, 0u64, 0u64);
    while Instant::now() < end {
        let txn = env.begin_ro().expect("reader: begin");
        let (seq, c) = check_snapshot(&txn, dbi, &who);
        assert!(
            seq >= prev,
            "{who}: snapshot went backwards: {prev} then {seq}"
        );
        if seq != prev {
            distinct += 1;
        }
        prev = seq;
        snaps += 1;
        if snaps % 50 == 0 {
            // Hold this snapshot while the writer goes on; it must not change.
            std::thread::sleep(Duration::from_millis(30));
            let again = check_snapshot(&txn, dbi, &who);
            assert_eq!(again, (seq, c), "{who}: held snapshot {seq} changed");
            held += 1;
        }
        drop(txn);
    }
    procs::report(&format!("done {snaps} {distinct} {held}"));
}

fn role_incr() {
    let (env, dbi) = open(&procs::param("PATH"));
    for _ in 0..procs::param_u64("N") {
        let txn = env.begin_rw().unwrap();
        let c = txn.get(dbi, b"counter").unwrap().map_or(0, |v| u64_of(&v));
        // Widen the race window: a non-exclusive writer would lose updates.
        std::thread::yield_now();
        txn.put(dbi, b"counter", &(c + 1).to_le_bytes(), 0).unwrap();
        txn.commit().unwrap();
    }
    procs::report("done");
}

fn role_holder() {
    let (env, dbi) = open(&procs::param("PATH"));
    let txn = env.begin_rw().unwrap();
    txn.put(dbi, b"holder", b"1", 0).unwrap();
    procs::report(&format!("holding {}", procs::now_us()));
    std::thread::sleep(Duration::from_millis(procs::param_u64("MS")));
    procs::report(&format!("releasing {}", procs::now_us()));
    txn.commit().unwrap();
}

fn role_waiter() {
    let (env, dbi) = open(&procs::param("PATH"));
    procs::report(&format!("start {}", procs::now_us()));
    let txn = env.begin_rw().unwrap();
    procs::report(&format!("got {}", procs::now_us()));
    let holder = txn.get(dbi, b"holder").unwrap();
    assert_eq!(
        holder.as_deref(),
        Some(&b"1"[..]),
        "waiter: holder's commit not visible to the next writer"
    );
    txn.put(dbi, b"waiter", b"1", 0).unwrap();
    txn.commit().unwrap();
}

fn role_quick_reader() {
    let (env, dbi) = open(&procs::param("PATH"));
    let t = env.begin_ro().unwrap();
    check_snapshot(&t, dbi, "quick reader");
    assert_eq!(
        t.get(dbi, b"holder").unwrap(),
        None,
        "quick reader sees an uncommitted write"
    );
    procs::report(&format!("read {}", procs::now_us()));
}

dlmdb_tests::child_roles!(
    "quick_reader" => role_quick_reader,
    "writer" => role_writer,
    "reader" => role_reader,
    "incr" => role_incr,
    "holder" => role_holder,
    "waiter" => role_waiter,
);

/// A fresh store with the invariant established (txn 2 is the first with
/// records; every later txn keeps it).
fn setup() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.mdb");
    let env = ours::Env::open_file(&path, 0, 2, MAP).unwrap();
    env.create_dbs(&[("inv", 0)]).unwrap();
    let dbi = env.open_dbs(&["inv"]).unwrap()[0];
    let txn = env.begin_rw().unwrap();
    let id = txn.id();
    for i in 0..COUNTERS {
        let v = if i == 0 {
            TOTAL - (COUNTERS as u64 - 1) * 1000
        } else {
            1000
        };
        txn.put(dbi, &counter_key(i), &v.to_le_bytes(), 0).unwrap();
    }
    txn.put(dbi, b"seq", &id.to_le_bytes(), 0).unwrap();
    let c = checksum(&txn.walk(dbi, true).unwrap());
    txn.put(dbi, b"chk", &c.to_le_bytes(), 0).unwrap();
    txn.commit().unwrap();
    (dir, path.display().to_string())
}

fn field(line: &str, i: usize) -> u64 {
    line.split(' ')
        .nth(i)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad report line {line:?}"))
}

#[test]
fn one_writer_three_readers() {
    dlmdb_tests::parent_only!();
    let seed = dlmdb_tests::seeds(&[0x7e57_0001])[0];
    eprintln!("one_writer_three_readers: seed {seed} (replay: DLMDB_SEED={seed})");
    let (_dir, path) = setup();
    let ms = "4000".to_string();
    let readers: Vec<_> = (0..3)
        .map(|i| {
            procs::spawn(
                "child_entry",
                "reader",
                &[
                    ("PATH", path.clone()),
                    ("MS", ms.clone()),
                    ("ID", i.to_string()),
                ],
            )
        })
        .collect();
    let writer = procs::spawn(
        "child_entry",
        "writer",
        &[
            ("PATH", path.clone()),
            ("MS", ms.clone()),
            ("SEED", seed.to_string()),
        ],
    );
    let w = writer.expect("done", Duration::from_secs(60));
    writer.wait_ok(Duration::from_secs(10));
    let commits = field(&w, 1);
    eprintln!("writer: {commits} commits, last txn {}", field(&w, 2));
    assert!(
        commits >= 50,
        "seed {seed}: writer made only {commits} commits"
    );
    for (i, r) in readers.into_iter().enumerate() {
        let l = r.expect("done", Duration::from_secs(60));
        r.wait_ok(Duration::from_secs(10));
        let (snaps, distinct, held) = (field(&l, 1), field(&l, 2), field(&l, 3));
        eprintln!("reader {i}: {snaps} snapshots, {distinct} distinct, {held} held");
        assert!(
            snaps >= 50 && distinct >= 5,
            "seed {seed}: reader {i} saw too little ({l})"
        );
    }
    // Final state: invariant and page accounting.
    let p = Path::new(&path);
    {
        let (env, dbi) = open(&path);
        check_snapshot(&env.begin_ro().unwrap(), dbi, "final");
    }
    let env = dlmdb_tests::raw::Env::open(p, ours::ffi::MDB_NOSUBDIR, 2, 0).unwrap();
    dlmdb_tests::raw::check_accounting(&env)
        .unwrap_or_else(|e| panic!("seed {seed}: accounting: {e}"));
}

#[test]
fn writer_exclusive_counter() {
    dlmdb_tests::parent_only!();
    let (_dir, path) = setup();
    let n = 300u64;
    let kids: Vec<_> = (0..2)
        .map(|_| {
            procs::spawn(
                "child_entry",
                "incr",
                &[("PATH", path.clone()), ("N", n.to_string())],
            )
        })
        .collect();
    for k in kids {
        k.expect("done", Duration::from_secs(60));
        k.wait_ok(Duration::from_secs(10));
    }
    let (env, dbi) = open(&path);
    let t = env.begin_ro().unwrap();
    let c = u64_of(&t.get(dbi, b"counter").unwrap().expect("counter"));
    assert_eq!(
        c,
        2 * n,
        "two writer processes lost updates: counter {c}, expected {}",
        2 * n
    );
}

#[test]
fn writer_blocks_other_process() {
    dlmdb_tests::parent_only!();
    let (_dir, path) = setup();
    let hold_ms = 700u64;
    let holder = procs::spawn(
        "child_entry",
        "holder",
        &[("PATH", path.clone()), ("MS", hold_ms.to_string())],
    );
    let h = holder.expect("holding", Duration::from_secs(30));
    // Readers are not blocked by the writer lock.
    let reader = procs::spawn("child_entry", "quick_reader", &[("PATH", path.clone())]);
    let rd = reader.expect("read", Duration::from_secs(30));
    reader.wait_ok(Duration::from_secs(10));
    let waiter = procs::spawn("child_entry", "waiter", &[("PATH", path.clone())]);
    let ws = waiter.expect("start", Duration::from_secs(30));
    let wg = waiter.expect("got", Duration::from_secs(30));
    let hr = holder.expect("releasing", Duration::from_secs(30));
    holder.wait_ok(Duration::from_secs(10));
    waiter.wait_ok(Duration::from_secs(10));
    let (t_hold, t_rel, t_start, t_got) =
        (field(&h, 1), field(&hr, 1), field(&ws, 1), field(&wg, 1));
    eprintln!(
        "holder held {}ms; waiter started {}ms after the hold began and got the lock {}ms after release",
        (t_rel - t_hold) / 1000,
        (t_start - t_hold) / 1000,
        (t_got as i64 - t_rel as i64) / 1000
    );
    assert!(
        t_start < t_rel,
        "waiter started only after the holder released: test too slow to mean anything"
    );
    let t_read = field(&rd, 1);
    assert!(
        t_read < t_rel,
        "a reader process was blocked while another process held the write txn"
    );
    assert!(
        t_got >= t_rel,
        "the second process got the write lock at {t_got} before the holder released it at {t_rel}"
    );
}

/// Threads of one process and NOSYNC commits, so that commits are fast
/// enough for a reader's txn begin to race two of them (the window between
/// reading the header txnid and copying the DB records of meta page
/// `txnid mod 2`, which a writer rewrites two commits later). Both engines
/// then show the newer snapshot under the older id (see [`check_seq`]);
/// an older snapshot or the other meta page's would be a bug.
/// Run on stock LMDB too (same code), as the oracle.
macro_rules! race_test {
    ($name:ident, $m:ident) => {
#[test]
fn $name() {
    dlmdb_tests::parent_only!();
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use procs::$m as m;
    let dir = tempfile::tempdir().unwrap();
    // 1 GB: a reader preempted inside its txn pins pages for a while.
    let env = m::Env::open_file(&dir.path().join("data.mdb"), m::ffi::MDB_NOSYNC, 2, 1 << 30).unwrap();
    let dbi = env.create_dbs(&[("inv", 0)]).unwrap()[0];
    {
        let t = env.begin_rw().unwrap();
        t.put(dbi, b"seq", &t.id().to_le_bytes(), 0).unwrap();
        t.commit().unwrap();
    }
    let env = Arc::new(env);
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (env, stop) = (env.clone(), stop.clone());
            std::thread::spawn(move || {
                let (mut n, mut mismatches) = (0u64, 0u64);
                let mut bad = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let t = env.begin_ro().unwrap();
                    let seq = u64_of(&t.get(dbi, b"seq").unwrap().unwrap());
                    if seq != t.id() {
                        mismatches += 1;
                        if !(seq > t.id() && (seq - t.id()) % 2 == 0) {
                            bad.push((t.id(), seq));
                        }
                    }
                    n += 1;
                }
                eprintln!("reader thread {r}: {n} snapshots, {mismatches} saw a newer same-parity meta, {} bad", bad.len());
                bad
            })
        })
        .collect();
    let end = Instant::now() + Duration::from_secs(2);
    let mut commits = 0u64;
    while Instant::now() < end {
        let t = env.begin_rw().unwrap();
        t.put(dbi, b"seq", &t.id().to_le_bytes(), 0).unwrap();
        if let Err(e) = t.commit() {
            stop.store(true, Ordering::Relaxed);
            let i = env.info().unwrap();
            panic!(
                "commit #{commits} failed: {} (last_pg {}, txn {}, map {})",
                m::strerror(e),
                i.last_pgno,
                i.last_txnid,
                i.map_size
            );
        }
        commits += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let bad: Vec<_> = readers.into_iter().flat_map(|r| r.join().unwrap()).collect();
    eprintln!("{commits} commits");
    assert!(
        bad.is_empty(),
        "read txns seeing an older snapshot or one from the other meta page (txn id, seq in data): {:?}",
        &bad[..bad.len().min(10)]
    );
}
    };
}

race_test!(read_txn_begin_races_fast_commits_ours, ours);
race_test!(read_txn_begin_races_fast_commits_stock, stock);
