//! The undo file of a load into an existing store.
//!
//! A load into an existing store runs in one write transaction. Before the
//! commit, the engine writes pages of that transaction into the data file
//! when its dirty set passes its limit (spilling), and a commit that fails
//! may have written some of its pages. Pages past the old end of the file
//! are cut off by truncating it back; pages inside the old length can only
//! be pages the transaction was allowed to reuse:
//!
//! - the pages listed in the free-page database (a writer reuses those
//!   freed before the oldest snapshot; all of them are saved);
//! - pages past the last page of the committed meta but inside the file
//!   (a file left longer than its meta says, e.g. by an earlier aborted
//!   writer), which the transaction allocates as new pages.
//!
//! Loose pages (pages the transaction allocated and freed again) come from
//! those two sets; pages of the committed tree are never written (copy on
//! write: freeing them only lists them for a later transaction). The two
//! meta pages are written only by the commit's last step, after which the
//! commit has taken place; see [`Undo::restore`] for a commit that fails
//! there.
//!
//! So, right after the load's write transaction begins (the writer lock is
//! held, nothing written yet), the bytes of those pages are copied to a
//! scratch file beside the data file, streamed in 1 MiB pieces. After a
//! failure, each saved page whose bytes changed is written back and the
//! file is cut to its old length; the scratch file is removed on every
//! exit path (the [`Drop`] of [`Undo`]), SIGINT included (the load's
//! handler only sets a flag that the load polls). A load killed outright
//! (SIGKILL, a crash) cannot restore anything: its pages stay in free
//! space and past the meta's last page, reachable by no meta, and its
//! undo file stays until the next load of the store removes it.

use crate::error::{fail, Kind};
use anyhow::{Context, Result};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Bytes copied per read/write.
const PIECE: u64 = 1 << 20;

/// Saved bytes of the pages a load's transaction may overwrite.
pub(super) struct Undo {
    /// The scratch file holding the saved bytes, range after range.
    path: PathBuf,
    data_file: PathBuf,
    /// The data file's length before the load.
    len: u64,
    psize: u64,
    /// Saved byte ranges of the data file, `(offset, length)`, ascending and
    /// disjoint.
    ranges: Vec<(u64, u64)>,
    /// The two meta pages as they were.
    metas: Vec<u8>,
}

/// The directory of `data_file` and the undo files' name prefix
/// `.NAME.dlmdb-load-undo-` (the process id follows).
fn undo_prefix(data_file: &Path) -> (PathBuf, String) {
    super::hidden_beside(data_file, "dlmdb-load-undo")
}

/// `.NAME.dlmdb-load-undo-PID` beside the data file.
fn undo_path(data_file: &Path) -> PathBuf {
    let (dir, prefix) = undo_prefix(data_file);
    dir.join(format!("{prefix}{}", std::process::id()))
}

/// Remove the undo files of loads of `data_file` whose process is gone
/// (killed with SIGKILL, say). Called under the writer lock, when no other
/// load of this store is between its save and its end.
fn remove_stale(data_file: &Path) {
    let (dir, prefix) = undo_prefix(data_file);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|p| p.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only checks that the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Byte ranges of the pages `pages` (any order) and of the pages from
/// `first_new` up to the end of the file, clipped to `len`, ascending and
/// merged.
fn ranges_of(mut pages: Vec<u64>, first_new: u64, len: u64, psize: u64) -> Vec<(u64, u64)> {
    pages.sort_unstable();
    pages.dedup();
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut add = |off: u64, end: u64| {
        let end = end.min(len);
        if off >= end {
            return;
        }
        match out.last_mut() {
            Some((o, l)) if *o + *l >= off => *l = (*l).max(end - *o),
            _ => out.push((off, end - off)),
        }
    };
    for p in pages {
        if p < first_new {
            add(p * psize, (p + 1) * psize);
        }
    }
    add(first_new * psize, len);
    out
}

impl Undo {
    /// Save the pages the write transaction `txn_id` of `env` may overwrite
    /// inside the data file. Call it after the transaction began and
    /// before its first write. Errors name the scratch file and say that
    /// nothing was written (the caller aborts the transaction).
    pub(super) fn save(env: &dlmdb::Env, txn_id: u64, data_file: &Path) -> Result<Undo> {
        let psize = u64::from(env.stat()?.page_size);
        // The free-page database opens only in a read transaction; this
        // thread holds the writer lock, so a reader in another thread sees
        // exactly the snapshot the write transaction starts from.
        let (snapshot, pages, last_pgno) = std::thread::scope(|s| {
            s.spawn(|| -> Result<(u64, Vec<u64>, u64)> {
                let r = env.read_txn()?;
                let pages = r.freelist()?.into_iter().flat_map(|f| f.pages).collect();
                Ok((r.id(), pages, env.info()?.last_pgno))
            })
            .join()
            .map_err(|_| anyhow::anyhow!("reading the free-page list failed"))?
        })
        .context("cannot read the free-page list")?;
        if snapshot + 1 != txn_id {
            anyhow::bail!(
                "the free-page list read (txn {snapshot}) is not the base of the load's transaction (txn {txn_id})"
            );
        }
        let len = std::fs::metadata(data_file)
            .with_context(|| format!("cannot stat {}", data_file.display()))?
            .len();
        remove_stale(data_file);
        let path = undo_path(data_file);
        let mut undo = Undo {
            path,
            data_file: data_file.to_path_buf(),
            len,
            psize,
            ranges: ranges_of(pages, last_pgno + 1, len, psize),
            metas: Vec::new(),
        };
        undo.write().map_err(|e| {
            fail(
                Kind::Io,
                format!(
                    "cannot write the undo file {}: {e:#}; nothing was written",
                    undo.path.display()
                ),
            )
        })?;
        Ok(undo)
    }

    /// Copy the metas (kept in memory) and the ranges (into the scratch file).
    fn write(&mut self) -> Result<()> {
        let data = File::open(&self.data_file)?;
        self.metas = vec![0; (2 * self.psize).min(self.len) as usize];
        data.read_exact_at(&mut self.metas, 0)?;
        let _ = std::fs::remove_file(&self.path);
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&self.path)?;
        let mut buf = vec![0u8; PIECE as usize];
        for &(off, n) in &self.ranges {
            let mut done = 0;
            while done < n {
                if crate::interrupt::interrupted() {
                    anyhow::bail!("interrupted");
                }
                let k = (n - done).min(PIECE) as usize;
                data.read_exact_at(&mut buf[..k], off + done)?;
                out.write_all(&buf[..k])?;
                done += k as u64;
            }
        }
        out.flush()?;
        Ok(())
    }

    /// After a failed load: under the writer lock (a fresh handle; the
    /// load's transaction has ended), write back each saved page whose
    /// bytes changed, cut the file to its old length and sync it. This is
    /// done only while both meta pages still hold their bytes from before
    /// the load: then no transaction has committed since (every commit
    /// rewrites a meta page), so the saved pages are still free and no
    /// reader looks at them. Otherwise (another writer committed in
    /// between, or the failed commit's meta write itself reached the file)
    /// nothing is touched and a warning says so.
    pub(super) fn restore(&self, opts: &super::LoadOptions) {
        if let Err(e) = self.restore_locked(opts) {
            eprintln!(
                "dlmdb: warning: {}: the pages the failed load may have written were not restored: {e:#}",
                self.data_file.display()
            );
        }
    }

    fn restore_locked(&self, opts: &super::LoadOptions) -> Result<()> {
        let env = crate::store::open_rw(&opts.path, opts.layout, 2)?;
        let txn = env.write_txn()?;
        let data = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.data_file)?;
        let mut metas = vec![0; self.metas.len()];
        data.read_exact_at(&mut metas, 0)?;
        if metas != self.metas {
            anyhow::bail!("its meta pages changed (a commit took place)");
        }
        let mut saved = std::io::BufReader::with_capacity(PIECE as usize, File::open(&self.path)?);
        let mut was = vec![0u8; PIECE as usize];
        let mut now = vec![0u8; PIECE as usize];
        let grown = data.metadata()?.len();
        for &(off, n) in &self.ranges {
            let mut done = 0;
            while done < n {
                let k = (n - done).min(PIECE) as usize;
                saved.read_exact(&mut was[..k])?;
                let at = off + done;
                // The file only grows; should it be shorter, the piece is
                // written back whole.
                let have = grown.saturating_sub(at).min(k as u64) as usize;
                if have < k {
                    data.write_all_at(&was[..k], at)?;
                    done += k as u64;
                    continue;
                }
                data.read_exact_at(&mut now[..k], at)?;
                for (i, (w, c)) in was[..k]
                    .chunks(self.psize as usize)
                    .zip(now[..k].chunks(self.psize as usize))
                    .enumerate()
                {
                    if w != c {
                        data.write_all_at(w, at + (i as u64) * self.psize)?;
                    }
                }
                done += k as u64;
            }
        }
        if data.metadata()?.len() != self.len {
            data.set_len(self.len)?;
        }
        data.sync_data()?;
        txn.abort();
        Ok(())
    }
}

impl Drop for Undo {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::ranges_of;

    #[test]
    fn ranges_merge_runs_and_the_tail() {
        // Pages 3,4 and 7 free; pages from 9 on are past the meta's last
        // page; the file ends halfway through page 10.
        let r = ranges_of(vec![7, 3, 4, 3], 9, 10 * 16 + 8, 16);
        assert_eq!(r, vec![(48, 32), (112, 16), (144, 24)]);
        // Page 8 joins the tail.
        let r = ranges_of(vec![8], 9, 160, 16);
        assert_eq!(r, vec![(128, 32)]);
        assert!(ranges_of(vec![], 4, 64, 16).is_empty());
    }
}
