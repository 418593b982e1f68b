//! `recap render` and `recap strategies`.

use recap_core::{CorpusReader, Message, Session};
use recap_testkit::cli::{Run, render_args};
use recap_testkit::recap;
use std::path::{Path, PathBuf};

fn handwritten() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-data/handwritten.jsonl")
}

fn session(id: &str) -> Session {
    CorpusReader::open(&handwritten())
        .expect("open bench-data")
        .filter_map(|e| e.session.ok())
        .find(|s| s.id == id)
        .expect("session in bench-data")
}

#[test]
fn json_output_is_the_exact_render() {
    let corpus = handwritten();
    let Run {
        code,
        stdout,
        stderr,
    } = recap!(&render_args(
        corpus.to_str().unwrap(),
        "error-recovery",
        "rolling-window:window=1",
        &["--turns", "4", "--format", "json"]
    ));
    assert_eq!(code, 0, "{stderr}");
    let got: Vec<Message> = serde_json::from_str(&stdout).expect("a JSON array of messages");
    let s = session("error-recovery");
    let strategy = recap_builtins::registry()
        .build("rolling-window:window=1")
        .unwrap();
    let expected = recap_core::render_call(strategy.as_ref(), &s, 4).unwrap();
    assert_eq!(got, expected);
}

#[test]
fn text_output_has_role_headers() {
    let corpus = handwritten();
    let Run {
        code,
        stdout,
        stderr,
    } = recap!(&render_args(
        corpus.to_str().unwrap(),
        "explore-products",
        "full-history",
        &["--turns", "1"]
    ));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("# session explore-products · call after 1 of 4 turns (5 left) · full-history · 4 messages"), "{stdout}");
    for header in [
        "=== [0] SYSTEM",
        "=== [1] USER",
        "=== [2] ASSISTANT",
        "=== [3] USER",
    ] {
        assert!(stdout.contains(header), "{header} missing:\n{stdout}");
    }
    assert!(stdout.ends_with("Turns left: 5\n"), "{stdout}");
}

#[test]
fn turns_default_to_all_and_clamp_with_a_note() {
    let corpus = handwritten();
    let c = corpus.to_str().unwrap();
    // explore-products: 4 turns of 6, so the call after all of them exists.
    let Run {
        code,
        stdout,
        stderr,
    } = recap!(&render_args(
        c,
        "explore-products",
        "single-user-coalesced",
        &["--format", "json"]
    ));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert!(stdout.contains("Turns left: 2"), "{stdout}");
    // long-30-turns used its whole budget: the last call is after 29 turns.
    let Run {
        code,
        stdout,
        stderr,
    } = recap!(&render_args(
        c,
        "long-30-turns",
        "single-user-coalesced",
        &["--format", "json"]
    ));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("note:") && stderr.contains("--turns 29"),
        "{stderr}"
    );
    assert!(stdout.contains("FINAL TURN"), "{stdout}");
}

#[test]
fn bad_turns_is_a_clear_error() {
    let corpus = handwritten();
    let Run { code, stderr, .. } = recap!(&render_args(
        corpus.to_str().unwrap(),
        "explore-products",
        "full-history",
        &["--turns", "5"]
    ));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--turns 5") && stderr.contains("0..=4"),
        "{stderr}"
    );
    let Run { code, stderr, .. } = recap!(&render_args(
        corpus.to_str().unwrap(),
        "single-shot",
        "full-history",
        &["--turns", "1"]
    ));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("max_turns 1") && stderr.contains("0..=0"),
        "{stderr}"
    );
}

#[test]
fn unknown_session_lists_available_ids() {
    let corpus = handwritten();
    let Run { code, stderr, .. } = recap!(&render_args(
        corpus.to_str().unwrap(),
        "nope",
        "full-history",
        &[]
    ));
    assert_eq!(code, 2);
    assert!(stderr.contains("no session \"nope\""), "{stderr}");
    assert!(
        stderr.contains("explore-products") && stderr.contains("single-shot"),
        "{stderr}"
    );
}

#[test]
fn invalid_session_and_bad_specs_and_missing_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"id":"ok","mission":"m","turns":[]}"#,
            "\n",
            r#"{"id":"bad","mission":"m","turns":[{"number":1,"program":"p","success":false}]}"#,
            "\n"
        ),
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let Run { code, stderr, .. } = recap!(&render_args(p, "bad", "full-history", &[]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("session \"bad\" is in the corpus but invalid")
            && stderr.contains(":2: turns[0].error"),
        "{stderr}"
    );

    let Run { code, stderr, .. } = recap!(&render_args(p, "ok", "rolling-window:window=0", &[]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("window") && stderr.contains("integer ≥ 1"),
        "{stderr}"
    );
    let Run { code, stderr, .. } =
        recap!(&["render", p, "--session", "ok", "--strategy", "no-such"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unknown strategy \"no-such\"") && stderr.contains("full-history"),
        "{stderr}"
    );

    let missing = dir.path().join("missing.jsonl");
    let Run { code, stderr, .. } = recap!(&render_args(
        missing.to_str().unwrap(),
        "ok",
        "full-history",
        &[]
    ));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("missing.jsonl") && stderr.contains("cannot open"),
        "{stderr}"
    );
}

#[test]
fn strategies_lists_every_builtin_with_options_and_defaults() {
    let Run {
        code,
        stdout,
        stderr,
    } = recap!(&["strategies"]);
    assert_eq!(code, 0, "{stderr}");
    for name in recap_builtins::SPEC_BUILTINS {
        assert!(
            stdout.contains(&format!("{name}  (built-in)")),
            "{name}:\n{stdout}"
        );
    }
    for option in ["println_limit=15", "tool_call_limit=20", "window=3"] {
        assert!(stdout.contains(option), "{option}:\n{stdout}");
    }
}

#[test]
fn every_default_recap_strategies_shows_is_accepted_as_an_option() {
    let listing = recap!(&["strategies"]).stdout;
    let mut registry = recap_builtins::registry();
    registry.set_counter(std::sync::Arc::new(recap_harness::Tokenizer::get(
        recap_harness::Encoding::O200kBase,
        recap_harness::Backend::Fast,
    )));
    let mut strategy: Option<String> = None;
    let mut checked = Vec::new();
    for line in listing.lines() {
        if !line.starts_with(' ') {
            strategy = line.split_once("  (").map(|(name, _)| name.to_string());
            continue;
        }
        // An option line: `    key=default  help`.
        let Some((name, option)) = strategy.as_deref().zip(
            line.strip_prefix("    ")
                .and_then(|rest| rest.split_once("  "))
                .map(|(kv, _)| kv)
                .filter(|kv| kv.contains('=') && !kv.contains(' ')),
        ) else {
            continue;
        };
        let spec = format!("{name}:{option}");
        if let Err(e) = registry.build(&spec) {
            panic!("`recap strategies` shows {option} for {name}, but {spec} is refused: {e}");
        }
        checked.push(spec);
    }
    assert!(
        checked.contains(&"ptc-trim:trigger_tokens=none".to_string()),
        "{checked:?}"
    );
    assert!(checked.len() >= 15, "{checked:?}");
    // And through the command line.
    let corpus = handwritten();
    let Run { code, stderr, .. } = recap!(&render_args(
        corpus.to_str().unwrap(),
        "long-30-turns",
        "ptc-trim:trigger_tokens=none,trigger_turns=4",
        &[]
    ));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn turning_off_the_only_trim_trigger_is_refused() {
    let corpus = handwritten();
    let Run { code, stderr, .. } = recap!(&render_args(
        corpus.to_str().unwrap(),
        "long-30-turns",
        "ptc-trim:trigger_turns=none",
        &[]
    ));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("nothing would trigger the trim"),
        "{stderr}"
    );
}

#[test]
fn a_negative_turns_value_is_explained_not_escaped() {
    let corpus = handwritten();
    let Run { code, stderr, .. } = recap!(&render_args(
        corpus.to_str().unwrap(),
        "long-30-turns",
        "full-history",
        &["--turns", "-1"]
    ));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("-1 is negative; K counts the turns completed before the call"),
        "{stderr}"
    );
    assert!(!stderr.contains("'-- -1'"), "{stderr}");
}

#[test]
fn a_closed_stdout_ends_render_quietly() {
    let corpus = handwritten();
    // As `recap render … | head -1` once head has gone: the pipe has no reader.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = recap_testkit::recap_command!()
        .args([
            "render",
            corpus.to_str().unwrap(),
            "--session",
            "long-30-turns",
            "--turns",
            "29",
            "--strategy",
            "full-history",
        ])
        .stdout(writer)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr, "", "no `Broken pipe` error");
}
