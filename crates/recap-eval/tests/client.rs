//! The client and the endpoint against the stand-in server on 127.0.0.1: retries,
//! Retry-After, timeouts, limits, malformed answers, the key, the cache, a server that
//! is down or at the wrong URL.

mod support;

use recap_core::Message;
use recap_eval::standin::{Config, Fault, StandIn};
use recap_llm::{ApiKey, ChatRequest, EndpointError, Sampling, SendError, Tools};
use std::time::{Duration, Instant};
use support::{config, endpoint, endpoint_with};

fn request(text: &str) -> ChatRequest {
    let sampling = Sampling {
        model: "stand-in".into(),
        max_tokens: 32,
        temperature: 0.0,
    };
    ChatRequest::new(
        &sampling,
        &[
            Message::system("s"),
            Message::user("go"),
            Message::assistant(text),
        ],
        Tools::None,
    )
}

fn server(faults: Vec<Fault>) -> StandIn {
    StandIn::start(Config {
        faults,
        ..Config::default()
    })
    .expect("start the stand-in")
}

#[test]
fn retries_429_and_500_honouring_retry_after_then_answers() {
    let s = server(vec![
        Fault::TooMany {
            retry_after: Some("1".into()),
        },
        Fault::ServerError,
        Fault::TooMany { retry_after: None },
    ]);
    let dir = tempfile::tempdir().unwrap();
    let e = endpoint(&s.url(), &dir.path().join("c.sqlite"));
    let start = Instant::now();
    let c = e.complete(&request("echo me"), "t").unwrap();
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "Retry-After: 1 was not honoured"
    );
    assert_eq!(
        c.reply.as_ref().unwrap().content.as_deref(),
        Some("echo me")
    );
    assert_eq!(c.retries, 3);
    assert_eq!(s.received(), 4);
    let t = e.totals();
    assert_eq!((t.requests, t.sent, t.retried, t.failed), (1, 1, 3, 0));
}

#[test]
fn a_stalled_answer_times_out_and_is_retried() {
    let s = server(vec![Fault::Stall(Duration::from_secs(4)), Fault::HangUp]);
    let dir = tempfile::tempdir().unwrap();
    let e = endpoint(&s.url(), &dir.path().join("c.sqlite"));
    let start = Instant::now();
    let c = e.complete(&request("x"), "t").unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(c.retries, 2);
    assert_eq!(e.totals().retried, 2);
}

#[test]
fn retries_run_out_into_a_counted_failure_not_a_stop() {
    let s = server(vec![Fault::ServerError; 4]);
    let dir = tempfile::tempdir().unwrap();
    let e = endpoint(&s.url(), &dir.path().join("c.sqlite"));
    let err = e.complete(&request("x"), "t").unwrap_err();
    assert!(
        matches!(
            err,
            EndpointError::Send(SendError::GaveUp { attempts: 4, .. })
        ),
        "{err}"
    );
    assert!(!err.is_fatal());
    assert!(e.fatal().is_none());
    let t = e.totals();
    assert_eq!((t.failed, t.retried), (1, 3));
    // A failure is not cached: the next run asks again.
    let e2 = endpoint(&s.url(), &dir.path().join("c.sqlite"));
    assert!(e2.complete(&request("x"), "t").is_ok());
}

#[test]
fn a_request_rejected_alone_is_a_failure_without_retries_and_the_run_goes_on() {
    let s = server(vec![Fault::Reject]);
    let dir = tempfile::tempdir().unwrap();
    let e = endpoint(&s.url(), &dir.path().join("c.sqlite"));
    let err = e.complete(&request("too long"), "t").unwrap_err();
    assert!(
        matches!(
            err,
            EndpointError::Send(SendError::Rejected { status: 400, .. })
        ),
        "{err}"
    );
    assert!(
        !err.is_fatal() && err.to_string().contains("context length"),
        "{err}"
    );
    assert_eq!(s.received(), 1);
    assert!(e.complete(&request("fits"), "t").is_ok());
    assert_eq!(e.totals().failed, 1);
}

#[test]
fn a_malformed_answer_is_recorded_and_counted_and_cached() {
    let s = server(vec![Fault::Malformed]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let e = endpoint(&s.url(), &path);
    let c = e.complete(&request("x"), "t").unwrap();
    assert!(c.reply.is_err());
    assert_eq!(e.totals().malformed, 1);
    drop(e);
    let again = endpoint(&s.url(), &path)
        .complete(&request("x"), "t")
        .unwrap();
    assert!(again.reply.is_err() && again.from_cache);
    assert_eq!(s.received(), 1);
}

#[test]
fn a_rerun_is_served_from_the_cache_without_a_request() {
    let s = server(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let first: Vec<_> = {
        let e = endpoint(&s.url(), &path);
        (0..5)
            .map(|i| e.complete(&request(&format!("r{i}")), "t").unwrap())
            .collect()
    };
    assert_eq!(s.received(), 5);
    let e = endpoint(&s.url(), &path);
    for (i, f) in first.iter().enumerate() {
        let c = e.complete(&request(&format!("r{i}")), "t").unwrap();
        assert!(c.from_cache);
        assert_eq!(c.response, f.response);
    }
    assert_eq!(s.received(), 5, "the rerun sent requests");
    assert_eq!(e.totals().cached, 5);
}

#[test]
fn identical_requests_asked_at_once_are_sent_once() {
    let s = StandIn::start(Config {
        delay: Duration::from_millis(200),
        ..Config::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let e = endpoint(&s.url(), &dir.path().join("c.sqlite"));
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| e.complete(&request("same"), "t").unwrap());
        }
    });
    assert_eq!(s.received(), 1);
    assert_eq!(e.totals().requests, 1);
}

#[test]
fn no_more_requests_in_flight_than_the_concurrency_limit() {
    let s = StandIn::start(Config {
        delay: Duration::from_millis(150),
        ..Config::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(&s.url());
    c.concurrency = 2;
    let e = endpoint_with(c, &dir.path().join("c.sqlite"));
    std::thread::scope(|scope| {
        for i in 0..8 {
            let e = &e;
            scope.spawn(move || e.complete(&request(&format!("{i}")), "t").unwrap());
        }
    });
    assert_eq!(s.received(), 8);
    assert_eq!(s.peak_in_flight(), 2);
}

#[test]
fn the_key_goes_in_the_header_and_nowhere_else() {
    let s = server(vec![Fault::ServerError; 4]);
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(&s.url());
    c.api_key = Some(ApiKey::new("sk-test-not-a-real-key"));
    let e = endpoint_with(c, &dir.path().join("c.sqlite"));
    let err = e.complete(&request("x"), "t").unwrap_err();
    assert!(
        s.authorizations()
            .iter()
            .all(|a| a == "Bearer sk-test-not-a-real-key")
    );
    assert_eq!(s.authorizations().len(), 4);
    assert!(!format!("{err} {err:?} {e:?}").contains("sk-test"));
}

#[test]
fn a_server_that_is_down_is_a_fatal_error_naming_the_url() {
    let mut s = server(vec![]);
    let url = s.url();
    s.stop();
    let dir = tempfile::tempdir().unwrap();
    let e = endpoint(&url, &dir.path().join("c.sqlite"));
    let err = e.complete(&request("x"), "t").unwrap_err();
    assert!(err.is_fatal());
    assert!(
        matches!(err, EndpointError::Send(SendError::Unreachable { .. })),
        "{err}"
    );
    assert!(
        err.to_string().contains(&format!("{url}/chat/completions")),
        "{err}"
    );
    // Later requests fail at once with the same error.
    let start = Instant::now();
    assert!(e.complete(&request("y"), "t").is_err());
    assert!(start.elapsed() < Duration::from_millis(50));
}

#[test]
fn a_wrong_path_is_refused_at_once() {
    let s = server(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let url = s.url().replace("/v1", "/nothing");
    let e = endpoint(&url, &dir.path().join("c.sqlite"));
    let err = e.complete(&request("x"), "t").unwrap_err();
    assert!(
        matches!(
            err,
            EndpointError::Send(SendError::Refused { status: 404, .. })
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("/nothing/chat/completions"),
        "{err}"
    );
    assert_eq!(s.received(), 1);
}
