//! Sync flags and `mdb_env_sync` (lmdb-api.md §2.1, §4.2), as far
//! as testable without power loss, each on our engine and stock LMDB:
//! * NOSYNC / NOMETASYNC / MAPASYNC / NOMEMINIT change at run time
//!   (`mdb_env_set_flags`, seen by `mdb_env_get_flags`); other flags EINVAL;
//! * `mdb_env_sync(force)` succeeds in every mode, `EACCES` read-only;
//! * a commit under NOSYNC (plain, and WRITEMAP|MAPASYNC) is in the file
//!   for everyone at once: a process killed with SIGKILL right after such a
//!   commit, without any sync, loses nothing (the page cache survives a
//!   process kill), and the meta read with pread shows the new txn.

use std::time::Duration;

use dlmdb_tests::procs;

const MAP: usize = 64 << 20;

/// txnid of the newest meta page, read with pread.
fn disk_txnid(path: &std::path::Path) -> u64 {
    dlmdb_tests::newest_meta(path).1.txnid
}

dlmdb_tests::engine_roles! {
    "nosync_writer" => |m, path| {
        let flags = procs::param_u64("FLAGS") as u32;
        let env = m::Env::open_file(&path, flags, 2, MAP).expect("open");
        let dbi = env.open_dbs(&["d"]).unwrap()[0];
        for i in 0..50u32 {
            let t = env.begin_rw().unwrap();
            t.put(dbi, format!("k{i:03}").as_bytes(), &vec![i as u8; 3000], 0)
                .unwrap();
            t.commit().unwrap();
        }
        procs::report(&format!("committed {}", env.info().unwrap().last_txnid));
        std::thread::sleep(Duration::from_secs(60));
    }
}

dlmdb_tests::engine_tests! {
    fn sync_flags_runtime_ours, sync_flags_runtime_stock(m, engine) {
        let dir = tempfile::tempdir().unwrap();
        let env = m::Env::open_file(&dir.path().join("data.mdb"), 0, 0, MAP).unwrap();
        for (f, name) in [
            (m::ffi::MDB_NOSYNC, "NOSYNC"),
            (m::ffi::MDB_NOMETASYNC, "NOMETASYNC"),
            (m::ffi::MDB_MAPASYNC, "MAPASYNC"),
            (m::ffi::MDB_NOMEMINIT, "NOMEMINIT"),
        ] {
            assert_eq!(env.get_flags() & f, 0, "{}: {name} set initially", engine);
            env.set_flags(f, true)
                .unwrap_or_else(|e| panic!("{}: set {name}: {e}", engine));
            assert_ne!(
                env.get_flags() & f,
                0,
                "{}: {name} not reported after setting",
                engine
            );
            let t = env.begin_rw().unwrap();
            let main = t.open_db(None, 0).unwrap();
            t.put(main, name.as_bytes(), b"v", 0).unwrap();
            t.commit().unwrap();
            env.set_flags(f, false).unwrap();
            assert_eq!(
                env.get_flags() & f,
                0,
                "{}: {name} still reported after clearing",
                engine
            );
        }
        for (f, name) in [
            (m::ffi::MDB_RDONLY, "RDONLY"),
            (m::ffi::MDB_WRITEMAP, "WRITEMAP"),
            (m::ffi::MDB_NOTLS, "NOTLS"),
        ] {
            assert_eq!(
                env.set_flags(f, true).err(),
                Some(libc::EINVAL),
                "{}: set_flags({name})",
                engine
            );
        }
    }
}

dlmdb_tests::engine_tests! {
    fn env_sync_modes_ours, env_sync_modes_stock(m, engine) {
        for (flags, name) in [
            (0, "default"),
            (m::ffi::MDB_NOSYNC, "NOSYNC"),
            (m::ffi::MDB_NOMETASYNC, "NOMETASYNC"),
            (
                m::ffi::MDB_WRITEMAP | m::ffi::MDB_MAPASYNC,
                "WRITEMAP|MAPASYNC",
            ),
            (m::ffi::MDB_WRITEMAP | m::ffi::MDB_NOSYNC, "WRITEMAP|NOSYNC"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("data.mdb");
            {
                let env = m::Env::open_file(&path, flags, 0, MAP).unwrap();
                let t = env.begin_rw().unwrap();
                let main = t.open_db(None, 0).unwrap();
                t.put(main, b"k", &[5u8; 5000], 0).unwrap();
                t.commit().unwrap();
                let id = env.info().unwrap().last_txnid;
                assert_eq!(
                    disk_txnid(&path),
                    id,
                    "{} {name}: committed meta not in the file",
                    engine
                );
                env.sync(false).unwrap_or_else(|e| {
                    panic!("{} {name}: sync(0): {}", engine, m::strerror(e))
                });
                env.sync(true).unwrap_or_else(|e| {
                    panic!("{} {name}: sync(1): {}", engine, m::strerror(e))
                });
            }
            let env = m::Env::open_file(&path, m::ffi::MDB_RDONLY, 0, 0).unwrap();
            assert_eq!(
                env.sync(true).err(),
                Some(libc::EACCES),
                "{} {name}: sync on a read-only env",
                engine
            );
            assert_eq!(
                env.sync(false).err(),
                Some(libc::EACCES),
                "{} {name}: sync(0) on a read-only env",
                engine
            );
            let t = env.begin_ro().unwrap();
            let main = t.open_db(None, 0).unwrap();
            assert_eq!(t.get(main, b"k").unwrap(), Some(vec![5u8; 5000]));
        }
    }
}

dlmdb_tests::engine_tests! {
    fn nosync_commit_survives_kill_ours, nosync_commit_survives_kill_stock(m, engine) {
        for flags in [
            m::ffi::MDB_NOSYNC,
            m::ffi::MDB_WRITEMAP | m::ffi::MDB_MAPASYNC,
            m::ffi::MDB_NOMETASYNC,
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("data.mdb");
            {
                let env = m::Env::open_file(&path, 0, 2, MAP).unwrap();
                env.create_dbs(&[("d", 0)]).unwrap();
            }
            let child = procs::spawn(
                "child_entry",
                "nosync_writer",
                &[
                    ("PATH", path.display().to_string()),
                    ("FLAGS", flags.to_string()),
                    ("ENGINE", engine.to_string()),
                ],
            );
            let line = child.expect("committed", Duration::from_secs(60));
            let id: u64 = line.split(' ').nth(1).unwrap().parse().unwrap();
            let _ = child.kill9();
            assert_eq!(
                disk_txnid(&path),
                id,
                "{} flags {flags:#x}: meta on disk",
                engine
            );
            let env = m::Env::open_file(&path, 0, 2, 0).unwrap();
            assert_eq!(
                env.info().unwrap().last_txnid,
                id,
                "{} flags {flags:#x}: txn lost by a process kill",
                engine
            );
            let dbi = env.open_dbs(&["d"]).unwrap()[0];
            let t = env.begin_ro().unwrap();
            assert_eq!(t.entries(dbi).unwrap(), 50);
            assert_eq!(t.get(dbi, b"k049").unwrap(), Some(vec![49u8; 3000]));
        }
    }
}
