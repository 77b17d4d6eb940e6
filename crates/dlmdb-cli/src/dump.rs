//! `dlmdb dump`: LMDB's dump text format (lmdb-api.md §9.1), byte for byte
//! what `mdb_dump` writes, plus optional header lines for DLMDB's flags.

use crate::stat::{open_env, LayoutChoice};
use crate::util::{hex_encode_into, print_encode_into_with};
use anyhow::{bail, Context, Result};
use dlmdb::{CursorOp, Database, DatabaseFlags, EnvInfo, RoTxn};
use std::io::Write;
use std::path::PathBuf;

/// What to dump.
#[derive(Debug, Clone)]
pub struct DumpOptions {
    pub path: PathBuf,
    /// One named database (`-s`).
    pub subdb: Option<String>,
    /// Every named database (`-a`).
    pub all: bool,
    /// Only list the named databases (`-l`).
    pub list: bool,
    /// Printable format (`-p`).
    pub print: bool,
    /// Leave out the `counted=1` / `prefix_compression=1` lines, so the
    /// output is exactly what a stock tool writes.
    pub stock: bool,
    /// `-p` without doubling backslashes, as Debian's `mdb_dump` 0.9.24.
    pub legacy_print: bool,
    pub layout: LayoutChoice,
}

/// Stock flag lines, in the order `mdb_dump` writes them.
const STOCK_FLAGS: [(DatabaseFlags, &str); 6] = [
    (DatabaseFlags::REVERSE_KEY, "reversekey"),
    (DatabaseFlags::DUP_SORT, "dupsort"),
    (DatabaseFlags::INTEGER_KEY, "integerkey"),
    (DatabaseFlags::DUP_FIXED, "dupfixed"),
    (DatabaseFlags::INTEGER_DUP, "integerdup"),
    (DatabaseFlags::REVERSE_DUP, "reversedup"),
];

/// DLMDB flag lines this tool adds (after the stock ones, before
/// `db_pagesize=`). Stock `mdb_load` warns about unknown keywords and goes on.
pub const EXTRA_FLAGS: [(DatabaseFlags, &str); 2] = [
    (DatabaseFlags::COUNTED, "counted"),
    (DatabaseFlags::PREFIX_COMPRESSION, "prefix_compression"),
];

/// Summary of a dump (for `--json`, printed to stderr).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DumpSummary {
    /// Databases written: name (`null` = main) and number of records.
    pub databases: Vec<DumpedDb>,
    /// Bytes of dump text written.
    pub bytes: u64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct DumpedDb {
    pub name: Option<String>,
    pub records: u64,
}

/// Counts bytes passing through to the real writer.
struct Counting<W> {
    inner: W,
    n: u64,
}
impl<W: Write> Write for Counting<W> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(b)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Write the dump to `out`.
pub fn dump(opts: &DumpOptions, out: &mut dyn Write) -> Result<DumpSummary> {
    let opened = open_env(&opts.path, opts.layout)?;
    for w in &opened.warnings {
        eprintln!("dlmdb: warning: {w}");
    }
    let env = opened.env;
    let info = env.info()?;
    let txn = env.read_txn()?;
    let mut out = Counting {
        inner: std::io::BufWriter::with_capacity(1 << 20, out),
        n: 0,
    };
    let mut summary = DumpSummary::default();
    let path = opts.path.display();
    if opts.all || opts.list {
        let main = txn.open_db(None)?;
        // Stock rule: a main DB without any NUL-free key has no named databases.
        let mut any_plain_key = false;
        for item in txn.cursor(main)?.iter() {
            let (k, _) = item.with_context(|| format!("{path}: reading the main database"))?;
            if !k.contains(&0) {
                any_plain_key = true;
                break;
            }
        }
        if !any_plain_key {
            bail!("{path} does not contain multiple databases");
        }
        let names = txn
            .db_names()
            .with_context(|| format!("{path}: listing named databases"))?;
        for name in names {
            if opts.list {
                out.write_all(name.as_bytes())?;
                out.write_all(b"\n")?;
                continue;
            }
            let db = txn
                .open_db(Some(&name))
                .with_context(|| format!("{path}: cannot open database {name:?}"))?;
            let n = dump_db(&txn, db, Some(&name), &info, opts, &mut out)
                .with_context(|| format!("{path}: database {name:?}"))?;
            summary.databases.push(DumpedDb {
                name: Some(name),
                records: n,
            });
        }
    } else {
        let name = opts.subdb.as_deref();
        let db = txn.open_db(name).with_context(|| match name {
            Some(n) => format!("{path}: cannot open database {n:?}"),
            None => format!("{path}: cannot open the main database"),
        })?;
        let n = dump_db(&txn, db, name, &info, opts, &mut out).with_context(|| match name {
            Some(n) => format!("{path}: database {n:?}"),
            None => format!("{path}: main database"),
        })?;
        summary.databases.push(DumpedDb {
            name: name.map(str::to_owned),
            records: n,
        });
    }
    out.flush()?;
    summary.bytes = out.n;
    Ok(summary)
}

/// One database block; returns the number of records.
fn dump_db(
    txn: &RoTxn<'_>,
    db: Database,
    name: Option<&str>,
    info: &EnvInfo,
    opts: &DumpOptions,
    out: &mut dyn Write,
) -> Result<u64> {
    let flags = txn.db_flags(db)?;
    let stat = txn.stat(db)?;
    let mut head = String::with_capacity(256);
    head.push_str("VERSION=3\n");
    head.push_str(if opts.print {
        "format=print\n"
    } else {
        "format=bytevalue\n"
    });
    if let Some(n) = name {
        head.push_str("database=");
        head.push_str(n);
        head.push('\n');
    }
    head.push_str("type=btree\n");
    head.push_str(&format!("mapsize={}\n", info.map_size));
    if info.map_addr != 0 {
        head.push_str(&format!("mapaddr={:#x}\n", info.map_addr));
    }
    head.push_str(&format!("maxreaders={}\n", info.max_readers));
    if flags.contains(DatabaseFlags::DUP_SORT) {
        head.push_str("duplicates=1\n");
    }
    for (f, n) in STOCK_FLAGS {
        if flags.contains(f) {
            head.push_str(n);
            head.push_str("=1\n");
        }
    }
    if !opts.stock {
        for (f, n) in EXTRA_FLAGS {
            if flags.contains(f) {
                head.push_str(n);
                head.push_str("=1\n");
            }
        }
    }
    head.push_str(&format!("db_pagesize={}\nHEADER=END\n", stat.page_size));
    out.write_all(head.as_bytes())?;

    let mut line = Vec::with_capacity(4096);
    let mut n = 0u64;
    let mut cur = txn.cursor(db)?;
    // Lending reads: zero-copy even for prefix-compressed keys, each line
    // is written before the cursor moves on.
    let mut op = CursorOp::First;
    while let Some((k, v)) = cur.get_ref(None, None, op)? {
        op = CursorOp::Next;
        line.clear();
        for part in [k, v] {
            line.push(b' ');
            if opts.print {
                print_encode_into_with(&mut line, part, !opts.legacy_print);
            } else {
                hex_encode_into(&mut line, part);
            }
            line.push(b'\n');
        }
        out.write_all(&line)?;
        n += 1;
    }
    out.write_all(b"DATA=END\n")?;
    Ok(n)
}
