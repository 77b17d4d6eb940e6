//! `dlmdb load`: read LMDB's dump text format (lmdb-api.md §9.2) or plain
//! text (`-T`) into a store.
//!
//! Strategy (all or nothing): the whole input is parsed and validated in
//! memory first (syntax, header keywords, key sizes, duplicates where the
//! database does not allow them, flags the target format cannot hold,
//! integer items of one size per database, no REVERSEKEY on a non-empty
//! main database), before the store is even opened; then every database of
//! the input is written in **one** write transaction, which is aborted on
//! any engine error or SIGINT. (Stock `mdb_load` commits every 100 records
//! and can leave half a database behind.)
//!
//! - A new store is built under a temporary name beside PATH and renamed
//!   into place only after its commit: a failure or Ctrl-C leaves nothing.
//! - An existing store keeps its data file byte for byte: nothing reaches
//!   the file before the commit, and a commit that fails part-way (ENOSPC)
//!   after growing the file is undone by truncating the file back to its
//!   length before the load, under the writer lock.
//!
//! The price: the input must fit in memory and the map must hold the whole
//! load at once, so the map size is raised as needed.

use crate::error::{fail, InDatabase, Kind};
use crate::stat::LayoutChoice;
use crate::util::{hex_decode_into, print_decode_into, Order};
use anyhow::{anyhow, Context, Result};
use dlmdb::{DatabaseFlags, Env, EnvFlags, Layout, ProbeVerdict, WriteFlags};
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct LoadArgs {
    /// Environment directory (created if missing) or data file.
    pub path: PathBuf,
    /// Read from FILE instead of standard input.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Target database when the input header names none.
    #[arg(short = 's', long = "subdb", value_name = "NAME")]
    pub subdb: Option<String>,
    /// Keep existing records (MDB_NOOVERWRITE|MDB_NODUPDATA); they are skipped.
    #[arg(short = 'N')]
    pub no_overwrite: bool,
    /// Plain text input: alternating key and value lines, print escapes, no header.
    #[arg(short = 'T')]
    pub plain_text: bool,
    /// Format of a newly created store.
    #[arg(long, value_enum, default_value = "dlmdb")]
    pub format: NewFormat,
    /// Create PATH as a single data file (MDB_NOSUBDIR) when it does not exist.
    #[arg(short = 'n')]
    pub no_subdir: bool,
    /// Unknown header keywords only warn (like stock mdb_load) instead of failing.
    #[arg(long)]
    pub skip_unknown: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    /// Print the load report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `dlmdb load`.
pub fn run(a: LoadArgs, layout: LayoutChoice) -> Result<()> {
    crate::interrupt::watch();
    let opts = LoadOptions {
        path: a.path,
        file: a.file,
        subdb: a.subdb,
        no_overwrite: a.no_overwrite,
        plain_text: a.plain_text,
        format: a.format,
        no_subdir: a.no_subdir,
        skip_unknown: a.skip_unknown,
        quiet: a.quiet || a.json,
        layout,
    };
    let report = load(&opts)?;
    if a.json {
        println!("{}", crate::report::to_json("load", &report)?);
    }
    Ok(())
}

fn check_interrupt() -> Result<()> {
    if crate::interrupt::interrupted() {
        return Err(fail(
            Kind::Interrupted,
            "load interrupted; nothing was written",
        ));
    }
    Ok(())
}

/// Which format a newly created store gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NewFormat {
    /// DLMDB data version 2 (the default).
    Dlmdb,
    /// Stock LMDB data version 1 (`MDB_FORMAT_LMDB`), readable by stock LMDB.
    Lmdb,
}

#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub path: PathBuf,
    /// Input file (`None` = standard input).
    pub file: Option<PathBuf>,
    /// Target database when the header does not name one (`-s`).
    pub subdb: Option<String>,
    /// `-N`: keep existing records (`MDB_NOOVERWRITE|MDB_NODUPDATA`).
    pub no_overwrite: bool,
    /// `-T`: plain text, alternating key and value lines, no header.
    pub plain_text: bool,
    /// Format of a store created by this load.
    pub format: NewFormat,
    /// Create PATH as a single data file rather than a directory.
    pub no_subdir: bool,
    /// Unknown header keywords only warn (as stock `mdb_load`) instead of failing.
    pub skip_unknown: bool,
    /// No progress bar.
    pub quiet: bool,
    pub layout: LayoutChoice,
}

/// One database block of the input.
#[derive(Debug, Clone)]
pub struct Section {
    pub name: Option<String>,
    /// Database flags from the header (stock ones plus counted/prefix).
    pub flags: u32,
    /// Line of `VERSION=` (or 1 for `-T`).
    pub first_line: usize,
    /// `(arena offset, key length, value length, line of the key)`.
    pub records: Vec<(usize, u32, u32, u32)>,
    /// Keys (and duplicates) strictly ascending in the database's order.
    pub sorted: bool,
}

/// The parsed input: sections whose bytes live in one arena.
#[derive(Debug, Default)]
pub struct Parsed {
    pub arena: Vec<u8>,
    pub sections: Vec<Section>,
    pub mapsize: Option<u64>,
    pub warnings: Vec<String>,
    pub lines: usize,
}

impl Parsed {
    pub fn key(&self, r: &(usize, u32, u32, u32)) -> &[u8] {
        &self.arena[r.0..r.0 + r.1 as usize]
    }
    pub fn value(&self, r: &(usize, u32, u32, u32)) -> &[u8] {
        let s = r.0 + r.1 as usize;
        &self.arena[s..s + r.2 as usize]
    }
}

/// A line-numbered input error.
#[derive(Debug)]
pub struct InputError {
    pub line: usize,
    pub msg: String,
}
impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.msg)
    }
}
impl std::error::Error for InputError {}

fn err(line: usize, msg: impl Into<String>) -> InputError {
    InputError {
        line,
        msg: msg.into(),
    }
}

const FLAG_WORDS: [(&str, u32); 8] = [
    ("reversekey", 0x02),
    ("dupsort", 0x04),
    ("integerkey", 0x08),
    ("dupfixed", 0x10),
    ("integerdup", 0x20),
    ("reversedup", 0x40),
    ("counted", 0x80),
    ("prefix_compression", 0x100),
];

const MAX_KEY: usize = 511;

/// Split into lines (without the `\n`); the last line may lack it.
struct Lines<'a> {
    data: &'a [u8],
    pos: usize,
    no: usize,
}
impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a [u8]);
    fn next(&mut self) -> Option<(usize, &'a [u8])> {
        if self.pos >= self.data.len() {
            return None;
        }
        let rest = &self.data[self.pos..];
        let (line, adv) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        self.pos += adv;
        self.no += 1;
        Some((self.no, line))
    }
}

/// Parse and validate a whole input.
pub fn parse(
    input: &[u8],
    opts_subdb: Option<&str>,
    plain_text: bool,
    skip_unknown: bool,
) -> Result<Parsed, InputError> {
    parse_for(input, opts_subdb, plain_text, skip_unknown, false)
}

/// As [`parse`]; `stock_target` refuses DLMDB's flags (`counted`,
/// `prefix_compression`), which a stock LMDB store cannot hold.
pub fn parse_for(
    input: &[u8],
    opts_subdb: Option<&str>,
    plain_text: bool,
    skip_unknown: bool,
    stock_target: bool,
) -> Result<Parsed, InputError> {
    let mut p = Parsed {
        arena: Vec::with_capacity(input.len() / 2 + 64),
        ..Default::default()
    };
    let mut lines = Lines {
        data: input,
        pos: 0,
        no: 0,
    };
    if plain_text {
        let mut sec = Section {
            name: opts_subdb.map(str::to_owned),
            flags: 0,
            first_line: 1,
            records: Vec::new(),
            sorted: true,
        };
        let mut pending: Option<(usize, usize)> = None; // (arena start, line)
        for (no, line) in lines.by_ref() {
            let start = p.arena.len();
            print_decode_into(&mut p.arena, line, 1).map_err(|e| err(no, e.to_string()))?;
            match pending.take() {
                None => {
                    check_key(&p.arena[start..], no, "key")?;
                    pending = Some((start, no));
                }
                Some((kstart, kline)) => sec.records.push((
                    kstart,
                    (start - kstart) as u32,
                    (p.arena.len() - start) as u32,
                    kline as u32,
                )),
            }
        }
        if let Some((_, kline)) = pending {
            return Err(err(kline, "key without a value line (input ends after it)"));
        }
        p.lines = lines.no;
        p.sections.push(sec);
    } else {
        let mut name: Option<String> = opts_subdb.map(str::to_owned);
        loop {
            // Header.
            let mut flags = 0u32;
            let mut print = false;
            let mut first_line = 0;
            let mut ended = false;
            for (no, line) in lines.by_ref() {
                if first_line == 0 {
                    first_line = no;
                }
                if line == b"HEADER=END" {
                    ended = true;
                    break;
                }
                if line.first() == Some(&b' ') {
                    return Err(err(no, "record line before HEADER=END"));
                }
                let text =
                    std::str::from_utf8(line).map_err(|_| err(no, "header line is not UTF-8"))?;
                let Some((k, v)) = text.split_once('=') else {
                    return Err(err(
                        no,
                        format!("expected keyword=value in the header, found {text:?}"),
                    ));
                };
                match k {
                    "VERSION" => match v.parse::<u32>() {
                        Ok(n) if (1..=3).contains(&n) => {}
                        _ => return Err(err(no, format!("unsupported VERSION {v:?} (this tool reads 3)"))),
                    },
                    "format" => match v {
                        "bytevalue" => print = false,
                        "print" => print = true,
                        _ => return Err(err(no, format!("unsupported format {v:?} (bytevalue or print)"))),
                    },
                    "type" => {
                        if v != "btree" {
                            return Err(err(no, format!("unsupported type {v:?} (only btree)")));
                        }
                    }
                    "database" => name = Some(v.to_owned()),
                    "mapsize" => {
                        let n: u64 = v.parse().map_err(|_| err(no, format!("bad mapsize {v:?}")))?;
                        p.mapsize = Some(p.mapsize.unwrap_or(0).max(n));
                    }
                    "maxreaders" => {
                        v.parse::<u32>().map_err(|_| err(no, format!("bad maxreaders {v:?}")))?;
                    }
                    "mapaddr" | "duplicates" | "db_pagesize" => {} // informational
                    _ => match FLAG_WORDS.iter().find(|(w, _)| *w == k) {
                        Some(&(_, bit)) => match v {
                            "1" if stock_target && bit & 0x180 != 0 => {
                                return Err(err(
                                    no,
                                    format!("{k}=1 is a DLMDB flag that a stock LMDB store (--format lmdb, or an existing version-1 store) cannot hold"),
                                ))
                            }
                            "1" => flags |= bit,
                            "0" => flags &= !bit,
                            _ => return Err(err(no, format!("flag {k} must be 0 or 1, found {v:?}"))),
                        },
                        None if skip_unknown => p.warnings.push(format!("line {no}: unrecognized keyword ignored: {k}")),
                        None => {
                            return Err(err(
                                no,
                                format!("unknown header keyword {k:?} (use --skip-unknown to ignore it as stock mdb_load does)"),
                            ))
                        }
                    },
                }
            }
            if !ended {
                if first_line == 0 && !p.sections.is_empty() {
                    break; // clean end after DATA=END
                }
                return Err(err(lines.no.max(1), "input ends before HEADER=END"));
            }
            // Records.
            let mut sec = Section {
                name: name.clone(),
                flags,
                first_line,
                records: Vec::new(),
                sorted: true,
            };
            let mut pending: Option<(usize, usize)> = None;
            let mut data_end = false;
            for (no, line) in lines.by_ref() {
                if line.first() != Some(&b' ') {
                    if let Some((_, kline)) = pending {
                        return Err(err(no, format!("key on line {kline} has no value line")));
                    }
                    if line == b"DATA=END" {
                        data_end = true;
                        break;
                    }
                    return Err(err(
                        no,
                        "expected a record line (starting with a space) or DATA=END",
                    ));
                }
                let start = p.arena.len();
                let body = &line[1..];
                let r = if print {
                    print_decode_into(&mut p.arena, body, 2)
                } else {
                    hex_decode_into(&mut p.arena, body, 2)
                };
                r.map_err(|e| err(no, e.to_string()))?;
                match pending.take() {
                    None => {
                        check_key(&p.arena[start..], no, "key")?;
                        pending = Some((start, no));
                    }
                    Some((kstart, kline)) => {
                        if flags & 0x04 != 0 {
                            check_key(&p.arena[start..], no, "duplicate value")?;
                        }
                        sec.records.push((
                            kstart,
                            (start - kstart) as u32,
                            (p.arena.len() - start) as u32,
                            kline as u32,
                        ))
                    }
                }
            }
            if !data_end {
                return Err(match pending {
                    Some((_, kline)) => {
                        err(kline, "key without a value line (input ends after it)")
                    }
                    None => err(lines.no, "input ends before DATA=END (truncated?)"),
                });
            }
            p.sections.push(sec);
        }
        p.lines = lines.no;
    }
    for i in 0..p.sections.len() {
        let sorted = validate_section(&p, &p.sections[i])?;
        p.sections[i].sorted = sorted;
    }
    // Named databases live in the main database; a REVERSEKEY main database
    // holding records or names is rejected by `dlmdb check`.
    let named = p.sections.iter().any(|s| s.name.is_some());
    if let Some(main) = p
        .sections
        .iter()
        .find(|s| s.name.is_none() && s.flags & 0x02 != 0)
    {
        if !main.records.is_empty() || named {
            return Err(err(
                main.first_line,
                "reversekey=1 on the main database with records or named databases: the main database holds the database names in the default order",
            ));
        }
    }
    Ok(p)
}

fn check_key(k: &[u8], no: usize, what: &str) -> Result<(), InputError> {
    if k.is_empty() {
        return Err(err(
            no,
            format!("empty {what} (LMDB does not store empty keys)"),
        ));
    }
    if k.len() > MAX_KEY {
        return Err(err(
            no,
            format!(
                "{what} of {} bytes exceeds the {MAX_KEY}-byte limit",
                k.len()
            ),
        ));
    }
    Ok(())
}

/// Check sizes and duplicates; return whether the records are strictly
/// ascending in the database's order (then they can be appended).
fn validate_section(p: &Parsed, s: &Section) -> Result<bool, InputError> {
    let dupsort = s.flags & 0x04 != 0;
    let korder = Order::for_keys(s.flags);
    let dorder = Order::for_dups(s.flags);
    let mut fixed: Option<u32> = None;
    let mut int_key: Option<(usize, u32)> = None;
    let mut int_dup: Option<(usize, u32)> = None;
    let mut sorted = true;
    for (i, r) in s.records.iter().enumerate() {
        let k = p.key(r);
        if !korder.size_ok(k) {
            return Err(err(
                r.3 as usize,
                format!(
                    "integerkey database needs 4- or 8-byte keys, found {} bytes",
                    k.len()
                ),
            ));
        }
        if korder == Order::Integer {
            same_size(&mut int_key, k.len(), r.3, "integerkey", "keys")?;
        }
        if dupsort && dorder == Order::Integer {
            same_size(&mut int_dup, r.2 as usize, r.3 + 1, "integerdup", "values")?;
        }
        if dupsort {
            let v = p.value(r);
            if !dorder.size_ok(v) {
                return Err(err(
                    r.3 as usize + 1,
                    format!(
                        "integerdup database needs 4- or 8-byte values, found {} bytes",
                        v.len()
                    ),
                ));
            }
            if s.flags & 0x10 != 0 {
                match fixed {
                    None => fixed = Some(r.2),
                    Some(n) if n != r.2 => {
                        return Err(err(
                            r.3 as usize + 1,
                            format!(
                                "dupfixed database: value of {} bytes, earlier values have {n}",
                                r.2
                            ),
                        ))
                    }
                    _ => {}
                }
            }
        }
        if i == 0 || !sorted {
            continue;
        }
        let q = &s.records[i - 1];
        let mut ord = korder.cmp(p.key(q), k);
        if dupsort && ord == std::cmp::Ordering::Equal {
            ord = dorder.cmp(p.value(q), p.value(r));
        }
        match ord {
            std::cmp::Ordering::Less => {}
            std::cmp::Ordering::Equal => return Err(dup_error(s, q.3, r.3)),
            std::cmp::Ordering::Greater => sorted = false,
        }
    }
    if !sorted {
        // Unsorted input: find duplicates with a set of slices.
        let mut seen: HashSet<(&[u8], &[u8]), _> = HashSet::with_capacity(s.records.len());
        let mut first_line = std::collections::HashMap::new();
        for r in &s.records {
            let item = (p.key(r), if dupsort { p.value(r) } else { &[][..] });
            if !seen.insert(item) {
                let first = *first_line.get(&item).unwrap_or(&0u32);
                return Err(dup_error(s, first, r.3));
            }
            first_line.insert(item, r.3);
        }
    }
    Ok(sorted)
}

/// Integer items of one database must all have one size (4 or 8 bytes):
/// the engine compares them by the size of the first, and `dlmdb check`
/// rejects a mix.
fn same_size(
    first: &mut Option<(usize, u32)>,
    len: usize,
    line: u32,
    flag: &str,
    what: &str,
) -> Result<(), InputError> {
    match *first {
        None => *first = Some((len, line)),
        Some((n, at)) if n != len => {
            return Err(err(
                line as usize,
                format!("{flag} database mixes {what} of {n} bytes (line {at}) and {len} bytes"),
            ))
        }
        _ => {}
    }
    Ok(())
}

fn dup_error(s: &Section, first: u32, again: u32) -> InputError {
    let what = if s.flags & 0x04 != 0 {
        "duplicate key/value pair"
    } else {
        "duplicate key in a database without dupsort"
    };
    err(again as usize, format!("{what} (first on line {first})"))
}

/// Result of a load (the `--json` object).
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadReport {
    pub path: String,
    /// The transaction that committed the load.
    pub txnid: u64,
    /// The store did not exist before this load.
    pub created: bool,
    /// Layout of the store: `lmdb`, `dlmdb-v1` or `dlmdb-v2`.
    pub layout: Layout,
    /// Input lines read.
    pub input_lines: usize,
    pub databases: Vec<LoadedDb>,
    /// Always "single transaction": everything or nothing is written.
    pub strategy: &'static str,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadedDb {
    /// `null` = main database.
    pub name: Option<String>,
    /// Flag names from the header.
    pub flags: Vec<&'static str>,
    /// Records in the input.
    pub records: u64,
    /// Records written.
    pub written: u64,
    /// Records skipped because they existed (`-N`).
    pub skipped: u64,
    /// Written with MDB_APPEND (sorted input into an empty database).
    pub appended: bool,
}

/// Read the input, validate it, write it.
pub fn load(opts: &LoadOptions) -> Result<LoadReport> {
    let mut input = Vec::new();
    match &opts.file {
        Some(f) => {
            input = std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?;
        }
        None => {
            std::io::stdin()
                .lock()
                .read_to_end(&mut input)
                .context("cannot read standard input")?;
        }
    }
    check_interrupt()?;
    let src = opts
        .file
        .as_ref()
        .map_or("<stdin>".to_string(), |f| f.display().to_string());
    let stock_target = target_is_stock(opts);
    let parsed = parse_for(
        &input,
        opts.subdb.as_deref(),
        opts.plain_text,
        opts.skip_unknown,
        stock_target,
    )
    .map_err(|e| fail(Kind::Input, format!("{src}: {e}; nothing was written")))?;
    drop(input);
    check_interrupt()?;
    for w in &parsed.warnings {
        eprintln!("dlmdb: {src}: {w}");
    }
    write(opts, &parsed)
}

/// Whether the target is (or will be) a stock LMDB store.
fn target_is_stock(opts: &LoadOptions) -> bool {
    let data_file = crate::store::data_file_of(&opts.path);
    match dlmdb::read_data_version(&data_file) {
        Some(2) => false,
        Some(_) => opts.layout != LayoutChoice::Dlmdb,
        None => opts.format == NewFormat::Lmdb,
    }
}

/// A path that receives a new store: missing, or an empty directory.
fn is_new_target(path: &Path) -> bool {
    match std::fs::read_dir(path) {
        Ok(mut entries) => entries.next().is_none(),
        Err(_) => !path.exists(),
    }
}

/// `.NAME.dlmdb-load-PID` beside `path`.
fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "store".into(), |n| n.to_string_lossy().into_owned());
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    parent.join(format!(".{name}.dlmdb-load-{}", std::process::id()))
}

fn remove_store(path: &Path, no_subdir: bool) {
    if no_subdir {
        let _ = std::fs::remove_file(path);
        let mut lock = path.as_os_str().to_owned();
        lock.push("-lock");
        let _ = std::fs::remove_file(lock);
    } else {
        let _ = std::fs::remove_dir_all(path);
    }
}

/// Write `parsed` into the store at `opts.path`, all or nothing (see the
/// module documentation).
pub fn write(opts: &LoadOptions, parsed: &Parsed) -> Result<LoadReport> {
    if is_new_target(&opts.path) {
        let no_subdir = opts.no_subdir && !opts.path.is_dir();
        let temp = temp_beside(&opts.path);
        remove_store(&temp, no_subdir);
        let r = write_inner(opts, parsed, &temp, no_subdir, true).and_then(|rep| {
            check_interrupt()?;
            if no_subdir {
                std::fs::rename(&temp, &opts.path)
                    .with_context(|| format!("cannot rename {} into place", temp.display()))?;
                remove_store(&temp, true); // its lock file
            } else {
                std::fs::rename(&temp, &opts.path)
                    .with_context(|| format!("cannot rename {} into place", temp.display()))?;
                // A lock file is recreated by the next open.
                let _ = std::fs::remove_file(opts.path.join("lock.mdb"));
            }
            Ok(rep)
        });
        if r.is_err() {
            remove_store(&temp, no_subdir);
        }
        return r;
    }
    let no_subdir = opts.path.is_file();
    let data_file = crate::store::data_file_of(&opts.path);
    let before = std::fs::metadata(&data_file).map(|m| m.len()).ok();
    let r = write_inner(opts, parsed, &opts.path, no_subdir, false);
    if r.is_err() {
        if let Some(len) = before {
            restore_length(opts, &data_file, len);
        }
    }
    r
}

/// After a failed load into an existing store: if the failed commit grew
/// the data file, cut it back to `len` while holding the writer lock (no
/// other writer can be extending it; the committed meta still ends within
/// `len`).
fn restore_length(opts: &LoadOptions, data_file: &Path, len: u64) {
    let grown = std::fs::metadata(data_file).is_ok_and(|m| m.len() > len);
    if !grown {
        return;
    }
    let Ok(env) = crate::store::open_rw(&opts.path, opts.layout, 2) else {
        return;
    };
    let Ok(txn) = env.write_txn() else {
        return;
    };
    let committed_end = env
        .info()
        .map(|i| (i.last_pgno + 1) * u64::from(env.stat().map(|s| s.page_size).unwrap_or(4096)))
        .unwrap_or(u64::MAX);
    if committed_end <= len {
        if let Ok(f) = std::fs::OpenOptions::new().write(true).open(data_file) {
            let _ = f.set_len(len);
        }
    }
    txn.abort();
}

/// Write into the store at `path` (`created`: a new store, `path` is its
/// temporary name). Messages name `opts.path`.
fn write_inner(
    opts: &LoadOptions,
    parsed: &Parsed,
    path: &Path,
    no_subdir: bool,
    created: bool,
) -> Result<LoadReport> {
    if created && !no_subdir {
        std::fs::create_dir_all(path)
            .with_context(|| format!("cannot create directory {}", path.display()))?;
    }
    let data_file = if no_subdir {
        path.to_path_buf()
    } else {
        path.join("data.mdb")
    };
    let existing = std::fs::metadata(&data_file).map(|m| m.len()).unwrap_or(0);
    let mut flags = if no_subdir {
        EnvFlags::NO_SUB_DIR
    } else {
        EnvFlags::empty()
    };
    if created {
        if opts.format == NewFormat::Lmdb {
            flags |= EnvFlags::FORMAT_LMDB;
        }
    } else {
        match dlmdb::read_data_version(&data_file) {
            Some(2) => {
                if opts.format == NewFormat::Lmdb {
                    return Err(fail(
                        Kind::Refused,
                        "this is a DLMDB version-2 store; --format lmdb only applies to new stores",
                    ));
                }
            }
            Some(1) => {
                let padded = match opts.layout {
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
            _ => {
                return Err(fail(
                    Kind::NotAStore,
                    format!("{} is not an LMDB/DLMDB data file", data_file.display()),
                ))
            }
        }
    }
    let payload: u64 = parsed.arena.len() as u64
        + parsed
            .sections
            .iter()
            .map(|s| s.records.len() as u64 * 48)
            .sum::<u64>();
    let need = (existing + 3 * payload + (4 << 20)).div_ceil(1 << 20) << 20;
    let named = parsed.sections.iter().filter(|s| s.name.is_some()).count() as u32;
    let mut env = Env::builder()
        .flags(flags)
        .max_dbs(named + 2)
        .open(path)
        .context("cannot open the store for writing")?;
    let have = env.info()?.map_size;
    let want = need.max(parsed.mapsize.unwrap_or(0));
    if want > have {
        env.set_map_size(want as usize)
            .with_context(|| format!("cannot set the map size to {want}"))?;
    }
    // One bar over the records of every database, so rate and ETA cover
    // the whole load.
    let total: u64 = parsed.sections.iter().map(|s| s.records.len() as u64).sum();
    let bar = crate::progress::bar(
        total,
        10_000,
        opts.quiet,
        "loading {bar:40} {pos}/{len} records {per_sec} eta {eta}",
    );
    let mut txn = env
        .write_txn()
        .context("cannot begin a write transaction")?;
    let mut dbs = Vec::new();
    for s in &parsed.sections {
        let in_db = || InDatabase::of(s.name.as_deref());
        let ctx = |what: &str| format!("input line {}: {what}", s.first_line);
        let want_flags = DatabaseFlags::from_bits_retain(s.flags);
        let db = txn
            .create_db(s.name.as_deref(), want_flags)
            .with_context(|| ctx("cannot open or create"))
            .context(in_db())?;
        let have_flags = txn.db_flags(db)?.bits() & 0x7fff;
        if have_flags != s.flags
            && !(s.name.is_none() && have_flags & !s.flags == 0 && s.flags & !have_flags == 0)
        {
            return Err(fail(
                Kind::Refused,
                format!(
                    "{}: it exists with flags {:#x} ({}) but the input says {:#x} ({}); nothing was written",
                    ctx("flags differ"),
                    have_flags,
                    crate::stat::flag_names(DatabaseFlags::from_bits_retain(have_flags)).join(","),
                    s.flags,
                    crate::stat::flag_names(want_flags).join(",")
                ),
            ))
            .context(in_db());
        }
        let empty = txn.stat(db)?.entries == 0;
        let append = empty && s.sorted && !opts.no_overwrite;
        let dupsort = s.flags & 0x04 != 0;
        let base = if opts.no_overwrite {
            WriteFlags::NO_OVERWRITE | WriteFlags::NO_DUP_DATA
        } else {
            WriteFlags::empty()
        };
        let (mut written, mut skipped) = (0u64, 0u64);
        {
            let mut cur = txn
                .cursor_mut(db)
                .with_context(|| ctx("cannot open a cursor"))
                .context(in_db())?;
            let mut prev_key: &[u8] = &[];
            for (i, r) in s.records.iter().enumerate() {
                let (k, v) = (parsed.key(r), parsed.value(r));
                let mut f = base;
                if append {
                    f |= if dupsort && i > 0 && prev_key == k {
                        WriteFlags::APPEND_DUP
                    } else {
                        WriteFlags::APPEND
                    };
                }
                prev_key = k;
                match cur.put(k, v, f) {
                    Ok(()) => written += 1,
                    Err(dlmdb::Error::KeyExist) if opts.no_overwrite => skipped += 1,
                    Err(e) => {
                        return Err(anyhow!(e))
                            .with_context(|| {
                                format!(
                                    "writing the record of input line {} failed; the load was rolled back, nothing was written",
                                    r.3
                                )
                            })
                            .context(in_db())
                    }
                }
                if (i + 1) % 8192 == 0 {
                    check_interrupt()?;
                    if let Some(b) = &bar {
                        b.inc(8192);
                    }
                }
            }
            if let Some(b) = &bar {
                b.inc(s.records.len() as u64 % 8192);
            }
        }
        dbs.push(LoadedDb {
            name: s.name.clone(),
            flags: crate::stat::flag_names(want_flags),
            records: s.records.len() as u64,
            written,
            skipped,
            appended: append,
        });
    }
    check_interrupt()?;
    let txnid = txn.id();
    txn.commit().context("commit failed; nothing was written")?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let layout = env.layout();
    Ok(LoadReport {
        path: opts.path.display().to_string(),
        txnid,
        created,
        layout,
        input_lines: parsed.lines,
        databases: dbs,
        strategy: "single transaction",
        warnings: parsed.warnings.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> Result<Parsed, InputError> {
        parse(s.as_bytes(), None, false, false)
    }
    const HEAD: &str = "VERSION=3\nformat=bytevalue\ntype=btree\nmapsize=1048576\nmaxreaders=126\ndb_pagesize=4096\nHEADER=END\n";

    #[test]
    fn good_input() {
        let p = parse_str(&format!("{HEAD} 61\n 31\n 62\n \nDATA=END\n")).unwrap();
        assert_eq!(p.sections.len(), 1);
        let s = &p.sections[0];
        assert_eq!(s.records.len(), 2);
        assert!(s.sorted);
        assert_eq!(p.key(&s.records[1]), b"b");
        assert_eq!(p.value(&s.records[1]), b"");
    }

    #[test]
    fn malformed_inputs_name_the_line() {
        let cases = [
            (
                format!("{HEAD} 6g\n 31\nDATA=END\n"),
                8,
                "invalid hex digit",
            ),
            (format!("{HEAD} 616\n 31\nDATA=END\n"), 8, "odd number"),
            (
                "VERSION=3\nformat=bytevalue\n 61\n".to_string(),
                3,
                "before HEADER=END",
            ),
            (
                "VERSION=3\nformat=bytevalue\n".to_string(),
                2,
                "before HEADER=END",
            ),
            (
                format!("VERSION=3\nbogus=1\n{}", &HEAD[10..]),
                2,
                "unknown header keyword",
            ),
            (format!("{HEAD} 61\nDATA=END\n"), 9, "has no value"),
            (format!("{HEAD} 61\n"), 8, "key without a value"),
            (format!("{HEAD} 61\n 31\n"), 9, "before DATA=END"),
            (
                format!("{HEAD} 61\n 31\n 61\n 32\nDATA=END\n"),
                10,
                "duplicate key",
            ),
            (
                format!("{HEAD} 62\n 31\n 61\n 32\n 62\n 33\nDATA=END\n"),
                12,
                "duplicate key",
            ),
            ("VERSION=4\n".to_string(), 1, "unsupported VERSION"),
        ];
        for (input, line, what) in cases {
            let e = parse_str(&input).expect_err(&input);
            assert_eq!(e.line, line, "{input:?}: {e}");
            assert!(e.msg.contains(what), "{input:?}: {e}");
        }
    }

    #[test]
    fn unknown_keyword_can_be_skipped_and_extras_are_known() {
        let input = format!(
            "VERSION=3\nbogus=1\ncounted=1\nprefix_compression=1\n{} 61\n 31\nDATA=END\n",
            &HEAD[10..]
        );
        let p = parse(input.as_bytes(), None, false, true).unwrap();
        assert_eq!(p.warnings.len(), 1);
        assert_eq!(p.sections[0].flags, 0x180);
    }

    #[test]
    fn dupsort_pairs_and_plain_text() {
        let input = format!("VERSION=3\nformat=print\nduplicates=1\ndupsort=1\n{} a\n 1\n a\n 2\n b\n \\5c\\00\nDATA=END\n", &HEAD[27..]);
        let p = parse_str(&input).unwrap();
        let s = &p.sections[0];
        assert_eq!(s.flags, 4);
        assert!(s.sorted);
        assert_eq!(p.value(&s.records[2]), b"\\\0");
        let p = parse(b"k1\nv1\nk0\nv0", Some("x"), true, false).unwrap();
        assert_eq!(p.sections[0].name.as_deref(), Some("x"));
        assert!(!p.sections[0].sorted);
        assert!(parse(b"k1\nv1\nk2", None, true, false).is_err());
    }
}
