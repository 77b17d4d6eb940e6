//! `dlmdb-tui`: a terminal browser for dlmdb / LMDB / DLMDB stores.
//!
//! * [`model`] gathers figures from a store (safe `dlmdb` API only);
//! * [`app`] holds the state and asks the model for data;
//! * [`update`] maps key events to state changes (pure);
//! * [`ui`] renders the state with ratatui.
//!
//! The binary (`main.rs`) parses arguments, sets up the terminal and runs
//! the event loop.

pub mod app;
pub mod model;
pub mod pages;
pub mod ui;
pub mod update;
