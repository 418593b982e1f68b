//! `calls.csv`: one row per call × strategy × tokenizer, written session by session as
//! the run folds them, so a corpus of any size needs memory for the sessions in flight
//! only.

use super::csv::field;
use crate::config::RunConfig;
use crate::outcome::SessionOutcome;
use std::io::{self, Write};

/// The columns of `calls.csv`, in order.
pub const CALL_COLUMNS: [&str; 15] = [
    "corpus",
    "line",
    "session",
    "form",
    "strategy",
    "tokenizer",
    "call",
    "prompt_tokens",
    "cached_tokens",
    "retention_facts",
    "retention_retained",
    "retention",
    "invariant_violations",
    "render_error",
    "render_ns",
];

/// Writes `calls.csv` rows as sessions arrive.
pub struct CallsCsv<W: Write> {
    out: W,
    corpora: Vec<String>,
    strategies: Vec<String>,
    tokenizers: Vec<String>,
}

impl<W: Write> CallsCsv<W> {
    /// Writes the header. `corpora` are the run's corpus names, by index.
    pub fn new(mut out: W, cfg: &RunConfig, corpora: Vec<String>) -> io::Result<Self> {
        writeln!(out, "{}", CALL_COLUMNS.join(","))?;
        Ok(CallsCsv {
            out,
            corpora,
            strategies: cfg.strategy_names(),
            tokenizers: cfg.tokenizer_names(),
        })
    }

    /// The rows of one session (needs `RunConfig::call_records`): strategies in run
    /// order, then calls, then tokenizers. Strategies that do not render the session's
    /// form have no rows.
    pub fn session(&mut self, corpus: usize, line: usize, o: &SessionOutcome) -> io::Result<()> {
        let corpus = field(self.corpora.get(corpus).map_or("", String::as_str));
        let session = field(&o.id);
        let form = o.form.as_str();
        for (s, so) in o.strategies.iter().enumerate() {
            if !so.applicable {
                continue;
            }
            let strategy = field(&self.strategies[s]);
            for c in &so.calls {
                let retention = if c.facts > 0 {
                    (c.retained as f64 / c.facts as f64).to_string()
                } else {
                    String::new()
                };
                let error = field(c.render_error.as_deref().unwrap_or(""));
                let ns = c.render_ns.map(|n| n.to_string()).unwrap_or_default();
                for (t, tokenizer) in self.tokenizers.iter().enumerate() {
                    let num = |v: &[u64]| v.get(t).map(u64::to_string).unwrap_or_default();
                    writeln!(
                        self.out,
                        "{corpus},{line},{session},{form},{strategy},{tokenizer},{},{},{},{},{},{retention},{},{error},{ns}",
                        c.call,
                        num(&c.prompt_tokens),
                        num(&c.cached_tokens),
                        c.facts,
                        c.retained,
                        c.violations,
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Flushes and hands back the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::StrategyEntry;
    use crate::outcome::{CallRecord, StratOutcome};
    use crate::tokenizer::{Backend, Encoding, Tokenizer};

    #[test]
    fn one_row_per_call_strategy_and_tokenizer_with_gaps_for_failed_calls() {
        let reg = recap_builtins::registry();
        let tokenizers = vec![
            Tokenizer::get(Encoding::O200kBase, Backend::Fast),
            Tokenizer::get(Encoding::Cl100kBase, Backend::Fast),
        ];
        let cfg = RunConfig::new(
            vec![StrategyEntry::new(
                reg.build("rolling-window:window=2").unwrap(),
            )],
            reg.build("full-history").unwrap(),
            tokenizers,
        )
        .unwrap();
        let ok = CallRecord {
            call: 0,
            prompt_tokens: vec![10, 11],
            cached_tokens: vec![0, 0],
            facts: 4,
            retained: 3,
            violations: 0,
            render_error: None,
            render_ns: Some(500),
        };
        let failed = CallRecord {
            call: 1,
            render_error: Some("panic".into()),
            render_ns: Some(7),
            ..CallRecord::default()
        };
        let outcome = SessionOutcome {
            id: "s,1".into(),
            form: recap_core::Form::Ptc,
            recorded: Default::default(),
            calls: 2,
            strategies: vec![
                StratOutcome::not_applicable(2),
                StratOutcome {
                    applicable: true,
                    calls: vec![ok, failed],
                    ..StratOutcome::default()
                },
            ],
        };
        let mut w = CallsCsv::new(Vec::new(), &cfg, vec!["c.jsonl".into()]).unwrap();
        w.session(0, 3, &outcome).unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], CALL_COLUMNS.join(","));
        assert_eq!(
            lines[1..],
            [
                "c.jsonl,3,\"s,1\",ptc,rolling-window:window=2,o200k_base,0,10,0,4,3,0.75,0,,500",
                "c.jsonl,3,\"s,1\",ptc,rolling-window:window=2,cl100k_base,0,11,0,4,3,0.75,0,,500",
                "c.jsonl,3,\"s,1\",ptc,rolling-window:window=2,o200k_base,1,,,0,0,,0,panic,7",
                "c.jsonl,3,\"s,1\",ptc,rolling-window:window=2,cl100k_base,1,,,0,0,,0,panic,7",
            ]
        );
    }
}
