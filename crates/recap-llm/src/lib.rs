//! recap's OpenAI-compatible chat-completions client, shared by `recap eval` (the
//! recap-eval crate) and the strategies that ask a model (`llm-summary`):
//!
//! - [`request`]: the exact request body ([`ChatRequest`]), its sampling and tools, and
//!   the cache key it hashes to;
//! - [`client`]: the HTTP client — concurrency, request- and token-rate [`limits`],
//!   timeouts, retries with [`backoff`] and jitter honouring `Retry-After`;
//! - [`response`]: the reply and usage parsed from a completion;
//! - [`cache`]: the persistent response cache (SQLite), keyed by (model, exact body);
//! - [`endpoint`]: cache and client together, each distinct request resolved once and
//!   accounted for under a purpose;
//! - [`rng`]: the seeded generator behind the jitter (and recap-eval's sample).
//!
//! It knows nothing of the harness: a strategy linking it links no engine.

pub mod backoff;
pub mod cache;
pub mod client;
pub mod endpoint;
pub mod limits;
pub mod request;
pub mod response;
pub mod rng;

pub use cache::{Cache, CacheError};
pub use client::{ApiKey, Client, ClientConfig, ConfigError, SendError};
pub use endpoint::{Completion, Endpoint, EndpointError, Tally, summarizer_purpose};
pub use request::{ChatRequest, Key, Sampling, Tools};
pub use response::{Reply, Usage};
