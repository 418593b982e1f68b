//! Chat-form sessions through the ABI (1.1): a plugin declaring the chat form is sent
//! chat requests — with the run's token counts when the registry has a tokenizer — and
//! answers messages carrying tool calls; a plugin that does not declare it is never
//! sent one.

use recap_core::invariants::{calls, check_session};
use recap_core::tokens::WordCounter;
use recap_core::{Form, Message, Registry, Session, Strategy, prompt_tokens, render_call};
use recap_plugin_host::{load, register};
use recap_testkit::plugins::sample;
use std::sync::Arc;

fn chat_corpus() -> Vec<Session> {
    recap_gen::generate_chat_corpus(21, 25, 1..=12)
}

fn registry(counter: bool) -> Registry {
    let mut registry = Registry::new();
    if counter {
        registry.set_counter(Arc::new(WordCounter));
    }
    for lib in ["recap_ptc_output_masking", "recap_aggressive"] {
        let plugin = load(&sample(lib)).unwrap_or_else(|e| panic!("{e}"));
        register(&mut registry, &plugin).unwrap();
    }
    registry
}

/// SYSTEM, USER(mission) and the messages of turns `from..k`.
fn opening_and_turns(session: &Session, from: usize, k: usize) -> Vec<Message> {
    let mut out = vec![
        Message::system(session.system_prompt.as_str()),
        Message::user(session.mission.as_str()),
    ];
    for turn in &session.chat_turns[from..k] {
        out.extend(turn.messages());
    }
    out
}

/// Every call through one plugin-side session (walked in order, each answered against
/// the prompt held) and each call rendered alone equal `want`.
fn assert_both_paths(
    strategy: &dyn Strategy,
    session: &Session,
    want: impl Fn(usize) -> Vec<Message>,
) {
    let mut replay = strategy.open();
    let mut held: Vec<Message> = Vec::new();
    for k in calls(session) {
        let expected = want(k);
        assert_eq!(
            render_call(strategy, session, k).unwrap(),
            expected,
            "{} k={k}",
            session.id
        );
        let delta = replay.call(session, k, held.len()).unwrap();
        held = delta.within(held.len()).unwrap().apply(&held);
        assert_eq!(held, expected, "{} session k={k}", session.id);
    }
}

#[test]
fn forms_are_declared_through_describe() {
    let aggressive = load(&sample("recap_aggressive")).unwrap();
    assert_eq!(aggressive.forms(), [Form::Ptc, Form::Chat]);
    assert_eq!(aggressive.self_test().forms, [Form::Ptc, Form::Chat]);
    let masking = load(&sample("recap_ptc_output_masking")).unwrap();
    assert_eq!(masking.forms(), [Form::Ptc]);
    let r = registry(false);
    assert_eq!(
        r.build("aggressive").unwrap().forms(),
        [Form::Ptc, Form::Chat]
    );
    assert_eq!(r.build("ptc-output-masking").unwrap().forms(), [Form::Ptc]);
}

#[test]
fn a_chat_plugin_renders_tool_carrying_messages() {
    for counter in [false, true] {
        let r = registry(counter);
        for spec in ["aggressive", "aggressive:turns=3"] {
            let strategy = r.build(spec).unwrap();
            let keep = if spec.ends_with('3') { 3 } else { 1 };
            for session in chat_corpus() {
                assert_both_paths(strategy.as_ref(), &session, |k| {
                    opening_and_turns(&session, k.saturating_sub(keep), k)
                });
                let violations = check_session(strategy.as_ref(), &session).unwrap();
                assert!(
                    violations.is_empty(),
                    "{spec} {}: {violations:?}",
                    session.id
                );
            }
        }
    }
}

#[test]
fn token_counts_reach_the_plugin_from_the_runs_tokenizer() {
    let session = chat_corpus()
        .into_iter()
        .find(|s| s.chat_turns.len() >= 6 && s.max_turns > 6)
        .expect("a session with a call after 6 turns");
    let k = 6;
    let everything = opening_and_turns(&session, 0, k);
    let budget = prompt_tokens(&WordCounter, &opening_and_turns(&session, 3, k));
    let spec = format!("aggressive:turns=6,max_tokens={budget}");

    // With the run's tokenizer the plugin keeps what fits: the newest three turns here,
    // unless a fourth costs nothing.
    let strategy = registry(true).build(&spec).unwrap();
    let want = |k: usize| {
        let mut first = k.saturating_sub(6);
        while first < k
            && prompt_tokens(&WordCounter, &opening_and_turns(&session, first, k)) > budget
        {
            first += 1;
        }
        opening_and_turns(&session, first, k)
    };
    assert_both_paths(strategy.as_ref(), &session, want);
    let got = render_call(strategy.as_ref(), &session, k).unwrap();
    assert!(prompt_tokens(&WordCounter, &got) <= budget);
    assert!(got.len() < everything.len(), "the budget dropped turns");

    // Without one, no counts are sent and the plugin says what it needs.
    let strategy = registry(false).build(&spec).unwrap();
    let err = render_call(strategy.as_ref(), &session, k).unwrap_err();
    assert_eq!(err.kind, "needs_tokenizer", "{err}");
}

#[test]
fn a_ptc_only_plugin_is_never_sent_a_chat_session() {
    let strategy = registry(true).build("ptc-output-masking").unwrap();
    let session = &chat_corpus()[0];
    let err = render_call(strategy.as_ref(), session, 1).unwrap_err();
    assert_eq!(err.kind, "unsupported_form");
    assert!(
        err.message
            .contains("ptc-output-masking renders ptc sessions only"),
        "{err}"
    );
    let err = strategy.open().call(session, 2, 0).unwrap_err();
    assert_eq!(err.kind, "unsupported_form");
}
