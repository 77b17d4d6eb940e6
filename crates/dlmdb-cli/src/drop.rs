//! `dlmdb drop`: empty a database, or delete a named one (`--delete`), in
//! one write transaction (as `mdb_drop`).

use crate::error::{fail, InDatabase, Kind};
use crate::report::DbHead;
use crate::stat::LayoutChoice;
use anyhow::{Context, Result};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Empty a named database, or delete it with --delete (like mdb_drop).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  dlmdb drop ./db -s sessions --yes\n  dlmdb drop ./db -s old --delete --yes --json"
)]
pub struct DropArgs {
    /// Environment directory or data file.
    pub path: PathBuf,
    /// The named database (default: the main database, which can only be
    /// emptied, and only when it holds no named databases).
    #[arg(short = 's', long = "subdb", value_name = "NAME")]
    pub subdb: Option<String>,
    /// Delete the database itself, not just its records.
    #[arg(short = 'd', long)]
    pub delete: bool,
    /// Do it without asking: required when standard input is a terminal.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Accepted for mdb_drop compatibility (a data file path implies it).
    #[arg(short = 'n', hide = true)]
    pub _nosubdir: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The `--json` object of `dlmdb drop`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DropReport {
    #[serde(flatten)]
    pub head: DbHead,
    /// `true`: the database was deleted; `false`: emptied.
    pub deleted: bool,
    /// Entries it held.
    pub entries: u64,
}

pub fn run(a: DropArgs, layout: LayoutChoice) -> Result<()> {
    crate::store::precheck_complete(&a.path)?;
    let name = a.subdb.as_deref();
    if name.is_none() && a.delete {
        return Err(fail(
            Kind::Refused,
            "the main database cannot be deleted (give -s NAME, or drop without --delete to empty it)",
        ));
    }
    if !a.yes && std::io::stdin().is_terminal() {
        return Err(fail(
            Kind::Refused,
            format!(
                "refusing to {} {} without --yes",
                if a.delete { "delete" } else { "empty" },
                InDatabase::of(name)
            ),
        ));
    }
    let env = crate::store::open_rw(&a.path, layout, 32_000)?;
    let mut txn = env
        .write_txn()
        .context("cannot begin a write transaction")?;
    let db = crate::error::open_db(&txn, name)?;
    let entries = txn.stat(db)?.entries;
    if name.is_none() && !txn.db_names()?.is_empty() {
        // Emptying the main database would orphan the named databases'
        // pages: no tree would reach them and no free-list record would
        // name them, so they would be lost to both.
        return Err(fail(
            Kind::Refused,
            "the main database holds named databases; drop them first",
        ))
        .context(InDatabase::of(None));
    }
    let r = if a.delete {
        txn.drop_db(db)
    } else {
        txn.clear_db(db)
    };
    r.context(InDatabase::of(name))?;
    let txnid = txn.id();
    txn.commit().context("commit failed")?;
    let report = DropReport {
        head: DbHead::new(&a.path, &env, txnid, name),
        deleted: a.delete,
        entries,
    };
    if a.json {
        println!("{}", crate::report::to_json("drop", &report)?);
    } else {
        eprintln!(
            "dlmdb: {} {} ({} entries)",
            if a.delete { "deleted" } else { "emptied" },
            InDatabase::of(name),
            entries
        );
    }
    Ok(())
}
