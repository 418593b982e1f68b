//! A deterministic stand-in for a model server: OpenAI-compatible chat completions on
//! 127.0.0.1 (never another address), answering by the rules of [`model`], and able to
//! misbehave on purpose — 429 with `Retry-After`, 500, stalls past the client's timeout,
//! slow answers, malformed bodies, hang-ups, and going away after a number of answers.
//! It counts what it receives, so tests can assert that a rerun sends nothing.

pub mod model;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// One misbehaviour, applied to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// 429, with this `Retry-After` value when given.
    TooMany { retry_after: Option<String> },
    /// 500.
    ServerError,
    /// Wait this long, then answer normally (past the client's timeout: a timeout).
    Stall(Duration),
    /// 200 with a body that is not a completion.
    Malformed,
    /// Close the connection without answering.
    HangUp,
    /// 400, as a server answers a prompt longer than its context.
    Reject,
}

#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Faults for the first requests, in order (one per request).
    pub faults: Vec<Fault>,
    /// Every answer waits this long first (a slow model).
    pub delay: Duration,
    /// After this many answered requests the server goes away (connections refused).
    pub stop_after: Option<usize>,
}

#[derive(Default)]
struct Shared {
    faults: Mutex<std::collections::VecDeque<Fault>>,
    received: AtomicUsize,
    answered: AtomicUsize,
    /// Completions promised under `stop_after`: taken before answering, so requests in
    /// flight together cannot both be the last one.
    admitted: AtomicUsize,
    in_flight: AtomicUsize,
    peak_in_flight: AtomicUsize,
    kinds: Mutex<BTreeMap<String, usize>>,
    authorizations: Mutex<Vec<String>>,
    stop: AtomicBool,
}

/// A running stand-in server; dropping it stops it.
pub struct StandIn {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

/// Requests bigger than this are refused: the server only serves recap's tests.
const MAX_BODY: usize = 256 << 20;

impl StandIn {
    /// Starts a server on a free port of 127.0.0.1.
    pub fn start(config: Config) -> std::io::Result<StandIn> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            faults: Mutex::new(config.faults.into()),
            ..Shared::default()
        });
        let s = Arc::clone(&shared);
        let delay = config.delay;
        let stop_after = config.stop_after;
        let accept = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let s = Arc::clone(&s);
                std::thread::spawn(move || serve(stream, &s, delay, stop_after, addr));
            }
        });
        Ok(StandIn {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// The base URL to pass as `--endpoint`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// HTTP requests received (every attempt, faults included).
    pub fn received(&self) -> usize {
        self.shared.received.load(Ordering::SeqCst)
    }

    /// Requests answered with a completion (200).
    pub fn answered(&self) -> usize {
        self.shared.answered.load(Ordering::SeqCst)
    }

    /// The most requests it was working on at once.
    pub fn peak_in_flight(&self) -> usize {
        self.shared.peak_in_flight.load(Ordering::SeqCst)
    }

    /// Answered requests per rule (`next-action`, `probe`, `judge`, `summary`).
    pub fn kinds(&self) -> BTreeMap<String, usize> {
        self.shared
            .kinds
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The `Authorization` headers received.
    pub fn authorizations(&self) -> Vec<String> {
        self.shared
            .authorizations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Faults for the next requests.
    pub fn push_faults(&self, faults: impl IntoIterator<Item = Fault>) {
        self.shared
            .faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(faults);
    }

    /// Stops accepting connections; later requests are refused.
    pub fn stop(&mut self) {
        stop(&self.shared, self.addr);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.stop();
    }
}

fn stop(shared: &Shared, addr: SocketAddr) {
    if !shared.stop.swap(true, Ordering::SeqCst) {
        // Wakes the accept loop so it sees the flag and drops the listener.
        let _ = TcpStream::connect_timeout(&addr, Duration::from_secs(1));
    }
}

struct HttpRequest {
    method: String,
    path: String,
    authorization: Option<String>,
    body: Vec<u8>,
}

fn read_request(stream: &TcpStream) -> Option<HttpRequest> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut length = 0usize;
    let mut authorization = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (name, value) = h.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_string()),
            _ => {}
        }
    }
    if length > MAX_BODY {
        return None;
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(HttpRequest {
        method,
        path,
        authorization,
        body,
    })
}

fn write_response(mut stream: &TcpStream, status: &str, headers: &[(&str, &str)], body: &str) {
    let mut head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let _ = stream.flush();
}

fn serve(
    stream: TcpStream,
    s: &Shared,
    delay: Duration,
    stop_after: Option<usize>,
    addr: SocketAddr,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Some(request) = read_request(&stream) else {
        return;
    };
    if s.stop.load(Ordering::SeqCst) {
        return;
    }
    s.received.fetch_add(1, Ordering::SeqCst);
    let now = s.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    s.peak_in_flight.fetch_max(now, Ordering::SeqCst);
    answer(&stream, &request, s, delay, stop_after, addr);
    s.in_flight.fetch_sub(1, Ordering::SeqCst);
}

fn answer(
    stream: &TcpStream,
    request: &HttpRequest,
    s: &Shared,
    delay: Duration,
    stop_after: Option<usize>,
    addr: SocketAddr,
) {
    if let Some(a) = &request.authorization {
        s.authorizations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(a.clone());
    }
    if request.method != "POST" || request.path != "/v1/chat/completions" {
        write_response(
            stream,
            "404 Not Found",
            &[],
            r#"{"error":{"message":"no such route"}}"#,
        );
        return;
    }
    let fault = s
        .faults
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .pop_front();
    match fault {
        Some(Fault::TooMany { retry_after }) => {
            let headers: Vec<(&str, &str)> = retry_after
                .as_deref()
                .map(|v| vec![("retry-after", v)])
                .unwrap_or_default();
            write_response(
                stream,
                "429 Too Many Requests",
                &headers,
                r#"{"error":{"message":"rate limited"}}"#,
            );
            return;
        }
        Some(Fault::ServerError) => {
            write_response(stream, "500 Internal Server Error", &[], r#"{"error":{}}"#);
            return;
        }
        Some(Fault::HangUp) => return,
        Some(Fault::Reject) => {
            write_response(
                stream,
                "400 Bad Request",
                &[],
                r#"{"error":{"message":"maximum context length exceeded"}}"#,
            );
            return;
        }
        Some(Fault::Malformed) => {
            write_response(stream, "200 OK", &[], r#"{"choices": "this is not"#);
            s.answered.fetch_add(1, Ordering::SeqCst);
            return;
        }
        Some(Fault::Stall(d)) => std::thread::sleep(d),
        None => {}
    }
    std::thread::sleep(delay);
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(&request.body) else {
        write_response(
            stream,
            "400 Bad Request",
            &[],
            r#"{"error":{"message":"not JSON"}}"#,
        );
        return;
    };
    if stop_after.is_some_and(|n| s.admitted.fetch_add(1, Ordering::SeqCst) >= n) {
        // Past the limit the server is going down: hang up, as a dead server would.
        return;
    }
    let kind = model::kind(&json);
    let answer = model::respond(&json).to_string();
    // Counted before the client can see the answer: a test that reads the counts right
    // after its last request returns must find that request in them.
    *s.kinds
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(kind.to_string())
        .or_default() += 1;
    let answered = s.answered.fetch_add(1, Ordering::SeqCst) + 1;
    write_response(stream, "200 OK", &[], &answer);
    if stop_after.is_some_and(|n| answered >= n) {
        stop(s, addr);
    }
}
