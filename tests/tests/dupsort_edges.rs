//! Op-for-op differential test of duplicate cursor behaviour
//! at the edges: the same seeded op sequence runs on stock LMDB (mdb.master)
//! and on our engine (created with `MDB_FORMAT_LMDB`, so stock semantics
//! apply), and every return code, key, value, count and list is compared.
//!
//! The sequences are edge-heavy: they start on an empty DB, use a tiny key
//! and value space (so ops hit both ends, single-item keys, missing keys),
//! mix cursor ops from two cursors with `mdb_put`/`mdb_del` (deletes under a
//! cursor, other cursors' fix-ups), cursor deletes followed by GET_CURRENT /
//! NEXT / PREV / NEXT_DUP / PREV_DUP / count, drops, commits and aborts, and
//! bulk fills that push one key past the sub-page limit into a
//! sub-database and bulk deletes that shrink it again. DBs: DUPSORT,
//! DUPSORT|DUPFIXED (4-byte items), DUPSORT|REVERSEDUP and a plain DB (where
//! dup ops must give MDB_INCOMPATIBLE).
//!
//! Where stock LMDB's behaviour is arguably a bug but deterministic we
//! mirror it (a compatible engine must behave the same for existing
//! callers); where it reads stale or undefined state, or crashes, the
//! harness keeps the sequence away from it, as listed here:
//! * after a failed exact positioning op (SET, SET_KEY, GET_BOTH,
//!   GET_BOTH_RANGE, and SET_RANGE too: after a SET_RANGE that found
//!   nothing, two stock runs disagreed on the next MDB_NEXT's duplicate,
//!   seed 57 `rev`) the position is unspecified (lmdb-api.md §5.3) and in
//!   stock LMDB not even deterministic: two stock runs of the same sequence
//!   disagreed on the following MDB_NEXT (seed 1, `dup` DB, a failed
//!   GET_BOTH). Such a cursor is not used again (no relative op, count,
//!   delete or MDB_CURRENT) until an absolute op repositions it. NEXT/PREV
//!   failing at the ends are compared.
//!   Stock LMDB even crashed (SIGSEGV) on `mdb_cursor_del` through a cursor
//!   whose last positioning was a failed GET_BOTH followed by a SET_RANGE
//!   refused with MDB_BAD_VALSIZE, and on SET_RANGE after an MDB_CURRENT
//!   put through a cursor whose key had meanwhile grown by `mdb_put`s from
//!   another handle; so MDB_CURRENT and list_dup are only used on a cursor
//!   positioned by its previous op with no write in between. A failed
//!   `mdb_cursor_put` (e.g. APPEND|APPENDDUP refused) also leaves a cursor
//!   that later made a foreign `mdb_put` crash stock. Therefore a cursor
//!   whose exact positioning or cursor put failed is closed at once on both
//!   sides and reopened unpositioned when next used;
//! * a second `mdb_cursor_del` right after one (without a successful cursor
//!   get in between) corrupted stock's tree in our runs (a later MDB_LAST
//!   crashed in `mdb_xcursor_init1`; sequence: del NODUPDATA, del, count,
//!   del NODUPDATA -- the cursor's dup sub-cursor is stale after the first
//!   delete), so a cursor delete needs a successful get since the last one;
//! * after deleting a single-item key followed by a multi-item key, stock
//!   may report a stale duplicate position (lmdb-api.md §5.4) -- compared;
//! * `MDB_APPENDDUP` refused on a plain single value converts the node to a
//!   one-item duplicate sub-page first (visible through list_dup), and this
//!   path later crashed stock (minimal sequence found by delta debugging,
//!   seed 2 `dup` DB: fill a key into a sub-DB, commit, cursor put b/4,
//!   PREV, put NODUPDATA, cursor del, commit, cursor put b/11 APPENDDUP
//!   (refused), commit, cursor put c/8, cursor del NODUPDATA -> SIGSEGV in
//!   a later op). APPENDDUP items are therefore generated so that the append
//!   always succeeds;
//! * deleting through a cursor after another handle inserted into the same
//!   duplicate sub-database corrupts stock's tree (minimal sequence, seed 2
//!   `dup` DB: fill key zz into a sub-DB, commit, MDB_PREV on a new cursor
//!   (last dup of zz), `mdb_put(zz, "0-pad", NODUPDATA)`, `mdb_cursor_del`;
//!   a few ops later stock crashes; seed 13 `fix` DB: SET_KEY bb (sub-DB),
//!   cursor put bb/11 through the other cursor, NEXT_DUP, cursor del, ...,
//!   crash). So cursor deletes (like MDB_CURRENT and list_dup) only run on
//!   a cursor positioned by its previous op, with no write through another
//!   handle since its last absolute positioning (FIRST/LAST/SET*/GET_BOTH*
//!   or its own cursor put). Even reads through such a cursor were not
//!   deterministic in stock (two stock runs disagreed on MDB_NEXT /
//!   MDB_NEXT_DUP after another handle wrote into the cursor's dup
//!   sub-database: seeds 57 `rev`, 88 `dup`), and more crashes followed, so
//!   on DUPSORT DBs a cursor is closed (both sides) as soon as another
//!   handle writes; on the plain DB cursors survive foreign writes and
//!   their fix-ups are compared. Deletes *through* a cursor followed by
//!   GET_CURRENT / NEXT / PREV / *_DUP / count are compared everywhere;
//! * a cursor that ran a `*_MULTIPLE` op is closed afterwards too (another
//!   minimal crash sequence, seed 1 `fix` DB, had NEXT_MULTIPLE on a plain
//!   single value followed by a cursor delete through that cursor, then a
//!   crash in a later MDB_NEXT of the other cursor);
//! * `*_MULTIPLE` on a key whose node is a plain single value may return
//!   pages of a sub-cursor left over from another key (stale state), even
//!   with a success code where there is nothing (PREV_MULTIPLE after
//!   PREV_NODUP onto a plain value, seed 448 `fix`) -- not compared when
//!   the key holds a single item;
//! * `*_MULTIPLE` data depends on how items are spread over LEAF2 pages; it
//!   is compared exactly (our engine splits LEAF2 pages where LMDB does:
//!   in the middle, or a new page for an APPENDDUP item).
//!   `DLMDB_EDGES_LOOSE_MULTIPLE=1` compares only their return codes;
//! * stale duplicate cursor: when a cursor deletes a key holding one plain
//!   value and lands on a key with duplicates, stock keeps the duplicate
//!   sub-cursor of some earlier key (its count, position and even its
//!   sub-DB record), so the following count / *_DUP / NEXT / PREV read
//!   that stale state (seen: counts of another key's sub-DB, MDB_CORRUPTED
//!   from PREV; minimal sequence `dup` seed 137: fill bb into a sub-DB, put
//!   a/2, b/1, a/7 through cursors, NEXT, cursor del, PREV -> CORRUPTED).
//!   Past the last key, GET_MULTIPLE then even hands out a pointer into
//!   freed memory (a SIGSEGV when copied: seed 416 `fix`). So a cursor that
//!   deleted a single plain value is closed at once (both sides). Whether
//!   the value was plain is asked with a scratch cursor (slot 2), never
//!   with GET_CURRENT: in stock even that ends a cursor's "just deleted"
//!   state;
//! * LMDB's end marker (left by LAST, a NEXT off the end or an APPEND put)
//!   survives a later cursor put of a new key unless its lookup starts on
//!   the leaf the key belongs to, so the following NEXT depends on where
//!   leaves split; our engine splits LEAF2 pages like LMDB but other
//!   leaves by bytes (at the middle entry when they hold fewer than one
//!   entry per 128 bytes), so after such a put in a tree of several leaves
//!   the cursor is closed (seen once in ~6,000 runs: seed 1309 `rev`);
//! * the stock list_dup emulation reads the cursor's position with
//!   GET_CURRENT, which ends a "just deleted" state that FIRST_DUP/LAST_DUP
//!   keep, so list_dup is not called after a cursor delete until an
//!   absolute positioning.
//!
//! `mdb_cursor_list_dup` (stock has none; emulated, see `dlmdb_kit::stock`) is only
//! called right after a successful positioning op.
//!
//! `stock_self_check` runs stock against stock (sanity of the harness);
//! `minimized_sequences_match_stock` replays short sequences on which the
//! engines once differed.
//!
//! Debugging: `DLMDB_SEED=n DLMDB_EDGES_DB=fix DLMDB_EDGES_TRACE=1` prints
//! every op with both outcomes; `DLMDB_EDGES_MIN=1` shrinks a failing run to
//! a minimal op list (replay with `DLMDB_EDGES_REPLAY=<file>` holding
//! `<db> <seed> <i,j,..> ours`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use dlmdb_kit::dup::{fl, op, rc, wf, DupEngine, Out};
use dlmdb_tests::multimap::DupDb;
use dlmdb_tests::seeds;

const MAP: usize = 64 << 20;

const DBS: [DupDb; 4] = [
    DupDb::new("dup", fl::DUPSORT, 0),
    DupDb::new("fix", fl::DUPSORT | fl::DUPFIXED, 4),
    DupDb::new("rev", fl::DUPSORT | fl::REVERSEDUP, 0),
    DupDb::new("plain", 0, 0),
];

#[derive(Debug, Clone)]
enum E {
    CGet {
        slot: usize,
        op: u32,
        key: Option<Vec<u8>>,
        data: Option<Vec<u8>>,
    },
    CPut {
        slot: usize,
        key: Vec<u8>,
        data: Vec<u8>,
        flags: u32,
    },
    /// MDB_CURRENT with the bytes GET_CURRENT returns (a same-item rewrite).
    CPutCurrentSame {
        slot: usize,
    },
    CMultiple {
        slot: usize,
        key: Vec<u8>,
        items: Vec<u8>,
    },
    CDel {
        slot: usize,
        flags: u32,
    },
    CCount {
        slot: usize,
    },
    CList {
        slot: usize,
    },
    Put {
        key: Vec<u8>,
        data: Vec<u8>,
        flags: u32,
    },
    Del {
        key: Vec<u8>,
        data: Option<Vec<u8>>,
    },
    Get {
        key: Vec<u8>,
    },
    Fill {
        key: Vec<u8>,
        from: u32,
        n: u32,
    },
    Thin {
        key: Vec<u8>,
        from: u32,
        n: u32,
        step: u32,
    },
    Drop,
    Stat,
    Commit,
    Abort,
}

fn val(db: &DupDb, n: u32) -> Vec<u8> {
    if db.fixed == 4 {
        n.to_be_bytes().to_vec()
    } else {
        // variable sizes; odd and even lengths
        let mut v = format!("{n}").into_bytes();
        if n.is_multiple_of(3) {
            v.extend_from_slice(b"-pad");
        }
        v
    }
}

/// APPENDDUP items: each sorts after every other item ever generated (so
/// the append is never refused; a refused APPENDDUP on a plain single value
/// takes a stock path that later crashed stock LMDB -- see the module doc).
fn app_val(db: &DupDb, counter: &mut u32) -> Vec<u8> {
    *counter += 1;
    let n = *counter;
    if db.fixed == 4 {
        (0xffff_0000u32 + n).to_be_bytes().to_vec()
    } else if db.flags & fl::REVERSEDUP != 0 {
        // compared from the last byte: '~' first, then the digits from the
        // most significant one
        let mut d: Vec<u8> = format!("{n:06}").into_bytes();
        d.reverse();
        d.push(b'~');
        d
    } else {
        format!("~{n:06}").into_bytes()
    }
}

const KEYS: [&[u8]; 6] = [b"a", b"b", b"bb", b"c", b"d", b"zz"];

fn gen(seed: u64, db: &DupDb, n: usize) -> Vec<E> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut v = Vec::with_capacity(n);
    let key = |rng: &mut ChaCha8Rng| -> Vec<u8> {
        match rng.gen_range(0..40) {
            0 => b"0".to_vec(),   // before everything
            1 => b"zzz".to_vec(), // after everything
            2 => b"bab".to_vec(), // between
            _ => KEYS[rng.gen_range(0..KEYS.len())].to_vec(),
        }
    };
    let small = |rng: &mut ChaCha8Rng| rng.gen_range(0..12u32);
    // What a put with `flags` stores: the next appended value for
    // APPENDDUP, else one of the small set (drawn either way).
    let put_data = |rng: &mut ChaCha8Rng, app: &mut u32, flags: u32| {
        let x = small(rng);
        if flags & wf::APPENDDUP != 0 {
            app_val(db, app)
        } else {
            val(db, x)
        }
    };
    let mut app = 0u32;
    for _ in 0..n {
        let slot = rng.gen_range(0..2);
        let e = match rng.gen_range(0..100) {
            0..=44 => {
                let o = rng.gen_range(0..19u32);
                let (k, d) = match o {
                    op::SET | op::SET_KEY | op::SET_RANGE => {
                        let k = if rng.gen_range(0..60) == 0 {
                            Vec::new()
                        } else {
                            key(&mut rng)
                        };
                        (Some(k), None)
                    }
                    op::GET_BOTH | op::GET_BOTH_RANGE => {
                        let x = if rng.gen_bool(0.2) {
                            rng.gen_range(0..1500)
                        } else {
                            small(&mut rng)
                        };
                        (Some(key(&mut rng)), Some(val(db, x)))
                    }
                    _ => (None, None),
                };
                E::CGet {
                    slot,
                    op: o,
                    key: k,
                    data: d,
                }
            }
            45..=56 => {
                let flags = match rng.gen_range(0..8) {
                    0 => wf::NODUPDATA,
                    1 => wf::NOOVERWRITE,
                    2 => wf::APPENDDUP,
                    3 => wf::APPEND,
                    4 => wf::APPEND | wf::APPENDDUP,
                    _ => 0,
                };
                let data = put_data(&mut rng, &mut app, flags);
                E::CPut {
                    slot,
                    key: key(&mut rng),
                    data,
                    flags,
                }
            }
            57..=58 => E::CPutCurrentSame { slot },
            59 => {
                let cnt = rng.gen_range(1..30);
                let items: Vec<u8> = (0..cnt)
                    .flat_map(|_| rng.gen_range(0..2000u32).to_be_bytes())
                    .collect();
                E::CMultiple {
                    slot,
                    key: key(&mut rng),
                    items,
                }
            }
            60..=66 => E::CDel {
                slot,
                flags: if rng.gen_range(0..4) == 0 {
                    wf::NODUPDATA
                } else {
                    0
                },
            },
            67..=70 => E::CCount { slot },
            71..=73 => E::CList { slot },
            74..=81 => {
                let flags = match rng.gen_range(0..6) {
                    0 => wf::NODUPDATA,
                    1 => wf::NOOVERWRITE,
                    2 => wf::APPENDDUP,
                    _ => 0,
                };
                let data = put_data(&mut rng, &mut app, flags);
                E::Put {
                    key: key(&mut rng),
                    data,
                    flags,
                }
            }
            82..=87 => {
                let x = small(&mut rng);
                E::Del {
                    key: key(&mut rng),
                    data: if rng.gen_range(0..5) == 0 {
                        None
                    } else {
                        Some(val(db, x))
                    },
                }
            }
            88 => E::Get { key: key(&mut rng) },
            89..=90 => E::Fill {
                key: key(&mut rng),
                from: rng.gen_range(0..2000),
                n: rng.gen_range(50..400),
            },
            91 => E::Thin {
                key: key(&mut rng),
                from: rng.gen_range(0..1000),
                n: rng.gen_range(50..400),
                step: rng.gen_range(1..3),
            },
            92 if rng.gen_range(0..4) == 0 => E::Drop,
            92..=93 => E::Stat,
            94..=97 => E::Commit,
            _ => E::Abort,
        };
        v.push(e);
    }
    v
}

/// One engine plus the state the harness keeps for it.
struct Side<X: DupEngine> {
    x: X,
    dbi: u32,
    open: [bool; 2],
    _dir: tempfile::TempDir,
}

impl<X: DupEngine> Side<X> {
    fn new(db: &DupDb, env_flags: u32) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.mdb");
        let mut x = X::open(&path, env_flags | fl::NOSUBDIR, 4, MAP)
            .unwrap_or_else(|r| panic!("{}: open {r}", X::NAME));
        assert_eq!(x.begin_rw(), 0);
        let dbi = x
            .open_db(Some(db.name.as_bytes()), db.flags | fl::CREATE)
            .expect("create db");
        assert_eq!(x.commit(), 0);
        assert_eq!(x.begin_rw(), 0);
        Side {
            x,
            dbi,
            open: [false; 2],
            _dir: dir,
        }
    }

    /// Open the slot's cursor if needed; a failure (e.g. MDB_BAD_TXN after
    /// a txn-fatal error) is reported as the op's outcome.
    fn ensure(&mut self, slot: usize) -> i32 {
        if !self.open[slot] {
            let r = self.x.cursor_open(slot, self.dbi);
            if r != 0 {
                return r;
            }
            self.open[slot] = true;
        }
        0
    }

    /// Apply one op; returns the outcomes to compare.
    fn apply(&mut self, e: &E, db: &DupDb, cur_data: Option<&[u8]>) -> Vec<Out> {
        let dbi = self.dbi;
        if let Some(slot) = e.slot() {
            let r = self.ensure(slot);
            if r != 0 {
                return vec![Out::rc(r)];
            }
        }
        match e {
            E::CGet {
                slot,
                op,
                key,
                data,
            } => vec![self.x.cget(*slot, *op, key.as_deref(), data.as_deref())],
            E::CPut {
                slot,
                key,
                data,
                flags,
            } => vec![self.x.cput(*slot, key, data, *flags)],
            E::CPutCurrentSame { slot } => match cur_data {
                Some(d) => {
                    let g = self.x.cget(*slot, op::GET_CURRENT, None, None);
                    let k = g.key.clone().unwrap_or_default();
                    vec![g, self.x.cput(*slot, &k, d, wf::CURRENT)]
                }
                None => vec![],
            },
            E::CMultiple { slot, key, items } => {
                vec![self.x.cput_multiple(*slot, key, items, 4, 0)]
            }
            E::CDel { slot, flags } => vec![Out::rc(self.x.cdel(*slot, *flags))],
            E::CCount { slot } => vec![self.x.ccount(*slot)],
            E::CList { slot } => vec![self.x.clist(*slot)],
            E::Put { key, data, flags } => vec![self.x.put(dbi, key, data, *flags)],
            E::Del { key, data } => vec![Out::rc(self.x.del(dbi, key, data.as_deref()))],
            E::Get { key } => vec![self.x.get(dbi, key)],
            E::Fill { key, from, n } => {
                let mut bad = Vec::new();
                for i in *from..from + n {
                    let o = self.x.put(dbi, key, &val(db, i), 0);
                    if o.rc != 0 {
                        bad.push(o);
                    }
                }
                bad
            }
            E::Thin { key, from, n, step } => {
                let mut rcs = Vec::new();
                for i in (*from..from + n).step_by(*step as usize) {
                    rcs.push(self.x.del(dbi, key, Some(&val(db, i))) as u64);
                }
                vec![Out {
                    n: Some(rcs.iter().filter(|&&r| r == 0).count() as u64),
                    ..Out::default()
                }]
            }
            E::Drop => {
                self.open = [false; 2]; // drop_db closes the cursors
                vec![Out::rc(self.x.drop_db(dbi, false))]
            }
            E::Stat => {
                let s = self.x.stat(dbi).map(|s| s.entries);
                vec![match s {
                    Ok(n) => Out {
                        n: Some(n),
                        ..Out::default()
                    },
                    Err(r) => Out::rc(r),
                }]
            }
            E::Commit | E::Abort => {
                self.open = [false; 2];
                if matches!(e, E::Commit) {
                    let r = self.x.commit();
                    assert_eq!(self.x.begin_rw(), 0);
                    vec![Out::rc(r)]
                } else {
                    self.x.abort();
                    assert_eq!(self.x.begin_rw(), 0);
                    vec![]
                }
            }
        }
    }
}

impl E {
    /// The cursor slot a cursor op works on.
    fn slot(&self) -> Option<usize> {
        match self {
            E::CGet { slot, .. }
            | E::CPut { slot, .. }
            | E::CPutCurrentSame { slot }
            | E::CMultiple { slot, .. }
            | E::CDel { slot, .. }
            | E::CCount { slot }
            | E::CList { slot } => Some(*slot),
            _ => None,
        }
    }
}

fn trace() -> bool {
    std::env::var("DLMDB_EDGES_TRACE").is_ok_and(|v| v == "1")
}

fn loose_multiple() -> bool {
    std::env::var("DLMDB_EDGES_LOOSE_MULTIPLE").is_ok_and(|v| v == "1")
}

/// Ops that place a cursor anew, whatever its state.
const ABSOLUTE_OPS: [u32; 7] = [
    op::FIRST,
    op::LAST,
    op::SET,
    op::SET_KEY,
    op::SET_RANGE,
    op::GET_BOTH,
    op::GET_BOTH_RANGE,
];

/// The slot that `e` (with outcome `rc`) placed anew: a successful absolute
/// positioning or cursor put.
fn repositioned(e: &E, rc: i32) -> Option<usize> {
    match e {
        E::CGet { slot, op: o, .. } if rc == 0 && ABSOLUTE_OPS.contains(o) => Some(*slot),
        E::CPut { slot, .. } if rc == 0 => Some(*slot),
        _ => None,
    }
}

/// Run `ops` on A (the reference) and B; Err((op index, message)).
fn run<A: DupEngine, B: DupEngine>(
    db: &DupDb,
    ops: &[E],
    b_flags: u32,
) -> Result<(), (usize, String)> {
    let mut a = Side::<A>::new(db, 0);
    let mut b = Side::<B>::new(db, b_flags);
    // slots whose last op was a successful positioning (list_dup allowed)
    let mut fresh = [false; 2];
    // slots whose position is unspecified after a failed exact positioning
    let mut unspec = [false; 2];
    // slots whose last cursor op was a cursor delete (no second delete
    // until a successful cursor get: see the module doc)
    let mut deleted = [false; 2];
    // slots that saw a write through another handle since their last
    // absolute positioning (their dup position may be stale in stock)
    let mut tainted = [false; 2];
    // each slot's current key, as its last op reported it
    let mut cur_key: [Option<Vec<u8>>; 2] = [None, None];
    // slots that deleted through themselves since their last absolute
    // positioning
    let mut del_since_abs = [false; 2];
    // slots that LMDB's end marker may be on (LAST, NEXT off the end, APPEND)
    let mut at_end = [false; 2];
    for (i, e) in ops.iter().enumerate() {
        // On DUPSORT DBs a cursor that saw a write through another handle
        // is closed too: stock's reads through it were not even
        // deterministic (see the module doc).
        if db.flags & fl::DUPSORT != 0 {
            for sl in 0..2 {
                if tainted[sl] {
                    unspec[sl] = true;
                    tainted[sl] = false;
                }
            }
        }
        // An unspecified cursor is closed at once on both sides (reopened
        // unpositioned on next use): stock LMDB can crash later when it
        // fixes up such a cursor during writes through other handles.
        for sl in 0..2 {
            if unspec[sl] {
                a.x.cursor_close(sl);
                b.x.cursor_close(sl);
                a.open[sl] = false;
                b.open[sl] = false;
                unspec[sl] = false;
                fresh[sl] = false;
                deleted[sl] = false;
                at_end[sl] = false;
            }
        }
        if let Some(sl) = e.slot() {
            let absolute = matches!(e, E::CGet { op: o, .. } if ABSOLUTE_OPS.contains(o))
                || matches!(e, E::CPut { flags, .. } if flags & wf::CURRENT == 0);
            if unspec[sl] && !absolute {
                continue;
            }
        }
        if let E::CList { slot } | E::CPutCurrentSame { slot } = e {
            if !fresh[*slot] {
                continue;
            }
        }
        // The stock list_dup emulation reads the position with GET_CURRENT,
        // which in stock ends a "just deleted" state that FIRST_DUP and
        // LAST_DUP leave in place; so no list_dup after a cursor delete
        // until an absolute positioning.
        if let E::CList { slot } = e {
            if del_since_abs[*slot] {
                continue;
            }
        }
        if let E::CDel { slot, .. } = e {
            if deleted[*slot] || !fresh[*slot] {
                continue;
            }
        }
        if let E::CDel { slot, .. } | E::CPutCurrentSame { slot } | E::CList { slot } = e {
            if tainted[*slot] {
                continue;
            }
        }
        // MDB_CURRENT rewrite: only when the reference is positioned; the
        // current bytes come from the reference.
        let cur_data = if let E::CPutCurrentSame { slot } = e {
            if a.ensure(*slot) != 0 {
                continue;
            }
            let g = a.x.cget(*slot, op::GET_CURRENT, None, None);
            if g.rc != 0 {
                continue;
            }
            g.data
        } else {
            None
        };
        if trace() {
            eprintln!("[{}] #{i}: {e:?}", db.name);
        }
        if matches!(e, E::Fill { .. } | E::Thin { .. })
            && std::env::var("DLMDB_EDGES_KEEP_CURSORS").is_err()
        {
            // see the module doc: bulk writes from another handle close the
            // cursors first
            for sl in 0..2 {
                a.x.cursor_close(sl);
                b.x.cursor_close(sl);
                a.open[sl] = false;
                b.open[sl] = false;
            }
            fresh = [false; 2];
            deleted = [false; 2];
        }
        // Stock's stale duplicate cursor (see the module doc): note
        // whether a cursor delete removes a key holding one plain value.
        // (No GET_CURRENT here: in stock even that ends a cursor's "just
        // deleted" state, so the probes use a scratch cursor.)
        let deleting_plain = match e {
            E::CDel { slot, .. } if db.flags & fl::DUPSORT != 0 => cur_key[*slot]
                .clone()
                .filter(|k| !has_dup_node(&mut a, k, op::SET)),
            _ => None,
        };
        // End marker + put of a new key in a tree of several leaves: the
        // outcome depends on leaf boundaries (see the module doc).
        let layout_dependent = matches!(e, E::CPut { slot, flags, .. }
            if at_end[*slot] && flags & wf::APPEND == 0)
            && a.x.stat(a.dbi).is_ok_and(|st| st.depth > 1);
        let oa = a.apply(e, db, cur_data.as_deref());
        let ob = b.apply(e, db, cur_data.as_deref());
        if trace() {
            let sa: Vec<String> = oa.iter().map(|o| o.show()).collect();
            let sb: Vec<String> = ob.iter().map(|o| o.show()).collect();
            eprintln!(
                "      {}: {}\n      {}: {}",
                A::NAME,
                sa.join(" | "),
                B::NAME,
                sb.join(" | ")
            );
        }
        let multiple = matches!(e, E::CGet { op: o, .. } if matches!(*o, op::GET_MULTIPLE | op::NEXT_MULTIPLE | op::PREV_MULTIPLE));
        let same = if multiple && oa[0].rc == 0 {
            let single = {
                let slot = if let E::CGet { slot, .. } = e {
                    *slot
                } else {
                    0
                };
                a.x.ccount(slot).n.unwrap_or(0) <= 1
            };
            if single {
                true
            } else if loose_multiple() {
                oa[0].rc == ob[0].rc
            } else {
                oa == ob
            }
        } else {
            oa == ob
        };
        if !same {
            let sa: Vec<String> = oa.iter().map(|o| o.show()).collect();
            let sb: Vec<String> = ob.iter().map(|o| o.show()).collect();
            return Err((
                i,
                format!(
                    "{e:?}\n   {}: {}\n   {}: {}",
                    A::NAME,
                    sa.join(" | "),
                    B::NAME,
                    sb.join(" | ")
                ),
            ));
        }
        match e {
            E::CGet { slot, op: o, .. }
                if matches!(
                    *o,
                    op::SET | op::SET_KEY | op::SET_RANGE | op::GET_BOTH | op::GET_BOTH_RANGE
                ) =>
            {
                unspec[*slot] = oa[0].rc != 0;
            }
            E::CGet {
                slot,
                op: op::FIRST | op::LAST,
                ..
            } if (oa[0].rc == 0 || oa[0].rc == rc::NOTFOUND) => {
                unspec[*slot] = false;
            }
            E::CPut { slot, .. } => unspec[*slot] = oa[0].rc != 0,
            // *_MULTIPLE leave a page-dependent position; a later cursor
            // delete through such a cursor preceded a stock crash
            E::CGet {
                slot,
                op: op::GET_MULTIPLE | op::NEXT_MULTIPLE | op::PREV_MULTIPLE,
                ..
            } => unspec[*slot] = true,
            E::Drop | E::Commit | E::Abort => unspec = [false; 2],
            _ => {}
        }
        let writer = match e {
            E::CPut { slot, .. }
            | E::CPutCurrentSame { slot }
            | E::CMultiple { slot, .. }
            | E::CDel { slot, .. } => Some(Some(*slot)),
            E::Put { .. } | E::Del { .. } | E::Fill { .. } | E::Thin { .. } => Some(None),
            _ => None,
        };
        if let Some(w) = writer {
            for (sl, t) in tainted.iter_mut().enumerate() {
                if w != Some(sl) {
                    *t = true;
                }
            }
        }
        if let E::CDel { slot, .. } = e {
            del_since_abs[*slot] = true;
        }
        if let E::CPut { slot, .. } = e {
            if layout_dependent {
                unspec[*slot] = true;
            }
        }
        match e {
            E::CGet { slot, op: o, .. } => {
                let rc = oa[0].rc;
                if (*o == op::LAST && rc == 0)
                    || (matches!(
                        *o,
                        op::NEXT | op::NEXT_DUP | op::NEXT_NODUP | op::NEXT_MULTIPLE
                    ) && rc == rc::NOTFOUND)
                {
                    at_end[*slot] = true;
                } else if rc == 0 && !matches!(*o, op::GET_CURRENT | op::FIRST_DUP | op::LAST_DUP) {
                    at_end[*slot] = false;
                }
            }
            E::CPut { slot, flags, .. } => at_end[*slot] = flags & wf::APPEND != 0,
            E::Drop | E::Commit | E::Abort => at_end = [false; 2],
            _ => {}
        }
        if let Some(sl) = repositioned(e, oa.first().map_or(-1, |o| o.rc)) {
            tainted[sl] = false;
            del_since_abs[sl] = false;
        }
        if matches!(e, E::Drop | E::Commit | E::Abort) {
            tainted = [false; 2];
        }
        if let (E::CDel { slot, .. }, Some(_)) = (e, &deleting_plain) {
            if oa[0].rc == 0 {
                unspec[*slot] = true;
            }
        }
        match e {
            E::CGet { slot, op: o, .. }
                if oa[0].rc == 0
                    && !matches!(
                        *o,
                        op::FIRST_DUP
                            | op::LAST_DUP
                            | op::GET_MULTIPLE
                            | op::NEXT_MULTIPLE
                            | op::PREV_MULTIPLE
                    ) =>
            {
                cur_key[*slot] = oa[0].key.clone();
            }
            // the duplicate-only moves stay on the key
            E::CGet { .. } if oa[0].rc == 0 => {}
            E::CPut { slot, key, .. } if oa[0].rc == 0 => cur_key[*slot] = Some(key.clone()),
            E::CGet { slot, .. } | E::CPut { slot, .. } | E::CDel { slot, .. } => {
                cur_key[*slot] = None
            }
            _ => {}
        }
        match e {
            E::CDel { slot, .. } => deleted[*slot] = true,
            E::CGet { slot, .. } if oa[0].rc == 0 => deleted[*slot] = false,
            E::Drop | E::Commit | E::Abort => deleted = [false; 2],
            _ => {}
        }
        match e {
            E::CGet { slot, op: o, .. } => {
                fresh[*slot] = oa[0].rc == 0
                    && matches!(
                        *o,
                        op::FIRST
                            | op::LAST
                            | op::SET
                            | op::SET_KEY
                            | op::SET_RANGE
                            | op::GET_BOTH
                            | op::GET_BOTH_RANGE
                            | op::NEXT
                            | op::PREV
                            | op::NEXT_DUP
                            | op::PREV_DUP
                            | op::NEXT_NODUP
                            | op::PREV_NODUP
                            | op::FIRST_DUP
                            | op::LAST_DUP
                    );
            }
            E::CCount { .. } | E::CList { .. } | E::Get { .. } | E::Stat => {}
            _ => fresh = [false; 2],
        }
    }
    Ok(())
}

/// Debug aid (`DLMDB_EDGES_MIN=1`): shrink a failing sequence by dropping
/// chunks of ops while it still fails, then print the survivors' indices
/// (usable with `DLMDB_EDGES_REPLAY`).
fn minimize<A: DupEngine, B: DupEngine>(db: &DupDb, seed: u64, ops: &[E], b_flags: u32) {
    let mut keep: Vec<usize> = (0..ops.len()).collect();
    let fails = |idx: &[usize]| {
        let sub: Vec<E> = idx.iter().map(|&i| ops[i].clone()).collect();
        run::<A, B>(db, &sub, b_flags).is_err()
    };
    let mut chunk = keep.len() / 2;
    while chunk >= 1 {
        let mut start = 0;
        while start < keep.len() {
            let end = (start + chunk).min(keep.len());
            let trial: Vec<usize> = keep[..start].iter().chain(&keep[end..]).copied().collect();
            if !trial.is_empty() && fails(&trial) {
                keep = trial;
            } else {
                start = end;
            }
        }
        chunk /= 2;
    }
    let list: Vec<String> = keep.iter().map(|i| i.to_string()).collect();
    eprintln!(
        "minimal ({} ops): {} {seed} {}",
        keep.len(),
        db.name,
        list.join(",")
    );
    for &i in &keep {
        eprintln!("  #{i}: {:?}", ops[i]);
    }
}

/// Whether the key found by `how` (e.g. SET: `key` itself) holds a duplicate set (node with sub-page or sub-DB)
/// rather than one plain value, asked through a scratch cursor (slot 2) so
/// the compared cursors are untouched.
fn has_dup_node<X: DupEngine>(side: &mut Side<X>, key: &[u8], how: u32) -> bool {
    const PROBE: usize = 2;
    if side.x.cursor_open(PROBE, side.dbi) != 0 {
        return false;
    }
    let dup = side.x.cget(PROBE, how, Some(key), None).rc == 0 && side.x.clist(PROBE).rc == 0;
    side.x.cursor_close(PROBE);
    dup
}

/// Every (seed, DB) run is tried; all first differences are reported.
fn differential<A: DupEngine, B: DupEngine>(b_flags: u32) {
    let mut failures = Vec::new();
    // fixed seeds: a CI run replays 17 x 4 sequences of 4,000 ops (~5 s)
    let fixed: Vec<u64> = (1..=16).chain([0xed9e]).collect();
    for seed in seeds(&fixed) {
        for db in &DBS {
            if std::env::var("DLMDB_EDGES_DB").is_ok_and(|only| only != db.name) {
                continue;
            }
            let ops = gen(seed ^ (db.flags as u64) << 32, db, 4000);
            if trace() {
                eprintln!("=== seed {seed} db {}", db.name);
            }
            if let Err((i, msg)) = run::<A, B>(db, &ops, b_flags) {
                let (mut lo, mut hi) = (0usize, i + 1);
                while lo + 1 < hi {
                    let mid = (lo + hi) / 2;
                    if run::<A, B>(db, &ops[..mid], b_flags).is_err() {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                if std::env::var("DLMDB_EDGES_MIN").is_ok_and(|v| v == "1") {
                    minimize::<A, B>(db, seed, &ops[..hi], b_flags);
                }
                let from = hi.saturating_sub(12);
                let tail: Vec<String> = ops[from..hi]
                    .iter()
                    .enumerate()
                    .map(|(j, o)| format!("#{}: {o:?}", from + j))
                    .collect();
                let m = format!(
                    "db {} seed {seed} (DLMDB_SEED={seed}): {} and {} differ at op #{i}: {msg}\n\
                     shortest failing prefix {hi} ops; last ops:\n  {}",
                    db.name,
                    A::NAME,
                    B::NAME,
                    tail.join("\n  ")
                );
                eprintln!("{m}\n");
                failures.push(m);
            }
        }
    }
    if !failures.is_empty() {
        panic!(
            "{} of the seeded runs differ (each listed above); first:\n{}",
            failures.len(),
            failures[0]
        );
    }
}

/// Debug aid: `DLMDB_EDGES_REPLAY=<file>` holding `<db name> <seed> <i,j,..>`
/// runs only those ops of that generated sequence (stock against stock).
fn replay_from_env() -> bool {
    let Ok(f) = std::env::var("DLMDB_EDGES_REPLAY") else {
        return false;
    };
    let text = std::fs::read_to_string(f).unwrap();
    let mut it = text.split_whitespace();
    let (name, seed, idx) = (
        it.next().unwrap(),
        it.next().unwrap().parse::<u64>().unwrap(),
        it.next().unwrap_or(""),
    );
    let db = DBS.iter().find(|d| d.name == name).unwrap();
    let all = gen(seed ^ (db.flags as u64) << 32, db, 4000);
    let ops: Vec<E> = idx
        .split(',')
        .filter(|x| !x.is_empty())
        .map(|i| all[i.parse::<usize>().unwrap()].clone())
        .collect();
    let r = if it.next() == Some("ours") {
        run::<dlmdb_kit::stock::Exec, dlmdb_kit::ours::Exec>(db, &ops, fl::FORMAT_LMDB)
    } else {
        run::<dlmdb_kit::stock::Exec, dlmdb_kit::stock::Exec>(db, &ops, 0)
    };
    eprintln!("replay result: {r:?}");
    true
}

#[test]
fn stock_self_check() {
    if replay_from_env() {
        return;
    }
    differential::<dlmdb_kit::stock::Exec, dlmdb_kit::stock::Exec>(0);
}

#[test]
fn ours_vs_stock_op_for_op() {
    differential::<dlmdb_kit::stock::Exec, dlmdb_kit::ours::Exec>(fl::FORMAT_LMDB);
}

/// Minimal op sequences (found by `DLMDB_EDGES_MIN=1` from seeded runs) on
/// which our engine once differed from stock LMDB; each is a subsequence of
/// the generated run `(db, seed)`, replayed through the full harness.
const MINIMIZED: &[(&str, u64, &[usize])] = &[
    // NEXT_MULTIPLE after an existing-duplicate put that followed MDB_LAST
    ("fix", 2, &[2626, 2682, 2801, 2802, 2804]),
    // a delete that empties the tree unpositions the other cursors
    ("plain", 126, &[137, 139, 140, 143]),
    ("plain", 33, &[456, 474, 476, 480, 485, 487]),
    ("plain", 102, &[3063, 3065, 3067, 3068]),
    ("plain", 310, &[752, 753, 759, 760, 763, 764, 769]),
    // the end marker left by MDB_LAST / MDB_APPEND on a plain DB
    ("plain", 175, &[2426, 2428, 2433, 2434, 2437]),
    ("plain", 216, &[2941, 2944, 2945, 2946, 2947]),
    ("plain", 195, &[2674, 2675, 2678, 2679]),
    (
        "plain",
        318,
        &[1934, 1954, 1955, 2054, 2055, 2058, 2060, 2064],
    ),
    (
        "plain",
        86,
        &[1956, 1964, 1980, 2056, 2057, 2058, 2059, 2060, 2062, 2065],
    ),
    // LEAF2 pages split where LMDB splits them (GET/NEXT_MULTIPLE chunks)
    ("fix", 119, &[1228, 1330, 1550, 1614, 1678]),
    ("fix", 121, &[960, 1025, 1069, 1079]),
    // "just deleted" duplicate state across FIRST_DUP / LAST_DUP / PREV*
    ("fix", 69, &[2725, 2775, 2907, 3602, 3604, 3607, 3608, 3609]),
    ("rev", 114, &[1024, 1026, 1064, 1065, 1066, 1072, 1076]),
    ("fix", 297, &[2140, 2366, 2369, 2371, 2373]),
    ("rev", 199, &[2464, 2478, 2523, 2527, 2530, 2531, 2532]),
    (
        "dup",
        256,
        &[
            1666, 1703, 1707, 1723, 2015, 2067, 2075, 2216, 2219, 2220, 2221, 2222,
        ],
    ),
    // harness rules: stock's stale duplicate cursor, list_dup emulation
    (
        "dup",
        104,
        &[3679, 3695, 3710, 3884, 3915, 3917, 3918, 3919],
    ),
    (
        "fix",
        10,
        &[3359, 3370, 3549, 3648, 3649, 3652, 3653, 3654, 3655],
    ),
    ("fix", 145, &[1374, 1460, 1466, 1469, 1470, 1472, 1476]),
    // PREV_NODUP drops the end marker even when there is no previous key
    ("fix", 614, &[2853, 2856, 2879, 2881, 2882]),
    // LEAF2 rebalance: borrow one item from a neighbour a quarter full
    ("fix", 679, &[664, 674, 1000, 1105, 1474, 1669, 1674, 1836]),
    // GET_CURRENT past a key's last duplicate ends its deleted state
    ("fix", 928, &[1477, 1480, 1483, 1485, 1488, 1490, 1491]),
    // a put of a new last key leaves the end marker set (also for the
    // rest of an MDB_MULTIPLE batch); NEXT on an empty DB does not
    ("fix", 1331, &[565, 566, 568, 569]),
    ("plain", 1066, &[3819, 3821, 3824, 3825, 3828]),
    // a refused NEXT_NODUP keeps the duplicate position's deleted state
    ("fix", 1719, &[2853, 2893, 2913, 2916, 2919, 2920, 2922]),
    // MDB_APPEND on a DUPSORT DB sets the end marker too
    ("fix", 2599, &[3615, 3624, 3625, 3628]),
    // the end marker counts only on the last key of the leaf
    ("rev", 2, &[2035, 2040, 2042, 2045]),
    // MDB_MULTIPLE stops (successfully) at an item equal to a plain value
    ("fix", 414, &[2730]),
    // the end marker survives refused duplicate-only ops
    ("plain", 420, &[1477, 1481, 1484, 1487, 1490, 1491]),
];

#[test]
fn minimized_sequences_match_stock() {
    let mut failures = Vec::new();
    for &(name, seed, idx) in MINIMIZED {
        let db = DBS.iter().find(|d| d.name == name).unwrap();
        let all = gen(seed ^ (db.flags as u64) << 32, db, 4000);
        let ops: Vec<E> = idx.iter().map(|&i| all[i].clone()).collect();
        if let Err((i, msg)) =
            run::<dlmdb_kit::stock::Exec, dlmdb_kit::ours::Exec>(db, &ops, fl::FORMAT_LMDB)
        {
            failures.push(format!("{name} seed {seed}, op {}: {msg}", idx[i]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The harness itself: a few fixed traces from lmdb-api.md §5.1 (verified
/// there against stock LMDB), run on stock, to make sure the executor
/// reports keys/data the way the comparisons assume.
#[test]
fn stock_documented_traces() {
    let db = &DBS[0];
    let mut s = Side::<dlmdb_kit::stock::Exec>::new(db, 0);
    for (k, d) in [
        ("a", "1"),
        ("a", "2"),
        ("a", "3"),
        ("b", "5"),
        ("c", "7"),
        ("c", "8"),
        ("d", "1"),
        ("d", "2"),
    ] {
        assert_eq!(s.x.put(s.dbi, k.as_bytes(), d.as_bytes(), 0).rc, 0);
    }
    assert_eq!(s.ensure(0), 0);
    let mut step = |o: u32, k: Option<&str>, d: Option<&str>| {
        let r = s.x.cget(0, o, k.map(str::as_bytes), d.map(str::as_bytes));
        if r.rc == 0 {
            format!(
                "{}/{}",
                String::from_utf8_lossy(r.key.as_deref().unwrap()),
                String::from_utf8_lossy(r.data.as_deref().unwrap())
            )
        } else if r.rc == rc::NOTFOUND {
            "NOTFOUND".into()
        } else {
            format!("rc {}", r.rc)
        }
    };
    // Each step: operation, key and data given, the item it lands on
    // (`key/data`; FIRST_DUP leaves the key alone, so only `/data`).
    let trace = [
        (op::NEXT_DUP, None, None, "a/1"),
        (op::NEXT, None, None, "a/2"),
        (op::NEXT, None, None, "a/3"),
        (op::NEXT_DUP, None, None, "NOTFOUND"),
        (op::NEXT_NODUP, None, None, "b/5"),
        (op::PREV_NODUP, None, None, "a/3"),
        (op::PREV_DUP, None, None, "a/2"),
        (op::FIRST_DUP, None, None, "/1"),
        (op::SET_RANGE, Some("bb"), None, "c/7"),
        (op::GET_BOTH_RANGE, Some("a"), Some("25"), "a/3"),
        (op::GET_BOTH_RANGE, Some("b"), Some("6"), "NOTFOUND"),
        (op::SET_RANGE, Some("zz"), None, "NOTFOUND"),
        (op::PREV, None, None, "d/2"),
        (op::LAST, None, None, "d/2"),
        (op::NEXT, None, None, "NOTFOUND"),
        (op::GET_CURRENT, None, None, "d/2"),
        (op::PREV, None, None, "d/1"),
        (op::FIRST, None, None, "a/1"),
        (op::PREV, None, None, "NOTFOUND"),
        (op::GET_CURRENT, None, None, "a/1"),
    ];
    for (i, (o, k, d, want)) in trace.into_iter().enumerate() {
        assert_eq!(step(o, k, d), want, "step {i} of the trace");
    }
}

/// Documents (does not impose on our engine) a stock quirk: `MDB_APPENDDUP`
/// refused on a key holding one plain value still converts the node into a
/// one-item duplicate sub-page (seen through the emulated list_dup, which
/// distinguishes the two with MDB_FIRST_DUP).
#[test]
fn stock_quirk_refused_appenddup_converts_plain_value() {
    let db = &DBS[0];
    let mut s = Side::<dlmdb_kit::stock::Exec>::new(db, 0);
    assert_eq!(s.x.put(s.dbi, b"k", b"5", 0).rc, 0);
    assert_eq!(s.ensure(0), 0);
    assert_eq!(s.x.cget(0, op::SET, Some(b"k"), None).rc, 0);
    assert_eq!(s.x.clist(0).rc, rc::NOTFOUND, "plain single value");
    assert_eq!(s.x.put(s.dbi, b"k", b"5", wf::APPENDDUP).rc, rc::KEYEXIST);
    assert_eq!(s.x.cget(0, op::SET, Some(b"k"), None).rc, 0);
    assert_eq!(
        s.x.clist(0).rc,
        rc::NOTFOUND,
        "equal item refused before any conversion"
    );
    assert_eq!(s.x.put(s.dbi, b"k", b"3", wf::APPENDDUP).rc, rc::KEYEXIST);
    assert_eq!(s.x.cget(0, op::SET, Some(b"k"), None).rc, 0);
    let l = s.x.clist(0);
    assert_eq!(
        (l.rc, l.list),
        (0, Some(vec![b"5".to_vec()])),
        "converted to a one-item sub-page"
    );
    assert_eq!(s.x.ccount(0).n, Some(1));
}
