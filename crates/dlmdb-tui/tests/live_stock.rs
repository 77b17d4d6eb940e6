//! The viewer on a live store: stock LMDB processes (LMDB 0.9 and LMDB 1.0,
//! separate processes) hold and write the environment while the viewer has
//! it open; a refresh shows their new commits, and they can open and write
//! the store while the viewer holds it.

use std::path::Path;
use std::time::Duration;

use dlmdb_tests::live::{self, stock_families, Family, Peer};
use dlmdb_tui::model::{OpenOptions, Store};

const MAP: usize = 64 << 20;

dlmdb_tests::child_roles!(live::PEER_ROLE => live::serve);

fn main_entries(store: &mut Store) -> (u64, u64) {
    let view = store.view().unwrap();
    let snap = view.snapshot("", Some(1)).unwrap();
    (snap.txnid, snap.dbs[0].stat.entries)
}

/// A stock process of family `f` with the store at `path` open.
fn peer_on(f: Family, path: &Path) -> Peer {
    let mut p = Peer::spawn(f, &[]);
    p.open(path, MAP).unwrap();
    p
}

/// Keys `k<i>` for `i` in `range`, all valued `value`, committed in one
/// write transaction by `writer`; the new transaction id.
fn commit_keys(writer: &mut Peer, range: std::ops::Range<u32>, value: &[u8]) -> u64 {
    writer.ok("wbegin");
    for i in range {
        writer.put(format!("k{i:04}").as_bytes(), value);
    }
    writer.ok("commit").parse().unwrap()
}

#[test]
fn refresh_shows_commits_of_stock_processes() {
    dlmdb_tests::parent_only!();
    for f in stock_families() {
        let _w = live::watchdog(
            format!("viewer on a live {} store", f.name()),
            Duration::from_secs(180),
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.mdb");
        let mut writer = peer_on(f, &path);
        let first = commit_keys(&mut writer, 0..100, b"v");
        let mut reader = peer_on(f, &path);
        reader.ok("rbegin");

        let mut store = Store::open(&OpenOptions::new(&path)).unwrap();
        assert!(
            !store.no_lock,
            "{}: the viewer shares the lock file",
            f.name()
        );
        assert_eq!(store.layout(), dlmdb::Layout::Lmdb);
        assert_eq!(main_entries(&mut store), (first, 100), "{}", f.name());

        let second = commit_keys(&mut writer, 100..130, b"w");
        assert_eq!(
            main_entries(&mut store),
            (second, 130),
            "{}: refresh",
            f.name()
        );

        // A stock process opening the store while the viewer holds it.
        let mut late = Peer::spawn(f, &[]);
        late.open(&path, MAP)
            .unwrap_or_else(|rc| panic!("{} cannot open the viewed store: {rc}", f.name()));
        late.ok("wbegin");
        late.put(b"zz", b"late");
        let third: u64 = late.ok("commit").parse().unwrap();
        assert_eq!(main_entries(&mut store), (third, 131), "{}", f.name());
        assert_eq!(reader.digest().0, 100, "{}: pinned reader", f.name());
        late.quit();
        reader.quit();
        writer.quit();
    }
}
