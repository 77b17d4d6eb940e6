//! Property test: random puts/deletes/commits/aborts through the safe API
//! agree with a `BTreeMap` model, read back by `get` and by cursor iteration.

use dlmdb::{Database, DatabaseFlags, Env, WriteFlags};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Del(Vec<u8>),
    Commit,
    Abort,
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    // Small alphabet so deletes and overwrites hit existing keys; odd and even lengths.
    prop::collection::vec(
        prop::sample::select(vec![b'a', b'b', b'c', 0u8, 0xff]),
        1..12,
    )
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => prop::collection::vec(any::<u8>(), 0..64),
        1 => prop::collection::vec(any::<u8>(), 2000..9000),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (key(), value()).prop_map(|(k, v)| Op::Put(k, v)),
        4 => key().prop_map(Op::Del),
        1 => Just(Op::Commit),
        1 => Just(Op::Abort),
    ]
}

fn check(env: &Env, db: Database, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let txn = env.read_txn().unwrap();
    let got: Vec<(Vec<u8>, Vec<u8>)> = txn
        .iter(db)
        .unwrap()
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(got, want);
    for (k, v) in model {
        assert_eq!(txn.get(db, k).unwrap(), Some(&v[..]));
    }
    assert_eq!(txn.stat(db).unwrap().entries, model.len() as u64);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_ops_match_model(ops in prop::collection::vec(op(), 1..300)) {
        let dir = tempfile::tempdir().unwrap();
        let env = Env::builder().map_size(64 << 20).max_dbs(2).open(dir.path()).unwrap();
        let db = env.create_db(Some("t"), DatabaseFlags::empty()).unwrap();
        let mut committed = BTreeMap::new();
        let mut pending = committed.clone();
        let mut txn = Some(env.write_txn().unwrap());
        for op in ops {
            let t = txn.as_mut().unwrap();
            match op {
                Op::Put(k, v) => {
                    t.put(db, &k, &v, WriteFlags::empty()).unwrap();
                    pending.insert(k, v);
                }
                Op::Del(k) => {
                    let existed = t.del(db, &k, None).unwrap();
                    prop_assert_eq!(existed, pending.remove(&k).is_some());
                }
                Op::Commit => {
                    txn.take().unwrap().commit().unwrap();
                    committed = pending.clone();
                    check(&env, db, &committed);
                    txn = Some(env.write_txn().unwrap());
                }
                Op::Abort => {
                    txn.take().unwrap().abort();
                    pending = committed.clone();
                    check(&env, db, &committed);
                    txn = Some(env.write_txn().unwrap());
                }
            }
        }
        txn.take().unwrap().commit().unwrap();
        check(&env, db, &pending);
    }
}
