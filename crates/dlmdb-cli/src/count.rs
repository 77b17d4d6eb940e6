//! `dlmdb count` and `dlmdb rank`: DLMDB's order statistics on COUNTED
//! databases, with an exact cursor-scan fallback for other databases.

use crate::error::{fail, InDatabase, Kind};
use crate::report::DbHead;
use crate::stat::{open_env_warned, LayoutChoice};
use crate::util::{hex, parse_arg, printable, DbArgs};
use anyhow::{Context, Result};
use dlmdb::{CountFlags, Database, DatabaseFlags, RoTxn};
use std::cmp::Ordering;
use std::path::PathBuf;

/// Text form of bytes: hex with `--hex`, else the dump's printable form.
pub fn show(b: &[u8], as_hex: bool) -> String {
    if as_hex {
        hex(b)
    } else {
        printable(b)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CountMode {
    /// Entries: every key/value pair (each duplicate counts).
    Entries,
    /// Distinct keys.
    Keys,
}

#[derive(Debug, Clone)]
pub struct CountOptions {
    pub path: PathBuf,
    pub subdb: Option<String>,
    pub from: Option<Vec<u8>>,
    pub to: Option<Vec<u8>>,
    pub include_from: bool,
    pub include_to: bool,
    pub mode: CountMode,
    pub hex: bool,
    pub layout: LayoutChoice,
}

/// The `--json` object of `dlmdb count`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CountReport {
    #[serde(flatten)]
    pub head: DbHead,
    pub mode: CountMode,
    /// Lower bound as given (`null` = unbounded) and whether it is included.
    pub from: Option<String>,
    pub include_from: bool,
    pub to: Option<String>,
    pub include_to: bool,
    pub count: u64,
    /// `counted` (O(log n) through the engine's count API) or `scan` (cursor walk).
    pub method: &'static str,
    /// Why a scan was used, if it was.
    pub note: Option<String>,
}

/// How the notes name the database (errors name it through [`InDatabase`]).
fn db_label(name: Option<&str>) -> String {
    match name {
        Some(n) => format!("database {n:?}"),
        None => "the main database".into(),
    }
}

pub fn count(opts: &CountOptions) -> Result<CountReport> {
    let env = open_env_warned(&opts.path, opts.layout)?;
    let txn = env.read_txn()?;
    let name = opts.subdb.as_deref();
    let label = db_label(name);
    let db = crate::error::open_db(&txn, name)?;
    let flags = txn.db_flags(db)?;
    let (lo, hi) = (opts.from.as_deref(), opts.to.as_deref());
    let mut cf = CountFlags::empty();
    if opts.include_from {
        cf |= CountFlags::LOWER_INCL;
    }
    if opts.include_to {
        cf |= CountFlags::UPPER_INCL;
    }
    let dupsort = flags.contains(DatabaseFlags::DUP_SORT);
    let (count, method, note) = if flags.contains(DatabaseFlags::COUNTED) {
        let r = match (opts.mode, dupsort) {
            (CountMode::Keys, _) => txn.range_count_keys(db, lo, hi, cf),
            (CountMode::Entries, true) => txn.range_count_values(db, lo, hi, cf),
            (CountMode::Entries, false) => txn.count_range(db, lo, hi, cf),
        };
        let n = r.context("count failed").context(InDatabase::of(name))?;
        (n, "counted", None)
    } else {
        let n = scan_count(&txn, db, opts)
            .context("scan failed")
            .context(InDatabase::of(name))?;
        (
            n,
            "scan",
            Some(format!(
                "{label} is not MDB_COUNTED: counted by an exact cursor scan (O(n))"
            )),
        )
    };
    Ok(CountReport {
        head: DbHead::new(&opts.path, &env, txn.id(), name),
        mode: opts.mode,
        from: opts.from.as_deref().map(|b| show(b, opts.hex)),
        include_from: opts.include_from,
        to: opts.to.as_deref().map(|b| show(b, opts.hex)),
        include_to: opts.include_to,
        count,
        method,
        note,
    })
}

/// Exact count by walking the range with a cursor (engine comparator).
fn scan_count(txn: &RoTxn<'_>, db: Database, opts: &CountOptions) -> Result<u64> {
    let mut cur = txn.cursor(db)?;
    let iter = match &opts.from {
        Some(k) => cur.iter_from(k),
        None => cur.iter(),
    };
    let mut n = 0u64;
    let mut last_key: Option<Vec<u8>> = None;
    for item in iter {
        let (k, _) = item?;
        if let Some(f) = &opts.from {
            if !opts.include_from && txn.cmp_keys(db, &k, f) == Ordering::Equal {
                continue;
            }
        }
        if let Some(t) = &opts.to {
            match txn.cmp_keys(db, &k, t) {
                Ordering::Greater => break,
                Ordering::Equal if !opts.include_to => break,
                _ => {}
            }
        }
        if opts.mode == CountMode::Keys {
            if last_key.as_deref() == Some(&*k) {
                continue;
            }
            last_key = Some(k.to_vec());
        }
        n += 1;
    }
    Ok(n)
}

/// The count alone (the note, if any, goes to stderr: see `main.rs`).
pub fn render_count(r: &CountReport) -> String {
    format!("{}\n", r.count)
}

#[derive(Debug, Clone)]
pub enum RankQuery {
    /// Entry at this 0-based rank.
    Rank(u64),
    /// Rank of a key (first duplicate) or of an exact pair.
    Key(Vec<u8>, Option<Vec<u8>>),
}

#[derive(Debug, Clone)]
pub struct RankOptions {
    pub path: PathBuf,
    pub subdb: Option<String>,
    pub query: RankQuery,
    pub hex: bool,
    pub layout: LayoutChoice,
}

/// The `--json` object of `dlmdb rank`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RankReport {
    #[serde(flatten)]
    pub head: DbHead,
    /// 0-based rank: number of entries sorting before this one.
    pub rank: u64,
    /// Key and value (for `--key` alone: the key's first value), as hex
    /// with `--hex`, else in the dump's printable form.
    pub key: String,
    pub value: Option<String>,
    /// Always lowercase hex.
    pub key_hex: String,
    pub value_hex: Option<String>,
    /// `counted` or `scan`.
    pub method: &'static str,
    pub note: Option<String>,
}

pub fn rank(opts: &RankOptions) -> Result<RankReport> {
    let env = open_env_warned(&opts.path, opts.layout)?;
    let txn = env.read_txn()?;
    let name = opts.subdb.as_deref();
    let label = db_label(name);
    let db = crate::error::open_db(&txn, name)?;
    let counted = txn.db_flags(db)?.contains(DatabaseFlags::COUNTED);
    let note = (!counted)
        .then(|| format!("{label} is not MDB_COUNTED: answered by an exact cursor scan (O(n))"));
    let method = if counted { "counted" } else { "scan" };
    let answer = || -> Result<(u64, Vec<u8>, Option<Vec<u8>>)> {
        Ok(match &opts.query {
            RankQuery::Rank(r) => {
                let found = if counted {
                    txn.get_rank(db, *r)
                        .context("get_rank failed")?
                        .map(|(k, v)| (k.to_vec(), v.to_vec()))
                } else {
                    let mut cur = txn.cursor(db)?;
                    match cur.iter().nth(*r as usize) {
                        Some(item) => {
                            let (k, v) = item?;
                            Some((k.to_vec(), v.to_vec()))
                        }
                        None => None,
                    }
                };
                let Some((k, v)) = found else {
                    return Err(fail(Kind::NotFound, format!("no entry at rank {r}")));
                };
                (*r, k, Some(v))
            }
            RankQuery::Key(k, v) => {
                let found = if counted {
                    txn.get_key_rank(db, k, v.as_deref())
                        .context("get_key_rank failed")?
                } else {
                    scan_rank(&txn, db, k, v.as_deref())?
                };
                let Some(r) = found else {
                    let what = match v {
                        Some(v) => {
                            format!("pair {:?} / {:?}", show(k, opts.hex), show(v, opts.hex))
                        }
                        None => format!("key {:?}", show(k, opts.hex)),
                    };
                    return Err(fail(Kind::NotFound, format!("{what} not found")));
                };
                // Show the value too: the given one, or the key's first
                // (in a DUPSORT database its smallest) value, which is the
                // entry at rank `r`.
                let value = match v {
                    Some(v) => Some(v.clone()),
                    None => txn.get(db, k)?.map(<[u8]>::to_vec),
                };
                (r, k.clone(), value)
            }
        })
    };
    let (rank, key, value) = answer().context(InDatabase::of(name))?;
    Ok(RankReport {
        head: DbHead::new(&opts.path, &env, txn.id(), name),
        rank,
        key: show(&key, opts.hex),
        value: value.as_deref().map(|v| show(v, opts.hex)),
        key_hex: hex(&key),
        value_hex: value.as_deref().map(hex),
        method,
        note,
    })
}

fn scan_rank(
    txn: &RoTxn<'_>,
    db: Database,
    key: &[u8],
    data: Option<&[u8]>,
) -> Result<Option<u64>> {
    let mut cur = txn.cursor(db)?;
    for (i, item) in cur.iter().enumerate() {
        let (k, v) = item?;
        match txn.cmp_keys(db, &k, key) {
            Ordering::Less => continue,
            Ordering::Greater => return Ok(None),
            Ordering::Equal => match data {
                None => return Ok(Some(i as u64)),
                Some(d) if d == &*v => return Ok(Some(i as u64)),
                Some(_) => continue,
            },
        }
    }
    Ok(None)
}

pub fn render_rank(r: &RankReport) -> String {
    let mut s = format!("rank: {}\nkey: {}\n", r.rank, r.key);
    if let Some(v) = &r.value {
        s.push_str(&format!("value: {v}\n"));
    }
    s
}

/// Count entries or keys in a key range (COUNTED databases: O(log n)).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  dlmdb count ./db -s users\n  dlmdb count ./db -s users --from a --to m --include-to\n  dlmdb count ./db -s tags --keys --json\n  dlmdb count ./db -s ids --hex --from 00000001 --to 000000ff"
)]
pub struct CountArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Lower key bound (default: unbounded). Included unless --exclude-from.
    #[arg(long, value_name = "KEY")]
    pub from: Option<String>,
    /// Upper key bound (default: unbounded). Excluded unless --include-to.
    #[arg(long, value_name = "KEY")]
    pub to: Option<String>,
    /// Include the lower bound (the default).
    #[arg(long, overrides_with = "exclude_from")]
    pub include_from: bool,
    /// Exclude the lower bound.
    #[arg(long)]
    pub exclude_from: bool,
    /// Include the upper bound.
    #[arg(long, overrides_with = "exclude_to")]
    pub include_to: bool,
    /// Exclude the upper bound (the default).
    #[arg(long)]
    pub exclude_to: bool,
    /// Count distinct keys.
    #[arg(long, conflicts_with = "values")]
    pub keys: bool,
    /// Count entries, every duplicate value separately (the default).
    #[arg(long)]
    pub values: bool,
    /// Keys are given and shown in hex.
    #[arg(long)]
    pub hex: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Entry at a rank, or rank of a key / key+value (COUNTED databases: O(log n)).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  dlmdb rank ./db -s users --rank 0\n  dlmdb rank ./db -s users --key alice --json\n  dlmdb rank ./db -s tags --key red --value apple"
)]
pub struct RankArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// 0-based rank of the entry to show.
    #[arg(long, conflicts_with = "key", required_unless_present = "key")]
    pub rank: Option<u64>,
    /// Key whose rank to show (its first duplicate).
    #[arg(long)]
    pub key: Option<String>,
    /// With --key: rank of exactly this key/value pair.
    #[arg(long, requires = "key")]
    pub value: Option<String>,
    /// Keys and values are given and shown in hex.
    #[arg(long)]
    pub hex: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `dlmdb count`.
pub fn run_count(a: CountArgs, layout: LayoutChoice) -> Result<()> {
    let opts = CountOptions {
        path: a.db.path,
        subdb: a.db.subdb,
        from: a.from.as_deref().map(|s| parse_arg(s, a.hex)).transpose()?,
        to: a.to.as_deref().map(|s| parse_arg(s, a.hex)).transpose()?,
        include_from: !a.exclude_from || a.include_from,
        include_to: a.include_to && !a.exclude_to,
        mode: if a.keys {
            CountMode::Keys
        } else {
            CountMode::Entries
        },
        hex: a.hex,
        layout,
    };
    let _ = a.values;
    crate::store::precheck_complete(&opts.path)?;
    let r = count(&opts)?;
    print_report("count", &r, a.json, || render_count(&r), &r.note)
}

/// Print `report` of `command`: its JSON with `json`, else its text, and
/// the note (if any) on stderr.
fn print_report<R: serde::Serialize>(
    command: &str,
    report: &R,
    json: bool,
    text: impl FnOnce() -> String,
    note: &Option<String>,
) -> Result<()> {
    if json {
        println!("{}", crate::report::to_json(command, report)?);
    } else {
        print!("{}", text());
        if let Some(n) = note {
            eprintln!("dlmdb: note: {n}");
        }
    }
    Ok(())
}

/// `dlmdb rank`.
pub fn run_rank(a: RankArgs, layout: LayoutChoice) -> Result<()> {
    let query = match (a.rank, &a.key) {
        (Some(r), _) => RankQuery::Rank(r),
        (None, Some(k)) => RankQuery::Key(
            parse_arg(k, a.hex)?,
            a.value
                .as_deref()
                .map(|v| parse_arg(v, a.hex))
                .transpose()?,
        ),
        (None, None) => return Err(fail(Kind::Usage, "give --rank or --key")),
    };
    crate::store::precheck_complete(&a.db.path)?;
    let r = rank(&RankOptions {
        path: a.db.path,
        subdb: a.db.subdb,
        query,
        hex: a.hex,
        layout,
    })?;
    print_report("rank", &r, a.json, || render_rank(&r), &r.note)
}
