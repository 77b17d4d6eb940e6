//! Map size rules (lmdb-api.md §8), each run on our engine and on
//! stock LMDB:
//! * `mdb_env_set_mapsize` on an open environment (no txn active) after a
//!   `MDB_MAP_FULL`: the same write then succeeds;
//! * another process grows the map and writes past this process's map:
//!   `mdb_txn_begin` returns `MDB_MAP_RESIZED` until `mdb_env_set_mapsize(env,
//!   0)` adopts the stored size, then the new data is readable;
//! * a store created with a large map, opened by a process asking for a
//!   smaller one: it opens (the map is raised to at least the used size, so
//!   a write needing a new page gets MDB_MAP_FULL, as in stock LMDB), a
//!   smaller map with room works, and the stored size is not decreased.

use std::time::Duration;

use dlmdb_tests::procs;

const BIG: usize = 64 << 20;

dlmdb_tests::engine_roles! {
    "grower" => |m, path| {
        let env = m::Env::open_file(&path, 0, 2, BIG).expect("grower: open");
        let dbi = env.open_dbs(&["d"]).expect("grower: db")[0];
        let t = env.begin_rw().unwrap();
        for i in 0..2500u32 {
            t.put(dbi, format!("g{i:05}").as_bytes(), &vec![7u8; 4000], 0)
                .expect("grower: put");
        }
        t.commit().expect("grower: commit");
        procs::report(&format!("done {}", env.info().unwrap().last_pgno));
    }
}

dlmdb_tests::engine_tests! {
    fn set_mapsize_then_grow_ours, set_mapsize_then_grow_stock(m, engine) {
        let (_dir, path) = procs::temp_store();
        let env = m::Env::open_file(&path, 0, 2, 1 << 20).unwrap();
        let dbi = env.create_dbs(&[("d", 0)]).unwrap()[0];
        let fill = |n: u32| -> Result<(), i32> {
            let t = env.begin_rw()?;
            for i in 0..n {
                t.put(dbi, format!("k{i:05}").as_bytes(), &vec![1u8; 2000], 0)?;
            }
            t.commit()
        };
        assert_eq!(
            fill(2000).err(),
            Some(m::ffi::MDB_MAP_FULL),
            "{}: 4 MB into a 1 MB map",
            engine
        );
        // Nothing of the failed txn is visible.
        assert_eq!(env.begin_ro().unwrap().entries(dbi).unwrap(), 0);
        env.set_mapsize(16 << 20).unwrap();
        assert_eq!(
            env.info().unwrap().map_size,
            16 << 20,
            "{}: map size after set_mapsize",
            engine
        );
        fill(2000).unwrap_or_else(|e| panic!("{}: after growing: {}", engine, m::strerror(e)));
        assert_eq!(env.begin_ro().unwrap().entries(dbi).unwrap(), 2000);
        drop(env);
        // The larger size was persisted.
        let env = m::Env::open_file(&path, 0, 2, 0).unwrap();
        assert_eq!(
            env.info().unwrap().map_size,
            16 << 20,
            "{}: stored map size",
            engine
        );
    }
}

dlmdb_tests::engine_tests! {
    fn map_resized_by_other_process_ours, map_resized_by_other_process_stock(m, engine) {
        let (_dir, path) = procs::temp_store();
        let env = m::Env::open_file(&path, 0, 2, 2 << 20).unwrap();
        let dbi = env.create_dbs(&[("d", 0)]).unwrap()[0];
        {
            let t = env.begin_rw().unwrap();
            t.put(dbi, b"first", b"1", 0).unwrap();
            t.commit().unwrap();
        }
        let child = procs::spawn_on_store("grower", &path, engine);
        let line = child.expect("done", Duration::from_secs(60));
        child.wait_ok(Duration::from_secs(30));
        let last_pg: u64 = line.split(' ').nth(1).unwrap().parse().unwrap();
        assert!(
            (last_pg + 1) * 4096 > 2 << 20,
            "grower did not write past 2 MB"
        );
        assert_eq!(
            env.begin_ro().err(),
            Some(m::ffi::MDB_MAP_RESIZED),
            "{}: reader after another process grew the map",
            engine
        );
        assert_eq!(
            env.begin_rw().err(),
            Some(m::ffi::MDB_MAP_RESIZED),
            "{}: writer after another process grew the map",
            engine
        );
        env.set_mapsize(0).unwrap();
        assert_eq!(
            env.info().unwrap().map_size,
            BIG as u64,
            "{}: set_mapsize(0) adopts the stored size",
            engine
        );
        let t = env.begin_ro().unwrap();
        assert_eq!(t.entries(dbi).unwrap(), 2501);
        assert_eq!(t.get(dbi, b"g02499").unwrap(), Some(vec![7u8; 4000]));
        drop(t);
        let t = env.begin_rw().unwrap();
        t.put(dbi, b"after", b"2", 0).unwrap();
        t.commit().unwrap();
    }
}

dlmdb_tests::engine_tests! {
    fn larger_stored_map_kept_ours, larger_stored_map_kept_stock(m, engine) {
        let (_dir, path) = procs::temp_store();
        {
            let env = m::Env::open_file(&path, 0, 2, BIG).unwrap();
            let dbi = env.create_dbs(&[("d", 0)]).unwrap()[0];
            let t = env.begin_rw().unwrap();
            for i in 0..800u32 {
                t.put(dbi, format!("k{i:05}").as_bytes(), &vec![3u8; 4000], 0)
                    .unwrap();
            }
            t.commit().unwrap();
        }
        let used = {
            // Asking for 1 MB: the map is raised to the used size, so the
            // data reads back, but there is no room for a new page.
            let env = m::Env::open_file(&path, 0, 2, 1 << 20).unwrap();
            let info = env.info().unwrap();
            let (last_pg, map) = (info.last_pgno, info.map_size);
            assert!(
                map >= (last_pg + 1) * 4096,
                "{}: map {map} smaller than the used {} pages",
                engine,
                last_pg + 1
            );
            let dbi = env.open_dbs(&["d"]).unwrap()[0];
            assert_eq!(
                env.begin_ro().unwrap().get(dbi, b"k00799").unwrap(),
                Some(vec![3u8; 4000])
            );
            let t = env.begin_rw().unwrap();
            let r = t.put(dbi, b"small", b"x", 0).and_then(|_| t.commit());
            assert_eq!(
                r.err(),
                Some(m::ffi::MDB_MAP_FULL),
                "{}: write into a map raised only to the used size",
                engine
            );
            (last_pg + 1) as usize * 4096
        };
        {
            // Asking for less than stored but enough to write: works, and
            // the commit does not shrink the stored size.
            let env = m::Env::open_file(&path, 0, 2, used + (4 << 20)).unwrap();
            assert_eq!(env.info().unwrap().map_size as usize, used + (4 << 20));
            let dbi = env.open_dbs(&["d"]).unwrap()[0];
            let t = env.begin_rw().unwrap();
            t.put(dbi, b"small", b"x", 0).unwrap();
            t.commit().unwrap();
        }
        let env = m::Env::open_file(&path, 0, 2, 0).unwrap();
        assert_eq!(
            env.info().unwrap().map_size,
            BIG as u64,
            "{}: the stored map size was decreased",
            engine
        );
        let dbi = env.open_dbs(&["d"]).unwrap()[0];
        assert_eq!(env.begin_ro().unwrap().entries(dbi).unwrap(), 801);
    }
}
