//! `recap init`: writes a commented example experiment file for `recap run --config`.

use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Where to write the example (`-`: print it).
    #[arg(value_name = "FILE", default_value = "experiment.toml")]
    file: PathBuf,
    /// Replace an existing file.
    #[arg(long)]
    force: bool,
}

/// The example. Every key `recap run --config` reads is here, those not set commented
/// out; `tests` below check that it parses, and still parses with them all set.
pub const TEMPLATE: &str = r#"# A recap experiment: `recap run --config experiment.toml`.
# Every key is optional; a flag given on the command line overrides the key here (a
# list flag such as --strategy replaces the whole list). Paths are relative to this
# file's directory. docs/experiments.md describes every key.

# Corpus files or glob patterns (JSON Lines, optionally .gz). A pattern that matches
# nothing is an error, before anything runs.
corpora = ["bench-data/*.jsonl"]

# The seeds' history option (API-001..003), one strategy per value:
#   true                                      -> single-user-coalesced (defaults 15 / 20)
#   false                                     -> full-history
#   { println_limit = N, tool_call_limit = M } -> single-user-coalesced:println_limit=N,tool_call_limit=M
compress_history = [false, true, { println_limit = 5, tool_call_limit = 10 }]

# Strategy specs (`recap strategies` lists them with their options).
strategies = ["rolling-window:window=4", "observation-masking"]

# One strategy per setting: an inclusive range `a..b` or alternatives `a|b|c`.
sweeps = ["rolling-window:window=1..3"]

# Tokenizers to count with: o200k_base, cl100k_base, deepseek_v3.
tokenizers = ["o200k_base"]
# tokenizer_backend = "fast"        # or "reference" (identical counts, slower)

# Price of a cached prompt token relative to an uncached one.
cache_read_ratio = 0.1

# Where the report goes: report.json/.csv/.md/.txt/.html, the charts, sessions.csv and
# calls.csv. A directory holding files is refused unless `force = true`.
out = "results/experiment"
# force = false
# dump_prompts = false              # every exact prompt into out/prompts/
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
    std::fs::write(&args.file, TEMPLATE)
        .with_context(|| format!("cannot write {}", args.file.display()))?;
    crate::say!(
        "wrote {}: edit it, then `recap run --config {}`",
        args.file.display(),
        args.file.display()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::config;

    /// A directory holding what the template names.
    fn workspace() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("bench-data")).unwrap();
        std::fs::write(tmp.path().join("bench-data/a.jsonl"), "").unwrap();
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
        assert_eq!(e.corpora, [tmp.path().join("bench-data/a.jsonl")]);
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
