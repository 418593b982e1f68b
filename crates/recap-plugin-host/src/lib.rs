//! The host side of recap's strategy-plugin ABI (`recap-abi`).
//!
//! [`load`] opens a shared library and accepts it only after, in order: the frozen
//! version probe, the descriptor checks (magic, size, ABI major, required functions,
//! name), `describe`, and a self-test render on a tiny built-in session. A loaded
//! library is never unloaded (plugin code and statics are `'static`; unloading
//! libraries that use thread-locals is unsound). [`register`] adds a plugin to a
//! [`recap_core::Registry`], where its strategy is named like a built-in.
//!
//! [`load_with`] and [`Isolation::Process`] run a plugin in worker processes instead
//! (the same checks, made by the worker): [`serve_worker`] is the worker's body, which
//! the `recap plugin-worker` subcommand runs.
//!
//! Every call runs under a time limit ([`set_call_time_limit`]): a watchdog thread
//! checks the deadlines; an in-process call past its deadline leaves its thread behind
//! ([`recap_core::rescue`]), an isolated one's worker process is killed. Every failure is a [`LoadError`] naming the file and what was
//! wrong. This crate and `recap-abi` hold all of recap's `unsafe` code.

mod backend;
mod call;
mod descriptor;
mod error;
mod foreign;
mod inprocess;
mod isolated;
mod load;
mod registry;
mod replay;
mod selftest;
mod strategy;
mod time_limit;
mod watchdog;
mod worker;

pub use call::{CallError, MAX_RESPONSE_BYTES, Then, WorkerEvent, WorkerFailure, parse_response};
pub use error::{LoadError, Problem};
pub use foreign::{ForeignCalls, ForeignLimit};
pub use isolated::{DEFAULT_RESTART_LIMIT, IsolationConfig};
pub use load::{Isolation, Plugin, load, load_with};
pub use registry::{
    is_plugin_file_name, load_all, load_all_each, load_all_with, plugin_files_in, register,
};
pub use selftest::SelfTestReport;
pub use strategy::PluginStrategy;
pub use time_limit::{
    DEFAULT_CALL_TIME_LIMIT, TIME_LIMIT_ENV, TimedOut, call_time_limit, parse_limit,
    set_call_time_limit,
};
pub use worker::serve_worker;
