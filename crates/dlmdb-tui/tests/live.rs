//! Live figures: another process commits while the app refreshes; the
//! deltas since opening and the per-second rates must move.

mod common;

use common::*;
use dlmdb_tui::app::App;
use ratatui::layout::Rect;
use std::time::{Duration, Instant};

const COMMITS: u32 = 25;
const PER_COMMIT: u32 = 40;

/// Run as a child process by `deltas_and_rates_move_while_another_process_commits`.
#[test]
#[ignore = "runs only as a child process"]
fn live_writer() {
    let Some((env, db)) = child_writer_store("TUI_LIVE_STORE") else {
        return;
    };
    for c in 0..COMMITS {
        let mut t = env.write_txn().unwrap();
        for i in 0..PER_COMMIT {
            let k = format!("live-{c:03}-{i:03}");
            t.put(db, k.as_bytes(), &[b'v'; 100], dlmdb::WriteFlags::empty())
                .unwrap();
        }
        t.commit().unwrap();
        std::thread::sleep(Duration::from_millis(40));
    }
}

#[test]
fn deltas_and_rates_move_while_another_process_commits() {
    let dir = tempfile::tempdir().unwrap();
    let path = build_store(dir.path());
    let mut store = open(&path);
    let mut app = App::new("t", Duration::from_millis(100));
    app.fit_to(Rect::new(0, 0, 120, 40));
    app.sync(&mut store);
    select(&mut app, "plain");
    app.sync(&mut store);
    // The page browser on the first leaf of `plain`.
    app.open_root_page(Some("plain".into()));
    app.sync(&mut store);
    app.pages.pending = Some(dlmdb_tui::app::PageNav::Descend);
    app.sync(&mut store);
    assert_eq!(app.pages.path.len(), 2);
    let before = app.live.motion(&Some("plain".into())).unwrap();
    assert_eq!((before.commits, before.entries, before.pages), (0, 0, 0));

    let mut child = child_writer_command("live_writer", "TUI_LIVE_STORE", &path)
        .spawn()
        .unwrap();
    let (mut max_commit_rate, mut max_entry_rate) = (0.0f64, 0.0f64);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        std::thread::sleep(Duration::from_millis(100));
        app.refresh_requested = true;
        app.sync(&mut store);
        let m = app.live.motion(&Some("plain".into())).unwrap();
        max_commit_rate = max_commit_rate.max(m.commits_per_s.unwrap_or(0.0));
        max_entry_rate = max_entry_rate.max(m.entries_per_s.unwrap_or(0.0));
        if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
            break;
        }
    }
    assert!(child.wait().unwrap().success());
    app.refresh_requested = true;
    app.sync(&mut store);
    let m = app.live.motion(&Some("plain".into())).unwrap();
    assert_eq!(m.commits, i64::from(COMMITS));
    assert_eq!(m.entries, i64::from(COMMITS * PER_COMMIT));
    assert!(m.pages > 0, "{m:?}");
    assert!(max_commit_rate > 0.0, "{max_commit_rate}");
    assert!(max_entry_rate > 0.0, "{max_entry_rate}");
    // The page path was walked again in the newest transaction.
    let page = app.pages.page.as_ref().unwrap();
    assert_eq!(page.txnid, app.snapshot.txnid);
    assert_eq!(app.pages.path.len(), 2);
    assert_eq!(page.kind, dlmdb_format::PageKind::Leaf);
    assert_eq!(page.items[0].key, b"k000000");
    // The trend line over the refreshes rises.
    let (entries, _, _) = app.live.trend(&Some("plain".into()));
    assert!(entries.first() < entries.last());
    // The detail pane says so.
    let screen = render_text(&app);
    assert!(
        screen.contains(&format!(
            "commits +{COMMITS}, entries +{}",
            COMMITS * PER_COMMIT
        )),
        "{screen}"
    );
}

fn render_text(app: &App) -> String {
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    t.draw(|f| dlmdb_tui::ui::draw(f, app)).unwrap();
    let buf = t.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
