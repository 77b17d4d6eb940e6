//! `bench peers --scale`: stores of 10^7 and 10^8 entries on a real disk.
//!
//! For each size, both engines build the same store (8-byte big-endian
//! keys `2*i`, 100-byte values, appended in order, one million puts per
//! transaction, synced once at the end), then time random lookups in
//! interleaved rounds:
//!
//! - `get`: `mdb_get` of a random existing key; the value's first 8 bytes
//!   are checked against the key;
//! - `seek`: `MDB_SET_RANGE` on the odd key `2*j+1`, which must land on
//!   `2*j+2` (or past the end for the last key);
//! - warm: after an untimed pass over the same number of lookups;
//! - cold: the environment is closed, the data file's cached pages are
//!   dropped (`posix_fadvise(POSIX_FADV_DONTNEED)`, or
//!   `/proc/sys/vm/drop_caches` when that leaves pages behind and we are
//!   root; `mincore` tells which worked), then the store is reopened and the
//!   first lookups timed; twice per engine in each round, in the order
//!   ABBA, since these rows follow the disk (the kernel's readahead on the
//!   first faults brings in most of the file).
//!
//! Each store's tree depth is reported beside its per-lookup time, with the
//! warm time per level, so that the per-lookup cost growing with the depth
//! only shows as a constant time per level across sizes.
//!
//! The put rows run one write transaction of N ascending puts (the same
//! keys and values) in a forked child per engine, so each row's peak RSS
//! (`wait4`'s `ru_maxrss`) is that transaction's alone. A child whose RSS
//! passes `--scale-rss-cap` is stopped and the row says so, so a run
//! cannot push a shared machine into the OOM killer.
//!
//! Only the engine entry points of [`crate::extra::Eng`] are used.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::extra::{median, Cur, Eng, Env, LmdbE, Txn, Xs64};
use crate::{short_count, EngineSel};

#[cfg(not(ours_is_lmdb))]
type OursEng = crate::extra::OursE;
#[cfg(ours_is_lmdb)]
type OursEng = LmdbE;

const MDB_NOSYNC: u32 = 0x10000;
const MDB_RDONLY: u32 = 0x20000;
const MDB_APPEND: u32 = 0x20000;
const MDB_SET_RANGE: u32 = 17;
const VALUE_SIZE: usize = 100;
/// Puts per transaction while building a lookup store.
const BUILD_TXN_PUTS: u64 = 1_000_000;
/// Bytes of data file per entry at most (node, pointer, fill, branches):
/// used for the map size and the free-space check.
const BYTES_PER_ENTRY_MAX: u64 = 200;
/// Sizes below this are refused unless the hidden test switch is given.
pub const MIN_SCALE: u64 = 1_000_000;
/// Filesystem magic numbers of memory-backed filesystems (statfs `f_type`).
const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// How the lookup rows are timed; the report repeats it.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct LookupTiming {
    /// Interleaved rounds of the lookup rows.
    pub rounds: usize,
    /// Timed random lookups per warm row.
    pub warm_lookups: u64,
    /// Timed random lookups per cold row.
    pub cold_lookups: u64,
}

/// What `--scale` runs.
#[derive(Clone, Debug)]
pub struct ScaleOptions {
    /// Store sizes (entries).
    pub sizes: Vec<u64>,
    /// Puts of the one-transaction rows (empty: none).
    pub put_sizes: Vec<u64>,
    /// Parent directory of the stores (a real disk).
    pub dir: PathBuf,
    /// Rounds and lookups of the lookup rows.
    pub timing: LookupTiming,
    /// A put row's child is stopped when its RSS passes this (bytes).
    pub rss_cap: u64,
    /// Run only one engine.
    pub only: Option<EngineSel>,
    /// Small sizes and memory filesystems allowed (the option tests).
    pub test_mode: bool,
    /// One line per finished step on stderr.
    pub progress: bool,
}

/// One engine's store of one size and its lookup times.
#[derive(Clone, Debug, Serialize)]
pub struct LookupRow {
    pub entries: u64,
    pub engine: &'static str,
    pub depth: u32,
    pub branch_pages: u64,
    pub leaf_pages: u64,
    pub file_bytes: u64,
    pub build_seconds: f64,
    /// Median over rounds, ns per lookup.
    pub get_warm_ns: f64,
    pub seek_warm_ns: f64,
    /// `get_warm_ns / depth`.
    pub get_warm_ns_per_level: f64,
    pub seek_warm_ns_per_level: f64,
    /// `None` when the page cache could not be dropped.
    pub get_cold_ns: Option<f64>,
    pub seek_cold_ns: Option<f64>,
    /// Share of the data file still cached after the last drop (0..1).
    pub resident_after_drop: Option<f64>,
}

/// One write transaction of `puts` ascending puts, in a child process.
#[derive(Clone, Debug, Serialize)]
pub struct PutRow {
    pub puts: u64,
    pub engine: &'static str,
    /// Begin to commit, seconds (`None` when the child did not finish).
    pub seconds: Option<f64>,
    /// The child's peak RSS (`ru_maxrss`), bytes.
    pub peak_rss_bytes: u64,
    pub data_file_bytes: u64,
    /// "ok", or why the row has no time.
    pub outcome: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct ScaleReport {
    pub dir: String,
    pub filesystem: String,
    #[serde(flatten)]
    pub timing: LookupTiming,
    pub lookups: Vec<LookupRow>,
    pub puts: Vec<PutRow>,
    /// How the page cache was dropped, or why cold rows are missing.
    pub cold_method: String,
    pub loadavg_start: String,
    pub loadavg_end: String,
    pub ours_version: String,
    pub lmdb_version: String,
}

/// A list of entry counts given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counts(pub Vec<u64>);

/// `1e7`, `12e6`, `20000`, `1.5e7`, comma-separated, into entry counts.
pub fn parse_counts(s: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(format!("empty count in {s:?}"));
        }
        let n = match part.parse::<u64>() {
            Ok(n) => n,
            Err(_) => {
                let f: f64 = part
                    .parse()
                    .map_err(|_| format!("{part:?} is not a count (e.g. 1e7 or 10000000)"))?;
                if !(f.is_finite() && (1.0..=1e12).contains(&f) && f.fract() == 0.0) {
                    return Err(format!("{part:?} is not a whole count between 1 and 1e12"));
                }
                f as u64
            }
        };
        if n == 0 {
            return Err(format!("{part:?}: a count must be positive"));
        }
        out.push(n);
    }
    Ok(out)
}

/// What `stat` (`libc::statfs` or `libc::statvfs`, named `what`) tells
/// about the filesystem holding `dir`.
///
/// # Safety
/// `T` is a plain C struct (all zero bytes are a valid value) that `stat`
/// fills from a NUL-terminated path.
unsafe fn fs_stat<T>(
    dir: &Path,
    what: &str,
    stat: unsafe extern "C" fn(*const libc::c_char, *mut T) -> libc::c_int,
) -> Result<T> {
    let c = CString::new(dir.as_os_str().as_bytes()).context("directory name holds a NUL")?;
    // SAFETY: the caller's promise about `T` and `stat`; `c` is NUL-terminated.
    let mut st: T = unsafe { std::mem::zeroed() };
    if unsafe { stat(c.as_ptr(), &mut st) } != 0 {
        bail!(
            "cannot {what} {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        );
    }
    Ok(st)
}

/// Refuse memory-backed filesystems: the point of the benchmark is a store
/// larger than what stays cached. Returns the filesystem's name.
pub fn check_real_disk(dir: &Path, allow_memory: bool) -> Result<String> {
    // SAFETY: statfs fills a plain struct from a path.
    let st = unsafe { fs_stat(dir, "statfs", libc::statfs)? };
    let magic = st.f_type as i64;
    let name = crate::sysinfo::fs_type(dir).unwrap_or_else(|| format!("{magic:#x}"));
    if (magic == TMPFS_MAGIC || magic == RAMFS_MAGIC) && !allow_memory {
        bail!(
            "{} is on {name}, a memory filesystem: --scale needs a directory on a real disk \
             (cold lookups and stores larger than memory mean nothing in RAM); give --dir on one",
            dir.display()
        );
    }
    Ok(name)
}

/// Free bytes for an unprivileged writer at `dir`.
fn free_bytes(dir: &Path) -> Result<u64> {
    // SAFETY: statvfs fills a plain struct from a path.
    let st = unsafe { fs_stat(dir, "statvfs", libc::statvfs)? };
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

#[inline(always)]
fn key_of(i: u64) -> [u8; 8] {
    i.to_be_bytes()
}

/// The value stored under key `k`: the key, then a byte pattern from it.
#[inline(always)]
fn value_of(k: &[u8; 8], out: &mut [u8; VALUE_SIZE]) {
    out[..8].copy_from_slice(k);
    let seed = k[7] ^ k[6];
    for (i, b) in out[8..].iter_mut().enumerate() {
        *b = seed.wrapping_add(i as u8);
    }
}

/// The random lookup positions, the same for both engines: the top 53
/// bits of [`Xs64`] (xorshift64*).
struct Rng(Xs64);
impl Rng {
    #[inline(always)]
    fn below(&mut self, n: u64) -> u64 {
        (self.0.next() >> 11) % n
    }
}

fn engine_dir(root: &Path, label: &str, n: u64) -> PathBuf {
    root.join(format!("{label}-{n}"))
}

fn map_size_for(n: u64) -> usize {
    (n * BYTES_PER_ENTRY_MAX + (256 << 20)) as usize
}

/// Build the lookup store of `n` entries (keys `2*i`) in `dir`.
fn build<E: Eng>(dir: &Path, n: u64) -> Result<f64> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let env = E::env_open(dir, MDB_NOSYNC, 0, map_size_for(n))?;
    let r = (|| -> Result<f64> {
        let t0 = Instant::now();
        let dbi = crate::extra::open_main_db::<E>(env)?;
        let mut v = [0u8; VALUE_SIZE];
        let mut i = 0u64;
        while i < n {
            let end = (i + BUILD_TXN_PUTS).min(n);
            crate::extra::in_write_txn::<E>(env, |txn| {
                for j in i..end {
                    let k = key_of(2 * j);
                    value_of(&k, &mut v);
                    E::put(txn, dbi, &k, &v, MDB_APPEND)?;
                }
                Ok(())
            })?;
            i = end;
        }
        E::env_sync(env, true)?;
        Ok(t0.elapsed().as_secs_f64())
    })();
    E::env_close(env);
    r
}

/// Open a built store read-only for lookups.
struct Store<E: Eng> {
    env: Env,
    txn: Txn,
    cur: Cur,
    dbi: u32,
    _e: std::marker::PhantomData<E>,
}

impl<E: Eng> Store<E> {
    fn open(dir: &Path, n: u64) -> Result<Self> {
        let env = E::env_open(dir, MDB_RDONLY, 0, map_size_for(n))?;
        let mut s = Store {
            env,
            txn: ptr::null_mut(),
            cur: ptr::null_mut(),
            dbi: 0,
            _e: std::marker::PhantomData,
        };
        s.txn = E::txn_begin(env, ptr::null_mut(), MDB_RDONLY)?;
        s.dbi = E::dbi_open(s.txn, None, 0)?;
        s.cur = E::cursor_open(s.txn, s.dbi)?;
        Ok(s)
    }

    fn stat(&self) -> Result<crate::extra::DbStat> {
        E::stat(self.txn, self.dbi)
    }

    /// `count` random gets; ns per get.
    fn gets(&mut self, n: u64, count: u64, seed: u64) -> Result<f64> {
        ns_per_op(n, count, seed, |j| {
            let k = key_of(2 * j);
            match E::get(self.txn, self.dbi, &k)? {
                Some(v) if v.len() == VALUE_SIZE && v[..8] == k => Ok(()),
                Some(_) => bail!("{}: wrong value under key {}", E::LABEL, 2 * j),
                None => bail!("{}: key {} missing", E::LABEL, 2 * j),
            }
        })
    }

    /// `count` random `MDB_SET_RANGE` seeks between keys; ns per seek.
    fn seeks(&mut self, n: u64, count: u64, seed: u64) -> Result<f64> {
        ns_per_op(n, count, seed, |j| {
            let probe = key_of(2 * j + 1);
            match E::cursor_get(self.cur, &probe, &[], MDB_SET_RANGE)? {
                Some((k, _)) if k == key_of(2 * j + 2) => Ok(()),
                None if j == n - 1 => Ok(()),
                Some(_) | None => bail!("{}: seek to {} landed wrong", E::LABEL, 2 * j + 1),
            }
        })
    }
}

/// `op` on `count` random indexes below `n` (stream `seed`), timed at a
/// stack depth of its own like every other suite's samples; ns per call.
fn ns_per_op(n: u64, count: u64, seed: u64, mut op: impl FnMut(u64) -> Result<()>) -> Result<f64> {
    let mut rng = Rng(Xs64(seed | 1));
    crate::measure::at_next_stack_depth(|| {
        let t0 = Instant::now();
        for _ in 0..count {
            op(rng.below(n))?;
        }
        Ok(t0.elapsed().as_nanos() as f64 / count as f64)
    })
}

impl<E: Eng> Drop for Store<E> {
    fn drop(&mut self) {
        if !self.cur.is_null() {
            E::cursor_close(self.cur);
        }
        if !self.txn.is_null() {
            E::txn_abort(self.txn);
        }
        E::env_close(self.env);
    }
}

/// Share of `file`'s pages in the page cache (mincore on a fresh mapping).
fn resident_share(file: &Path) -> Result<f64> {
    let f = std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?;
    let len = f.metadata()?.len() as usize;
    if len == 0 {
        return Ok(0.0);
    }
    use std::os::unix::io::AsRawFd;
    // SAFETY: read-only shared mapping of a file we hold open, unmapped below.
    unsafe {
        let p = libc::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        if p == libc::MAP_FAILED {
            bail!(
                "mmap {}: {}",
                file.display(),
                std::io::Error::last_os_error()
            );
        }
        let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
        let mut vec = vec![0u8; len.div_ceil(page)];
        let rc = libc::mincore(p, len, vec.as_mut_ptr());
        let err = std::io::Error::last_os_error();
        libc::munmap(p, len);
        if rc != 0 {
            bail!("mincore {}: {err}", file.display());
        }
        let cached = vec.iter().filter(|b| **b & 1 != 0).count();
        Ok(cached as f64 / vec.len() as f64)
    }
}

/// Drop `file`'s pages from the page cache. Ok((method, share still
/// cached)); the caller decides whether that is cold enough.
fn drop_cache(file: &Path) -> Result<(String, f64)> {
    use std::os::unix::io::AsRawFd;
    let f = std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?;
    // SAFETY: plain syscalls on an open descriptor.
    unsafe {
        libc::fdatasync(f.as_raw_fd());
        libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
    let left = resident_share(file)?;
    if left <= 0.02 {
        return Ok(("posix_fadvise(POSIX_FADV_DONTNEED)".into(), left));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // SAFETY: sync has no preconditions.
        unsafe { libc::sync() };
        if std::fs::write("/proc/sys/vm/drop_caches", "1\n").is_ok() {
            let left = resident_share(file)?;
            return Ok(("/proc/sys/vm/drop_caches".into(), left));
        }
    }
    Ok(("none".into(), left))
}

/// Largest share of the data file that may stay cached for a row to count
/// as cold.
const COLD_ENOUGH: f64 = 0.05;

/// Per-round samples of one engine at one size.
#[derive(Default)]
struct Samples {
    get_warm: Vec<f64>,
    seek_warm: Vec<f64>,
    get_cold: Vec<f64>,
    seek_cold: Vec<f64>,
    resident: Option<f64>,
}

/// One round of one engine's warm rows: warm get, then warm seek.
fn warm_round<E: Eng>(
    dir: &Path,
    n: u64,
    opts: &ScaleOptions,
    seed: u64,
    s: &mut Samples,
) -> Result<()> {
    let mut st = Store::<E>::open(dir, n)?;
    st.gets(n, opts.timing.warm_lookups, seed ^ 0x77)?;
    s.get_warm.push(st.gets(n, opts.timing.warm_lookups, seed)?);
    st.seeks(n, opts.timing.warm_lookups, seed ^ 0x66)?;
    s.seek_warm
        .push(st.seeks(n, opts.timing.warm_lookups, seed ^ 0x55)?);
    Ok(())
}

/// One cold sample of one engine: drop the data file's pages, reopen, time
/// the first lookups (gets, or seeks when `seek`).
fn cold_sample<E: Eng>(
    dir: &Path,
    n: u64,
    opts: &ScaleOptions,
    seed: u64,
    seek: bool,
    s: &mut Samples,
    cold_note: &mut Option<String>,
) -> Result<()> {
    let data = dir.join("data.mdb");
    let (method, left) = drop_cache(&data)?;
    s.resident = Some(left);
    if left > COLD_ENOUGH {
        *cold_note = Some(format!(
            "cold rows skipped: {:.0}% of the data file stayed cached after \
             posix_fadvise(POSIX_FADV_DONTNEED){}",
            left * 100.0,
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                " and /proc/sys/vm/drop_caches"
            } else {
                "; not root, so /proc/sys/vm/drop_caches was not tried"
            }
        ));
        return Ok(());
    }
    if cold_note.is_none() {
        *cold_note = Some(method);
    }
    let mut st = Store::<E>::open(dir, n)?;
    if seek {
        s.seek_cold
            .push(st.seeks(n, opts.timing.cold_lookups, seed ^ 0xc01d)?);
    } else {
        s.get_cold
            .push(st.gets(n, opts.timing.cold_lookups, seed ^ 0xc01d)?);
    }
    Ok(())
}

fn lookup_row<E: Eng>(dir: &Path, n: u64, build_seconds: f64, s: &Samples) -> Result<LookupRow> {
    let st = Store::<E>::open(dir, n)?.stat()?;
    let file_bytes = std::fs::metadata(dir.join("data.mdb"))?.len();
    let depth = st.depth.max(1);
    let get_warm_ns = median(&s.get_warm).expect("one round at least");
    let seek_warm_ns = median(&s.seek_warm).expect("one round at least");
    Ok(LookupRow {
        entries: n,
        engine: E::LABEL,
        depth: st.depth,
        branch_pages: st.branch_pages,
        leaf_pages: st.leaf_pages,
        file_bytes,
        build_seconds,
        get_warm_ns,
        seek_warm_ns,
        get_warm_ns_per_level: get_warm_ns / f64::from(depth),
        seek_warm_ns_per_level: seek_warm_ns / f64::from(depth),
        get_cold_ns: median(&s.get_cold),
        seek_cold_ns: median(&s.seek_cold),
        resident_after_drop: s.resident,
    })
}

fn progress(opts: &ScaleOptions, msg: impl AsRef<str>) {
    if opts.progress {
        eprintln!("scale: {}", msg.as_ref());
    }
}

/// Build, time and remove the stores of one size for the selected engines.
fn run_size(
    root: &Path,
    n: u64,
    opts: &ScaleOptions,
    cold_note: &mut Option<String>,
) -> Result<Vec<LookupRow>> {
    let (ours, lmdb) = (
        EngineSel::runs(opts.only, true),
        EngineSel::runs(opts.only, false),
    );
    let engines = u64::from(ours) + u64::from(lmdb);
    let need = engines * n * BYTES_PER_ENTRY_MAX;
    let free = free_bytes(root)?;
    if free < need + (2 << 30) {
        bail!(
            "{n} entries need up to {} GB per engine on {}, and only {} GB are free",
            (n * BYTES_PER_ENTRY_MAX) >> 30,
            root.display(),
            free >> 30
        );
    }
    let (od, ld) = (
        engine_dir(root, OursEng::LABEL, n),
        engine_dir(root, LmdbE::LABEL, n),
    );
    let r = (|| -> Result<Vec<LookupRow>> {
        let (mut ob, mut lb) = (0.0, 0.0);
        if ours {
            progress(opts, format!("building {n} entries with ours"));
            ob = build::<OursEng>(&od, n)?;
        }
        if lmdb {
            progress(opts, format!("building {n} entries with lmdb"));
            lb = build::<LmdbE>(&ld, n)?;
        }
        let (mut os, mut ls) = (Samples::default(), Samples::default());
        for r in 0..opts.timing.rounds {
            let seed = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(r as u64 + 1);
            let [a, b] = crate::extra::turns(r);
            for ours_turn in [a, b] {
                if ours_turn && ours {
                    warm_round::<OursEng>(&od, n, opts, seed, &mut os)?;
                } else if !ours_turn && lmdb {
                    warm_round::<LmdbE>(&ld, n, opts, seed, &mut ls)?;
                }
            }
            // A cold row reads most of the file through the kernel's
            // readahead, so its time follows the disk; in the order ABBA
            // each engine takes the first and the last place of every row
            // of every round, whatever the number of rounds.
            for seek in [false, true] {
                for ours_turn in [a, b, b, a] {
                    if opts.timing.cold_lookups == 0 {
                        break;
                    }
                    if ours_turn && ours {
                        cold_sample::<OursEng>(&od, n, opts, seed, seek, &mut os, cold_note)?;
                    } else if !ours_turn && lmdb {
                        cold_sample::<LmdbE>(&ld, n, opts, seed, seek, &mut ls, cold_note)?;
                    }
                }
            }
            progress(
                opts,
                format!("{n} entries: round {} of {}", r + 1, opts.timing.rounds),
            );
        }
        let mut rows = Vec::new();
        if ours {
            rows.push(lookup_row::<OursEng>(&od, n, ob, &os)?);
        }
        if lmdb {
            rows.push(lookup_row::<LmdbE>(&ld, n, lb, &ls)?);
        }
        Ok(rows)
    })();
    let _ = std::fs::remove_dir_all(&od);
    let _ = std::fs::remove_dir_all(&ld);
    r
}

/// The put transaction, run in the child: Ok(seconds) or an error text.
fn put_txn<E: Eng>(dir: &Path, puts: u64) -> Result<f64> {
    std::fs::create_dir_all(dir)?;
    let env = E::env_open(dir, MDB_NOSYNC, 0, map_size_for(puts))?;
    let r = (|| -> Result<f64> {
        let dbi = crate::extra::open_main_db::<E>(env)?;
        let mut v = [0u8; VALUE_SIZE];
        crate::measure::at_next_stack_depth(|| {
            let t0 = Instant::now();
            crate::extra::in_write_txn::<E>(env, |txn| {
                for i in 0..puts {
                    let k = key_of(i);
                    value_of(&k, &mut v);
                    E::put(txn, dbi, &k, &v, 0)?;
                }
                Ok(())
            })?;
            Ok(t0.elapsed().as_secs_f64())
        })
    })();
    E::env_close(env);
    r
}

/// VmRSS of `pid`, bytes.
fn rss_of(pid: libc::pid_t) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// One put row in a forked child; the parent watches its RSS.
fn put_row<E: Eng>(root: &Path, puts: u64, rss_cap: u64) -> Result<PutRow> {
    let dir = root.join(format!("puts-{}-{puts}", E::LABEL));
    let mut fds = [0i32; 2];
    // SAFETY: pipe fills two descriptors.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        bail!("pipe: {}", std::io::Error::last_os_error());
    }
    // SAFETY: the child only runs the engine on its own new store, writes
    // its result to the pipe and leaves with _exit; it does not return into
    // the parent's code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        bail!("fork: {}", std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: descriptors from pipe() above.
        unsafe { libc::close(fds[0]) };
        let msg = match put_txn::<E>(&dir, puts) {
            Ok(s) => format!("ok {s}"),
            Err(e) => format!("error {e:#}"),
        };
        use std::os::unix::io::FromRawFd;
        // SAFETY: we own the write end.
        let mut w = unsafe { std::fs::File::from_raw_fd(fds[1]) };
        let _ = w.write_all(msg.as_bytes());
        drop(w);
        // SAFETY: leave the child without running the parent's destructors.
        unsafe { libc::_exit(0) };
    }
    // SAFETY: the parent's copy of the write end.
    unsafe { libc::close(fds[1]) };
    let mut status = 0i32;
    // SAFETY: rusage is plain data.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut stopped = None;
    loop {
        // SAFETY: waits for our own child.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            break;
        }
        if r < 0 {
            bail!("wait4: {}", std::io::Error::last_os_error());
        }
        if stopped.is_none() {
            if let Some(rss) = rss_of(pid).filter(|&r| r > rss_cap) {
                stopped = Some(rss);
                // SAFETY: our own child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            if crate::interrupt::interrupted() {
                // SAFETY: our own child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    use std::os::unix::io::FromRawFd;
    // SAFETY: we own the read end.
    let mut rd = unsafe { std::fs::File::from_raw_fd(fds[0]) };
    let mut msg = String::new();
    let _ = rd.read_to_string(&mut msg);
    let data_file_bytes = std::fs::metadata(dir.join("data.mdb"))
        .map(|m| m.len())
        .unwrap_or(0);
    let _ = std::fs::remove_dir_all(&dir);
    let peak = ru.ru_maxrss as u64 * 1024;
    let (seconds, outcome) = if let Some(rss) = stopped {
        (
            None,
            format!("stopped at {} MB RSS (cap {} MB)", rss >> 20, rss_cap >> 20),
        )
    } else if let Some(s) = msg.strip_prefix("ok ") {
        (s.trim().parse().ok(), "ok".to_string())
    } else if let Some(e) = msg.strip_prefix("error ") {
        (None, e.to_string())
    } else {
        (
            None,
            format!("child ended without a result (status {status:#x})"),
        )
    };
    Ok(PutRow {
        puts,
        engine: E::LABEL,
        seconds,
        peak_rss_bytes: peak,
        data_file_bytes,
        outcome,
    })
}

/// Run the whole scale benchmark.
pub fn run_scale(opts: &ScaleOptions) -> Result<ScaleReport> {
    anyhow::ensure!(opts.timing.rounds >= 1, "--rounds must be at least 1");
    if !opts.test_mode {
        if let Some(&n) = opts
            .sizes
            .iter()
            .chain(&opts.put_sizes)
            .find(|&&n| n < MIN_SCALE)
        {
            bail!("--scale sizes start at 1e6 (got {n}); the smaller sizes are the ordinary rows of bench peers");
        }
    }
    std::fs::create_dir_all(&opts.dir)
        .with_context(|| format!("creating {}", opts.dir.display()))?;
    let filesystem = check_real_disk(&opts.dir, opts.test_mode)?;
    let loadavg_start = crate::sysinfo::loadavg();
    let scratch = crate::extra::scratch_in(&opts.dir, "dlmdb-scale-")?;
    let root = scratch.path();
    let mut cold_note = None;
    let mut lookups = Vec::new();
    for &n in &opts.sizes {
        lookups.extend(run_size(root, n, opts, &mut cold_note)?);
    }
    let mut puts = Vec::new();
    for &p in &opts.put_sizes {
        for first_ours in [true, false] {
            if !EngineSel::runs(opts.only, first_ours) {
                continue;
            }
            progress(
                opts,
                format!(
                    "one transaction of {p} puts, {}",
                    if first_ours { "ours" } else { "lmdb" }
                ),
            );
            puts.push(if first_ours {
                put_row::<OursEng>(root, p, opts.rss_cap)?
            } else {
                put_row::<LmdbE>(root, p, opts.rss_cap)?
            });
        }
    }
    let cold_method = match (opts.timing.cold_lookups, cold_note) {
        (0, _) => "cold rows not asked for".to_string(),
        (_, Some(m)) => m,
        (_, None) => "no lookup rows".to_string(),
    };
    Ok(ScaleReport {
        dir: opts.dir.display().to_string(),
        filesystem,
        timing: opts.timing,
        lookups,
        puts,
        cold_method,
        loadavg_start,
        loadavg_end: crate::sysinfo::loadavg(),
        ours_version: OursEng::version(),
        lmdb_version: LmdbE::version(),
    })
}

fn opt_us(v: Option<f64>) -> String {
    v.map_or("-".into(), |ns| format!("{:.1}", ns / 1000.0))
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    crate::render::ratio(crate::report::ratio(a, b))
}

/// The text report: one table of lookups by size, then the put rows.
pub fn render_text(r: &ScaleReport) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "bench peers --scale: 8-byte keys, 100-byte values, {} ({}); {} interleaved round(s), \
         warm rows {} lookups, cold rows {} lookups; load {} -> {}\n",
        r.dir,
        r.filesystem,
        r.timing.rounds,
        r.timing.warm_lookups,
        r.timing.cold_lookups,
        r.loadavg_start,
        r.loadavg_end
    ));
    s.push_str(&format!(
        "ours: {}; lmdb: {}\n",
        r.ours_version, r.lmdb_version
    ));
    s.push_str(&format!("cold: {}\n\n", r.cold_method));
    if !r.lookups.is_empty() {
        s.push_str(&format!(
            "{:>8} {:>6} {:>5} {:>9} {:>8} {:>10} {:>8} {:>10} {:>8} {:>10} {:>10}\n",
            "entries",
            "engine",
            "depth",
            "file MB",
            "build s",
            "get ns",
            "/level",
            "seek ns",
            "/level",
            "get cold",
            "seek cold"
        ));
        for l in &r.lookups {
            s.push_str(&format!(
                "{:>8} {:>6} {:>5} {:>9.0} {:>8.1} {:>10.0} {:>8.0} {:>10.0} {:>8.0} {:>8} us {:>7} us\n",
                short_count(l.entries),
                l.engine,
                l.depth,
                l.file_bytes as f64 / 1e6,
                l.build_seconds,
                l.get_warm_ns,
                l.get_warm_ns_per_level,
                l.seek_warm_ns,
                l.seek_warm_ns_per_level,
                opt_us(l.get_cold_ns),
                opt_us(l.seek_cold_ns),
            ));
        }
        s.push('\n');
        for (n, o, l) in pairs(&r.lookups) {
            s.push_str(&format!(
                "{:>8} ours/lmdb: get {} seek {} get cold {} seek cold {}\n",
                short_count(n),
                ratio(Some(o.get_warm_ns), Some(l.get_warm_ns)),
                ratio(Some(o.seek_warm_ns), Some(l.seek_warm_ns)),
                ratio(o.get_cold_ns, l.get_cold_ns),
                ratio(o.seek_cold_ns, l.seek_cold_ns),
            ));
        }
        s.push('\n');
    }
    if !r.puts.is_empty() {
        s.push_str("one write transaction of N ascending puts, each in its own child process\n");
        s.push_str(&format!(
            "{:>8} {:>6} {:>9} {:>12} {:>9}  {}\n",
            "puts", "engine", "seconds", "peak RSS MB", "file MB", "outcome"
        ));
        for p in &r.puts {
            s.push_str(&format!(
                "{:>8} {:>6} {:>9} {:>12.0} {:>9.0}  {}\n",
                short_count(p.puts),
                p.engine,
                p.seconds.map_or("-".into(), |t| format!("{t:.2}")),
                p.peak_rss_bytes as f64 / 1e6,
                p.data_file_bytes as f64 / 1e6,
                p.outcome
            ));
        }
    }
    s
}

/// (entries, ours, lmdb) for each size both engines ran.
fn pairs(rows: &[LookupRow]) -> Vec<(u64, &LookupRow, &LookupRow)> {
    let mut out = Vec::new();
    for o in rows.iter().filter(|r| r.engine == OursEng::LABEL) {
        if let Some(l) = rows
            .iter()
            .find(|r| r.entries == o.entries && r.engine == LmdbE::LABEL && !ptr::eq(*r, o))
        {
            out.push((o.entries, o, l));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_parse_in_both_notations() {
        assert_eq!(parse_counts("1e7").unwrap(), vec![10_000_000]);
        assert_eq!(
            parse_counts("1e7,1e8").unwrap(),
            vec![10_000_000, 100_000_000]
        );
        assert_eq!(
            parse_counts("12e6, 50000000").unwrap(),
            vec![12_000_000, 50_000_000]
        );
        assert_eq!(parse_counts("2e4").unwrap(), vec![20_000]);
        for bad in ["", "1e7,", "x", "0", "1.5", "-3", "1e13", "nan"] {
            assert!(parse_counts(bad).is_err(), "{bad:?} accepted");
        }
    }
}
