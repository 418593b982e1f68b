//! The `ptc-runner` strategy (SPEC section 8): the original ptc_runner
//! `SingleUserCoalesced` renderer, reproduced byte for byte as pinned by the golden
//! cases — namespace sections (`;; === tools ===`, `;; === data/ ===`,
//! `;; === user/ (your prelude) ===`), `;; Tool calls made:`, the Output section keyed on
//! a tool named `println`, only the last error, and the `FINAL WORK TURN` text.
//!
//! Every renderer of the original is public (`namespace`, `history`, `suc`) so that the
//! golden cases can be checked piece by piece (by `recap-conformance`).

mod cache;
pub mod history;
mod literals;
pub mod namespace;
pub mod signature;
pub mod strategy;
pub mod suc;

pub use cache::RenderCache;
pub use strategy::{NAME, PtcRunner, build, info};
