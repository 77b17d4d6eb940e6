//! Library side of the `dlmdb` command-line tool: each subcommand gathers a
//! serializable report and renders it; `main.rs` only parses arguments.

pub mod stat;
