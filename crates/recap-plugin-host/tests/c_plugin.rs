//! Plugins written in C against `recap-abi/include/recap_strategy.h`, compiled with the
//! system C compiler (required under `CI=true`, skipped otherwise when there is none):
//! `mission_only.c` (no `describe`: the PTC-Lisp form alone, as every plugin of ABI 1.0)
//! and `chat_transcript.c` (declares the chat form and renders tool-carrying messages).

use recap_core::invariants::{calls, check_session};
use recap_core::{Form, Message, Registry, RenderRequest, Strategy, StrategySpec, render_call};
use recap_plugin_host::{PluginStrategy, load, register};
use std::path::{Path, PathBuf};
use std::process::Command;

fn compile_c_sample(name: &str) -> Option<PathBuf> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    if Command::new(&cc).arg("--version").output().is_err() {
        // CI must never pass without having compiled and loaded the C samples.
        assert!(
            !recap_gen::shared::required(),
            "no C compiler ({cc}) on this machine; CI=true requires one for the C plugin sample {name}.c"
        );
        recap_gen::shared::skipped(&format!(
            "no C compiler ({cc}) on this machine; the C plugin sample {name}.c was not tested"
        ));
        return None;
    }
    let abi = Path::new(env!("CARGO_MANIFEST_DIR")).join("../recap-abi");
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c-plugin");
    std::fs::create_dir_all(&out_dir).unwrap();
    let lib = out_dir.join(format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let output = Command::new(&cc)
        .args([
            "-std=c99", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-I",
        ])
        .arg(abi.join("include"))
        .arg("-o")
        .arg(&lib)
        .arg(abi.join(format!("c-sample/{name}.c")))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{cc} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(lib)
}

#[test]
fn a_c_plugin_loads_and_renders() {
    let Some(lib) = compile_c_sample("mission_only") else {
        return;
    };
    let plugin = load(&lib).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plugin.name(), "mission-only");
    assert_eq!(plugin.version(), "0.1.0");
    // The header's RECAP_ABI_MAJOR and RECAP_ABI_MINOR, which are the SDK's.
    assert_eq!(plugin.abi(), (recap_abi::ABI_MAJOR, recap_abi::ABI_MINOR));
    assert!(!plugin.has_describe() && !plugin.has_sessions());
    assert!(!plugin.self_test().sessions);
    assert_eq!(plugin.forms(), [Form::Ptc], "no describe: PTC-Lisp only");

    let mut registry = Registry::new();
    register(&mut registry, &plugin).unwrap();
    assert!(registry.build("mission-only").is_ok());
    let strategy =
        PluginStrategy::new(plugin, &StrategySpec::parse("mission-only").unwrap()).unwrap();
    for session in recap_gen::generate_corpus(9, 15, 0..=6) {
        let expected = vec![
            Message::system(session.system_prompt.as_str()),
            Message::user(session.mission.as_str()),
        ];
        let mut replay = strategy.open();
        for k in calls(&session) {
            let request = RenderRequest::for_call(&session, k).unwrap();
            assert_eq!(strategy.render_request(&request).unwrap(), expected);
            assert_eq!(replay.call(&session, k, 0).unwrap().tail, expected);
        }
    }
}

#[test]
fn a_c_plugin_renders_chat_sessions_with_tool_calls() {
    let Some(lib) = compile_c_sample("chat_transcript") else {
        return;
    };
    let plugin = load(&lib).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plugin.name(), "chat-transcript");
    assert_eq!(plugin.forms(), [Form::Chat]);
    assert!(plugin.has_describe() && !plugin.has_sessions());
    assert_eq!(plugin.self_test().forms, [Form::Chat]);

    let mut registry = Registry::new();
    register(&mut registry, &plugin).unwrap();
    assert!(registry.build("chat-transcript").is_ok());
    let strategy =
        PluginStrategy::new(plugin, &StrategySpec::parse("chat-transcript").unwrap()).unwrap();
    let full_history = recap_builtins::registry().build("full-history").unwrap();
    let mut tool_calls = 0;
    for session in recap_gen::generate_chat_corpus(17, 20, 1..=10) {
        let mut replay = strategy.open();
        for k in calls(&session) {
            let request = RenderRequest::for_call(&session, k).unwrap();
            let expected = render_call(full_history.as_ref(), &session, k).unwrap();
            tool_calls += expected.iter().map(|m| m.tool_calls.len()).sum::<usize>();
            assert_eq!(
                strategy.render_request(&request).unwrap(),
                expected,
                "{} k={k}",
                session.id
            );
            assert_eq!(
                replay.call(&session, k, 0).unwrap().tail,
                expected,
                "{} session k={k}",
                session.id
            );
        }
        let violations = check_session(&strategy, &session).unwrap();
        assert!(violations.is_empty(), "{}: {violations:?}", session.id);
    }
    assert!(
        tool_calls > 50,
        "the corpus exercised tool calls: {tool_calls}"
    );

    // Declaring only the chat form, it is never sent a PTC-Lisp session.
    let ptc = &recap_gen::generate_corpus(1, 1, 2..=2)[0];
    let err = render_call(&strategy, ptc, 1).unwrap_err();
    assert_eq!(err.kind, "unsupported_form", "{err}");
}
