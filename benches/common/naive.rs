//! The two baselines `recap run`'s engine is compared with (the `harness` bench and
//! `examples/engine-cost.rs`): the naive loop, which counts the same prompt tokens the
//! straightforward way with the same tokenizer, and the floor, which parses the corpus
//! and tokenizes each distinct prompt line once.

use super::{applies, each_session_prompt, read_corpus};
use recap_core::{CorpusReader, Message, Session, Strategy};
use recap_harness::counting::prompt_tokens;
use recap_harness::segments::segments;
use recap_harness::{Report, Tokenizer};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

/// Prompt tokens of every call `recap run` replays, counted the straightforward way.
pub fn naive(strategies: &[Arc<dyn Strategy>], tok: &Tokenizer, corpus: &Path) -> u64 {
    let mut total = 0;
    let reader = CorpusReader::open(corpus).expect("corpus opens");
    for entry in reader {
        let session = entry.session.expect("bench corpora are valid");
        each_replayed_prompt(strategies, &session, |messages| {
            total += prompt_tokens(tok, messages);
        });
    }
    total
}

/// Every prompt `recap run` replays from `session`, rendered once: each strategy that
/// renders its form, each call, through one replay per strategy.
pub fn each_replayed_prompt(
    strategies: &[Arc<dyn Strategy>],
    session: &Session,
    mut f: impl FnMut(&[Message]),
) {
    for strategy in strategies {
        if applies(strategy.as_ref(), session) {
            each_session_prompt(strategy.as_ref(), session, &mut f);
        }
    }
}

/// The distinct lines of every prompt `recap run` renders from the corpus (what a
/// floor must tokenize at least once), in a fixed order.
pub fn distinct_prompt_lines(strategies: &[Arc<dyn Strategy>], corpus: &Path) -> Vec<String> {
    let mut lines = BTreeSet::new();
    for session in read_corpus(corpus) {
        each_replayed_prompt(strategies, &session, |messages| {
            for m in messages {
                let texts = m
                    .tool_calls
                    .iter()
                    .flat_map(|c| [c.name.as_str(), c.arguments.as_str()]);
                for text in std::iter::once(m.content.as_str()).chain(texts) {
                    lines.extend(segments(text).map(str::to_string));
                }
            }
        });
    }
    lines.into_iter().collect()
}

/// Parses the corpus and tokenizes each of `lines` once.
pub fn floor(tok: &Tokenizer, corpus: &Path, lines: &[String]) -> usize {
    let reader = CorpusReader::open(corpus).expect("corpus opens");
    let sessions = reader.filter(|e| e.session.is_ok()).count();
    sessions + lines.iter().map(|l| tok.count_tokens(l)).sum::<usize>()
}

/// The prompt tokens of every run of a report (one tokenizer): what `naive` adds up.
pub fn report_total(report: &Report) -> u64 {
    report.runs.iter().map(|r| r.prompt_tokens_total).sum()
}
