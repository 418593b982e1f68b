//! The evaluation report and its three renderings: a terminal table, markdown, and JSON
//! (the stable shape, `schema: "recap-eval/1"`). Every format carries the evaluation's
//! own requests, tokens and cost. Nothing here holds the API key.

use crate::bootstrap::Interval;
use crate::options::EvalOptions;
use crate::pricing::{Price, cost};
use recap_llm::endpoint::Tally;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

pub const SCHEMA: &str = "recap-eval/1";

#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub schema: &'static str,
    /// The chat-completions URL asked.
    pub endpoint: String,
    pub model: String,
    pub seed: u64,
    pub max_tokens: u32,
    pub temperature: f64,
    pub sample: SampleInfo,
    /// The control (`full-history`) first.
    pub strategies: Vec<StrategyResult>,
    /// Every distinct request of the run.
    pub requests: Tally,
    /// The same, per purpose (`next-action`, `probe`, `judge`, `summarizer <spec>`).
    pub by_purpose: BTreeMap<String, Tally>,
    pub cost: Vec<CostLine>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SampleInfo {
    pub requested: usize,
    pub calls: usize,
    pub sessions: usize,
    pub chat_calls: usize,
    pub ptc_calls: usize,
    /// Probe questions per strategy.
    pub probes: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct StrategyResult {
    pub strategy: String,
    pub control: bool,
    /// Sampled calls it rendered a prompt for.
    pub calls: usize,
    /// Sampled calls of a form it does not render.
    pub not_applicable: usize,
    pub render_errors: usize,
    /// Prompt tokens of its prompts for the sampled calls (the run's tokenizer).
    pub prompt_tokens: u64,
    pub mean_prompt_tokens: Option<f64>,
    /// `1 - tokens / control tokens` over the same calls.
    pub savings: Option<f64>,
    /// The summaries it asked the endpoint for (a summarizing strategy's extra cost).
    pub summarizer: Option<SummarizerCost>,
    pub next_action: Option<Measure>,
    /// Next actions whose first tool is the recorded one (a weaker agreement).
    pub first_tool: Option<Measure>,
    pub probes: Option<Measure>,
    /// Probe answers the judge prompt accepted (with `--judge`).
    pub judged: Option<Measure>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SummarizerCost {
    pub requests: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// One measure of one strategy.
#[derive(Debug, Clone, Serialize)]
pub struct Measure {
    /// Questions answered (failed requests are left out).
    pub asked: usize,
    /// Answers that agree with the record / are correct.
    pub agreed: usize,
    pub rate: Option<f64>,
    /// 95 % bootstrap interval of the rate.
    pub interval: Option<Interval>,
    /// Rate relative to the control's on the same questions.
    pub relative: Option<f64>,
    pub relative_interval: Option<Interval>,
    /// Answers that were not a usable completion (counted as wrong).
    pub malformed: usize,
    /// Questions without an answer (the request failed after its retries).
    pub failed: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct CostLine {
    pub model: String,
    pub input_per_million: f64,
    pub output_per_million: f64,
    /// Dollars for every answered request (what the evaluation costs without a cache).
    pub dollars: f64,
    /// Dollars for the requests sent in this run.
    pub dollars_this_run: f64,
}

impl EvalReport {
    pub(crate) fn new(
        endpoint: String,
        options: &EvalOptions,
        sample: SampleInfo,
        strategies: Vec<StrategyResult>,
        requests: Tally,
        by_purpose: BTreeMap<String, Tally>,
    ) -> EvalReport {
        let mut notes = Vec::new();
        if requests.failed > 0 {
            notes.push(format!(
                "{} request(s) failed (rejected by the server, or no answer after every retry) \
                 and are left out of the measures; run again to ask them (answers already \
                 received come from the cache)",
                requests.failed
            ));
        }
        if requests.malformed > 0 {
            notes.push(format!(
                "{} answer(s) were malformed and count as wrong",
                requests.malformed
            ));
        }
        EvalReport {
            schema: SCHEMA,
            endpoint,
            model: options.sampling.model.clone(),
            seed: options.seed,
            max_tokens: options.sampling.max_tokens,
            temperature: options.sampling.temperature,
            sample,
            strategies,
            requests,
            by_purpose,
            cost: Vec::new(),
            notes,
        }
    }

    /// Prices the run with the price of its model, if given; a note says when not.
    pub fn price(&mut self, prices: &[Price]) {
        match prices.iter().rfind(|p| p.model == self.model) {
            Some(p) => {
                let (dollars, dollars_this_run) = cost(p, &self.requests);
                self.cost = vec![CostLine {
                    model: p.model.clone(),
                    input_per_million: p.input_per_million,
                    output_per_million: p.output_per_million,
                    dollars,
                    dollars_this_run,
                }];
            }
            None => self.notes.push(format!(
                "no --price for model {:?}: cost not computed (tokens are)",
                self.model
            )),
        }
    }

    pub fn to_json(&self) -> String {
        // A report of plain numbers and strings always serialises.
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    pub fn to_table(&self) -> String {
        let rows = self.rows();
        let mut widths = vec![0; rows[0].len()];
        for r in &rows {
            for (w, cell) in widths.iter_mut().zip(r) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for r in &rows {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (cell, w))| {
                    if i == 0 {
                        format!("{cell:<w$}")
                    } else {
                        format!("{cell:>w$}")
                    }
                })
                .collect();
            let _ = writeln!(out, "{}", line.join("  ").trim_end());
        }
        out.push('\n');
        out.push_str(&self.footer());
        out
    }

    pub fn to_markdown(&self) -> String {
        let rows = self.rows();
        let mut out = format!(
            "# recap eval: {} at {}\n\n{}\n\n",
            self.model,
            self.endpoint,
            self.sample_line()
        );
        for (i, r) in rows.iter().enumerate() {
            let _ = writeln!(out, "| {} |", r.join(" | "));
            if i == 0 {
                let _ = writeln!(out, "|{}", "---|".repeat(r.len()));
            }
        }
        out.push('\n');
        for line in self.footer().lines() {
            if !line.is_empty() {
                let _ = writeln!(out, "- {line}");
            }
        }
        out
    }

    fn sample_line(&self) -> String {
        let s = &self.sample;
        format!(
            "{} calls sampled (seed {}) from {} sessions: {} chat, {} PTC; {} probe questions per strategy",
            s.calls, self.seed, s.sessions, s.chat_calls, s.ptc_calls, s.probes
        )
    }

    fn rows(&self) -> Vec<Vec<String>> {
        let mut rows = vec![vec![
            "strategy".to_string(),
            "calls".into(),
            "n/a".into(),
            "mean prompt tok".into(),
            "savings".into(),
            "next action [95% CI]".into(),
            "vs control".into(),
            "probes [95% CI]".into(),
            "vs control".into(),
            "summarizer tok (in+out)".into(),
        ]];
        for r in &self.strategies {
            let name = if r.control {
                format!("{} (control)", r.strategy)
            } else {
                r.strategy.clone()
            };
            rows.push(vec![
                name,
                r.calls.to_string(),
                r.not_applicable.to_string(),
                r.mean_prompt_tokens
                    .map_or("-".into(), |m| format!("{m:.0}")),
                r.savings.map_or("-".into(), pct),
                rate(r.next_action.as_ref()),
                relative(r.next_action.as_ref()),
                rate(r.probes.as_ref()),
                relative(r.probes.as_ref()),
                r.summarizer.map_or("-".into(), |c| {
                    format!("{}+{}", c.prompt_tokens, c.completion_tokens)
                }),
            ]);
        }
        rows
    }

    fn footer(&self) -> String {
        let t = &self.requests;
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.sample_line());
        let _ = writeln!(
            out,
            "requests: {} distinct, {} from the cache, {} sent, {} retried, {} failed, {} malformed",
            t.requests, t.cached, t.sent, t.retried, t.failed, t.malformed
        );
        let _ = writeln!(
            out,
            "evaluation tokens: {} prompt + {} completion (sent in this run: {} + {})",
            t.prompt_tokens, t.completion_tokens, t.sent_prompt_tokens, t.sent_completion_tokens
        );
        for c in &self.cost {
            let _ = writeln!(
                out,
                "cost at ${}/${} per million tokens ({}): ${:.4} in all, ${:.4} in this run",
                c.input_per_million, c.output_per_million, c.model, c.dollars, c.dollars_this_run
            );
        }
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        out
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn rate(m: Option<&Measure>) -> String {
    match m {
        None => "-".into(),
        Some(m) => match (m.rate, m.interval) {
            (Some(r), Some(i)) => format!("{} [{}, {}]", pct(r), pct(i.low), pct(i.high)),
            (Some(r), None) => pct(r),
            _ => "-".into(),
        },
    }
}

fn relative(m: Option<&Measure>) -> String {
    match m.and_then(|m| m.relative) {
        None => "-".into(),
        Some(r) => format!("{r:.2}"),
    }
}
