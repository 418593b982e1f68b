//! The replay engine: every session × strategy × call, rendered, checked and counted.
//!
//! Sessions stream from the corpora (one parsed session per worker in flight) and are
//! processed in parallel on a local rayon pool; results are folded strictly in input
//! order (corpus order, then line order) through a small reorder buffer, so every
//! number in the report — floating point included — is the same whatever the job count.
//! Only the `render_ns*` timing fields vary between runs.

use crate::aggregate::Aggregator;
use crate::counting::{CallDiff, CallTokens, RoleTokens, SegmentCounts, TokenMemory, count_call};
use crate::facts::{FactLines, FactMatcher, Facts};
use crate::report::Report;
use crate::tokenizer::{Backend, Tokenizer};
use recap_core::invariants::{CheckContext, Violation};
use recap_core::{
    CorpusReader, Entry, Invariant, Message, RejectedSession, RenderError, RenderRequest, Session,
    SessionState, Strategy,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Read};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Checks one render against the declared invariants (normally
/// `recap_core::invariants::check`).
pub type Checker = fn(&[Invariant], &CheckContext<'_>) -> Vec<Violation>;

/// One strategy of a run.
#[derive(Clone)]
pub struct StrategyEntry {
    pub strategy: Arc<dyn Strategy>,
    /// `strategy.spec()`, cached: the strategy's name in reports.
    pub name: String,
    /// Run only because savings need the baseline; not asked for.
    pub implicit: bool,
    /// The `--sweep` spec this setting was expanded from.
    pub sweep: Option<String>,
}

impl StrategyEntry {
    pub fn new(strategy: Arc<dyn Strategy>) -> Self {
        StrategyEntry {
            name: strategy.spec(),
            strategy,
            implicit: false,
            sweep: None,
        }
    }

    /// A sweep setting. It is named by the setting's own spec (`rolling-window:window=3`)
    /// rather than the strategy's canonical one, which may omit default options, so
    /// every point of a sweep says where it lies.
    pub fn from_sweep(strategy: Arc<dyn Strategy>, sweep: &str, setting: &str) -> Self {
        StrategyEntry {
            name: setting.to_string(),
            strategy,
            implicit: false,
            sweep: Some(sweep.to_string()),
        }
    }
}

/// What to run and how.
#[derive(Clone)]
pub struct RunConfig {
    /// In report order; contains the baseline (see [`RunConfig::new`]).
    pub strategies: Vec<StrategyEntry>,
    /// Index of `full-history` in `strategies`.
    pub baseline: usize,
    pub tokenizers: Vec<Tokenizer>,
    pub cache_read_ratio: f64,
    /// Worker threads (≥ 1).
    pub jobs: usize,
    pub checker: Checker,
    /// Produce the exact prompts of every call for `--dump-prompts`.
    pub dump_prompts: bool,
    /// Keep one record per session and run in the report (JSON `session_details`).
    pub session_details: bool,
    /// How many examples of violations / render errors a run keeps.
    pub examples: usize,
}

/// Errors of the harness itself (bad configuration, a failed write). Bad input is
/// never one: it is reported in the run's `rejected` list.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("no strategies to run")]
    NoStrategies,
    #[error("no tokenizers to count with")]
    NoTokenizers,
    #[error("tokenizers must share one backend (got {0} and {1})")]
    MixedBackends(Backend, Backend),
    #[error("the cache read ratio must be a number between 0 and 1, got {0}")]
    CacheReadRatio(f64),
    #[error("strategy {0:?} is listed twice")]
    DuplicateStrategy(String),
    #[error("could not start {jobs} worker threads: {message}")]
    Pool { jobs: usize, message: String },
    #[error("writing prompt dump: {0}")]
    Dump(#[source] io::Error),
}

impl RunConfig {
    /// A run of `strategies` plus `baseline` (full-history), added as an implicit run
    /// when no strategy has the same spec; with defaults for the rest.
    pub fn new(
        mut strategies: Vec<StrategyEntry>,
        baseline: Arc<dyn Strategy>,
        tokenizers: Vec<Tokenizer>,
    ) -> Result<RunConfig, HarnessError> {
        if strategies.is_empty() {
            return Err(HarnessError::NoStrategies);
        }
        if tokenizers.is_empty() {
            return Err(HarnessError::NoTokenizers);
        }
        if let Some(w) = tokenizers
            .windows(2)
            .find(|w| w[0].backend() != w[1].backend())
        {
            return Err(HarnessError::MixedBackends(w[0].backend(), w[1].backend()));
        }
        let mut seen = std::collections::BTreeSet::new();
        for s in &strategies {
            if !seen.insert(s.name.clone()) {
                return Err(HarnessError::DuplicateStrategy(s.name.clone()));
            }
        }
        let baseline_name = baseline.spec();
        let baseline = match strategies
            .iter()
            .position(|s| s.strategy.spec() == baseline_name)
        {
            Some(i) => i,
            None => {
                // First, so the reference row leads each table.
                let mut entry = StrategyEntry::new(baseline);
                entry.implicit = true;
                strategies.insert(0, entry);
                0
            }
        };
        Ok(RunConfig {
            strategies,
            baseline,
            tokenizers,
            cache_read_ratio: 0.1,
            jobs: 1,
            checker: recap_core::invariants::check,
            dump_prompts: false,
            session_details: true,
            examples: 5,
        })
    }

    pub fn validate(&self) -> Result<(), HarnessError> {
        if !(0.0..=1.0).contains(&self.cache_read_ratio) {
            return Err(HarnessError::CacheReadRatio(self.cache_read_ratio));
        }
        Ok(())
    }
}

/// A rendered call's exact prompt, for `--dump-prompts`: one JSON line.
#[derive(Debug, Clone, Serialize)]
pub struct PromptDump {
    pub corpus: String,
    pub session: String,
    pub call: usize,
    pub strategy: String,
    /// Prompt tokens per tokenizer.
    pub prompt_tokens: BTreeMap<String, u64>,
    pub messages: Vec<DumpedMessage>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DumpedMessage {
    pub role: String,
    /// Content tokens per tokenizer (without the 3-token message overhead and role).
    pub content_tokens: BTreeMap<String, u32>,
    pub content: String,
}

/// One render failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    pub call: usize,
    pub error: RenderError,
}

/// What one tokenizer measured on one session under one strategy.
#[derive(Debug, Clone, Default)]
pub struct TokOutcome {
    /// Prompt tokens of each call (complete sessions only).
    pub per_call: Vec<u64>,
    pub cached: u64,
    /// Full-history tokens / recorded input tokens per call where recorded (baseline only).
    pub fidelity: Vec<f64>,
    pub tokenized: u64,
    pub reused: u64,
    /// Lines of the messages counted anew: tokenized, or found in the session's cache.
    pub segments_tokenized: u64,
    pub segments_reused: u64,
}

impl TokOutcome {
    pub fn total(&self) -> u64 {
        self.per_call.iter().sum()
    }
    pub fn peak(&self) -> u64 {
        self.per_call.iter().copied().max().unwrap_or(0)
    }
}

/// What one strategy did on one session.
#[derive(Debug, Clone, Default)]
pub struct StratOutcome {
    /// Every call rendered without error (token figures are only valid then).
    pub complete: bool,
    pub render_ns: Vec<u64>,
    pub render_errors: Vec<CallError>,
    pub violations: Vec<Violation>,
    pub facts: u64,
    pub retained: u64,
    pub toks: Vec<TokOutcome>,
    /// Serialised prompt dumps (JSON lines), in call order.
    pub dumps: Vec<String>,
}

/// Everything measured on one session.
#[derive(Debug, Clone)]
pub struct SessionOutcome {
    pub id: String,
    pub calls: usize,
    pub strategies: Vec<StratOutcome>,
}

/// One input item after processing, tagged with where it came from.
pub struct Processed {
    pub corpus: usize,
    pub line: usize,
    pub outcome: Result<SessionOutcome, RejectedSession>,
}

/// Per-strategy constants computed once per run.
struct Prepared<'a> {
    cfg: &'a RunConfig,
    declared: Vec<Vec<Invariant>>,
    roles: Vec<RoleTokens>,
}

impl<'a> Prepared<'a> {
    fn new(cfg: &'a RunConfig) -> Self {
        Prepared {
            cfg,
            declared: cfg
                .strategies
                .iter()
                .map(|s| s.strategy.invariants())
                .collect(),
            roles: cfg.tokenizers.iter().map(RoleTokens::new).collect(),
        }
    }
}

fn render_guarded(
    strategy: &dyn Strategy,
    session: &Session,
    k: usize,
    state: &mut SessionState,
) -> Result<Vec<Message>, RenderError> {
    // A strategy (a plugin, say) that panics must not take the run down: the panic is
    // reported as a render error of that call.
    match catch_unwind(AssertUnwindSafe(|| {
        strategy.render_session(session, k, state)
    })) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_string());
            Err(RenderError::new("panic", msg))
        }
    }
}

/// The provider's recorded input tokens of a turn's request, when the corpus has them.
pub fn recorded_input_tokens(usage: &serde_json::Map<String, serde_json::Value>) -> Option<u64> {
    ["input_tokens", "prompt_tokens"]
        .iter()
        .find_map(|k| usage.get(*k).and_then(serde_json::Value::as_u64))
}

/// What the strategies of one session share: its facts and the per-line caches of
/// token counts and found facts (strategies render many of the same lines).
struct Shared {
    facts: Facts,
    matcher: FactMatcher,
    /// Facts recorded before call k: `facts.list()[..facts_len[k]]`.
    facts_len: Vec<usize>,
    lines: FactLines,
    /// One per tokenizer.
    counts: Vec<SegmentCounts>,
}

fn process_strategy(
    prep: &Prepared<'_>,
    s: usize,
    corpus: &str,
    session: &Session,
    shared: &mut Shared,
) -> StratOutcome {
    let cfg = prep.cfg;
    let entry = &cfg.strategies[s];
    let declared = &prep.declared[s];
    let n = session.turns.len();
    let ntok = cfg.tokenizers.len();
    let mut out = StratOutcome {
        complete: true,
        render_ns: Vec::with_capacity(n),
        toks: vec![TokOutcome::default(); ntok],
        ..StratOutcome::default()
    };
    let mut prev: Option<Vec<Message>> = None;
    let mut prev_scans: Vec<Vec<u32>> = Vec::new();
    let mut mems = vec![TokenMemory::default(); ntok];
    let mut counts: Vec<Vec<u32>> = vec![Vec::new(); ntok];
    let mut marks: Vec<bool> = Vec::new();
    // One scratch state per (strategy, session) lets strategies (plugins above all)
    // render call k+1 from call k's work; the determinism check renders through a second,
    // independent state so a stateful shortcut cannot vouch for itself.
    let mut state = SessionState::new();
    let mut second_state = SessionState::new();

    #[allow(clippy::needless_range_loop)] // k is the call index, used far beyond indexing
    for k in 0..n {
        // A call past the session's budget has no prompt: report it, never render it.
        if let Err(e) = RenderRequest::for_call(session, k) {
            out.complete = false;
            out.render_errors.push(CallError {
                call: k,
                error: RenderError::new("request", e.to_string()),
            });
            continue;
        }
        let start = Instant::now();
        let rendered = render_guarded(entry.strategy.as_ref(), session, k, &mut state);
        out.render_ns.push(start.elapsed().as_nanos() as u64);
        let messages = match rendered {
            Ok(m) => m,
            Err(error) => {
                out.complete = false;
                out.render_errors.push(CallError { call: k, error });
                // The next call has nothing to share a prefix or counts with.
                prev = None;
                prev_scans.clear();
                mems.iter_mut().for_each(|m| *m = TokenMemory::default());
                continue;
            }
        };

        // Invariants, with a second render for determinism.
        let second = render_guarded(entry.strategy.as_ref(), session, k, &mut second_state);
        let ctx = CheckContext {
            session,
            k,
            messages: &messages,
            previous: prev.as_deref(),
            second_render: second.as_ref().ok().map(Vec::as_slice),
        };
        out.violations.extend((cfg.checker)(declared, &ctx));
        if let Err(e) = &second {
            out.violations.push(Violation {
                call: k,
                invariant: Invariant::Deterministic.id(),
                detail: format!("the first render succeeded, the second failed: {e}"),
            });
        }
        // Checked: free the copy now rather than at the end of the call, so it is not
        // held while the prompt is tokenized (the peak of a call with a huge print, when
        // tokenizing needs many times the text's size).
        drop(second);

        let diff = CallDiff::new(prev.as_deref(), &messages);

        // Retention: a message seen in the previous call keeps its scan.
        let n_facts = shared.facts_len[k];
        marks.clear();
        marks.resize(n_facts, false);
        let scans: Vec<Vec<u32>> = messages
            .iter()
            .zip(&diff.reuse)
            .map(|(m, r)| {
                let found = match r {
                    Some(j) => prev_scans[*j].clone(),
                    None => shared
                        .matcher
                        .scan_lines(&m.content, &shared.facts, &mut shared.lines),
                };
                for &f in found.iter().take_while(|f| (**f as usize) < n_facts) {
                    marks[f as usize] = true;
                }
                found
            })
            .collect();
        out.facts += n_facts as u64;
        out.retained += marks.iter().filter(|m| **m).count() as u64;

        let mut prompt_tokens = Vec::with_capacity(ntok);
        for (t, tok) in cfg.tokenizers.iter().enumerate() {
            let CallTokens { prompt, cached } = count_call(
                tok,
                &prep.roles[t],
                prev.as_deref(),
                &messages,
                &diff,
                &mut mems[t],
                &mut shared.counts[t],
                &mut counts[t],
            );
            let o = &mut out.toks[t];
            o.per_call.push(prompt);
            o.cached += cached;
            if s == cfg.baseline
                && let Some(recorded) = session.turns[k]
                    .usage
                    .as_ref()
                    .and_then(recorded_input_tokens)
                && recorded > 0
            {
                o.fidelity.push(prompt as f64 / recorded as f64);
            }
            prompt_tokens.push(prompt);
        }

        if cfg.dump_prompts {
            out.dumps.push(dump_line(
                cfg,
                corpus,
                &session.id,
                k,
                &entry.name,
                &messages,
                &counts,
                &prompt_tokens,
            ));
        }

        prev = Some(messages);
        prev_scans = scans;
    }
    for (o, m) in out.toks.iter_mut().zip(&mems) {
        o.tokenized = m.tokenized;
        o.reused = m.reused;
    }
    if !out.complete {
        // Totals over part of a session would compare unequal things; the errors say why.
        for o in &mut out.toks {
            o.per_call.clear();
            o.cached = 0;
            o.fidelity.clear();
        }
        out.facts = 0;
        out.retained = 0;
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn dump_line(
    cfg: &RunConfig,
    corpus: &str,
    session: &str,
    call: usize,
    strategy: &str,
    messages: &[Message],
    counts: &[Vec<u32>],
    prompt_tokens: &[u64],
) -> String {
    let names: Vec<String> = cfg
        .tokenizers
        .iter()
        .map(|t| t.encoding().name().to_string())
        .collect();
    let dump = PromptDump {
        corpus: corpus.to_string(),
        session: session.to_string(),
        call,
        strategy: strategy.to_string(),
        prompt_tokens: names
            .iter()
            .cloned()
            .zip(prompt_tokens.iter().copied())
            .collect(),
        messages: messages
            .iter()
            .enumerate()
            .map(|(i, m)| DumpedMessage {
                role: m.role.as_str().to_string(),
                content_tokens: names
                    .iter()
                    .cloned()
                    .zip(counts.iter().map(|c| c[i]))
                    .collect(),
                content: m.content.clone(),
            })
            .collect(),
    };
    // Serialising plain strings and integers cannot fail.
    serde_json::to_string(&dump).unwrap_or_default()
}

/// Processes one session under every strategy and tokenizer.
pub fn process_session(cfg: &RunConfig, corpus: &str, session: &Session) -> SessionOutcome {
    process_with(&Prepared::new(cfg), corpus, session)
}

fn process_with(prep: &Prepared<'_>, corpus: &str, session: &Session) -> SessionOutcome {
    let mut facts = Facts::new();
    let mut facts_len = Vec::with_capacity(session.turns.len());
    for t in &session.turns {
        facts_len.push(facts.len());
        facts.add_turn(t);
    }
    let mut shared = Shared {
        matcher: FactMatcher::new(&facts),
        facts,
        facts_len,
        lines: FactLines::default(),
        counts: prep.cfg.tokenizers.iter().map(SegmentCounts::new).collect(),
    };
    let strategies = (0..prep.cfg.strategies.len())
        .map(|s| {
            // Line counts are shared, so each strategy is credited with what it added.
            let before: Vec<(u64, u64)> = shared
                .counts
                .iter()
                .map(|c| (c.segments_tokenized, c.segments_reused))
                .collect();
            let mut o = process_strategy(prep, s, corpus, session, &mut shared);
            for ((to, c), (t0, r0)) in o.toks.iter_mut().zip(&shared.counts).zip(before) {
                to.segments_tokenized = c.segments_tokenized - t0;
                to.segments_reused = c.segments_reused - r0;
            }
            o
        })
        .collect();
    SessionOutcome {
        id: session.id.clone(),
        calls: session.turns.len(),
        strategies,
    }
}

/// Receives each prompt dump line with the index of its strategy.
pub type DumpHook<'a> = dyn FnMut(usize, &str) -> io::Result<()> + 'a;

/// Where the run reports to while it goes (all called on the calling thread, in order).
#[derive(Default)]
pub struct Hooks<'a> {
    /// After each session or rejected line: (items done, corpus bytes read so far).
    pub progress: Option<&'a mut dyn FnMut(u64, u64)>,
    /// Each prompt dump line with the index of its strategy.
    pub dump: Option<&'a mut DumpHook<'a>>,
}

/// Counts the bytes a reader hands out (progress over corpus files).
struct Counted<R> {
    inner: R,
    bytes: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A corpus name as reports show it: the path as given.
pub fn corpus_name(path: &Path) -> String {
    path.display().to_string()
}

/// Runs the configuration over corpus files (streamed, one session per worker in
/// flight). A file that cannot be read (missing, unreadable, a directory) does not stop
/// the run: it becomes one rejection at line 0, field `file` (as `recap validate`
/// reports it), and every other file runs.
pub fn run_corpora(
    cfg: &RunConfig,
    corpora: &[PathBuf],
    hooks: Hooks<'_>,
) -> Result<Report, HarnessError> {
    cfg.validate()?;
    let bytes = Arc::new(AtomicU64::new(0));
    let mut sources = Vec::with_capacity(corpora.len());
    for path in corpora {
        sources.push(match recap_core::corpus::open_file(path) {
            Ok(file) => CorpusSource::Readable(CorpusReader::new(
                path,
                io::BufReader::with_capacity(
                    1 << 16,
                    Counted {
                        inner: file,
                        bytes: Arc::clone(&bytes),
                    },
                ),
            )),
            Err(rejected) => CorpusSource::Unreadable(Some(rejected)),
        });
    }
    let entries = sources
        .into_iter()
        .enumerate()
        .flat_map(|(i, r)| r.map(move |e| (i, e)));
    let names = corpora.iter().map(|p| corpus_name(p)).collect();
    run_entries(cfg, names, entries, hooks, Some(&bytes))
}

/// One corpus of a run: its sessions, or the single rejection saying why it could not
/// be read.
enum CorpusSource<R> {
    Readable(CorpusReader<R>),
    Unreadable(Option<RejectedSession>),
}

impl<R: io::BufRead> Iterator for CorpusSource<R> {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        match self {
            CorpusSource::Readable(r) => r.next(),
            CorpusSource::Unreadable(rejected) => rejected.take().map(|r| Entry {
                line: 0,
                session: Err(r),
            }),
        }
    }
}

/// Runs the configuration over in-memory sessions of one corpus (tests, benches).
pub fn run_sessions(
    cfg: &RunConfig,
    corpus: &str,
    sessions: Vec<Session>,
) -> Result<Report, HarnessError> {
    cfg.validate()?;
    let entries = sessions.into_iter().enumerate().map(|(i, s)| {
        (
            0,
            Entry {
                line: i + 1,
                session: Ok(s),
            },
        )
    });
    run_entries(
        cfg,
        vec![corpus.to_string()],
        entries,
        Hooks::default(),
        None,
    )
}

/// The parallel core: `entries` are (corpus index, entry) in input order.
pub fn run_entries<I>(
    cfg: &RunConfig,
    corpora: Vec<String>,
    entries: I,
    mut hooks: Hooks<'_>,
    bytes: Option<&AtomicU64>,
) -> Result<Report, HarnessError>
where
    I: Iterator<Item = (usize, Entry)> + Send,
{
    use rayon::iter::{ParallelBridge, ParallelIterator};
    let jobs = cfg.jobs.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|i| format!("recap-worker-{i}"))
        .build()
        .map_err(|e| HarnessError::Pool {
            jobs,
            message: e.to_string(),
        })?;
    let prep = Prepared::new(cfg);
    let mut agg = Aggregator::new(cfg, corpora.clone());
    let mut dump_error: Option<io::Error> = None;
    // Bounded: a slow consumer stalls the workers instead of buffering results.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Processed)>(jobs * 4);
    std::thread::scope(|scope| {
        let prep = &prep;
        let corpora = &corpora;
        scope.spawn(move || {
            pool.install(|| {
                entries
                    .enumerate()
                    .par_bridge()
                    .for_each_with(tx, |tx, (seq, (corpus, entry))| {
                        let outcome = entry
                            .session
                            .map(|s| process_with(prep, &corpora[corpus], &s));
                        let processed = Processed {
                            corpus,
                            line: entry.line,
                            outcome,
                        };
                        // The receiver only goes away when the run is over.
                        let _ = tx.send((seq, processed));
                    });
            });
        });
        let mut pending: BTreeMap<usize, Processed> = BTreeMap::new();
        let mut next = 0usize;
        for (seq, p) in rx {
            pending.insert(seq, p);
            while let Some(p) = pending.remove(&next) {
                next += 1;
                if let (Some(dump), Ok(o)) = (hooks.dump.as_mut(), &p.outcome)
                    && dump_error.is_none()
                {
                    'dumps: for (s, so) in o.strategies.iter().enumerate() {
                        for line in &so.dumps {
                            if let Err(e) = dump(s, line) {
                                dump_error = Some(e);
                                break 'dumps;
                            }
                        }
                    }
                }
                agg.add(p);
                if let Some(progress) = hooks.progress.as_mut() {
                    progress(next as u64, bytes.map_or(0, |b| b.load(Ordering::Relaxed)));
                }
            }
        }
    });
    if let Some(e) = dump_error {
        return Err(HarnessError::Dump(e));
    }
    Ok(agg.finish())
}
