//! Application state, and the few steps that fetch data for it from the
//! model ([`App::sync`]). Key handling is in `update.rs`, drawing in `ui.rs`.

use crate::model::{DbDetail, DbName, Row, Snapshot, Start, Store, View};
use std::time::Duration;

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Dbs,
    Detail,
    Entries,
}

impl Focus {
    pub fn next(self) -> Focus {
        match self {
            Focus::Dbs => Focus::Detail,
            Focus::Detail => Focus::Entries,
            Focus::Entries => Focus::Dbs,
        }
    }
    pub fn prev(self) -> Focus {
        match self {
            Focus::Dbs => Focus::Entries,
            Focus::Detail => Focus::Dbs,
            Focus::Entries => Focus::Detail,
        }
    }
}

/// What the keyboard is doing besides navigation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Normal,
    /// The `/` prompt with what has been typed so far.
    Seek(String),
    /// `?` overlay.
    Help,
    /// Full view of the selected entry.
    Entry,
}

/// Browser moves that need the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Nav {
    /// Reload from the current window start, keeping the selection.
    Reload,
    /// Shift the window one row down (selection at the bottom).
    ScrollDown,
    /// Shift the window one row up (selection at the top).
    ScrollUp,
    PageDown,
    PageUp,
    Home,
    End,
    /// First key >= these bytes.
    Seek(Vec<u8>),
    /// The item with this 0-based rank (COUNTED databases).
    Rank(u64),
}

/// The entry browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Browser {
    /// Open database (`None` until one is opened with Enter).
    pub db: Option<DbName>,
    pub dupsort: bool,
    /// Where the window starts.
    pub start: Start,
    /// Loaded rows: up to `height + 1` (the extra one says more follow).
    pub rows: Vec<Row>,
    /// Selected row within the window.
    pub sel: usize,
    /// Rows the pane shows (set from the terminal size).
    pub height: usize,
    pub pending: Option<Nav>,
    /// Show values as hex even when printable.
    pub force_hex: bool,
    /// COUNTED databases: 0-based rank of the window's first row.
    pub first_rank: Option<u64>,
}

impl Default for Browser {
    fn default() -> Self {
        Browser {
            db: None,
            dupsort: false,
            start: Start::First,
            rows: Vec::new(),
            sel: 0,
            height: 10,
            pending: None,
            force_hex: false,
            first_rank: None,
        }
    }
}

impl Browser {
    /// Rows on screen.
    pub fn visible(&self) -> &[Row] {
        &self.rows[..self.rows.len().min(self.height)]
    }
    /// More rows follow the window.
    pub fn more_below(&self) -> bool {
        self.rows.len() > self.height
    }
    pub fn selected(&self) -> Option<&Row> {
        self.visible().get(self.sel)
    }
}

/// Kinds of status messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Error,
}

/// The whole state of the viewer.
#[derive(Debug, Clone)]
pub struct App {
    /// Path as shown in the header (tests use a fixed label).
    pub title: String,
    pub snapshot: Snapshot,
    /// Selected row of the database list.
    pub db_sel: usize,
    /// Name of the selected database (keeps the selection across refreshes).
    pub db_sel_name: Option<DbName>,
    pub detail: Option<DbDetail>,
    pub detail_error: Option<String>,
    pub detail_stale: bool,
    pub detail_scroll: u16,
    /// Scroll offset of the entry popup.
    pub popup_scroll: u16,
    pub browser: Browser,
    pub focus: Focus,
    pub mode: Mode,
    pub paused: bool,
    pub interval: Duration,
    pub refresh_requested: bool,
    pub status: Option<(Level, String)>,
    /// Lasting notes from opening (e.g. no lock file).
    pub notes: Vec<String>,
    pub quit: bool,
    /// Refreshes done (shown as a heartbeat in the status line).
    pub refreshes: u64,
}

impl App {
    pub fn new(title: impl Into<String>, interval: Duration) -> App {
        App {
            title: title.into(),
            snapshot: Snapshot::default(),
            db_sel: 0,
            db_sel_name: None,
            detail: None,
            detail_error: None,
            detail_stale: true,
            detail_scroll: 0,
            popup_scroll: 0,
            browser: Browser::default(),
            focus: Focus::Dbs,
            mode: Mode::Normal,
            paused: false,
            interval,
            refresh_requested: true,
            status: None,
            notes: Vec::new(),
            quit: false,
            refreshes: 0,
        }
    }

    /// Name of the highlighted database.
    pub fn selected_db(&self) -> Option<DbName> {
        self.snapshot.dbs.get(self.db_sel).map(|d| d.name.clone())
    }

    /// Move the database-list selection to `i` (clamped).
    pub fn select_db(&mut self, i: usize) {
        let n = self.snapshot.dbs.len();
        let i = if n == 0 { 0 } else { i.min(n - 1) };
        if i != self.db_sel || self.db_sel_name.is_none() {
            self.db_sel = i;
            self.db_sel_name = self.selected_db();
            self.detail_stale = true;
            self.detail_scroll = 0;
        }
    }

    /// Show `db` in the entry browser from its first entry.
    pub fn open_in_browser(&mut self, db: DbName) {
        let dupsort = self
            .snapshot
            .dbs
            .iter()
            .find(|d| d.name == db)
            .is_some_and(|d| d.flags.contains(dlmdb::DatabaseFlags::DUP_SORT));
        self.browser.db = Some(db);
        self.browser.dupsort = dupsort;
        self.browser.start = Start::First;
        self.browser.rows.clear();
        self.browser.sel = 0;
        self.browser.pending = Some(Nav::Reload);
    }

    pub fn set_error(&mut self, msg: impl Into<String>) {
        self.status = Some((Level::Error, msg.into()));
    }

    pub fn set_info(&mut self, msg: impl Into<String>) {
        self.status = Some((Level::Info, msg.into()));
    }

    /// Bring the state up to date with the store: a refresh if one is due
    /// (new read transaction), a stale detail pane, a pending browser move.
    /// Errors end up in the status line; the last good figures stay.
    pub fn sync(&mut self, store: &mut Store) {
        let refresh = std::mem::take(&mut self.refresh_requested);
        let reason = store.layout_reason.clone();
        let version = store.data_version;
        let view = match store.view() {
            Ok(v) => v,
            Err(e) => {
                self.set_error(format!("{e:#}"));
                return;
            }
        };
        if refresh {
            self.refreshes += 1;
            match view.snapshot(&reason, version) {
                Ok(s) => {
                    let changed = s.txnid != self.snapshot.txnid;
                    self.apply_snapshot(s);
                    if changed {
                        self.detail_stale = true;
                        if self.browser.db.is_some() && self.browser.pending.is_none() {
                            self.browser.pending = Some(Nav::Reload);
                        }
                    }
                    if matches!(self.status, Some((Level::Error, _))) {
                        self.status = None;
                    }
                }
                Err(e) => {
                    self.set_error(format!("refresh failed: {e:#}"));
                    return;
                }
            }
        }
        if self.detail_stale {
            self.detail_stale = false;
            match self.selected_db() {
                Some(name) => match view.detail(&name) {
                    Ok(d) => {
                        self.detail = Some(d);
                        self.detail_error = None;
                    }
                    Err(e) => {
                        self.detail = None;
                        self.detail_error = Some(format!("{e:#}"));
                        self.set_error(format!("{}: {e:#}", crate::model::display_name(&name)));
                    }
                },
                None => self.detail = None,
            }
        }
        if let Some(nav) = self.browser.pending.take() {
            if let Err(e) = self.navigate(&view, nav) {
                self.set_error(format!("entries: {e:#}"));
            }
        }
    }

    /// Replace the snapshot, keeping the selected database by name.
    pub fn apply_snapshot(&mut self, s: Snapshot) {
        self.snapshot = s;
        let n = self.snapshot.dbs.len();
        let idx = self
            .db_sel_name
            .as_ref()
            .and_then(|name| self.snapshot.dbs.iter().position(|d| &d.name == name))
            .unwrap_or(self.db_sel.min(n.saturating_sub(1)));
        if self.selected_db_at(idx) != self.db_sel_name {
            self.detail_stale = true;
        }
        self.db_sel = idx;
        self.db_sel_name = self.selected_db();
        if let Some(db) = self.browser.db.clone() {
            match self.snapshot.dbs.iter().find(|d| d.name == db) {
                Some(d) => self.browser.dupsort = d.flags.contains(dlmdb::DatabaseFlags::DUP_SORT),
                None => {
                    // Dropped by a writer: close the browser.
                    self.browser = Browser {
                        height: self.browser.height,
                        force_hex: self.browser.force_hex,
                        ..Browser::default()
                    };
                    self.set_info(format!(
                        "database {} no longer exists",
                        crate::model::display_name(&db)
                    ));
                }
            }
        }
    }

    fn selected_db_at(&self, i: usize) -> Option<DbName> {
        self.snapshot.dbs.get(i).map(|d| d.name.clone())
    }

    /// Carry out one browser move in `view`.
    fn navigate(&mut self, view: &View<'_>, nav: Nav) -> anyhow::Result<()> {
        let Some(db) = self.browser.db.clone() else {
            return Ok(());
        };
        let b = &mut self.browser;
        let want = b.height + 1;
        let dupsort = b.dupsort;
        let first_pos = b.rows.first().map(|r| r.pos(dupsort));
        match nav {
            Nav::Reload => {
                let keep = b.selected().map(|r| r.pos(dupsort));
                let rows = view.rows_from(&db, &b.start, want)?;
                b.rows = rows;
                if let Some(p) = keep {
                    // Same entry if it still exists, else the one now in its place.
                    if let Some(i) = b.visible().iter().position(|r| r.pos(dupsort) == p) {
                        b.sel = i;
                    }
                }
            }
            Nav::ScrollDown => {
                if b.rows.len() > b.height {
                    b.start = Start::At(b.rows[1].pos(dupsort));
                    b.rows = view.rows_from(&db, &b.start, want)?;
                }
                b.sel = b.visible().len().saturating_sub(1);
            }
            Nav::ScrollUp => {
                if let Some(p) = first_pos {
                    b.start = view.start_before(&db, Some(&p), 1)?;
                    b.rows = view.rows_from(&db, &b.start, want)?;
                }
                b.sel = 0;
            }
            Nav::PageDown => {
                if b.rows.len() > b.height {
                    b.start = Start::At(b.rows[b.height].pos(dupsort));
                    b.rows = view.rows_from(&db, &b.start, want)?;
                    if b.rows.len() <= b.height {
                        // Last page: show a full window ending at the last row.
                        b.start = view.start_before(&db, None, b.height)?;
                        b.rows = view.rows_from(&db, &b.start, want)?;
                        b.sel = b.visible().len().saturating_sub(1);
                    }
                } else {
                    b.sel = b.visible().len().saturating_sub(1);
                }
            }
            Nav::PageUp => {
                if let Some(p) = first_pos {
                    b.start = view.start_before(&db, Some(&p), b.height)?;
                    b.rows = view.rows_from(&db, &b.start, want)?;
                    if b.rows.first().map(|r| r.pos(dupsort)) == Some(p) {
                        // Already at the top: PgUp goes to the first row.
                        b.sel = 0;
                    }
                }
            }
            Nav::Home => {
                b.start = Start::First;
                b.rows = view.rows_from(&db, &b.start, want)?;
                b.sel = 0;
            }
            Nav::End => {
                b.start = view.start_before(&db, None, b.height)?;
                b.rows = view.rows_from(&db, &b.start, want)?;
                b.sel = b.visible().len().saturating_sub(1);
            }
            Nav::Rank(n) => match view.pos_at_rank(&db, n)? {
                Some(p) => {
                    b.start = Start::At(p);
                    b.rows = view.rows_from(&db, &b.start, want)?;
                    b.sel = 0;
                }
                None => {
                    b.start = view.start_before(&db, None, b.height)?;
                    b.rows = view.rows_from(&db, &b.start, want)?;
                    b.sel = b.visible().len().saturating_sub(1);
                    self.status = Some((
                        Level::Info,
                        format!("rank {n} is past the end; showing the end"),
                    ));
                }
            },
            Nav::Seek(key) => {
                b.start = Start::Key(key.clone());
                b.rows = view.rows_from(&db, &b.start, want)?;
                b.sel = 0;
                if b.rows.is_empty() {
                    // Past the end: show the last page instead.
                    b.start = view.start_before(&db, None, b.height)?;
                    b.rows = view.rows_from(&db, &b.start, want)?;
                    b.sel = b.visible().len().saturating_sub(1);
                    self.status = Some((
                        Level::Info,
                        "no key at or after that one; showing the end".into(),
                    ));
                    return Ok(());
                }
            }
        }
        let b = &mut self.browser;
        b.sel = b.sel.min(b.visible().len().saturating_sub(1));
        b.first_rank = match b.rows.first() {
            Some(r) => view.rank_of(&db, &r.pos(dupsort)).unwrap_or(None),
            None => None,
        };
        Ok(())
    }
}
