//! Quality, not just tokens: recap's LLM-in-the-loop evaluation against any
//! OpenAI-compatible chat-completions endpoint (docs/evaluation.md).
//!
//! The model is asked through recap-llm's endpoint (client, limits, retries, response
//! cache), which this crate does not re-export.
//!
//! - [`sample`], [`action`], [`probes`], [`bootstrap`]: the seeded stratified sample of
//!   calls, next-action agreement, probe QA, and confidence intervals;
//! - [`evaluation`] runs them as [`options`] say and [`report`] renders the result;
//! - with the `stand-in` feature, `standin`: a deterministic model served on
//!   127.0.0.1 for tests and measurements.
//!
//! Without an endpoint nothing here runs: recap stays offline by default.

pub mod action;
pub mod bootstrap;
pub mod evaluation;
pub mod options;
mod pool;
pub mod pricing;
pub mod probes;
pub mod report;
pub mod sample;
#[cfg(feature = "stand-in")]
pub mod standin;

pub use evaluation::{EvalError, evaluate};
pub use options::EvalOptions;
pub use report::EvalReport;
