//! `recap init`: writes a commented example experiment file for `recap run --config`,
//! and beside it a small example corpus it runs on, so that the experiment runs
//! wherever it was written.

use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Where to write the experiment (`-`: print it). The example corpus goes into
    /// `sessions/` beside it.
    #[arg(value_name = "FILE", default_value = "experiment.toml")]
    file: PathBuf,
    /// Replace an existing experiment file (an existing example corpus is kept).
    #[arg(long)]
    force: bool,
}

/// The example corpus, beside the experiment file.
pub const EXAMPLE_CORPUS: &str = "sessions/example.jsonl";

/// Sessions of the bundled corpora the example holds: three PTC-Lisp agent runs and
/// three tool-calling (chat) ones.
const EXAMPLE_SESSIONS: [&str; 6] = [
    "explore-products",
    "long-30-turns",
    "recorded-feedback",
    "airline-change-flight",
    "swe-function-calling",
    "tool-errors-recovery",
];

const HANDWRITTEN: &str = include_str!("../../bench-data/handwritten.jsonl");
const CHAT_HANDWRITTEN: &str = include_str!("../../bench-data/chat-handwritten.jsonl");

/// The example corpus: the lines of [`EXAMPLE_SESSIONS`] from the bundled corpora.
pub fn example_corpus() -> String {
    let mut out = String::new();
    let id_of = |line: &str| {
        serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|v| v["id"].as_str().map(str::to_string))
    };
    for id in EXAMPLE_SESSIONS {
        if let Some(line) = HANDWRITTEN
            .lines()
            .chain(CHAT_HANDWRITTEN.lines())
            .find(|l| id_of(l).as_deref() == Some(id))
        {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The example. Every key `recap run --config` reads is here, those not set commented
/// out; `tests` below check that it parses, and still parses with them all set.
pub const TEMPLATE: &str = r#"# A recap experiment: `recap run --config experiment.toml` replays recorded agent
# sessions through the strategies below and writes a report.
# Every key is optional; a flag given on the command line overrides the key here (a
# list flag such as --strategy replaces the whole list). Paths are relative to this
# file's directory.

# Recorded sessions: JSON Lines files (one session per line, .gz too) or glob patterns.
# `recap init` put six example sessions into sessions/; add your own there, or name
# them here. `recap import` turns agent logs into sessions; `recap validate` checks
# them. A pattern that matches no file is an error, before anything runs.
corpora = ["sessions/*.jsonl"]

# ptc_runner's own history option, one strategy per value:
#   false                                      -> full-history (everything, uncompressed)
#   true                                       -> single-user-coalesced (one summary message)
#   { println_limit = N, tool_call_limit = M } -> single-user-coalesced with those limits
compress_history = [false, true, { println_limit = 5, tool_call_limit = 10 }]

# Strategies by name and options (`recap strategies` lists them all).
strategies = ["rolling-window:window=4", "observation-masking"]

# One strategy per setting: an inclusive range `a..b` or alternatives `a|b|c`.
sweeps = ["rolling-window:window=1..3"]

# Tokenizers to count with: o200k_base, cl100k_base, deepseek_v3.
tokenizers = ["o200k_base"]
# tokenizer_backend = "fast"        # or "reference" (identical counts, slower)

# Price of a cached prompt token relative to an uncached one.
cache_read_ratio = 0.1

# Where the reports go: every run writes a new directory here (run-0001, run-0002, …)
# with report.json/.csv/.md/.txt/.html, the charts, sessions.csv and calls.csv, so
# earlier runs are kept to compare with (`recap diff`).
out = "results"
# dump_prompts = false              # every exact prompt into the run's prompts/
# session_details = true            # false: no per-session records (huge corpora)

# Printed on stdout: table, json, csv or markdown.
# format = "table"
# jobs = 2                          # worker threads (default: every CPU)
# check_determinism = "opaque"      # every call rendered twice for plugins; "all": built-ins too

# Strategy plugins (shared libraries built against recap's ABI). With `options`, the
# plugin's strategy runs with them; without, it is only loaded, to be named in
# `strategies` or `sweeps`.
# plugin_dirs = ["plugins"]
# plugin_timeout = 30               # seconds per plugin call, or "none"
# plugin_isolation = "in-process"   # or "process": each plugin in worker processes
# [[plugins]]
# path = "plugins/libmy_strategy.so"
# options = { keep = 3 }
# isolation = "process"             # this plugin only (a third-party library, say)
"#;

pub fn run(args: Args) -> Result<ExitCode> {
    if args.file.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(TEMPLATE.as_bytes())?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.file.exists() && !args.force {
        bail!(
            "{} already exists; pass --force to replace it, or name another file",
            args.file.display()
        );
    }
    // Beside the file; a file in the current directory needs no `./` before its names.
    let dir = args
        .file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new(""));
    let corpus = write_example_corpus(dir)?;
    std::fs::write(&args.file, TEMPLATE)
        .with_context(|| format!("cannot write {}", args.file.display()))?;
    crate::say!(
        "wrote {} and {corpus}; run it with `recap run --config {}`, then edit it (put your sessions in {}/)",
        args.file.display(),
        args.file.display(),
        dir.join("sessions").display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Writes the example corpus under `dir` unless a file is already there (a user's
/// edits are never replaced); says which.
fn write_example_corpus(dir: &Path) -> Result<String> {
    let path = dir.join(EXAMPLE_CORPUS);
    if path.exists() {
        return Ok(format!("kept the existing {}", path.display()));
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let corpus = example_corpus();
    std::fs::write(&path, &corpus).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(format!(
        "{} ({} example sessions)",
        path.display(),
        corpus.lines().count()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::config;

    /// A directory holding what the template names.
    fn workspace() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("sessions")).unwrap();
        std::fs::write(tmp.path().join("sessions/a.jsonl"), "").unwrap();
        std::fs::create_dir_all(tmp.path().join("plugins")).unwrap();
        std::fs::write(tmp.path().join("plugins/libmy_strategy.so"), "").unwrap();
        tmp
    }

    #[test]
    fn the_template_parses_and_maps_compress_history() {
        let tmp = workspace();
        let e = config::parse(&tmp.path().join("experiment.toml"), TEMPLATE).unwrap();
        assert_eq!(
            e.strategies[..3],
            [
                "full-history",
                "single-user-coalesced",
                "single-user-coalesced:println_limit=5,tool_call_limit=10"
            ]
        );
        assert_eq!(e.corpora, [tmp.path().join("sessions/a.jsonl")]);
    }

    #[test]
    fn the_example_corpus_holds_every_session_it_names_and_they_are_valid() {
        let corpus = example_corpus();
        let entries = recap_core::corpus::read_all(Path::new(EXAMPLE_CORPUS), corpus.as_bytes());
        let ids: Vec<String> = entries
            .into_iter()
            .map(|e| e.session.expect("a valid session").id)
            .collect();
        assert_eq!(ids, EXAMPLE_SESSIONS);
        let forms: Vec<recap_core::Form> =
            recap_core::corpus::read_all(Path::new(EXAMPLE_CORPUS), corpus.as_bytes())
                .into_iter()
                .filter_map(|e| e.session.ok().map(|s| s.form))
                .collect();
        assert!(forms.contains(&recap_core::Form::Ptc) && forms.contains(&recap_core::Form::Chat));
    }

    #[test]
    fn the_template_speaks_to_a_user_not_of_the_project() {
        for word in ["bench-data", "seeds", "API-0", "SPEC", "../shared"] {
            assert!(!TEMPLATE.contains(word), "{word} in the template");
        }
    }

    #[test]
    fn every_commented_key_is_valid_and_every_key_is_documented() {
        let tmp = workspace();
        let all: String = TEMPLATE
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(rest)
                    if rest.starts_with("[[plugins]]")
                        || rest
                            .split_once(" = ")
                            .is_some_and(|(k, _)| !k.contains(' ') && !k.starts_with('{')) =>
                {
                    rest.to_string()
                }
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        let e = config::parse(&tmp.path().join("experiment.toml"), &all)
            .unwrap_or_else(|e| panic!("{e}\n{all}"));
        assert_eq!(e.plugin_runs.len(), 1);
        assert_eq!(e.format.as_deref(), Some("table"));
        assert_eq!(e.jobs, Some(2));
        for key in config::KEYS {
            assert!(
                all.lines().any(|l| l.starts_with(&format!("{key} = "))
                    || (key == "plugins" && l == "[[plugins]]")),
                "{key} is not in the template"
            );
        }
    }
}
