//! What processing one session measured, per strategy and tokenizer, before it is folded
//! into the run rows.

use recap_core::invariants::Violation;
use recap_core::{RejectedSession, RenderError};

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
    /// The strategy renders the session's form (SPEC 11.3). When it does not, nothing
    /// was rendered and nothing else here means anything: the session is counted as
    /// *not applicable* for the strategy, never as numbers.
    pub applicable: bool,
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
    /// One record per call, in call order (only with `RunConfig::call_records`).
    pub calls: Vec<CallRecord>,
}

/// What one call measured under one strategy: the rows of a per-call table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallRecord {
    pub call: usize,
    /// Per tokenizer; empty when the call has no prompt (it failed to render).
    pub prompt_tokens: Vec<u64>,
    /// Per tokenizer: tokens in the common prefix with the previous call's prompt.
    pub cached_tokens: Vec<u64>,
    pub facts: u64,
    pub retained: u64,
    pub violations: u64,
    /// The kind of the render error, when the call failed.
    pub render_error: Option<String>,
    /// Wall-clock render time; `None` when the call was never rendered.
    pub render_ns: Option<u64>,
}

impl StratOutcome {
    /// The outcome of a strategy that does not render the session's form.
    pub fn not_applicable(tokenizers: usize) -> Self {
        StratOutcome {
            applicable: false,
            toks: vec![TokOutcome::default(); tokenizers],
            ..StratOutcome::default()
        }
    }
}

/// Everything measured on one session.
#[derive(Debug, Clone)]
pub struct SessionOutcome {
    pub id: String,
    pub form: recap_core::Form,
    /// What the log recorded of the provider's own counts (cache reads, run totals).
    pub recorded: crate::calls::RecordedUsage,
    pub calls: usize,
    pub strategies: Vec<StratOutcome>,
}

/// One input item after processing, tagged with where it came from.
pub struct Processed {
    pub corpus: usize,
    pub line: usize,
    pub outcome: Result<SessionOutcome, RejectedSession>,
}
