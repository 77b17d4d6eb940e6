//! What a timed region measures: wall-clock nanoseconds (default) or, with
//! `--measure instructions`, user-space instructions retired by this
//! process, counted by the CPU through `perf_event_open(2)`.
//!
//! Instruction counts barely move with machine load, so on a shared CI
//! runner they can gate changes of a few percent that wall time cannot.
//! They do not see cache misses or I/O waits, so they complement wall time
//! rather than replace it. Threads created after the counter is opened are
//! counted once they exit (`inherit`); rows that time running threads stay
//! on wall time.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// -1: wall time; otherwise the perf event fd.
static COUNTER_FD: AtomicI32 = AtomicI32::new(-1);

fn epoch() -> Instant {
    static E: OnceLock<Instant> = OnceLock::new();
    *E.get_or_init(Instant::now)
}

/// True when timed regions count instructions.
pub fn instructions() -> bool {
    COUNTER_FD.load(Ordering::Relaxed) >= 0
}

// perf_event_attr: type at 0, size at 4, config at 8, the flag bits at 40.
const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
const PERF_ATTR_SIZE_VER5: u32 = 112;
const FLAG_INHERIT: u64 = 1 << 1;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

/// Switch timed regions to instruction counts. The error says why the
/// kernel refused (no PMU in a VM, `perf_event_paranoid` > 2, seccomp).
pub fn enable_instructions() -> Result<(), String> {
    if instructions() {
        return Ok(());
    }
    let mut attr = [0u64; 16];
    attr[0] = PERF_TYPE_HARDWARE as u64 | ((PERF_ATTR_SIZE_VER5 as u64) << 32);
    attr[1] = PERF_COUNT_HW_INSTRUCTIONS;
    attr[5] = FLAG_INHERIT | FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV;
    // SAFETY: attr is a zeroed perf_event_attr of at least `size` bytes;
    // pid 0 / cpu -1 = this process on any CPU, no group.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr.as_ptr(),
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into());
        return Err(format!(
            "--measure instructions: the kernel refused a hardware instruction counter ({e}; \
             kernel.perf_event_paranoid = {paranoid}). It needs a CPU performance counter \
             (often absent in VMs and containers) and perf_event_paranoid <= 2, or CAP_PERFMON. \
             Use --measure wall, or callgrind."
        ));
    }
    let fd = fd as i32;
    if read_counter(fd).is_none() {
        // SAFETY: fd was just opened by us.
        unsafe { libc::close(fd) };
        return Err("--measure instructions: the instruction counter cannot be read".into());
    }
    COUNTER_FD.store(fd, Ordering::Relaxed);
    Ok(())
}

fn read_counter(fd: i32) -> Option<u64> {
    let mut v = 0u64;
    // SAFETY: reads 8 bytes into v from a perf event fd.
    let n = unsafe { libc::read(fd, &mut v as *mut u64 as *mut libc::c_void, 8) };
    (n == 8).then_some(v)
}

/// A point in the current measure.
#[derive(Clone, Copy, Debug)]
pub struct Stamp(u64);

/// An amount in the current measure: nanoseconds or instructions.
#[derive(Clone, Copy, Debug)]
pub struct Units(u64);

impl Units {
    /// Nanoseconds (wall) or instructions (`--measure instructions`).
    pub fn as_nanos(self) -> u128 {
        self.0 as u128
    }
    /// Milliseconds, or millions of instructions.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
}

/// Microseconds per operation of `ops` operations that took `ms`
/// milliseconds (instructions per op / 1000 when counting instructions);
/// 0 when there were no operations.
pub fn us_per_op(ms: f64, ops: u64) -> f64 {
    if ops == 0 {
        0.0
    } else {
        ms * 1000.0 / ops as f64
    }
}

impl Stamp {
    #[inline]
    pub fn now() -> Stamp {
        let fd = COUNTER_FD.load(Ordering::Relaxed);
        if fd >= 0 {
            if let Some(v) = read_counter(fd) {
                return Stamp(v);
            }
        }
        Stamp(epoch().elapsed().as_nanos() as u64)
    }
    #[inline]
    pub fn elapsed(&self) -> Units {
        Units(Stamp::now().0.saturating_sub(self.0))
    }
}

/// How many stack depths [`at_stack_depth`] chooses from, 64 bytes apart:
/// together they cover every offset within a 4 KiB page.
pub const STACK_DEPTHS: u64 = 64;

/// Runs `f` with its stack frames `64 * (depth % STACK_DEPTHS)` bytes
/// deeper than they would otherwise be.
///
/// A load whose address matches a pending store's in the low 12 bits waits
/// for that store (4K aliasing). The driver's stack slots, written on every
/// operation, and an engine's cursor and environment fields, read on every
/// operation, keep the same low bits for a whole process: the kernel draws
/// the stack's offset within its page once, at exec. One run could thus be
/// slow for one engine in every round (our 10K-record scan 6-31% slower at
/// 5 of 128 stack offsets). Timing each sample at a depth of its own turns
/// that into round-to-round noise, which the median over rounds absorbs.
pub fn at_stack_depth<R>(depth: u64, f: &mut dyn FnMut() -> R) -> R {
    // The list of depths below has one entry for each.
    const _: () = assert!(STACK_DEPTHS == 64);
    macro_rules! depths {
        ($($k:literal)*) => {
            match depth % STACK_DEPTHS {
                $($k => below::<{ $k * 64 }, R>(f),)*
                _ => unreachable!("depth % STACK_DEPTHS < 64"),
            }
        };
    }
    depths!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28
        29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56
        57 58 59 60 61 62 63)
}

/// Runs `f` at the next depth of one fixed sequence for the whole process
/// ([`at_stack_depth`]), so that the samples of a run, whichever suite
/// takes them, each land at a depth of their own. Threads timed together
/// may draw at once; each gets a draw of its own.
pub fn at_next_stack_depth<R>(f: impl FnOnce() -> R) -> R {
    static DRAWS: AtomicU64 = AtomicU64::new(0);
    let mut state = DRAWS.fetch_add(1, Ordering::Relaxed);
    let depth = crate::data::splitmix64(&mut state);
    let mut f = Some(f);
    at_stack_depth(depth, &mut || (f.take().expect("called once"))())
}

/// Calls `f` below a frame holding `N` bytes that the optimiser cannot drop.
#[inline(never)]
fn below<const N: usize, R>(f: &mut dyn FnMut() -> R) -> R {
    let pad = [0u8; N];
    std::hint::black_box(&pad);
    let r = f();
    // Keep the frame alive across the call (no tail call).
    std::hint::black_box(&pad);
    r
}

#[cfg(test)]
mod tests {
    #[test]
    fn instruction_counter_counts_or_explains() {
        match super::enable_instructions() {
            Ok(()) => {
                let t = super::Stamp::now();
                let mut x = 0u64;
                for i in 0..100_000u64 {
                    x = std::hint::black_box(x.wrapping_add(i));
                }
                assert!(t.elapsed().as_nanos() >= 100_000, "{x}");
            }
            Err(e) => assert!(e.contains("perf_event_paranoid"), "{e}"),
        }
    }

    #[test]
    fn stack_depths_cover_a_page() {
        let mut at = |depth| {
            super::at_stack_depth(depth, &mut || {
                let local = 0u8;
                std::hint::black_box(&local) as *const u8 as usize
            })
        };
        let addrs: Vec<usize> = (0..super::STACK_DEPTHS + 1).map(&mut at).collect();
        // Each depth about 64 bytes below the one before (the compiler may
        // place a small pad a little differently), 4 KiB in all.
        for (k, w) in addrs.windows(2).take(63).enumerate() {
            assert!(
                (48..=80).contains(&(w[0] - w[1])),
                "depth {}: {addrs:?}",
                k + 1
            );
        }
        assert!(addrs[0] - addrs[63] >= 63 * 64 - 32, "{addrs:?}");
        // Depths wrap: the draw may be any u64.
        assert_eq!(addrs[64], addrs[0]);
    }

    #[test]
    fn successive_samples_draw_different_depths() {
        let addrs: std::collections::HashSet<usize> = (0..16)
            .map(|_| {
                super::at_next_stack_depth(|| {
                    let local = 0u8;
                    std::hint::black_box(&local) as *const u8 as usize
                })
            })
            .collect();
        // 16 draws among 64 depths: all in one place would mean no draw.
        assert!(
            addrs.len() >= 8,
            "{} distinct depths in 16 draws",
            addrs.len()
        );
    }

    #[test]
    fn threads_draw_depths_at_once() {
        // Threads timed together (the mixed readers/writer row) share the
        // one sequence: each must get its closure's value back and still
        // move between depths.
        let per_thread: Vec<(u64, usize)> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4u64)
                .map(|t| {
                    s.spawn(move || {
                        let mut sum = 0u64;
                        let mut addrs = std::collections::HashSet::new();
                        for i in 0..16u64 {
                            let (v, a) = super::at_next_stack_depth(|| {
                                let local = 0u8;
                                let a = std::hint::black_box(&local) as *const u8 as usize;
                                (t * 100 + i, a)
                            });
                            sum += v;
                            addrs.insert(a);
                        }
                        (sum, addrs.len())
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().expect("no panic"))
                .collect()
        });
        for (t, &(sum, depths)) in per_thread.iter().enumerate() {
            assert_eq!(sum, t as u64 * 1600 + 120, "thread {t}");
            assert!(
                depths >= 8,
                "thread {t}: {depths} distinct depths in 16 draws"
            );
        }
    }
}
