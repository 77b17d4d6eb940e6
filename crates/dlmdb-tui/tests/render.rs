//! Rendering snapshots with ratatui's TestBackend (no terminal needed).
//! Everything shown is deterministic: fixed title, stores built the same way
//! every run, no clock.

mod common;

use common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use dlmdb_tui::app::App;
use dlmdb_tui::model::Store;
use dlmdb_tui::update;

const W: u16 = 120;
const H: u16 = 40;

fn render(app: &App) -> String {
    render_sized(app, W, H)
}

fn keys(app: &mut App, store: &mut Store, ks: &[KeyCode]) {
    for k in ks {
        update::update(app, KeyEvent::new(*k, KeyModifiers::NONE));
        app.sync(store);
    }
}

fn app_for(store: &mut Store) -> App {
    let mut app = App::new("test-store", std::time::Duration::from_secs(2));
    app.fit_to(ratatui::layout::Rect::new(0, 0, W, H));
    app.sync(store);
    app
}

/// The built store with database `db` selected, then `ks` pressed.
fn opened(db: &str, ks: &[KeyCode]) -> (Built, App) {
    let mut b = built();
    let mut app = app_for(&mut b.store);
    select(&mut app, db);
    keys(&mut app, &mut b.store, ks);
    (b, app)
}

#[test]
fn start_screen() {
    let mut b = built();
    let app = app_for(&mut b.store);
    insta::assert_snapshot!(render(&app));
}

#[test]
fn plain_database_opened() {
    let (_b, app) = opened("plain", &[KeyCode::Enter, KeyCode::Down, KeyCode::Down]);
    insta::assert_snapshot!(render(&app));
}

#[test]
fn dupsort_database_with_duplicates_under_keys() {
    let (mut b, mut app) = opened("dups", &[KeyCode::Enter, KeyCode::Char('/')]);
    for c in "key-002".chars() {
        update::update(
            &mut app,
            KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        );
    }
    keys(&mut app, &mut b.store, &[KeyCode::Enter]);
    insta::assert_snapshot!(render(&app));
}

#[test]
fn prefix_and_counted_details() {
    let (mut b, mut app) = opened("prefixed", &[]);
    app.sync(&mut b.store);
    let prefixed = render(&app);
    select(&mut app, "counted");
    keys(&mut app, &mut b.store, &[KeyCode::Enter, KeyCode::PageDown]);
    let counted = render(&app);
    insta::assert_snapshot!("prefixed", prefixed);
    insta::assert_snapshot!("counted", counted);
}

#[test]
fn overflow_value_popup_and_help() {
    let (mut b, mut app) = opened("big", &[KeyCode::Enter, KeyCode::Down, KeyCode::Down]);
    let table = render(&app);
    keys(&mut app, &mut b.store, &[KeyCode::Enter]);
    let popup = render(&app);
    keys(&mut app, &mut b.store, &[KeyCode::Esc, KeyCode::Char('?')]);
    let help = render(&app);
    insta::assert_snapshot!("big_table", table);
    insta::assert_snapshot!("big_popup", popup);
    insta::assert_snapshot!("help", help);
}

#[test]
fn paused_status_line() {
    let mut b = built();
    let mut app = app_for(&mut b.store);
    keys(&mut app, &mut b.store, &[KeyCode::Char('p')]);
    let screen = render(&app);
    let last = screen.lines().last().unwrap().to_string();
    insta::assert_snapshot!(last);
}

/// Overwrite one leaf page of `plain` with junk: the viewer must report the
/// engine's error, not panic.
#[test]
fn corrupt_page_is_an_error_line_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = build_store(dir.path());
    // Find a leaf of `plain` by its first key on disk: page-aligned search.
    let data = path.join("data.mdb");
    let mut bytes = std::fs::read(&data).unwrap();
    let needle = b"k001500";
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap();
    let page = at / 4096;
    for b in &mut bytes[page * 4096 + 16..(page + 1) * 4096] {
        *b = 0xee;
    }
    // Mess up the header too, so the page type is wrong.
    bytes[page * 4096 + 10] = 0xff;
    bytes[page * 4096 + 11] = 0xff;
    std::fs::write(&data, &bytes).unwrap();

    let mut store = open(&path);
    let mut app = app_for(&mut store);
    select(&mut app, "plain");
    keys(&mut app, &mut store, &[KeyCode::Enter, KeyCode::End]);
    assert!(app.detail_error.is_some());
    let screen = render(&app);
    assert!(screen.contains("error:"), "{screen}");
    let status = screen.lines().last().unwrap();
    assert!(status.contains("MDB_"), "{status}");
}
