//! `llm-summary` against the stand-in model on 127.0.0.1: where the cuts fall, the
//! incremental summary, determinism from the cache, pairing, and the endpoint gone.

use recap_core::tokens::WordCounter;
use recap_core::{Registry, Role, Session, Strategy};
use recap_eval::standin::{Config, StandIn};
use recap_gen::chat::ChatSessionBuilder;
use recap_llm::backoff::Backoff;
use recap_llm::{Cache, Client, ClientConfig, Endpoint, summarizer_purpose};
use recap_llm_summary::template::SUMMARY_PREFIX;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn endpoint(url: &str, cache: &Path) -> Arc<Endpoint> {
    let mut c = ClientConfig::new(url);
    c.retries = 1;
    c.timeout = Duration::from_secs(5);
    c.backoff = Backoff {
        base: Duration::from_millis(5),
        max: Duration::from_millis(10),
    };
    Arc::new(Endpoint::new(
        Client::new(c).unwrap(),
        Cache::open(cache).unwrap(),
        Arc::new(WordCounter),
    ))
}

fn strategy(endpoint: Arc<Endpoint>, spec: &str) -> Arc<dyn Strategy> {
    let mut r = Registry::new();
    r.set_counter(Arc::new(WordCounter));
    recap_llm_summary::register(&mut r, endpoint, "stand-in".into()).unwrap();
    r.build(spec).unwrap()
}

/// Eight tool turns, each result's first line naming its turn.
fn session() -> Session {
    let mut b = ChatSessionBuilder::new("find the bug").system("you are an agent");
    for t in 1..=8 {
        let id = format!("c{t}");
        let args = format!("{{\"path\": \"/repo/file{t}.rs\"}}");
        let result = format!("result of turn {t} is here\n{}", "word ".repeat(20));
        b = b.tool_turn("", &[(&id, "read", &args)], &[&result]);
    }
    b.build()
}

const SPEC: &str = "llm-summary:keep=2,trigger=100";

#[test]
fn older_turns_become_a_summary_after_the_mission_updated_at_each_cut() {
    let server = StandIn::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let e = endpoint(&server.url(), &dir.path().join("c.sqlite"));
    let s = strategy(Arc::clone(&e), SPEC);
    assert_eq!(s.spec(), SPEC);
    let session = session();
    let mut replay = s.open();
    let prompts: Vec<_> = (0..=8)
        .map(|k| replay.call(&session, k, 0).unwrap().tail)
        .collect();
    // Under the trigger: the full history.
    assert_eq!(prompts[1].len(), 4);
    let last = &prompts[8];
    assert_eq!(last[0].role, Role::System);
    assert_eq!(last[1].content, "find the bug");
    assert!(last[2].content.starts_with(SUMMARY_PREFIX), "{:?}", last[2]);
    // The newest `keep` turns verbatim after the summary, starting with their call.
    assert_eq!(last.len(), 3 + 2 * 2);
    assert_eq!(last[3].role, Role::Assistant);
    assert!(last[4].content.starts_with("result of turn 7"));
    // The stand-in's summary lists each forgotten event's first line: turns 1..6, carried
    // from one summary to the next.
    for t in 1..=6 {
        assert!(
            last[2]
                .content
                .contains(&format!("result of turn {t} is here")),
            "turn {t} missing from the summary:\n{}",
            last[2].content
        );
    }
    let cuts = server.kinds()["summary"];
    assert!(
        cuts >= 2,
        "expected incremental updates, got {cuts} summaries"
    );
    let t = e.purposes()[&summarizer_purpose(SPEC)];
    assert_eq!(t.requests as usize, cuts);
    assert!(t.prompt_tokens > 0 && t.completion_tokens > 0);
    // Between cuts a prompt extends the previous one (cache-friendly).
    let grows = prompts
        .windows(2)
        .filter(|w| w[1].starts_with(&w[0]))
        .count();
    assert!(
        grows >= 8 - cuts,
        "{grows} of 8 calls extend the previous prompt"
    );
}

#[test]
fn replays_are_byte_identical_from_the_cache_and_stateless_render_agrees() {
    let server = StandIn::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let session = session();
    let first = {
        let s = strategy(endpoint(&server.url(), &path), SPEC);
        let mut replay = s.open();
        (0..=8)
            .map(|k| replay.call(&session, k, 0).unwrap().tail)
            .collect::<Vec<_>>()
    };
    let sent = server.received();
    let s = strategy(endpoint(&server.url(), &path), SPEC);
    for k in [8, 3, 6] {
        assert_eq!(
            recap_core::render_call(s.as_ref(), &session, k).unwrap(),
            first[k],
            "call {k}"
        );
    }
    assert_eq!(server.received(), sent, "a replay asked the endpoint again");
}

#[test]
fn an_endpoint_that_is_gone_is_a_render_error_naming_it() {
    let mut server = StandIn::start(Config::default()).unwrap();
    let url = server.url();
    server.stop();
    let dir = tempfile::tempdir().unwrap();
    let s = strategy(endpoint(&url, &dir.path().join("c.sqlite")), SPEC);
    let session = session();
    let err = recap_core::render_call(s.as_ref(), &session, 8).unwrap_err();
    assert_eq!(err.kind, "summarizer");
    assert!(err.message.contains(&url), "{err}");
    // Below the trigger nothing is asked, so nothing fails.
    assert!(recap_core::render_call(s.as_ref(), &session, 1).is_ok());
}

#[test]
fn bad_options_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let e = endpoint("http://127.0.0.1:9/v1", &dir.path().join("c.sqlite"));
    let mut r = Registry::new();
    r.set_counter(Arc::new(WordCounter));
    recap_llm_summary::register(&mut r, e, "m".into()).unwrap();
    for (spec, word) in [
        ("llm-summary:keep=0", "keep"),
        ("llm-summary:template=/no/such/file", "template"),
        ("llm-summary:window=3", "window"),
    ] {
        let err = r.build(spec).err().unwrap().to_string();
        assert!(err.contains(word), "{spec}: {err}");
    }
    let custom = dir.path().join("t.txt");
    std::fs::write(&custom, "no placeholder").unwrap();
    let err = r
        .build(&format!("llm-summary:template={}", custom.display()))
        .err()
        .unwrap();
    assert!(err.to_string().contains("{events}"), "{err}");
    std::fs::write(&custom, "Summarize:\n{events}").unwrap();
    let s = r
        .build(&format!("llm-summary:template={}", custom.display()))
        .unwrap();
    assert!(s.spec().contains("template="));
}
