//! Condensations in a record: reading them, and the prompt they leave at a call.

use super::{Condensation, RecordError};
use recap_core::{Message, Session};
use serde_json::Value as Json;
use std::collections::BTreeSet;

/// The length of full-history's prompt at the call after `turns` turns.
fn prompt_len(session: &Session, turns: usize) -> usize {
    2 + session.chat_turns[..turns]
        .iter()
        .map(|t| 1 + t.observations.len())
        .sum::<usize>()
}

/// The condensations of a record, checked against the session.
pub(super) fn parse(list: &Json, session: &Session) -> Result<Vec<Condensation>, RecordError> {
    let Some(list) = list.as_array() else {
        return Err(RecordError::BadCondensation {
            index: 0,
            what: format!(
                "expected a list of condensations, found {}",
                recap_core::json_type::json_type_name(list)
            ),
        });
    };
    let mut out: Vec<Condensation> = Vec::with_capacity(list.len());
    for (index, c) in list.iter().enumerate() {
        let bad = |what: String| RecordError::BadCondensation { index, what };
        let after_turns = c
            .get("after_turns")
            .and_then(Json::as_u64)
            .ok_or_else(|| bad("`after_turns` is missing or not a whole number".into()))?
            as usize;
        if after_turns > session.chat_turns.len() {
            return Err(bad(format!(
                "after_turns {after_turns} is past the session's {} turns",
                session.chat_turns.len()
            )));
        }
        if out.last().is_some_and(|p| p.after_turns >= after_turns) {
            return Err(bad(format!(
                "after_turns {after_turns} does not follow the previous condensation's"
            )));
        }
        let len = prompt_len(session, after_turns);
        let mut drop = BTreeSet::new();
        for i in c
            .get("drop")
            .and_then(Json::as_array)
            .unwrap_or(&Vec::new())
        {
            match i.as_u64().map(|i| i as usize) {
                Some(i) if (1..len).contains(&i) => {
                    drop.insert(i);
                }
                _ => {
                    return Err(bad(format!(
                        "`drop` holds {i}: expected positions 1..{len} of the prompt at that call (the system prompt, 0, is never dropped)"
                    )));
                }
            }
        }
        let dropped: BTreeSet<usize> = out
            .iter()
            .flat_map(|p| p.drop.iter().copied())
            .chain(drop.iter().copied())
            .collect();
        let kept = len - dropped.len();
        let summary = match (c.get("summary"), c.get("summary_at")) {
            (None | Some(Json::Null), _) => None,
            (Some(Json::String(text)), Some(at)) => match at.as_u64() {
                Some(at) if at as usize <= kept && at >= 1 => Some((text.clone(), at as usize)),
                _ => {
                    return Err(bad(format!(
                        "`summary_at` must be a position 1..={kept} of what is left of the prompt"
                    )));
                }
            },
            _ => {
                return Err(bad(
                    "expected `summary` (text) with `summary_at` (a position)".into(),
                ));
            }
        };
        out.push(Condensation {
            after_turns,
            drop,
            summary,
        });
    }
    Ok(out)
}

/// The prompt of the call after `k` turns: full-history's `full`, without what every
/// condensation up to then dropped, with the latest one's summary.
pub(super) fn prompt(condensations: &[Condensation], full: Vec<Message>, k: usize) -> Vec<Message> {
    let active: Vec<&Condensation> = condensations
        .iter()
        .filter(|c| c.after_turns <= k)
        .collect();
    let Some(latest) = active.last() else {
        return full;
    };
    let dropped: BTreeSet<usize> = active.iter().flat_map(|c| c.drop.iter().copied()).collect();
    let mut messages: Vec<Message> = full
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !dropped.contains(i))
        .map(|(_, m)| m)
        .collect();
    if let Some((text, at)) = &latest.summary {
        messages.insert((*at).min(messages.len()), Message::user(text.as_str()));
    }
    messages
}
