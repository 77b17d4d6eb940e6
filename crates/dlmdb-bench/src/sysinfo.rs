//! Machine facts recorded with every report (Linux /proc; "?" elsewhere).

use std::path::Path;

fn read(p: &str) -> Option<String> {
    std::fs::read_to_string(p).ok()
}

pub fn cpu_model() -> String {
    read("/proc/cpuinfo")
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "?".into())
}

pub fn kernel() -> String {
    read("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "?".into())
}

/// The first three fields of /proc/loadavg.
pub fn loadavg() -> String {
    read("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "?".into())
}

/// Filesystem type of the mount holding `path` (longest mount-point prefix
/// in /proc/mounts).
pub fn fs_type(path: &Path) -> Option<String> {
    let path = path.canonicalize().ok()?;
    let mounts = read("/proc/mounts")?;
    let mut best: Option<(usize, String)> = None;
    for line in mounts.lines() {
        let mut f = line.split_whitespace();
        let (Some(_dev), Some(mnt), Some(ty)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if path.starts_with(mnt) && !matches!(&best, Some((len, _)) if mnt.len() <= *len) {
            best = Some((mnt.len(), ty.to_string()));
        }
    }
    best.map(|(_, t)| t)
}

/// `MemAvailable` from /proc/meminfo, bytes.
pub fn mem_available() -> Option<u64> {
    let s = read("/proc/meminfo")?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
