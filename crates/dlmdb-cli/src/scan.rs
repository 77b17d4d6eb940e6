//! `dlmdb scan`: keys or entries of one database in a key range or with a
//! prefix, forwards or backwards, from a rank (O(log n) on COUNTED
//! databases), up to a limit. Read-only, streaming (constant memory in text
//! mode).

use crate::error::{fail, InDatabase, Kind};
use crate::report::DbHead;
use crate::stat::{open_env, LayoutChoice};
use crate::util::{encode_into, hex, parse_arg, printable, DbArgs, OutputFormat};
use anyhow::{Context, Result};
use dlmdb::{CursorOp, DatabaseFlags};
use std::cmp::Ordering;
use std::io::Write;

/// List keys or entries in a key range or with a prefix, forwards or backwards.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  dlmdb scan ./db -s users --prefix a --limit 10\n  dlmdb scan ./db --from k100 --to k200 --keys-only\n  dlmdb scan ./db -s ranked --from-rank 1000000 --limit 5 --json\n  dlmdb scan ./db --reverse --limit 3 --format hex"
)]
pub struct ScanArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Lower key bound, included (unless --exclude-from).
    #[arg(long, value_name = "KEY")]
    pub from: Option<String>,
    /// Upper key bound, excluded (unless --include-to).
    #[arg(long, value_name = "KEY")]
    pub to: Option<String>,
    /// Exclude the lower bound.
    #[arg(long, requires = "from")]
    pub exclude_from: bool,
    /// Include the upper bound.
    #[arg(long, requires = "to")]
    pub include_to: bool,
    /// Only keys starting with these bytes.
    #[arg(long, value_name = "BYTES", conflicts_with_all = ["from", "to"])]
    pub prefix: Option<String>,
    /// Start at this 0-based rank (entries, every duplicate counted):
    /// O(log n) on COUNTED databases, a cursor walk elsewhere.
    #[arg(long, value_name = "N", conflicts_with_all = ["from", "to", "prefix"])]
    pub from_rank: Option<u64>,
    /// Stop after this many lines (entries, or keys with --keys-only).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Walk from the upper end down.
    #[arg(long)]
    pub reverse: bool,
    /// Distinct keys only (no values).
    #[arg(long)]
    pub keys_only: bool,
    /// Bounds and prefix are given in hex.
    #[arg(long)]
    pub hex: bool,
    /// Text lines: `KEY<TAB>VALUE` in the printable form (text) or hex.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ScanFormat,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScanFormat {
    /// Printable form (bytes 0x20-0x7e as themselves, `\\` and `\hh`).
    Text,
    /// Lowercase hex.
    Hex,
    /// One JSON object per line (`{"key", "key_hex", "value", "value_hex"}`).
    Jsonl,
}

/// The `--json` object of `dlmdb scan`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScanReport {
    #[serde(flatten)]
    pub head: DbHead,
    pub reverse: bool,
    pub keys_only: bool,
    /// Items listed.
    pub count: u64,
    /// Stopped at `--limit` with more items left.
    pub truncated: bool,
    pub items: Vec<ScanItem>,
    /// How a `--from-rank` start was found: `counted` (O(log n)) or `scan`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_method: Option<&'static str>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ScanItem {
    pub key: String,
    pub key_hex: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_hex: Option<String>,
}

/// Smallest byte string greater than every string starting with `p`
/// (lexical order), `None` when there is none (`p` is all 0xff).
fn prefix_end(p: &[u8]) -> Option<Vec<u8>> {
    let mut end = p.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Lexical key order (the default, or DLMDB's extra flags on top of it):
/// only then is a prefix a contiguous range.
fn lexical_keys(flags: DatabaseFlags) -> bool {
    !flags.intersects(DatabaseFlags::REVERSE_KEY | DatabaseFlags::INTEGER_KEY)
}

pub fn run(a: ScanArgs, layout: LayoutChoice) -> Result<()> {
    crate::store::precheck_complete(&a.db.path)?;
    crate::interrupt::watch();
    let env = open_env(&a.db.path, layout)?.env;
    let txn = env.read_txn()?;
    let name = a.db.subdb.as_deref();
    let in_db = || InDatabase::of(name);
    let db = crate::error::open_db(&txn, name)?;
    let flags = txn.db_flags(db)?;
    let dupsort = flags.contains(DatabaseFlags::DUP_SORT);
    let prefix = a
        .prefix
        .as_deref()
        .map(|p| parse_arg(p, a.hex))
        .transpose()?;
    let mut lower = a.from.as_deref().map(|s| parse_arg(s, a.hex)).transpose()?;
    let mut upper = a.to.as_deref().map(|s| parse_arg(s, a.hex)).transpose()?;
    let mut include_lower = !a.exclude_from;
    let mut include_upper = a.include_to;
    // A prefix is a range in lexical order; elsewhere every key is tested.
    let filter_prefix = match &prefix {
        Some(p) if lexical_keys(flags) => {
            lower = Some(p.clone());
            include_lower = true;
            upper = prefix_end(p);
            include_upper = false;
            None
        }
        other => other.clone(),
    };
    // `k` is on the `inside` side of `bound` (or equal to it and `include`).
    let within = |k: &[u8], bound: &Option<Vec<u8>>, include: bool, inside: Ordering| {
        bound.as_ref().is_none_or(|b| match txn.cmp_keys(db, k, b) {
            Ordering::Equal => include,
            o => o == inside,
        })
    };
    let below_upper = |k: &[u8]| within(k, &upper, include_upper, Ordering::Less);
    let above_lower = |k: &[u8]| within(k, &lower, include_lower, Ordering::Greater);
    let (step, step_key) = if a.reverse {
        (CursorOp::Prev, CursorOp::PrevNoDup)
    } else {
        (CursorOp::Next, CursorOp::NextNoDup)
    };
    let step = if a.keys_only && dupsort {
        step_key
    } else {
        step
    };
    let mut cur = txn.cursor(db)?;
    let mut rank_method = None;
    // Position on the first item in walk order.
    let first_found = if let Some(r) = a.from_rank {
        if flags.contains(DatabaseFlags::COUNTED) {
            rank_method = Some("counted");
            cur.get_rank(r).context(in_db())?.is_some()
        } else {
            rank_method = Some("scan");
            let mut ok = cur.get_ref(None, None, CursorOp::First)?.is_some();
            let mut i = 0;
            while ok && i < r {
                ok = cur.get_ref(None, None, CursorOp::Next)?.is_some();
                i += 1;
            }
            ok
        }
    } else if !a.reverse {
        match &lower {
            Some(l) => cur.get_ref(Some(l), None, CursorOp::SetRange)?.is_some(),
            None => cur.get_ref(None, None, CursorOp::First)?.is_some(),
        }
    } else {
        match &upper {
            // The first key >= upper, then back while it is out of range.
            Some(u) => match cur.get_ref(Some(u), None, CursorOp::SetRange)? {
                Some(_) => {
                    if dupsort {
                        // Start from the key's last value.
                        cur.get_ref(None, None, CursorOp::LastDup)?;
                    }
                    true
                }
                None => cur.get_ref(None, None, CursorOp::Last)?.is_some(),
            },
            None => cur.get_ref(None, None, CursorOp::Last)?.is_some(),
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut items = Vec::new();
    let mut count = 0u64;
    let mut truncated = false;
    let mut line = Vec::with_capacity(256);
    let mut op = if first_found {
        CursorOp::GetCurrent
    } else {
        step
    };
    loop {
        if !first_found {
            break;
        }
        let Some((k, v)) = cur.get_ref(None, None, op).context(in_db())? else {
            break;
        };
        op = step;
        if crate::interrupt::interrupted() {
            return Err(fail(Kind::Interrupted, "scan interrupted"));
        }
        // Out of range before the start (reverse from an excluded upper
        // bound, or a dupsort SetRange landing): skip; past the end: stop.
        let (in_start, in_end) = if a.reverse {
            (below_upper(k), above_lower(k))
        } else {
            (above_lower(k), below_upper(k))
        };
        if !in_end {
            break;
        }
        if !in_start {
            continue;
        }
        if let Some(p) = &filter_prefix {
            if !k.starts_with(p) {
                continue;
            }
        }
        if a.limit.is_some_and(|l| count >= l) {
            truncated = true;
            break;
        }
        count += 1;
        let value = (!a.keys_only).then_some(v);
        if a.json {
            items.push(ScanItem {
                key: printable(k),
                key_hex: hex(k),
                value: value.map(printable),
                value_hex: value.map(hex),
            });
            continue;
        }
        line.clear();
        match a.format {
            ScanFormat::Jsonl => {
                let item = ScanItem {
                    key: printable(k),
                    key_hex: hex(k),
                    value: value.map(printable),
                    value_hex: value.map(hex),
                };
                serde_json::to_writer(&mut line, &item)?;
            }
            ScanFormat::Text | ScanFormat::Hex => {
                let f = if a.format == ScanFormat::Hex {
                    OutputFormat::Hex
                } else {
                    OutputFormat::Text
                };
                encode_into(&mut line, k, f);
                if let Some(v) = value {
                    line.push(b'\t');
                    encode_into(&mut line, v, f);
                }
            }
        }
        line.push(b'\n');
        out.write_all(&line)?;
    }
    if a.json {
        drop(out);
        let report = ScanReport {
            head: DbHead::new(&a.db.path, &env, txn.id(), name),
            reverse: a.reverse,
            keys_only: a.keys_only,
            count,
            truncated,
            items,
            rank_method,
        };
        println!("{}", crate::report::to_json("scan", &report)?);
    } else {
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff\xff"), None);
    }
}
