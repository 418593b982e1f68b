//! The calls where strategies lost the most recorded facts, found while the run streams
//! its sessions, with the texts `recap inspect` shows for them (the recorded trace
//! beside the prompt the strategy sent), taken from the session when its call is picked.

/// Calls of lowest retention a report shows (one per strategy at most): `recap run`,
/// `recap merge` and the Python package alike.
pub const SHOWN_CALLS: usize = 6;
/// Characters of each printed value of those calls (as `recap inspect --max-chars`).
pub const SHOWN_MAX_CHARS: usize = 2_000;

use crate::config::RunConfig;
use crate::inspect::{InspectOptions, inspect};
use crate::outcome::SessionOutcome;
use recap_core::Session;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
        lower(self.facts, self.retained, other)
    }
}

/// Whether `retained` of `facts` is a strictly lower retention than `than`'s.
fn lower(facts: u64, retained: u64, than: &Pick) -> bool {
    u128::from(retained) * u128::from(than.facts) < u128::from(than.retained) * u128::from(facts)
}

/// Keeps, per strategy, the first call of lowest retention (calls with facts only).
/// The baseline is left out: what it misses was never shown to the agent.
pub struct LowestRetention {
    baseline: usize,
    worst: BTreeMap<usize, Pick>,
}

impl LowestRetention {
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

    /// The calls of one session (its call records: `RunConfig::call_records`) that
    /// [`LowestRetention::offer`] would take, at most one per strategy: the session's
    /// first call of lowest retention, when lower than the strategy's pick so far.
    fn session_picks(&self, corpus: usize, line: usize, o: &SessionOutcome) -> Vec<Pick> {
        let mut picks = Vec::new();
        for (s, so) in o.strategies.iter().enumerate() {
            if s == self.baseline || !so.applicable {
                continue;
            }
            let worst = self.worst.get(&s);
            let mut found: Option<Pick> = None;
            for c in so.calls.iter().filter(|c| c.facts > 0) {
                // Compared before the pick is built: most calls are not the lowest.
                let than = found.as_ref().or(worst);
                if than.is_none_or(|w| lower(c.facts, c.retained, w)) {
                    found = Some(Pick {
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
            picks.extend(found);
        }
        picks
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

/// The calls of lowest retention of a run as it folds its sessions, with their texts:
/// when a call becomes its strategy's pick, its texts are taken from the session being
/// folded, so the page is built from what the run read, never from the corpus again.
/// A pick changes rarely, so this costs one `recap inspect` of one call per change.
pub struct LowestCalls<'a> {
    cfg: &'a RunConfig,
    /// Corpus names as the report shows them, in run order.
    corpora: Vec<String>,
    opts: InspectOptions,
    worst: LowestRetention,
    /// Per strategy, the texts of its pick (none when `recap inspect` could not show it).
    views: BTreeMap<usize, CallView>,
}

impl<'a> LowestCalls<'a> {
    /// Texts cut to `max_chars` per printed value, as `recap inspect --max-chars` cuts
    /// them.
    pub fn new(cfg: &'a RunConfig, corpora: Vec<String>, max_chars: usize) -> Self {
        LowestCalls {
            cfg,
            corpora,
            opts: InspectOptions {
                turn: None,
                tokenizers: cfg.tokenizers.iter().take(1).copied().collect(),
                max_chars: Some(max_chars),
            },
            worst: LowestRetention::with_baseline(cfg.baseline),
            views: BTreeMap::new(),
        }
    }

    /// Folds one session (in input order) and its outcome (with call records).
    pub fn session(&mut self, corpus: usize, line: usize, session: &Session, o: &SessionOutcome) {
        for pick in self.worst.session_picks(corpus, line, o) {
            match self.view(session, &pick) {
                Some(view) => self.views.insert(pick.strategy, view),
                None => self.views.remove(&pick.strategy),
            };
            self.worst.offer(pick);
        }
    }

    /// `recap inspect`'s texts of the picked call of `session`.
    fn view(&mut self, session: &Session, pick: &Pick) -> Option<CallView> {
        let entry = self.cfg.strategies.get(pick.strategy)?;
        self.opts.turn = Some(pick.call + 1);
        let text = inspect(session, entry.strategy.as_ref(), &self.opts).ok()?;
        let (trace, prompt) = split_inspect(&text);
        Some(CallView {
            strategy: entry.name.clone(),
            corpus: self.corpora.get(pick.corpus)?.clone(),
            line: pick.line,
            session: pick.session.clone(),
            call: pick.call,
            facts: pick.facts,
            retained: pick.retained,
            trace,
            prompt,
        })
    }

    /// Every strategy's pick with its texts, lowest retention first.
    pub fn all(mut self) -> Vec<(Pick, Option<CallView>)> {
        let picks = self.worst.picks(usize::MAX);
        picks
            .into_iter()
            .map(|p| {
                let view = self.views.remove(&p.strategy);
                (p, view)
            })
            .collect()
    }

    /// The texts of the `n` calls of lowest retention (as [`LowestRetention::picks`]
    /// orders them), those `recap inspect` could show.
    pub fn views(self, n: usize) -> Vec<CallView> {
        self.all()
            .into_iter()
            .take(n)
            .filter_map(|(_, v)| v)
            .collect()
    }
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
        use crate::outcome::{CallRecord, StratOutcome};
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
        let mut t = LowestRetention::with_baseline(0);
        let fold = |t: &mut LowestRetention, line: usize, o: &SessionOutcome| {
            for p in t.session_picks(0, line, o) {
                t.offer(p);
            }
        };
        fold(
            &mut t,
            1,
            &outcome(
                "a",
                vec![
                    vec![call(0, 4, 0)],
                    vec![call(0, 0, 0), call(1, 4, 2), call(2, 2, 1)],
                ],
            ),
        );
        fold(
            &mut t,
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
