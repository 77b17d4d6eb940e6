//! Key events to state changes. Pure: nothing here touches the store or the
//! terminal; moves that need data leave a request ([`Nav`], a refresh, a
//! stale detail pane) that [`App::sync`](crate::app::App::sync) carries out.

use crate::app::{App, Focus, Mode, Nav, PageNav};
use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

/// Apply one key press.
pub fn update(app: &mut App, key: KeyEvent) {
    if key.kind == KeyEventKind::Release {
        return;
    }
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        app.quit = true;
        return;
    }
    match app.mode.clone() {
        Mode::Help => {
            // Any key closes the overlay; q still quits.
            if key.code == KeyCode::Char('q') {
                app.quit = true;
            }
            app.mode = Mode::Normal;
        }
        Mode::Entry => match key.code {
            KeyCode::Char('q') => app.quit = true,
            KeyCode::Char('x') => app.browser.force_hex = !app.browser.force_hex,
            KeyCode::Down | KeyCode::Char('j') => {
                app.popup_scroll = app.popup_scroll.saturating_add(1)
            }
            KeyCode::Up | KeyCode::Char('k') => {
                app.popup_scroll = app.popup_scroll.saturating_sub(1)
            }
            KeyCode::PageDown => app.popup_scroll = app.popup_scroll.saturating_add(20),
            KeyCode::PageUp => app.popup_scroll = app.popup_scroll.saturating_sub(20),
            KeyCode::Home => app.popup_scroll = 0,
            _ => app.mode = Mode::Normal,
        },
        Mode::Seek(mut text) => match key.code {
            KeyCode::Esc => app.mode = Mode::Normal,
            KeyCode::Enter => {
                app.mode = Mode::Normal;
                let nav = match text.strip_prefix('#') {
                    Some(n) => n
                        .trim()
                        .parse::<u64>()
                        .map(Nav::Rank)
                        .map_err(|e| format!("#rank: {e}")),
                    None => parse_seek(&text).map(Nav::Seek),
                };
                match nav {
                    Ok(nav) => {
                        if app.browser.db.is_none() {
                            if let Some(db) = app.selected_db() {
                                app.open_in_browser(db);
                            }
                        }
                        app.browser.pending = Some(nav);
                        app.set_focus(Focus::Entries);
                    }
                    Err(e) => app.set_error(e),
                }
            }
            KeyCode::Backspace => {
                text.pop();
                app.mode = Mode::Seek(text);
            }
            KeyCode::Char(c) => {
                text.push(c);
                app.mode = Mode::Seek(text);
            }
            _ => {}
        },
        Mode::GotoPage(mut text) => match key.code {
            KeyCode::Esc => app.mode = Mode::Normal,
            KeyCode::Enter => {
                app.mode = Mode::Normal;
                match text.trim().parse::<u64>() {
                    Ok(n) => {
                        app.pages.pending = Some(PageNav::Goto(n));
                        app.set_focus(Focus::Pages);
                    }
                    Err(_) => app.set_error(format!("not a page number: {text:?}")),
                }
            }
            KeyCode::Backspace => {
                text.pop();
                app.mode = Mode::GotoPage(text);
            }
            KeyCode::Char(c) if c.is_ascii_digit() => {
                text.push(c);
                app.mode = Mode::GotoPage(text);
            }
            _ => {}
        },
        Mode::Normal => normal_key(app, key),
    }
}

fn normal_key(app: &mut App, key: KeyEvent) {
    match key.code {
        KeyCode::Char('q') | KeyCode::Esc => app.quit = true,
        KeyCode::Char('?') | KeyCode::F(1) => app.mode = Mode::Help,
        KeyCode::Tab => app.focus_next(),
        KeyCode::BackTab => app.focus_prev(),
        KeyCode::Char('1') => app.set_focus(Focus::Entries),
        KeyCode::Char('2') => {
            if app.pages.page.is_none() {
                if let Some(db) = app.selected_db() {
                    app.pages.pending = Some(PageNav::Root(db));
                }
            }
            app.set_focus(Focus::Pages)
        }
        KeyCode::Char('3') => app.set_focus(Focus::FreeList),
        KeyCode::Char('4') => app.set_focus(Focus::Readers),
        KeyCode::Char('o') => open_page(app),
        KeyCode::Char('r') => {
            app.refresh_requested = true;
            app.set_info("refreshing");
        }
        KeyCode::Char('p') | KeyCode::Char(' ') => {
            app.paused = !app.paused;
            app.set_info(if app.paused {
                "live refresh paused (p resumes)"
            } else {
                "live refresh resumed"
            });
            if !app.paused {
                app.refresh_requested = true;
            }
        }
        KeyCode::Char('x') => app.browser.force_hex = !app.browser.force_hex,
        KeyCode::Char('/') => app.mode = Mode::Seek(String::new()),
        _ => match app.focus {
            Focus::Dbs => dbs_key(app, key),
            Focus::Detail => detail_key(app, key),
            Focus::Entries => entries_key(app, key),
            Focus::Pages => pages_key(app, key),
            Focus::FreeList => {
                let n = app.free_list.records.len();
                list_key(&mut app.free_list.sel, n, app.pages.height, key)
            }
            Focus::Readers => {
                let n = app.readers.slots.as_ref().map_or(0, Vec::len);
                list_key(&mut app.readers.sel, n, app.pages.height, key)
            }
        },
    }
}

/// `o`: from the entry browser the leaf holding the selected entry, else
/// the selected database's root page.
fn open_page(app: &mut App) {
    if app.focus == Focus::Entries {
        if let (Some(db), Some(row)) = (app.browser.db.clone(), app.browser.selected()) {
            app.pages.pending = Some(PageNav::KeyPage(db, row.key.clone()));
            app.set_focus(Focus::Pages);
            return;
        }
    }
    if let Some(db) = app.selected_db() {
        app.open_root_page(db);
    }
}

/// Up/Down/PgUp/PgDn/Home/End over a list of `n` rows.
fn list_key(sel: &mut usize, n: usize, page: usize, key: KeyEvent) {
    let last = n.saturating_sub(1);
    let page = page.max(1);
    *sel = match key.code {
        KeyCode::Down | KeyCode::Char('j') => (*sel + 1).min(last),
        KeyCode::Up | KeyCode::Char('k') => sel.saturating_sub(1),
        KeyCode::PageDown => (*sel + page).min(last),
        KeyCode::PageUp => sel.saturating_sub(page),
        KeyCode::Home => 0,
        KeyCode::End | KeyCode::Char('G') => last,
        _ => *sel,
    };
}

fn pages_key(app: &mut App, key: KeyEvent) {
    let pb = &mut app.pages;
    match key.code {
        KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => pb.pending = Some(PageNav::Descend),
        KeyCode::Backspace | KeyCode::Left => pb.pending = Some(PageNav::Up),
        KeyCode::Char('h') => pb.hex = !pb.hex,
        KeyCode::Char('g') => app.mode = Mode::GotoPage(String::new()),
        _ => {
            let n = pb.page.as_ref().map_or(0, |p| p.items.len());
            list_key(&mut pb.sel, n, pb.height, key)
        }
    }
}

fn dbs_key(app: &mut App, key: KeyEvent) {
    let n = app.snapshot.dbs.len();
    let page = app.browser.height.max(1);
    match key.code {
        KeyCode::Down | KeyCode::Char('j') => app.select_db(app.db_sel + 1),
        KeyCode::Up | KeyCode::Char('k') => app.select_db(app.db_sel.saturating_sub(1)),
        KeyCode::PageDown => app.select_db(app.db_sel + page),
        KeyCode::PageUp => app.select_db(app.db_sel.saturating_sub(page)),
        KeyCode::Home | KeyCode::Char('g') => app.select_db(0),
        KeyCode::End | KeyCode::Char('G') => app.select_db(n.saturating_sub(1)),
        KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => {
            if let Some(db) = app.selected_db() {
                app.open_in_browser(db);
                app.set_focus(Focus::Entries);
            }
        }
        _ => {}
    }
}

fn detail_key(app: &mut App, key: KeyEvent) {
    match key.code {
        KeyCode::Down | KeyCode::Char('j') => {
            app.detail_scroll = app.detail_scroll.saturating_add(1)
        }
        KeyCode::Up | KeyCode::Char('k') => app.detail_scroll = app.detail_scroll.saturating_sub(1),
        KeyCode::PageDown => app.detail_scroll = app.detail_scroll.saturating_add(10),
        KeyCode::PageUp => app.detail_scroll = app.detail_scroll.saturating_sub(10),
        KeyCode::Home | KeyCode::Char('g') => app.detail_scroll = 0,
        KeyCode::Enter => {
            if let Some(db) = app.selected_db() {
                app.open_in_browser(db);
                app.set_focus(Focus::Entries);
            }
        }
        _ => {}
    }
}

fn entries_key(app: &mut App, key: KeyEvent) {
    let b = &mut app.browser;
    if b.db.is_none() {
        if key.code == KeyCode::Enter {
            if let Some(db) = app.selected_db() {
                app.open_in_browser(db);
            }
        }
        return;
    }
    let shown = b.visible().len();
    match key.code {
        KeyCode::Down | KeyCode::Char('j') => {
            if b.sel + 1 < shown {
                b.sel += 1;
            } else if b.more_below() {
                b.pending = Some(Nav::ScrollDown);
            }
        }
        KeyCode::Up | KeyCode::Char('k') => {
            if b.sel > 0 {
                b.sel -= 1;
            } else {
                b.pending = Some(Nav::ScrollUp);
            }
        }
        KeyCode::PageDown => b.pending = Some(Nav::PageDown),
        KeyCode::PageUp => b.pending = Some(Nav::PageUp),
        KeyCode::Home | KeyCode::Char('g') => b.pending = Some(Nav::Home),
        KeyCode::End | KeyCode::Char('G') => b.pending = Some(Nav::End),
        KeyCode::Enter if b.selected().is_some() => {
            app.mode = Mode::Entry;
            app.popup_scroll = 0;
        }
        KeyCode::Char('n') => b.pending = Some(Nav::NextKey),
        KeyCode::Char('N') => b.pending = Some(Nav::PrevKey),
        KeyCode::Left | KeyCode::Char('h') | KeyCode::Backspace => app.focus = Focus::Dbs,
        _ => {}
    }
}

/// The `/` prompt's text as key bytes: `x:` followed by hex digits gives raw
/// bytes, `u32:`/`u64:` a native-endian integer (INTEGERKEY databases),
/// anything else is taken literally (UTF-8).
pub fn parse_seek(text: &str) -> Result<Vec<u8>, String> {
    if let Some(h) = text.strip_prefix("x:").or_else(|| text.strip_prefix("0x")) {
        let h: String = h.chars().filter(|c| !c.is_whitespace()).collect();
        if !h.len().is_multiple_of(2) {
            return Err(format!("odd number of hex digits in {h:?}"));
        }
        return (0..h.len())
            .step_by(2)
            .map(|i| {
                u8::from_str_radix(&h[i..i + 2], 16)
                    .map_err(|_| format!("not hex: {:?}", &h[i..i + 2]))
            })
            .collect();
    }
    if let Some(n) = text.strip_prefix("u32:") {
        return native_int(n, "u32", u32::to_ne_bytes);
    }
    if let Some(n) = text.strip_prefix("u64:") {
        return native_int(n, "u64", u64::to_ne_bytes);
    }
    Ok(text.as_bytes().to_vec())
}

/// `n` read as a `T` and laid out by `bytes`; errors start with `tag`.
fn native_int<T: std::str::FromStr, const N: usize>(
    n: &str,
    tag: &str,
    bytes: fn(T) -> [u8; N],
) -> Result<Vec<u8>, String>
where
    T::Err: std::fmt::Display,
{
    n.trim()
        .parse::<T>()
        .map(|v| bytes(v).to_vec())
        .map_err(|e| format!("{tag}: {e}"))
}

/// A mouse event: a click focuses the pane under the pointer and selects
/// the row clicked; the wheel scrolls the pane under the pointer.
pub fn mouse(app: &mut App, ev: MouseEvent) {
    if app.mode != Mode::Normal {
        return;
    }
    let a = crate::ui::areas(app.screen, app);
    let (x, y) = (ev.column, ev.row);
    let inside =
        |r: ratatui::layout::Rect| x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height;
    let pane = if inside(a.dbs) {
        Focus::Dbs
    } else if inside(a.detail) {
        Focus::Detail
    } else if inside(a.lower) {
        app.lower
    } else {
        return;
    };
    let step = |code| KeyEvent::new(code, KeyModifiers::NONE);
    match ev.kind {
        MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
            let code = if ev.kind == MouseEventKind::ScrollDown {
                KeyCode::Down
            } else {
                KeyCode::Up
            };
            let before = app.focus;
            app.focus = pane;
            match pane {
                Focus::Dbs => dbs_key(app, step(code)),
                Focus::Detail => detail_key(app, step(code)),
                _ => normal_key(app, step(code)),
            }
            app.focus = before;
        }
        MouseEventKind::Down(MouseButton::Left) => {
            app.set_focus(pane);
            let area = match pane {
                Focus::Dbs => a.dbs,
                Focus::Detail => return,
                _ => a.lower,
            };
            // Border and column header take the first two rows.
            let Some(row) = (y as usize).checked_sub(area.y as usize + 2) else {
                return;
            };
            let visible = crate::ui::list_rows(area);
            match pane {
                Focus::Dbs => {
                    let off = crate::ui::list_offset(app.db_sel, visible);
                    app.select_db(off + row);
                }
                Focus::Entries => {
                    if row < app.browser.visible().len() {
                        app.browser.sel = row;
                    }
                }
                Focus::Pages => {
                    let Some(p) = &app.pages.page else { return };
                    let (top, rows) = crate::ui::list_geometry(area, p);
                    let Some(row) = y.checked_sub(top) else {
                        return;
                    };
                    let off = crate::ui::list_offset(app.pages.sel, rows);
                    let pick = off + row as usize;
                    if !app.pages.hex && pick < p.items.len() {
                        app.pages.sel = pick;
                    }
                }
                Focus::FreeList => {
                    let n = app.free_list.records.len();
                    let off = crate::ui::list_offset(app.free_list.sel, visible);
                    if off + row < n {
                        app.free_list.sel = off + row;
                    }
                }
                Focus::Readers => {
                    let n = app.readers.slots.as_ref().map_or(0, Vec::len);
                    let off = crate::ui::list_offset(app.readers.sel, visible);
                    if off + row < n {
                        app.readers.sel = off + row;
                    }
                }
                Focus::Detail => {}
            }
        }
        _ => {}
    }
}
