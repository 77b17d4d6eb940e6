//! Every pane at 80x24, 120x40 and 200x50 on the reference fixtures
//! (plain with overflow values, counted, prefix-compressed, DUPSORT with
//! sub-databases), driven by real key presses: root page, down to a leaf
//! and back, hex view, an overflow run, a compressed leaf, a duplicate
//! sub-tree, the entry of a key shown on its page, free list, readers.
//! The fixtures are copied to a temp dir first (opening creates a lock file).

mod common;

use common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use dlmdb_format::PageKind;
use dlmdb_tui::app::App;
use dlmdb_tui::model::{OpenOptions, Store};
use dlmdb_tui::pages::{ItemData, ReaderSlot};
use dlmdb_tui::update;
use ratatui::layout::Rect;
use std::time::Duration;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 50)];

/// Plain text of the screen, one line per row.
fn render(app: &App) -> String {
    render_sized(app, app.screen.width, app.screen.height)
}

struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
}

/// A copy of `v2/<name>.mdb` opened like the binary opens a data file.
fn fixture(name: &str) -> Option<Fixture> {
    let src = fixtures_dir().join("v2").join(format!("{name}.mdb"));
    if !src.exists() {
        eprintln!("fixture {} not found; set DLMDB_FIXTURES", src.display());
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let dst = dir.path().join(format!("{name}.mdb"));
    std::fs::copy(&src, &dst).unwrap();
    let store = Store::open(&OpenOptions::new(&dst)).unwrap();
    Some(Fixture { _dir: dir, store })
}

fn app(store: &mut Store, (w, h): (u16, u16)) -> App {
    let mut app = App::new(
        format!("fixtures/v2/{}", "store.mdb"),
        Duration::from_secs(2),
    );
    app.fit_to(Rect::new(0, 0, w, h));
    app.sync(store);
    app
}

fn press(app: &mut App, store: &mut Store, keys: &[KeyCode]) {
    for k in keys {
        update::update(app, KeyEvent::new(*k, KeyModifiers::NONE));
        app.sync(store);
    }
}

fn typed(app: &mut App, store: &mut Store, s: &str) {
    for c in s.chars() {
        press(app, store, &[KeyCode::Char(c)]);
    }
}

/// Press Down in the page browser until `pred` holds for the selected item.
fn down_to(app: &mut App, store: &mut Store, pred: impl Fn(&ItemData) -> bool) {
    for _ in 0..2000 {
        if app.pages.selected().is_some_and(|it| pred(&it.data)) {
            return;
        }
        press(app, store, &[KeyCode::Down]);
    }
    panic!(
        "no such item on page {:?}",
        app.pages.page.as_ref().map(|p| &p.at)
    );
}

/// Run `body` on a fresh copy of `v2/<name>.mdb` at each of [`SIZES`].
fn each_size(name: &str, mut body: impl FnMut(&mut App, &mut Store, (u16, u16))) {
    for size in SIZES {
        let Some(mut f) = fixture(name) else {
            return;
        };
        let mut a = app(&mut f.store, size);
        body(&mut a, &mut f.store, size);
    }
}

/// [`each_size`], with the database `db` selected before `body` runs.
fn each_size_in(name: &str, db: &str, mut body: impl FnMut(&mut App, &mut Store, (u16, u16))) {
    each_size(name, |a, s, size| {
        select(a, db);
        body(a, s, size);
    });
}

/// Kind of the page the page browser shows.
fn page_kind(app: &App) -> PageKind {
    app.pages.page.as_ref().unwrap().kind
}

fn snap(name: &str, (w, h): (u16, u16), screen: String) {
    insta::assert_snapshot!(format!("{w}x{h}_{name}"), screen);
}

#[test]
fn plain_root_leaf_back_hex_overflow() {
    each_size("plain", |a, s, size| {
        snap("plain_start", size, render(a));
        select(a, "big");
        press(a, s, &[KeyCode::Char('o')]);
        assert_eq!(page_kind(a), PageKind::Branch);
        snap("plain_big_root", size, render(a));
        press(a, s, &[KeyCode::Down, KeyCode::Enter]);
        assert_eq!(a.pages.path.len(), 2);
        snap("plain_big_leaf", size, render(a));
        down_to(a, s, |d| matches!(d, ItemData::Overflow { .. }));
        press(a, s, &[KeyCode::Char('h')]);
        snap("plain_big_leaf_hex", size, render(a));
        press(a, s, &[KeyCode::Char('h'), KeyCode::Enter]);
        assert_eq!(page_kind(a), PageKind::Overflow);
        snap("plain_big_overflow", size, render(a));
        press(a, s, &[KeyCode::Backspace, KeyCode::Backspace]);
        assert_eq!(a.pages.path.len(), 1);
        assert_eq!(
            a.pages.sel, 1,
            "back at the root with the child taken selected"
        );
        snap("plain_big_back_at_root", size, render(a));
        press(a, s, &[KeyCode::Char('3')]);
        snap("plain_free_list", size, render(a));
        // The reader table with fixed slots (a live one holds this test's pid).
        a.readers.slots = Some(vec![
            ReaderSlot {
                pid: 4242,
                thread: "7f0000001000".into(),
                txnid: Some(a.snapshot.env.last_txnid),
            },
            ReaderSlot {
                pid: 4343,
                thread: "7f0000002000".into(),
                txnid: None,
            },
        ]);
        press(a, s, &[KeyCode::Char('4')]);
        snap("plain_readers", size, render(a));
    });
}

#[test]
fn intkey_entries_and_page_show_numbers() {
    each_size_in("plain", "intkey32", |a, s, size| {
        press(a, s, &[KeyCode::Enter, KeyCode::Down]);
        let screen = render(a);
        assert!(!screen.contains("00000000"), "{screen}");
        snap("intkey32_entries", size, screen);
        press(a, s, &[KeyCode::Char('o')]);
        snap("intkey32_leaf_of_entry", size, render(a));
    });
}

#[test]
fn counted_branch_counts_and_rank_titles() {
    each_size_in("counted", "counted", |a, s, size| {
        press(a, s, &[KeyCode::Char('o')]);
        snap("counted_root", size, render(a));
        press(a, s, &[KeyCode::Char('1'), KeyCode::Char('/')]);
        typed(a, s, "#100");
        press(a, s, &[KeyCode::Enter]);
        assert_eq!(a.browser.first_rank, Some(100));
        snap("counted_rank_100", size, render(a));
    });
}

#[test]
fn prefix_compressed_leaf() {
    each_size_in("prefix", "prefix", |a, s, size| {
        press(a, s, &[KeyCode::Char('o'), KeyCode::Down, KeyCode::Enter]);
        let p = a.pages.page.as_ref().unwrap();
        assert!(p.compressed);
        assert!(p.items.iter().skip(1).any(|it| it.shared.unwrap_or(0) > 0));
        snap("prefix_leaf", size, render(a));
        press(a, s, &[KeyCode::Down, KeyCode::Down, KeyCode::Char('h')]);
        snap("prefix_leaf_hex", size, render(a));
    });
}

#[test]
fn dupsort_sub_tree_and_sub_page() {
    each_size_in("dupsort", "dups", |a, s, size| {
        press(a, s, &[KeyCode::Enter, KeyCode::Char('/')]);
        typed(a, s, "hot-1");
        press(a, s, &[KeyCode::Enter]);
        snap("dups_entries_hot1", size, render(a));
        press(a, s, &[KeyCode::Char('o')]);
        let it = a.pages.selected().unwrap();
        assert_eq!(it.key, b"hot-1");
        assert!(matches!(it.data, ItemData::SubDb(_)));
        snap("dups_leaf_of_hot1", size, render(a));
        press(a, s, &[KeyCode::Enter]);
        assert!(a.pages.page.as_ref().unwrap().ctx.dup_tree);
        snap("dups_hot1_sub_tree", size, render(a));
        press(a, s, &[KeyCode::Backspace, KeyCode::Home]);
        down_to(a, s, |d| matches!(d, ItemData::SubPage { .. }));
        press(a, s, &[KeyCode::Enter]);
        snap("dups_sub_page", size, render(a));
    });
}

#[test]
fn help_and_goto_prompt() {
    each_size("plain", |a, s, size| {
        press(a, s, &[KeyCode::Char('2'), KeyCode::Char('g')]);
        typed(a, s, "3");
        snap("goto_prompt", size, render(a));
        press(a, s, &[KeyCode::Enter]);
        assert_eq!(
            a.pages.path.last().unwrap().at,
            dlmdb_tui::pages::PageAt::Page(3)
        );
        press(a, s, &[KeyCode::Char('?')]);
        snap("help", size, render(a));
    });
}

/// A data file shorter than the meta page's last page: the header warns
/// (the engine refuses most such files; a shrinking file can still show it).
#[test]
fn short_file_warning_in_the_header() {
    let Some(mut f) = fixture("plain") else {
        return;
    };
    let s = &mut f.store;
    let mut a = app(s, (80, 24));
    assert!(!render(&a).contains("WARNING"));
    a.snapshot.env.file_len = Some(100_000);
    a.fit_to(Rect::new(0, 0, 80, 24));
    let screen = render(&a);
    let warning = screen.lines().nth(2).unwrap();
    assert!(
        warning.starts_with("WARNING: file 97.7 KiB < last page 467 needs 1.8 MiB"),
        "{screen}"
    );
    snap("short_file_warning", (80, 24), screen);
}
