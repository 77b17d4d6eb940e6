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

use std::sync::atomic::{AtomicI32, Ordering};
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
}
