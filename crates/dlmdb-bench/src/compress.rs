//! The workload of compress_bench, one of DLMDB's C benchmark programs:
//! the same options and defaults, key/value bytes, random streams, transaction
//! boundaries and timed regions, and the same printed report.
//!
//! Every variant uses the main (unnamed) DB with `MDB_COUNTED`, plus
//! `MDB_PREFIX_COMPRESSION` for compressed variants and `MDB_DUPSORT` for the
//! `-dups` twins, in an `MDB_NOLOCK` environment. A variant runs all of its
//! phases before the next one starts; each round starts the order one
//! variant further on (see [`run_compress`]). With `peers`, the uncompressed
//! unique-key variants also run on stock LMDB (which has neither counted DBs
//! nor prefix compression, so those run without `MDB_COUNTED`).
//!
//! Correctness is checked on the way, outside the timed regions where
//! possible: a missing key or value in a read, update or delete phase is an
//! error, and after the run the entry count must equal the option `-n`.

use crate::measure::{at_next_stack_depth, Stamp};
use std::path::{Path, PathBuf};
use std::ptr;

use anyhow::{bail, ensure, Context, Result};
use serde::Serialize;

use crate::extra::{k, Eng, Env, LmdbE, OursE, Sm64, Txn};

/// `MDB_CP_COMPACT` of `mdb_env_copy2`.
const MDB_CP_COMPACT: u32 = 0x01;

/// Options, named after compress_bench's flags; defaults are the program's.
#[derive(Clone, Debug, Serialize)]
pub struct CompressOptions {
    /// `-n`: entries (key/value pairs).
    pub entries: u64,
    /// `-r`: random reads per read pass (0 = entries).
    pub reads: u64,
    /// `-v`: value bytes.
    pub value_size: usize,
    /// `-p`: count of `'p'` bytes in front of every key.
    pub prefix_len: usize,
    /// `-m`: map size in MiB.
    pub map_mib: u64,
    /// `-s`: seed of every random stream.
    pub seed: u32,
    /// `-d`: directory prefix; a variant's dir is `<prefix>_<label>`.
    pub dir_prefix: PathBuf,
    /// `-C`: extra variant specs, in order.
    pub variant_specs: Vec<String>,
    /// `-D`: values per key of the DUPSORT twins (twins exist when > 1).
    pub dups: u64,
    /// `-U`: random updates.
    pub updates: u64,
    /// `-X`: deletes, then as many reinserts (capped at entries).
    pub deletes: u64,
    /// `-R`: range scans per scan pass.
    pub range_scans: u64,
    /// `-L`: items per range scan (0, or `-R 0`: one full scan).
    pub range_len: u64,
    /// `-P`: compacting copy after the metrics.
    pub repack: bool,
    /// `-k`: keep the directories.
    pub keep: bool,
    /// Also run the uncompressed variants on stock LMDB.
    pub peers: bool,
}

impl Default for CompressOptions {
    fn default() -> Self {
        CompressOptions {
            entries: 200_000,
            reads: 200_000,
            value_size: 64,
            prefix_len: 16,
            map_mib: 2048,
            seed: 1,
            dir_prefix: PathBuf::from("compress_bench"),
            variant_specs: Vec::new(),
            dups: 0,
            updates: 0,
            deletes: 0,
            range_scans: 1000,
            range_len: 256,
            repack: false,
            keep: false,
            peers: false,
        }
    }
}

/// One database configuration of the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Variant {
    pub label: String,
    pub compressed: bool,
    /// Values per key for a DUPSORT twin; 0 for a unique-key DB.
    pub dups: u64,
}

impl Variant {
    pub fn dupsort(&self) -> bool {
        self.dups > 0
    }
}

/// Parse one `-C` spec into a variant, or `None` for a lone `off`/`none`
/// (which removes the default `prefix` variant). `k` is the number of `-C`
/// variants added before this one plus one (for the automatic label).
fn parse_spec(spec: &str, k: usize) -> Result<Option<Variant>> {
    ensure!(
        spec.len() < 128,
        "variant spec too long (max 127 bytes): {spec}"
    );
    let (label, mode) = match spec.split_once(':') {
        Some((l, m)) => (Some(l), m),
        None => (None, spec),
    };
    if label.is_none() && (mode == "off" || mode == "none") {
        return Ok(None);
    }
    let compressed = match mode {
        "prefix" | "compressed" | "on" => true,
        "plain" | "baseline" | "off" => false,
        _ => bail!(
            "unknown variant mode '{mode}' in '{spec}' (prefix|compressed|on|plain|baseline|off)"
        ),
    };
    let label = match label {
        Some(l) if !l.is_empty() => l.to_string(),
        _ => format!("{mode}-{k}"),
    };
    Ok(Some(Variant {
        label,
        compressed,
        dups: 0,
    }))
}

/// The variants in run order: `plain`, `prefix` (unless removed), the `-C`
/// variants, then the `-dups` twins of all of them when `dups > 1`.
pub fn variants(o: &CompressOptions) -> Result<Vec<Variant>> {
    let mut base = vec![Variant {
        label: "plain".into(),
        compressed: false,
        dups: 0,
    }];
    let mut with_prefix = true;
    let mut extra = Vec::new();
    for spec in &o.variant_specs {
        match parse_spec(spec, extra.len() + 1)? {
            Some(v) => extra.push(v),
            None => with_prefix = false,
        }
    }
    if with_prefix {
        base.push(Variant {
            label: "prefix".into(),
            compressed: true,
            dups: 0,
        });
    }
    base.extend(extra);
    if o.dups > 1 {
        let twins: Vec<Variant> = base
            .iter()
            .map(|v| Variant {
                label: format!("{}-dups", v.label),
                compressed: v.compressed,
                dups: o.dups,
            })
            .collect();
        base.extend(twins);
    }
    Ok(base)
}

/// Operations and milliseconds of one timed phase.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Timing {
    pub ops: u64,
    pub ms: f64,
}

impl Timing {
    /// `ms` is milliseconds, or millions of instructions when the run
    /// counts instructions.
    fn from(ops: u64, t0: Stamp) -> Timing {
        Timing {
            ops,
            ms: t0.elapsed().as_millis_f64(),
        }
    }
    pub fn us_per_op(&self) -> f64 {
        crate::measure::us_per_op(self.ms, self.ops)
    }
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 * 1000.0 / self.ms
    }
}

/// Everything measured for one variant on one engine.
#[derive(Clone, Debug, Serialize)]
pub struct VariantResult {
    pub variant: Variant,
    /// "ours" or "lmdb".
    pub engine: &'static str,
    pub insert: Timing,
    pub update: Timing,
    pub delete: Timing,
    pub reinsert: Timing,
    pub read_cold: Timing,
    pub read_warm: Timing,
    pub scan_cold: Timing,
    pub scan_warm: Timing,
    pub repack: Timing,
    pub repack_size: u64,
    /// `ms_entries` after the run.
    pub entries: u64,
    pub unique_keys: u64,
    pub data_size: u64,
    pub lock_size: u64,
    /// (last page number + 1) x page size.
    pub map_used: u64,
    pub map_size: u64,
    pub depth: u32,
    pub branch_pages: u64,
    pub leaf_pages: u64,
    pub overflow_pages: u64,
    pub page_size: u32,
    pub dir: String,
}

/// The whole run: options, variants (ours, then the stock LMDB runs when
/// asked for) and the text compress_bench prints.
#[derive(Clone, Debug, Serialize)]
pub struct CompressRun {
    pub options: CompressOptions,
    pub results: Vec<VariantResult>,
    pub lmdb_results: Vec<VariantResult>,
}

/// Key and value bytes of the workload.
struct Gen {
    prefix_len: usize,
    value_size: usize,
    entries: u64,
    /// 0 for unique keys, else values per key.
    dups: u64,
    key: Vec<u8>,
    val: Vec<u8>,
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl Gen {
    fn new(o: &CompressOptions, dups: u64) -> Gen {
        let mut key = vec![b'p'; o.prefix_len + 16];
        key[o.prefix_len..].fill(b'0');
        Gen {
            prefix_len: o.prefix_len,
            value_size: o.value_size,
            entries: o.entries,
            dups,
            key,
            val: vec![0; o.value_size],
        }
    }

    fn key_index(&self, idx: u64) -> u64 {
        idx.checked_div(self.dups).unwrap_or(idx)
    }

    /// `'p' x prefix_len` then the key index as 16 lowercase hex digits.
    #[inline]
    fn key(&mut self, idx: u64) -> &[u8] {
        let mut ki = self.key_index(idx);
        let digits = &mut self.key[self.prefix_len..];
        for d in digits.iter_mut().rev() {
            *d = HEX[(ki & 15) as usize];
            ki >>= 4;
        }
        &self.key
    }

    /// Value of version `v` of entry `idx`.
    #[inline]
    fn value(&mut self, idx: u64, v: u64) -> &[u8] {
        let n = self.value_size;
        if self.dups == 0 {
            let base = idx.wrapping_add(v.wrapping_mul(self.entries));
            for (i, b) in self.val.iter_mut().enumerate() {
                *b = base.wrapping_add(i as u64) as u8;
            }
        } else if n >= 2 {
            let ki = self.key_index(idx) as u8;
            self.val.fill(ki);
            self.val[n - 2] = v as u8;
            self.val[n - 1] = (idx % self.dups) as u8;
        } else if n == 1 {
            self.val[0] = v.wrapping_add(idx % self.dups) as u8;
        }
        &self.val
    }

    /// Both at once (the key is copied so both borrows can coexist).
    #[inline]
    fn pair(&mut self, idx: u64, v: u64, key: &mut Vec<u8>) -> &[u8] {
        key.clear();
        key.extend_from_slice(self.key(idx));
        self.value(idx, v)
    }
}

/// Fisher–Yates over 0..n driven by SM64 seeded with `state`.
fn permutation(n: u64, state: u64) -> Vec<u64> {
    let mut a: Vec<u64> = (0..n).collect();
    Sm64(state).shuffle(&mut a);
    a
}

fn file_size(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// An open environment that is closed when dropped.
struct EnvHandle<E: Eng> {
    env: Env,
    _e: std::marker::PhantomData<E>,
}

impl<E: Eng> EnvHandle<E> {
    fn open(dir: &Path, map_size: usize) -> Result<Self> {
        let env = E::env_open(dir, k::MDB_NOLOCK, 0, map_size)?;
        Ok(EnvHandle {
            env,
            _e: std::marker::PhantomData,
        })
    }
}

impl<E: Eng> Drop for EnvHandle<E> {
    fn drop(&mut self) {
        E::env_close(self.env);
    }
}

/// A transaction aborted on drop unless committed.
struct TxnGuard<E: Eng> {
    txn: Txn,
    _e: std::marker::PhantomData<E>,
}

impl<E: Eng> TxnGuard<E> {
    fn begin(env: Env, flags: u32) -> Result<Self> {
        Ok(TxnGuard {
            txn: E::txn_begin(env, ptr::null_mut(), flags)?,
            _e: std::marker::PhantomData,
        })
    }
    fn commit(mut self) -> Result<()> {
        let t = std::mem::replace(&mut self.txn, ptr::null_mut());
        E::txn_commit(t)
    }
}

impl<E: Eng> Drop for TxnGuard<E> {
    fn drop(&mut self) {
        if !self.txn.is_null() {
            E::txn_abort(self.txn);
        }
    }
}

/// A cursor closed on drop (before its transaction, by declaration order).
struct CurGuard<E: Eng>(crate::extra::Cur, std::marker::PhantomData<E>);

impl<E: Eng> CurGuard<E> {
    fn open(txn: Txn, dbi: u32) -> Result<Self> {
        Ok(CurGuard(
            E::cursor_open(txn, dbi)?,
            std::marker::PhantomData,
        ))
    }
}

impl<E: Eng> Drop for CurGuard<E> {
    fn drop(&mut self) {
        E::cursor_close(self.0);
    }
}

/// DB flags of a variant on engine `E`. Stock LMDB knows neither counted
/// DBs nor prefix compression.
fn db_flags<E: Eng>(v: &Variant) -> u32 {
    let mut f = 0;
    if E::LABEL == OursE::LABEL {
        f |= k::MDB_COUNTED;
        if v.compressed {
            f |= k::MDB_PREFIX_COMPRESSION;
        }
    }
    if v.dupsort() {
        f |= k::MDB_DUPSORT;
    }
    f
}

/// Reopen the environment and open the DB in a committed read-only txn.
fn reopen<E: Eng>(dir: &Path, map_size: usize, flags: u32) -> Result<(EnvHandle<E>, u32)> {
    let h = EnvHandle::<E>::open(dir, map_size)?;
    let t = TxnGuard::<E>::begin(h.env, k::MDB_RDONLY)?;
    let dbi = E::dbi_open(t.txn, None, flags)?;
    t.commit()?;
    Ok((h, dbi))
}

/// Random reads: plain `mdb_get`, DUPSORT `MDB_GET_BOTH` on the current
/// value, at a stack depth of their own.
fn read_pass<E: Eng>(
    env: Env,
    dbi: u32,
    g: &mut Gen,
    versions: &[u32],
    order: &[u64],
) -> Result<Timing> {
    at_next_stack_depth(|| read_pass_timed::<E>(env, dbi, g, versions, order))
}

fn read_pass_timed<E: Eng>(
    env: Env,
    dbi: u32,
    g: &mut Gen,
    versions: &[u32],
    order: &[u64],
) -> Result<Timing> {
    let t = TxnGuard::<E>::begin(env, k::MDB_RDONLY)?;
    let cur = CurGuard::<E>::open(t.txn, dbi)?;
    let mut key = Vec::new();
    let mut missing = 0u64;
    let t0 = Stamp::now();
    if g.dupsort() {
        for &idx in order {
            let v = g.pair(idx, versions[idx as usize] as u64, &mut key);
            if E::cursor_get(cur.0, &key, v, k::MDB_GET_BOTH)?.is_none() {
                missing += 1;
            }
        }
    } else {
        for &idx in order {
            if E::get(t.txn, dbi, g.key(idx))?.is_none() {
                missing += 1;
            }
        }
    }
    let tm = Timing::from(order.len() as u64, t0);
    ensure!(missing == 0, "random read: {missing} entries not found");
    drop(cur);
    Ok(tm)
}

/// Range scans: `R` times SET_RANGE to a random entry's key and up to
/// `span - 1` MDB_NEXT, or one full scan when `span` or `R` is 0; at a
/// stack depth of their own.
fn scan_pass<E: Eng>(env: Env, dbi: u32, g: &mut Gen, o: &CompressOptions) -> Result<Timing> {
    at_next_stack_depth(|| scan_pass_timed::<E>(env, dbi, g, o))
}

fn scan_pass_timed<E: Eng>(env: Env, dbi: u32, g: &mut Gen, o: &CompressOptions) -> Result<Timing> {
    let t = TxnGuard::<E>::begin(env, k::MDB_RDONLY)?;
    let cur = CurGuard::<E>::open(t.txn, dbi)?;
    let mut items = 0u64;
    let t0 = Stamp::now();
    if o.range_len == 0 || o.range_scans == 0 {
        let mut op = k::MDB_FIRST;
        while E::cursor_get(cur.0, &[], &[], op)?.is_some() {
            items += 1;
            op = k::MDB_NEXT;
        }
    } else {
        let seed = o.seed as u64;
        let mut rng = Sm64(if seed == 0 {
            1
        } else {
            seed ^ 0xA24B_AED4_963E_E407
        });
        for _ in 0..o.range_scans {
            let idx = rng.next() % o.entries;
            if E::cursor_get(cur.0, g.key(idx), &[], k::MDB_SET_RANGE)?.is_none() {
                continue;
            }
            items += 1;
            for _ in 1..o.range_len {
                if E::cursor_get(cur.0, &[], &[], k::MDB_NEXT)?.is_none() {
                    break;
                }
                items += 1;
            }
        }
    }
    let tm = Timing::from(items, t0);
    drop(cur);
    Ok(tm)
}

impl Gen {
    fn dupsort(&self) -> bool {
        self.dups > 0
    }
}

/// All phases of one variant on engine `E`, in the directory `dir`.
fn run_variant<E: Eng>(
    v: &Variant,
    o: &CompressOptions,
    dir: &Path,
    read_order: &[u64],
    tick: &mut dyn FnMut(&str),
) -> Result<VariantResult> {
    let n = o.entries;
    let map_size = usize::try_from(o.map_mib << 20).context("map size does not fit")?;
    let flags = db_flags::<E>(v);
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    if !o.keep {
        crate::interrupt::register(dir);
    }
    let mut g = Gen::new(o, v.dups);
    let mut versions: Vec<u32> = if v.dupsort() {
        vec![0; n as usize]
    } else {
        Vec::new()
    };
    let mut key = Vec::with_capacity(o.prefix_len + 16);
    let seed = o.seed as u64;

    let h = EnvHandle::<E>::open(dir, map_size)?;
    let t = TxnGuard::<E>::begin(h.env, 0)?;
    let dbi = E::dbi_open(t.txn, None, k::MDB_CREATE | flags)?;
    t.commit()?;

    // Insert: the timed region includes generating the permutation and
    // excludes the commit.
    tick("insert");
    let t = TxnGuard::<E>::begin(h.env, 0)?;
    let insert = at_next_stack_depth(|| -> Result<Timing> {
        let t0 = Stamp::now();
        for idx in permutation(n, seed ^ 0xC6BC_2796_92B5_CC83) {
            let val = g.pair(idx, 0, &mut key);
            E::put(t.txn, dbi, &key, val, 0)?;
        }
        Ok(Timing::from(n, t0))
    })?;
    t.commit()?;

    // Update: loop only.
    let mut update = Timing::default();
    if o.updates > 0 {
        tick("update");
        let t = TxnGuard::<E>::begin(h.env, 0)?;
        let mut rng = Sm64(seed ^ 0xD1B5_4A32_D192_ED03);
        if v.dupsort() {
            let cur = CurGuard::<E>::open(t.txn, dbi)?;
            update = at_next_stack_depth(|| -> Result<Timing> {
                let t0 = Stamp::now();
                for _ in 0..o.updates {
                    let idx = rng.next() % n;
                    let ver = versions[idx as usize];
                    let val = g.pair(idx, ver as u64, &mut key);
                    if E::cursor_get(cur.0, &key, val, k::MDB_GET_BOTH)?.is_none() {
                        bail!("update: value of entry {idx} not found");
                    }
                    E::cursor_del(cur.0, 0)?;
                    let val = g.value(idx, ver as u64 + 1);
                    E::put(t.txn, dbi, &key, val, 0)?;
                    versions[idx as usize] = ver + 1;
                }
                Ok(Timing::from(o.updates, t0))
            })?;
            drop(cur);
        } else {
            update = at_next_stack_depth(|| -> Result<Timing> {
                let t0 = Stamp::now();
                for _ in 0..o.updates {
                    let idx = rng.next() % n;
                    let val = g.pair(idx, 1, &mut key);
                    E::put(t.txn, dbi, &key, val, 0)?;
                }
                Ok(Timing::from(o.updates, t0))
            })?;
        }
        t.commit()?;
    }

    // Delete (timed with the permutation), then reinsert (loop only).
    let (mut delete, mut reinsert) = (Timing::default(), Timing::default());
    let x = o.deletes.min(n);
    if x > 0 {
        tick("delete");
        let t = TxnGuard::<E>::begin(h.env, 0)?;
        let perm;
        (delete, perm) = at_next_stack_depth(|| -> Result<(Timing, Vec<u64>)> {
            let t0 = Stamp::now();
            let mut perm = permutation(n, seed ^ 0x9E37_79B9_7F4A_7C15);
            perm.truncate(x as usize);
            for &idx in &perm {
                let found = if v.dupsort() {
                    let ver = versions[idx as usize];
                    let val = g.pair(idx, ver as u64, &mut key);
                    let f = E::del(t.txn, dbi, &key, Some(val))?;
                    versions[idx as usize] = 0;
                    f
                } else {
                    E::del(t.txn, dbi, g.key(idx), None)?
                };
                if !found {
                    bail!("delete: entry {idx} not found");
                }
            }
            Ok((Timing::from(x, t0), perm))
        })?;
        t.commit()?;

        tick("reinsert");
        let t = TxnGuard::<E>::begin(h.env, 0)?;
        reinsert = at_next_stack_depth(|| -> Result<Timing> {
            let t0 = Stamp::now();
            for &idx in &perm {
                let val = g.pair(idx, 0, &mut key);
                E::put(t.txn, dbi, &key, val, 0)?;
            }
            Ok(Timing::from(x, t0))
        })?;
        t.commit()?;
    }

    E::env_sync(h.env, true)?;
    drop(h);

    tick("random read");
    let (h, dbi) = reopen::<E>(dir, map_size, flags)?;
    let read_cold = read_pass::<E>(h.env, dbi, &mut g, &versions, read_order)?;
    let read_warm = read_pass::<E>(h.env, dbi, &mut g, &versions, read_order)?;
    drop(h);

    tick("range scan");
    let (h, dbi) = reopen::<E>(dir, map_size, flags)?;
    let mut scan_cold = scan_pass::<E>(h.env, dbi, &mut g, o)?;
    let mut scan_warm = scan_pass::<E>(h.env, dbi, &mut g, o)?;

    let t = TxnGuard::<E>::begin(h.env, k::MDB_RDONLY)?;
    let st = E::stat(t.txn, dbi)?;
    drop(t);
    let last = E::last_pgno(h.env)?;
    let entries = st.entries;
    ensure!(
        entries == n,
        "{} entries in the DB after the run, expected {n}",
        entries
    );
    if scan_cold.ops == 0 {
        scan_cold.ops = entries;
    }
    if scan_warm.ops == 0 {
        scan_warm.ops = entries;
    }
    let unique_keys = if v.dupsort() {
        entries.div_ceil(v.dups)
    } else {
        entries
    };

    let (mut repack, mut repack_size) = (Timing::default(), 0);
    if o.repack {
        tick("repack");
        let rdir = PathBuf::from(format!("{}_repack", dir.display()));
        let _ = std::fs::remove_dir_all(&rdir);
        std::fs::create_dir_all(&rdir).with_context(|| format!("creating {}", rdir.display()))?;
        if !o.keep {
            crate::interrupt::register(&rdir);
        }
        repack = at_next_stack_depth(|| -> Result<Timing> {
            let t0 = Stamp::now();
            E::env_copy2(h.env, &rdir, MDB_CP_COMPACT)?;
            Ok(Timing::from(entries, t0))
        })?;
        repack_size = file_size(&rdir.join("data.mdb"));
        if !o.keep {
            let _ = std::fs::remove_dir_all(&rdir);
        }
    }
    drop(h);

    Ok(VariantResult {
        variant: v.clone(),
        engine: E::LABEL,
        insert,
        update,
        delete,
        reinsert,
        read_cold,
        read_warm,
        scan_cold,
        scan_warm,
        repack,
        repack_size,
        entries,
        unique_keys,
        data_size: file_size(&dir.join("data.mdb")),
        lock_size: file_size(&dir.join("lock.mdb")),
        map_used: (last + 1) * st.psize as u64,
        map_size: map_size as u64,
        depth: st.depth,
        branch_pages: st.branch_pages,
        leaf_pages: st.leaf_pages,
        overflow_pages: st.overflow_pages,
        page_size: st.psize,
        dir: dir.display().to_string(),
    })
}

/// The shared random-read order: `SM64(seed, or 1 if 0) % entries`.
fn read_order(o: &CompressOptions) -> Vec<u64> {
    let reads = if o.reads == 0 { o.entries } else { o.reads };
    let mut rng = Sm64(if o.seed == 0 { 1 } else { o.seed as u64 });
    (0..reads).map(|_| rng.next() % o.entries).collect()
}

/// Directory of one variant: `<prefix>_<label>` (`_lmdb` appended for the
/// stock LMDB run).
pub fn variant_dir(o: &CompressOptions, v: &Variant, engine: &str) -> PathBuf {
    let mut s = o.dir_prefix.clone().into_os_string();
    s.push(format!("_{}", v.label));
    if engine != OursE::LABEL {
        s.push(format!("_{engine}"));
    }
    PathBuf::from(s)
}

/// The mapsize warning compress_bench prints to stderr (or `None`).
pub fn mapsize_warning(o: &CompressOptions) -> Option<String> {
    let need = o
        .entries
        .saturating_mul((o.value_size + o.prefix_len + 16) as u64);
    let have = o.map_mib << 20;
    (have < need).then(|| {
        format!(
            "Warning: mapsize ({:.2} MiB) may be too small for {} entries; consider increasing with -m",
            have as f64 / 1048576.0,
            o.entries
        )
    })
}

/// Run every variant (and the stock LMDB runs if asked), removing the
/// directories afterwards unless `keep`. `tick(variant, phase)` is called
/// as each phase starts (for progress display).
///
/// Round `round` starts with variant `round % count` and goes on in
/// order, wrapping around: a variant that always ran after the same
/// neighbour would always inherit what it left behind (dirty pages still
/// in writeback on a disk, freed memory, the caches), so over several
/// rounds every variant takes every place equally often. The results are
/// in [`variants`] order whatever the round.
pub fn run_compress(
    o: &CompressOptions,
    round: usize,
    tick: &mut dyn FnMut(&str, &str),
) -> Result<CompressRun> {
    ensure!(o.entries > 0, "Entry count must be > 0");
    let vs = variants(o)?;
    let order = read_order(o);
    let mut results = Vec::new();
    let mut lmdb_results = Vec::new();
    let mut dirs = Vec::new();
    let r = (|| -> Result<()> {
        for i in rotated(vs.len(), round) {
            let v = &vs[i];
            let dir = variant_dir(o, v, OursE::LABEL);
            dirs.push(dir.clone());
            let res_ours = run_variant::<OursE>(v, o, &dir, &order, &mut |p| tick(&v.label, p))
                .with_context(|| format!("[{}]", v.label))?;
            // Stock LMDB (mdb.master) corrupts its free list on the DUPSORT
            // twins' update phase (a few thousand value replacements in one
            // txn end in SIGSEGV inside its commit, in our runs from 1,000
            // updates over 20,000 entries), so only unique-key variants run
            // on it.
            if o.peers && !v.compressed && !v.dupsort() {
                let dir = variant_dir(o, v, LmdbE::LABEL);
                dirs.push(dir.clone());
                let res = run_variant::<LmdbE>(v, o, &dir, &order, &mut |p| {
                    tick(&format!("{} (lmdb)", v.label), p)
                })
                .with_context(|| format!("[{} on lmdb]", v.label))?;
                lmdb_results.push((i, res));
            }
            results.push((i, res_ours));
        }
        Ok(())
    })();
    if !o.keep {
        for d in &dirs {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    r?;
    results.sort_by_key(|(i, _)| *i);
    lmdb_results.sort_by_key(|(i, _)| *i);
    Ok(CompressRun {
        options: o.clone(),
        results: results.into_iter().map(|(_, r)| r).collect(),
        lmdb_results: lmdb_results.into_iter().map(|(_, r)| r).collect(),
    })
}

/// Indexes `0..n` starting at `round % n`, wrapping around.
fn rotated(n: usize, round: usize) -> impl Iterator<Item = usize> {
    let start = if n == 0 { 0 } else { round % n };
    (0..n).map(move |k| (start + k) % n)
}

// ---------------------------------------------------------------- text

/// compress_bench's size format: divide by 1024 while >= 1024.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.2} {}", UNITS[u])
}

fn timing_line(s: &mut String, label: &str, unit: &str, t: &Timing) {
    if t.ops == 0 {
        return;
    }
    s.push_str(&format!(
        "{label}: {:.3} ms ({:.3} us/{unit}, {:.0} {unit}/s over {} {unit}{})\n",
        t.ms,
        t.us_per_op(),
        t.ops_per_sec(),
        t.ops,
        if t.ops == 1 { "" } else { "s" }
    ));
}

fn ratio(test: f64, base: f64) -> f64 {
    crate::report::ratio(Some(test), Some(base)).unwrap_or(0.0)
}

/// One variant's block, as compress_bench prints it.
pub fn render_variant(r: &VariantResult, o: &CompressOptions) -> String {
    let v = &r.variant;
    let mut s = format!(
        "=== {} ({}, {}) ===\n",
        v.label,
        if v.compressed { "prefix" } else { "plain" },
        if v.dupsort() { "dupsort" } else { "unique" }
    );
    s.push_str(&format!(
        "Entries: {}, Value bytes: {}, Prefix bytes: {}",
        r.entries, o.value_size, o.prefix_len
    ));
    if v.dupsort() {
        s.push_str(&format!(
            ", Duplicates/key target: {} (~{} unique keys)",
            v.dups, r.unique_keys
        ));
    }
    s.push('\n');
    timing_line(&mut s, "Insert", "op", &r.insert);
    timing_line(&mut s, "Update", "op", &r.update);
    timing_line(&mut s, "Delete", "key", &r.delete);
    timing_line(&mut s, "Reinsert", "key", &r.reinsert);
    timing_line(&mut s, "Repack (compact copy)", "entry", &r.repack);
    timing_line(&mut s, "Random Read (cold)", "op", &r.read_cold);
    timing_line(&mut s, "Random Read (warm)", "op", &r.read_warm);
    timing_line(&mut s, "Range Scan (cold)", "key", &r.scan_cold);
    timing_line(&mut s, "Range Scan (warm)", "key", &r.scan_warm);
    if r.repack.ops > 0 {
        s.push_str(&format!(
            "Repack output: {}{}\n",
            human_size(r.repack_size),
            if o.keep { "" } else { " (discarded)" }
        ));
        if o.keep {
            s.push_str(&format!("Repack directory: {}_repack\n", r.dir));
        }
    }
    s.push_str(&format!(
        "Files: data {}, lock {} (total {})\n",
        human_size(r.data_size),
        human_size(r.lock_size),
        human_size(r.data_size + r.lock_size)
    ));
    s.push_str(&format!(
        "Map: {} used / {} configured\n",
        human_size(r.map_used),
        human_size(r.map_size)
    ));
    s.push_str(&format!(
        "Tree: depth={}, pages(branch={}, leaf={}, overflow={}), page size={}\n\n",
        r.depth, r.branch_pages, r.leaf_pages, r.overflow_pages, r.page_size
    ));
    s
}

/// The index of variant `i`'s baseline, if it has a comparable one: the
/// first earlier uncompressed variant with the same dup count, else
/// variant 0 when that one has the same dup count.
pub fn baseline_of(rs: &[VariantResult], i: usize) -> Option<usize> {
    let me = &rs[i].variant;
    let b = (0..i)
        .find(|&j| !rs[j].variant.compressed && rs[j].variant.dups == me.dups)
        .unwrap_or(0);
    (i >= 1 && rs[b].variant.dups == me.dups).then_some(b)
}

/// Test/baseline time ratios of one comparison (0 where not comparable).
#[derive(Clone, Debug, Serialize)]
pub struct Relative {
    pub label: String,
    pub baseline: String,
    pub insert: f64,
    pub update: Option<f64>,
    pub delete: Option<f64>,
    pub reinsert: Option<f64>,
    pub repack: Option<f64>,
    pub random_read_warm: f64,
    pub random_read_cold: f64,
    pub range_scan_warm: f64,
    pub range_scan_cold: f64,
    pub data_size: f64,
    pub map_used: f64,
    pub leaf_pages: f64,
}

pub fn relative(t: &VariantResult, b: &VariantResult) -> Relative {
    let both = |x: &Timing, y: &Timing| (x.ops > 0 && y.ops > 0).then(|| ratio(x.ms, y.ms));
    Relative {
        label: t.variant.label.clone(),
        baseline: b.variant.label.clone(),
        insert: ratio(t.insert.ms, b.insert.ms),
        update: both(&t.update, &b.update),
        delete: both(&t.delete, &b.delete),
        reinsert: both(&t.reinsert, &b.reinsert),
        repack: both(&t.repack, &b.repack),
        random_read_warm: ratio(t.read_warm.us_per_op(), b.read_warm.us_per_op()),
        random_read_cold: ratio(t.read_cold.us_per_op(), b.read_cold.us_per_op()),
        range_scan_warm: ratio(t.scan_warm.us_per_op(), b.scan_warm.us_per_op()),
        range_scan_cold: ratio(t.scan_cold.us_per_op(), b.scan_cold.us_per_op()),
        data_size: ratio(t.data_size as f64, b.data_size as f64),
        map_used: ratio(t.map_used as f64, b.map_used as f64),
        leaf_pages: ratio(t.leaf_pages as f64, b.leaf_pages as f64),
    }
}

/// Every comparison block of the run, in variant order.
pub fn comparisons(rs: &[VariantResult]) -> Vec<(usize, usize)> {
    (1..rs.len())
        .filter_map(|i| baseline_of(rs, i).map(|b| (i, b)))
        .collect()
}

fn time_cmp(s: &mut String, label: &str, t: &Timing, b: &Timing) {
    match (t.ops > 0, b.ops > 0) {
        (true, true) => s.push_str(&format!(
            "{label} time: {:.3}x ({:.3} ms -> {:.3} ms)\n",
            ratio(t.ms, b.ms),
            b.ms,
            t.ms
        )),
        (false, false) => {}
        _ => s.push_str(&format!(
            "{label} time: baseline {} ops, test {} ops ({:.3} ms)\n",
            b.ops, t.ops, t.ms
        )),
    }
}

fn render_relative(t: &VariantResult, b: &VariantResult) -> String {
    let mut s = format!("--- Relative to {} ---\n", b.variant.label);
    s.push_str(&format!(
        "Insert time: {:.3}x ({:.3} ms -> {:.3} ms)\n",
        ratio(t.insert.ms, b.insert.ms),
        b.insert.ms,
        t.insert.ms
    ));
    time_cmp(&mut s, "Update", &t.update, &b.update);
    if t.delete.ops > 0 || b.delete.ops > 0 {
        time_cmp(&mut s, "Delete", &t.delete, &b.delete);
        time_cmp(&mut s, "Reinsert", &t.reinsert, &b.reinsert);
    }
    time_cmp(&mut s, "Repack", &t.repack, &b.repack);
    if t.repack_size > 0 && b.repack_size > 0 {
        s.push_str(&format!(
            "Repack size: {:.3}x ({} -> {})\n",
            ratio(t.repack_size as f64, b.repack_size as f64),
            human_size(b.repack_size),
            human_size(t.repack_size)
        ));
    }
    let r = relative(t, b);
    s.push_str(&format!("Random read (warm): {:.3}x\n", r.random_read_warm));
    s.push_str(&format!("Random read (cold): {:.3}x\n", r.random_read_cold));
    s.push_str(&format!("Range scan (warm): {:.3}x\n", r.range_scan_warm));
    s.push_str(&format!(
        "Data size: {:.3}x ({} -> {} bytes)\n",
        r.data_size, b.data_size, t.data_size
    ));
    s.push_str(&format!(
        "Map used: {:.3}x ({} -> {})\n",
        r.map_used,
        human_size(b.map_used),
        human_size(t.map_used)
    ));
    s.push_str(&format!(
        "Leaf pages: {:.3}x ({} -> {})\n\n",
        r.leaf_pages, b.leaf_pages, t.leaf_pages
    ));
    s
}

/// The report compress_bench prints: every variant's block, then the
/// comparisons. Stock LMDB runs (with `peers`) follow under their own
/// heading, each compared with our run of the same variant.
pub fn render_compress_text(run: &CompressRun) -> String {
    let o = &run.options;
    let mut s = String::new();
    for r in &run.results {
        s.push_str(&render_variant(r, o));
    }
    for (i, b) in comparisons(&run.results) {
        s.push_str(&render_relative(&run.results[i], &run.results[b]));
    }
    if !run.lmdb_results.is_empty() {
        s.push_str("### stock LMDB (same workload, without MDB_COUNTED)\n\n");
        for r in &run.lmdb_results {
            s.push_str(&render_variant(r, o));
        }
        for l in &run.lmdb_results {
            if let Some(ours) = run.results.iter().find(|r| r.variant == l.variant) {
                let mut block = render_relative(ours, l);
                block = block.replacen(
                    &format!("--- Relative to {} ---", l.variant.label),
                    &format!(
                        "--- ours {} relative to lmdb {} ---",
                        ours.variant.label, l.variant.label
                    ),
                    1,
                );
                s.push_str(&block);
            }
        }
    }
    s
}

// ---------------------------------------------------------------- report

/// DLMDB's published "relative to plain" time ratios (compress_bench, n =
/// 200000): the targets of the `prefix` and `prefix-dups` rows.
const PUBLISHED: [(&str, [(&str, f64); 6]); 2] = [
    (
        "prefix",
        [
            ("insert", 1.011),
            ("update", 0.880),
            ("delete", 1.151),
            ("reinsert", 0.996),
            ("random_read_warm", 0.884),
            ("range_scan_warm", 1.069),
        ],
    ),
    (
        "prefix-dups",
        [
            ("insert", 0.840),
            ("update", 0.785),
            ("delete", 0.591),
            ("reinsert", 0.675),
            ("random_read_warm", 0.795),
            ("range_scan_warm", 0.982),
        ],
    ),
];

/// DLMDB's published proportions of its uncompressed DUPSORT twin to the
/// unique-key DB (compress_bench, n = 200000, 20 values per key): a
/// plain-dups delete cost no more than a plain delete (1.226 against 1.328 us
/// per key) and an update about 2.3 times a plain update.
const PUBLISHED_DUPS_VS_PLAIN: [(&str, f64); 2] = [("delete", 1.0), ("update", 2.3)];

/// The unique-key uncompressed variant that an uncompressed DUPSORT variant
/// without a baseline of its own (plain-dups) is held against.
fn unique_twin_of(rs: &[VariantResult], i: usize) -> Option<usize> {
    let me = &rs[i].variant;
    if me.compressed || !me.dupsort() {
        return None;
    }
    (0..rs.len()).find(|&j| !rs[j].variant.compressed && !rs[j].variant.dupsort())
}

fn phases(r: &VariantResult) -> [(&'static str, &'static str, Timing); 9] {
    [
        ("insert", "op", r.insert),
        ("update", "op", r.update),
        ("delete", "key", r.delete),
        ("reinsert", "key", r.reinsert),
        ("repack", "entry", r.repack),
        ("random_read_cold", "op", r.read_cold),
        ("random_read_warm", "op", r.read_warm),
        ("range_scan_cold", "key", r.scan_cold),
        ("range_scan_warm", "key", r.scan_warm),
    ]
}

fn exacts(r: &VariantResult) -> [(&'static str, &'static str, u64); 7] {
    [
        ("entries", "count", r.entries),
        ("data_size", "bytes", r.data_size),
        ("map_used", "bytes", r.map_used),
        ("depth", "count", r.depth as u64),
        ("branch_pages", "pages", r.branch_pages),
        ("leaf_pages", "pages", r.leaf_pages),
        ("overflow_pages", "pages", r.overflow_pages),
    ]
}

/// Rows of one or more runs (rounds) of the same options: per variant and
/// phase the us/op of every round, with the baseline variant (or, for the
/// variants that ran on stock LMDB, stock LMDB) as the reference; sizes
/// and tree shape as exact rows. Exact rows must agree across rounds.
pub fn compress_report(runs: &[CompressRun]) -> Result<crate::report::Report> {
    use crate::report::{Report, Row, TargetKind};
    let first = runs.first().context("no compress run")?;
    let o = &first.options;
    let mut rep = Report::of_rounds("compress", runs.len(), o, o.peers)?;
    let (per, scale) = rep.measure.per_us();
    for (i, r0) in first.results.iter().enumerate() {
        let label = &r0.variant.label;
        let base = baseline_of(&first.results, i);
        let lmdb_idx = first
            .lmdb_results
            .iter()
            .position(|l| l.variant == r0.variant);
        for (p, (phase, unit, t)) in phases(r0).iter().enumerate() {
            if t.ops == 0 {
                continue;
            }
            let samples = |pick: &dyn Fn(&CompressRun) -> Option<&VariantResult>| -> Vec<f64> {
                runs.iter()
                    .filter_map(pick)
                    .map(|v| phases(v)[p].2.us_per_op() * scale)
                    .collect()
            };
            let mine = samples(&|run| run.results.get(i));
            let mut row = Row::measured(
                format!("{label}/{phase}"),
                &format!("{per}/{unit}"),
                true,
                mine,
            );
            if let Some(b) = base {
                let bl = first.results[b].variant.label.clone();
                row = row.with_reference(&bl, samples(&|run| run.results.get(b)));
                if let Some((_, targets)) = PUBLISHED.iter().find(|(l, _)| l == label) {
                    let plain = if r0.variant.dupsort() {
                        "plain-dups"
                    } else {
                        "plain"
                    };
                    if let Some((_, bound)) = targets.iter().find(|(ph, _)| ph == phase) {
                        if bl == plain {
                            row = row.with_target(TargetKind::RatioAtMost, *bound);
                        }
                    }
                }
            } else if let Some(li) = lmdb_idx {
                row = row.with_reference("lmdb", samples(&|run| run.lmdb_results.get(li)));
            } else if let Some(u) = unique_twin_of(&first.results, i) {
                let ul = first.results[u].variant.label.clone();
                row = row.with_reference(&ul, samples(&|run| run.results.get(u)));
                if let Some((_, bound)) = PUBLISHED_DUPS_VS_PLAIN.iter().find(|(ph, _)| ph == phase)
                {
                    row = row.with_target(TargetKind::RatioAtMost, *bound);
                }
            }
            rep.rows.push(row);
        }
        for (e, (what, unit, v)) in exacts(r0).iter().enumerate() {
            for run in &runs[1..] {
                let other = run.results.get(i).map(|x| exacts(x)[e].2);
                ensure!(
                    other == Some(*v),
                    "{label}/{what} differs between rounds ({v} vs {other:?}): the workload is not deterministic"
                );
            }
            let mut row = Row::exact(format!("{label}/{what}"), unit, *v as f64);
            if let Some(b) = base {
                let bv = exacts(&first.results[b])[e].2;
                row = row.with_reference(&first.results[b].variant.label, vec![bv as f64]);
            } else if let Some(li) = lmdb_idx {
                row = row.with_reference("lmdb", vec![exacts(&first.lmdb_results[li])[e].2 as f64]);
            }
            rep.rows.push(row);
        }
    }
    for (li, l) in first.lmdb_results.iter().enumerate() {
        for (p, (phase, unit, t)) in phases(l).iter().enumerate() {
            if t.ops == 0 {
                continue;
            }
            let s: Vec<f64> = runs
                .iter()
                .filter_map(|run| run.lmdb_results.get(li))
                .map(|v| phases(v)[p].2.us_per_op() * scale)
                .collect();
            rep.rows.push(
                Row::measured(
                    format!("lmdb/{}/{phase}", l.variant.label),
                    &format!("{per}/{unit}"),
                    true,
                    s,
                )
                .with_note("stock LMDB, without MDB_COUNTED"),
            );
        }
    }
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_rotate_the_variant_order() {
        let r: Vec<Vec<usize>> = (0..5).map(|k| rotated(4, k).collect()).collect();
        assert_eq!(
            r,
            [
                [0, 1, 2, 3],
                [1, 2, 3, 0],
                [2, 3, 0, 1],
                [3, 0, 1, 2],
                [0, 1, 2, 3]
            ]
        );
        assert_eq!(rotated(0, 3).count(), 0);
    }

    #[test]
    fn results_keep_the_variant_order_in_every_round() {
        let dir = std::env::temp_dir().join(format!("dlmdb-compress-rot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let o = CompressOptions {
            entries: 300,
            reads: 100,
            map_mib: 16,
            dups: 3,
            updates: 20,
            deletes: 20,
            range_scans: 5,
            range_len: 10,
            dir_prefix: dir.join("cb"),
            ..Default::default()
        };
        let want: Vec<String> = variants(&o).unwrap().into_iter().map(|v| v.label).collect();
        for round in 0..4 {
            let mut seen = Vec::new();
            let run = run_compress(&o, round, &mut |v, _| {
                if seen.last().map(String::as_str) != Some(v) {
                    seen.push(v.to_string());
                }
            })
            .unwrap();
            let got: Vec<String> = run
                .results
                .iter()
                .map(|r| r.variant.label.clone())
                .collect();
            assert_eq!(got, want, "round {round}");
            assert_eq!(seen[0], want[round % want.len()], "round {round} starts");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn default_variants_with_dups() {
        let o = CompressOptions {
            dups: 20,
            ..Default::default()
        };
        let l: Vec<String> = variants(&o).unwrap().into_iter().map(|v| v.label).collect();
        assert_eq!(l, ["plain", "prefix", "plain-dups", "prefix-dups"]);
    }

    #[test]
    fn variant_specs() {
        let o = CompressOptions {
            variant_specs: vec!["off".into(), "x:on".into(), "plain".into()],
            ..Default::default()
        };
        let v = variants(&o).unwrap();
        let l: Vec<(&str, bool)> = v.iter().map(|v| (v.label.as_str(), v.compressed)).collect();
        assert_eq!(l, [("plain", false), ("x", true), ("plain-2", false)]);
        let bad = CompressOptions {
            variant_specs: vec!["zip".into()],
            ..Default::default()
        };
        assert!(variants(&bad).is_err());
        let long = CompressOptions {
            variant_specs: vec!["a".repeat(128)],
            ..Default::default()
        };
        assert!(variants(&long).is_err());
    }

    #[test]
    fn keys_and_values() {
        let o = CompressOptions {
            prefix_len: 3,
            value_size: 4,
            entries: 10,
            ..Default::default()
        };
        let mut g = Gen::new(&o, 0);
        assert_eq!(g.key(0x1234_abcd), b"ppp000000001234abcd");
        assert_eq!(g.value(2, 1), [12, 13, 14, 15]);
        let mut g = Gen::new(&o, 4);
        assert_eq!(g.key(9), b"ppp0000000000000002");
        assert_eq!(g.value(9, 3), [2, 2, 3, 1]);
        let o1 = CompressOptions { value_size: 1, ..o };
        let mut g = Gen::new(&o1, 4);
        assert_eq!(g.value(9, 3), [4]);
    }

    #[test]
    fn sizes_like_compress_bench() {
        assert_eq!(human_size(0), "0.00 B");
        assert_eq!(human_size(1536), "1.50 KiB");
        assert_eq!(human_size(3 << 30), "3.00 GiB");
    }
}
