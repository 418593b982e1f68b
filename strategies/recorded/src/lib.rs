//! The `recorded` pseudo-strategy (chat form): at each call, what the production agent
//! itself sent, as its log records it, so that a report shows the agent's own context
//! policy beside recap's strategies.
//!
//! It is not a compression policy of recap's, and it replays only sessions whose
//! importer knows what the agent sent: the session's `meta.recorded_context` (written
//! by the `claude-code`, `tau2` and `openhands` importers; docs/importers.md):
//!
//! ```json
//! "recorded_context": {"sent": "history", "restarts": [{"after_turns": 3, "observation": 1}]}
//! ```
//!
//! `sent: "history"`: at every call the agent sent its system prompt and its whole
//! history — which is `full-history` — except that each *restart* starts the history
//! over. A restart `{after_turns: c, observation: j}` is the agent's own compaction:
//! from the call after `c` turns on, the agent sent its system prompt, then the
//! observations of turn `c` from the `j`-th (0-based; the first of them is the
//! compaction summary, a USER observation), then the turns after `c`. The mission and
//! everything before the summary are gone, as they were for the agent — so `recorded`
//! does not declare `mission-verbatim`, and its retention shows what the compaction
//! forgot.
//!
//! A record may instead hold *condensations* (OpenHands' own, `openhands-sdk`):
//! `{after_turns: c, drop: [i, …], summary?: text, summary_at?: n}`. From the call after
//! `c` turns on, the agent sent full-history's prompt without the messages at positions
//! `drop` (0 = the system prompt, 1 = the mission, then each turn's messages in order;
//! the drops of every earlier condensation too), with the latest condensation's summary
//! as a USER message at position `summary_at` of what is left.
//!
//! Other sessions are *not applicable* (never rendered). A session with a malformed
//! record is applicable and fails to render with the reason, so it is counted, never
//! dropped.

use recap_core::{
    Answer, Form, Invariant, Message, PromptDelta, RenderError, RenderRequest, Replay, Session,
    SpecError, Strategy, StrategyInfo, StrategySpec,
};
use recap_history::transcript::Transcript;
use serde_json::Value as Json;
use std::sync::Arc;

pub const NAME: &str = "recorded";

/// The session `meta` key an importer writes the record into.
pub const META_KEY: &str = recap_core::session::RECORDED_CONTEXT;

/// The one sending policy recorded so far: the whole history, restarted at compactions.
pub const SENT_HISTORY: &str = "history";

/// The pseudo-strategy; it has no options.
#[derive(Debug, Clone, Copy, Default)]
pub struct Recorded;

pub fn info() -> StrategyInfo {
    StrategyInfo {
        name: NAME.to_string(),
        summary: "what the production agent itself sent at each call, as its log records it \
                  (its whole history, started over at its own compactions); chat sessions \
                  without such a record are n/a"
            .to_string(),
        options: Vec::new(),
        origin: "built-in".to_string(),
    }
}

pub fn build(spec: &StrategySpec) -> Result<Arc<dyn Strategy>, SpecError> {
    spec.no_options()?;
    Ok(Arc::new(Recorded))
}

/// Why a session's `meta.recorded_context` cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error(
        "meta.{META_KEY}: expected an object {{\"sent\": \"history\", \"restarts\": [...]}}, found {found}"
    )]
    NotAnObject { found: &'static str },
    #[error(
        "meta.{META_KEY}.sent: expected \"{SENT_HISTORY}\" (the only sending policy recap knows), found {found}"
    )]
    UnknownPolicy { found: String },
    #[error(
        "meta.{META_KEY}.{field}: unknown key (expected `sent`, and `restarts` or `condensations`)"
    )]
    UnknownKey { field: String },
    #[error("meta.{META_KEY}.restarts[{index}]: {what}")]
    BadRestart { index: usize, what: String },
    #[error("meta.{META_KEY}.condensations[{index}]: {what}")]
    BadCondensation { index: usize, what: String },
    #[error("session {session:?} has no meta.{META_KEY}: nothing records what its agent sent")]
    NoRecord { session: String },
}

impl From<RecordError> for RenderError {
    fn from(e: RecordError) -> Self {
        RenderError::new("bad_record", e.to_string())
    }
}

/// A point where the agent started its history over (its own compaction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restart {
    /// The number of turns completed when the agent compacted.
    pub after_turns: usize,
    /// The index, among that turn's observations, of the compaction summary.
    pub observation: usize,
}

/// A point where the agent condensed its history (OpenHands' `Condensation`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condensation {
    /// The number of turns completed when the agent condensed.
    pub after_turns: usize,
    /// Positions in full-history's prompt of the messages it forgot.
    pub drop: std::collections::BTreeSet<usize>,
    /// The summary the agent sent in their place, and where.
    pub summary: Option<(String, usize)>,
}

/// What a session's log records of what its agent sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// In order of `after_turns`, strictly increasing.
    pub restarts: Vec<Restart>,
    /// In order of `after_turns`, strictly increasing; never beside restarts.
    pub condensations: Vec<Condensation>,
}

/// `recorded`'s replay: [`Record::prompt`], with the record read once per session and
/// each turn's messages rendered once (full-history's transcript): rendering every turn
/// again at every call was quadratic in the session's length, and the sessions with a
/// record (Claude Code's above all) are long.
#[derive(Default)]
struct Kept {
    /// Read at the first call; a malformed record is read again, and fails with its
    /// reason, at every call.
    record: Option<Record>,
    transcript: Transcript,
}

impl Replay for Kept {
    fn call(&mut self, session: &Session, k: usize, _held: usize) -> Answer {
        let record = match &mut self.record {
            Some(record) => record,
            None => self.record.insert(Record::of(session)?),
        };
        if !record.condensations.is_empty() {
            return record.prompt(session, k).map(PromptDelta::whole);
        }
        let request = RenderRequest::for_call(session, k)?;
        let transcript = self.transcript.advanced(&request);
        let Some(r) = record.restart_before(k) else {
            return Ok(PromptDelta::whole(transcript.prompt(k)));
        };
        let observations = &session.chat_turns[r.after_turns - 1].observations[r.observation..];
        let turns = transcript.turns(r.after_turns, k);
        let mut messages = Vec::with_capacity(1 + observations.len() + turns.len());
        messages.push(transcript.opening()[0].clone());
        messages.extend(observations.iter().map(recap_core::Observation::to_message));
        messages.extend_from_slice(turns);
        Ok(PromptDelta::whole(messages))
    }
}

impl Record {
    /// The record of `session`, checked against its turns.
    pub fn of(session: &Session) -> Result<Record, RecordError> {
        let value = session
            .meta
            .get(META_KEY)
            .ok_or_else(|| RecordError::NoRecord {
                session: session.id.clone(),
            })?;
        Record::parse(value, session)
    }

    fn parse(value: &Json, session: &Session) -> Result<Record, RecordError> {
        let obj = value.as_object().ok_or(RecordError::NotAnObject {
            found: recap_core::json_type::json_type_name(value),
        })?;
        if let Some(key) = obj
            .keys()
            .find(|k| !matches!(k.as_str(), "sent" | "restarts" | "condensations"))
        {
            return Err(RecordError::UnknownKey { field: key.clone() });
        }
        match obj.get("sent") {
            Some(Json::String(s)) if s == SENT_HISTORY => {}
            other => {
                return Err(RecordError::UnknownPolicy {
                    found: other.map_or("nothing".to_string(), |v| v.to_string()),
                });
            }
        }
        let condensations = match obj.get("condensations") {
            None => Vec::new(),
            Some(list) => condensations::parse(list, session)?,
        };
        if !condensations.is_empty() && obj.contains_key("restarts") {
            return Err(RecordError::UnknownKey {
                field: "restarts (beside condensations)".into(),
            });
        }
        let list = match obj.get("restarts") {
            None => {
                return Ok(Record {
                    restarts: vec![],
                    condensations,
                });
            }
            Some(Json::Array(list)) => list,
            Some(other) => {
                return Err(RecordError::BadRestart {
                    index: 0,
                    what: format!(
                        "expected a list of restarts, found {}",
                        recap_core::json_type::json_type_name(other)
                    ),
                });
            }
        };
        let mut restarts: Vec<Restart> = Vec::with_capacity(list.len());
        for (index, r) in list.iter().enumerate() {
            let bad = |what: String| RecordError::BadRestart { index, what };
            let field = |key: &str| {
                r.get(key).and_then(Json::as_u64).ok_or_else(|| {
                    bad(format!(
                        "expected {{\"after_turns\": <turns>, \"observation\": <index>}}, `{key}` is missing or not a whole number"
                    ))
                })
            };
            let after_turns = field("after_turns")? as usize;
            let observation = field("observation")? as usize;
            if after_turns == 0 || after_turns > session.chat_turns.len() {
                return Err(bad(format!(
                    "after_turns {after_turns} is not a turn of the session (1..={})",
                    session.chat_turns.len()
                )));
            }
            if restarts
                .last()
                .is_some_and(|p| p.after_turns >= after_turns)
            {
                return Err(bad(format!(
                    "after_turns {after_turns} does not follow the previous restart's"
                )));
            }
            let observations = &session.chat_turns[after_turns - 1].observations;
            match observations.get(observation) {
                Some(recap_core::Observation::User { .. }) => {}
                Some(_) => {
                    return Err(bad(format!(
                        "observation {observation} of turn {after_turns} is a tool result, not the compaction summary (a USER observation)"
                    )));
                }
                None => {
                    return Err(bad(format!(
                        "turn {after_turns} has {} observations; there is no observation {observation}",
                        observations.len()
                    )));
                }
            }
            restarts.push(Restart {
                after_turns,
                observation,
            });
        }
        Ok(Record {
            restarts,
            condensations: Vec::new(),
        })
    }

    /// The last restart at or before the call after `k` completed turns.
    fn restart_before(&self, k: usize) -> Option<&Restart> {
        self.restarts.iter().rev().find(|r| r.after_turns <= k)
    }

    /// The prompt the agent sent for the call after `k` completed turns.
    pub fn prompt(&self, session: &Session, k: usize) -> Result<Vec<Message>, RenderError> {
        let request = RenderRequest::for_call(session, k)?;
        if !self.condensations.is_empty() {
            return Ok(condensations::prompt(
                &self.condensations,
                recap_history::render(&request),
                k,
            ));
        }
        let Some(r) = self.restart_before(k) else {
            return Ok(recap_history::render(&request));
        };
        let summary_turn = &session.chat_turns[r.after_turns - 1];
        let mut messages = vec![Message::system(request.system_prompt)];
        messages.extend(
            summary_turn.observations[r.observation..]
                .iter()
                .map(recap_core::Observation::to_message),
        );
        recap_history::push_chat_turns(&mut messages, &session.chat_turns[r.after_turns..k]);
        Ok(messages)
    }
}

impl Strategy for Recorded {
    fn spec(&self) -> String {
        NAME.to_string()
    }

    fn open(&self) -> Box<dyn Replay> {
        Box::new(Kept::default())
    }

    /// Not `mission-verbatim`: after its own compaction the agent no longer sent the
    /// mission, and this replays what it sent.
    fn invariants(&self) -> Vec<Invariant> {
        vec![
            Invariant::SystemFirst,
            Invariant::RoleAlternation,
            Invariant::Deterministic,
        ]
    }

    fn forms(&self) -> Vec<Form> {
        vec![Form::Chat]
    }

    fn applies_to(&self, session: &Session) -> bool {
        session.form == Form::Chat && session.meta.contains_key(META_KEY)
    }

    fn scope(&self) -> Option<String> {
        Some(format!(
            "chat sessions whose log records what the agent sent (meta.{META_KEY})"
        ))
    }

    fn replays_record(&self) -> bool {
        true
    }
}

mod condensations;
#[cfg(test)]
mod tests;
