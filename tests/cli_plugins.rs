//! `recap plugins check`, `--plugin` / `--plugin-dir` on `recap render`, and `recap run
//! --keep-going` when a plugin fails to load.

use recap_testkit::cli::Run;
use recap_testkit::plugins as support;
use recap_testkit::recap;

use std::path::{Path, PathBuf};
use support::{fixture, sample};

fn text(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn handwritten() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-data/handwritten.jsonl")
}

#[test]
fn check_reports_name_version_abi_and_self_test() {
    let masking = sample("recap_ptc_output_masking");
    let aggressive = sample("recap_aggressive");
    let Run {
        code,
        stdout,
        stderr,
    } = recap!(&["plugins", "check", text(&masking), text(&aggressive)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // Each library's line, then the forms it renders and its self-test.
    let lines: Vec<&str> = stdout.lines().collect();
    let abi = format!("{}.{}", recap_abi::ABI_MAJOR, recap_abi::ABI_MINOR);
    for (head, forms, self_test) in [
        (
            format!("ok    ptc-output-masking 0.1.0 (ABI {abi})"),
            "        forms: ptc",
            "        self-test: passed (10 renders of ptc sessions, incremental sessions included)",
        ),
        (
            format!("ok    aggressive 0.1.0 (ABI {abi})"),
            "        forms: ptc, chat",
            "        self-test: passed (23 renders of ptc and chat sessions, incremental sessions included)",
        ),
    ] {
        let at = lines
            .iter()
            .position(|l| l.starts_with(&head))
            .unwrap_or_else(|| panic!("{head:?} missing from:\n{stdout}"));
        assert_eq!(
            lines.get(at + 1..at + 3),
            Some(&[forms, self_test][..]),
            "{stdout}"
        );
    }
    assert!(stdout.contains("options: window=10"), "{stdout}");
    assert!(
        stdout.contains("2 plugin libraries checked: 2 ok, 0 failed"),
        "{stdout}"
    );
}

#[test]
fn check_reports_a_plugin_built_against_abi_1_0_as_ptc_only() {
    let manifest = support::fixtures_manifest();
    let libs = support::build_cdylibs(&[
        "--manifest-path",
        text(&manifest),
        "-p",
        "recap-plugin-abi-1-0",
        "--lib",
    ]);
    let lib = &libs["recap_plugin_abi_1_0"];
    let Run {
        code,
        stdout,
        stderr,
    } = recap!(&["plugins", "check", text(lib)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("ok    frozen-digest 1.0.0 (ABI 1.0)"),
        "{stdout}"
    );
    assert!(stdout.contains("        forms: ptc\n"), "{stdout}");
    assert!(
        stdout.contains(
            "self-test: passed (10 renders of ptc sessions, incremental sessions included)"
        ),
        "{stdout}"
    );
}

#[test]
fn check_exits_1_and_says_what_is_wrong_with_each_failing_library() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("libjunk.so");
    std::fs::write(&junk, "not a library").unwrap();
    let good = sample("recap_aggressive");
    let Run { code, stdout, .. } = recap!(&[
        "plugins",
        "check",
        text(&good),
        text(&fixture("fx_wrong_abi")),
        text(&fixture("fx_panicking_render")),
        text(&fixture("fx_duplicate_name")),
        text(&junk),
    ]);
    assert_eq!(code, 1, "{stdout}");
    for needle in [
        "ok    aggressive",
        "FAIL  ",
        "wrong ABI version: the plugin speaks recap strategy ABI 2, this recap supports ABI 1",
        "the plugin panicked",
        "duplicate strategy name \"full-history\": already provided by built-in",
        "not a loadable shared library",
        "5 plugin libraries checked: 1 ok, 4 failed",
    ] {
        assert!(
            stdout.contains(needle),
            "{needle:?} missing from:\n{stdout}"
        );
    }
    assert!(stdout.contains(text(&junk)), "names the file: {stdout}");
}

#[test]
fn check_needs_something_to_check() {
    let Run { code, stderr, .. } = recap!(&["plugins", "check"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("nothing to check"), "{stderr}");
}

#[test]
fn render_uses_plugin_strategies_by_name() {
    let corpus = handwritten();
    let args = |extra: &[&str]| {
        let mut a = vec![
            "render",
            text(&corpus),
            "--session",
            "error-recovery",
            "--strategy",
            "ptc-output-masking:window=1",
            "--format",
            "json",
        ];
        a.extend_from_slice(extra);
        a.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        recap!(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };

    let Run { code, stderr, .. } = run(&[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unknown strategy \"ptc-output-masking\""),
        "{stderr}"
    );

    let masking = sample("recap_ptc_output_masking");
    let Run {
        code,
        stdout,
        stderr,
    } = run(&["--plugin", text(&masking)]);
    assert_eq!(code, 0, "{stderr}");
    let messages: Vec<serde_json::Value> = serde_json::from_str(&stdout).unwrap();
    assert!(messages.len() >= 4, "{stdout}");
    assert!(
        stdout.contains("omitted]"),
        "older outputs are masked: {stdout}"
    );

    // The same through a plugin directory.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&masking, dir.path().join("libmasking.so")).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
    let Run {
        code,
        stdout: from_dir,
        stderr,
    } = run(&["--plugin-dir", text(dir.path())]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(from_dir, stdout);
}

#[test]
fn a_plugin_that_fails_to_load_stops_render_with_the_reason() {
    let corpus = handwritten();
    let Run { code, stderr, .. } = recap!(&[
        "render",
        text(&corpus),
        "--session",
        "error-recovery",
        "--strategy",
        "full-history",
        "--plugin",
        text(&fixture("fx_bad_magic")),
        "--plugin",
        text(&sample("recap_aggressive")),
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("1 of 2 plugin libraries failed to load"),
        "{stderr}"
    );
    assert!(
        stderr.contains("libfx_bad_magic.so: invalid descriptor: bad magic number"),
        "{stderr}"
    );

    let Run { code, stderr, .. } = recap!(&[
        "render",
        text(&corpus),
        "--session",
        "x",
        "--strategy",
        "full-history",
        "--plugin-dir",
        "/nonexistent-dir",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--plugin-dir") && stderr.contains("/nonexistent-dir"),
        "{stderr}"
    );
}

#[test]
fn render_sends_chat_sessions_to_plugins_that_declare_the_chat_form() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-data/chat-handwritten.jsonl");
    let render = |spec: &str, lib: &Path| {
        recap!(&[
            "render",
            text(&corpus),
            "--session",
            "parallel-research",
            "--turn",
            "4",
            "--strategy",
            spec,
            "--plugin",
            text(lib),
            "--format",
            "json",
        ])
    };
    let aggressive = sample("recap_aggressive");
    let messages = |run: &Run| -> Vec<serde_json::Value> {
        assert_eq!(run.code, 0, "{}", run.stderr);
        serde_json::from_str(&run.stdout).unwrap()
    };
    let all = messages(&render("aggressive:turns=3", &aggressive));
    // Tool calls crossed the boundary both ways and print in the provider's shape.
    assert!(
        all.iter().any(|m| m["tool_calls"][0]["type"] == "function"),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|m| m["role"] == "tool" && m["tool_call_id"].is_string())
    );
    // The run's tokenizer reached the plugin as token counts: a budget drops turns.
    let trimmed = messages(&render("aggressive:turns=3,max_tokens=400", &aggressive));
    assert!(trimmed.len() < all.len(), "{trimmed:?}");
    assert_eq!(trimmed[..2], all[..2]);
    assert!(all.ends_with(&trimmed[2..]));

    let run = render("ptc-output-masking", &sample("recap_ptc_output_masking"));
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("ptc-output-masking renders ptc sessions only"),
        "{}",
        run.stderr
    );
}

#[test]
fn keep_going_runs_without_a_plugin_that_fails_to_load_and_says_so() {
    let corpus = handwritten();
    let bad = fixture("fx_bad_magic");
    let aggressive = sample("recap_aggressive");
    let run_args = |more: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = [
            "run",
            text(&corpus),
            "--strategy",
            "aggressive",
            "--strategy",
            "fx-bad-magic",
            "--plugin",
            text(&bad),
            "--plugin",
            text(&aggressive),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(more.iter().map(|s| s.to_string()));
        args
    };
    let recap_run = |more: &[&str]| {
        let args = run_args(more);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        recap!(&args)
    };

    // By default: nothing runs, and the error says why and how to go on.
    let Run {
        code,
        stdout,
        stderr,
    } = recap_run(&[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("1 of 2 plugin libraries failed to load (--keep-going runs without them)"),
        "{stderr}"
    );
    assert!(stderr.contains("bad magic number"), "{stderr}");

    // With --keep-going: everything else runs; stderr and the report's notes say what
    // was left out. Exit 1: a problem was found.
    let Run {
        code,
        stdout,
        stderr,
    } = recap_run(&["--keep-going"]);
    assert_eq!(code, 1, "{stderr}");
    for needle in [
        "warning: 1 of 2 plugin libraries failed to load; running without them (--keep-going):",
        "libfx_bad_magic.so: invalid descriptor: bad magic number",
        "note: strategy \"fx-bad-magic\" left out: no loaded plugin provides \"fx-bad-magic\"",
    ] {
        assert!(stderr.contains(needle), "{needle:?} missing: {stderr}");
    }
    assert!(stdout.contains("aggressive"), "{stdout}");
    assert!(!stdout.contains("fx-bad-magic"), "{stdout}");
    assert!(
        stdout.contains("plugin not loaded (--keep-going): ")
            && stdout.contains("libfx_bad_magic.so: invalid descriptor: bad magic number"),
        "the table's notes: {stdout}"
    );

    let json = recap_run(&["--keep-going", "--format", "json"]).json();
    let failures = &json["provenance"]["plugin_failures"];
    assert_eq!(failures.as_array().map(Vec::len), Some(1), "{json}");
    assert!(
        failures[0]["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("libfx_bad_magic.so")),
        "{failures}"
    );
    let rows: Vec<&str> = json["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter_map(|r| r["strategy"].as_str())
        .collect();
    assert_eq!(rows, ["full-history", "aggressive"], "{json}");
}

#[test]
fn a_plugin_loaded_but_not_run_is_a_warning_naming_it_and_its_strategy() {
    let aggressive = sample("recap_aggressive");
    let corpus = handwritten();
    let run = |strategy: &str| {
        recap!(&[
            "run",
            text(&corpus),
            "--plugin",
            text(&aggressive),
            "--strategy",
            strategy,
        ])
    };
    let left_out = run("full-history");
    assert_eq!(
        left_out.code, 0,
        "a warning, not a failure: {}",
        left_out.stderr
    );
    let warning = format!(
        "warning: plugin {} was loaded, but none of its strategies runs: it provides aggressive",
        aggressive.display()
    );
    assert!(left_out.stderr.contains(&warning), "{}", left_out.stderr);
    assert!(
        left_out
            .stderr
            .contains("add `--strategy aggressive` to run it"),
        "{}",
        left_out.stderr
    );
    let used = run("aggressive:turns=2");
    assert_eq!(used.code, 0, "{}", used.stderr);
    assert!(!used.stderr.contains("warning"), "{}", used.stderr);
}
