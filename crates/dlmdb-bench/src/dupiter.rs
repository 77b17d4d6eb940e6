//! The workload of dup_iter_bench, one of DLMDB's C benchmark programs: a
//! DUPSORT|COUNTED|PREFIX_COMPRESSION DB, then every key's duplicates read
//! with one `mdb_cursor_list_dup` call per key, and again with an
//! MDB_FIRST_DUP / MDB_NEXT_DUP loop. Same options, defaults, bytes, timed
//! regions (all runs, including txn and cursor setup) and printed lines.
//! With `peers`, the NEXT_DUP pass also runs on stock LMDB (a DUPSORT DB
//! without DLMDB's flags; stock LMDB has no list_dup).

use std::path::{Path, PathBuf};
use std::ptr;

use anyhow::{bail, ensure, Result};
use serde::Serialize;

use crate::extra::{k, Cur, Eng, Env, LmdbE, OursE, Txn};
use crate::measure::Stamp;

#[derive(Clone, Debug, Serialize)]
pub struct DupIterOptions {
    pub keys: u64,
    pub dups: u64,
    pub runs: u64,
    pub mapsize: u64,
    pub path: PathBuf,
    pub peers: bool,
}

impl Default for DupIterOptions {
    fn default() -> Self {
        DupIterOptions {
            keys: 50_000,
            dups: 20,
            runs: 5,
            mapsize: 512 << 20,
            path: PathBuf::from("./dup_iter_bench_env"),
            peers: false,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct DupIterRun {
    pub options: DupIterOptions,
    pub list_dup_ms: f64,
    pub next_dup_ms: f64,
    pub checksum: u64,
    /// Stock LMDB's NEXT_DUP pass (with `peers`).
    pub lmdb_next_dup_ms: Option<f64>,
}

struct Db<E: Eng> {
    env: Env,
    dbi: u32,
    dir: PathBuf,
    _e: std::marker::PhantomData<E>,
}

impl<E: Eng> Drop for Db<E> {
    fn drop(&mut self) {
        E::env_close(self.env);
        crate::extra::remove_env_dir(&self.dir);
    }
}

fn populate<E: Eng>(o: &DupIterOptions, dir: &Path, flags: u32) -> Result<Db<E>> {
    crate::extra::fresh_env_dir(dir)?;
    let env = E::env_open(
        dir,
        k::MDB_NOSYNC | k::MDB_NOMETASYNC | k::MDB_NOLOCK,
        4,
        o.mapsize as usize,
    )?;
    let mut db = Db::<E> {
        env,
        dbi: 0,
        dir: dir.to_path_buf(),
        _e: std::marker::PhantomData,
    };
    db.dbi = crate::extra::create_db::<E>(env, "bench", flags)?;
    put_dups::<E>(env, db.dbi, o.keys, o.dups)?;
    Ok(db)
}

/// dup_iter_bench's population: `dups` values under each of `keys` keys,
/// in key order, in write transactions of 4096 puts.
pub(crate) fn put_dups<E: Eng>(env: Env, dbi: u32, keys: u64, dups: u64) -> Result<()> {
    let total = keys * dups;
    let mut i = 0;
    while i < total {
        let end = (i + 4096).min(total);
        crate::extra::in_write_txn::<E>(env, |t| {
            for j in i..end {
                let (ki, di) = (j / dups, j % dups);
                let key = format!("{ki:020}");
                let val = format!("{ki:016}-value-{di:04}");
                E::put(t, dbi, key.as_bytes(), val.as_bytes(), 0)?;
            }
            Ok(())
        })?;
        i = end;
    }
    Ok(())
}

/// One list_dup call: adds the first byte of every value to `sum`.
pub(crate) fn list_dup(cur: Cur, sum: &mut u64) -> Result<u64> {
    let mut vals: *const dlmdb_sys::MDB_val = ptr::null();
    let mut n: dlmdb_sys::mdb_size_t = 0;
    // SAFETY: live, positioned cursor of our engine; the array stays valid
    // until the cursor moves.
    let rc = unsafe { dlmdb_sys::mdb_cursor_list_dup(cur as *mut _, &mut vals, &mut n) };
    if rc != 0 {
        bail!("mdb_cursor_list_dup failed ({rc})");
    }
    for i in 0..n as usize {
        // SAFETY: i < n entries of the returned array.
        let v = unsafe { &*vals.add(i) };
        if v.mv_size > 0 {
            // SAFETY: mv_data points at mv_size bytes.
            *sum += unsafe { *(v.mv_data as *const u8) } as u64;
        }
    }
    Ok(n as u64)
}

fn first_byte(v: &[u8]) -> u64 {
    v.first().copied().unwrap_or(0) as u64
}

/// Every run: read txn, cursor, all keys' values; returns (ms, values, sum).
/// The pass runs at a stack depth of its own.
fn pass<E: Eng>(db: &Db<E>, runs: u64, by_list_dup: bool) -> Result<(f64, u64, u64)> {
    crate::measure::at_next_stack_depth(|| pass_timed(db, runs, by_list_dup))
}

fn pass_timed<E: Eng>(db: &Db<E>, runs: u64, by_list_dup: bool) -> Result<(f64, u64, u64)> {
    let (mut values, mut sum) = (0u64, 0u64);
    let t0 = Stamp::now();
    for _ in 0..runs {
        let t: Txn = E::txn_begin(db.env, ptr::null_mut(), k::MDB_RDONLY)?;
        let r = (|| -> Result<()> {
            let cur = E::cursor_open(t, db.dbi)?;
            let r = (|| -> Result<()> {
                let mut more = E::cursor_get(cur, &[], &[], k::MDB_FIRST)?.is_some();
                while more {
                    if by_list_dup {
                        values += list_dup(cur, &mut sum)?;
                    } else {
                        let mut d = E::cursor_get(cur, &[], &[], k::MDB_FIRST_DUP)?;
                        while let Some((_, v)) = d {
                            sum += first_byte(v);
                            values += 1;
                            d = E::cursor_get(cur, &[], &[], k::MDB_NEXT_DUP)?;
                        }
                    }
                    more = E::cursor_get(cur, &[], &[], k::MDB_NEXT_NODUP)?.is_some();
                }
                Ok(())
            })();
            E::cursor_close(cur);
            r
        })();
        E::txn_abort(t);
        r?;
    }
    Ok((t0.elapsed().as_millis_f64(), values, sum))
}

pub fn validate(o: &DupIterOptions) -> Result<(), String> {
    if o.keys == 0 || o.dups == 0 || o.runs == 0 {
        return Err("keys, dups, and runs must be non-zero".into());
    }
    Ok(())
}

/// Run the workload once (and the stock LMDB pass with `peers`).
pub fn run_dup_iter(o: &DupIterOptions) -> Result<DupIterRun> {
    validate(o).map_err(anyhow::Error::msg)?;
    let flags = k::MDB_DUPSORT | k::MDB_COUNTED | k::MDB_PREFIX_COMPRESSION;
    let db = populate::<OursE>(o, &o.path, flags)?;
    let (list_dup_ms, v1, s1) = pass(&db, o.runs, true)?;
    let (next_dup_ms, v2, s2) = pass(&db, o.runs, false)?;
    drop(db);
    let want = o.keys * o.dups * o.runs;
    ensure!(
        v1 == want && v2 == want,
        "values read: list_dup {v1}, NEXT_DUP {v2}, expected {want}"
    );
    ensure!(s1 == s2, "checksums differ: list_dup {s1}, NEXT_DUP {s2}");
    let mut lmdb_next_dup_ms = None;
    if o.peers {
        let mut p = o.path.clone().into_os_string();
        p.push("_lmdb");
        let db = populate::<LmdbE>(o, Path::new(&p), k::MDB_DUPSORT)?;
        let (ms, v, s) = pass(&db, o.runs, false)?;
        ensure!(
            v == want && s == s2,
            "stock LMDB read {v} values, checksum {s}"
        );
        lmdb_next_dup_ms = Some(ms);
    }
    Ok(DupIterRun {
        options: o.clone(),
        list_dup_ms,
        next_dup_ms,
        checksum: s1 + s2,
        lmdb_next_dup_ms,
    })
}

/// The lines dup_iter_bench prints.
pub fn render_dup_iter_text(r: &DupIterRun) -> String {
    let o = &r.options;
    let visits = o.keys * o.runs;
    let values = o.keys * o.dups * o.runs;
    let line = |label: &str, ms: f64| {
        format!(
            "{label} {ms:.3} ms ({:.3} us/key, {:.3} ns/value)\n",
            ms * 1000.0 / visits as f64,
            ms * 1e6 / values as f64
        )
    };
    let mut s = format!(
        "Benchmark configuration: keys={} dups/key={} runs={}\n",
        o.keys, o.dups, o.runs
    );
    s.push_str(&format!(
        "Total key visits: {visits}, total duplicates read: {values}\n"
    ));
    s.push_str(&line("mdb_cursor_list_dup:", r.list_dup_ms));
    s.push_str(&line("MDB_NEXT_DUP loop:  ", r.next_dup_ms));
    s.push_str(&format!(
        "Checksum sink: {} (ignore, prevents DCE)\n",
        r.checksum
    ));
    if let Some(ms) = r.lmdb_next_dup_ms {
        s.push_str(&line("stock LMDB MDB_NEXT_DUP loop:", ms));
    }
    s
}

/// Rows: ns per value of each pass (list_dup with the NEXT_DUP loop as its
/// reference; our NEXT_DUP loop with stock LMDB's as reference).
pub fn dup_iter_report(runs: &[DupIterRun]) -> Result<crate::report::Report> {
    use crate::report::{Measure, Report, Row, TargetKind};
    let first = runs.first().ok_or_else(|| anyhow::anyhow!("no run"))?;
    let o = &first.options;
    let values = (o.keys * o.dups * o.runs) as f64;
    let mut rep = Report::of_rounds("dup-iter", runs.len(), o, o.peers)?;
    let unit = match rep.measure {
        Measure::Instructions => "instr/value",
        Measure::Wall => "ns/value",
    };
    let per = |ms: f64| ms * 1e6 / values;
    let list: Vec<f64> = runs.iter().map(|r| per(r.list_dup_ms)).collect();
    let next: Vec<f64> = runs.iter().map(|r| per(r.next_dup_ms)).collect();
    rep.rows.push(
        Row::measured("list_dup", unit, true, list)
            .with_reference("next_dup loop", next.clone())
            .with_target(TargetKind::SpeedupAtLeast, 1.5),
    );
    let mut row = Row::measured("next_dup_loop", unit, true, next);
    if o.peers {
        row = row.with_reference(
            "lmdb",
            runs.iter()
                .filter_map(|r| r.lmdb_next_dup_ms)
                .map(per)
                .collect(),
        );
    }
    rep.rows.push(row);
    Ok(rep)
}
