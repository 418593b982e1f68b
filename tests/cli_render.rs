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
        &["--turn", "5", "--format", "json"]
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
        &["--turn", "2"]
    ));
    assert_eq!(code, 0, "{stderr}");
    let first = stdout.lines().next().unwrap();
    assert!(first.starts_with("# session explore-products · call 2 (produced turn 2; its prompt holds 1 of 4 recorded turns, 5 left) · full-history · 4 messages, "), "{first}");
    assert!(first.ends_with(" prompt tokens (o200k_base)"), "{first}");
    for header in [
        "=== [0] SYSTEM (",
        "=== [1] USER (",
        "=== [2] ASSISTANT (",
        "=== [3] USER (",
    ] {
        assert!(stdout.contains(header), "{header} missing:\n{stdout}");
    }
    assert!(stdout.ends_with("Turns left: 5\n"), "{stdout}");
}

/// The prompt tokens `recap render` prints for each message and in all.
fn printed_tokens(text: &str) -> (u64, Vec<u64>) {
    let number = |s: &str| s.replace(',', "").parse::<u64>().unwrap();
    let total = text
        .lines()
        .next()
        .and_then(|l| l.rsplit_once(", ")?.1.split_once(" prompt tokens"))
        .map(|(n, _)| number(n))
        .unwrap();
    let each = text
        .lines()
        .filter(|l| l.starts_with("=== ["))
        .filter_map(|l| l.rsplit_once(" (")?.1.split_once(" token"))
        .map(|(n, _)| number(n))
        .collect();
    (total, each)
}

#[test]
fn several_strategies_print_one_after_the_other_with_their_tokens() {
    let corpus = handwritten();
    let c = corpus.to_str().unwrap();
    let args = [
        "render",
        c,
        "--session",
        "long-30-turns",
        "--turn",
        "20",
        "--strategy",
        "full-history",
        "--strategy",
        "ptc-runner",
    ];
    let Run {
        code,
        stdout,
        stderr,
    } = recap!(&args);
    assert_eq!(code, 0, "{stderr}");
    let parts: Vec<&str> = stdout.split("\n# session ").collect();
    assert_eq!(parts.len(), 2, "{stdout}");
    assert!(parts[1].contains("· ptc-runner ·"), "{stdout}");
    let s = session("long-30-turns");
    let tok = recap_harness::Tokenizer::get(
        recap_harness::Encoding::O200kBase,
        recap_harness::Backend::Fast,
    );
    let registry = recap_builtins::registry();
    for (part, name) in parts.iter().zip(["full-history", "ptc-runner"]) {
        let messages =
            recap_core::render_call(registry.build(name).unwrap().as_ref(), &s, 19).unwrap();
        let (total, each) = printed_tokens(part);
        assert_eq!(
            total,
            recap_harness::counting::prompt_tokens(&tok, &messages),
            "{name}"
        );
        assert_eq!(each.len(), messages.len(), "{name}");
        assert_eq!(
            total,
            3 + each.iter().sum::<u64>(),
            "{name}: the prompt's own 3 tokens"
        );
    }
    // JSON: one object per strategy.
    let Run { code, stdout, .. } = recap!(&[&args[..], &["--format", "json"]].concat());
    assert_eq!(code, 0);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["strategy"], "ptc-runner");
    assert!(
        lines[0]["prompt_tokens"].as_u64().unwrap() > lines[1]["prompt_tokens"].as_u64().unwrap()
    );
    assert!(lines[0]["messages"].is_array());
}

#[test]
fn render_and_inspect_mean_the_same_call_by_the_same_turn_number() {
    let corpus = handwritten();
    let c = corpus.to_str().unwrap();
    let render = recap!(&[
        "render",
        c,
        "--session",
        "error-recovery",
        "--turn",
        "3",
        "--strategy",
        "full-history",
        "--format",
        "json"
    ]);
    assert_eq!(render.code, 0, "{}", render.stderr);
    let rendered: Vec<Message> = serde_json::from_str(&render.stdout).unwrap();
    let inspect = recap!(&[
        "inspect",
        c,
        "--session",
        "error-recovery",
        "--turn",
        "3",
        "--strategy",
        "full-history"
    ]);
    assert_eq!(inspect.code, 0, "{}", inspect.stderr);
    assert!(
        inspect
            .stdout
            .contains("call 3 of 6: the prompt after 2 completed turns, which produced turn 3"),
        "{}",
        inspect.stdout
    );
    assert!(
        inspect.stdout.contains(&format!(
            "── sent by full-history: {} messages",
            rendered.len()
        )),
        "{}",
        inspect.stdout
    );
    // Both help texts say what K is, in the same words.
    for command in ["render", "inspect"] {
        let help = recap!(&[command, "--help"]).stdout;
        assert!(
            help.contains("The call that produced turn K")
                || help.contains("the call that produced it (1 = the first call"),
            "{command}: {help}"
        );
        assert!(
            help.contains("the prompt of call K holds turns 1..K-1"),
            "{command}: {help}"
        );
    }
    // The old flag says what to write instead.
    let old = recap!(&[
        "render",
        c,
        "--session",
        "error-recovery",
        "--turns",
        "2",
        "--strategy",
        "full-history"
    ]);
    assert_eq!(old.code, 2);
    assert!(old.stderr.contains("--turn 3"), "{}", old.stderr);
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
        stderr.contains("note:") && stderr.contains("--turn 30"),
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
        &["--turn", "6"]
    ));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--turn 6") && stderr.contains("1..=5"),
        "{stderr}"
    );
    let Run { code, stderr, .. } = recap!(&render_args(
        corpus.to_str().unwrap(),
        "single-shot",
        "full-history",
        &["--turn", "2"]
    ));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("max_turns 1") && stderr.contains("1..=1"),
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
            && stderr.contains(":2: turns[0].error (turn 1)"),
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
fn a_turn_below_one_is_explained_not_escaped() {
    let corpus = handwritten();
    let Run { code, stderr, .. } = recap!(&render_args(
        corpus.to_str().unwrap(),
        "long-30-turns",
        "full-history",
        &["--turn", "-1"]
    ));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("-1: turns are numbered from 1 (--turn 1 is the first call"),
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
            "--turn",
            "30",
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

#[test]
fn sessions_lists_id_form_turns_and_recorded_usage() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ptc = handwritten();
    let chat = root.join("bench-data/chat-handwritten.jsonl");
    let (p, c) = (ptc.to_str().unwrap(), chat.to_str().unwrap());
    let Run {
        code,
        stdout,
        stderr,
    } = recap!(&["sessions", p, c]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr, "20 sessions\n");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        [
            "corpus:line",
            "id",
            "form",
            "turns",
            "max_turns",
            "recorded",
            "usage"
        ]
    );
    assert_eq!(lines.len(), 21, "{stdout}");
    let row = |id: &str| -> Vec<&str> {
        lines
            .iter()
            .find(|l| l.split_whitespace().nth(1) == Some(id))
            .unwrap_or_else(|| panic!("{id}: {stdout}"))
            .split_whitespace()
            .collect()
    };
    assert_eq!(row("long-30-turns")[2..5], ["ptc", "30", "30"]);
    assert_eq!(row("zero-turns")[2..5], ["chat", "0", "-"]);
    let usage = row("usage-recorded");
    assert_eq!(usage[2..4], ["chat", "3"]);
    assert!(
        usage.join(" ").contains("input tokens over 3 calls"),
        "{usage:?}"
    );
    assert_eq!(row("explore-products")[5], "-", "no usage recorded");

    let json = recap!(&["sessions", c, "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let rows: Vec<serde_json::Value> = json
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 13);
    assert!(rows.iter().all(|r| r["form"] == "chat"));
    let recorded = rows.iter().find(|r| r["id"] == "usage-recorded").unwrap();
    assert_eq!(recorded["recorded_usage_calls"], 3);
    assert!(recorded["recorded_input_tokens"].as_u64().unwrap() > 0);

    // A session id that is not there points at the listing.
    let missing = recap!(&render_args(c, "nope", "full-history", &[]));
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("(13 in all; `recap sessions"),
        "{}",
        missing.stderr
    );
    // A file that cannot be read: exit 2.
    let none = recap!(&["sessions", "/nonexistent/x.jsonl"]);
    assert_eq!(none.code, 2, "{}", none.stderr);
    assert!(none.stderr.contains("cannot open"), "{}", none.stderr);
}
