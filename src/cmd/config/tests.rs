use super::*;

fn parse_in(dir: &Path, text: &str) -> Result<Experiment, ConfigError> {
    parse(&dir.join("exp.toml"), text)
}

fn corpus_dir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("data")).unwrap();
    for f in ["b.jsonl", "a.jsonl", "notes.txt"] {
        std::fs::write(tmp.path().join("data").join(f), "").unwrap();
    }
    tmp
}

#[test]
fn every_key_is_read_and_paths_are_relative_to_the_file() {
    let tmp = corpus_dir();
    let e = parse_in(
        tmp.path(),
        r#"
corpora = ["data/*.jsonl"]
strategies = ["rolling-window:window=3"]
sweeps = "rolling-window:window=1..2"
compress_history = [false, true, { println_limit = 5, tool_call_limit = 7 }]
tokenizers = ["cl100k_base"]
tokenizer_backend = "reference"
cache_read_ratio = 0
jobs = 3
session_details = false
out = "results/one"
format = "markdown"
dump_prompts = true
plugin_timeout = "none"
"#,
    )
    .unwrap();
    let d = tmp.path().join("data");
    assert_eq!(e.corpora, [d.join("a.jsonl"), d.join("b.jsonl")]);
    assert_eq!(
        e.strategies,
        [
            "full-history",
            "single-user-coalesced",
            "single-user-coalesced:println_limit=5,tool_call_limit=7",
            "rolling-window:window=3"
        ]
    );
    assert_eq!(e.sweeps, ["rolling-window:window=1..2"]);
    let origins: Vec<(&str, &str)> = e
        .origins
        .iter()
        .map(|o| (o.key, o.value.as_str()))
        .collect();
    assert_eq!(
        origins,
        [
            ("strategies", "rolling-window:window=3"),
            ("sweeps", "rolling-window:window=1..2")
        ]
    );
    assert!(
        e.origins[1].at.ends_with("exp.toml:4:10: `sweeps`"),
        "{}",
        e.origins[1].at
    );
    assert_eq!(e.tokenizers, ["cl100k_base"]);
    assert_eq!(e.tokenizer_backend.as_deref(), Some("reference"));
    assert_eq!(e.cache_read_ratio, Some(0.0));
    assert_eq!(e.jobs, Some(3));
    assert_eq!(e.session_details, Some(false));
    assert_eq!(e.out, Some(tmp.path().join("results/one")));
    assert_eq!(e.dump_prompts, Some(true));
    assert_eq!(e.format.as_deref(), Some("markdown"));
    assert_eq!(e.plugin_timeout.as_deref(), Some("none"));
}

#[test]
fn an_unknown_key_names_file_line_and_the_valid_keys() {
    let tmp = corpus_dir();
    let e = parse_in(tmp.path(), "jobs = 2\n\nstrategy = [\"full-history\"]\n").unwrap_err();
    assert_eq!((e.line, e.column), (3, 1));
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("{}:3:1: ", tmp.path().join("exp.toml").display())),
        "{text}"
    );
    assert!(text.contains("unknown key `strategy`"), "{text}");
    assert!(text.contains("did you mean `strategies`?"), "{text}");
    assert!(text.contains(&KEYS.join(", ")), "{text}");
}

#[test]
fn a_python_key_is_refused_and_names_the_python_package() {
    let e = parse(
        Path::new("/x/e.toml"),
        "jobs = 2\npython = [\"m:KeepLast(turns=3)\"]\n",
    )
    .expect_err("the binary runs no Python");
    assert_eq!((e.line, e.key.as_deref()), (2, Some("python")));
    assert!(e.message.contains("python -m recap_replay run"), "{e}");
}

#[test]
fn a_bad_value_names_its_key_and_what_was_expected() {
    let tmp = corpus_dir();
    let cases: [(&str, usize, &str, &str); 9] = [
        ("jobs = \"two\"", 1, "jobs", "expected an integer"),
        ("jobs = 0", 1, "jobs", "from 1 to 65535, got 0"),
        (
            "\ncache_read_ratio = 1.5",
            2,
            "cache_read_ratio",
            "between 0 and 1, got 1.5",
        ),
        (
            "format = \"html\"",
            1,
            "format",
            "not one of: table, json, csv, markdown",
        ),
        (
            "tokenizers = [\"o200k_base\", \"gpt2\"]",
            1,
            "tokenizers",
            "\"gpt2\" is not one of",
        ),
        (
            "compress_history = \"yes\"",
            1,
            "compress_history",
            "expected true, false or {",
        ),
        (
            "compress_history = { println_limit = 0 }",
            1,
            "compress_history.println_limit",
            "positive integer",
        ),
        (
            "dump_prompts = 1",
            1,
            "dump_prompts",
            "expected true or false, got an integer",
        ),
        (
            "\nforce = true",
            2,
            "force",
            "each writes a new directory under `out` (run-0001",
        ),
    ];
    for (text, line, key, wanted) in cases {
        let e = parse_in(tmp.path(), text).unwrap_err();
        assert_eq!(e.line, line, "{text}: {e}");
        assert_eq!(e.key.as_deref(), Some(key), "{text}: {e}");
        assert!(e.to_string().contains(wanted), "{text}: {e}");
    }
    let e = parse_in(tmp.path(), "compress_history = { window = 2 }").unwrap_err();
    assert!(e.to_string().contains("unknown key `compress_history.window`; valid keys of `compress_history`: println_limit, tool_call_limit"), "{e}");
}

#[test]
fn isolation_is_read_per_plugin_and_for_the_file() {
    let tmp = corpus_dir();
    let e = parse_in(
        tmp.path(),
        "plugin_isolation = \"process\"\n[[plugins]]\npath = \"data/a.jsonl\"\nisolation = \"in-process\"\n[[plugins]]\npath = \"data/b.jsonl\"\n",
    )
    .unwrap();
    assert_eq!(e.plugin_isolation, Some(IsolationMode::Process));
    assert_eq!(
        e.isolation_of.values().collect::<Vec<_>>(),
        [&IsolationMode::InProcess],
        "only the plugin that says so"
    );
    let e = parse_in(tmp.path(), "plugin_isolation = \"thread\"").unwrap_err();
    assert_eq!((e.line, e.key.as_deref()), (1, Some("plugin_isolation")));
    let e = parse_in(
        tmp.path(),
        "[[plugins]]\npath = \"data/a.jsonl\"\nisolation = true\n",
    )
    .unwrap_err();
    assert_eq!(
        (e.line, e.key.as_deref()),
        (3, Some("plugins[0].isolation"))
    );
    assert!(e.message.contains("got a boolean"), "{e}");
}

#[test]
fn missing_corpora_and_plugins_fail_with_their_line() {
    let tmp = corpus_dir();
    let e = parse_in(
        tmp.path(),
        "corpora = [\"data/*.jsonl\",\n  \"nowhere/*.jsonl\"]",
    )
    .unwrap_err();
    assert_eq!((e.line, e.key.as_deref()), (2, Some("corpora")));
    assert!(e.message.contains("matches no corpus file"), "{e}");
    let e = parse_in(tmp.path(), "corpora = \"data/c.jsonl\"").unwrap_err();
    assert!(
        e.message
            .contains("\"data/c.jsonl\" matches no corpus file"),
        "{e}"
    );
    let e = parse_in(tmp.path(), "[[plugins]]\npath = \"libnone.so\"\n").unwrap_err();
    assert_eq!((e.line, e.key.as_deref()), (2, Some("plugins[0].path")));
    assert!(e.message.contains("plugin library not found"), "{e}");
    let e = parse_in(tmp.path(), "[[plugins]]\noptions = { a = 1 }\n").unwrap_err();
    assert!(e.message.contains("missing `path`"), "{e}");
    let e = parse_in(
        tmp.path(),
        "[[plugins]]\npath = \"data/a.jsonl\"\nwhere = 1\n",
    )
    .unwrap_err();
    assert_eq!(e.line, 3);
    assert!(
        e.message.contains("valid keys of `plugins`: path, options"),
        "{e}"
    );
}

#[test]
fn plugin_options_become_a_strategy_spec_and_bad_ones_are_refused() {
    let tmp = corpus_dir();
    let e = parse_in(
        tmp.path(),
        "[[plugins]]\npath = \"data/a.jsonl\"\noptions = { keep = 3, tools = [\"a\", \"b\"], on = true }\n[[plugins]]\npath = \"data/b.jsonl\"\n",
    )
    .unwrap();
    assert_eq!(e.plugins.len(), 2);
    assert_eq!(e.plugin_runs.len(), 1);
    assert!(
        e.plugin_runs[0]
            .origin
            .ends_with("exp.toml:3:11: `plugins[0].options`"),
        "{}",
        e.plugin_runs[0].origin
    );
    assert_eq!(
        e.plugin_runs[0].options,
        [
            ("keep".into(), "3".into()),
            ("tools".into(), "a|b".into()),
            ("on".into(), "true".into())
        ]
    );
    let e = parse_in(
        tmp.path(),
        "[[plugins]]\npath = \"data/a.jsonl\"\noptions = { x = \"a,b\" }\n",
    )
    .unwrap_err();
    assert_eq!(e.key.as_deref(), Some("plugins[0].options.x"));
}

#[test]
fn toml_syntax_errors_have_a_line_too() {
    let tmp = corpus_dir();
    let e = parse_in(tmp.path(), "jobs = 2\nout = \"x\n").unwrap_err();
    assert_eq!(e.line, 2, "{e}");
    assert!(e.key.is_none());
    let e = parse_in(tmp.path(), "jobs = 2\njobs = 3\n").unwrap_err();
    assert_eq!((e.line, e.key.as_deref()), (2, Some("jobs")), "{e}");
    assert!(e.message.contains("duplicate key"), "{e}");
}

#[test]
fn compress_history_follows_ptc_runner() {
    assert_eq!(
        compress_history_spec(Some(true), &[]),
        "single-user-coalesced"
    );
    assert_eq!(compress_history_spec(Some(false), &[]), "full-history");
    assert_eq!(
        compress_history_spec(Some(true), &[("println_limit", 3)]),
        "single-user-coalesced:println_limit=3"
    );
}

#[test]
fn line_and_column_count_characters() {
    assert_eq!(line_column("a\nbé = 1", 5), (2, 3));
    assert_eq!(line_column("", 0), (1, 1));
}
