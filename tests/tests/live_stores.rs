//! Live stores: our engine and stock LMDB processes share one environment at
//! the same time, through the same lock file (lmdb-format.md §16).
//!
//! Stock families, each a separate process ([`dlmdb_tests::live`]):
//! LMDB 0.9 (Debian's liblmdb, lock version 1) and LMDB 1.0 (`lmdb-master-sys`,
//! lock version 2). Our side is this test process (or, where our process
//! must die, a peer process running our engine). Every wait is bounded and
//! randomized tests print their seed on failure.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use dlmdb_tests::live::{self, stock_families, Family, Peer};
use dlmdb_tests::procs::{self, ours};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const MAP: usize = 64 << 20;
/// Longest a scenario may take before the process is aborted.
const LIMIT: Duration = Duration::from_secs(180);

dlmdb_tests::child_roles!(
    live::PEER_ROLE => live::serve,
    live::HOLD_LOCK_BYTE_ROLE => live::hold_lock_byte,
);

/// Lock layout a family uses.
fn lock_version(f: Family) -> u32 {
    if f == Family::Lmdb09 {
        1
    } else {
        2
    }
}

/// Our open flags for joining or starting an environment `f` will share:
/// a new/stock store gets lock version 1 unless told, so LMDB 1.0 needs
/// MDB_LOCK_V2 when we are first.
fn our_flags(f: Family) -> u32 {
    if f == Family::Lmdb09 {
        0
    } else {
        dlmdb_sys::MDB_LOCK_V2
    }
}

fn layout(env: &ours::Env) -> dlmdb_sys::MDB_envlayout {
    let mut l = dlmdb_sys::MDB_envlayout::default();
    // SAFETY: live env, plain data out.
    assert_eq!(unsafe { dlmdb_sys::mdb_env_get_layout(env.env, &mut l) }, 0);
    l
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// The key/value pairs a store should hold, in key order.
type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// A stock peer creates a stock store with `n` keys; returns it and the model.
fn stock_store(f: Family, path: &Path, n: u32) -> (Peer, Pairs) {
    let mut p = Peer::spawn(f, &[]);
    p.open(path, MAP).expect("stock peer opens");
    p.ok("wbegin");
    let mut model = Vec::new();
    for i in 0..n {
        let v = format!("{}-value-{i}", f.name()).into_bytes();
        p.put(&key(i), &v);
        model.push((key(i), v));
    }
    p.ok("commit");
    (p, model)
}

/// Run `scenario` once per stock family, each on a fresh store and under
/// a watchdog named after the family.
fn each_stock_family(scenario: impl Fn(Family, &Path)) {
    for f in stock_families() {
        let _w = live::watchdog(f.name().to_string(), LIMIT);
        let (_dir, path) = procs::temp_store();
        scenario(f, &path);
    }
}

/// A fresh read txn of ours sees exactly `want` in the main DB.
fn assert_our_content(env: &ours::Env, what: &str, want: &[(Vec<u8>, Vec<u8>)]) {
    let t = env.begin_ro().unwrap();
    dlmdb_tests::assert_pairs_eq(what, &t.walk(1, true).unwrap(), want);
}

fn digest(pairs: &[(Vec<u8>, Vec<u8>)]) -> (u64, u64) {
    (pairs.len() as u64, live::digest_of(pairs))
}

/// A stock process holds a read txn while another stock process writes; we
/// join (the lock file's format word tells us the layout), see their commits,
/// write, and they see ours; their pinned snapshot is unchanged.
#[test]
fn we_join_a_stock_environment() {
    dlmdb_tests::parent_only!();
    each_stock_family(|f, path| {
        let (mut writer, mut model) = stock_store(f, path, 300);
        let mut reader = Peer::spawn(f, &[]);
        reader.open(path, MAP).unwrap();
        let pinned_id: u64 = reader.ok("rbegin").parse().unwrap();
        let pinned = digest(&model);

        let env = ours::Env::open_file(path, 0, 0, MAP)
            .unwrap_or_else(|rc| panic!("{}: we cannot join: {}", f.name(), ours::strerror(rc)));
        let l = layout(&env);
        assert_eq!(
            (l.ml_lockver, l.ml_lockjoined, l.ml_padded, l.ml_version),
            (lock_version(f), 1, 0, 1),
            "{}: joined layout",
            f.name()
        );
        // Their commit, after we opened, is visible to us.
        writer.ok("wbegin");
        writer.put(b"from-stock", b"1");
        let their_id: u64 = writer.ok("commit").parse().unwrap();
        model.push((b"from-stock".to_vec(), b"1".to_vec()));
        model.sort();
        let t = env.begin_ro().unwrap();
        assert_eq!(t.id(), their_id, "{}: our snapshot id", f.name());
        dlmdb_tests::assert_pairs_eq(f.name(), &t.walk(1, true).unwrap(), &model);
        drop(t);
        // Our commits are visible to them, and their pinned reader still
        // sees its snapshot.
        let w = env.begin_rw().unwrap();
        for i in (0..300).step_by(3) {
            w.del(1, &key(i), None).unwrap();
        }
        for i in 1000..1200 {
            w.put(1, &key(i), &[i as u8; 700], 0).unwrap();
        }
        w.commit().unwrap();
        model.retain(|(k, _)| {
            !(k.starts_with(b"key")
                && std::str::from_utf8(&k[3..])
                    .unwrap()
                    .parse::<u32>()
                    .unwrap()
                    % 3
                    == 0
                && std::str::from_utf8(&k[3..])
                    .unwrap()
                    .parse::<u32>()
                    .unwrap()
                    < 300)
        });
        for i in 1000..1200 {
            model.push((key(i), vec![i as u8; 700]));
        }
        model.sort();
        assert_eq!(
            writer.digest(),
            digest(&model),
            "{}: sees our commit",
            f.name()
        );
        assert_eq!(
            reader.digest(),
            pinned,
            "{}: pinned snapshot {pinned_id}",
            f.name()
        );
        reader.ok("rend");
        assert_eq!(
            reader.digest(),
            digest(&model),
            "{}: reader renewed",
            f.name()
        );
        // Both see each other's reader slots.
        let t = env.begin_ro().unwrap();
        let (lines, _) = env.reader_list();
        assert!(
            lines
                .iter()
                .any(|l| l.trim_start().starts_with(&reader.pid().to_string())),
            "{}: their reader is in our reader list: {lines:?}",
            f.name()
        );
        let numreaders: u32 = writer
            .ok("info")
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        assert!(numreaders >= 2, "{}: they count our slot", f.name());
        drop(t);
        reader.quit();
        writer.quit();
    });
}

/// We hold the environment (a reader pinned); a stock process opens it,
/// reads our data and writes; our pinned snapshot is unchanged.
#[test]
fn stock_joins_our_environment() {
    dlmdb_tests::parent_only!();
    each_stock_family(|f, path| {
        // A fresh stock-format store, created by us.
        let env =
            ours::Env::open_file(path, dlmdb_sys::MDB_FORMAT_LMDB | our_flags(f), 0, MAP).unwrap();
        let l = layout(&env);
        assert_eq!(
            (l.ml_lockver, l.ml_lockjoined),
            (lock_version(f), 0),
            "{}",
            f.name()
        );
        let mut model: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        {
            let w = env.begin_rw().unwrap();
            for i in 0..500 {
                let v = format!("ours-{i}").into_bytes();
                w.put(1, &key(i), &v, 0).unwrap();
                model.push((key(i), v));
            }
            w.commit().unwrap();
        }
        let pin = env.begin_ro().unwrap();
        let pinned = model.clone();
        let mut p = Peer::spawn(f, &[]);
        p.open(path, MAP)
            .unwrap_or_else(|rc| panic!("{} cannot join ours: {rc}", f.name()));
        assert_eq!(p.digest(), digest(&model), "{} reads our data", f.name());
        p.ok("wbegin");
        for i in 0..500 {
            if i % 2 == 0 {
                assert!(p.del(&key(i)));
            }
        }
        p.put(b"stock", &[7u8; 3000]);
        p.ok("commit");
        model.retain(|(k, _)| {
            std::str::from_utf8(&k[3..])
                .unwrap()
                .parse::<u32>()
                .unwrap()
                % 2
                == 1
        });
        model.push((b"stock".to_vec(), vec![7u8; 3000]));
        model.sort();
        dlmdb_tests::assert_pairs_eq("our pinned reader", &pin.walk(1, true).unwrap(), &pinned);
        drop(pin);
        assert_our_content(&env, "after their commit", &model);
        p.quit();
    });
}

/// Ours and stock alternate write transactions under a random schedule; now
/// and then a writer of one family is inside its txn while the other asks
/// for the writer mutex, which must wait (the mutex is really shared). The
/// final content matches the model on both sides.
#[test]
fn alternating_writers_model_check() {
    dlmdb_tests::parent_only!();
    for f in stock_families() {
        for seed in dlmdb_tests::seeds(&[11, 12]) {
            let _w = live::watchdog(
                format!("alternating writers with {}: seed {seed}", f.name()),
                LIMIT,
            );
            let r = std::panic::catch_unwind(|| alternating(f, seed));
            if let Err(e) = r {
                eprintln!("alternating writers with {}: seed {seed} failed", f.name());
                std::panic::resume_unwind(e);
            }
        }
    }
}

fn alternating(f: Family, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (_dir, path) = procs::temp_store();
    let (mut p, init) = stock_store(f, &path, 50);
    let mut model: std::collections::BTreeMap<Vec<u8>, Vec<u8>> = init.into_iter().collect();
    let env = std::sync::Arc::new(ours::Env::open_file(&path, 0, 0, MAP).unwrap());
    for round in 0..40u32 {
        let ops: Vec<(u32, Option<Vec<u8>>)> = (0..rng.gen_range(1..60))
            .map(|_| {
                let k = rng.gen_range(0..400);
                let v = if rng.gen_bool(0.8) {
                    let len = [1usize, 10, 100, 1500, 5000][rng.gen_range(0..5)];
                    Some(vec![rng.gen::<u8>(); len])
                } else {
                    None
                };
                (k, v)
            })
            .collect();
        let at = format!("seed {seed} round {round}");
        let stock_turn = rng.gen_bool(0.5);
        let overlap = rng.gen_bool(0.3);
        if stock_turn {
            p.ok("wbegin");
            // While the stock writer is inside its txn our writer must wait.
            let waiter = overlap.then(|| {
                let env2 = env.clone();
                let (tx, rx) = mpsc::channel();
                std::thread::spawn(move || {
                    let t = env2.begin_rw().unwrap();
                    let seen = t.get(1, b"round").unwrap();
                    t.put(1, b"after-stock", b"x", 0).unwrap();
                    let _ = tx.send((seen, t.commit()));
                });
                rx
            });
            if let Some(rx) = &waiter {
                assert!(
                    rx.recv_timeout(Duration::from_millis(150)).is_err(),
                    "seed {seed} round {round}: our writer got in while {} held the writer mutex",
                    f.name()
                );
            }
            write_round(&ops, round, &mut model, &at, &mut p, Peer::put, Peer::del);
            p.ok("commit");
            if let Some(rx) = waiter {
                let (seen, commit) =
                    rx.recv_timeout(Duration::from_secs(30))
                        .unwrap_or_else(|_| {
                            panic!("seed {seed} round {round}: our writer still waits")
                        });
                commit.unwrap();
                assert_eq!(
                    seen,
                    Some(round.to_string().into_bytes()),
                    "seed {seed}: our writer saw their commit"
                );
                model.insert(b"after-stock".to_vec(), b"x".to_vec());
            }
        } else {
            let mut w = env.begin_rw().unwrap();
            if overlap {
                // The stock writer asks while we are inside: no answer yet.
                p.send("wbegin");
                assert!(
                    p.try_answer(Duration::from_millis(150)).is_none(),
                    "seed {seed} round {round}: {} got the writer mutex we hold",
                    f.name()
                );
            }
            let put = |w: &mut ours::Txn, k: &[u8], v: &[u8]| w.put(1, k, v, 0).unwrap();
            let del = |w: &mut ours::Txn, k: &[u8]| w.del(1, k, None).unwrap();
            write_round(&ops, round, &mut model, &at, &mut w, put, del);
            w.commit().unwrap();
            if overlap {
                p.answer("wbegin", Duration::from_secs(30)).unwrap();
                assert_eq!(
                    p.get(b"round"),
                    Some(round.to_string().into_bytes()),
                    "seed {seed}"
                );
                p.ok("commit");
            }
        }
    }
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.into_iter().collect();
    assert_eq!(
        p.digest(),
        digest(&want),
        "seed {seed}: {} final content",
        f.name()
    );
    assert_our_content(&env, &format!("seed {seed}: our final content"), &want);
    p.quit();
}

/// One writer's turn of [`alternating`]: `ops`, then the round number under
/// key `round`, written by `w` through `put` and `del` (which answers
/// whether the key existed) and applied to the model alike.
fn write_round<W>(
    ops: &[(u32, Option<Vec<u8>>)],
    round: u32,
    model: &mut std::collections::BTreeMap<Vec<u8>, Vec<u8>>,
    at: &str,
    w: &mut W,
    put: impl Fn(&mut W, &[u8], &[u8]),
    del: impl Fn(&mut W, &[u8]) -> bool,
) {
    for (k, v) in ops {
        match v {
            Some(v) => {
                put(w, &key(*k), v);
                model.insert(key(*k), v.clone());
            }
            None => {
                let had = model.remove(&key(*k)).is_some();
                assert_eq!(del(w, &key(*k)), had, "{at}");
            }
        }
    }
    let r = round.to_string().into_bytes();
    put(w, b"round", &r);
    model.insert(b"round".to_vec(), r);
}

/// Pin a snapshot in one family, let the other write a lot (rewrites,
/// deletes, large values: freed pages would be reused if the pin were not
/// seen), then verify the pinned snapshot byte for byte. Both directions.
#[test]
fn pinned_snapshots_survive_the_other_familys_writes() {
    dlmdb_tests::parent_only!();
    each_stock_family(|f, path| {
        let (mut p, mut model) = stock_store(f, path, 400);
        let env = ours::Env::open_file(path, 0, 0, MAP).unwrap();
        let churn_ours = |env: &ours::Env, gen: u8| {
            for _ in 0..10 {
                let w = env.begin_rw().unwrap();
                for i in 0..400 {
                    w.put(1, &key(i), &vec![gen; 200 + (i as usize % 7) * 300], 0)
                        .unwrap();
                }
                w.commit().unwrap();
            }
        };
        // Stock pins, we churn.
        p.ok("rbegin");
        let pinned = digest(&model);
        churn_ours(&env, 1);
        assert_eq!(
            p.digest(),
            pinned,
            "{}: pinned snapshot after our writes",
            f.name()
        );
        p.ok("rend");
        model = (0..400)
            .map(|i| (key(i), vec![1u8; 200 + (i as usize % 7) * 300]))
            .collect();
        assert_eq!(p.digest(), digest(&model), "{}", f.name());
        // We pin, stock churns.
        let pin = env.begin_ro().unwrap();
        for gen in 2..12u8 {
            p.ok("wbegin");
            for i in 0..400 {
                if gen % 3 == 0 && i % 2 == 0 {
                    p.del(&key(i));
                } else {
                    p.put(&key(i), &vec![gen; 100 + (i as usize % 5) * 400]);
                }
            }
            p.ok("commit");
        }
        dlmdb_tests::assert_pairs_eq(
            &format!("{}: our pinned snapshot", f.name()),
            &pin.walk(1, true).unwrap(),
            &model,
        );
        drop(pin);
        p.quit();
    });
}

/// A writer killed with SIGKILL while the other family waits for the writer
/// mutex: the waiter gets it (EOWNERDEAD recovery) and nothing committed is
/// lost; the dead txn's writes are not visible.
#[test]
fn killed_writer_of_one_family_recovered_by_the_other() {
    dlmdb_tests::parent_only!();
    for f in stock_families() {
        // Stock dies, we wait.
        let (_dir, path) = procs::temp_store();
        let (mut p, model) = stock_store(f, &path, 100);
        let env = std::sync::Arc::new(ours::Env::open_file(&path, 0, 0, MAP).unwrap());
        p.ok("wbegin");
        p.put(b"dead", b"never");
        let env2 = env.clone();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let r = env2.begin_rw().map(|t| {
                let seen = t.get(1, b"dead").unwrap();
                t.put(1, b"survivor", b"ours", 0).unwrap();
                (seen, t.commit())
            });
            let _ = tx.send(r);
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(200)).is_err(),
            "{}: mutex not shared",
            f.name()
        );
        p.kill9();
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(Ok((seen, commit))) => {
                assert_eq!(seen, None, "{}: the dead writer's put is visible", f.name());
                commit.unwrap();
            }
            Ok(Err(rc)) => panic!("{}: {}", f.name(), ours::strerror(rc)),
            Err(_) => panic!(
                "{}: our writer still blocked after the stock writer died",
                f.name()
            ),
        }
        let mut want = model.clone();
        want.push((b"survivor".to_vec(), b"ours".to_vec()));
        want.sort();
        assert_our_content(&env, f.name(), &want);
        drop(env);

        // We die (a process running our engine), stock waits.
        let (_dir, path) = procs::temp_store();
        let (mut stock_waiter, model) = stock_store(f, &path, 100);
        let mut ours_peer = Peer::spawn(Family::Ours, &[]);
        ours_peer.open(&path, MAP).unwrap();
        ours_peer.ok("wbegin");
        ours_peer.put(b"dead", b"never");
        stock_waiter.send("wbegin");
        assert!(
            stock_waiter
                .try_answer(Duration::from_millis(200))
                .is_none(),
            "{}: got the writer mutex our process holds",
            f.name()
        );
        ours_peer.kill9();
        stock_waiter
            .answer("wbegin after our writer died", Duration::from_secs(20))
            .unwrap_or_else(|rc| panic!("{}: wbegin after recovery: {rc}", f.name()));
        assert_eq!(stock_waiter.get(b"dead"), None);
        stock_waiter.put(b"survivor", b"stock");
        stock_waiter.ok("commit");
        let mut want = model;
        want.push((b"survivor".to_vec(), b"stock".to_vec()));
        want.sort();
        assert_eq!(stock_waiter.digest(), digest(&want), "{}", f.name());
        stock_waiter.quit();
    }
}

/// A reader process killed with SIGKILL leaves its slot; the other family's
/// mdb_reader_check clears it (pid byte lock test). Both directions.
#[test]
fn stale_readers_cleared_across_families() {
    dlmdb_tests::parent_only!();
    each_stock_family(|f, path| {
        let (mut p, _) = stock_store(f, path, 10);
        let env = ours::Env::open_file(path, 0, 0, MAP).unwrap();
        let mut stock_reader = Peer::spawn(f, &[]);
        stock_reader.open(path, MAP).unwrap();
        stock_reader.ok("rbegin");
        let pid = stock_reader.pid();
        stock_reader.kill9();
        let (lines, _) = env.reader_list();
        assert!(
            lines
                .iter()
                .any(|l| l.trim_start().starts_with(&format!("{pid} "))),
            "{lines:?}"
        );
        assert_eq!(
            env.reader_check().unwrap(),
            1,
            "{}: our reader check",
            f.name()
        );
        let (lines, _) = env.reader_list();
        assert!(
            !lines
                .iter()
                .any(|l| l.trim_start().starts_with(&format!("{pid} "))),
            "{lines:?}"
        );

        let mut our_reader = Peer::spawn(Family::Ours, &[]);
        our_reader.open(path, MAP).unwrap();
        our_reader.ok("rbegin");
        our_reader.kill9();
        assert_eq!(p.ok("readercheck"), "1", "{}: their reader check", f.name());
        assert_eq!(p.ok("readercheck"), "0", "{}", f.name());
        p.quit();
    });
}

/// A lock file in use with a format word we do not know (another
/// architecture, another LMDB branch): MDB_VERSION_MISMATCH, never a guess;
/// with nobody holding it, the first opener re-initialises it.
#[test]
fn unknown_lock_format_refused() {
    dlmdb_tests::parent_only!();
    let _w = live::watchdog("unknown lock format".into(), LIMIT);
    let (_dir, path) = procs::temp_store();
    drop(ours::Env::open_file(&path, dlmdb_sys::MDB_FORMAT_LMDB, 0, MAP).unwrap());
    live::set_lock_word(&path, 0x2C2F_6003);
    let holder = live::hold_lock_file(&path);
    for flags in [
        0,
        dlmdb_sys::MDB_RDONLY,
        dlmdb_sys::MDB_LOCK_V1,
        dlmdb_sys::MDB_LOCK_V2,
    ] {
        assert_eq!(
            ours::Env::open_file(&path, flags, 0, MAP).err(),
            Some(dlmdb_sys::MDB_VERSION_MISMATCH),
            "flags {flags:#x}"
        );
    }
    // Without the lock byte held, the file is ours to re-initialise.
    let _ = holder.kill9();
    let env = ours::Env::open_file(&path, 0, 0, MAP).unwrap();
    assert_eq!(layout(&env).ml_lockver, 1);
    assert_eq!(live::lock_word(&path), 0x0001_0001);
}

/// The first opener's lock layout: the data file's family, the flag, the
/// environment variable; invalid variable values are EINVAL.
#[test]
fn first_opener_picks_the_lock_layout() {
    dlmdb_tests::parent_only!();
    // A new store of each family, created by us.
    let [(_d1, stock_path), (_d2, v2_path), _padded] = [
        (
            dlmdb_sys::MDB_FORMAT_LMDB,
            0x0001_0001,
            "stock-layout store: lock version 1",
        ),
        (0, 0x2C2F_6002, "version-2 store: lock version 2"),
        (
            dlmdb_sys::MDB_FORMAT_DLMDB_V1,
            0x2C2F_6002,
            "padded version-1 store: lock version 2",
        ),
    ]
    .map(|(flags, word, what)| {
        let (dir, path) = procs::temp_store();
        drop(ours::Env::open_file(&path, flags, 0, MAP).unwrap());
        assert_eq!(live::lock_word(&path), word, "{what}");
        (dir, path)
    });
    drop(ours::Env::open_file(&stock_path, dlmdb_sys::MDB_LOCK_V2, 0, MAP).unwrap());
    assert_eq!(live::lock_word(&stock_path), 0x2C2F_6002, "MDB_LOCK_V2");
    drop(ours::Env::open_file(&v2_path, dlmdb_sys::MDB_LOCK_V1, 0, MAP).unwrap());
    assert_eq!(live::lock_word(&v2_path), 0x0001_0001, "MDB_LOCK_V1");
    assert_eq!(
        ours::Env::open_file(
            &v2_path,
            dlmdb_sys::MDB_LOCK_V1 | dlmdb_sys::MDB_LOCK_V2,
            0,
            MAP
        )
        .err(),
        Some(libc::EINVAL)
    );
    // The variable, in a child process (the environment is process-wide).
    for (val, want) in [
        ("v1", Some(0x0001_0001u32)),
        ("v2", Some(0x2C2F_6002)),
        ("bogus", None),
    ] {
        let mut p = Peer::spawn(Family::Ours, &[("DLMDB_LOCK_FORMAT", val)]);
        let r = p.open(&stock_path, MAP);
        match want {
            Some(w) => {
                r.unwrap();
                assert_eq!(live::lock_word(&stock_path), w, "DLMDB_LOCK_FORMAT={val}");
            }
            None => assert_eq!(r.err(), Some(libc::EINVAL), "DLMDB_LOCK_FORMAT={val}"),
        }
        p.quit();
    }
}
