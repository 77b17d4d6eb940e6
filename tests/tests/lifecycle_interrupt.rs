//! `mdb_env_set_interrupt` (dlmdb-extensions.md §2.4.9): a sticky
//! flag; while set, puts, gets, cursor gets and tree searches return EINTR
//! and fail their txn (later ops MDB_BAD_TXN, commit MDB_BAD_TXN, nothing
//! becomes visible); txn begin is not checked; a compacting copy fails with
//! EINTR, a plain copy works; clearing the flag lets new txns work; it is
//! safe from a signal handler (SIGUSR1 raised during a long write loop).
//! DLMDB-only: no stock LMDB oracle.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::Mutex;

use dlmdb_tests::procs::ours::{self as m, ffi, Cursor, Env};

const MAP: usize = 256 << 20;
const EINTR: i32 = libc::EINTR;

/// The signal-handler test and the others share the process; keep the
/// interrupt tests from overlapping (the flag is per env, but a stray
/// signal is not).
static SERIAL: Mutex<()> = Mutex::new(());

fn setup() -> (tempfile::TempDir, Env, u32) {
    let dir = tempfile::tempdir().unwrap();
    let env = Env::open_file(&dir.path().join("data.mdb"), 0, 2, MAP).unwrap();
    let dbi = env.create_dbs(&[("d", 0)]).unwrap()[0];
    let t = env.begin_rw().unwrap();
    for i in 0..2000u32 {
        t.put(dbi, format!("k{i:05}").as_bytes(), b"before", 0)
            .unwrap();
    }
    t.commit().unwrap();
    (dir, env, dbi)
}

fn set(env: &Env, on: bool) {
    // SAFETY: live env.
    assert_eq!(unsafe { ffi::mdb_env_set_interrupt(env.env, on as i32) }, 0);
}

/// Raise the flag while `t` is in flight: its next put fails with EINTR
/// (and so fails the txn).
fn interrupt_in_flight(env: &Env, t: &m::Txn<'_>, dbi: u32) {
    set(env, true);
    assert_fails(
        t.put(dbi, b"x", b"y", 0),
        EINTR,
        "first put after the interrupt",
    );
}

/// `r` failed with the return code `want`.
fn assert_fails<T: std::fmt::Debug>(r: Result<T, i32>, want: i32, what: &str) {
    assert_eq!(r.err(), Some(want), "{what}");
}

#[test]
fn interrupt_null_env() {
    // SAFETY: NULL is explicitly handled.
    assert_eq!(
        unsafe { ffi::mdb_env_set_interrupt(std::ptr::null_mut(), 1) },
        libc::EINVAL
    );
}

#[test]
fn interrupt_fails_txns_until_cleared() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, env, dbi) = setup();

    // In flight: a write txn begun before the flag is raised.
    let t = env.begin_rw().unwrap();
    t.put(dbi, b"k00001", b"inflight", 0).unwrap();
    interrupt_in_flight(&env, &t, dbi);
    assert_fails(
        t.get(dbi, b"k00003"),
        ffi::MDB_BAD_TXN,
        "get in a failed txn",
    );
    assert_fails(t.commit(), ffi::MDB_BAD_TXN, "commit of a failed txn");

    // Later txns: begin succeeds, the first access fails.
    let t = env.begin_rw().unwrap();
    assert_fails(t.get(dbi, b"k00004"), EINTR, "get in a new write txn");
    drop(t);
    let t = env.begin_rw().unwrap();
    assert_fails(t.del(dbi, b"k00005", None), EINTR, "del");
    drop(t);
    let r = env.begin_ro().unwrap();
    assert_fails(r.get(dbi, b"k00006"), EINTR, "get in a read txn");
    assert_fails(
        r.get(dbi, b"k00006"),
        ffi::MDB_BAD_TXN,
        "second get in the failed read txn",
    );
    r.reset();
    let r2 = env.begin_ro().unwrap();
    {
        let mut c = Cursor::open(&r2, dbi).unwrap();
        assert_fails(c.get(None, ffi::MDB_FIRST), EINTR, "cursor get");
    }
    drop(r2);
    assert_eq!(r.renew(), Ok(()), "renew while interrupted (not checked)");
    drop(r);
    let t = env.begin_ro().unwrap();
    // A name without a handle yet needs a search of the main DB.
    assert_fails(
        t.open_db(Some(b"other"), 0),
        EINTR,
        "mdb_dbi_open of a named DB",
    );
    drop(t);

    // Copies: compacting fails with EINTR, plain works.
    let c1 = dir.path().join("compact.mdb");
    assert_fails(
        env.copy2(&c1, ffi::MDB_CP_COMPACT),
        EINTR,
        "compacting copy while interrupted",
    );
    let c2 = dir.path().join("plain.mdb");
    env.copy2(&c2, 0).unwrap();

    // Cleared: everything works again and nothing of the failed txns exists.
    set(&env, false);
    let t = env.begin_rw().unwrap();
    assert_eq!(
        t.get(dbi, b"k00001").unwrap().as_deref(),
        Some(&b"before"[..]),
        "failed txn's put visible"
    );
    t.put(dbi, b"k00001", b"after", 0).unwrap();
    t.commit().unwrap();
    let t = env.begin_ro().unwrap();
    assert_eq!(
        t.get(dbi, b"k00001").unwrap().as_deref(),
        Some(&b"after"[..])
    );
    assert_eq!(t.entries(dbi).unwrap(), 2000);
    drop(t);
    let c3 = dir.path().join("compact2.mdb");
    env.copy2(&c3, ffi::MDB_CP_COMPACT).unwrap();
}

static ENV_PTR: AtomicPtr<ffi::MDB_env> = AtomicPtr::new(std::ptr::null_mut());
static HANDLED: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_usr1(_sig: libc::c_int) {
    let e = ENV_PTR.load(Ordering::SeqCst);
    if !e.is_null() {
        // Only stores a flag: async-signal-safe by contract.
        // SAFETY: the env outlives the handler installation.
        unsafe { ffi::mdb_env_set_interrupt(e, 1) };
    }
    HANDLED.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn interrupt_from_signal_handler() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (_dir, env, dbi) = setup();
    ENV_PTR.store(env.env, Ordering::SeqCst);
    // SAFETY: installing a handler that only calls mdb_env_set_interrupt and
    // touches atomics; the previous action is restored below.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_usr1 as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, &mut old), 0);
    }
    let t = env.begin_rw().unwrap();
    let mut done = 0u64;
    let err = loop {
        let k = format!("long{done:08}");
        match t.put(dbi, k.as_bytes(), &[7u8; 300], 0) {
            Ok(()) => done += 1,
            Err(e) => break e,
        }
        if done == 20_000 {
            // SAFETY: plain signal to this process; the handler is installed.
            unsafe { libc::raise(libc::SIGUSR1) };
        }
        assert!(
            done < 2_000_000,
            "the interrupt never stopped the write loop"
        );
    };
    unsafe {
        libc::sigaction(libc::SIGUSR1, &old, std::ptr::null_mut());
    }
    ENV_PTR.store(std::ptr::null_mut(), Ordering::SeqCst);
    assert_eq!(HANDLED.load(Ordering::SeqCst), 1);
    assert_eq!(
        err,
        EINTR,
        "write loop stopped with {} instead of EINTR",
        m::strerror(err)
    );
    assert_eq!(done, 20_000, "the put right after the signal must fail");
    assert_eq!(t.commit().err(), Some(ffi::MDB_BAD_TXN));
    set(&env, false);
    let r = env.begin_ro().unwrap();
    assert_eq!(
        r.get(dbi, b"long00000000").unwrap(),
        None,
        "interrupted txn left data behind"
    );
    assert_eq!(r.entries(dbi).unwrap(), 2000);
}

/// After an interrupt failed the txn, `mdb_cursor_put` returns the error
/// that failed it (EINTR) while `mdb_put` returns MDB_BAD_TXN
/// (dlmdb-extensions.md §2.5).
#[test]
fn interrupt_cursor_put_reports_failing_error() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (_dir, env, dbi) = setup();
    let t = env.begin_rw().unwrap();
    let mut c = Cursor::open(&t, dbi).unwrap();
    assert!(c.get(None, ffi::MDB_FIRST).unwrap().is_some());
    interrupt_in_flight(&env, &t, dbi);
    assert_fails(
        c.put(b"x", b"y", 0),
        EINTR,
        "mdb_cursor_put on the failed txn",
    );
    assert_fails(
        t.put(dbi, b"x", b"y", 0),
        ffi::MDB_BAD_TXN,
        "mdb_put on the failed txn",
    );
    c.forget();
    assert_eq!(t.commit().err(), Some(ffi::MDB_BAD_TXN));
    set(&env, false);
    assert_eq!(env.begin_ro().unwrap().get(dbi, b"x").unwrap(), None);
}

/// Another thread raises the flag while a writer loops: its in-flight txn
/// fails with EINTR within a few operations, and a new txn after clearing
/// works.
#[test]
fn interrupt_from_another_thread() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (_dir, env, dbi) = setup();
    let env = std::sync::Arc::new(env);
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let raiser = {
        let env = env.clone();
        std::thread::spawn(move || {
            rx.recv().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
            set(&env, true);
        })
    };
    let t = env.begin_rw().unwrap();
    let mut n = 0u64;
    let start = std::time::Instant::now();
    let err = loop {
        if n == 100 {
            tx.send(()).unwrap();
        }
        match t.put(dbi, format!("t{n:09}").as_bytes(), &[1u8; 100], 0) {
            Ok(()) => n += 1,
            Err(e) => break e,
        }
        assert!(
            start.elapsed().as_secs() < 20,
            "the interrupt never reached the writer"
        );
    };
    raiser.join().unwrap();
    assert_eq!(err, EINTR);
    assert!(n > 100);
    drop(t);
    set(&env, false);
    let t = env.begin_rw().unwrap();
    t.put(dbi, b"fine", b"1", 0).unwrap();
    t.commit().unwrap();
    let r = env.begin_ro().unwrap();
    assert_eq!(r.get(dbi, b"t000000000").unwrap(), None);
    assert_eq!(r.get(dbi, b"fine").unwrap().as_deref(), Some(&b"1"[..]));
}
