//! `dlmdb load`: read LMDB's dump text format (what `mdb_dump` writes and
//! `mdb_load` reads) or plain text (`-T`) into a store.
//!
//! Strategy (all or nothing, in bounded memory): the input is read as a
//! stream, one record at a time, and each record is checked (syntax, header
//! keywords, key sizes, flags the target format cannot hold, integer items
//! of one size per database, no REVERSEKEY on a non-empty main database)
//! and written as it is read. Any failure or SIGINT aborts what is not yet
//! committed. (Stock `mdb_load` commits every 100 records and can leave
//! half a database behind.) Duplicates are found by the store being
//! written, not by an in-memory copy of the input.
//!
//! - A new store is built under a temporary name beside PATH, committed in
//!   steps, and renamed into place only after its last commit: a failure
//!   or Ctrl-C leaves nothing.
//! - An existing store is loaded in **one** write transaction. Its data
//!   file keeps its bytes: nothing reaches the file before the commit
//!   except pages the engine spills, which only the commit makes
//!   reachable, and a load that fails after growing the file (ENOSPC,
//!   EFBIG, a failed commit) is undone by truncating the file back to its
//!   length before the load, under the writer lock. Spilled pages inside
//!   the old length land only on pages the transaction may reuse; their
//!   bytes are saved to an undo file first and written back after a
//!   failure ([`undo`]), so the data file stays byte for byte as it was.
//!   The map is sized for the whole load before the transaction starts
//!   (from the input file's length; a fixed allowance for standard input).

use crate::error::{fail, InDatabase, Kind};
use crate::stat::LayoutChoice;
use crate::util::{hex_decode_into, print_decode_into, Order};
use anyhow::{anyhow, bail, Context, Result};
use dlmdb::{DatabaseFlags, Env, EnvFlags, Layout, WriteFlags};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

mod undo;

/// Load a dump (or plain text with -T) into a store, all or nothing.
#[derive(clap::Args)]
#[command(
    long_about = "Read LMDB's dump format (bytevalue or print) or plain text (-T) and write it\n\
into the store at PATH, creating it if needed (DLMDB data version 2 unless\n\
--format lmdb). The input is streamed: each record is checked and written as\n\
it is read. A new store is built under a temporary name beside PATH, committed\n\
every 64 MiB of input and renamed into place after its last commit; an\n\
existing store is loaded in one write transaction. After a malformed record\n\
(the error names its line), a failed write or Ctrl-C, a new PATH does not\n\
exist and an existing store is exactly as it was.",
    after_help = "Examples:\n  dlmdb load -f backup.txt ./db\n  mdb_dump -a ./old | dlmdb load --format lmdb ./new\n  printf 'k\\nv\\n' | dlmdb load -T -s names ./db"
)]
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
    /// New stores: input bytes read per write transaction (bounds memory).
    #[arg(long, hide = true, default_value_t = STREAM_COMMIT_BYTES)]
    pub commit_bytes: u64,
    /// Existing stores: bytes of input items kept in memory for duplicate
    /// detection before they move to a scratch database.
    #[arg(long, hide = true, default_value_t = SEEN_MEMORY_BYTES)]
    pub seen_memory_bytes: usize,
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
        commit_bytes: a.commit_bytes,
        seen_memory_bytes: a.seen_memory_bytes,
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
    /// New stores: input bytes read per write transaction.
    pub commit_bytes: u64,
    /// Existing stores: bytes of input items kept in memory for duplicate
    /// detection before they move to a scratch database.
    pub seen_memory_bytes: usize,
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

/// A record the input gave before (`dupsort`: the same key and value).
fn duplicate(line: usize, dupsort: bool) -> InputError {
    err(
        line,
        if dupsort {
            "duplicate key/value pair (given earlier in the input)"
        } else {
            "duplicate key in a database without dupsort (given earlier in the input)"
        },
    )
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
                header_line(
                    line,
                    no,
                    &mut Header {
                        flags: &mut flags,
                        print: &mut print,
                        name: &mut name,
                        mapsize: &mut p.mapsize,
                    },
                    skip_unknown,
                    stock_target,
                    &mut p.warnings,
                )?;
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

/// What the header lines of one database block set.
struct Header<'a> {
    flags: &'a mut u32,
    print: &'a mut bool,
    name: &'a mut Option<String>,
    mapsize: &'a mut Option<u64>,
}

/// Apply one `keyword=value` header line (not `HEADER=END`).
fn header_line(
    line: &[u8],
    no: usize,
    h: &mut Header<'_>,
    skip_unknown: bool,
    stock_target: bool,
    warnings: &mut Vec<String>,
) -> Result<(), InputError> {
    let text = std::str::from_utf8(line).map_err(|_| err(no, "header line is not UTF-8"))?;
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
            "bytevalue" => *h.print = false,
            "print" => *h.print = true,
            _ => return Err(err(no, format!("unsupported format {v:?} (bytevalue or print)"))),
        },
        "type" => {
            if v != "btree" {
                return Err(err(no, format!("unsupported type {v:?} (only btree)")));
            }
        }
        "database" => *h.name = Some(v.to_owned()),
        "mapsize" => {
            let n: u64 = v.parse().map_err(|_| err(no, format!("bad mapsize {v:?}")))?;
            *h.mapsize = Some(h.mapsize.unwrap_or(0).max(n));
        }
        "maxreaders" => {
            v.parse::<u32>()
                .map_err(|_| err(no, format!("bad maxreaders {v:?}")))?;
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
                "1" => *h.flags |= bit,
                "0" => *h.flags &= !bit,
                _ => return Err(err(no, format!("flag {k} must be 0 or 1, found {v:?}"))),
            },
            None if skip_unknown => {
                warnings.push(format!("line {no}: unrecognized keyword ignored: {k}"))
            }
            None => {
                return Err(err(
                    no,
                    format!("unknown header keyword {k:?} (use --skip-unknown to ignore it as stock mdb_load does)"),
                ))
            }
        },
    }
    Ok(())
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

/// The per-record rules of one database block, applied in input order:
/// key and value sizes, one size for integer items and DUPFIXED values,
/// and whether the records so far are strictly ascending (then they can be
/// appended); an item equal to the one before it is a duplicate.
struct RecordCheck {
    flags: u32,
    korder: Order,
    dorder: Order,
    fixed: Option<u32>,
    int_key: Option<(usize, u32)>,
    int_dup: Option<(usize, u32)>,
    sorted: bool,
}

impl RecordCheck {
    fn new(flags: u32) -> RecordCheck {
        RecordCheck {
            flags,
            korder: Order::for_keys(crate::util::db_flags(flags)),
            dorder: Order::for_dups(crate::util::db_flags(flags)),
            fixed: None,
            int_key: None,
            int_dup: None,
            sorted: true,
        }
    }

    fn dupsort(&self) -> bool {
        self.flags & 0x04 != 0
    }

    /// Check the record `(k, v)` whose key is on `line`; `prev` is the
    /// record before it in this block and the line of its key.
    fn check(
        &mut self,
        k: &[u8],
        v: &[u8],
        line: u32,
        prev: Option<(&[u8], &[u8], u32)>,
    ) -> Result<(), InputError> {
        if !self.korder.size_ok(k) {
            return Err(err(
                line as usize,
                format!(
                    "integerkey database needs 4- or 8-byte keys, found {} bytes",
                    k.len()
                ),
            ));
        }
        if self.korder == Order::Integer {
            same_size(&mut self.int_key, k.len(), line, "integerkey", "keys")?;
        }
        if self.dupsort() {
            if !self.dorder.size_ok(v) {
                return Err(err(
                    line as usize + 1,
                    format!(
                        "integerdup database needs 4- or 8-byte values, found {} bytes",
                        v.len()
                    ),
                ));
            }
            if self.dorder == Order::Integer {
                same_size(&mut self.int_dup, v.len(), line + 1, "integerdup", "values")?;
            }
            if self.flags & 0x10 != 0 {
                let n = v.len() as u32;
                match self.fixed {
                    None => self.fixed = Some(n),
                    Some(f) if f != n => {
                        return Err(err(
                            line as usize + 1,
                            format!(
                                "dupfixed database: value of {n} bytes, earlier values have {f}"
                            ),
                        ))
                    }
                    _ => {}
                }
            }
        }
        let Some((pk, pv, pline)) = prev else {
            return Ok(());
        };
        if !self.sorted {
            return Ok(());
        }
        let mut ord = self.korder.cmp(pk, k);
        if self.dupsort() && ord == std::cmp::Ordering::Equal {
            ord = self.dorder.cmp(pv, v);
        }
        match ord {
            std::cmp::Ordering::Less => Ok(()),
            std::cmp::Ordering::Equal => Err(dup_error(self.flags, pline, line)),
            std::cmp::Ordering::Greater => {
                self.sorted = false;
                Ok(())
            }
        }
    }
}

/// Check sizes and duplicates; return whether the records are strictly
/// ascending in the database's order (then they can be appended).
fn validate_section(p: &Parsed, s: &Section) -> Result<bool, InputError> {
    let dupsort = s.flags & 0x04 != 0;
    let mut rc = RecordCheck::new(s.flags);
    for (i, r) in s.records.iter().enumerate() {
        let prev = (i > 0).then(|| {
            let q = &s.records[i - 1];
            (p.key(q), p.value(q), q.3)
        });
        rc.check(p.key(r), p.value(r), r.3, prev)?;
    }
    let sorted = rc.sorted;
    if !sorted {
        // Unsorted input: find duplicates with a set of slices.
        let mut seen: HashSet<(&[u8], &[u8]), _> = HashSet::with_capacity(s.records.len());
        let mut first_line = std::collections::HashMap::new();
        for r in &s.records {
            let item = (p.key(r), if dupsort { p.value(r) } else { &[][..] });
            if !seen.insert(item) {
                let first = *first_line.get(&item).unwrap_or(&0u32);
                return Err(dup_error(s.flags, first, r.3));
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

fn dup_error(flags: u32, first: u32, again: u32) -> InputError {
    let what = if flags & 0x04 != 0 {
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
    /// The load's last commit, or, when that transaction wrote nothing, the
    /// id the store had when it began (another process may have committed
    /// since).
    pub txnid: u64,
    /// The store did not exist before this load.
    pub created: bool,
    /// Layout of the store: `lmdb`, `dlmdb-v1` or `dlmdb-v2`.
    pub layout: Layout,
    /// Input lines read.
    pub input_lines: usize,
    pub databases: Vec<LoadedDb>,
    /// "single transaction" (an existing store) or "temporary store, renamed
    /// into place" (a new one): everything or nothing is written either way.
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

/// Load the input, streamed: into a temporary store renamed into place
/// when PATH is new, else in one write transaction.
pub fn load(opts: &LoadOptions) -> Result<LoadReport> {
    let r = if is_new_target(&opts.path) {
        load_new(opts)
    } else {
        load_existing(opts)
    };
    // A load stopped by SIGINT may fail on something else first (its input
    // cut short, a read interrupted): it reports the interrupt.
    if r.is_err() {
        check_interrupt()?;
    }
    r
}

/// A new store: streamed into `.NAME.dlmdb-load-PID` beside PATH, renamed
/// into place after the last commit; removed on any failure or SIGINT.
fn load_new(opts: &LoadOptions) -> Result<LoadReport> {
    let src = opts
        .file
        .as_ref()
        .map_or("<stdin>".to_string(), |f| f.display().to_string());
    let no_subdir = opts.no_subdir && !opts.path.is_dir();
    let temp = temp_beside(&opts.path);
    remove_store(&temp, no_subdir);
    let target = Target::New {
        temp: &temp,
        no_subdir,
    };
    let r = stream(opts, target, &src).and_then(|rep| {
        check_interrupt()?;
        std::fs::rename(&temp, &opts.path)
            .with_context(|| format!("cannot rename {} into place", temp.display()))?;
        if no_subdir {
            remove_store(&temp, true); // its lock file
        } else {
            // A lock file is recreated by the next open.
            let _ = std::fs::remove_file(opts.path.join("lock.mdb"));
        }
        Ok(rep)
    });
    if r.is_err() {
        remove_store(&temp, no_subdir);
    }
    r
}

/// An existing store: streamed into one write transaction whose reusable
/// pages are saved to an undo file first; if the load fails, the pages it
/// wrote inside the old length are written back and the file is cut back
/// to its length before the load.
fn load_existing(opts: &LoadOptions) -> Result<LoadReport> {
    let src = opts
        .file
        .as_ref()
        .map_or("<stdin>".to_string(), |f| f.display().to_string());
    let mut undo = None;
    let r = stream(opts, Target::Existing { undo: &mut undo }, &src);
    if r.is_err() {
        if let Some(u) = &undo {
            u.restore(opts);
        }
    }
    r
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
    let (dir, prefix) = hidden_beside(path, "dlmdb-load");
    dir.join(format!("{prefix}{}", std::process::id()))
}

/// The directory holding `path` and the prefix `.NAME.TAG-` of the
/// scratch files a load keeps there (the process id completes the name).
fn hidden_beside(path: &Path, tag: &str) -> (PathBuf, String) {
    let name = path
        .file_name()
        .map_or_else(|| "store".into(), |n| n.to_string_lossy().into_owned());
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    (parent, format!(".{name}.{tag}-"))
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

/// Open the existing store at `opts.path` for one load transaction, with
/// a map of at least `map_size` bytes.
fn open_existing(opts: &LoadOptions, map_size: u64) -> Result<Env> {
    let no_subdir = opts.path.is_file();
    let data_file = crate::store::data_file_of(&opts.path);
    let mut flags = if no_subdir {
        EnvFlags::NO_SUB_DIR
    } else {
        EnvFlags::empty()
    };
    let lock = crate::stat::open_options(opts.layout);
    if lock.no_lock {
        bail!("--no-lock is for read-only commands; load writes");
    }
    flags |= match lock.lock_format {
        dlmdb::LockFormat::Auto => EnvFlags::empty(),
        dlmdb::LockFormat::V1 => EnvFlags::LOCK_V1,
        dlmdb::LockFormat::V2 => EnvFlags::LOCK_V2,
    };
    if let Some(note) = crate::util::unsupported_format_note(&data_file) {
        bail!(note);
    }
    match dlmdb::read_data_version(&data_file) {
        Some(2) => {
            if opts.format == NewFormat::Lmdb {
                return Err(fail(
                    Kind::Refused,
                    "this is a DLMDB version-2 store; --format lmdb only applies to new stores",
                ));
            }
        }
        // Auto: the engine decides from the file (no evidence: stock).
        Some(1) => match opts.layout {
            LayoutChoice::Dlmdb => flags |= EnvFlags::FORMAT_DLMDB_V1,
            LayoutChoice::Lmdb => flags |= EnvFlags::FORMAT_LMDB,
            LayoutChoice::Auto => {}
        },
        _ => return Err(crate::store::not_a_store(&data_file)),
    }
    let mut env = Env::builder()
        .flags(flags)
        .max_dbs(MAX_DBS)
        .open(&opts.path)
        .context("cannot open the store for writing")?;
    let have = env.info()?.map_size;
    if map_size > have {
        env.set_map_size(map_size as usize)
            .with_context(|| format!("cannot set the map size to {map_size}"))?;
    }
    Ok(env)
}

/// Named databases a streamed load can open: the input's count is not
/// known before it has been read.
const MAX_DBS: u32 = 32_000;

/// Map size for loading `input_len` bytes of dump text into a store whose
/// data file has `existing` bytes, in one transaction: the transaction may
/// copy every page of the store (copy-on-write) and store each input byte
/// with at most 4x overhead (small records: page and node headers; the
/// duplicate-tracking database of a merge doubles it); `None` (standard
/// input) allows a fixed 64 GiB of growth.
fn one_txn_map_size(existing: u64, input_len: Option<u64>) -> u64 {
    let growth = input_len.map_or(64 << 30, |n| 8 * n);
    (2 * existing + growth + (16 << 20)).div_ceil(1 << 20) << 20
}

/// Where a streamed load writes.
enum Target<'a> {
    /// A new store at a temporary path, committed every
    /// [`LoadOptions::commit_bytes`] of input.
    New { temp: &'a Path, no_subdir: bool },
    /// The existing store at `opts.path`, in one write transaction; `undo`
    /// receives the saved pages once that transaction has begun.
    Existing { undo: &'a mut Option<undo::Undo> },
}

/// How the records of one input block written into a database that held
/// records before the load are told apart from the input's own
/// duplicates: the store cannot say whether a key it finds was there
/// before or came earlier in the input, so the input's items are recorded
/// as they are written: in memory up to [`SEEN_MEMORY_BYTES`], then in a
/// scratch database of the same transaction (deleted before the commit),
/// so memory stays bounded. When the main database cannot hold a named
/// database (it has DUPSORT, INTEGERKEY or REVERSEKEY), the set stays in
/// memory.
struct Seen {
    /// The items so far, each as key length (2 bytes), key, and for
    /// DUPSORT the value; empty once they moved to `db`.
    memory: HashSet<Vec<u8>>,
    memory_bytes: usize,
    /// Past this many bytes the items move to `db`.
    memory_cap: usize,
    db: Option<dlmdb::Database>,
    /// Index of the input block (names the scratch database).
    index: usize,
    dupsort: bool,
}

/// Bytes of items a [`Seen`] set keeps in memory before moving them to a
/// scratch database.
const SEEN_MEMORY_BYTES: usize = 32 << 20;

impl Seen {
    fn new(index: usize, flags: u32, memory_cap: usize) -> Seen {
        Seen {
            memory: HashSet::new(),
            memory_bytes: 0,
            memory_cap,
            db: None,
            index,
            dupsort: flags & 0x04 != 0,
        }
    }

    /// Record the item; `false` if the input gave it before. `scratch`
    /// collects the scratch databases made, to be deleted before commit.
    fn insert(
        &mut self,
        txn: &mut dlmdb::RwTxn<'_>,
        k: &[u8],
        v: &[u8],
        scratch: &mut Vec<dlmdb::Database>,
    ) -> Result<bool> {
        if let Some(db) = self.db {
            return self.put(txn, db, k, v);
        }
        // Key length first, so (key, value) splits one way only.
        let mut item = Vec::with_capacity(2 + k.len() + v.len());
        item.extend_from_slice(&(k.len() as u16).to_be_bytes());
        item.extend_from_slice(k);
        if self.dupsort {
            item.extend_from_slice(v);
        }
        let size = item.len() + 32;
        if !self.memory.insert(item) {
            return Ok(false);
        }
        self.memory_bytes += size;
        if self.memory_bytes > self.memory_cap {
            if let Some(db) = self.scratch_db(txn) {
                scratch.push(db);
                for item in std::mem::take(&mut self.memory) {
                    let klen = usize::from(u16::from_be_bytes([item[0], item[1]]));
                    let (k, v) = item[2..].split_at(klen);
                    self.put(txn, db, k, v)?;
                }
                self.db = Some(db);
                self.memory_bytes = 0;
            }
        }
        Ok(true)
    }

    fn put(
        &self,
        txn: &mut dlmdb::RwTxn<'_>,
        db: dlmdb::Database,
        k: &[u8],
        v: &[u8],
    ) -> Result<bool> {
        let (data, f) = if self.dupsort {
            (v, WriteFlags::NO_DUP_DATA)
        } else {
            (&b"+"[..], WriteFlags::NO_OVERWRITE)
        };
        match txn.put(db, k, data, f) {
            Ok(()) => Ok(true),
            Err(dlmdb::Error::KeyExist) => Ok(false),
            Err(e) => Err(anyhow!(e).context("cannot track the input's items")),
        }
    }

    /// A new, empty scratch database named after this process, or `None`
    /// when the main database cannot hold one.
    fn scratch_db(&self, txn: &dlmdb::RwTxn<'_>) -> Option<dlmdb::Database> {
        let main_plain = txn
            .open_db(None)
            .and_then(|m| txn.db_flags(m))
            .is_ok_and(|f| f.bits() & 0x7fff & !(0x80 | 0x100) == 0);
        if !main_plain {
            return None;
        }
        let name = format!(".dlmdb-load-seen-{}-{}", std::process::id(), self.index);
        let flags = if self.dupsort {
            DatabaseFlags::DUP_SORT
        } else {
            DatabaseFlags::empty()
        };
        let db = txn.create_db(Some(&name), flags).ok()?;
        txn.stat(db).is_ok_and(|s| s.entries == 0).then_some(db)
    }
}

/// One event of a streamed input.
enum Event {
    /// A database block starts (its header has been read).
    Section {
        name: Option<String>,
        flags: u32,
        first_line: usize,
    },
    /// A record; its bytes are in the reader's `key` and `value`, its key on `line`.
    Record { line: usize },
    /// The input ended cleanly.
    End,
}

/// Reads a dump (or plain text with `-T`) line by line from a stream,
/// keeping one record in memory.
struct DumpReader<R: std::io::BufRead> {
    input: R,
    line: Vec<u8>,
    no: usize,
    plain_text: bool,
    skip_unknown: bool,
    stock_target: bool,
    name: Option<String>,
    in_records: bool,
    print: bool,
    flags: u32,
    sections: usize,
    mapsize: Option<u64>,
    warnings: Vec<String>,
    /// Bytes read so far (for the progress bar).
    bytes: u64,
    key: Vec<u8>,
    value: Vec<u8>,
}

impl<R: std::io::BufRead> DumpReader<R> {
    fn new(input: R, opts: &LoadOptions, stock_target: bool) -> DumpReader<R> {
        DumpReader {
            input,
            line: Vec::with_capacity(1 << 12),
            no: 0,
            plain_text: opts.plain_text,
            skip_unknown: opts.skip_unknown,
            stock_target,
            name: opts.subdb.clone(),
            in_records: false,
            print: false,
            flags: 0,
            sections: 0,
            mapsize: None,
            warnings: Vec::new(),
            bytes: 0,
            key: Vec::new(),
            value: Vec::new(),
        }
    }

    /// The next line without its `\n` in `self.line`; `false` at the end.
    fn read_line(&mut self) -> Result<bool> {
        self.line.clear();
        let n = self
            .input
            .read_until(b'\n', &mut self.line)
            .context("cannot read the input")?;
        if n == 0 {
            return Ok(false);
        }
        self.bytes += n as u64;
        self.no += 1;
        if self.line.last() == Some(&b'\n') {
            self.line.pop();
        }
        Ok(true)
    }

    fn decode(&mut self, into_value: bool) -> Result<(), InputError> {
        let out = if into_value {
            &mut self.value
        } else {
            &mut self.key
        };
        out.clear();
        let r = if self.plain_text {
            print_decode_into(out, &self.line, 1)
        } else if self.print {
            print_decode_into(out, &self.line[1..], 2)
        } else {
            hex_decode_into(out, &self.line[1..], 2)
        };
        r.map_err(|e| err(self.no, e.to_string()))
    }

    fn next(&mut self) -> Result<Event> {
        if self.plain_text {
            if self.sections == 0 {
                self.sections = 1;
                return Ok(Event::Section {
                    name: self.name.clone(),
                    flags: 0,
                    first_line: 1,
                });
            }
            if !self.read_line()? {
                return Ok(Event::End);
            }
            self.decode(false)?;
            let kline = self.no;
            check_key(&self.key, kline, "key")?;
            if !self.read_line()? {
                return Err(err(kline, "key without a value line (input ends after it)").into());
            }
            self.decode(true)?;
            return Ok(Event::Record { line: kline });
        }
        loop {
            if !self.in_records {
                // Header of the next block.
                let (mut flags, mut print, mut first_line) = (0u32, false, 0usize);
                let mut name = self.name.clone();
                let mut ended = false;
                while self.read_line()? {
                    let no = self.no;
                    if first_line == 0 {
                        first_line = no;
                    }
                    if self.line == b"HEADER=END" {
                        ended = true;
                        break;
                    }
                    if self.line.first() == Some(&b' ') {
                        return Err(err(no, "record line before HEADER=END").into());
                    }
                    let mut mapsize = self.mapsize;
                    let line = std::mem::take(&mut self.line);
                    let r = header_line(
                        &line,
                        no,
                        &mut Header {
                            flags: &mut flags,
                            print: &mut print,
                            name: &mut name,
                            mapsize: &mut mapsize,
                        },
                        self.skip_unknown,
                        self.stock_target,
                        &mut self.warnings,
                    );
                    self.line = line;
                    r?;
                    self.mapsize = mapsize;
                }
                if !ended {
                    if first_line == 0 && self.sections > 0 {
                        return Ok(Event::End);
                    }
                    return Err(err(self.no.max(1), "input ends before HEADER=END").into());
                }
                self.name = name.clone();
                self.print = print;
                self.flags = flags;
                self.in_records = true;
                self.sections += 1;
                return Ok(Event::Section {
                    name,
                    flags,
                    first_line,
                });
            }
            if !self.read_line()? {
                return Err(err(self.no, "input ends before DATA=END (truncated?)").into());
            }
            if self.line.first() != Some(&b' ') {
                if self.line == b"DATA=END" {
                    self.in_records = false;
                    continue;
                }
                return Err(err(
                    self.no,
                    "expected a record line (starting with a space) or DATA=END",
                )
                .into());
            }
            self.decode(false)?;
            let kline = self.no;
            check_key(&self.key, kline, "key")?;
            if !self.read_line()? {
                return Err(err(kline, "key without a value line (input ends after it)").into());
            }
            if self.line.first() != Some(&b' ') {
                return Err(err(self.no, format!("key on line {kline} has no value line")).into());
            }
            self.decode(true)?;
            if self.flags & 0x04 != 0 {
                check_key(&self.value, self.no, "duplicate value")?;
            }
            return Ok(Event::Record { line: kline });
        }
    }
}

/// Input bytes between commits of a streamed load: the dirty pages of one
/// transaction stay in memory until it commits, so this bounds them.
const STREAM_COMMIT_BYTES: u64 = 64 << 20;

/// Load while reading the input: records are checked and written as they
/// are read, so memory holds one record whatever the input size.
///
/// - Into a new store at a temporary path: committed every
///   [`STREAM_COMMIT_BYTES`] of input (the store is not visible under its
///   name until the caller renames it).
/// - Into an existing store: one write transaction, committed after the
///   last record, aborted on any error or SIGINT; its dirty pages are the
///   engine's to bound.
///
/// Duplicates are found by the store being written: `MDB_NOOVERWRITE` /
/// `MDB_NODUPDATA` into a database that started empty, and a [`Seen`] set
/// for a database that held records before the load.
fn stream(opts: &LoadOptions, mut target: Target<'_>, src: &str) -> Result<LoadReport> {
    let existing = matches!(target, Target::Existing { .. });
    let (input, total): (Box<dyn std::io::BufRead>, Option<u64>) = match &opts.file {
        Some(f) => {
            let file =
                std::fs::File::open(f).with_context(|| format!("cannot read {}", f.display()))?;
            let len = file.metadata().ok().map(|m| m.len());
            (
                Box::new(std::io::BufReader::with_capacity(1 << 20, file)),
                len,
            )
        }
        None => (
            Box::new(std::io::BufReader::with_capacity(1 << 20, std::io::stdin())),
            None,
        ),
    };
    let stock = if existing {
        target_is_stock(opts)
    } else {
        opts.format == NewFormat::Lmdb
    };
    let mut rd = DumpReader::new(input, opts, stock);
    let in_input = |e: anyhow::Error| -> anyhow::Error {
        match e.downcast::<InputError>() {
            Ok(ie) => fail(Kind::Input, format!("{src}: {ie}; nothing was written")),
            Err(e) => e,
        }
    };
    // The first header tells the map size the dump was taken with: the new
    // store keeps it (as stock mdb_load does) unless the data needs more.
    let mut pending = Some(rd.next().map_err(in_input)?);
    let mut env = match &target {
        &Target::New { temp, no_subdir } => {
            if !no_subdir {
                std::fs::create_dir_all(temp)
                    .with_context(|| format!("cannot create directory {}", temp.display()))?;
            }
            let mut flags = EnvFlags::NO_SYNC;
            if no_subdir {
                flags |= EnvFlags::NO_SUB_DIR;
            }
            if stock {
                flags |= EnvFlags::FORMAT_LMDB;
            }
            let map_size = rd.mapsize.unwrap_or(1 << 30).max(1 << 20);
            Env::builder()
                .flags(flags)
                .max_dbs(MAX_DBS)
                .map_size(map_size as usize)
                .open(temp)
                .context("cannot create the store")?
        }
        Target::Existing { .. } => {
            let len = std::fs::metadata(crate::store::data_file_of(&opts.path))
                .map(|m| m.len())
                .unwrap_or(0);
            let want = one_txn_map_size(len, total).max(rd.mapsize.unwrap_or(0));
            open_existing(opts, want)?
        }
    };
    let bar = match total {
        Some(t) => crate::progress::bar(
            t,
            8 << 20,
            opts.quiet,
            "loading {bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        ),
        None => None,
    };
    let mut dbs: Vec<LoadedDb> = Vec::new();
    let mut named_seen = false;
    let mut main_reverse: Option<usize> = None;
    // The database being loaded, its record rules, its records so far, and
    // (a database that held records before the load, without -N) the
    // input's items seen in it.
    let mut cur: Option<(dlmdb::Database, RecordCheck, usize, Option<Seen>)> = None;
    // Scratch databases of the Seen sets, deleted before the commit.
    let mut scratch: Vec<dlmdb::Database> = Vec::new();
    let mut prev: (Vec<u8>, Vec<u8>, u32) = (Vec::new(), Vec::new(), 0);
    let mut txn_start = 0u64;
    // The id each of the load's transactions left the store at (`LoadReport::txnid`).
    let mut txnid = 0u64;
    let mut records = 0u64;
    let mut done = false;
    let commit_bytes = opts.commit_bytes.max(1);
    while !done {
        // Room for one more transaction: in the worst case (keys in random
        // order) it copies every page of the tree (copy-on-write) and adds
        // its own records, whose input text is at least as long as their
        // bytes and which pages hold with less than 2x overhead. So a
        // transaction reads at most a quarter of what the map has beyond
        // twice the used pages; when that is under 1 MiB the map grows
        // (between transactions, never inside one).
        let info = env.info()?;
        let psize = u64::from(env.stat()?.page_size);
        let used = (info.last_pgno + 1) * psize;
        let mut budget = info.map_size.saturating_sub(2 * used);
        if budget < (4 << 20) && !existing {
            let want = (info.map_size * 2).max(2 * used + 4 * commit_bytes + (4 << 20));
            env.set_map_size(want as usize)
                .with_context(|| format!("cannot set the map size to {want}"))?;
            budget = want - 2 * used;
        }
        // An existing store is loaded in one transaction.
        let chunk = if existing {
            u64::MAX
        } else {
            commit_bytes.min(budget / 4).max(1)
        };
        let mut txn = env
            .write_txn()
            .context("cannot begin a write transaction")?;
        if let Target::Existing { undo: slot } = &mut target {
            if slot.is_none() {
                let data_file = crate::store::data_file_of(&opts.path);
                **slot = Some(undo::Undo::save(&env, txn.id(), &data_file)?);
            }
        }
        // Reopen the current database in this transaction.
        if let Some((db, _, _, _)) = &mut cur {
            let d = dbs.last().expect("a database is being loaded");
            *db = txn
                .open_db(d.name.as_deref())
                .context(InDatabase::of(d.name.as_deref()))?;
        }
        loop {
            if rd.bytes - txn_start >= chunk {
                break;
            }
            let ev = match pending.take() {
                Some(ev) => ev,
                None => rd.next().map_err(in_input)?,
            };
            match ev {
                Event::End => {
                    done = true;
                    break;
                }
                Event::Section {
                    name,
                    flags,
                    first_line,
                } => {
                    if name.is_some() {
                        named_seen = true;
                    } else if flags & 0x02 != 0 {
                        main_reverse = Some(first_line);
                    }
                    if let (Some(l), true) = (main_reverse, named_seen) {
                        return Err(in_input(err(l, REVERSE_MAIN).into()));
                    }
                    let want = DatabaseFlags::from_bits_retain(flags);
                    let db = txn
                        .create_db(name.as_deref(), want)
                        .with_context(|| format!("input line {first_line}: cannot create"))
                        .context(InDatabase::of(name.as_deref()))?;
                    let have = txn.db_flags(db)?.bits() & 0x7fff;
                    let earlier = dbs.iter().any(|d| d.name == name);
                    if have != flags && existing && !earlier {
                        return Err(fail(
                            Kind::Refused,
                            format!(
                                "input line {first_line}: flags differ: it exists with flags {:#x} ({}) but the input says {:#x} ({}); nothing was written",
                                have,
                                crate::stat::flag_names(DatabaseFlags::from_bits_retain(have)).join(","),
                                flags,
                                crate::stat::flag_names(want).join(",")
                            ),
                        ))
                        .context(InDatabase::of(name.as_deref()));
                    }
                    if have != flags {
                        return Err(fail(
                            Kind::Refused,
                            format!(
                                "input line {first_line}: the input names this database twice, with flags {have:#x} and {flags:#x}; nothing was written"
                            ),
                        ))
                        .context(InDatabase::of(name.as_deref()));
                    }
                    if let Some(d) = dbs.iter().find(|d| d.name == name) {
                        return Err(fail(
                            Kind::Input,
                            format!(
                                "{src}: line {first_line}: a second block for {}; nothing was written",
                                InDatabase::of(d.name.as_deref())
                            ),
                        ));
                    }
                    dbs.push(LoadedDb {
                        name,
                        flags: crate::stat::flag_names(want),
                        records: 0,
                        written: 0,
                        skipped: 0,
                        appended: true,
                    });
                    let held = txn.stat(db)?.entries > 0;
                    let seen = (held && !opts.no_overwrite)
                        .then(|| Seen::new(dbs.len(), flags, opts.seen_memory_bytes));
                    let d = dbs.last_mut().expect("just pushed");
                    d.appended = !held;
                    cur = Some((db, RecordCheck::new(flags), 0, seen));
                }
                Event::Record { line } => {
                    let Some((db, check, n, seen)) = &mut cur else {
                        unreachable!("records follow a section")
                    };
                    let line32 = line as u32;
                    let p = (*n > 0).then_some((&prev.0[..], &prev.1[..], prev.2));
                    check
                        .check(&rd.key, &rd.value, line32, p)
                        .map_err(|e| in_input(e.into()))?;
                    if main_reverse.is_some() && dbs.last().is_some_and(|d| d.name.is_none()) {
                        return Err(in_input(
                            err(main_reverse.unwrap_or(1), REVERSE_MAIN).into(),
                        ));
                    }
                    let dupsort = check.dupsort();
                    let mut f = if dupsort {
                        WriteFlags::NO_DUP_DATA
                    } else {
                        WriteFlags::NO_OVERWRITE
                    };
                    if let Some(seen) = seen {
                        // A merge: the input's own duplicates are refused,
                        // records that were in the store are replaced.
                        if !seen.insert(&mut txn, &rd.key, &rd.value, &mut scratch)? {
                            return Err(in_input(duplicate(line, dupsort).into()));
                        }
                        f = WriteFlags::empty();
                    }
                    let append = check.sorted && dbs.last().is_some_and(|d| d.appended);
                    if append {
                        f |= if dupsort && *n > 0 && prev.0 == rd.key {
                            WriteFlags::APPEND_DUP
                        } else {
                            WriteFlags::APPEND
                        };
                    }
                    let d = dbs.last_mut().expect("a database is being loaded");
                    d.records += 1;
                    d.appended &= append;
                    match txn.put(*db, &rd.key, &rd.value, f) {
                        Ok(()) => d.written += 1,
                        Err(dlmdb::Error::KeyExist) if opts.no_overwrite => d.skipped += 1,
                        Err(dlmdb::Error::KeyExist) => {
                            return Err(in_input(duplicate(line, dupsort).into()))
                        }
                        Err(e) => {
                            return Err(anyhow!(e))
                                .with_context(|| {
                                    format!("writing the record of input line {line} failed; nothing was written")
                                })
                                .context(InDatabase::of(d.name.as_deref()))
                        }
                    }
                    prev.0.clear();
                    prev.0.extend_from_slice(&rd.key);
                    prev.1.clear();
                    prev.1.extend_from_slice(&rd.value);
                    prev.2 = line32;
                    *n += 1;
                    records += 1;
                    if records.is_multiple_of(8192) {
                        check_interrupt()?;
                        if let Some(b) = &bar {
                            b.set_position(rd.bytes);
                        }
                    }
                }
            }
        }
        check_interrupt()?;
        if done {
            for db in scratch.drain(..) {
                txn.drop_db(db)
                    .context("cannot delete the duplicate-tracking database")?;
            }
        }
        // Asked before the commit: once it has returned, another writer may
        // commit before the store could be asked.
        txnid = if txn.changed() {
            txn.id()
        } else {
            txn.id() - 1
        };
        txn.commit().context("commit failed; nothing was written")?;
        txn_start = rd.bytes;
    }
    if dbs.is_empty() {
        return Err(fail(
            Kind::Input,
            format!("{src}: the input holds no database"),
        ));
    }
    if !existing {
        env.sync(true).context("cannot sync the new store")?;
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    for w in &rd.warnings {
        eprintln!("dlmdb: {src}: {w}");
    }
    Ok(LoadReport {
        path: opts.path.display().to_string(),
        txnid,
        created: !existing,
        layout: env.layout(),
        input_lines: rd.no,
        databases: dbs,
        strategy: if existing {
            "single transaction"
        } else {
            "temporary store, renamed into place"
        },
        warnings: rd.warnings.clone(),
    })
}

const REVERSE_MAIN: &str = "reversekey=1 on the main database with records or named databases: the main database holds the database names in the default order";

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
