//! Our engine through its safe API (`dlmdb` crate): opening helpers and the
//! [`KvWrite`]/[`KvRead`] adapters used by the workload tests.

use std::path::Path;

use dlmdb::{Database, DatabaseFlags, Env, EnvFlags, RoTxn, RwTxn, WriteFlags};

use crate::workload::{KvRead, KvWrite};

/// Open a single-file environment (`NO_SUB_DIR` is always added);
/// `map_size` 0 keeps the size stored in the file.
pub fn open(path: &Path, flags: EnvFlags, map_size: usize, max_dbs: u32) -> dlmdb::Result<Env> {
    let mut b = Env::builder()
        .max_dbs(max_dbs)
        .flags(flags | EnvFlags::NO_SUB_DIR);
    if map_size != 0 {
        b = b.map_size(map_size);
    }
    b.open(path)
}

/// Database names are plain ASCII in all tests.
pub fn name_str(name: Option<&[u8]>) -> Option<&str> {
    name.map(|n| std::str::from_utf8(n).expect("test DB names are UTF-8"))
}

impl KvWrite for RwTxn<'_> {
    fn open_db(&mut self, name: Option<&[u8]>, flags: u32) -> Result<u32, i32> {
        let f = DatabaseFlags::from_bits_retain(flags) - DatabaseFlags::CREATE;
        self.create_db(name_str(name), f)
            .map(|d| d.dbi())
            .map_err(|e| e.code())
    }
    fn put(&mut self, dbi: u32, key: &[u8], val: &[u8]) -> Result<(), i32> {
        RwTxn::put(self, Database::from_raw(dbi), key, val, WriteFlags::empty())
            .map_err(|e| e.code())
    }
    fn del(&mut self, dbi: u32, key: &[u8]) -> Result<bool, i32> {
        RwTxn::del(self, Database::from_raw(dbi), key, None).map_err(|e| e.code())
    }
    fn finish(self, commit: bool) -> Result<(), i32> {
        if commit {
            self.commit().map_err(|e| e.code())
        } else {
            self.abort();
            Ok(())
        }
    }
}

impl KvRead for RoTxn<'_> {
    fn open_db(&self, name: Option<&[u8]>) -> Result<u32, i32> {
        RoTxn::open_db(self, name_str(name))
            .map(|d| d.dbi())
            .map_err(|e| e.code())
    }
    fn db_flags(&self, dbi: u32) -> Result<u32, i32> {
        RoTxn::db_flags(self, Database::from_raw(dbi))
            .map(|f| f.bits())
            .map_err(|e| e.code())
    }
    fn get(&self, dbi: u32, key: &[u8]) -> Result<Option<Vec<u8>>, i32> {
        RoTxn::get(self, Database::from_raw(dbi), key)
            .map(|v| v.map(|s| s.to_vec()))
            .map_err(|e| e.code())
    }
    fn walk(&self, dbi: u32, forward: bool) -> Result<crate::Pairs, i32> {
        let mut c = self.cursor(Database::from_raw(dbi)).map_err(|e| e.code())?;
        let it = if forward { c.iter() } else { c.iter_rev() };
        it.map(|r| {
            r.map(|(k, v)| (k.to_vec(), v.to_vec()))
                .map_err(|e| e.code())
        })
        .collect()
    }
    fn entries(&self, dbi: u32) -> Result<u64, i32> {
        self.stat(Database::from_raw(dbi))
            .map(|s| s.entries)
            .map_err(|e| e.code())
    }
}

/// Apply a whole workload with our engine (see
/// [`crate::workload::write_workload`]).
pub fn write_workload(env: &Env, w: &crate::workload::Workload, who: &str) {
    crate::workload::write_workload(w, who, || env.write_txn().map_err(|e| e.code()));
}
