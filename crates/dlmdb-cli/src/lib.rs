//! Library side of the `dlmdb` command-line tool: one module per command,
//! each with its clap arguments, a serializable report and its rendering;
//! `main.rs` only parses arguments and dispatches.

pub mod check;
pub mod check_cmd;
pub mod copy;
pub mod count;
pub mod drop;
pub mod dump;
pub mod error;
pub mod get;
pub mod interrupt;
pub mod load;
pub mod pages;
pub mod progress;
pub mod report;
pub mod scan;
pub mod stat;
pub mod store;
pub mod util;
