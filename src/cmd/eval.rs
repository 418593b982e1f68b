//! `recap eval`: quality, not just tokens. Replays a seeded sample of recorded calls
//! through strategies and asks a model at an OpenAI-compatible endpoint what it would do
//! next (next-action agreement) and what it still knows (probe QA), with `full-history`
//! as the control, every answer cached (docs/evaluation.md).

use anyhow::{Context, Result, bail};
use recap_core::{CorpusReader, Registry, Session, Strategy, TokenCounter};
use recap_eval::pricing::Price;
use recap_eval::{EvalOptions, EvalReport, evaluate};
use recap_harness::{Backend, Encoding, Tokenizer};
use recap_llm::backoff::Backoff;
use recap_llm::limits::RateLimits;
use recap_llm::{ApiKey, Cache, Client, ClientConfig, Endpoint, Sampling};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for the terminal.
    Table,
    /// The `recap-eval/1` schema (docs/evaluation.md).
    Json,
    Markdown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MeasureArg {
    /// Does the model do what the recorded agent did next?
    NextAction,
    /// Can the model still answer questions about facts of the history?
    Probes,
}

#[derive(clap::Args)]
pub struct Args {
    /// Corpus files (JSON Lines). Default: every bench-data/*.jsonl of the current
    /// directory.
    #[arg(value_name = "CORPUS")]
    corpora: Vec<PathBuf>,
    /// The model server's OpenAI-compatible base URL (e.g. http://127.0.0.1:8000/v1), or
    /// its full /chat/completions URL. Required: without it recap stays offline.
    #[arg(long, value_name = "URL")]
    endpoint: Option<String>,
    /// The model to ask (the `model` field of every request).
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// The environment variable holding the API key (sent as a Bearer token, never
    /// printed). Leave out for local servers that need none.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// Strategy spec to measure. Repeatable. `full-history` is always measured as the
    /// control. Default: every registered strategy, `llm-summary` included.
    #[arg(long = "strategy", value_name = "SPEC")]
    strategies: Vec<String>,
    /// Calls to sample, stratified by position in the session (all when fewer).
    #[arg(long, default_value_t = 100, value_name = "N")]
    sample: usize,
    /// Seed of the sample, the probes and the bootstrap.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Measures to take. Repeatable. Default: both.
    #[arg(long = "measure", value_enum, value_name = "MEASURE")]
    measures: Vec<MeasureArg>,
    /// Probe questions per sampled call.
    #[arg(long, default_value_t = 2, value_name = "N")]
    probes: usize,
    /// Also grade probe answers with a judge prompt (one more request per answer).
    #[arg(long)]
    judge: bool,
    /// The response cache (SQLite). Reruns are free; an interrupted run resumes.
    #[arg(long, default_value = "recap-eval-cache.sqlite", value_name = "FILE")]
    cache: PathBuf,
    /// Requests in flight at most.
    #[arg(long, default_value_t = 4, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    concurrency: u16,
    /// Requests per minute at most.
    #[arg(long, value_name = "N")]
    requests_per_minute: Option<u32>,
    /// Tokens per minute at most (prompt estimate plus --max-tokens per request).
    #[arg(long, value_name = "N")]
    tokens_per_minute: Option<u64>,
    /// Seconds one attempt may take.
    #[arg(long, default_value_t = 120.0, value_name = "SECONDS")]
    timeout: f64,
    /// Retries after a 429, 408, 5xx, timeout or dropped connection.
    #[arg(long, default_value_t = 5, value_name = "N")]
    retries: u32,
    /// Completion tokens per answer at most.
    #[arg(long, default_value_t = 512, value_name = "N")]
    max_tokens: u32,
    #[arg(long, default_value_t = 0.0)]
    temperature: f64,
    /// A model's price: MODEL=IN/OUT in dollars per million tokens. Repeatable.
    #[arg(long = "price", value_name = "MODEL=IN/OUT")]
    prices: Vec<Price>,
    /// Bootstrap resamples for the confidence intervals.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    bootstrap: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Write the report to FILE (whole, or not at all) instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// The tokenizer of prompt tokens and token budgets.
    #[arg(long, value_name = "NAME", default_value = "o200k_base", value_parser = ["o200k_base", "cl100k_base", "deepseek_v3"])]
    tokenizer: String,
    /// Ask only about the sampled calls of shard I of N (0 ≤ I < N), the sessions
    /// `recap run --shard` gives it; each shard keeps its own --cache (docs/scale.md).
    #[arg(long, value_name = "I/N")]
    shard: Option<recap_harness::Shard>,
    /// First copy into --cache every answer of FILE it lacks (another shard's cache;
    /// checked row by row; where both hold a request, --cache's answer stays).
    /// Repeatable. Without --endpoint, recap merges and stops.
    #[arg(long = "merge-cache", value_name = "FILE")]
    merge_caches: Vec<PathBuf>,
    #[command(flatten)]
    plugins: super::plugins::PluginArgs,
}

/// What to say when no endpoint is given.
const NEEDS_ENDPOINT: &str = "recap eval asks a model, so it needs one: pass --endpoint URL \
(an OpenAI-compatible server: http://127.0.0.1:8000/v1 for vLLM or llama.cpp's server, \
http://127.0.0.1:11434/v1 for Ollama, https://api.openai.com/v1 with --api-key-env \
OPENAI_API_KEY) and --model NAME; see docs/evaluation.md";

/// Copies the answers of each `--merge-cache` file into `cache`, saying what each gave.
fn merge_caches(cache: &Cache, from: &[PathBuf]) -> Result<()> {
    for other in from {
        let m = cache
            .merge_from(other)
            .with_context(|| format!("--merge-cache {}", other.display()))?;
        crate::say!(
            "merged {} into {}: {} answers added, {} already held{}",
            other.display(),
            cache.path().display(),
            m.added,
            m.held,
            if m.differing > 0 {
                format!(
                    ", {} held with another answer (kept as {} has it)",
                    m.differing,
                    cache.path().display()
                )
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

pub fn run(args: Args) -> Result<ExitCode> {
    let Some(endpoint_url) = args.endpoint.clone() else {
        if !args.merge_caches.is_empty() {
            merge_caches(&Cache::open(&args.cache)?, &args.merge_caches)?;
            return Ok(ExitCode::SUCCESS);
        }
        bail!("{NEEDS_ENDPOINT}");
    };
    let Some(model) = args.model.clone() else {
        bail!(
            "--model NAME is missing: the model to ask at {endpoint_url} (see docs/evaluation.md)"
        );
    };
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        bail!(
            "--timeout {}: expected a positive number of seconds",
            args.timeout
        );
    }
    let api_key = match &args.api_key_env {
        Some(var) => Some(ApiKey::from_env(var)?),
        None => None,
    };
    let encoding: Encoding = args
        .tokenizer
        .parse()
        .with_context(|| format!("--tokenizer {:?}", args.tokenizer))?;
    let counter: Arc<dyn TokenCounter> = Arc::new(Tokenizer::get(encoding, Backend::Fast));
    let client = Client::new(ClientConfig {
        endpoint: endpoint_url,
        api_key,
        timeout: Duration::from_secs_f64(args.timeout),
        retries: args.retries,
        backoff: Backoff::default(),
        concurrency: usize::from(args.concurrency),
        limits: RateLimits {
            requests_per_minute: args.requests_per_minute,
            tokens_per_minute: args.tokens_per_minute,
        },
    })?;
    let cache = Cache::open(&args.cache)?;
    merge_caches(&cache, &args.merge_caches)?;
    let endpoint = Arc::new(Endpoint::new(client, cache, Arc::clone(&counter)));

    let mut registry: Registry = args.plugins.registry()?;
    registry.set_counter(Arc::clone(&counter));
    recap_llm_summary::register(&mut registry, Arc::clone(&endpoint), model.clone())
        .context("registering llm-summary")?;
    let strategies = strategies(&args, &registry)?;
    let corpora = if args.corpora.is_empty() {
        super::run::default_corpora()?
    } else {
        args.corpora.clone()
    };
    let (sessions, rejected) = load(&corpora)?;

    let measures = if args.measures.is_empty() {
        vec![MeasureArg::NextAction, MeasureArg::Probes]
    } else {
        args.measures.clone()
    };
    let probes = measures.contains(&MeasureArg::Probes) && args.probes > 0;
    let options = EvalOptions {
        sample: args.sample,
        seed: args.seed,
        next_action: measures.contains(&MeasureArg::NextAction),
        probes,
        probes_per_call: args.probes,
        judge: args.judge && probes,
        resamples: args.bootstrap,
        sampling: Sampling {
            model,
            max_tokens: args.max_tokens,
            temperature: args.temperature,
        },
        threads: usize::from(args.concurrency),
        shard: args.shard,
    };
    let evaluated = evaluate(
        &sessions,
        &strategies,
        &endpoint,
        counter.as_ref(),
        &options,
    );
    if let Err(e @ recap_eval::EvalError::EmptyShard { .. }) = &evaluated {
        crate::say!("{e}");
        return Ok(ExitCode::SUCCESS);
    }
    let mut report: EvalReport = evaluated.with_context(|| {
        format!(
            "evaluation stopped; nothing was written, and the answers received so far are \
                 kept in {}, so running the same command again resumes",
            args.cache.display()
        )
    })?;
    report.price(&args.prices);
    if rejected > 0 {
        report.notes.push(format!(
            "{rejected} session(s) of the corpora were rejected (see `recap validate`) and not evaluated"
        ));
    }
    let text = match args.format {
        Format::Table => report.to_table(),
        Format::Json => report.to_json(),
        Format::Markdown => report.to_markdown(),
    };
    match &args.out {
        Some(path) => write_whole(path, &text)?,
        None => {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(if report.requests.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `full-history` first (the control), then each `--strategy` once, or every registered
/// strategy.
fn strategies(args: &Args, registry: &Registry) -> Result<Vec<Arc<dyn Strategy>>> {
    let specs: Vec<String> = if args.strategies.is_empty() {
        registry.infos().map(|i| i.name.clone()).collect()
    } else {
        args.strategies.clone()
    };
    let mut out: Vec<Arc<dyn Strategy>> = vec![
        registry
            .build(recap_builtins::SPEC_BUILTINS[0])
            .context("the control strategy full-history")?,
    ];
    for spec in specs {
        let s = registry
            .build(&spec)
            .with_context(|| format!("--strategy {spec:?}"))?;
        if !out.iter().any(|o| o.spec() == s.spec()) {
            out.push(s);
        }
    }
    Ok(out)
}

/// Every accepted session of the corpora, in order, and how many were rejected.
fn load(corpora: &[PathBuf]) -> Result<(Vec<Session>, usize)> {
    let mut sessions = Vec::new();
    let mut rejected = 0;
    for path in corpora {
        let reader =
            CorpusReader::open(path).with_context(|| format!("corpus {}", path.display()))?;
        for entry in reader {
            match entry.session {
                Ok(s) => sessions.push(s),
                Err(_) => rejected += 1,
            }
        }
    }
    Ok((sessions, rejected))
}

/// Writes `text` to `path` through a temporary file renamed into place: a reader never
/// sees half a report, and a failed run leaves nothing.
fn write_whole(path: &Path, text: &str) -> Result<()> {
    let name = path
        .file_name()
        .with_context(|| format!("--out {}: not a file name", path.display()))?;
    let tmp = path.with_file_name(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    Ok(())
}
