//! The host side of recap's strategy-plugin ABI (`recap-abi`).
//!
//! [`load`] opens a shared library and accepts it only after, in order: the frozen
//! version probe, the descriptor checks (magic, size, ABI major, required functions,
//! name), `describe`, and a self-test render on a tiny built-in session. A loaded
//! library is never unloaded (plugin code and statics are `'static`; unloading
//! libraries that use thread-locals is unsound). [`register`] adds a plugin to a
//! [`recap_core::Registry`], where its strategy is named like a built-in.
//!
//! Every failure is a [`LoadError`] naming the file and what was wrong. This crate and
//! `recap-abi` hold all of recap's `unsafe` code.

mod call;
mod descriptor;
mod error;
mod load;
mod registry;
mod selftest;
mod strategy;
mod time_limit;

pub use call::{CallError, parse_response};
pub use error::{LoadError, Problem};
pub use load::{Plugin, load};
pub use registry::{is_plugin_file_name, load_all, plugin_files_in, register};
pub use selftest::SelfTestReport;
pub use strategy::PluginStrategy;
pub use time_limit::{
    DEFAULT_CALL_TIME_LIMIT, TIME_LIMIT_ENV, TimedOut, call_time_limit, parse_limit,
    set_call_time_limit,
};
