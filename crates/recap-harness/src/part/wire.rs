//! One line of a part's `outcomes.jsonl`: a corpus entry of the shard — a replayed
//! session's outcome, or a rejection — as the run folds it.
//!
//! The outcome is carried whole, minus what the part keeps elsewhere: the per-call
//! records are its `calls.csv` rows and the prompt dumps its `prompts/` files, and the
//! record says how many bytes of each belong to the session. Conversions destructure
//! every field, so a field added to [`SessionOutcome`] cannot be left out unnoticed.

use crate::calls::RecordedUsage;
use crate::outcome::{CallError, SessionOutcome, StratOutcome, TokOutcome};
use recap_core::invariants::Violation;
use recap_core::{Form, RejectedSession, RenderError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

/// A corpus entry of the shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The corpus's index in the run.
    pub corpus: usize,
    /// 1-based; 0 for a file that could not be read.
    pub line: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<WireOutcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<WireRejected>,
    /// Bytes of the session's rows in the part's `calls.csv`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub calls_bytes: u64,
    /// Bytes of the session's lines in each strategy's prompt dump (with `--dump-prompts`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_bytes: Vec<u64>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireRejected {
    pub session: Option<String>,
    pub field: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireOutcome {
    pub id: String,
    pub form: String,
    #[serde(default)]
    pub recorded: WireRecorded,
    pub calls: usize,
    pub strategies: Vec<WireStrategy>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireRecorded {
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_calls: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_input: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_input: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WireStrategy {
    #[serde(default, skip_serializing_if = "is_false")]
    pub applicable: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub complete: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub render_ns: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub render_errors: Vec<WireCallError>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<WireViolation>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub facts: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retained: u64,
    pub toks: Vec<WireTokens>,
}

fn is_false(v: &bool) -> bool {
    !*v
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireCallError {
    pub call: usize,
    pub kind: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireViolation {
    pub call: usize,
    pub invariant: String,
    pub detail: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WireTokens {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_call: Vec<u64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached: u64,
    /// Exact: serde_json writes the shortest text that reads back as the same float.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fidelity: Vec<f64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tokenized: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reused: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub segments_tokenized: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub segments_reused: u64,
}

/// A record that does not describe an outcome the run could have folded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("unknown session form {0:?}")]
    Form(String),
    #[error("a record holds both a session and a rejection, or neither")]
    Kind,
    #[error("a replay fidelity that is not a finite number")]
    Fidelity,
}

impl From<&SessionOutcome> for WireOutcome {
    fn from(o: &SessionOutcome) -> Self {
        let SessionOutcome {
            id,
            form,
            recorded,
            calls,
            strategies,
        } = o;
        let RecordedUsage {
            cache_calls,
            cache_input,
            cache_read,
            run_input,
        } = *recorded;
        WireOutcome {
            id: id.clone(),
            form: form.as_str().to_string(),
            recorded: WireRecorded {
                cache_calls,
                cache_input,
                cache_read,
                run_input,
            },
            calls: *calls,
            strategies: strategies.iter().map(WireStrategy::from).collect(),
        }
    }
}

impl From<&StratOutcome> for WireStrategy {
    fn from(s: &StratOutcome) -> Self {
        // `dumps` and `calls` are the part's prompt files and calls.csv rows.
        let StratOutcome {
            applicable,
            complete,
            render_ns,
            render_errors,
            violations,
            facts,
            retained,
            toks,
            dumps: _,
            calls: _,
        } = s;
        WireStrategy {
            applicable: *applicable,
            complete: *complete,
            render_ns: render_ns.clone(),
            render_errors: render_errors
                .iter()
                .map(|e| WireCallError {
                    call: e.call,
                    kind: e.error.kind.clone(),
                    message: e.error.message.clone(),
                })
                .collect(),
            violations: violations
                .iter()
                .map(|v| WireViolation {
                    call: v.call,
                    invariant: v.invariant.to_string(),
                    detail: v.detail.clone(),
                })
                .collect(),
            facts: *facts,
            retained: *retained,
            toks: toks.iter().map(WireTokens::from).collect(),
        }
    }
}

impl From<&TokOutcome> for WireTokens {
    fn from(t: &TokOutcome) -> Self {
        let TokOutcome {
            per_call,
            cached,
            fidelity,
            tokenized,
            reused,
            segments_tokenized,
            segments_reused,
        } = t;
        WireTokens {
            per_call: per_call.clone(),
            cached: *cached,
            fidelity: fidelity.clone(),
            tokenized: *tokenized,
            reused: *reused,
            segments_tokenized: *segments_tokenized,
            segments_reused: *segments_reused,
        }
    }
}

impl WireOutcome {
    /// The outcome as the run folded it (without per-call records or prompt dumps).
    pub fn into_outcome(self) -> Result<SessionOutcome, WireError> {
        let form = Form::ALL
            .into_iter()
            .find(|f| f.as_str() == self.form)
            .ok_or(WireError::Form(self.form))?;
        let r = self.recorded;
        Ok(SessionOutcome {
            id: self.id,
            form,
            recorded: RecordedUsage {
                cache_calls: r.cache_calls,
                cache_input: r.cache_input,
                cache_read: r.cache_read,
                run_input: r.run_input,
            },
            calls: self.calls,
            strategies: self
                .strategies
                .into_iter()
                .map(WireStrategy::into_outcome)
                .collect::<Result<_, _>>()?,
        })
    }
}

impl WireStrategy {
    fn into_outcome(self) -> Result<StratOutcome, WireError> {
        Ok(StratOutcome {
            applicable: self.applicable,
            complete: self.complete,
            render_ns: self.render_ns,
            render_errors: self
                .render_errors
                .into_iter()
                .map(|e| CallError {
                    call: e.call,
                    error: RenderError::new(e.kind, e.message),
                })
                .collect(),
            violations: self
                .violations
                .into_iter()
                .map(|v| Violation {
                    call: v.call,
                    invariant: intern(&v.invariant),
                    detail: v.detail,
                })
                .collect(),
            facts: self.facts,
            retained: self.retained,
            toks: self
                .toks
                .into_iter()
                .map(|t| {
                    if t.fidelity.iter().any(|f| !f.is_finite()) {
                        return Err(WireError::Fidelity);
                    }
                    Ok(TokOutcome {
                        per_call: t.per_call,
                        cached: t.cached,
                        fidelity: t.fidelity,
                        tokenized: t.tokenized,
                        reused: t.reused,
                        segments_tokenized: t.segments_tokenized,
                        segments_reused: t.segments_reused,
                    })
                })
                .collect::<Result<_, _>>()?,
            dumps: Vec::new(),
            calls: Vec::new(),
        })
    }
}

impl From<&RejectedSession> for WireRejected {
    fn from(r: &RejectedSession) -> Self {
        WireRejected {
            session: r.session_id.clone(),
            field: r.field.clone(),
            message: r.message.clone(),
        }
    }
}

impl WireRejected {
    pub fn into_rejected(self, file: &Path, line: usize) -> RejectedSession {
        RejectedSession {
            file: file.to_path_buf(),
            line,
            session_id: self.session,
            field: self.field,
            message: self.message,
        }
    }
}

impl Record {
    /// The entry as the driver hands it to the fold.
    pub fn into_entry(
        self,
        corpus_path: &Path,
    ) -> Result<Result<SessionOutcome, RejectedSession>, WireError> {
        match (self.session, self.rejected) {
            (Some(o), None) => Ok(Ok(o.into_outcome()?)),
            (None, Some(r)) => Ok(Err(r.into_rejected(corpus_path, self.line))),
            _ => Err(WireError::Kind),
        }
    }
}

/// Invariant ids live as `&'static str` in a [`Violation`]; each distinct id read back is
/// kept once for the life of the process (a run has a handful).
fn intern(id: &str) -> &'static str {
    static IDS: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut ids = IDS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(&known) = ids.get(id) {
        return known;
    }
    let leaked: &'static str = Box::leak(id.to_string().into_boxed_str());
    ids.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome() -> SessionOutcome {
        SessionOutcome {
            id: "s\n1".into(),
            form: Form::Chat,
            recorded: RecordedUsage {
                cache_calls: 2,
                cache_input: 100,
                cache_read: 60,
                run_input: Some(7),
            },
            calls: 2,
            strategies: vec![
                StratOutcome::not_applicable(2),
                StratOutcome {
                    applicable: true,
                    complete: false,
                    render_ns: vec![10, 20],
                    render_errors: vec![CallError {
                        call: 1,
                        error: RenderError::new("panic", "boom"),
                    }],
                    violations: vec![Violation {
                        call: 0,
                        invariant: "tool-pairing",
                        detail: "d".into(),
                    }],
                    facts: 4,
                    retained: 3,
                    toks: vec![
                        TokOutcome {
                            per_call: vec![5, 9],
                            cached: 4,
                            fidelity: vec![0.1 + 0.2, 1.0 / 3.0],
                            tokenized: 1,
                            reused: 2,
                            segments_tokenized: 3,
                            segments_reused: 4,
                        },
                        TokOutcome::default(),
                    ],
                    dumps: Vec::new(),
                    calls: Vec::new(),
                },
            ],
        }
    }

    #[test]
    fn an_outcome_reads_back_as_it_was_written_floats_to_the_bit() {
        let o = outcome();
        let line = serde_json::to_string(&WireOutcome::from(&o)).unwrap();
        let back: WireOutcome = serde_json::from_str(&line).unwrap();
        let got = back.into_outcome().unwrap();
        assert_eq!(format!("{got:?}"), format!("{o:?}"));
        let f = &got.strategies[1].toks[0].fidelity;
        assert_eq!(f[0].to_bits(), (0.1f64 + 0.2).to_bits());
        // Not applicable and default counts take no room.
        assert!(line.contains(r#""strategies":[{"toks":[{},{}]}"#), "{line}");
    }

    #[test]
    fn a_record_is_a_session_or_a_rejection() {
        let bad = Record {
            corpus: 0,
            line: 3,
            session: None,
            rejected: None,
            calls_bytes: 0,
            prompt_bytes: Vec::new(),
        };
        assert_eq!(bad.into_entry(Path::new("c")).unwrap_err(), WireError::Kind);
        let rejected = Record {
            rejected: Some(WireRejected {
                session: None,
                field: "json".into(),
                message: "m".into(),
            }),
            corpus: 0,
            line: 3,
            session: None,
            calls_bytes: 0,
            prompt_bytes: Vec::new(),
        };
        let r = rejected
            .into_entry(Path::new("c.jsonl"))
            .unwrap()
            .unwrap_err();
        assert_eq!((r.line, r.file.as_path()), (3, Path::new("c.jsonl")));
        let mut w = WireOutcome::from(&outcome());
        w.form = "lisp".into();
        assert_eq!(
            w.into_outcome().unwrap_err(),
            WireError::Form("lisp".into())
        );
    }

    #[test]
    fn invariant_ids_are_kept_once() {
        let a = intern("some-invariant");
        let b = intern(&String::from("some-invariant"));
        assert!(std::ptr::eq(a, b));
    }
}
