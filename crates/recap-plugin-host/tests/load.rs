//! Loading real plugin libraries: the sample plugins, and one fixture per way a
//! library can be wrong — each a clear error naming the file, with the host alive after.

use recap_testkit::plugins as support;

use recap_core::invariants::calls;
use recap_core::{
    Invariant, Message, Registry, RenderRequest, Session, SpecError, Strategy, StrategyInfo,
    StrategySpec, render_call,
};
use recap_plugin_host::{PluginStrategy, load, load_all, plugin_files_in, register};
use std::path::Path;
use std::sync::Arc;
use support::{fixture, sample};

fn corpus() -> Vec<Session> {
    recap_gen::generate_corpus(42, 25, 0..=12)
}

fn registry_with_samples() -> Registry {
    let mut registry = Registry::new();
    for lib in ["recap_ptc_output_masking", "recap_aggressive"] {
        let plugin = load(&sample(lib)).unwrap_or_else(|e| panic!("{e}"));
        register(&mut registry, &plugin).unwrap();
    }
    registry
}

#[test]
fn sample_plugins_load_and_describe_themselves() {
    let masking = load(&sample("recap_ptc_output_masking")).unwrap();
    assert_eq!(masking.name(), "ptc-output-masking");
    assert_eq!(masking.version(), env!("CARGO_PKG_VERSION"));
    assert_eq!(masking.abi(), (recap_abi::ABI_MAJOR, recap_abi::ABI_MINOR));
    assert!(masking.has_describe() && masking.has_sessions());
    assert_eq!(masking.options().len(), 1);
    assert_eq!(masking.options()[0].key, "window");
    assert_eq!(masking.options()[0].default, "10");
    assert!(masking.invariants().contains(&Invariant::TurnsLine));
    assert!(!masking.invariants().contains(&Invariant::AppendOnly));
    assert!(masking.unknown_invariants().is_empty());
    assert!(masking.self_test().sessions);
    assert!(masking.self_test().calls >= 6);

    let aggressive = load(&sample("recap_aggressive")).unwrap();
    assert_eq!(aggressive.name(), "aggressive");
    let keys: Vec<&str> = aggressive
        .options()
        .iter()
        .map(|o| o.key.as_str())
        .collect();
    assert_eq!(keys, ["turns", "max_tokens"]);
    assert!(aggressive.summary().contains("definition names"));
}

#[test]
fn plugin_strategies_are_built_from_spec_strings_like_built_ins() {
    let registry = registry_with_samples();
    let info = registry.get("ptc-output-masking").unwrap();
    assert!(
        info.origin.ends_with("librecap_ptc_output_masking.so"),
        "{}",
        info.origin
    );

    let s = registry.build("ptc-output-masking:window=2").unwrap();
    assert_eq!(s.spec(), "ptc-output-masking:window=2");
    assert_eq!(
        registry.build("ptc-output-masking").unwrap().spec(),
        "ptc-output-masking"
    );

    match registry.build("ptc-output-masking:window=0") {
        Err(SpecError::BadValue {
            strategy,
            key,
            value,
            expected,
        }) => {
            assert_eq!(
                (strategy.as_str(), key.as_str(), value.as_str()),
                ("ptc-output-masking", "window", "0")
            );
            assert!(expected.contains("≥ 1"), "{expected}");
        }
        other => panic!("expected BadValue, got {:?}", other.map(|s| s.spec())),
    }
    assert!(matches!(
        registry.build("ptc-output-masking:size=3"),
        Err(SpecError::UnknownOption { .. })
    ));
    assert!(matches!(
        registry.build("aggressive:window=3"),
        Err(SpecError::UnknownOption { .. })
    ));
}

/// Plugin strategy `spec` of the sample or fixture library at `lib`.
fn plugin_strategy(lib: &Path, spec: &str) -> PluginStrategy {
    let plugin = load(lib).unwrap_or_else(|e| panic!("{e}"));
    PluginStrategy::new(plugin, &StrategySpec::parse(spec).unwrap()).unwrap()
}

/// Every call of `session` through one replay, each answered against the prompt held.
fn replayed(strategy: &dyn Strategy, session: &Session, ks: &[usize]) -> Vec<Vec<Message>> {
    let mut replay = strategy.open();
    let mut held: Vec<Message> = Vec::new();
    ks.iter()
        .map(|&k| {
            let delta = replay
                .call(session, k, held.len())
                .and_then(|d| d.within(held.len()))
                .unwrap();
            held = delta.apply(&held);
            held.clone()
        })
        .collect()
}

#[test]
fn ptc_output_masking_with_a_wide_window_is_full_history() {
    let strategy = plugin_strategy(
        &sample("recap_ptc_output_masking"),
        "ptc-output-masking:window=100",
    );
    for session in corpus() {
        let ks: Vec<usize> = calls(&session).collect();
        let walked = replayed(&strategy, &session, &ks);
        for (&k, got) in ks.iter().zip(walked) {
            let request = RenderRequest::for_call(&session, k).unwrap();
            let expected = recap_history::render(&request);
            assert_eq!(strategy.render_request(&request).unwrap(), expected);
            assert_eq!(got, expected);
        }
    }
}

/// Every call through the session functions equals a full request: walked in order,
/// walked skipping calls, and each rendered alone.
fn assert_session_path_matches(strategy: &PluginStrategy, sessions: &[Session]) {
    for session in sessions {
        let ks: Vec<usize> = calls(session).collect();
        let full: Vec<Vec<Message>> = ks
            .iter()
            .map(|&k| {
                strategy
                    .render_request(&RenderRequest::for_call(session, k).unwrap())
                    .unwrap()
            })
            .collect();
        for (&k, got) in ks.iter().zip(replayed(strategy, session, &ks)) {
            assert_eq!(got, full[k], "{} k={k}", session.id);
        }
        let last = *ks.last().unwrap();
        let skipping: Vec<usize> = [0, 2, last].into_iter().filter(|&k| k <= last).collect();
        let mut distinct = skipping.clone();
        distinct.dedup();
        for (&k, got) in distinct.iter().zip(replayed(strategy, session, &distinct)) {
            assert_eq!(got, full[k], "{} skip k={k}", session.id);
        }
        assert_eq!(render_call(strategy, session, last).unwrap(), full[last]);
    }
}

#[test]
fn session_rendering_equals_full_requests() {
    let sessions = corpus();
    for (lib, spec) in [
        ("recap_ptc_output_masking", "ptc-output-masking:window=2"),
        ("recap_aggressive", "aggressive"),
    ] {
        assert_session_path_matches(&plugin_strategy(&sample(lib), spec), &sessions);
    }
}

#[test]
fn plugins_without_session_functions_render_incrementally_on_the_host() {
    let plugin = load(&fixture("fx_echo_raw")).unwrap();
    assert_eq!(plugin.name(), "echo-raw");
    assert!(!plugin.has_sessions() && !plugin.has_describe());
    assert_eq!(plugin.invariants(), Invariant::UNIVERSAL);
    let mut registry = Registry::new();
    register(&mut registry, &plugin).unwrap();
    // No describe: no options.
    assert!(matches!(
        registry.build("echo-raw:x=1"),
        Err(SpecError::UnknownOption { .. })
    ));
    assert_session_path_matches(
        &plugin_strategy(&fixture("fx_echo_raw"), "echo-raw"),
        &corpus(),
    );
}

#[test]
fn one_instance_renders_from_many_threads() {
    let registry = registry_with_samples();
    let strategy = registry.build("ptc-output-masking:window=3").unwrap();
    let sessions = Arc::new(corpus());
    let expected: Vec<Vec<Vec<Message>>> = sessions
        .iter()
        .map(|s| {
            calls(s)
                .map(|k| render_call(strategy.as_ref(), s, k).unwrap())
                .collect()
        })
        .collect();
    let expected = Arc::new(expected);
    let handles: Vec<_> = (0..6)
        .map(|t| {
            let (strategy, sessions, expected) = (
                Arc::clone(&strategy),
                Arc::clone(&sessions),
                Arc::clone(&expected),
            );
            std::thread::spawn(move || {
                for (i, s) in sessions.iter().enumerate().skip(t % 3) {
                    let ks: Vec<usize> = calls(s).collect();
                    if t % 2 == 0 {
                        for (&k, got) in ks.iter().zip(replayed(strategy.as_ref(), s, &ks)) {
                            assert_eq!(got, expected[i][k]);
                        }
                    } else {
                        for &k in &ks {
                            assert_eq!(
                                render_call(strategy.as_ref(), s, k).unwrap(),
                                expected[i][k]
                            );
                        }
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn a_panic_at_render_time_is_a_render_error_and_the_session_starts_over() {
    let strategy = plugin_strategy(&fixture("fx_panics_late"), "panics-late");
    let session = recap_gen::generate_corpus(3, 30, 5..=7)
        .into_iter()
        .find(|s| s.turns.len() >= 5 && s.max_turns > 5)
        .expect("a generated session with 5+ turns");
    let request = RenderRequest::for_call(&session, 3).unwrap();
    let err = strategy.render_request(&request).unwrap_err();
    assert_eq!(err.kind, "panic");
    assert!(err.message.contains("fixture panic after 3 turns"), "{err}");
    assert!(
        err.message.contains("libfx_panics_late.so"),
        "names the plugin: {err}"
    );

    let mut replay = strategy.open();
    assert!(replay.call(&session, 2, 0).is_ok());
    let err = replay.call(&session, 3, 0).unwrap_err();
    assert_eq!(err.kind, "panic");
    // The failed plugin-side session was dropped: the next call opens a fresh one,
    // which renders (and panics) anew instead of refusing as a session that failed.
    let err = replay.call(&session, 4, 0).unwrap_err();
    assert_eq!(err.kind, "panic", "{err}");
    assert!(err.message.contains("fixture panic after 4 turns"), "{err}");
}

fn load_err(path: &Path) -> String {
    match load(path) {
        Ok(p) => panic!("{} loaded as {:?}", path.display(), p.name()),
        Err(e) => {
            assert_eq!(
                e.path.file_name(),
                path.file_name(),
                "the error names the file: {e}"
            );
            e.to_string()
        }
    }
}

#[test]
fn every_broken_library_is_a_clear_error_and_the_host_lives_on() {
    let cases: &[(&str, &[&str])] = &[
        (
            "fx_no_symbols",
            &[
                "missing symbol `recap_strategy_abi_version`",
                "not a recap strategy plugin",
            ],
        ),
        (
            "fx_missing_descriptor",
            &["missing symbol `recap_strategy_plugin_v1`"],
        ),
        (
            "fx_wrong_abi",
            &[
                "wrong ABI version: the plugin speaks recap strategy ABI 2, this recap supports ABI 1",
            ],
        ),
        (
            "fx_descriptor_abi_mismatch",
            &["wrong ABI version", "ABI 2"],
        ),
        (
            "fx_bad_magic",
            &["invalid descriptor: bad magic number 0x00000000deadbeef"],
        ),
        (
            "fx_small_size",
            &["invalid descriptor: size 24 is smaller than the"],
        ),
        (
            "fx_null_render",
            &["invalid descriptor: required function `render` is missing"],
        ),
        (
            "fx_bad_utf8_name",
            &[
                "invalid strategy name: the name is not valid UTF-8",
                "ff, fe",
            ],
        ),
        (
            "fx_empty_name",
            &["invalid strategy name: the name is empty"],
        ),
        (
            "fx_invalid_json",
            &[
                "self-test failed at render after 0 turn(s): invalid JSON back from the plugin",
                "this is not JSON",
            ],
        ),
        (
            "fx_unknown_role",
            &[
                "invalid JSON back from the plugin",
                "unknown variant `robot`",
            ],
        ),
        (
            "fx_tool_without_id",
            &[
                "self-test failed at render after 0 turn(s): invalid JSON back from the plugin",
                "messages[0] (tool): a tool message without tool_call_id",
            ],
        ),
        (
            "fx_error_response",
            &[
                "self-test failed",
                "error response (status 1, kind \"fixture_error\"): this fixture always refuses",
            ],
        ),
        (
            "fx_panicking_render",
            &[
                "self-test failed at render after 1 turn(s): the plugin panicked",
                "fixture panic after 1 turn(s)",
            ],
        ),
        (
            "fx_panicking_describe",
            &[
                "describe failed: the plugin panicked",
                "fixture panic while building the strategy",
            ],
        ),
        (
            "fx_wrong_first_messages",
            &[
                "self-test failed at render after 0 turn(s)",
                "first message must be SYSTEM",
            ],
        ),
    ];
    for (name, needles) in cases {
        let path = fixture(name);
        let message = load_err(&path);
        assert!(message.starts_with("plugin /"), "{message}");
        for needle in *needles {
            assert!(
                message.contains(needle),
                "{name}: {message:?} lacks {needle:?}"
            );
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("libjunk.so");
    std::fs::write(&junk, "this is a text file").unwrap();
    let message = load_err(&junk);
    assert!(
        message.contains("not a loadable shared library"),
        "{message}"
    );
    assert!(
        message.contains("libjunk.so"),
        "the dlerror text is kept: {message}"
    );
    let message = load_err(&dir.path().join("libmissing.so"));
    assert!(message.contains("cannot read the file"), "{message}");
    let sub = dir.path().join("libdir.so");
    std::fs::create_dir(&sub).unwrap();
    assert!(load_err(&sub).contains("not a regular file"));

    // Still alive, and still loading and rendering.
    let registry = registry_with_samples();
    let session = &corpus()[0];
    let k = calls(session).last().unwrap();
    let aggressive = registry.build("aggressive").unwrap();
    let messages = render_call(aggressive.as_ref(), session, k).unwrap();
    assert_eq!(messages[0], Message::system(session.system_prompt.as_str()));
}

#[test]
fn duplicate_names_are_refused_with_both_origins() {
    let mut registry = Registry::new();
    registry
        .register(
            StrategyInfo {
                name: "full-history".into(),
                summary: "stand-in for the built-in".into(),
                options: vec![],
                origin: "built-in".into(),
            },
            |_| Err(SpecError::Empty),
        )
        .unwrap();
    let impostor = load(&fixture("fx_duplicate_name")).unwrap();
    let e = register(&mut registry, &impostor).unwrap_err().to_string();
    assert!(e.contains("libfx_duplicate_name.so"), "{e}");
    assert!(
        e.contains("duplicate strategy name \"full-history\": already provided by built-in"),
        "{e}"
    );

    // The same plugin under two file names.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("libaggressive_copy.so");
    std::fs::copy(sample("recap_aggressive"), &copy).unwrap();
    let first = load(&sample("recap_aggressive")).unwrap();
    let second = load(&copy).unwrap();
    register(&mut registry, &first).unwrap();
    let e = register(&mut registry, &second).unwrap_err().to_string();
    assert!(e.contains("libaggressive_copy.so"), "{e}");
    assert!(e.contains("already provided by /"), "{e}");
    assert!(e.contains("librecap_aggressive.so"), "{e}");
}

#[test]
fn plugin_directories_list_libraries_only_and_load_each_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        sample("recap_aggressive"),
        dir.path().join("libb_aggressive.so"),
    )
    .unwrap();
    std::fs::write(dir.path().join("liba_junk.so"), "not a library").unwrap();
    std::fs::write(dir.path().join("README.txt"), "ignored").unwrap();
    std::fs::write(dir.path().join("notes.so.txt"), "ignored").unwrap();
    let files = plugin_files_in(dir.path()).unwrap();
    let names: Vec<_> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_str().unwrap())
        .collect();
    assert_eq!(names, ["liba_junk.so", "libb_aggressive.so"]);

    let mut twice = files.clone();
    twice.push(dir.path().join(".").join("libb_aggressive.so"));
    let (plugins, errors) = load_all(&twice);
    assert_eq!(plugins.len(), 1, "the same file is loaded once");
    assert_eq!(plugins[0].name(), "aggressive");
    assert_eq!(errors.len(), 1);
    assert!(errors[0].to_string().contains("liba_junk.so"));

    let e = plugin_files_in(&dir.path().join("absent"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("absent") && e.contains("cannot read"), "{e}");
}

#[test]
fn the_author_guide_plugin_is_the_readme_code_and_it_works() {
    let root = support::workspace_root();
    let readme = std::fs::read_to_string(root.join("crates/recap-abi/README.md")).unwrap();
    let start = readme
        .find("```rust\n")
        .expect("the guide has a rust block")
        + "```rust\n".len();
    let end = start + readme[start..].find("```").unwrap();
    let fixture_src = root
        .join("crates/recap-plugin-host/tests/fixtures/failures/examples/guide_last_programs.rs");
    assert_eq!(
        std::fs::read_to_string(&fixture_src).unwrap(),
        &readme[start..end],
        "keep {} identical to the author guide's code",
        fixture_src.display()
    );

    let plugin = load(&fixture("guide_last_programs")).unwrap();
    assert_eq!(plugin.name(), "last-programs");
    let mut registry = Registry::new();
    register(&mut registry, &plugin).unwrap();
    let strategy = registry.build("last-programs:keep=1").unwrap();
    let session = corpus().into_iter().find(|s| s.turns.len() >= 2).unwrap();
    let messages = render_call(strategy.as_ref(), &session, 2).unwrap();
    assert_eq!(messages.len(), 2);
    assert!(
        messages[1].content.contains(";; turn 2\n"),
        "{}",
        messages[1].content
    );
    assert!(
        !messages[1].content.contains(";; turn 1\n"),
        "{}",
        messages[1].content
    );
}
