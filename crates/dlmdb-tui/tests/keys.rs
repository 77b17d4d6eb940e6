//! One test per key of the page browser, the lower-pane views, n/N, `o`
//! and the mouse, each against a store built by the tests.

mod common;

use common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use dlmdb_format::PageKind;
use dlmdb_tui::app::{App, Focus, Mode, PageNav};
use dlmdb_tui::model::Store;
use dlmdb_tui::pages::{ItemData, PageAt};
use dlmdb_tui::update::{mouse, update};
use ratatui::layout::Rect;
use std::time::Duration;

fn press(app: &mut App, store: &mut Store, keys: &[KeyCode]) {
    for k in keys {
        update(app, KeyEvent::new(*k, KeyModifiers::NONE));
        app.sync(store);
    }
}

/// The test store in a fresh temp dir (removed when the first value is
/// dropped), opened, and an app on a 120x40 screen loaded from it.
fn setup() -> (tempfile::TempDir, Store, App) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(&build_store(dir.path()));
    let mut app = App::new("t", Duration::from_secs(2));
    app.fit_to(Rect::new(0, 0, 120, 40));
    app.sync(&mut store);
    (dir, store, app)
}

fn key_text(app: &App) -> String {
    String::from_utf8_lossy(&app.browser.selected().unwrap().key).into_owned()
}

#[test]
fn digits_switch_the_lower_pane() {
    let (_dir, mut s, mut app) = setup();
    for (k, f) in [
        ('3', Focus::FreeList),
        ('4', Focus::Readers),
        ('1', Focus::Entries),
        ('2', Focus::Pages),
    ] {
        press(&mut app, &mut s, &[KeyCode::Char(k)]);
        assert_eq!((app.focus, app.lower), (f, f));
    }
    // 2 with nothing open opens the selected database's root.
    assert!(app.pages.page.is_some());
    // Tab goes Dbs -> Detail -> the lower pane's view.
    press(&mut app, &mut s, &[KeyCode::Tab, KeyCode::Tab]);
    assert_eq!(app.focus, Focus::Detail);
    press(&mut app, &mut s, &[KeyCode::Tab]);
    assert_eq!(app.focus, Focus::Pages);
    // The reader table lists this viewer.
    let me = std::process::id() as i64;
    assert!(app
        .readers
        .slots
        .as_ref()
        .unwrap()
        .iter()
        .any(|r| r.pid == me));
}

#[test]
fn o_opens_the_root_page_and_the_page_of_an_entry() {
    let (_dir, mut s, mut app) = setup();
    select(&mut app, "plain");
    press(&mut app, &mut s, &[KeyCode::Char('o')]);
    let root = app.pages.page.clone().unwrap();
    assert_eq!(root.kind, PageKind::Branch);
    assert_eq!(app.focus, Focus::Pages);
    // From the entries: the leaf holding the selected entry, path from the root.
    press(&mut app, &mut s, &[KeyCode::Char('1'), KeyCode::Enter]);
    select(&mut app, "plain");
    app.open_in_browser(Some("plain".into()));
    app.sync(&mut s);
    app.browser.pending = Some(dlmdb_tui::app::Nav::Seek(b"k001777".to_vec()));
    app.sync(&mut s);
    press(&mut app, &mut s, &[KeyCode::Char('o')]);
    let leaf = app.pages.page.as_ref().unwrap();
    assert_eq!(leaf.kind, PageKind::Leaf);
    assert_eq!(app.pages.path.len(), 2);
    assert_eq!(app.pages.selected().unwrap().key, b"k001777");
}

#[test]
fn enter_descends_backspace_goes_up() {
    let (_dir, mut s, mut app) = setup();
    select(&mut app, "plain");
    press(
        &mut app,
        &mut s,
        &[KeyCode::Char('o'), KeyCode::Down, KeyCode::Down],
    );
    let ItemData::Child { pgno, .. } = app.pages.selected().unwrap().data else {
        panic!("root is a branch");
    };
    press(&mut app, &mut s, &[KeyCode::Enter]);
    assert_eq!(app.pages.page.as_ref().unwrap().at, PageAt::Page(pgno));
    assert_eq!(app.pages.sel, 0);
    press(&mut app, &mut s, &[KeyCode::Backspace]);
    assert_eq!(app.pages.path.len(), 1);
    assert_eq!(app.pages.sel, 2, "the child taken is selected again");
    // Backspace at the first page stays and says so.
    press(&mut app, &mut s, &[KeyCode::Backspace]);
    assert_eq!(app.pages.path.len(), 1);
    assert!(app.status.as_ref().unwrap().1.contains("first page"));
    // Right and l descend too; Left goes up.
    press(&mut app, &mut s, &[KeyCode::Right]);
    assert_eq!(app.pages.path.len(), 2);
    press(&mut app, &mut s, &[KeyCode::Left, KeyCode::Char('l')]);
    assert_eq!(app.pages.path.len(), 2);
}

#[test]
fn enter_follows_overflow_sub_tree_and_sub_page() {
    let (_dir, mut s, mut app) = setup();
    select(&mut app, "big");
    press(&mut app, &mut s, &[KeyCode::Char('o')]);
    while !matches!(
        app.pages.selected().unwrap().data,
        ItemData::Overflow { .. }
    ) {
        press(&mut app, &mut s, &[KeyCode::Down]);
    }
    press(&mut app, &mut s, &[KeyCode::Enter]);
    let p = app.pages.page.as_ref().unwrap();
    assert_eq!(p.kind, PageKind::Overflow);
    let run = p.overflow.unwrap();
    assert_eq!(run.value_size, Some(20000));
    assert_eq!(run.pages, (16u32 + 20000).div_ceil(4096));

    select(&mut app, "dups");
    app.pages.pending = Some(PageNav::KeyPage(Some("dups".into()), b"hot".to_vec()));
    app.sync(&mut s);
    assert!(matches!(
        app.pages.selected().unwrap().data,
        ItemData::SubDb(_)
    ));
    press(&mut app, &mut s, &[KeyCode::Enter]);
    let sub = app.pages.page.as_ref().unwrap();
    assert!(sub.ctx.dup_tree);
    assert!(sub
        .items
        .iter()
        .all(|it| !it.key.is_empty() || it.index == 0));

    app.pages.pending = Some(PageNav::KeyPage(Some("dups".into()), b"key-003".to_vec()));
    app.sync(&mut s);
    assert!(matches!(
        app.pages.selected().unwrap().data,
        ItemData::SubPage { items: 4, .. }
    ));
    press(&mut app, &mut s, &[KeyCode::Enter]);
    let sp = app.pages.page.as_ref().unwrap();
    assert!(matches!(sp.at, PageAt::SubPage { .. }));
    let values: Vec<&[u8]> = sp.items.iter().map(|i| i.key.as_slice()).collect();
    assert_eq!(values, vec![&b"v0"[..], b"v1", b"v2", b"v3"]);
    // A value points nowhere: Enter says so.
    press(&mut app, &mut s, &[KeyCode::Enter]);
    assert!(app.status.as_ref().unwrap().1.contains("points to no page"));
}

#[test]
fn h_toggles_hex_and_g_jumps_to_a_page() {
    let (_dir, mut s, mut app) = setup();
    select(&mut app, "plain");
    press(&mut app, &mut s, &[KeyCode::Char('o'), KeyCode::Char('h')]);
    assert!(app.pages.hex);
    assert_eq!(app.pages.rows(), 4096 / 16);
    press(&mut app, &mut s, &[KeyCode::Char('h')]);
    assert!(!app.pages.hex);
    press(&mut app, &mut s, &[KeyCode::Char('g')]);
    assert_eq!(app.mode, Mode::GotoPage(String::new()));
    for c in "2x5".chars() {
        press(&mut app, &mut s, &[KeyCode::Char(c)]);
    }
    assert_eq!(
        app.mode,
        Mode::GotoPage("25".into()),
        "only digits are taken"
    );
    press(&mut app, &mut s, &[KeyCode::Backspace, KeyCode::Enter]);
    assert_eq!(app.pages.page.as_ref().unwrap().at, PageAt::Page(2));
    // Past the end of the file: an error, the page stays.
    press(&mut app, &mut s, &[KeyCode::Char('g')]);
    for c in "999999".chars() {
        press(&mut app, &mut s, &[KeyCode::Char(c)]);
    }
    press(&mut app, &mut s, &[KeyCode::Enter]);
    assert!(app.status.as_ref().unwrap().1.contains("past the end"));
    assert_eq!(app.pages.page.as_ref().unwrap().at, PageAt::Page(2));
    // Meta page 0: shown, with its type said.
    press(
        &mut app,
        &mut s,
        &[KeyCode::Char('g'), KeyCode::Char('0'), KeyCode::Enter],
    );
    let p = app.pages.page.as_ref().unwrap();
    assert_eq!(p.kind, PageKind::Meta);
    assert!(p.problem.as_ref().unwrap().contains("META"));
}

#[test]
fn page_list_moves_and_pages() {
    let (_dir, mut s, mut app) = setup();
    select(&mut app, "plain");
    press(&mut app, &mut s, &[KeyCode::Char('o'), KeyCode::Enter]);
    let n = app.pages.page.as_ref().unwrap().items.len();
    press(&mut app, &mut s, &[KeyCode::End]);
    assert_eq!(app.pages.sel, n - 1);
    press(&mut app, &mut s, &[KeyCode::Home, KeyCode::PageDown]);
    assert_eq!(app.pages.sel, app.pages.height.min(n - 1));
    press(
        &mut app,
        &mut s,
        &[
            KeyCode::PageUp,
            KeyCode::Char('j'),
            KeyCode::Char('k'),
            KeyCode::Down,
        ],
    );
    assert_eq!(app.pages.sel, 1);
}

#[test]
fn n_and_shift_n_move_between_distinct_keys() {
    let (_dir, mut s, mut app) = setup();
    select(&mut app, "dups");
    press(&mut app, &mut s, &[KeyCode::Enter]);
    assert_eq!(key_text(&app), "hot");
    press(&mut app, &mut s, &[KeyCode::Char('n')]);
    assert_eq!(key_text(&app), "key-000");
    press(&mut app, &mut s, &[KeyCode::Char('n'), KeyCode::Char('n')]);
    assert_eq!(key_text(&app), "key-002");
    assert!(app.browser.selected().unwrap().first_dup);
    press(&mut app, &mut s, &[KeyCode::Down, KeyCode::Char('N')]);
    assert_eq!(key_text(&app), "key-001", "from the 2nd value of key-002");
    assert!(app.browser.selected().unwrap().first_dup);
    press(&mut app, &mut s, &[KeyCode::Char('N'), KeyCode::Char('N')]);
    assert_eq!(key_text(&app), "hot");
    assert_eq!(app.browser.selected().unwrap().val, b"value-00000");
    press(&mut app, &mut s, &[KeyCode::Char('N')]);
    assert_eq!(key_text(&app), "hot");
    assert!(app.status.as_ref().unwrap().1.contains("no earlier key"));
    // Plain databases: the next key is the next row.
    select(&mut app, "plain");
    press(
        &mut app,
        &mut s,
        &[KeyCode::Left, KeyCode::Enter, KeyCode::Char('n')],
    );
    assert_eq!(key_text(&app), "k000001");
}

#[test]
fn free_list_and_reader_lists_move() {
    let (_dir, mut s, mut app) = setup();
    app.free_list.records = (0..5)
        .map(|i| dlmdb_format::FreeRecord {
            txnid: i,
            pages: vec![10 + i],
        })
        .collect();
    press(&mut app, &mut s, &[KeyCode::Char('3'), KeyCode::End]);
    assert_eq!(app.free_list.sel, 4);
    press(&mut app, &mut s, &[KeyCode::Up, KeyCode::Home]);
    assert_eq!(app.free_list.sel, 0);
    press(
        &mut app,
        &mut s,
        &[KeyCode::Char('4'), KeyCode::Down, KeyCode::End],
    );
    assert_eq!(app.readers.sel, 0, "one slot: stays on it");
}

/// A mouse event of `kind` at column `x`, row `y`.
fn mouse_at(app: &mut App, x: u16, y: u16, kind: MouseEventKind) {
    mouse(
        app,
        MouseEvent {
            kind,
            column: x,
            row: y,
            modifiers: KeyModifiers::NONE,
        },
    );
}

/// A left click at column `x`, row `y`.
fn click(app: &mut App, x: u16, y: u16) {
    mouse_at(app, x, y, MouseEventKind::Down(MouseButton::Left));
}

#[test]
fn mouse_click_selects_and_wheel_scrolls() {
    let (_dir, mut s, mut app) = setup();
    let a = dlmdb_tui::ui::areas(app.screen, &app);
    // Third database row: border, column header, then rows.
    click(&mut app, a.dbs.x + 3, a.dbs.y + 2 + 2);
    assert_eq!(app.focus, Focus::Dbs);
    assert_eq!(app.db_sel, 2);
    mouse_at(
        &mut app,
        a.dbs.x + 3,
        a.dbs.y + 3,
        MouseEventKind::ScrollDown,
    );
    assert_eq!(app.db_sel, 3);
    mouse_at(&mut app, a.dbs.x + 3, a.dbs.y + 3, MouseEventKind::ScrollUp);
    assert_eq!(app.db_sel, 2);
    // Entries: click the 4th row.
    select(&mut app, "plain");
    press(&mut app, &mut s, &[KeyCode::Enter]);
    let a = dlmdb_tui::ui::areas(app.screen, &app);
    click(&mut app, a.lower.x + 5, a.lower.y + 2 + 3);
    assert_eq!(app.browser.sel, 3);
    mouse_at(
        &mut app,
        a.lower.x + 5,
        a.lower.y + 5,
        MouseEventKind::ScrollDown,
    );
    assert_eq!(app.browser.sel, 4);
    // Pages: click an item row below the header panel.
    press(&mut app, &mut s, &[KeyCode::Char('o')]);
    let p = app.pages.page.clone().unwrap();
    let a = dlmdb_tui::ui::areas(app.screen, &app);
    let (top, _) = dlmdb_tui::ui::list_geometry(a.lower, &p);
    click(&mut app, a.lower.x + 5, top + 1);
    assert_eq!(app.focus, Focus::Pages);
    assert_eq!(app.pages.sel, 1);
    // The detail pane: a click focuses it.
    click(&mut app, a.detail.x + 5, a.detail.y + 2);
    assert_eq!(app.focus, Focus::Detail);
}

#[test]
fn x_toggles_hex_values() {
    let (_dir, mut s, mut app) = setup();
    press(&mut app, &mut s, &[KeyCode::Char('x')]);
    assert!(app.browser.force_hex);
    press(&mut app, &mut s, &[KeyCode::Char('x')]);
    assert!(!app.browser.force_hex);
}

#[test]
fn f1_detail_scroll_and_list_ends() {
    let (_dir, mut s, mut app) = setup();
    press(&mut app, &mut s, &[KeyCode::F(1)]);
    assert_eq!(app.mode, Mode::Help);
    press(&mut app, &mut s, &[KeyCode::Char('z')]);
    assert_eq!(app.mode, Mode::Normal);
    // Detail pane: arrows and pages scroll it, Home goes back up.
    press(
        &mut app,
        &mut s,
        &[KeyCode::Tab, KeyCode::Down, KeyCode::Char('j')],
    );
    assert_eq!((app.focus, app.detail_scroll), (Focus::Detail, 2));
    press(&mut app, &mut s, &[KeyCode::PageDown, KeyCode::Up]);
    assert_eq!(app.detail_scroll, 11);
    press(&mut app, &mut s, &[KeyCode::Home]);
    assert_eq!(app.detail_scroll, 0);
    // Databases: G last, g first, Right / l open the entries.
    press(&mut app, &mut s, &[KeyCode::BackTab, KeyCode::Char('G')]);
    assert_eq!(app.db_sel, app.snapshot.dbs.len() - 1);
    press(&mut app, &mut s, &[KeyCode::Char('g')]);
    assert_eq!(app.db_sel, 0);
    press(&mut app, &mut s, &[KeyCode::Down, KeyCode::Right]);
    assert_eq!(app.focus, Focus::Entries);
    assert_eq!(app.browser.db, app.selected_db());
    press(&mut app, &mut s, &[KeyCode::Char('h'), KeyCode::Char('l')]);
    assert_eq!(app.focus, Focus::Entries, "h goes back, l opens again");
    // Mouse events are ignored while a prompt or overlay is open.
    press(&mut app, &mut s, &[KeyCode::Char('/')]);
    let sel = app.db_sel;
    let a = dlmdb_tui::ui::areas(app.screen, &app);
    click(&mut app, a.dbs.x + 3, a.dbs.y + 4);
    assert_eq!((app.db_sel, app.focus), (sel, Focus::Entries));
}
