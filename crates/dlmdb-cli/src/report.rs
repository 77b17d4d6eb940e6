//! The JSON envelope shared by every command's `--json` output.
//!
//! Every report is one object with `schema_version` and `command` first, then
//! the command's own fields. Field names are shared across commands: `path`
//! (the path given), `data_file`, `layout` (`lmdb`, `dlmdb-v1`, `dlmdb-v2`),
//! `txnid` (the snapshot read or the transaction written), `page_size`,
//! `database` (one database: its name, `null` = main) and `databases` (a
//! list of objects with `name`, and page counts as `depth`, `branch_pages`,
//! `leaf_pages`, `overflow_pages`, `entries`). The JSON Schema of each
//! command is in `crates/dlmdb-cli/schemas/<command>.schema.json`.

use serde::Serialize;
use std::path::Path;

/// Bumped when a field is renamed or removed (adding fields keeps it).
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Envelope<'a, T: Serialize> {
    schema_version: u32,
    command: &'a str,
    #[serde(flatten)]
    body: &'a T,
}

/// `body` as pretty JSON inside the envelope.
pub fn to_json<T: Serialize>(command: &str, body: &T) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(&Envelope {
        schema_version: SCHEMA_VERSION,
        command,
        body,
    })?)
}

/// The fields that open a one-database report (`count`, `rank`, `get`,
/// `scan`, `drop`).
#[derive(Debug, Clone, Serialize)]
pub struct DbHead {
    /// The path given.
    pub path: String,
    pub layout: String,
    /// The snapshot read (`drop`: the transaction that committed).
    pub txnid: u64,
    /// `null` = main database.
    pub database: Option<String>,
}

impl DbHead {
    pub fn new(path: &Path, env: &dlmdb::Env, txnid: u64, database: Option<&str>) -> DbHead {
        DbHead {
            path: path.display().to_string(),
            layout: env.layout().to_string(),
            txnid,
            database: database.map(str::to_owned),
        }
    }
}
