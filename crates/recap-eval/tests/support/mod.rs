//! Shared by the integration tests: an endpoint over a stand-in server and a fresh cache.

#![allow(dead_code)]

use recap_core::tokens::WordCounter;
use recap_llm::backoff::Backoff;
use recap_llm::{Cache, Client, ClientConfig, Endpoint};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// A client config for tests: short backoff, short timeout.
pub fn config(url: &str) -> ClientConfig {
    let mut c = ClientConfig::new(url);
    c.timeout = Duration::from_millis(1500);
    c.retries = 3;
    c.backoff = Backoff {
        base: Duration::from_millis(10),
        max: Duration::from_millis(40),
    };
    c.concurrency = 4;
    c
}

pub fn endpoint_with(config: ClientConfig, cache: &Path) -> Endpoint {
    Endpoint::new(
        Client::new(config).expect("client"),
        Cache::open(cache).expect("cache"),
        Arc::new(WordCounter),
    )
}

pub fn endpoint(url: &str, cache: &Path) -> Endpoint {
    endpoint_with(config(url), cache)
}
