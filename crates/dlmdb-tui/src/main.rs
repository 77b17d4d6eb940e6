//! `dlmdb-tui PATH`: browse a store's databases, pages, tree depth,
//! compression and entries, refreshed live. Read-only.

use anyhow::Result;
use clap::Parser;
use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use dlmdb::LockFormat;
use dlmdb_tui::app::App;
use dlmdb_tui::model::{FormatChoice, OpenOptions, Store};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use std::io::Stdout;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "dlmdb-tui",
    version,
    about = "Browse an LMDB / DLMDB store: databases, pages, tree depth, compression, entries (live, read-only)",
    after_help = "Keys: Tab pane, 1-4 lower pane (entries, pages, free list, readers), arrows/j k move,\n\
PgUp/PgDn/Home/End, Enter open/follow, Backspace back, o page of entry/root, h hex page,\n\
g N go to page, n/N next/previous key, / seek (#N row), x hex values, r refresh, p pause,\n\
? help, q quit. Mouse: click selects, wheel scrolls.\n\n\
Examples:\n  dlmdb-tui ./db\n  dlmdb-tui ./store.mdb --interval 0.5\n  dlmdb-tui --format dlmdb-v1 old.mdb"
)]
struct Args {
    /// Environment directory, or the data file itself (then MDB_NOSUBDIR is used).
    path: PathBuf,
    /// Node layout: auto (version 2 is DLMDB v2; version 1 as the engine
    /// decides from the file), lmdb,
    /// dlmdb-v1 (DLMDB's padded version 1) or dlmdb-v2.
    #[arg(long, visible_alias = "layout", value_enum, default_value = "auto")]
    format: FormatChoice,
    /// PATH is the data file (default: detected).
    #[arg(short = 'n', long = "no-subdir", conflicts_with = "subdir")]
    no_subdir: bool,
    /// PATH is an environment directory (default: detected).
    #[arg(long)]
    subdir: bool,
    /// Do not use the lock file (MDB_NOLOCK), for stores whose lock file
    /// cannot be shared (unknown format, no permission); only safe if nothing
    /// writes the store meanwhile.
    #[arg(long)]
    no_lock: bool,
    /// Lock file layout when the viewer is the first process on the store:
    /// auto (v1 for stock-layout version-1 stores, v2 for DLMDB stores),
    /// v1 (LMDB 0.9) or v2 (LMDB 1.0, DLMDB). Others' lock files keep theirs.
    #[arg(long, value_enum, default_value = "auto")]
    lock_format: LockFormat,
    /// Seconds between live refreshes.
    #[arg(long, default_value = "2", value_name = "SECONDS")]
    interval: f64,
    /// Start paused (refresh only with r).
    #[arg(long)]
    paused: bool,
    /// Open this named database in the entry browser at start.
    #[arg(short = 's', long = "subdb", value_name = "NAME")]
    subdb: Option<String>,
}

fn main() -> std::process::ExitCode {
    match real_main() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dlmdb-tui: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<()> {
    let args = Args::parse();
    let opts = OpenOptions {
        path: args.path.clone(),
        format: args.format,
        no_subdir: if args.no_subdir {
            Some(true)
        } else if args.subdir {
            Some(false)
        } else {
            None
        },
        no_lock: args.no_lock,
        lock_format: args.lock_format,
    };
    // Open before touching the terminal so errors print plainly.
    let mut store = Store::open(&opts)?;
    let interval = Duration::from_secs_f64(args.interval.max(0.1));
    let mut app = App::new(args.path.display().to_string(), interval);
    app.paused = args.paused;
    app.notes = store.notes.clone();

    let mut terminal = setup_terminal()?;
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        default_hook(info);
    }));
    let res = app.run(&mut terminal, &mut store, args.subdb);
    restore_terminal();
    res
}

fn setup_terminal() -> Result<Terminal<CrosstermBackend<Stdout>>> {
    enable_raw_mode()?;
    let mut out = std::io::stdout();
    if let Err(e) = execute!(out, EnterAlternateScreen, EnableMouseCapture) {
        let _ = disable_raw_mode();
        return Err(e.into());
    }
    Ok(Terminal::new(CrosstermBackend::new(out))?)
}

fn restore_terminal() {
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}
