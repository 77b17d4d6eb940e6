//! Library side of the `dlmdb` command-line tool: each subcommand gathers a
//! serializable report and renders it; `main.rs` only parses arguments.

pub mod check;
pub mod count;
pub mod dump;
pub mod load;
pub mod stat;
pub mod util;
