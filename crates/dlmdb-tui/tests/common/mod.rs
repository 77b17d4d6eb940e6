//! Stores built in a temp dir with the safe API, shared by the tests.
#![allow(dead_code)]

use dlmdb::{Database, DatabaseFlags, Env, RwTxn, WriteFlags};
use dlmdb_tui::app::App;
use dlmdb_tui::model::{OpenOptions, Store};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Deterministic pseudo-random bytes (xorshift).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// Key of the i-th entry of the "attr" databases: long shared prefixes.
pub fn attr_key(i: u32) -> Vec<u8> {
    format!(":example.org/attribute-{}/value-{:06}", i % 7, i).into_bytes()
}

/// A store with five databases:
/// * `plain`: 3000 keys `k000000`.., values of 20..60 printable bytes;
/// * `dups` (DUPSORT): `hot` with 1500 values (a sub-tree), `key-NNN` with 1..4 values;
/// * `counted` (COUNTED): 2500 keys;
/// * `prefixed` (PREFIX_COMPRESSION): 2000 `attr_key`s;
/// * `big`: 3 small values and one of 20000 bytes (overflow pages).
pub fn build_store(dir: &Path) -> PathBuf {
    let path = dir.join("store");
    std::fs::create_dir_all(&path).unwrap();
    let env = Env::builder()
        .map_size(64 << 20)
        .max_dbs(16)
        .open(&path)
        .unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut txn = env.write_txn().unwrap();
    let plain = txn
        .create_db(Some("plain"), DatabaseFlags::empty())
        .unwrap();
    for i in 0..3000u32 {
        let n = 20 + (rng.next() % 41) as usize;
        let v: Vec<u8> = (0..n)
            .map(|j| b'a' + ((i as usize + j) % 26) as u8)
            .collect();
        put(&mut txn, plain, format!("k{i:06}").as_bytes(), &v);
    }
    let dups = txn
        .create_db(Some("dups"), DatabaseFlags::DUP_SORT)
        .unwrap();
    for i in 0..1500u32 {
        put(&mut txn, dups, b"hot", format!("value-{i:05}").as_bytes());
    }
    for i in 0..200u32 {
        for d in 0..(1 + i % 4) {
            put(
                &mut txn,
                dups,
                format!("key-{i:03}").as_bytes(),
                format!("v{d}").as_bytes(),
            );
        }
    }
    let counted = txn
        .create_db(Some("counted"), DatabaseFlags::COUNTED)
        .unwrap();
    for i in 0..2500u32 {
        put(
            &mut txn,
            counted,
            format!("c{i:05}").as_bytes(),
            &i.to_le_bytes(),
        );
    }
    let pfx = txn
        .create_db(Some("prefixed"), DatabaseFlags::PREFIX_COMPRESSION)
        .unwrap();
    for i in 0..2000u32 {
        put(&mut txn, pfx, &attr_key(i), b"v");
    }
    let big = txn.create_db(Some("big"), DatabaseFlags::empty()).unwrap();
    for k in [b"a", b"b", b"d"] {
        put(&mut txn, big, k, b"small");
    }
    let huge: Vec<u8> = (0..20000u32).map(|i| (i % 251) as u8).collect();
    put(&mut txn, big, b"c", &huge);
    txn.commit().unwrap();
    path
}

/// Put `key`/`data` into `db` with no flags.
pub fn put(txn: &mut RwTxn<'_>, db: Database, key: &[u8], data: &[u8]) {
    txn.put(db, key, data, WriteFlags::empty()).unwrap();
}

/// [`build_store`] in a fresh temp dir, opened; the dir lives as long as
/// this value.
pub struct Built {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
    pub store: Store,
}

pub fn built() -> Built {
    let dir = tempfile::tempdir().unwrap();
    let path = build_store(dir.path());
    let store = open(&path);
    Built {
        _dir: dir,
        path,
        store,
    }
}

pub fn open(path: &Path) -> Store {
    Store::open(&OpenOptions::new(path)).unwrap()
}

/// An app loaded from `store` as the binary would (fixed title).
pub fn loaded_app(store: &mut Store, height: usize) -> App {
    let mut app = App::new("test-store", Duration::from_secs(2));
    app.browser.height = height;
    app.sync(store);
    app
}

/// Select the database listed as `name`.
pub fn select(app: &mut App, name: &str) {
    let i = app
        .snapshot
        .dbs
        .iter()
        .position(|d| d.label() == name)
        .unwrap_or_else(|| panic!("no database {name}"));
    app.select_db(i);
}

/// The one fixtures lookup (`$DLMDB_FIXTURES`, else `<repo>/tests/fixtures`).
#[allow(unused_imports)]
pub use dlmdb_tests::fixtures_dir;

/// Plain text of `app` drawn on a `w` x `h` test terminal, one line per
/// row (trailing blanks trimmed).
pub fn render_sized(app: &App, w: u16, h: u16) -> String {
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
    t.draw(|f| dlmdb_tui::ui::draw(f, app)).unwrap();
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// This test binary started again to run only the ignored test `test`, a
/// writer in its own process (LMDB forbids a second handle on a store in
/// one process), with the environment variable `var` naming the store.
pub fn child_writer_command(test: &str, var: &str, path: &Path) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--ignored",
        "--exact",
        test,
        "--nocapture",
        "--test-threads=1",
    ])
    .env(var, path);
    cmd
}

/// In the child process of [`child_writer_command`]: the store named by
/// `var` and its `plain` database; `None` when `var` is not set (the
/// ignored test run directly).
pub fn child_writer_store(var: &str) -> Option<(Env, Database)> {
    let path = std::env::var_os(var)?;
    let env = Env::builder().max_dbs(16).open(path).unwrap();
    let db = env.open_db(Some("plain")).unwrap();
    Some((env, db))
}
