//! The calls where strategies lost the most recorded facts, found while the run streams
//! its sessions, and shown afterwards as `recap inspect` shows them: the recorded trace
//! beside the prompt the strategy sent.

/// Calls of lowest retention a report shows (one per strategy at most): `recap run`,
/// `recap merge` and the Python package alike.
pub const SHOWN_CALLS: usize = 6;
/// Characters of each printed value of those calls (as `recap inspect --max-chars`).
pub const SHOWN_MAX_CHARS: usize = 2_000;

use crate::config::RunConfig;
use crate::inspect::{InspectOptions, inspect};
use crate::outcome::SessionOutcome;
use recap_core::CorpusReader;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// One call chosen for its low retention.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pick {
    pub corpus: usize,
    pub line: usize,
    pub session: String,
    pub call: usize,
    /// The strategy's index in the run.
    pub strategy: usize,
    pub facts: u64,
    pub retained: u64,
}

impl Pick {
    /// Strictly lower retention than `other` (exact: no floating point).
    fn lower_than(&self, other: &Pick) -> bool {
        u128::from(self.retained) * u128::from(other.facts)
            < u128::from(other.retained) * u128::from(self.facts)
    }
}

/// Keeps, per strategy, the first call of lowest retention (calls with facts only).
/// The baseline is left out: what it misses was never shown to the agent.
pub struct LowestRetention {
    baseline: usize,
    worst: BTreeMap<usize, Pick>,
}

impl LowestRetention {
    pub fn new(cfg: &RunConfig) -> Self {
        LowestRetention::with_baseline(cfg.baseline)
    }

    /// For a run whose baseline is strategy `baseline`.
    pub fn with_baseline(baseline: usize) -> Self {
        LowestRetention {
            baseline,
            worst: BTreeMap::new(),
        }
    }

    /// Takes `pick` if it is its strategy's first of lowest retention so far (picks come
    /// in corpus order, then call order). The baseline's and calls without facts are
    /// never taken.
    pub fn offer(&mut self, pick: Pick) {
        if pick.strategy == self.baseline || pick.facts == 0 {
            return;
        }
        if self
            .worst
            .get(&pick.strategy)
            .is_none_or(|w| pick.lower_than(w))
        {
            self.worst.insert(pick.strategy, pick);
        }
    }

    /// Looks at one session's call records (needs `RunConfig::call_records`).
    pub fn session(&mut self, corpus: usize, line: usize, o: &SessionOutcome) {
        for (s, so) in o.strategies.iter().enumerate() {
            if s == self.baseline || !so.applicable {
                continue;
            }
            for c in so.calls.iter().filter(|c| c.facts > 0) {
                // Compared before the pick is built: most calls are not the lowest.
                let lower = self.worst.get(&s).is_none_or(|w| {
                    u128::from(c.retained) * u128::from(w.facts)
                        < u128::from(w.retained) * u128::from(c.facts)
                });
                if lower {
                    self.offer(Pick {
                        corpus,
                        line,
                        session: o.id.clone(),
                        call: c.call,
                        strategy: s,
                        facts: c.facts,
                        retained: c.retained,
                    });
                }
            }
        }
    }

    /// At most `n` picks, lowest retention first (ties: run order of the strategy).
    pub fn picks(self, n: usize) -> Vec<Pick> {
        let mut picks: Vec<Pick> = self.worst.into_values().collect();
        picks.sort_by(|a, b| {
            if a.lower_than(b) {
                std::cmp::Ordering::Less
            } else if b.lower_than(a) {
                std::cmp::Ordering::Greater
            } else {
                a.strategy.cmp(&b.strategy)
            }
        });
        picks.truncate(n);
        picks
    }
}

/// A picked call as `recap inspect` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallView {
    pub strategy: String,
    pub corpus: String,
    pub line: usize,
    pub session: String,
    /// 0-based (call k produced turn k + 1).
    pub call: usize,
    pub facts: u64,
    pub retained: u64,
    /// The mission and the recorded turn the call produced.
    pub trace: String,
    /// What the strategy sent, message by message, and the facts it left out.
    pub prompt: String,
}

/// The texts of each pick, read again from its corpus (each corpus streamed once, up
/// to its last picked line, parsing only the picked lines). Texts are cut to `max_chars` per printed value, as
/// `recap inspect --max-chars` does. A pick whose session cannot be read again (the
/// file changed meanwhile) is left out.
pub fn call_views(
    cfg: &RunConfig,
    corpora: &[PathBuf],
    picks: &[Pick],
    max_chars: usize,
) -> Vec<CallView> {
    let mut by_corpus: BTreeMap<usize, Vec<&Pick>> = BTreeMap::new();
    for p in picks {
        by_corpus.entry(p.corpus).or_default().push(p);
    }
    let mut found: BTreeMap<(usize, usize, usize), CallView> = BTreeMap::new();
    for (corpus, wanted) in by_corpus {
        let Some(path) = corpora.get(corpus) else {
            continue;
        };
        let Ok(reader) = CorpusReader::open(path) else {
            continue;
        };
        let lines: BTreeSet<usize> = wanted.iter().map(|p| p.line).collect();
        let reader = reader.only_lines(move |line, _| lines.contains(&line));
        let last = wanted.iter().map(|p| p.line).max().unwrap_or(0);
        for entry in reader {
            if entry.line > last {
                break;
            }
            let Ok(session) = entry.session else {
                continue;
            };
            for p in wanted.iter().filter(|p| p.line == entry.line) {
                if session.id != p.session {
                    continue;
                }
                let entry_cfg = &cfg.strategies[p.strategy];
                let opts = InspectOptions {
                    turn: Some(p.call + 1),
                    tokenizers: cfg.tokenizers.iter().take(1).copied().collect(),
                    max_chars: Some(max_chars),
                };
                let Ok(text) = inspect(&session, entry_cfg.strategy.as_ref(), &opts) else {
                    continue;
                };
                let (trace, prompt) = split_inspect(&text);
                found.insert(
                    (p.corpus, p.line, p.strategy),
                    CallView {
                        strategy: entry_cfg.name.clone(),
                        corpus: crate::engine::corpus_name(path),
                        line: p.line,
                        session: p.session.clone(),
                        call: p.call,
                        facts: p.facts,
                        retained: p.retained,
                        trace,
                        prompt,
                    },
                );
            }
        }
    }
    picks
        .iter()
        .filter_map(|p| found.remove(&(p.corpus, p.line, p.strategy)))
        .collect()
}

/// `recap inspect`'s text of one call, split where the strategy's prompt starts.
fn split_inspect(text: &str) -> (String, String) {
    let mut at = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("── sent by ") || line.contains(" FAILED to render") {
            at = Some(offset);
            break;
        }
        offset += line.len();
    }
    match at {
        Some(i) => (text[..i].to_string(), text[i..].to_string()),
        None => (text.to_string(), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(strategy: usize, facts: u64, retained: u64) -> Pick {
        Pick {
            corpus: 0,
            line: 1,
            session: "s".into(),
            call: 0,
            strategy,
            facts,
            retained,
        }
    }

    #[test]
    fn retention_compares_exactly_and_ties_keep_run_order() {
        assert!(pick(1, 3, 1).lower_than(&pick(1, 2, 1)));
        assert!(!pick(1, 2, 1).lower_than(&pick(1, 4, 2)));
        let t = LowestRetention {
            baseline: 0,
            worst: [(2, pick(2, 4, 2)), (1, pick(1, 2, 1)), (3, pick(3, 5, 0))].into(),
        };
        let order: Vec<usize> = t.picks(2).iter().map(|p| p.strategy).collect();
        assert_eq!(order, [3, 1]);
    }

    #[test]
    fn the_first_call_of_lowest_retention_per_strategy_is_kept_baseline_aside() {
        use crate::engine::{CallRecord, StratOutcome};
        let call = |call: usize, facts: u64, retained: u64| CallRecord {
            call,
            facts,
            retained,
            ..CallRecord::default()
        };
        let strat = |calls: Vec<CallRecord>| StratOutcome {
            applicable: true,
            calls,
            ..StratOutcome::default()
        };
        let outcome = |id: &str, calls: Vec<Vec<CallRecord>>| SessionOutcome {
            id: id.into(),
            form: recap_core::Form::Ptc,
            recorded: Default::default(),
            calls: 3,
            strategies: calls.into_iter().map(strat).collect(),
        };
        let mut t = LowestRetention {
            baseline: 0,
            worst: BTreeMap::new(),
        };
        t.session(
            0,
            1,
            &outcome(
                "a",
                vec![
                    vec![call(0, 4, 0)],
                    vec![call(0, 0, 0), call(1, 4, 2), call(2, 2, 1)],
                ],
            ),
        );
        t.session(
            0,
            2,
            &outcome("b", vec![vec![], vec![call(0, 6, 3), call(1, 3, 1)]]),
        );
        let picks = t.picks(5);
        assert_eq!(picks.len(), 1, "the baseline is never picked");
        let p = &picks[0];
        assert_eq!(
            (p.session.as_str(), p.call, p.facts, p.retained),
            ("b", 1, 3, 1)
        );
    }

    #[test]
    fn inspect_text_splits_at_the_prompt() {
        let (trace, prompt) =
            split_inspect("head\n── recorded turn 1 ──\n  x\n── sent by a: 2 messages ──\n  [0]\n");
        assert_eq!(trace, "head\n── recorded turn 1 ──\n  x\n");
        assert_eq!(prompt, "── sent by a: 2 messages ──\n  [0]\n");
        assert_eq!(
            split_inspect("only\n"),
            ("only\n".to_string(), String::new())
        );
    }
}
