//! DUPSORT fixtures: every DUPSORT database of the shared fixtures
//! reads back exactly as its recorded dump says, with the recorded `mdb_stat`
//! numbers, cursor counts and (newest DLMDB contract) `mdb_cursor_list_dup`.
//!
//! * `dupsort.mdb` (version-1 DLMDB layout: `MDB_FORMAT_DLMDB_V1`),
//!   `dupsort.stock.mdb` (stock layout), `v2/dupsort.mdb` (version 2), and the
//!   `tags` DB of `stock.mdb` (stock LMDB 0.9.24).
//! * Per DB: flags, forward and backward walks == dump records, `ms_entries`,
//!   stat counters == `*.stat.txt`; per key: `MDB_SET` + `mdb_cursor_count`,
//!   `MDB_NEXT_DUP` walk, `mdb_cursor_list_dup` == that walk (for keys with
//!   two or more dups; a single dup may be a plain node -> `MDB_NOTFOUND`, or
//!   a one-item duplicate structure -> `[v]`), `MDB_GET_BOTH` of every pair,
//!   `MDB_GET_MULTIPLE`/`MDB_NEXT_MULTIPLE` == the dup set on DUPFIXED DBs.
//! * `*.facts.json` `largest_dup_sets`: `mdb_cursor_count` == `dups`, and
//!   `list_dup` returns them all. The version-1 facts record the OLD DLMDB
//!   result (MDB_INCOMPATIBLE for sub-database sets); the newest DLMDB
//!   (dlmdb-extensions.md N.5, N.7) lists sub-database sets too, and that is
//!   the contract asserted here, whatever the file's version.
//!
//! The same checks run against stock LMDB on the stock-layout files, which
//! validates every expectation independently of our engine.

use std::collections::BTreeMap;

use dlmdb_kit::dup::{fl, op, rc, rc_name, DupEngine};
use dlmdb_tests::dump::{parse_dump, DumpDb};
use dlmdb_tests::stat::{parse_stat, TreeStat};
use dlmdb_tests::{copy_fixture, fixture_text, show};

struct Fixture {
    data: &'static str,
    env_flags: u32,
    dump: &'static str,
    stat: &'static str,
    facts: Option<&'static str>,
    /// Only these DBs (None: every DUPSORT DB of the dump).
    only: Option<&'static [&'static str]>,
}

const DUPSORT_V1: Fixture = Fixture {
    data: "dupsort.mdb",
    env_flags: fl::FORMAT_DLMDB_V1,
    dump: "dupsort.dump.txt",
    stat: "dupsort.stat.txt",
    facts: Some("dupsort.facts.json"),
    only: None,
};
const DUPSORT_STOCK: Fixture = Fixture {
    data: "dupsort.stock.mdb",
    env_flags: 0,
    dump: "dupsort.dump.txt",
    stat: "dupsort.stock.stat.txt",
    facts: Some("dupsort.facts.json"),
    only: None,
};
const DUPSORT_V2: Fixture = Fixture {
    data: "v2/dupsort.mdb",
    env_flags: 0,
    dump: "v2/dupsort.dump.txt",
    stat: "v2/dupsort.stat.txt",
    facts: Some("v2/dupsort.facts.json"),
    only: None,
};
const STOCK_TAGS: Fixture = Fixture {
    data: "stock.mdb",
    env_flags: 0,
    dump: "stock.dump.txt",
    stat: "stock.stat.txt",
    facts: None,
    only: Some(&["tags"]),
};

/// (key, dups in order) grouped from dump records.
fn group(records: &[(Vec<u8>, Vec<u8>)]) -> Vec<(Vec<u8>, Vec<Vec<u8>>)> {
    let mut out: Vec<(Vec<u8>, Vec<Vec<u8>>)> = Vec::new();
    for (k, d) in records {
        match out.last_mut() {
            Some((lk, v)) if lk == k => v.push(d.clone()),
            _ => out.push((k.clone(), vec![d.clone()])),
        }
    }
    out
}

fn largest_sets(facts: &serde_json::Value, db: &str) -> Vec<(Vec<u8>, u64)> {
    facts["dbs"][db]["largest_dup_sets"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    (
                        hex::decode(s["key_hex"].as_str().unwrap()).unwrap(),
                        s["dups"].as_u64().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Move cursor slot 0 with `step` until `MDB_NOTFOUND`; every pair passed.
fn steps<E: DupEngine>(e: &mut E, step: u32) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut pairs = Vec::new();
    loop {
        let n = e.cget(0, step, None, None);
        if n.rc == rc::NOTFOUND {
            return pairs;
        }
        assert_eq!(n.rc, 0, "{}", op::name(step));
        pairs.push((n.key.unwrap(), n.data.unwrap()));
    }
}

fn check_db<E: DupEngine>(e: &mut E, fx: &Fixture, db: &DumpDb, facts: Option<&serde_json::Value>) {
    let name = db.name_str();
    let who = format!("{} {} db {name}", E::NAME, fx.data);
    let dbi = e
        .open_db(db.name.as_deref(), 0)
        .unwrap_or_else(|r| panic!("{who}: open: {}", rc_name(r)));
    let flags = e.db_flags(dbi).unwrap();
    assert_eq!(flags & 0x7e, db.flags() & 0x7e, "{who}: DB flags");
    let dupfixed = flags & fl::DUPFIXED != 0;

    // whole walks
    let fwd = e
        .walk(dbi, true)
        .unwrap_or_else(|r| panic!("{who}: forward walk: {}", rc_name(r)));
    dlmdb_tests::assert_pairs_eq(&format!("{who}: forward walk"), &fwd, &db.records);
    let mut back = e
        .walk(dbi, false)
        .unwrap_or_else(|r| panic!("{who}: backward walk: {}", rc_name(r)));
    back.reverse();
    dlmdb_tests::assert_pairs_eq(&format!("{who}: backward walk"), &back, &db.records);

    // stat vs the recorded mdb_stat report
    let st = e.stat(dbi).unwrap();
    assert_eq!(st.entries, db.records.len() as u64, "{who}: ms_entries");
    let rep = parse_stat(&fixture_text(fx.stat));
    let want = rep
        .db(&name)
        .unwrap_or_else(|| panic!("{who}: not in {}", fx.stat));
    assert_eq!(TreeStat::from(st), *want, "{who}: stat vs {}", fx.stat);

    // per key
    let groups = group(&db.records);
    let mut counts: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    assert_eq!(e.cursor_open(0, dbi), 0);
    for (k, dups) in &groups {
        let o = e.cget(0, op::SET, Some(k), None);
        assert_eq!(o.rc, 0, "{who}: SET {}", show(k));
        assert_eq!(
            o.data.as_deref(),
            Some(dups[0].as_slice()),
            "{who}: SET {} data = first dup",
            show(k)
        );
        let c = e.ccount(0);
        assert_eq!(c.rc, 0, "{who}: count {}", show(k));
        assert_eq!(
            c.n,
            Some(dups.len() as u64),
            "{who}: mdb_cursor_count {}",
            show(k)
        );
        counts.insert(k.clone(), dups.len() as u64);
        // list_dup before walking (the call does not move the cursor)
        let l = e.clist(0);
        // NEXT_DUP walk from the first dup
        let mut walk = vec![o.data.clone().unwrap()];
        loop {
            let n = e.cget(0, op::NEXT_DUP, None, None);
            if n.rc == rc::NOTFOUND {
                break;
            }
            assert_eq!(n.rc, 0, "{who}: NEXT_DUP in {}", show(k));
            assert_eq!(n.key.as_deref(), Some(k.as_slice()), "{who}: NEXT_DUP key");
            walk.push(n.data.unwrap());
        }
        assert_eq!(&walk, dups, "{who}: NEXT_DUP walk of {}", show(k));
        if dups.len() >= 2 {
            assert_eq!(
                l.rc,
                0,
                "{who}: list_dup {} ({} dups): {}",
                show(k),
                dups.len(),
                rc_name(l.rc)
            );
            assert_eq!(
                l.list.as_ref(),
                Some(&walk),
                "{who}: list_dup {} vs NEXT_DUP walk",
                show(k)
            );
        } else {
            assert!(
                l.rc == rc::NOTFOUND || (l.rc == 0 && l.list.as_ref() == Some(&walk)),
                "{who}: list_dup on single-dup key {}: {}",
                show(k),
                l.show()
            );
        }
        // list_dup after the walk: the cursor is on the last dup; still the whole set
        if dups.len() >= 2 {
            let l2 = e.clist(0);
            assert_eq!(
                l2.list.as_ref(),
                Some(&walk),
                "{who}: list_dup at the last dup of {}",
                show(k)
            );
            let cur = e.cget(0, op::GET_CURRENT, None, None);
            assert_eq!(
                cur.data.as_ref(),
                dups.last(),
                "{who}: list_dup moved the cursor"
            );
        }
        // GET_BOTH of every pair, LAST_DUP / FIRST_DUP
        for d in dups {
            let g = e.cget(0, op::GET_BOTH, Some(k), Some(d));
            assert_eq!(g.rc, 0, "{who}: GET_BOTH {} {}", show(k), show(d));
            assert_eq!(g.data.as_ref(), Some(d), "{who}: GET_BOTH data");
        }
        for (step, want) in [(op::LAST_DUP, dups.last()), (op::FIRST_DUP, dups.first())] {
            let r = e.cget(0, step, None, None);
            assert_eq!(
                (r.rc, r.data.as_ref()),
                (0, want),
                "{who}: {} {}",
                op::name(step),
                show(k)
            );
        }
        // GET_MULTIPLE loop on DUPFIXED sets with several items
        if dupfixed && dups.len() >= 2 {
            let mut all = Vec::new();
            let g = e.cget(0, op::GET_MULTIPLE, None, None);
            assert_eq!(g.rc, 0, "{who}: GET_MULTIPLE {}", show(k));
            all.extend(g.data.unwrap());
            loop {
                let n = e.cget(0, op::NEXT_MULTIPLE, None, None);
                if n.rc == rc::NOTFOUND {
                    break;
                }
                assert_eq!(n.rc, 0, "{who}: NEXT_MULTIPLE {}", show(k));
                assert_eq!(
                    n.key.as_deref(),
                    Some(k.as_slice()),
                    "{who}: NEXT_MULTIPLE key"
                );
                all.extend(n.data.unwrap());
            }
            assert_eq!(
                all,
                dups.concat(),
                "{who}: GET_MULTIPLE+NEXT_MULTIPLE of {}",
                show(k)
            );
        }
    }
    // NEXT_NODUP walk: every key once, positioned on its first dup
    assert_eq!(e.cursor_open(0, dbi), 0);
    let keys = steps(e, op::NEXT_NODUP);
    let want_keys: Vec<_> = groups
        .iter()
        .map(|(k, d)| (k.clone(), d[0].clone()))
        .collect();
    assert_eq!(keys, want_keys, "{who}: NEXT_NODUP walk");
    let mut keys = Vec::new();
    let l = e.cget(0, op::LAST, None, None);
    if l.rc == 0 {
        keys.push((l.key.unwrap(), l.data.unwrap()));
    }
    keys.extend(steps(e, op::PREV_NODUP));
    let mut want_keys: Vec<_> = groups
        .iter()
        .map(|(k, d)| (k.clone(), d.last().unwrap().clone()))
        .collect();
    want_keys.reverse();
    // from MDB_LAST, PREV_NODUP lands on the last dup of each previous key
    assert_eq!(keys, want_keys, "{who}: PREV_NODUP walk");
    e.cursor_close(0);

    // facts: the big sets, listed in full (newest DLMDB contract)
    if let Some(f) = facts {
        for (k, n) in largest_sets(f, &name) {
            assert_eq!(
                counts.get(&k),
                Some(&n),
                "{who}: facts dup count of {}",
                show(&k)
            );
            assert_eq!(e.cursor_open(0, dbi), 0);
            let o = e.cget(0, op::SET, Some(&k), None);
            assert_eq!(o.rc, 0);
            assert_eq!(
                e.ccount(0).n,
                Some(n),
                "{who}: facts mdb_cursor_count of {}",
                show(&k)
            );
            let l = e.clist(0);
            assert_eq!(
                l.rc,
                0,
                "{who}: list_dup of the sub-database set {}: {}",
                show(&k),
                rc_name(l.rc)
            );
            assert_eq!(l.n, Some(n), "{who}: list_dup count of {}", show(&k));
            let want = &groups.iter().find(|(gk, _)| *gk == k).unwrap().1;
            assert_eq!(
                l.list.as_ref(),
                Some(want),
                "{who}: list_dup values of {}",
                show(&k)
            );
            e.cursor_close(0);
        }
    }
}

fn check_fixture<E: DupEngine>(fx: &Fixture) {
    let (_dir, path) = copy_fixture(fx.data);
    let mut e = E::open(&path, fx.env_flags | fl::NOSUBDIR | fl::RDONLY, 16, 0)
        .unwrap_or_else(|r| panic!("{}: cannot open {}: {}", E::NAME, fx.data, rc_name(r)));
    let dbs = parse_dump(&fixture_text(fx.dump)).expect("dump parses");
    let facts: Option<serde_json::Value> = fx
        .facts
        .map(|f| serde_json::from_str(&fixture_text(f)).expect("facts parse"));
    assert_eq!(e.begin_ro(), 0);
    let mut n = 0;
    for db in &dbs {
        let nm = db.name_str();
        let wanted = match fx.only {
            Some(list) => list.contains(&nm.as_str()),
            None => db.is_dupsort(),
        };
        if wanted {
            check_db(&mut e, fx, db, facts.as_ref());
            n += 1;
        }
    }
    assert!(n > 0, "no DUPSORT DB checked in {}", fx.dump);
    e.abort();
}

type Stock = dlmdb_kit::stock::Exec;
type Ours = dlmdb_kit::ours::Exec;

dlmdb_tests::call_tests! {
    // stock LMDB self-checks (validate the expectations; not ignored)
    stock_self_check_dupsort_stock_mdb: check_fixture::<Stock>(&DUPSORT_STOCK);
    stock_self_check_stock_mdb_tags: check_fixture::<Stock>(&STOCK_TAGS);
    // our engine
    ours_dupsort_v1_dlmdb_layout: check_fixture::<Ours>(&DUPSORT_V1);
    ours_dupsort_stock_layout: check_fixture::<Ours>(&DUPSORT_STOCK);
    ours_dupsort_v2: check_fixture::<Ours>(&DUPSORT_V2);
    ours_stock_mdb_tags: check_fixture::<Ours>(&STOCK_TAGS);
}
