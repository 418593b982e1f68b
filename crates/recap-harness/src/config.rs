//! What a run is asked to do: its strategies, tokenizers and settings, and the errors
//! of a configuration that cannot run.

use crate::tokenizer::{Backend, Tokenizer};
use recap_core::Invariant;
use recap_core::Strategy;
use recap_core::invariants::{CheckContext, Violation};
use serde::{Deserialize, Serialize};
use std::io;
use std::sync::Arc;

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

/// Which strategies a run renders twice at every call, comparing the two prompts
/// (SPEC 7.6, the `deterministic` invariant).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DeterminismCheck {
    /// The strategies recap cannot see into ([`Strategy::opaque`]: plugins); a
    /// built-in's determinism is proven by its property tests.
    #[default]
    Opaque,
    /// Every strategy, built-ins too (`--check-determinism all`; CI's run).
    All,
}

impl DeterminismCheck {
    /// Whether `strategy`'s calls are rendered twice.
    pub fn covers(self, strategy: &dyn Strategy) -> bool {
        self == DeterminismCheck::All || strategy.opaque()
    }

    /// The name `--check-determinism` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            DeterminismCheck::Opaque => "opaque",
            DeterminismCheck::All => "all",
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
    /// Which strategies are rendered twice at every call.
    pub check_determinism: DeterminismCheck,
    /// Produce the exact prompts of every call for `--dump-prompts`.
    pub dump_prompts: bool,
    /// Keep one record per session and run in the report (JSON `session_details`).
    pub session_details: bool,
    /// How many examples of violations / render errors a run keeps.
    pub examples: usize,
    /// Keep one [`crate::engine::CallRecord`] per call in each session's outcome, for
    /// [`crate::Hooks::session`] to stream out (per-call tables).
    pub call_records: bool,
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
    #[error("writing per-session output: {0}")]
    SessionHook(#[source] io::Error),
}

impl RunConfig {
    /// The strategies' names, in report order (the index a per-call record carries).
    pub fn strategy_names(&self) -> Vec<String> {
        self.strategies.iter().map(|s| s.name.clone()).collect()
    }

    /// The tokenizers' encoding names, in report order.
    pub fn tokenizer_names(&self) -> Vec<String> {
        self.tokenizers
            .iter()
            .map(|t| t.encoding().name().to_string())
            .collect()
    }

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
            check_determinism: DeterminismCheck::default(),
            dump_prompts: false,
            session_details: true,
            examples: 5,
            call_records: false,
        })
    }

    /// What the report of this run is made of, apart from its sessions.
    pub fn shape(&self) -> RunShape {
        RunShape {
            strategies: self
                .strategies
                .iter()
                .map(|e| StrategyShape {
                    name: e.name.clone(),
                    implicit: e.implicit,
                    sweep: e.sweep.clone(),
                    forms: e
                        .strategy
                        .forms()
                        .iter()
                        .map(|f| f.as_str().to_string())
                        .collect(),
                    scope: e.strategy.scope(),
                    determinism_checked: self.check_determinism.covers(e.strategy.as_ref()),
                })
                .collect(),
            baseline: self.baseline,
            tokenizers: self
                .tokenizers
                .iter()
                .map(|t| t.encoding().name().to_string())
                .collect(),
            tokenizer_backend: self
                .tokenizers
                .first()
                .map(|t| t.backend().name().to_string())
                .unwrap_or_default(),
            cache_read_ratio: self.cache_read_ratio,
            session_details: self.session_details,
            examples: self.examples,
        }
    }

    pub fn validate(&self) -> Result<(), HarnessError> {
        if !(0.0..=1.0).contains(&self.cache_read_ratio) {
            return Err(HarnessError::CacheReadRatio(self.cache_read_ratio));
        }
        Ok(())
    }
}

/// A run as its report needs it — strategies, tokenizers and settings as plain data,
/// without the strategies and vocabularies themselves — so that the fold of session
/// outcomes into a report also runs where neither is loaded (`recap merge`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunShape {
    /// In report order (see [`RunConfig::strategies`]).
    pub strategies: Vec<StrategyShape>,
    /// Index of the baseline in `strategies`.
    pub baseline: usize,
    /// Encoding names, in report order.
    pub tokenizers: Vec<String>,
    /// `fast` or `reference`.
    pub tokenizer_backend: String,
    pub cache_read_ratio: f64,
    pub session_details: bool,
    pub examples: usize,
}

/// One strategy of a [`RunShape`]: what its report rows say about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StrategyShape {
    pub name: String,
    pub implicit: bool,
    pub sweep: Option<String>,
    pub forms: Vec<String>,
    pub scope: Option<String>,
    /// Whether the run rendered its calls twice and compared them ([`DeterminismCheck`]).
    pub determinism_checked: bool,
}
