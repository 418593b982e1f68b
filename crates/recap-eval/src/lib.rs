//! Quality, not just tokens: recap's LLM-in-the-loop evaluation against any
//! OpenAI-compatible chat-completions endpoint (docs/evaluation.md).
//!
//! - [`client`]: the HTTP client — concurrency, request- and token-rate limits,
//!   timeouts, retries with backoff and jitter honouring `Retry-After`;
//! - [`cache`]: the persistent response cache (SQLite), keyed by (model, exact body);
//! - [`endpoint`]: cache and client together, each distinct request resolved once and
//!   accounted for;
//! - [`sample`], [`action`], [`probes`], [`bootstrap`]: the seeded stratified sample of
//!   calls, next-action agreement, probe QA, and confidence intervals;
//! - [`evaluation`] runs them as [`options`] say and [`report`] renders the result;
//! - with the `stand-in` feature, `standin`: a deterministic model served on
//!   127.0.0.1 for tests and measurements.
//!
//! Without an endpoint nothing here runs: recap stays offline by default.

pub mod action;
pub mod backoff;
pub mod bootstrap;
pub mod cache;
pub mod client;
pub mod endpoint;
pub mod evaluation;
pub mod limits;
pub mod options;
mod pool;
pub mod pricing;
pub mod probes;
pub mod report;
pub mod request;
pub mod response;
pub mod rng;
pub mod sample;
#[cfg(feature = "stand-in")]
pub mod standin;

pub use cache::{Cache, CacheError};
pub use client::{ApiKey, Client, ClientConfig, ConfigError, SendError};
pub use endpoint::{Completion, Endpoint, EndpointError, Tally};
pub use evaluation::{EvalError, evaluate, summarizer_purpose};
pub use options::EvalOptions;
pub use report::EvalReport;
pub use request::{ChatRequest, Key, Sampling, Tools};
pub use response::{Reply, Usage};
