//! `dlmdb get`: the value of one key (every value of it in a DUPSORT
//! database), read-only.

use crate::error::{fail, InDatabase, Kind};
use crate::report::DbHead;
use crate::stat::{open_env, LayoutChoice};
use crate::util::{encode_into, hex, parse_arg, printable, DbArgs, OutputFormat};
use anyhow::{Context, Result};
use dlmdb::{CursorOp, DatabaseFlags};
use std::io::Write;

/// Print the value of one key (all its values in a DUPSORT database).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  dlmdb get ./db alice\n  dlmdb get ./db -s users --hex 616c696365\n  dlmdb get ./db -s tags red --json"
)]
pub struct GetArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// The key (its bytes as typed; hex digits with --hex).
    pub key: String,
    /// The key is given in hex.
    #[arg(long)]
    pub hex: bool,
    /// How values are written: text (printable escapes), hex, or raw bytes.
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The `--json` object of `dlmdb get`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GetReport {
    #[serde(flatten)]
    pub head: DbHead,
    /// Printable form and hex of the key.
    pub key: String,
    pub key_hex: String,
    /// One value, or every duplicate in order for a DUPSORT database.
    pub values: Vec<Value>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Value {
    /// Printable form (`\hh` escapes).
    pub value: String,
    pub value_hex: String,
}

/// Look the key up; a missing key is a `not_found` error (exit status 1).
pub fn get(opts: &GetArgs, layout: LayoutChoice) -> Result<(GetReport, Vec<Vec<u8>>)> {
    crate::store::precheck_complete(&opts.db.path)?;
    let key = parse_arg(&opts.key, opts.hex)?;
    let env = open_env(&opts.db.path, layout)?.env;
    let txn = env.read_txn()?;
    let name = opts.db.subdb.as_deref();
    let db = crate::error::open_db(&txn, name)?;
    let dupsort = txn.db_flags(db)?.contains(DatabaseFlags::DUP_SORT);
    let mut values = Vec::new();
    let mut cur = txn.cursor(db)?;
    let mut op = CursorOp::SetKey;
    let mut k = Some(key.as_slice());
    while let Some((_, v)) = cur.get_ref(k, None, op).context(InDatabase::of(name))? {
        values.push(v.to_vec());
        if !dupsort {
            break;
        }
        op = CursorOp::NextDup;
        k = None;
    }
    if values.is_empty() {
        return Err(fail(
            Kind::NotFound,
            format!("key {:?} not found", printable(&key)),
        ))
        .context(InDatabase::of(name));
    }
    let report = GetReport {
        head: DbHead::new(&opts.db.path, &env, txn.id(), name),
        key: printable(&key),
        key_hex: hex(&key),
        values: values
            .iter()
            .map(|v| Value {
                value: printable(v),
                value_hex: hex(v),
            })
            .collect(),
    };
    Ok((report, values))
}

pub fn run(a: GetArgs, layout: LayoutChoice) -> Result<()> {
    let (report, values) = get(&a, layout)?;
    if a.json {
        println!("{}", crate::report::to_json("get", &report)?);
        return Ok(());
    }
    let mut out = Vec::new();
    for v in &values {
        encode_into(&mut out, v, a.format);
        if a.format != OutputFormat::Raw {
            out.push(b'\n');
        }
    }
    std::io::stdout().lock().write_all(&out)?;
    Ok(())
}
