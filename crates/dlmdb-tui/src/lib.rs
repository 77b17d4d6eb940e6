//! `dlmdb-tui`: a terminal browser for dlmdb / LMDB / DLMDB stores.
//!
//! * [`model`] gathers figures from a store (safe `dlmdb` API only);
//! * [`pages`] reads raw pages through `dlmdb-format` for the page browser,
//!   and the free list and reader table;
//! * [`app`] holds the state, asks the model for data and runs the event
//!   loop ([`app::App::run`]);
//! * [`update`] maps key and mouse events to state changes (pure);
//! * [`ui`] renders the state with ratatui, one widget per pane.
//!
//! The binary (`main.rs`) parses arguments and sets up the terminal.

pub mod app;
pub mod model;
pub mod pages;
pub mod ui;
pub mod update;
