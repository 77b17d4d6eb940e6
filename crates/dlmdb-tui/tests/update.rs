//! Key sequences -> state, and browser moves carried out against a store.

mod common;

use common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use dlmdb_tui::app::{App, Focus, Mode, Nav};
use dlmdb_tui::model::{DbSummary, Snapshot};
use dlmdb_tui::update::{parse_seek, update};
use std::time::Duration;

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

fn press(app: &mut App, keys: &[KeyCode]) {
    for k in keys {
        update(app, key(*k));
    }
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        update(app, key(KeyCode::Char(c)));
    }
}

/// An app with three databases and no store behind it.
fn bare_app() -> App {
    let mut app = App::new("t", Duration::from_secs(2));
    let db = |n: Option<&str>| DbSummary {
        name: n.map(str::to_string),
        flags: dlmdb::DatabaseFlags::empty(),
        stat: dlmdb::Stat::default(),
        counted: None,
        error: None,
    };
    app.apply_snapshot(Snapshot {
        dbs: vec![db(None), db(Some("a")), db(Some("b"))],
        ..Default::default()
    });
    app.detail_stale = false;
    app.refresh_requested = false;
    app
}

#[test]
fn quit_keys() {
    for k in [KeyCode::Char('q'), KeyCode::Esc] {
        let mut app = bare_app();
        press(&mut app, &[k]);
        assert!(app.quit);
    }
    let mut app = bare_app();
    update(
        &mut app,
        KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
    );
    assert!(app.quit);
}

#[test]
fn tab_cycles_panes_both_ways() {
    let mut app = bare_app();
    assert_eq!(app.focus, Focus::Dbs);
    press(&mut app, &[KeyCode::Tab]);
    assert_eq!(app.focus, Focus::Detail);
    press(&mut app, &[KeyCode::Tab]);
    assert_eq!(app.focus, Focus::Entries);
    press(&mut app, &[KeyCode::Tab]);
    assert_eq!(app.focus, Focus::Dbs);
    press(&mut app, &[KeyCode::BackTab]);
    assert_eq!(app.focus, Focus::Entries);
}

#[test]
fn database_list_moves_and_clamps() {
    let mut app = bare_app();
    press(&mut app, &[KeyCode::Down, KeyCode::Char('j')]);
    assert_eq!(app.db_sel, 2);
    assert!(app.detail_stale, "a new selection needs its detail");
    press(&mut app, &[KeyCode::Down]);
    assert_eq!(app.db_sel, 2, "stays on the last");
    press(&mut app, &[KeyCode::Char('k'), KeyCode::Up, KeyCode::Up]);
    assert_eq!(app.db_sel, 0);
    press(&mut app, &[KeyCode::End]);
    assert_eq!(app.selected_db(), Some(Some("b".to_string())));
    press(&mut app, &[KeyCode::Home]);
    assert_eq!(app.selected_db(), Some(None));
}

#[test]
fn enter_opens_the_selected_database_in_the_browser() {
    let mut app = bare_app();
    press(&mut app, &[KeyCode::Down, KeyCode::Enter]);
    assert_eq!(app.browser.db, Some(Some("a".to_string())));
    assert_eq!(app.focus, Focus::Entries);
    assert_eq!(app.browser.pending, Some(Nav::Reload));
}

#[test]
fn help_overlay_opens_and_any_key_closes() {
    let mut app = bare_app();
    press(&mut app, &[KeyCode::Char('?')]);
    assert_eq!(app.mode, Mode::Help);
    press(&mut app, &[KeyCode::Down]);
    assert_eq!(app.mode, Mode::Normal);
    assert_eq!(app.db_sel, 0, "the closing key does nothing else");
    assert!(!app.quit);
}

#[test]
fn seek_prompt_edits_and_submits() {
    let mut app = bare_app();
    press(&mut app, &[KeyCode::Char('/')]);
    typed(&mut app, "kx1");
    press(&mut app, &[KeyCode::Backspace]);
    assert_eq!(app.mode, Mode::Seek("kx".into()));
    // q while typing is text, not quit.
    typed(&mut app, "q");
    assert!(!app.quit);
    press(&mut app, &[KeyCode::Enter]);
    assert_eq!(app.mode, Mode::Normal);
    assert_eq!(
        app.browser.db,
        Some(None),
        "seeking opens the selected database"
    );
    assert_eq!(app.browser.pending, Some(Nav::Seek(b"kxq".to_vec())));
    assert_eq!(app.focus, Focus::Entries);
    // Esc cancels.
    press(
        &mut app,
        &[KeyCode::Char('/'), KeyCode::Char('z'), KeyCode::Esc],
    );
    assert_eq!(app.mode, Mode::Normal);
    assert!(!app.quit);
    // A bad hex key is an error message, not a move.
    app.browser.pending = None;
    press(&mut app, &[KeyCode::Char('/')]);
    typed(&mut app, "x:abc");
    press(&mut app, &[KeyCode::Enter]);
    assert_eq!(app.browser.pending, None);
    assert!(matches!(&app.status, Some((dlmdb_tui::app::Level::Error, m)) if m.contains("odd")));
}

#[test]
fn seek_syntax() {
    assert_eq!(parse_seek("abc").unwrap(), b"abc");
    assert_eq!(parse_seek("x:00ff10").unwrap(), [0, 255, 16]);
    assert_eq!(parse_seek("0xAB cd").unwrap(), [0xab, 0xcd]);
    assert_eq!(parse_seek("u32:1").unwrap(), 1u32.to_ne_bytes());
    assert_eq!(parse_seek("u64:7").unwrap(), 7u64.to_ne_bytes());
    assert!(parse_seek("x:zz").is_err());
    assert!(parse_seek("u32:-1").is_err());
}

#[test]
fn pause_and_refresh_keys() {
    let mut app = bare_app();
    press(&mut app, &[KeyCode::Char('p')]);
    assert!(app.paused);
    press(&mut app, &[KeyCode::Char(' ')]);
    assert!(!app.paused);
    assert!(app.refresh_requested, "resuming refreshes at once");
    app.refresh_requested = false;
    press(&mut app, &[KeyCode::Char('r')]);
    assert!(app.refresh_requested);
    press(&mut app, &[KeyCode::Char('x')]);
    assert!(app.browser.force_hex);
}

#[test]
fn browser_moves_within_the_window_are_pure() {
    let mut app = bare_app();
    app.open_in_browser(Some("a".into()));
    app.browser.pending = None;
    app.browser.height = 3;
    app.browser.rows = (0..4u8)
        .map(|i| dlmdb_tui::model::Row {
            key: vec![i],
            val: vec![],
            first_dup: true,
            dups: 1,
        })
        .collect();
    app.focus = Focus::Entries;
    press(&mut app, &[KeyCode::Down, KeyCode::Down]);
    assert_eq!((app.browser.sel, app.browser.pending.clone()), (2, None));
    press(&mut app, &[KeyCode::Down]);
    assert_eq!(
        app.browser.pending,
        Some(Nav::ScrollDown),
        "4th row exists: scroll"
    );
    app.browser.pending = None;
    press(&mut app, &[KeyCode::Up, KeyCode::Up, KeyCode::Up]);
    assert_eq!(
        (app.browser.sel, app.browser.pending.clone()),
        (0, Some(Nav::ScrollUp))
    );
    for (k, nav) in [
        (KeyCode::PageDown, Nav::PageDown),
        (KeyCode::PageUp, Nav::PageUp),
        (KeyCode::Home, Nav::Home),
        (KeyCode::End, Nav::End),
    ] {
        press(&mut app, &[k]);
        assert_eq!(app.browser.pending, Some(nav));
    }
    press(&mut app, &[KeyCode::Enter]);
    assert_eq!(app.mode, Mode::Entry);
    press(&mut app, &[KeyCode::Char('j'), KeyCode::PageDown]);
    assert_eq!(
        (app.mode.clone(), app.popup_scroll),
        (Mode::Entry, 21),
        "popup scrolls"
    );
    press(&mut app, &[KeyCode::Char('l')]);
    assert_eq!(app.mode, Mode::Normal);
    press(&mut app, &[KeyCode::Left]);
    assert_eq!(app.focus, Focus::Dbs);
}

/// Keys of the visible window of the browser.
fn window(app: &App) -> Vec<String> {
    app.browser
        .visible()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.key).into_owned())
        .collect()
}

/// Press `keys`, then bring the app up to date with `store`.
fn step(app: &mut App, store: &mut dlmdb_tui::model::Store, keys: &[KeyCode]) {
    press(app, keys);
    app.sync(store);
}

/// Open the seek prompt, type `text` and submit it.
fn seek(app: &mut App, store: &mut dlmdb_tui::model::Store, text: &str) {
    press(app, &[KeyCode::Char('/')]);
    typed(app, text);
    step(app, store, &[KeyCode::Enter]);
}

/// A built store with its database `db` open in the browser, `height` rows
/// high.
fn browsing(db: &str, height: usize) -> (Built, App) {
    let mut b = built();
    let mut app = loaded_app(&mut b.store, height);
    select(&mut app, db);
    step(&mut app, &mut b.store, &[KeyCode::Enter]);
    (b, app)
}

fn selected(app: &App) -> String {
    String::from_utf8_lossy(&app.browser.selected().unwrap().key).into_owned()
}

#[test]
fn paging_through_a_store() {
    let (mut b, mut app) = browsing("plain", 4);
    assert_eq!(window(&app), ["k000000", "k000001", "k000002", "k000003"]);
    step(&mut app, &mut b.store, &[KeyCode::PageDown]);
    assert_eq!(window(&app)[0], "k000004");
    step(
        &mut app,
        &mut b.store,
        &[KeyCode::Down, KeyCode::Down, KeyCode::Down, KeyCode::Down],
    );
    assert_eq!(window(&app)[0], "k000005", "scrolled by one at the bottom");
    assert_eq!(selected(&app), "k000008");
    step(&mut app, &mut b.store, &[KeyCode::PageUp]);
    assert_eq!(window(&app)[0], "k000001");
    step(&mut app, &mut b.store, &[KeyCode::PageUp]);
    assert_eq!(window(&app)[0], "k000000");
    step(&mut app, &mut b.store, &[KeyCode::PageUp]);
    assert_eq!(
        selected(&app),
        "k000000",
        "PgUp at the top selects the first row"
    );
    step(&mut app, &mut b.store, &[KeyCode::End]);
    assert_eq!(window(&app), ["k002996", "k002997", "k002998", "k002999"]);
    assert_eq!(selected(&app), "k002999");
    step(&mut app, &mut b.store, &[KeyCode::Down]);
    assert_eq!(selected(&app), "k002999");
    step(
        &mut app,
        &mut b.store,
        &[KeyCode::Up, KeyCode::Up, KeyCode::Up, KeyCode::Up],
    );
    assert_eq!(window(&app)[0], "k002995");
    step(&mut app, &mut b.store, &[KeyCode::Home]);
    assert_eq!(selected(&app), "k000000");
    seek(&mut app, &mut b.store, "k00123");
    assert_eq!(window(&app)[0], "k001230");
    seek(&mut app, &mut b.store, "zzz");
    assert_eq!(
        selected(&app),
        "k002999",
        "seeking past the end shows the end"
    );
}

#[test]
fn selection_survives_a_refresh_with_new_data() {
    let (mut b, mut app) = browsing("plain", 5);
    step(
        &mut app,
        &mut b.store,
        &[KeyCode::PageDown, KeyCode::Down, KeyCode::Down],
    );
    assert_eq!(selected(&app), "k000007");
    let before = app.snapshot.txnid;
    // Another process inserts a key before the selection and a new database.
    let out = dlmdb_tests::output_ok(&mut child_writer_command(
        "child_writer",
        "TUI_CHILD_STORE",
        &b.path,
    ));
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
    app.refresh_requested = true;
    app.sync(&mut b.store);
    assert!(app.snapshot.txnid > before);
    assert_eq!(
        app.selected_db(),
        Some(Some("plain".into())),
        "db selection kept by name"
    );
    assert_eq!(app.snapshot.dbs.len(), 7);
    assert_eq!(selected(&app), "k000007", "entry selection kept by key");
    assert_eq!(window(&app)[0..3], ["k000005", "k000005a", "k000006"]);
    assert_eq!(app.detail.as_ref().unwrap().stat.entries, 3001);
}

#[test]
fn a_dropped_database_closes_the_browser() {
    let mut app = bare_app();
    press(&mut app, &[KeyCode::End, KeyCode::Enter]);
    assert_eq!(app.browser.db, Some(Some("b".into())));
    let mut snap = app.snapshot.clone();
    snap.dbs.pop();
    app.apply_snapshot(snap);
    assert_eq!(app.browser.db, None);
    assert_eq!(
        app.selected_db(),
        Some(Some("a".into())),
        "selection clamps to the last row"
    );
    assert!(app.detail_stale);
}

/// Run as a child process by `selection_survives_a_refresh_with_new_data`.
#[test]
#[ignore = "runs only as a child process"]
fn child_writer() {
    let Some((env, db)) = child_writer_store("TUI_CHILD_STORE") else {
        return;
    };
    let mut t = env.write_txn().unwrap();
    t.put(db, b"k000005a", b"new", dlmdb::WriteFlags::empty())
        .unwrap();
    t.create_db(Some("added"), dlmdb::DatabaseFlags::empty())
        .unwrap();
    t.commit().unwrap();
}

#[test]
fn counted_databases_show_ranks_and_seek_by_rank() {
    let (mut b, mut app) = browsing("counted", 5);
    assert_eq!(app.browser.first_rank, Some(0));
    step(&mut app, &mut b.store, &[KeyCode::PageDown]);
    assert_eq!(app.browser.first_rank, Some(5));
    seek(&mut app, &mut b.store, "#1234");
    assert_eq!(window(&app)[0], "c01234");
    assert_eq!(app.browser.first_rank, Some(1234));
    seek(&mut app, &mut b.store, "#999999");
    assert_eq!(selected(&app), "c02499");
    // Not COUNTED: no ranks while paging; #N scans, with a progress line
    // between steps, and lands on the same 0-based row.
    select(&mut app, "plain");
    step(&mut app, &mut b.store, &[KeyCode::Left, KeyCode::Enter]);
    assert_eq!(app.browser.first_rank, None);
    app.scan_step = 1000;
    seek(&mut app, &mut b.store, "#2500");
    assert!(
        matches!(&app.status, Some((dlmdb_tui::app::Level::Info, m)) if m.contains("scanning") && m.contains("of 2500")),
        "{:?}",
        app.status
    );
    while app.browser.scan.is_some() {
        app.sync(&mut b.store);
    }
    assert_eq!(window(&app)[0], "k002500");
    assert_eq!(app.browser.first_rank, Some(2500));
    seek(&mut app, &mut b.store, "#3000");
    while app.browser.scan.is_some() {
        app.sync(&mut b.store);
    }
    assert_eq!(selected(&app), "k002999", "past the end shows the end");
}
