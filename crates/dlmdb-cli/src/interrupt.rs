//! SIGINT (Ctrl-C) handling.
//!
//! Two modes:
//! - [`watch`]: the handler only sets [`INTERRUPTED`]; long loops (load,
//!   scan, check) poll it, undo their work and return an
//!   [`Kind::Interrupted`](crate::error::Kind) error (exit status 130).
//! - [`remove_on_interrupt`]: for commands whose work is one long engine
//!   call or a stream (copy, dump), the handler itself removes the partial
//!   output files (and directories this run created), says so on stderr and
//!   exits with status 130. It uses only async-signal-safe calls (`unlink`,
//!   `rmdir`, `write`, `_exit`) on paths prepared beforehand.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// Set by the SIGINT handler installed with [`watch`].
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether SIGINT arrived since [`watch`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

extern "C" fn set_flag(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
    crate::check::INTERRUPT.store(true, Ordering::Relaxed);
}

/// Install the flag-setting handler.
pub fn watch() {
    // SAFETY: the handler only stores to atomics (async-signal-safe).
    unsafe {
        libc::signal(
            libc::SIGINT,
            set_flag as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// Paths the removing handler deletes; leaked once installed (the handler
/// may run at any time until the process exits).
struct Cleanup {
    files: Vec<CString>,
    dirs: Vec<CString>,
    message: Vec<u8>,
}

static CLEANUP: AtomicPtr<Cleanup> = AtomicPtr::new(std::ptr::null_mut());

extern "C" fn remove_and_exit(_: libc::c_int) {
    let c = CLEANUP.load(Ordering::Acquire);
    // SAFETY: `c` is null or a leaked, never-freed `Cleanup`; only
    // async-signal-safe functions are called.
    unsafe {
        if let Some(c) = c.as_ref() {
            for f in &c.files {
                libc::unlink(f.as_ptr());
            }
            for d in &c.dirs {
                libc::rmdir(d.as_ptr());
            }
            libc::write(2, c.message.as_ptr().cast(), c.message.len());
        }
        libc::_exit(130);
    }
}

fn cstring(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap_or_default()
}

/// On SIGINT remove `files`, then the (empty) `dirs`, print
/// `dlmdb: interrupted: <what>` and exit with status 130.
pub fn remove_on_interrupt(files: &[&Path], dirs: &[&Path], what: &str) {
    let mut message = format!("dlmdb: interrupted: {what}").into_bytes();
    if !files.is_empty() {
        message.extend_from_slice(b"; partial output removed:");
        for f in files {
            message.push(b' ');
            message.extend_from_slice(f.as_os_str().as_bytes());
        }
    }
    message.push(b'\n');
    let c = Box::new(Cleanup {
        files: files.iter().map(|p| cstring(p)).collect(),
        dirs: dirs.iter().map(|p| cstring(p)).collect(),
        message,
    });
    CLEANUP.store(Box::into_raw(c), Ordering::Release);
    // SAFETY: see `remove_and_exit`.
    unsafe {
        libc::signal(
            libc::SIGINT,
            remove_and_exit as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// The output is complete: SIGINT no longer removes it (default action).
pub fn disarm() {
    // SAFETY: restoring the default disposition is always sound.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
}
