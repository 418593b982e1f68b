//! The model as a run sees it: the cache first, then the client; each distinct request
//! resolved once per run (concurrent askers of the same request wait for the one in
//! flight), and every request accounted for — served from the cache, sent, retried,
//! failed, malformed — with its tokens, overall and per purpose (recap-eval's measures,
//! each summarizing strategy).

use crate::cache::{Cache, CacheError};
use crate::client::{Client, SendError};
use crate::request::{ChatRequest, Key};
use crate::response::{Malformed, Reply, Usage, parse_response};
use recap_core::TokenCounter;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// The purpose under which a summarizing strategy asks for its summaries: recap-eval
/// reports each strategy's summary cost beside its prompts under this name.
pub fn summarizer_purpose(spec: &str) -> String {
    format!("summarizer {spec}")
}

/// One answered request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub key: Key,
    /// The response body as the server sent it.
    pub response: String,
    pub reply: Result<Reply, Malformed>,
    /// The server's counts, or this run's tokenizer's when the server sent none.
    pub usage: Usage,
    pub usage_estimated: bool,
    pub from_cache: bool,
    /// Failed attempts before the answer came (0 from the cache).
    pub retries: u32,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum EndpointError {
    #[error(transparent)]
    Send(#[from] SendError),
    #[error(transparent)]
    Cache(Arc<CacheError>),
}

impl EndpointError {
    /// Whether every later request would fail too (server down, URL or key wrong, cache
    /// damaged): the evaluation stops instead of counting failures. A request the server
    /// rejected alone, or that ran out of retries, is a counted failure.
    pub fn is_fatal(&self) -> bool {
        !matches!(
            self,
            EndpointError::Send(SendError::GaveUp { .. } | SendError::Rejected { .. })
        )
    }
}

/// What a run asked of the endpoint, counted over distinct requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    /// Distinct requests.
    pub requests: u64,
    /// Answered from the cache, sending nothing.
    pub cached: u64,
    /// Sent and answered in this run.
    pub sent: u64,
    /// Failed attempts that were tried again.
    pub retried: u64,
    /// No answer after every retry.
    pub failed: u64,
    /// Answered, but not with a usable completion.
    pub malformed: u64,
    /// Tokens of every answered request (what the evaluation costs uncached).
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Tokens of the requests sent in this run (what this run cost).
    pub sent_prompt_tokens: u64,
    pub sent_completion_tokens: u64,
}

/// Per purpose its tally, and the (purpose, request) pairs already counted.
#[derive(Default)]
struct PurposeTallies {
    tallies: BTreeMap<String, Tally>,
    seen: HashSet<(String, Key)>,
}

enum Slot {
    Pending,
    Done(Result<Arc<Completion>, EndpointError>),
}

pub struct Endpoint {
    client: Client,
    cache: Cache,
    counter: Arc<dyn TokenCounter>,
    slots: Mutex<HashMap<Key, Slot>>,
    resolved: Condvar,
    totals: Mutex<Tally>,
    purposes: Mutex<PurposeTallies>,
    fatal: OnceLock<EndpointError>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("client", &self.client)
            .field("cache", &self.cache)
            .finish()
    }
}

impl Endpoint {
    /// `counter` estimates tokens where the server reports none, and sizes requests for
    /// the tokens-per-minute limit.
    pub fn new(client: Client, cache: Cache, counter: Arc<dyn TokenCounter>) -> Self {
        Endpoint {
            client,
            cache,
            counter,
            slots: Mutex::new(HashMap::new()),
            resolved: Condvar::new(),
            totals: Mutex::new(Tally::default()),
            purposes: Mutex::new(PurposeTallies::default()),
            fatal: OnceLock::new(),
        }
    }

    pub fn url(&self) -> &str {
        self.client.url()
    }

    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// The error that stopped all requests, if one did.
    pub fn fatal(&self) -> Option<&EndpointError> {
        self.fatal.get()
    }

    /// Every distinct request of this run.
    pub fn totals(&self) -> Tally {
        *self.totals.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Distinct requests per purpose (a request asked for two purposes counts in both).
    pub fn purposes(&self) -> BTreeMap<String, Tally> {
        self.purposes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .tallies
            .clone()
    }

    /// The answer to `request`: from this run's memory, the cache, or the server.
    pub fn complete(
        &self,
        request: &ChatRequest,
        purpose: &str,
    ) -> Result<Arc<Completion>, EndpointError> {
        let result = self.resolve(request);
        let mut p = self.purposes.lock().unwrap_or_else(|p| p.into_inner());
        if p.seen.insert((purpose.to_string(), request.key)) {
            let t = p.tallies.entry(purpose.to_string()).or_default();
            count(t, &result);
        }
        result
    }

    fn resolve(&self, request: &ChatRequest) -> Result<Arc<Completion>, EndpointError> {
        {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                match slots.get(&request.key) {
                    Some(Slot::Done(r)) => return r.clone(),
                    Some(Slot::Pending) => {
                        slots = self.resolved.wait(slots).unwrap_or_else(|p| p.into_inner());
                    }
                    None => {
                        slots.insert(request.key, Slot::Pending);
                        break;
                    }
                }
            }
        }
        let result = self.fetch(request);
        count(
            &mut self.totals.lock().unwrap_or_else(|p| p.into_inner()),
            &result,
        );
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots.insert(request.key, Slot::Done(result.clone()));
        self.resolved.notify_all();
        result
    }

    fn fetch(&self, request: &ChatRequest) -> Result<Arc<Completion>, EndpointError> {
        if let Some(e) = self.fatal.get() {
            return Err(e.clone());
        }
        let cache_error = |e: CacheError| {
            let e = EndpointError::Cache(Arc::new(e));
            let _ = self.fatal.set(e.clone());
            e
        };
        if let Some(stored) = self.cache.get(&request.key).map_err(cache_error)? {
            return Ok(Arc::new(self.completion(request, stored.response, true, 0)));
        }
        let estimate = self.counter.count(&request.body) + u64::from(request.max_tokens);
        match self.client.send(&request.body, estimate) {
            Ok(answer) => {
                self.cache
                    .put(&request.key, &request.model, &answer.body)
                    .map_err(cache_error)?;
                Ok(Arc::new(self.completion(
                    request,
                    answer.body,
                    false,
                    answer.retries,
                )))
            }
            Err(e) => {
                let e = EndpointError::Send(e);
                if e.is_fatal() {
                    let _ = self.fatal.set(e.clone());
                }
                Err(e)
            }
        }
    }

    fn completion(
        &self,
        request: &ChatRequest,
        response: String,
        from_cache: bool,
        retries: u32,
    ) -> Completion {
        let parsed = parse_response(&response);
        let (reply, usage) = match parsed {
            Ok((reply, usage)) => (Ok(reply), usage),
            Err(m) => (Err(m), None),
        };
        let usage_estimated = usage.is_none();
        let usage = usage.unwrap_or_else(|| Usage {
            prompt_tokens: self.counter.count(&request.body),
            completion_tokens: reply.as_ref().map_or(0, |r| {
                self.counter.count(r.content.as_deref().unwrap_or(""))
                    + r.tool_calls
                        .iter()
                        .map(|c| self.counter.count(&c.name) + self.counter.count(&c.arguments))
                        .sum::<u64>()
            }),
        });
        Completion {
            key: request.key,
            response,
            reply,
            usage,
            usage_estimated,
            from_cache,
            retries,
        }
    }
}

fn count(t: &mut Tally, result: &Result<Arc<Completion>, EndpointError>) {
    t.requests += 1;
    match result {
        Ok(c) => {
            if c.from_cache {
                t.cached += 1;
            } else {
                t.sent += 1;
                t.retried += u64::from(c.retries);
                t.sent_prompt_tokens += c.usage.prompt_tokens;
                t.sent_completion_tokens += c.usage.completion_tokens;
            }
            if c.reply.is_err() {
                t.malformed += 1;
            }
            t.prompt_tokens += c.usage.prompt_tokens;
            t.completion_tokens += c.usage.completion_tokens;
        }
        Err(EndpointError::Send(SendError::GaveUp { attempts, .. })) => {
            t.failed += 1;
            t.retried += u64::from(attempts.saturating_sub(1));
        }
        Err(_) => t.failed += 1,
    }
}
