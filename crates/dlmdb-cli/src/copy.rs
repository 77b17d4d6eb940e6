//! `dlmdb copy`: a consistent copy of a store (`mdb_env_copy2`), to a new
//! directory or file, or to standard output. SIGINT or a failure removes the
//! partial output (and a directory this run created).

use crate::error::{fail, Kind};
use crate::stat::{open_env, LayoutChoice};
use anyhow::{Context, Result};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Consistent copy of an environment (mdb_env_copy2), also while writers run.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  dlmdb copy ./db ./backup\n  dlmdb copy --compact ./db/data.mdb ./small.mdb\n  dlmdb copy -c ./db | gzip > backup.mdb.gz   # data file to standard output"
)]
pub struct CopyArgs {
    /// Source environment directory or data file.
    pub src: PathBuf,
    /// Destination: a directory (created if missing) for a directory source, a file path for a
    /// file source; `-` or none writes the data file to standard output (like mdb_copy).
    pub dst: Option<PathBuf>,
    /// Omit free pages and renumber (MDB_CP_COMPACT).
    #[arg(short = 'c', long)]
    pub compact: bool,
    /// Accepted for mdb_copy compatibility (a data file path implies it).
    #[arg(short = 'n', hide = true)]
    pub _nosubdir: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    /// Print a JSON summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
pub struct CopyReport {
    pub path: String,
    pub destination: String,
    pub layout: String,
    pub compact: bool,
    pub page_size: u64,
    /// Size of the copied data file in bytes.
    pub bytes: u64,
}

pub fn run(a: CopyArgs, layout: LayoutChoice) -> Result<()> {
    let facts = crate::store::precheck_complete(&a.src)?;
    let opened = open_env(&a.src, layout)?;
    let Some(dst) = a.dst.filter(|d| d.as_os_str() != "-") else {
        if a.json {
            return Err(fail(
                Kind::Usage,
                "--json cannot be used when the copy goes to standard output",
            ));
        }
        let out = std::io::stdout();
        if out.is_terminal() {
            return Err(fail(
                Kind::Refused,
                "refusing to write a data file to a terminal: give a destination or redirect",
            ));
        }
        crate::interrupt::remove_on_interrupt(&[], &[], "copy stopped; the output is incomplete");
        use std::os::fd::AsFd;
        return opened
            .env
            .copy_to_fd(out.as_fd(), a.compact)
            .context("copying to standard output failed");
    };
    let dst = &dst;
    let mut created_dir = None;
    let dst_file = if opened.no_subdir {
        if dst.exists() {
            return Err(fail(
                Kind::Refused,
                format!("{} already exists", dst.display()),
            ));
        }
        dst.clone()
    } else {
        if !dst.exists() {
            std::fs::create_dir_all(dst)
                .with_context(|| format!("cannot create directory {}", dst.display()))?;
            created_dir = Some(dst.clone());
        }
        let f = dst.join("data.mdb");
        if f.exists() {
            return Err(fail(
                Kind::Refused,
                format!("{} already exists", f.display()),
            ));
        }
        f
    };
    let dirs: Vec<&Path> = created_dir.iter().map(PathBuf::as_path).collect();
    crate::interrupt::remove_on_interrupt(&[dst_file.as_path()], &dirs, "copy stopped");
    let expected = (facts.last_pgno + 1) * facts.page_size;
    let watcher = watch_progress(&dst_file, expected, a.quiet || a.json);
    let r = opened
        .env
        .copy(dst, a.compact)
        .with_context(|| format!("copying to {} failed", dst.display()));
    if let Some((stop, handle)) = watcher {
        stop.store(true, Ordering::Relaxed);
        let _ = handle.join();
    }
    if let Err(e) = r {
        // Only what this run created is removed; EEXIST means the file was
        // someone else's.
        let theirs = e.chain().any(|c| {
            c.downcast_ref::<dlmdb::Error>()
                .is_some_and(|d| d.code() == libc::EEXIST)
        });
        if !theirs {
            let _ = std::fs::remove_file(&dst_file);
        }
        if let Some(d) = &created_dir {
            let _ = std::fs::remove_dir(d);
        }
        crate::interrupt::disarm();
        return Err(e);
    }
    crate::interrupt::disarm();
    let bytes = std::fs::metadata(&dst_file).map(|m| m.len()).unwrap_or(0);
    if a.json {
        let rep = CopyReport {
            path: a.src.display().to_string(),
            destination: dst.display().to_string(),
            layout: opened.env.layout().to_string(),
            compact: a.compact,
            page_size: facts.page_size,
            bytes,
        };
        println!("{}", crate::report::to_json("copy", &rep)?);
    }
    Ok(())
}

type Watcher = (Arc<AtomicBool>, std::thread::JoinHandle<()>);

/// A thread that shows the destination file's growth against the source
/// size (a compacting copy ends early); terminal and large copies only.
fn watch_progress(dst_file: &Path, expected: u64, quiet: bool) -> Option<Watcher> {
    let bar = crate::progress::bar(
        expected,
        64 << 20,
        quiet,
        "copying {bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    )?;
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, file) = (stop.clone(), dst_file.to_path_buf());
    let handle = std::thread::spawn(move || {
        while !flag.load(Ordering::Relaxed) {
            if let Ok(m) = std::fs::metadata(&file) {
                bar.set_position(m.len().min(expected));
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        bar.finish_and_clear();
    });
    Some((stop, handle))
}
