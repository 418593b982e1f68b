//! The HTTP client for OpenAI-compatible chat-completions endpoints: blocking (ureq),
//! with a concurrency limit, request- and token-rate limits, a timeout per attempt, and
//! retries with exponential backoff and jitter on 429, 408 and 5xx answers and on
//! transport failures, honouring `Retry-After`.
//!
//! The API key is held in [`ApiKey`], whose `Debug` hides it; it is sent in the
//! `Authorization` header and nowhere else (no error message, log or report holds it).

use crate::backoff::{Backoff, parse_retry_after};
use crate::limits::{Permits, RateLimiter, RateLimits};
use crate::rng::Rng;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// An API key: never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<hidden>)")
    }
}

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key held by the environment variable `var`; an unset or empty variable is an
    /// error naming the variable (not its value).
    pub fn from_env(var: &str) -> Result<ApiKey, ConfigError> {
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Ok(ApiKey(v.trim().to_string())),
            _ => Err(ConfigError::MissingKey {
                var: var.to_string(),
            }),
        }
    }
}

#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The server's base URL (`http://127.0.0.1:8000/v1`) or the full
    /// `…/chat/completions` URL.
    pub endpoint: String,
    pub api_key: Option<ApiKey>,
    /// Time allowed for one attempt, connecting and reading the answer included.
    pub timeout: Duration,
    /// Retries after the first attempt.
    pub retries: u32,
    pub backoff: Backoff,
    /// Requests in flight at most.
    pub concurrency: usize,
    pub limits: RateLimits,
}

impl ClientConfig {
    pub fn new(endpoint: impl Into<String>) -> Self {
        ClientConfig {
            endpoint: endpoint.into(),
            api_key: None,
            timeout: Duration::from_secs(120),
            retries: 5,
            backoff: Backoff::default(),
            concurrency: 4,
            limits: RateLimits::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "the API key's environment variable {var} is not set (or empty); set it, or leave out \
         --api-key-env for a server that needs no key"
    )]
    MissingKey { var: String },
    #[error(
        "--endpoint {0:?} is not an http:// or https:// URL; pass the server's base URL, e.g. \
         http://127.0.0.1:8000/v1"
    )]
    BadUrl(String),
}

/// Why a request got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The last attempt failed to connect: the server is down or the URL is wrong.
    #[error("cannot reach the endpoint {url}: {detail}")]
    Unreachable { url: String, detail: String },
    /// The server refuses every request (401, 403, 404, 405: a wrong key or URL), or the
    /// client cannot talk to it at all (TLS): every request would fail the same way.
    #[error("the endpoint {url} refused the request with HTTP {status}: {detail}")]
    Refused {
        url: String,
        status: u16,
        detail: String,
    },
    /// The server refused this request alone (400, 413, 422…: say, a prompt longer than
    /// the model's context); other requests may still be answered.
    #[error("the endpoint {url} rejected a request with HTTP {status}: {detail}")]
    Rejected {
        url: String,
        status: u16,
        detail: String,
    },
    /// Retries ran out (429, 5xx, timeouts).
    #[error("no answer from {url} after {attempts} attempts: {detail}")]
    GaveUp {
        url: String,
        attempts: u32,
        detail: String,
    },
}

/// A successful exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub body: String,
    /// Attempts that failed before this one.
    pub retries: u32,
}

enum Attempt {
    Done(String),
    Retry {
        detail: String,
        wait: Option<Duration>,
        connect: bool,
    },
    Fatal(SendError),
}

/// Response bodies larger than this are refused (a runaway server, not a completion).
const MAX_BODY: u64 = 64 << 20;

pub struct Client {
    url: String,
    agent: ureq::Agent,
    key: Option<ApiKey>,
    timeout: Duration,
    retries: u32,
    backoff: Backoff,
    permits: Permits,
    limiter: RateLimiter,
    jitter: Mutex<Rng>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("url", &self.url).finish()
    }
}

/// The chat-completions URL of an endpoint given as a base URL or in full.
pub fn completions_url(endpoint: &str) -> Result<String, ConfigError> {
    let e = endpoint.trim();
    if !(e.starts_with("http://") || e.starts_with("https://")) || e.contains(char::is_whitespace) {
        return Err(ConfigError::BadUrl(endpoint.to_string()));
    }
    let e = e.trim_end_matches('/');
    Ok(if e.ends_with("/chat/completions") {
        e.to_string()
    } else {
        format!("{e}/chat/completions")
    })
}

/// Whether the URL's host is this machine: then no proxy from the environment is used,
/// so a request meant for a local server never leaves it.
fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host.starts_with('[') {
        host.split(']').next().unwrap_or("").trim_start_matches('[')
    } else {
        host.split(':').next().unwrap_or("")
    };
    host == "localhost" || host == "::1" || host.starts_with("127.")
}

impl Client {
    pub fn new(config: ClientConfig) -> Result<Client, ConfigError> {
        let url = completions_url(&config.endpoint)?;
        let mut builder = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(config.timeout))
            .max_idle_connections_per_host(config.concurrency.max(1));
        if is_loopback(&url) {
            builder = builder.proxy(None);
        }
        let seed = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Ok(Client {
            agent: builder.build().into(),
            url,
            key: config.api_key,
            timeout: config.timeout,
            retries: config.retries,
            backoff: config.backoff,
            permits: Permits::new(config.concurrency),
            limiter: RateLimiter::new(config.limits),
            jitter: Mutex::new(Rng::new(seed)),
        })
    }

    /// The chat-completions URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends `body`, retrying as configured. `tokens` is the request's estimated size
    /// for the tokens-per-minute limit.
    pub fn send(&self, body: &str, tokens: u64) -> Result<Answer, SendError> {
        // Whether the last attempt failed to connect: the server is not there now.
        let mut refused = false;
        let mut last = String::new();
        for attempt in 0..=self.retries {
            let outcome = {
                let _permit = self.permits.take();
                self.limiter.acquire(tokens);
                self.attempt(body)
            };
            match outcome {
                Attempt::Done(body) => {
                    return Ok(Answer {
                        body,
                        retries: attempt,
                    });
                }
                Attempt::Fatal(e) => return Err(e),
                Attempt::Retry {
                    detail,
                    wait,
                    connect,
                } => {
                    refused = connect;
                    last = detail;
                    if attempt < self.retries {
                        let backoff = {
                            let mut rng = self.jitter.lock().unwrap_or_else(|p| p.into_inner());
                            self.backoff.delay(attempt, &mut rng)
                        };
                        std::thread::sleep(wait.unwrap_or(backoff));
                    }
                }
            }
        }
        if refused {
            Err(SendError::Unreachable {
                url: self.url.clone(),
                detail: last,
            })
        } else {
            Err(SendError::GaveUp {
                url: self.url.clone(),
                attempts: self.retries + 1,
                detail: last,
            })
        }
    }

    fn attempt(&self, body: &str) -> Attempt {
        let mut request = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json");
        if let Some(ApiKey(key)) = &self.key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        let mut response = match request.send(body) {
            Ok(r) => r,
            Err(e) => return self.transport_failure(e),
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        let text = match response
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_string()
        {
            Ok(t) => t,
            Err(e) => return self.transport_failure(e),
        };
        match status {
            200..=299 => Attempt::Done(text),
            408 | 429 | 500..=599 => Attempt::Retry {
                detail: format!("HTTP {status}: {}", excerpt(&text)),
                wait: retry_after,
                connect: false,
            },
            401 | 403 | 404 | 405 => Attempt::Fatal(SendError::Refused {
                url: self.url.clone(),
                status,
                detail: excerpt(&text),
            }),
            _ => Attempt::Fatal(SendError::Rejected {
                url: self.url.clone(),
                status,
                detail: excerpt(&text),
            }),
        }
    }

    fn transport_failure(&self, e: ureq::Error) -> Attempt {
        use std::io::ErrorKind;
        let (detail, connect) = match &e {
            ureq::Error::Timeout(_) => (format!("no answer within {:?}", self.timeout), false),
            ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => (e.to_string(), true),
            ureq::Error::Io(io) => (
                e.to_string(),
                matches!(
                    io.kind(),
                    ErrorKind::ConnectionRefused
                        | ErrorKind::AddrNotAvailable
                        | ErrorKind::HostUnreachable
                        | ErrorKind::NetworkUnreachable
                ),
            ),
            ureq::Error::Protocol(_) | ureq::Error::BodyStalled => (e.to_string(), false),
            _ => {
                return Attempt::Fatal(SendError::Refused {
                    url: self.url.clone(),
                    status: 0,
                    detail: e.to_string(),
                });
            }
        };
        Attempt::Retry {
            detail,
            wait: None,
            connect,
        }
    }
}

/// The start of a response body, for error messages.
fn excerpt(text: &str) -> String {
    let t: String = text.trim().chars().take(300).collect();
    if t.is_empty() {
        "(empty body)".into()
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_get_the_completions_path() {
        assert_eq!(
            completions_url("http://127.0.0.1:8000/v1/").unwrap(),
            "http://127.0.0.1:8000/v1/chat/completions"
        );
        assert_eq!(
            completions_url("https://api.example/v1/chat/completions").unwrap(),
            "https://api.example/v1/chat/completions"
        );
        assert!(completions_url("127.0.0.1:8000").is_err());
    }

    #[test]
    fn loopback_hosts() {
        for u in [
            "http://127.0.0.1:1/v1",
            "http://localhost/v1",
            "http://[::1]:8/x",
            "http://u@127.0.0.2",
        ] {
            assert!(is_loopback(u), "{u}");
        }
        for u in [
            "https://api.openai.com/v1",
            "http://10.0.0.1/v1",
            "http://127x.example/",
        ] {
            assert!(!is_loopback(u), "{u}");
        }
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let mut c = ClientConfig::new("http://127.0.0.1:9/v1");
        c.api_key = Some(ApiKey::new("sk-secret-123"));
        assert!(!format!("{c:?}").contains("sk-secret"));
    }
}
