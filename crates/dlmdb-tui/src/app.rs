//! Application state, and the few steps that fetch data for it from the
//! model ([`App::sync`]). Key handling is in `update.rs`, drawing in `ui.rs`.

use crate::model::{DbDetail, DbName, Pos, Row, Snapshot, Start, Store, View};
use crate::pages::{follow, Item, PageAt, PageDump, ReaderSlot, TreeCtx};
use dlmdb_format::FreeRecord;
use ratatui::layout::Rect;
use std::time::{Duration, Instant};

/// Which pane has the keyboard. The lower pane shows one of entries,
/// pages, free list or readers: the last one focused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Dbs,
    Detail,
    Entries,
    Pages,
    FreeList,
    Readers,
}

impl Focus {
    /// A view of the lower pane.
    pub fn is_lower(self) -> bool {
        !matches!(self, Focus::Dbs | Focus::Detail)
    }
    pub fn name(self) -> &'static str {
        match self {
            Focus::Dbs => "Databases",
            Focus::Detail => "Detail",
            Focus::Entries => "Entries",
            Focus::Pages => "Pages",
            Focus::FreeList => "Free list",
            Focus::Readers => "Readers",
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
    /// `g` in the page browser: the page number typed so far.
    GotoPage(String),
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
    /// The item with this 0-based rank (O(log n) on COUNTED databases,
    /// a scan in steps otherwise).
    Rank(u64),
    /// First item of the next distinct key after the selected row.
    NextKey,
    /// First item of the previous distinct key before the selected row.
    PrevKey,
}

/// A `#N` jump on a database without counts: the scan so far. Each
/// [`App::sync`] takes up to [`RANK_SCAN_STEP`] more steps, so the status
/// line shows progress between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankScan {
    pub target: u64,
    /// Rank of `at`.
    pub done: u64,
    pub at: Option<Pos>,
}

/// Items a rank scan steps over per sync (default of [`App::scan_step`]).
pub const RANK_SCAN_STEP: u64 = 200_000;

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
    /// 0-based rank of the window's first row (COUNTED databases, or
    /// after a `#N` scan).
    pub first_rank: Option<u64>,
    /// A `#N` scan under way.
    pub scan: Option<RankScan>,
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
            scan: None,
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

/// Page browser moves that need the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageNav {
    /// The root page of a database.
    Root(DbName),
    /// Follow the selected item (child, overflow run, sub-page, sub-tree,
    /// named database).
    Descend,
    /// Back to the page before (Backspace).
    Up,
    /// Page N of the file, read as part of the current tree.
    Goto(u64),
    /// The leaf holding this key of this database.
    KeyPage(DbName, Vec<u8>),
    /// Read the current page again in a fresh transaction.
    Reload,
    /// After a commit: walk the same path again in the new transaction
    /// (from the database's new root when the path started at a root),
    /// taking the same item index at every step. Pages of the old path may
    /// have been freed and reused, so they are never read again by number.
    Rewalk,
}

/// One step of the page browser's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crumb {
    pub at: PageAt,
    pub ctx: TreeCtx,
    /// Item selected there.
    pub sel: usize,
}

/// The page browser.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PageBrowser {
    /// From the first page opened to the current one (the last).
    pub path: Vec<Crumb>,
    pub page: Option<PageDump>,
    pub sel: usize,
    /// `h`: raw bytes instead of the item list.
    pub hex: bool,
    /// Rows the list shows (set from the terminal size).
    pub height: usize,
    pub pending: Option<PageNav>,
    /// The path starts at a database's root (not at a page asked for by number).
    pub from_root: bool,
}

impl PageBrowser {
    pub fn selected(&self) -> Option<&Item> {
        self.page.as_ref()?.items.get(self.sel)
    }
    /// Items (or hex lines) the page has.
    pub fn rows(&self) -> usize {
        match &self.page {
            None => 0,
            Some(p) if self.hex => p.bytes.len().div_ceil(16),
            Some(p) => p.items.len(),
        }
    }
}

/// One sample of the store's figures, for deltas and rates.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub at: Instant,
    pub txnid: u64,
    /// Per database: (depth, pages, entries).
    pub dbs: Vec<(DbName, u32, u64, u64)>,
}

impl Sample {
    pub fn of(s: &Snapshot, at: Instant) -> Sample {
        Sample {
            at,
            txnid: s.env.last_txnid,
            dbs: s
                .dbs
                .iter()
                .map(|d| {
                    let st = &d.stat;
                    (
                        d.name.clone(),
                        st.depth,
                        st.branch_pages + st.leaf_pages + st.overflow_pages,
                        st.entries,
                    )
                })
                .collect(),
        }
    }

    fn db(&self, name: &DbName) -> Option<(u32, u64, u64)> {
        self.dbs
            .iter()
            .find(|d| &d.0 == name)
            .map(|d| (d.1, d.2, d.3))
    }
}

/// How one database moved: since the viewer opened, and per second over
/// the last refresh interval.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Motion {
    pub commits: i64,
    pub depth: i64,
    pub pages: i64,
    pub entries: i64,
    /// `None` until two samples with time between them exist.
    pub commits_per_s: Option<f64>,
    pub entries_per_s: Option<f64>,
    pub pages_per_s: Option<f64>,
}

/// First, previous and latest samples.
#[derive(Debug, Clone, Default)]
pub struct Live {
    pub first: Option<Sample>,
    pub prev: Option<Sample>,
    pub last: Option<Sample>,
    /// The last [`HISTORY`] samples, oldest first (for the trend lines).
    pub history: std::collections::VecDeque<Sample>,
}

/// Samples kept for the trend lines.
pub const HISTORY: usize = 48;

impl Live {
    pub fn record(&mut self, s: Sample) {
        if self.first.is_none() {
            self.first = Some(s.clone());
        }
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(s.clone());
        self.prev = self.last.take();
        self.last = Some(s);
    }

    /// Entries, pages and depth of database `name` over the kept samples
    /// (0 where it did not exist).
    pub fn trend(&self, name: &DbName) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
        let mut out = (Vec::new(), Vec::new(), Vec::new());
        for s in &self.history {
            let (d, p, e) = s.db(name).unwrap_or((0, 0, 0));
            out.0.push(e);
            out.1.push(p);
            out.2.push(u64::from(d));
        }
        out
    }

    /// Motion of database `name` (`None` before the first sample).
    pub fn motion(&self, name: &DbName) -> Option<Motion> {
        let (first, last) = (self.first.as_ref()?, self.last.as_ref()?);
        let (d1, p1, e1) = last.db(name)?;
        let (d0, p0, e0) = first.db(name).unwrap_or((0, 0, 0));
        let mut m = Motion {
            commits: last.txnid as i64 - first.txnid as i64,
            depth: i64::from(d1) - i64::from(d0),
            pages: p1 as i64 - p0 as i64,
            entries: e1 as i64 - e0 as i64,
            ..Motion::default()
        };
        if let Some(prev) = &self.prev {
            let secs = last.at.duration_since(prev.at).as_secs_f64();
            if secs > 0.0 {
                let (_, pp, pe) = prev.db(name).unwrap_or((0, 0, 0));
                m.commits_per_s = Some((last.txnid as f64 - prev.txnid as f64) / secs);
                m.entries_per_s = Some((e1 as f64 - pe as f64) / secs);
                m.pages_per_s = Some((p1 as f64 - pp as f64) / secs);
            }
        }
        Some(m)
    }
}

/// Free-list records of the last refresh.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FreeListView {
    pub records: Vec<FreeRecord>,
    pub sel: usize,
    pub error: Option<String>,
}

/// Reader slots of the last refresh (`None`: no lock file).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReadersView {
    pub slots: Option<Vec<ReaderSlot>>,
    pub sel: usize,
    pub error: Option<String>,
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
    pub pages: PageBrowser,
    pub free_list: FreeListView,
    pub readers: ReadersView,
    pub live: Live,
    pub focus: Focus,
    /// What the lower pane shows (the last lower view focused).
    pub lower: Focus,
    /// Screen size of the last draw (mouse hits are mapped with it).
    pub screen: Rect,
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
    /// Items a `#N` scan steps over per sync.
    pub scan_step: u64,
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
            pages: PageBrowser::default(),
            free_list: FreeListView::default(),
            readers: ReadersView::default(),
            live: Live::default(),
            focus: Focus::Dbs,
            lower: Focus::Entries,
            screen: Rect::new(0, 0, 120, 40),
            mode: Mode::Normal,
            paused: false,
            interval,
            refresh_requested: true,
            status: None,
            notes: Vec::new(),
            quit: false,
            refreshes: 0,
            scan_step: RANK_SCAN_STEP,
        }
    }

    /// Give `f` the keyboard; a lower view also becomes the lower pane's.
    pub fn set_focus(&mut self, f: Focus) {
        if f.is_lower() {
            self.lower = f;
        }
        self.focus = f;
    }

    /// Tab: databases, detail, the lower pane's view, around.
    pub fn focus_next(&mut self) {
        self.focus = match self.focus {
            Focus::Dbs => Focus::Detail,
            Focus::Detail => self.lower,
            _ => Focus::Dbs,
        };
    }

    /// Shift-Tab: the other way round.
    pub fn focus_prev(&mut self) {
        self.focus = match self.focus {
            Focus::Dbs => self.lower,
            Focus::Detail => Focus::Dbs,
            _ => Focus::Detail,
        };
    }

    /// Open the root page of `db` in the page browser.
    pub fn open_root_page(&mut self, db: DbName) {
        self.pages.pending = Some(PageNav::Root(db));
        self.set_focus(Focus::Pages);
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

    /// Select the database called `name` and browse its entries; an error
    /// line when there is none.
    pub fn browse_named(&mut self, name: String) {
        match self
            .snapshot
            .dbs
            .iter()
            .position(|d| d.name.as_deref() == Some(&name))
        {
            Some(i) => {
                self.select_db(i);
                self.open_in_browser(Some(name));
                self.set_focus(Focus::Entries);
            }
            None => self.set_error(format!("no database named {name:?}")),
        }
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
                    self.live.record(Sample::of(&s, Instant::now()));
                    self.apply_snapshot(s);
                    self.refresh_lists(&view);
                    if changed {
                        self.detail_stale = true;
                        if self.browser.db.is_some() && self.browser.pending.is_none() {
                            self.browser.pending = Some(Nav::Reload);
                        }
                        if self.pages.page.is_some() && self.pages.pending.is_none() {
                            self.pages.pending = Some(PageNav::Rewalk);
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
        if self.browser.scan.is_some() {
            if let Err(e) = self.continue_scan(&view) {
                self.browser.scan = None;
                self.set_error(format!("#rank scan: {e:#}"));
            }
        }
        if let Some(nav) = self.pages.pending.take() {
            if let Err(e) = self.page_nav(&view, nav) {
                self.set_error(format!("pages: {e:#}"));
            }
        }
    }

    /// Free list and reader table of this transaction.
    fn refresh_lists(&mut self, view: &View<'_>) {
        let fl = &mut self.free_list;
        loaded_or_error(view.free_records(), &mut fl.records, &mut fl.error);
        fl.sel = fl.sel.min(fl.records.len().saturating_sub(1));
        loaded_or_error(
            view.readers(),
            &mut self.readers.slots,
            &mut self.readers.error,
        );
        let n = self.readers.slots.as_ref().map_or(0, Vec::len);
        self.readers.sel = self.readers.sel.min(n.saturating_sub(1));
    }

    /// Show `page`, pushed as a new step of the path (`push`) or replacing
    /// the current one.
    fn show_page(&mut self, page: PageDump, sel: usize, push: bool) {
        let crumb = Crumb {
            at: page.at.clone(),
            ctx: page.ctx.clone(),
            sel,
        };
        let pb = &mut self.pages;
        if push {
            if let Some(last) = pb.path.last_mut() {
                last.sel = pb.sel;
            }
            pb.path.push(crumb);
        } else if let Some(last) = pb.path.last_mut() {
            *last = crumb;
        } else {
            pb.path.push(crumb);
        }
        pb.sel = sel.min(page.items.len().saturating_sub(1));
        pb.page = Some(page);
    }

    /// Carry out one page browser move in `view`.
    fn page_nav(&mut self, view: &View<'_>, nav: PageNav) -> anyhow::Result<()> {
        match nav {
            PageNav::Root(db) => {
                let (root, ctx) = view.tree_root(&db)?;
                let page = view.page(&PageAt::Page(root), &ctx)?;
                self.pages.path.clear();
                self.pages.hex = false;
                self.pages.from_root = true;
                self.show_page(page, 0, true);
            }
            PageNav::Descend => {
                let Some(page) = &self.pages.page else {
                    return Ok(());
                };
                let Some((at, ctx)) = follow(page, self.pages.sel) else {
                    self.set_info("this item points to no page");
                    return Ok(());
                };
                let mut next = view.page(&at, &ctx)?;
                if let (Some(crate::pages::ItemData::Overflow { size, .. }), Some(run)) = (
                    page.items.get(self.pages.sel).map(|i| &i.data),
                    next.overflow.as_mut(),
                ) {
                    run.value_size = Some(*size);
                }
                self.show_page(next, 0, true);
            }
            PageNav::Up => {
                if self.pages.path.len() < 2 {
                    self.set_info("at the first page of the path");
                    return Ok(());
                }
                self.pages.path.pop();
                let c = self.pages.path.last().expect("len >= 1").clone();
                let page = view.page(&c.at, &c.ctx)?;
                self.show_page(page, c.sel, false);
            }
            PageNav::Goto(pgno) => {
                let ctx = match &self.pages.page {
                    Some(p) => p.ctx.clone(),
                    None => {
                        let db = self.selected_db().unwrap_or(None);
                        view.tree_root(&db)
                            .map(|(_, c)| c)
                            .unwrap_or_else(|_| TreeCtx::of_db(db, Default::default()))
                    }
                };
                let page = view.page(&PageAt::Page(pgno), &ctx)?;
                self.pages.path.clear();
                self.pages.from_root = false;
                self.show_page(page, 0, true);
            }
            PageNav::KeyPage(db, key) => {
                let (path, idx) = view.path_to_key(&db, &key)?;
                self.pages.path.clear();
                self.pages.hex = false;
                self.pages.from_root = true;
                // At each branch, the child taken is the selected item.
                let next: Vec<Option<PageAt>> = path
                    .iter()
                    .skip(1)
                    .map(|p| Some(p.at.clone()))
                    .chain([None])
                    .collect();
                for (page, next) in path.into_iter().zip(next) {
                    let sel = match next {
                        Some(PageAt::Page(child)) => page
                            .items
                            .iter()
                            .position(|it| {
                                matches!(it.data, crate::pages::ItemData::Child { pgno, .. } if pgno == child)
                            })
                            .unwrap_or(0),
                        _ => idx.unwrap_or(0),
                    };
                    self.show_page(page, sel, true);
                }
                if idx.is_none() {
                    self.set_info("the key is not on the leaf its path leads to (store changed?)");
                }
            }
            PageNav::Rewalk => self.rewalk(view)?,
            PageNav::Reload => {
                if let Some(c) = self.pages.path.last().cloned() {
                    let page = view.page(&c.at, &c.ctx)?;
                    let sel = self.pages.sel;
                    self.show_page(page, sel, false);
                }
            }
        }
        Ok(())
    }

    /// See [`PageNav::Rewalk`]. On failure the old path stays, marked by
    /// its page's txn id in the header panel.
    fn rewalk(&mut self, view: &View<'_>) -> anyhow::Result<()> {
        let old = self.pages.path.clone();
        let Some(first) = old.first() else {
            return Ok(());
        };
        let last_sel = self.pages.sel;
        let start = if self.pages.from_root {
            let (root, ctx) = view.tree_root(&first.ctx.db)?;
            (PageAt::Page(root), ctx)
        } else {
            (first.at.clone(), first.ctx.clone())
        };
        let mut page = view.page(&start.0, &start.1)?;
        let mut path = Vec::new();
        let mut cut = false;
        for (i, crumb) in old.iter().enumerate() {
            let sel = if i + 1 == old.len() {
                last_sel
            } else {
                crumb.sel
            };
            let sel = sel.min(page.items.len().saturating_sub(1));
            path.push(Crumb {
                at: page.at.clone(),
                ctx: page.ctx.clone(),
                sel,
            });
            if i + 1 == old.len() {
                break;
            }
            match follow(&page, sel) {
                Some((at, ctx)) => page = view.page(&at, &ctx)?,
                None => {
                    cut = true;
                    break;
                }
            }
        }
        self.pages.sel = path.last().map_or(0, |c| c.sel);
        self.pages.path = path;
        self.pages.page = Some(page);
        if cut {
            self.set_info("the tree changed under the page path; it ends earlier now");
        }
        Ok(())
    }

    /// Advance a `#N` scan by one step and show the row when it is reached.
    fn continue_scan(&mut self, view: &View<'_>) -> anyhow::Result<()> {
        let Some(db) = self.browser.db.clone() else {
            self.browser.scan = None;
            return Ok(());
        };
        let Some(mut scan) = self.browser.scan.take() else {
            return Ok(());
        };
        let left = scan.target - scan.done;
        let (at, steps) = view.step_from(&db, scan.at.as_ref(), left.min(self.scan_step))?;
        scan.done += steps;
        scan.at = at;
        let reached = scan.done == scan.target;
        let ended = steps < left.min(self.scan_step) || scan.at.is_none();
        if !(reached || ended) {
            self.set_info(format!(
                "#{}: scanning (database not counted): {} of {} rows",
                scan.target, scan.done, scan.target
            ));
            self.browser.scan = Some(scan);
            return Ok(());
        }
        let b = &mut self.browser;
        let want = b.height + 1;
        match scan.at {
            Some(p) if reached => {
                b.start = Start::At(p);
                b.rows = view.rows_from(&db, &b.start, want)?;
                b.sel = 0;
                b.first_rank = Some(scan.target);
                self.set_info(format!("row {} (0-based), found by a scan", scan.target));
            }
            _ => {
                b.start = view.start_before(&db, None, b.height)?;
                b.rows = view.rows_from(&db, &b.start, want)?;
                b.sel = b.visible().len().saturating_sub(1);
                b.first_rank = None;
                self.set_info(format!(
                    "rank {} is past the end ({} rows); showing the end",
                    scan.target,
                    scan.done + 1
                ));
            }
        }
        Ok(())
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
            Nav::Rank(n) if !view.is_counted(&db)? => {
                b.scan = Some(RankScan {
                    target: n,
                    done: 0,
                    at: None,
                });
                return Ok(());
            }
            Nav::NextKey | Nav::PrevKey => {
                let Some(p) = b.selected().map(|r| r.pos(dupsort)) else {
                    return Ok(());
                };
                match view.distinct_key(&db, &p, nav == Nav::NextKey)? {
                    Some(q) => {
                        b.start = Start::At(q);
                        b.rows = view.rows_from(&db, &b.start, want)?;
                        b.sel = 0;
                    }
                    None => {
                        self.status = Some((
                            Level::Info,
                            if nav == Nav::NextKey {
                                "no later key".to_string()
                            } else {
                                "no earlier key".to_string()
                            },
                        ));
                        return Ok(());
                    }
                }
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
        b.scan = None;
        b.first_rank = match b.rows.first() {
            Some(r) => view.rank_of(&db, &r.pos(dupsort)).unwrap_or(None),
            None => None,
        };
        Ok(())
    }
}

impl App {
    /// The event loop: refresh on the interval, draw, hand keys and mouse
    /// events to [`update`](crate::update), until quit. `start_db` (the
    /// `-s` option) is browsed from the start.
    pub fn run<B: ratatui::backend::Backend>(
        &mut self,
        terminal: &mut ratatui::Terminal<B>,
        store: &mut Store,
        start_db: Option<String>,
    ) -> anyhow::Result<()> {
        use crossterm::event;
        if let Some(name) = start_db {
            // The database list comes with the first load.
            let size = terminal.size()?;
            self.fit_to(Rect::new(0, 0, size.width, size.height));
            self.sync(store);
            self.browse_named(name);
        }
        let mut last_refresh = Instant::now();
        loop {
            let size = terminal.size()?;
            self.fit_to(Rect::new(0, 0, size.width, size.height));
            if !self.paused && last_refresh.elapsed() >= self.interval {
                self.refresh_requested = true;
            }
            if self.refresh_requested {
                last_refresh = Instant::now();
            }
            self.sync(store);
            terminal.draw(|f| crate::ui::draw(f, self))?;
            if self.quit {
                return Ok(());
            }
            let wait = if self.browser.scan.is_some() {
                Duration::ZERO
            } else if self.paused {
                Duration::from_millis(500)
            } else {
                self.interval.saturating_sub(last_refresh.elapsed())
            };
            if event::poll(wait)? {
                self.handle(event::read()?, store);
                // Drain what else is queued before redrawing (fast key repeat).
                while event::poll(Duration::ZERO)? {
                    self.handle(event::read()?, store);
                }
            }
            if self.quit {
                return Ok(());
            }
        }
    }

    fn handle(&mut self, ev: crossterm::event::Event, store: &mut Store) {
        use crossterm::event::Event;
        match ev {
            Event::Key(k) => crate::update::update(self, k),
            Event::Mouse(m) => crate::update::mouse(self, m),
            _ => {}
        }
        if self.browser.pending.is_some() || self.pages.pending.is_some() {
            self.sync(store);
        }
    }

    /// Adopt a screen size: window heights follow, the entry window reloads.
    pub fn fit_to(&mut self, screen: Rect) {
        self.screen = screen;
        let a = crate::ui::areas(screen, self);
        self.pages.height = match &self.pages.page {
            Some(p) => crate::ui::list_geometry(a.lower, p).1,
            None => (a.lower.height as usize).saturating_sub(5).max(1),
        };
        let rows = crate::ui::list_rows(a.lower);
        if rows != self.browser.height {
            self.browser.height = rows;
            if self.browser.db.is_some() && self.browser.pending.is_none() {
                self.browser.pending = Some(Nav::Reload);
            }
        }
    }
}

/// A freshly read list replaces the shown one and clears its error; a
/// failed read keeps the last good list on screen with the error beside it.
fn loaded_or_error<T>(r: anyhow::Result<T>, shown: &mut T, error: &mut Option<String>) {
    match r {
        Ok(v) => {
            *shown = v;
            *error = None;
        }
        Err(e) => *error = Some(format!("{e:#}")),
    }
}
