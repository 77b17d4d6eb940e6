//! Every page of the reference fixtures, intact and with bytes flipped,
//! decoded for the page browser under every tree context: problems are
//! reported in the dump, never by a panic, and the hex view and item list
//! render.

mod common;

use common::*;
use dlmdb_format::{DbFlags, NodeLayout};
use dlmdb_tui::pages::{decode, PageAt, TreeCtx};

fn contexts() -> Vec<TreeCtx> {
    let mut v = Vec::new();
    for flags in [
        DbFlags::empty(),
        DbFlags::PREFIX_COMPRESSION,
        DbFlags::DUP_SORT | DbFlags::PREFIX_COMPRESSION,
        DbFlags::DUP_SORT | DbFlags::DUP_FIXED | DbFlags::INTEGER_DUP,
        DbFlags::INTEGER_KEY | DbFlags::COUNTED,
    ] {
        for dup_tree in [false, true] {
            v.push(TreeCtx {
                db: Some("x".into()),
                flags,
                dup_tree,
                leaf2_size: if dup_tree { 8 } else { 0 },
            });
        }
    }
    v
}

#[test]
fn any_page_under_any_context_decodes_or_reports() {
    let dir = fixtures_dir().join("v2");
    if !dir.is_dir() {
        eprintln!("fixtures not found; set DLMDB_FIXTURES");
        return;
    }
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut pages = 0;
    let mut problems = 0;
    for name in ["plain", "counted", "prefix", "dupsort"] {
        let bytes = std::fs::read(dir.join(format!("{name}.mdb"))).unwrap();
        for (pgno, page) in bytes.chunks(4096).enumerate() {
            for damaged in [false, true] {
                let mut p = page.to_vec();
                if damaged {
                    for _ in 0..8 {
                        let at = (rng.next() % 4096) as usize;
                        p[at] ^= (rng.next() % 255 + 1) as u8;
                    }
                }
                for ctx in contexts() {
                    for layout in [NodeLayout::Padded, NodeLayout::Stock] {
                        let d = decode(
                            PageAt::Page(pgno as u64),
                            ctx.clone(),
                            p.clone(),
                            layout,
                            1,
                            |_| None,
                        );
                        pages += 1;
                        problems += d.problem.is_some() as usize;
                        for it in &d.items {
                            assert!(
                                it.offset + it.size <= d.bytes.len() + 1,
                                "item past the page"
                            );
                        }
                        // Render every 16th in the smallest supported terminal.
                        if pages % 16 != 0 {
                            continue;
                        }
                        let mut app =
                            dlmdb_tui::app::App::new("t", std::time::Duration::from_secs(2));
                        app.set_focus(dlmdb_tui::app::Focus::Pages);
                        app.pages.page = Some(d);
                        app.pages.sel = 3;
                        for hex in [false, true] {
                            app.pages.hex = hex;
                            let mut t =
                                ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24))
                                    .unwrap();
                            t.draw(|f| dlmdb_tui::ui::draw(f, &app)).unwrap();
                        }
                    }
                }
            }
        }
    }
    assert!(
        pages > 1000 && problems > 0,
        "{pages} decodes, {problems} with problems"
    );
}
