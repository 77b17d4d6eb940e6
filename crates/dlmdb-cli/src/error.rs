//! One error shape for every command.
//!
//! Text form (stderr, one line): `dlmdb: PATH: database "NAME": message`.
//! JSON form (stderr, with `--json`):
//! `{"schema_version":1,"error":{"kind","message","path","database","code"}}`.
//! Commands attach the database an error is about with [`InDatabase`] and
//! raise classified errors with [`CliError`]; anything else is classified
//! from the error chain (engine code, OS error, input error).

use serde::Serialize;
use std::fmt;

/// What went wrong, for scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Bad command line.
    Usage,
    /// The path, database or key does not exist.
    NotFound,
    /// The file is not an LMDB/DLMDB data file.
    NotAStore,
    /// The data file is shorter than the pages its meta page references.
    Truncated,
    /// The store is damaged (the engine or a check found bad pages).
    Corrupted,
    /// The input (a dump) is malformed or not loadable.
    Input,
    /// The command refuses to do what was asked (e.g. would overwrite).
    Refused,
    /// An operating-system error (permissions, disk full, ...).
    Io,
    /// Any other engine error.
    Engine,
    /// Stopped by SIGINT.
    Interrupted,
}

/// An error raised with a known kind (and possibly the database it is about).
#[derive(Debug, Clone)]
pub struct CliError {
    pub kind: Kind,
    pub message: String,
}

impl CliError {
    pub fn new(kind: Kind, message: impl Into<String>) -> CliError {
        CliError {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for CliError {}

/// `bail!`-like constructor for a classified error.
pub fn fail(kind: Kind, message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(CliError::new(kind, message))
}

/// Context marker: the error is about this database (`None` = main).
/// Attach with `.context(InDatabase::of(name))`; it is rendered once, after
/// the path, and lands in the JSON `database` field.
#[derive(Debug, Clone)]
pub struct InDatabase(pub Option<String>);

impl InDatabase {
    pub fn of(name: Option<&str>) -> InDatabase {
        InDatabase(name.map(str::to_owned))
    }
}

/// Database `name` (`None` = main) of `txn`; a failure is marked
/// [`InDatabase`].
pub fn open_db(txn: &dlmdb::RoTxn<'_>, name: Option<&str>) -> anyhow::Result<dlmdb::Database> {
    use anyhow::Context;
    txn.open_db(name)
        .context("cannot open")
        .context(InDatabase::of(name))
}

/// A lock file the command cannot share, followed by `advice`. The open
/// error stays in the chain so the engine's code reaches the JSON form. Its
/// kind is `io` for an OS error (no permission, read-only medium) and
/// `engine` otherwise, not the `not_a_store` that `MDB_VERSION_MISMATCH`
/// from a data file means: a lock file in a format we do not share says
/// nothing against the data file.
pub fn lock_unshared(e: dlmdb::OpenError, advice: &str) -> anyhow::Error {
    let kind = match &e {
        dlmdb::OpenError::LockUnshared { source, .. } if source.code() > 0 => Kind::Io,
        _ => Kind::Engine,
    };
    let message = format!("{e}; {advice}");
    anyhow::Error::new(e).context(CliError::new(kind, message))
}

/// The named databases of `txn`; a failure is marked as the main database's.
pub fn db_names(txn: &dlmdb::RoTxn<'_>) -> anyhow::Result<Vec<String>> {
    use anyhow::Context;
    txn.db_names()
        .context("listing named databases")
        .context(InDatabase::of(None))
}

impl fmt::Display for InDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(n) => write!(f, "database {n:?}"),
            None => f.write_str("main database"),
        }
    }
}

/// The `error` object of the JSON form.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorReport {
    pub kind: Kind,
    /// One line, without the path and database (they are separate fields).
    pub message: String,
    /// The store (or file) the command was working on, if any.
    pub path: Option<String>,
    /// The named database the error is about; `null` for the main database
    /// or when the error is not about a database (`database_main` tells).
    pub database: Option<String>,
    /// `true` when the error is about the main database.
    pub database_main: bool,
    /// Engine (`MDB_*`, negative) or OS (`errno`, positive) error code.
    pub code: Option<i32>,
}

#[derive(Serialize)]
struct ErrorEnvelope<'a> {
    schema_version: u32,
    error: &'a ErrorReport,
}

impl ErrorReport {
    /// Classify `e` and collect its message chain into one line. The path is
    /// left out of the message when the chain already names it (it is
    /// printed once), and chain links already contained in an earlier link
    /// are dropped (no doubled messages).
    pub fn from_anyhow(e: &anyhow::Error, path: Option<&str>) -> ErrorReport {
        // A classified error attached as context is not of its own type as
        // a link of the chain; anyhow's downcast finds it (the outermost).
        let mut kind = e.downcast_ref::<CliError>().map(|c| c.kind);
        let mut code = None;
        // The outermost database marker; its text is left out of the message.
        let database = e.downcast_ref::<InDatabase>().map(|d| d.0.clone());
        let marker = database.clone().map(|d| InDatabase(d).to_string());
        let mut parts: Vec<String> = Vec::new();
        for link in e.chain() {
            if marker.as_deref() == Some(link.to_string().as_str()) {
                continue;
            }
            if let Some(c) = link.downcast_ref::<CliError>() {
                kind.get_or_insert(c.kind);
            } else if let Some(de) = link.downcast_ref::<dlmdb::Error>() {
                code.get_or_insert(de.code());
                kind.get_or_insert(engine_kind(de));
            } else if let Some(io) = link.downcast_ref::<std::io::Error>() {
                if let Some(n) = io.raw_os_error() {
                    code.get_or_insert(n);
                }
                kind.get_or_insert(if io.kind() == std::io::ErrorKind::NotFound {
                    Kind::NotFound
                } else {
                    Kind::Io
                });
            } else if link.downcast_ref::<crate::load::InputError>().is_some() {
                kind.get_or_insert(Kind::Input);
            }
            let text = one_line(&link.to_string());
            if text.is_empty() || parts.iter().any(|p| p.contains(&text)) {
                continue;
            }
            parts.push(text);
        }
        let mut message = parts.join(": ");
        // The path is printed once: strip a leading "PATH: " the chain added.
        if let Some(p) = path {
            if let Some(rest) = message.strip_prefix(&format!("{p}: ")) {
                message = rest.to_string();
            }
        }
        ErrorReport {
            kind: kind.unwrap_or(Kind::Engine),
            message,
            path: path.map(str::to_owned),
            database_main: matches!(database, Some(None)),
            database: database.flatten(),
            code,
        }
    }

    /// `dlmdb: PATH: database "X": message` (path left out when the
    /// message already names it).
    pub fn text(&self) -> String {
        let mut out = String::from("dlmdb: ");
        if let Some(p) = &self.path {
            if !names_path(&self.message, p) {
                out.push_str(p);
                out.push_str(": ");
            }
        }
        if let Some(d) = &self.database {
            out.push_str(&format!("database {d:?}: "));
        } else if self.database_main {
            out.push_str("main database: ");
        }
        out.push_str(&self.message);
        out
    }

    /// [`text`](Self::text), and for a damaged store the command that says
    /// what is wrong with it: the engine's one code for damage names no
    /// page or structure.
    pub fn text_with_advice(&self) -> String {
        let mut out = self.text();
        if let (Kind::Corrupted, Some(p)) = (self.kind, &self.path) {
            out.push_str(&format!(
                " (the store is damaged; `dlmdb check {p}` says where)"
            ));
        }
        out
    }

    /// The JSON form (one line).
    pub fn json(&self) -> String {
        serde_json::to_string(&ErrorEnvelope {
            schema_version: crate::report::SCHEMA_VERSION,
            error: self,
        })
        .unwrap_or_else(|_| "{\"error\":{\"kind\":\"engine\"}}".into())
    }

    /// Exit status for this error: 130 for SIGINT, 2 for usage, else 1.
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            Kind::Interrupted => 130,
            Kind::Usage => 2,
            _ => 1,
        }
    }
}

fn engine_kind(e: &dlmdb::Error) -> Kind {
    match e {
        dlmdb::Error::NotFound => Kind::NotFound,
        dlmdb::Error::Invalid | dlmdb::Error::VersionMismatch => Kind::NotAStore,
        dlmdb::Error::Corrupted
        | dlmdb::Error::PageNotFound
        | dlmdb::Error::Panic
        | dlmdb::Error::BadRecord { .. } => Kind::Corrupted,
        other if other.code() > 0 => Kind::Io,
        _ => Kind::Engine,
    }
}

/// Whether `message` already names `path` as a path (not as part of a word).
fn names_path(message: &str, path: &str) -> bool {
    message.match_indices(path).any(|(i, _)| {
        let before = message[..i].chars().next_back();
        let after = message[i + path.len()..].chars().next();
        matches!(before, None | Some(' ' | '(' | '"' | '\''))
            && matches!(after, None | Some(':' | ' ' | '/' | ')' | '"' | '\'' | ','))
    })
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The error is a write to a pipe whose reader went away (`dlmdb dump ... |
/// head`): the command stops without a message.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Print `e` on stderr as text or JSON; returns the exit status. `advise`:
/// a text error about a damaged store also names `dlmdb check` (not for
/// `check` itself).
pub fn report(e: &anyhow::Error, path: Option<&str>, json: bool, advise: bool) -> i32 {
    let r = ErrorReport::from_anyhow(e, path);
    if json {
        eprintln!("{}", r.json());
    } else if advise {
        eprintln!("{}", r.text_with_advice());
    } else {
        eprintln!("{}", r.text());
    }
    r.exit_code()
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn chain_is_one_line_with_database_once() {
        let e = Err::<(), _>(dlmdb::Error::Corrupted)
            .context(InDatabase::of(Some("users")))
            .context("reading")
            .unwrap_err();
        let r = ErrorReport::from_anyhow(&e, Some("db"));
        assert_eq!(r.kind, Kind::Corrupted);
        assert_eq!(r.database.as_deref(), Some("users"));
        assert!(r
            .text()
            .starts_with("dlmdb: db: database \"users\": reading: "));
        assert!(!r.text().contains('\n'));
    }

    #[test]
    fn classified_context_keeps_the_engine_code() {
        let e = anyhow::Error::new(dlmdb::Error::VersionMismatch)
            .context(CliError::new(Kind::Engine, "lock file: advice"));
        let r = ErrorReport::from_anyhow(&e, Some("db"));
        assert_eq!(r.kind, Kind::Engine);
        assert_eq!(r.code, Some(dlmdb::Error::VersionMismatch.code()));
        assert_eq!(
            r.message,
            "lock file: advice: MDB_VERSION_MISMATCH: Database environment version mismatch"
        );
    }

    #[test]
    fn repeated_links_are_dropped() {
        let e = anyhow::anyhow!("X failed")
            .context("outer (X failed)")
            .context("top");
        let r = ErrorReport::from_anyhow(&e, None);
        assert_eq!(r.message, "top: outer (X failed)");
    }
}
