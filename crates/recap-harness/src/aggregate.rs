//! Folding per-session outcomes into run rows, strictly in input order.

use crate::config::RunConfig;
use crate::outcome::Processed;
use crate::report::{
    CallMean, CorpusInfo, Fidelity, ProviderCache, Rejected, RenderErrorExample, RenderErrors,
    Report, Run, RunFidelity, SCHEMA_VERSION, SessionDetail, Settings, TokenCounting,
    ViolationExample, Violations,
};
use crate::stats::{Histogram, quantile_sorted};

/// Accumulates one strategy × tokenizer.
#[derive(Default)]
struct RunAcc {
    sessions: u64,
    not_applicable: u64,
    calls: u64,
    total: u64,
    peak: u64,
    cached: u64,
    // Savings are pooled over sessions where both this strategy and the baseline
    // rendered every call.
    savings_total: u64,
    savings_baseline: u64,
    facts: u64,
    retained: u64,
    by_call_sum: Vec<u64>,
    by_call_n: Vec<u64>,
    fidelity: Vec<f64>,
    // Baseline only: run-level fidelity and the provider's recorded cache use.
    run_sessions: u64,
    run_full: u64,
    run_recorded: u64,
    cache_calls: u64,
    cache_input: u64,
    cache_read: u64,
    counting: TokenCounting,
    details: Vec<SessionDetail>,
}

/// Tokenizer-independent parts of one strategy.
#[derive(Default)]
struct StratAcc {
    violations: Violations,
    errors: RenderErrors,
    render: Histogram,
}

pub struct Aggregator<'a> {
    cfg: &'a RunConfig,
    corpora: Vec<String>,
    corpus_sessions: Vec<u64>,
    corpus_rejected: Vec<u64>,
    /// Indexed `[tokenizer][strategy]`.
    runs: Vec<Vec<RunAcc>>,
    strats: Vec<StratAcc>,
    rejected: Vec<Rejected>,
}

fn effective(total: u64, cached: u64, ratio: f64) -> f64 {
    total.saturating_sub(cached) as f64 + ratio * cached as f64
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

impl<'a> Aggregator<'a> {
    pub fn new(cfg: &'a RunConfig, corpora: Vec<String>) -> Self {
        let ns = cfg.strategies.len();
        Aggregator {
            cfg,
            corpus_sessions: vec![0; corpora.len()],
            corpus_rejected: vec![0; corpora.len()],
            corpora,
            runs: (0..cfg.tokenizers.len())
                .map(|_| (0..ns).map(|_| RunAcc::default()).collect())
                .collect(),
            strats: (0..ns).map(|_| StratAcc::default()).collect(),
            rejected: Vec::new(),
        }
    }

    pub fn add(&mut self, p: Processed) {
        let corpus = &self.corpora[p.corpus];
        let o = match p.outcome {
            Ok(o) => o,
            Err(r) => {
                self.corpus_rejected[p.corpus] += 1;
                self.rejected.push(Rejected {
                    corpus: corpus.clone(),
                    line: r.line,
                    session: r.session_id,
                    field: r.field,
                    message: r.message,
                });
                return;
            }
        };
        self.corpus_sessions[p.corpus] += 1;
        let examples = self.cfg.examples;
        let base = self.cfg.baseline;
        for (s, so) in o.strategies.iter().enumerate() {
            if !so.applicable {
                for runs in &mut self.runs {
                    runs[s].not_applicable += 1;
                }
                continue;
            }
            let sa = &mut self.strats[s];
            for &ns in &so.render_ns {
                sa.render.record(ns);
            }
            sa.violations.count += so.violations.len() as u64;
            for v in &so.violations {
                *sa.violations
                    .by_invariant
                    .entry(v.invariant.to_string())
                    .or_default() += 1;
                if sa.violations.examples.len() < examples {
                    sa.violations.examples.push(ViolationExample {
                        corpus: corpus.clone(),
                        session: o.id.clone(),
                        call: v.call,
                        invariant: v.invariant.to_string(),
                        detail: v.detail.clone(),
                    });
                }
            }
            if !so.render_errors.is_empty() {
                sa.errors.sessions += 1;
            }
            sa.errors.count += so.render_errors.len() as u64;
            for e in &so.render_errors {
                *sa.errors.by_kind.entry(e.error.kind.clone()).or_default() += 1;
                if sa.errors.examples.len() < examples {
                    sa.errors.examples.push(RenderErrorExample {
                        corpus: corpus.clone(),
                        session: o.id.clone(),
                        call: e.call,
                        kind: e.error.kind.clone(),
                        message: e.error.message.clone(),
                    });
                }
            }

            for t in 0..self.cfg.tokenizers.len() {
                let to = &so.toks[t];
                let base_o = &o.strategies[base];
                let base_total = base_o.complete.then(|| base_o.toks[t].total());
                let acc = &mut self.runs[t][s];
                acc.counting.messages_tokenized += to.tokenized;
                acc.counting.messages_reused += to.reused;
                acc.counting.segments_tokenized += to.segments_tokenized;
                acc.counting.segments_reused += to.segments_reused;
                let (total, peak, cached) = (to.total(), to.peak(), to.cached);
                if so.complete {
                    acc.sessions += 1;
                    acc.calls += o.calls as u64;
                    acc.total += total;
                    acc.peak = acc.peak.max(peak);
                    acc.cached += cached;
                    acc.facts += so.facts;
                    acc.retained += so.retained;
                    if let Some(b) = base_total {
                        acc.savings_total += total;
                        acc.savings_baseline += b;
                    }
                    if acc.by_call_sum.len() < to.per_call.len() {
                        acc.by_call_sum.resize(to.per_call.len(), 0);
                        acc.by_call_n.resize(to.per_call.len(), 0);
                    }
                    for (k, &v) in to.per_call.iter().enumerate() {
                        acc.by_call_sum[k] += v;
                        acc.by_call_n[k] += 1;
                    }
                    acc.fidelity.extend_from_slice(&to.fidelity);
                    if s == base {
                        if let Some(recorded) = o.recorded.run_input.filter(|&r| r > 0) {
                            acc.run_sessions += 1;
                            acc.run_full += total;
                            acc.run_recorded += recorded;
                        }
                        acc.cache_calls += o.recorded.cache_calls;
                        acc.cache_input += o.recorded.cache_input;
                        acc.cache_read += o.recorded.cache_read;
                    }
                }
                if self.cfg.session_details {
                    let complete = so.complete;
                    acc.details.push(SessionDetail {
                        corpus: corpus.clone(),
                        line: p.line,
                        session: o.id.clone(),
                        calls: o.calls,
                        complete,
                        prompt_tokens_total: complete.then_some(total),
                        prompt_tokens_peak: complete.then_some(peak),
                        savings_vs_full_history: match (complete, base_total) {
                            (true, Some(b)) if b > 0 => Some(1.0 - total as f64 / b as f64),
                            _ => None,
                        },
                        cached_tokens: complete.then_some(cached),
                        effective_cost: complete
                            .then(|| effective(total, cached, self.cfg.cache_read_ratio)),
                        retention: if complete {
                            ratio(so.retained, so.facts)
                        } else {
                            None
                        },
                        invariant_violations: so.violations.len() as u64,
                        render_errors: so.render_errors.len() as u64,
                        render_ns_total: so.render_ns.iter().sum(),
                    });
                }
            }
        }
    }

    pub fn finish(self) -> Report {
        let cfg = self.cfg;
        let mut runs = Vec::new();
        for (t, accs) in self.runs.into_iter().enumerate() {
            for (s, acc) in accs.into_iter().enumerate() {
                let entry = &cfg.strategies[s];
                let sa = &self.strats[s];
                let fidelity = {
                    let mut v = acc.fidelity;
                    v.sort_by(f64::total_cmp);
                    quantile_sorted(&v, 0.5).map(|median| Fidelity {
                        calls: v.len() as u64,
                        median,
                        p10: quantile_sorted(&v, 0.1).unwrap_or(median),
                        p90: quantile_sorted(&v, 0.9).unwrap_or(median),
                        min: v[0],
                        max: v[v.len() - 1],
                    })
                };
                runs.push(Run {
                    strategy: entry.name.clone(),
                    tokenizer: cfg.tokenizers[t].encoding().name().to_string(),
                    implicit: entry.implicit,
                    sweep: entry.sweep.clone(),
                    forms: entry
                        .strategy
                        .forms()
                        .iter()
                        .map(|f| f.as_str().to_string())
                        .collect(),
                    scope: entry.strategy.scope(),
                    determinism_checked: cfg.check_determinism.covers(entry.strategy.as_ref()),
                    sessions: acc.sessions,
                    not_applicable: acc.not_applicable,
                    calls: acc.calls,
                    prompt_tokens_total: acc.total,
                    prompt_tokens_peak: acc.peak,
                    prompt_tokens_mean: ratio(acc.total, acc.calls),
                    savings_vs_full_history: ratio(acc.savings_total, acc.savings_baseline)
                        .map(|r| 1.0 - r),
                    cached_tokens: acc.cached,
                    cache_hit_rate: ratio(acc.cached, acc.total),
                    effective_cost: effective(acc.total, acc.cached, cfg.cache_read_ratio),
                    retention: ratio(acc.retained, acc.facts),
                    retention_facts: acc.facts,
                    retention_retained: acc.retained,
                    invariant_violations: sa.violations.clone(),
                    render_errors: sa.errors.clone(),
                    render_ns_median: sa.render.quantile(0.5),
                    render_ns_p95: sa.render.quantile(0.95),
                    replay_fidelity: fidelity,
                    run_fidelity: (acc.run_sessions > 0).then(|| RunFidelity {
                        sessions: acc.run_sessions,
                        full_history_tokens: acc.run_full,
                        recorded_tokens: acc.run_recorded,
                        ratio: ratio(acc.run_full, acc.run_recorded),
                    }),
                    provider_cache: (acc.cache_calls > 0).then(|| ProviderCache {
                        calls: acc.cache_calls,
                        input_tokens: acc.cache_input,
                        cache_read_tokens: acc.cache_read,
                        hit_rate: ratio(acc.cache_read, acc.cache_input),
                    }),
                    token_counting: acc.counting,
                    prompt_tokens_by_call: acc
                        .by_call_sum
                        .iter()
                        .zip(&acc.by_call_n)
                        .enumerate()
                        .map(|(call, (&sum, &n))| CallMean {
                            call,
                            sessions: n,
                            mean_prompt_tokens: sum as f64 / n.max(1) as f64,
                        })
                        .collect(),
                    session_details: acc.details,
                });
            }
        }
        Report {
            schema_version: SCHEMA_VERSION,
            settings: Settings {
                corpora: self
                    .corpora
                    .iter()
                    .enumerate()
                    .map(|(i, path)| CorpusInfo {
                        path: path.clone(),
                        sessions: self.corpus_sessions[i],
                        rejected: self.corpus_rejected[i],
                    })
                    .collect(),
                baseline: cfg.strategies[cfg.baseline].name.clone(),
                tokenizer_backend: cfg
                    .tokenizers
                    .first()
                    .map(|t| t.backend().name().to_string())
                    .unwrap_or_default(),
                cache_read_ratio: cfg.cache_read_ratio,
            },
            runs,
            rejected: self.rejected,
            provenance: None,
            non_deterministic: None,
        }
    }
}
