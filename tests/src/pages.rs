//! Stores with the pages of other machines.
//!
//! LMDB-family engines give a new store the system's page size (capped at
//! 32 KiB) and read an existing store's from its meta page. A store made on
//! Apple silicon has 16 KiB pages, one made on an ARM64 kernel with 64 KiB
//! pages has 32 KiB ones, and either may be copied to a 4 KiB machine.
//! `vendor/dlmdb/fuzz/pageshim.c`, preloaded, makes a program here report
//! another system page size, so stock LMDB's tools, our binaries and whole
//! test programs can run as on those machines.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// System page sizes of the machines the tests imitate: Apple silicon, and
/// ARM64 kernels built with 64 KiB pages.
pub const OTHER_MACHINES: [u32; 2] = [16384, 65536];

/// The variable the shim reads.
pub const SHIM_VAR: &str = "DLMDB_SHIM_PAGE_SIZE";

/// The page size an engine gives a new store on a machine whose pages are
/// `system` bytes: at least 4 KiB, at most 32 KiB (stock LMDB's cap, which
/// ours follows).
pub fn store_page_size(system: u64) -> u32 {
    system.clamp(4096, 32768) as u32
}

/// The page size new stores get in this process. Under the shim, it also
/// asserts that the shim is in effect, so that a run meant to imitate
/// another machine cannot pass on this one's pages.
pub fn new_store_page_size() -> u32 {
    // SAFETY: sysconf has no preconditions.
    let system = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if let Some(want) = imitated() {
        assert_eq!(
            system, want as libc::c_long,
            "the page-size shim is not in effect"
        );
    }
    store_page_size(system.max(0) as u64)
}

/// The system page size this process imitates, when it runs under the shim.
pub fn imitated() -> Option<u32> {
    std::env::var(SHIM_VAR).ok()?.parse().ok()
}

/// The shim, compiled once per process beside the test binary with the
/// system's C compiler (`$CC`, else `cc`). `None`, with a SKIP note, where
/// no compiler runs; in CI (`CI=true`) that is a failure.
pub fn shim() -> Option<&'static Path> {
    static SHIM: OnceLock<Option<PathBuf>> = OnceLock::new();
    SHIM.get_or_init(build_shim).as_deref()
}

fn build_shim() -> Option<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vendor/dlmdb/fuzz/pageshim.c");
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().expect("test binary directory");
    let out = dir.join("pageshim.so");
    // Built under a name of its own and renamed into place, so test
    // processes that build it at once never load a half-written file.
    let tmp = dir.join(format!("pageshim.so.{}", std::process::id()));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&cc)
        .args(["-O2", "-fPIC", "-shared", "-o"])
        .arg(&tmp)
        .arg(&src)
        .arg("-ldl")
        .output();
    match built {
        Ok(o) if o.status.success() => {
            std::fs::rename(&tmp, &out).expect("rename the built shim into place");
            Some(out)
        }
        other => {
            let why = match other {
                Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
                Err(e) => e.to_string(),
            };
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI must build the page-size shim with {cc}: {why}"
            );
            crate::skip_note(&format!(
                "no C compiler ({cc}: {why}): stores with other machines' pages not tested"
            ));
            None
        }
    }
}

/// Make `cmd` run as on a machine whose system pages are `system` bytes.
/// False (nothing set) when there is no shim.
pub fn as_on_machine(cmd: &mut Command, system: u32) -> bool {
    let Some(shim) = shim() else { return false };
    cmd.env("LD_PRELOAD", shim)
        .env(SHIM_VAR, system.to_string());
    true
}

/// Run the named tests of this test binary again, each alone, as on each of
/// [`OTHER_MACHINES`]; panics with a run's output when it fails. Does
/// nothing in a run that already imitates a machine.
pub fn rerun_as_on_other_machines(tests: &[&str]) {
    if imitated().is_some() {
        return;
    }
    let exe = std::env::current_exe().expect("test binary path");
    for system in OTHER_MACHINES {
        let mut cmd = Command::new(&exe);
        cmd.args(tests)
            .args(["--exact", "--test-threads", "1", "--nocapture"]);
        if !as_on_machine(&mut cmd, system) {
            return;
        }
        let out = cmd.output().expect("rerun the test binary");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{tests:?} as on a machine with {system}-byte pages:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Every test named must have run: a renamed test would else pass
        // here by running nothing.
        let want = format!("test result: ok. {} passed", tests.len());
        assert!(
            stdout.contains(&want),
            "{tests:?} as on a machine with {system}-byte pages: expected \"{want}\":\n{stdout}"
        );
    }
}
