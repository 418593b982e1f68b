//! ABI 1.1 is a minor version: a plugin built against ABI 1.0 loads and runs unchanged.
//! The fixture (`tests/fixtures/abi-1-0`) is such a build, frozen: its C layer and
//! protocol are the 1.0 SDK's, and it depends on no recap crate, so nothing of 1.1 can
//! leak into it. It must load as ABI 1.0, be taken as rendering PTC-Lisp sessions only,
//! render them through full requests and incremental sessions exactly as 1.0 did, and
//! never be sent a chat session.

use recap_core::invariants::{calls, check_session};
use recap_core::tokens::WordCounter;
use recap_core::{
    Form, Message, Registry, RenderRequest, Session, Strategy, StrategySpec, TokenCounter,
    render_call,
};
use recap_plugin_host::{Plugin, PluginStrategy, load, register};
use recap_testkit::plugins::{build_cdylibs, fixtures_manifest};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

fn frozen_library() -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let manifest = fixtures_manifest();
        let libs = build_cdylibs(&[
            "--manifest-path",
            manifest.to_str().expect("UTF-8 path"),
            "-p",
            "recap-plugin-abi-1-0",
            "--lib",
        ]);
        libs.get("recap_plugin_abi_1_0")
            .unwrap_or_else(|| panic!("the 1.0 fixture was not built: {libs:?}"))
            .clone()
    })
    .clone()
}

fn frozen() -> Arc<Plugin> {
    load(&frozen_library()).unwrap_or_else(|e| panic!("a 1.0 plugin must load: {e}"))
}

/// What the frozen strategy renders, written out here from its documentation.
fn expected(session: &Session, k: usize) -> Vec<Message> {
    let mut out = vec![
        Message::system(session.system_prompt.as_str()),
        Message::user(session.mission.as_str()),
    ];
    for turn in &session.turns[..k] {
        out.push(Message::assistant(turn.program.as_str()));
        out.push(Message::user(if turn.success {
            format!("turn {}: {} print(s)", turn.number, turn.prints.len())
        } else {
            format!(
                "turn {} failed: {}",
                turn.number,
                turn.error_message().unwrap_or_default()
            )
        }));
    }
    out
}

#[test]
fn a_1_0_plugin_loads_as_1_0_and_renders_ptc_lisp_only() {
    let plugin = frozen();
    assert_eq!(plugin.name(), "frozen-digest");
    assert_eq!(plugin.abi(), (1, 0));
    assert_eq!(
        plugin.forms(),
        [Form::Ptc],
        "no `forms` in describe means PTC-Lisp"
    );
    assert!(plugin.unknown_forms().is_empty() && plugin.unknown_invariants().is_empty());
    assert!(plugin.has_describe() && plugin.has_sessions());
    // The self-test rendered the PTC-Lisp sample only, sessions included.
    assert_eq!(plugin.self_test().forms, [Form::Ptc]);
    assert!(plugin.self_test().sessions);
    assert!(plugin.self_test().calls >= 6, "{}", plugin.self_test());
}

#[test]
fn a_1_0_plugin_renders_every_call_as_1_0_did_through_both_paths() {
    let plugin = frozen();
    let mut registry = Registry::new();
    // A run with a tokenizer: PTC-Lisp requests carry no counts either way.
    registry.set_counter(Arc::new(WordCounter));
    register(&mut registry, &plugin).unwrap();
    assert_eq!(
        registry.build("frozen-digest").unwrap().forms(),
        [Form::Ptc]
    );
    let counter: Arc<dyn TokenCounter> = Arc::new(WordCounter);
    let strategy = PluginStrategy::new(plugin, &StrategySpec::parse("frozen-digest").unwrap())
        .unwrap()
        .counting_with(Some(counter));
    let mut checked = 0;
    for session in recap_gen::generate_corpus(10, 25, 0..=10) {
        let mut replay = strategy.open();
        let mut held: Vec<Message> = Vec::new();
        for k in calls(&session) {
            let want = expected(&session, k);
            let request = RenderRequest::for_call(&session, k).unwrap();
            assert_eq!(
                strategy.render_request(&request).unwrap(),
                want,
                "{} k={k}",
                session.id
            );
            let delta = replay.call(&session, k, held.len()).unwrap();
            held = delta.within(held.len()).unwrap().apply(&held);
            assert_eq!(held, want, "{} k={k}", session.id);
            checked += 1;
        }
        // The invariants it declares (append-only included) hold through the host.
        let violations = check_session(&strategy, &session).unwrap();
        assert!(violations.is_empty(), "{}: {violations:?}", session.id);
    }
    assert!(checked > 100, "{checked}");
}

#[test]
fn a_1_0_plugin_is_never_sent_a_chat_session() {
    let plugin = frozen();
    let mut registry = Registry::new();
    register(&mut registry, &plugin).unwrap();
    let strategy = registry.build("frozen-digest").unwrap();
    let session = recap_gen::generate_chat_corpus(3, 1, 2..=4).remove(0);
    // The host refuses before calling: a plugin answer would be a bad_request (a chat
    // turn has no `program`).
    let err = render_call(strategy.as_ref(), &session, 1).unwrap_err();
    assert_eq!(err.kind, "unsupported_form", "{err}");
    assert!(err.message.contains("renders ptc sessions only"), "{err}");
}
