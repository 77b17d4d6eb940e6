//! Facts every command checks before opening a store: the path exists, the
//! data file carries the meta magic, and the file is long enough for the
//! pages its meta page references (a truncated file would otherwise be
//! read past its end). Reads the two meta pages with plain reads, decoded
//! by `dlmdb_format::Meta`.

use crate::error::{fail, Kind};
use anyhow::Result;
use std::io::Read;
use std::path::{Path, PathBuf};

use dlmdb_format::meta::{page_size_ok, Meta, META_SIZE};

/// What the current meta page says, and how long the file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaFacts {
    pub page_size: u64,
    pub data_version: u32,
    pub txnid: u64,
    pub last_pgno: u64,
    /// Pages in the file (length / page size, rounded down).
    pub file_pages: u64,
    pub main_root: u64,
    pub free_root: u64,
    /// Branch + leaf + overflow pages of the main and free-list trees.
    pub counted_pages: u64,
}

/// Page number of an empty tree's root.
const NO_ROOT: u64 = dlmdb_format::P_INVALID;

impl MetaFacts {
    /// Why the file is too short for this meta, if it is. A file may
    /// legitimately end before `last_pgno` when the missing pages are free
    /// ones, which nothing reads, so only pages that are certainly in use
    /// count: the roots of the main and free-list trees, and the pages those
    /// two trees' records count. The named databases' pages are not counted:
    /// finding them means reading their records, which this check avoids.
    pub fn truncation(&self) -> Option<String> {
        let beyond = |root: u64| root != NO_ROOT && root >= self.file_pages;
        if beyond(self.main_root)
            || beyond(self.free_root)
            || 2 + self.counted_pages > self.file_pages
        {
            Some(format!(
                "data file truncated: it has {} pages, the meta page (txnid {}) says the store uses {}",
                self.file_pages,
                self.txnid,
                self.last_pgno + 1
            ))
        } else {
            None
        }
    }
}

impl MetaFacts {
    /// A warning for a file shorter than the meta's last page: the certain
    /// truncation of [`truncation`](Self::truncation), else a note that the
    /// missing pages must all be free ones.
    pub fn shortfall(&self) -> Option<String> {
        if let Some(t) = self.truncation() {
            return Some(t);
        }
        (self.file_pages < self.last_pgno + 1).then(|| {
            format!(
                "data file has {} pages, fewer than the {} the meta page (txnid {}) counts; a store is sound only if the missing pages are free ones (`dlmdb check` tells)",
                self.file_pages,
                self.last_pgno + 1,
                self.txnid
            )
        })
    }
}

/// The data file of PATH: PATH itself when it is a file, else PATH/data.mdb.
pub fn data_file_of(path: &Path) -> PathBuf {
    if path.is_file() {
        path.to_path_buf()
    } else {
        path.join("data.mdb")
    }
}

/// Read the current meta of `data_file`; `Ok(None)` when the file is not an
/// LMDB/DLMDB data file.
pub fn read_meta(data_file: &Path) -> std::io::Result<Option<MetaFacts>> {
    let mut f = std::fs::File::open(data_file)?;
    let len = f.metadata()?.len();
    let mut head = vec![0u8; META_SIZE];
    if len < META_SIZE as u64 {
        return Ok(None);
    }
    f.read_exact(&mut head)?;
    let Some(m0) = Meta::decode(&head) else {
        return Ok(None);
    };
    let psize = u64::from(m0.page_size());
    if !page_size_ok(psize as usize) {
        return Ok(None);
    }
    let mut current = m0;
    if len >= psize + META_SIZE as u64 {
        use std::io::{Seek, SeekFrom};
        f.seek(SeekFrom::Start(psize))?;
        f.read_exact(&mut head)?;
        if let Some(m1) = Meta::decode(&head) {
            if m1.txnid > m0.txnid && u64::from(m1.page_size()) == psize {
                current = m1;
            }
        }
    }
    Ok(Some(MetaFacts {
        page_size: psize,
        data_version: current.version,
        txnid: current.txnid,
        last_pgno: current.last_pg,
        file_pages: len / psize,
        main_root: current.main.root,
        free_root: current.free.root,
        counted_pages: current.main.pages().saturating_add(current.free.pages()),
    }))
}

/// Check that PATH is a store: exists, and its data file has a valid meta.
/// Returns the meta facts (callers decide what a truncated file means).
pub fn precheck(path: &Path) -> Result<MetaFacts> {
    if !path.exists() {
        return Err(fail(Kind::NotFound, "no such file or directory"));
    }
    let data_file = data_file_of(path);
    let not_a_store = || {
        fail(
            Kind::NotAStore,
            format!(
                "{} is not an LMDB/DLMDB data file (no valid meta page)",
                data_file.display()
            ),
        )
    };
    match read_meta(&data_file) {
        Ok(Some(m)) => Ok(m),
        Ok(None) => Err(match dlmdb::unsupported_format_note(&data_file) {
            Some(note) => fail(Kind::NotAStore, note),
            None => not_a_store(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && path.is_dir() => Err(fail(
            Kind::NotAStore,
            format!("{} holds no data.mdb", path.display()),
        )),
        Err(e) => {
            Err(anyhow::Error::new(e).context(format!("cannot read {}", data_file.display())))
        }
    }
}

/// As [`precheck`], and refuse a truncated file (commands that read pages).
pub fn precheck_complete(path: &Path) -> Result<MetaFacts> {
    let m = precheck(path)?;
    if let Some(why) = m.truncation() {
        return Err(fail(
            Kind::Truncated,
            format!("{}: {why}", data_file_of(path).display()),
        ));
    }
    Ok(m)
}

/// Open an existing store for writing, in its layout (version-1 stores:
/// DLMDB's padded layout when `choice` says so or the probe proves it).
pub fn open_rw(path: &Path, choice: crate::stat::LayoutChoice, max_dbs: u32) -> Result<dlmdb::Env> {
    use crate::stat::LayoutChoice;
    use dlmdb::{EnvFlags, Layout, ProbeVerdict};
    let data_file = data_file_of(path);
    let mut flags = if path.is_file() {
        EnvFlags::NO_SUB_DIR
    } else {
        EnvFlags::empty()
    };
    match dlmdb::read_data_version(&data_file) {
        Some(2) => {}
        Some(1) => {
            let padded = match choice {
                LayoutChoice::Dlmdb => true,
                LayoutChoice::Lmdb => false,
                LayoutChoice::Auto => matches!(
                    dlmdb::probe_layout(&data_file).map(|p| p.verdict()),
                    Ok(ProbeVerdict::Proven(Layout::DlmdbV1))
                ),
            };
            if padded {
                flags |= EnvFlags::FORMAT_DLMDB_V1;
            }
        }
        _ => return Err(not_a_store(&data_file)),
    }
    use anyhow::Context;
    dlmdb::Env::builder()
        .flags(flags)
        .max_dbs(max_dbs)
        .open(path)
        .context("cannot open the store for writing")
}

/// The error for a data file whose data version is neither 1 nor 2.
pub fn not_a_store(data_file: &Path) -> anyhow::Error {
    fail(
        Kind::NotAStore,
        format!("{} is not an LMDB/DLMDB data file", data_file.display()),
    )
}
