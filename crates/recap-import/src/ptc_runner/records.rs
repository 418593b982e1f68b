//! The records of an inspection log, classified, and paired: each model request with
//! its reply and the evaluation that followed it, each capability output with its input.

use crate::problem::Problem;
use serde_json::{Map, Value as Json};
use std::collections::{BTreeMap, BTreeSet};

/// The records of an inspection log that matter, in file order.
pub(super) enum Event<'a> {
    Request {
        line: usize,
        cap: Option<&'a str>,
        args: &'a Map<String, Json>,
    },
    Reply {
        line: usize,
        cap: Option<&'a str>,
        result: &'a Json,
    },
    Evaluation {
        line: usize,
        id: &'a str,
        source: &'a str,
    },
    ToolInput {
        line: usize,
        cap: &'a str,
        eval: &'a str,
        name: &'a str,
        args: &'a Json,
    },
    ToolOutput {
        line: usize,
        cap: &'a str,
        result: &'a Json,
    },
}

/// Record types that are understood and deliberately not mapped.
const IGNORED_RECORDS: &[&str] = &["prelude-source", "mcp-request", "mcp-response"];

fn str_field<'a>(obj: &'a Map<String, Json>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Json::as_str)
}

/// Classifies one record; `Err` is what is wrong with it.
pub(super) fn event(record: &Json, line: usize) -> Result<Option<Event<'_>>, String> {
    let obj = record
        .as_object()
        .ok_or("expected a JSON object per line")?;
    let kind = str_field(obj, "record_type").ok_or("missing string field `record_type`")?;
    if IGNORED_RECORDS.contains(&kind) {
        return Ok(None);
    }
    let payload = obj
        .get("payload")
        .and_then(Json::as_object)
        .ok_or_else(|| format!("{kind} record without an object `payload`"))?;
    let corr = obj.get("correlation").and_then(Json::as_object);
    let corr_str = |key: &str| corr.and_then(|c| str_field(c, key));
    let need = |key: &str| {
        str_field(payload, key)
            .ok_or_else(|| format!("{kind} record without string `payload.{key}`"))
    };
    match kind {
        "evaluation-source" => {
            let id = match corr_str("evaluation_id") {
                Some(id) => id,
                None => need("evaluation_id")?,
            };
            Ok(Some(Event::Evaluation {
                line,
                id,
                source: need("source")?,
            }))
        }
        "capability-input" | "capability-output" => {
            let name = need("name")?;
            let input = kind == "capability-input";
            if name == "llm-request" {
                return Ok(Some(if input {
                    Event::Request {
                        line,
                        cap: corr_str("capability_id"),
                        args: payload
                            .get("arguments")
                            .and_then(Json::as_object)
                            .ok_or("llm-request input without an object `payload.arguments`")?,
                    }
                } else {
                    Event::Reply {
                        line,
                        cap: corr_str("capability_id"),
                        result: payload
                            .get("result")
                            .ok_or("llm-request output without `payload.result`")?,
                    }
                }));
            }
            if str_field(payload, "environment") != Some("mission") {
                return Err(format!(
                    "{kind} {name:?} outside the mission environment is not a known capability"
                ));
            }
            let cap = corr_str("capability_id").ok_or_else(|| {
                format!("{kind} {name:?} without string `correlation.capability_id`")
            })?;
            Ok(Some(if input {
                Event::ToolInput {
                    line,
                    cap,
                    eval: need("evaluation_id")?,
                    name,
                    args: payload.get("arguments").unwrap_or(&Json::Null),
                }
            } else {
                Event::ToolOutput {
                    line,
                    cap,
                    result: payload.get("result").ok_or_else(|| {
                        format!("capability-output {name:?} without `payload.result`")
                    })?,
                }
            }))
        }
        other => Err(format!(
            "unknown record type {other:?}; expected capability-input, capability-output, \
             evaluation-source, prelude-source, mcp-request or mcp-response"
        )),
    }
}

/// One model call and what ran because of it.
pub(super) struct Draft<'a> {
    pub request_line: usize,
    pub request: &'a Map<String, Json>,
    pub reply_line: usize,
    pub reply: &'a Json,
    pub eval: Option<(usize, &'a str, &'a str)>,
}

/// A mission capability call as logged.
pub(super) struct CallDraft<'a> {
    pub eval: &'a str,
    pub name: &'a str,
    pub args: &'a Json,
    pub result: Option<&'a Json>,
    pub line: usize,
}

/// The model calls of a run, the capability calls, and what did not pair.
pub(super) struct Paired<'a> {
    pub drafts: Vec<Draft<'a>>,
    pub calls: Vec<CallDraft<'a>>,
    /// Evaluations that follow no model reply (the workflow's own).
    pub extra_evals: BTreeSet<&'a str>,
    /// A last request without a reply: it still shows the feedback of the turn before.
    pub trailing: Option<(usize, &'a Map<String, Json>)>,
}

/// Pairs requests with replies, evaluations with turns, outputs with inputs. A request
/// without its reply cuts the session there (one problem).
pub(super) fn pair<'a>(
    events: &[Event<'a>],
    problem: &dyn Fn(usize, String) -> Problem,
    problems: &mut Vec<Problem>,
) -> Paired<'a> {
    let mut drafts: Vec<Draft> = Vec::new();
    let mut pending: Option<(usize, Option<&str>, &Map<String, Json>)> = None;
    let mut cut = false;
    let mut extra_evals = BTreeSet::new();
    let mut calls: Vec<CallDraft> = Vec::new();
    let mut call_index: BTreeMap<&str, usize> = BTreeMap::new();
    for e in events {
        match *e {
            Event::Request { line, cap, args } => {
                if let Some((prev, _, _)) = pending {
                    problems.push(problem(
                        prev,
                        format!(
                            "the llm-request at line {prev} has no reply; the session is cut before that turn"
                        ),
                    ));
                    cut = true;
                    break;
                }
                pending = Some((line, cap, args));
            }
            Event::Reply { line, cap, result } => match pending.take() {
                Some((request_line, request_cap, request)) if request_cap == cap => {
                    drafts.push(Draft {
                        request_line,
                        request,
                        reply_line: line,
                        reply: result,
                        eval: None,
                    })
                }
                Some((request_line, _, _)) => {
                    problems.push(problem(
                        line,
                        format!(
                            "llm-request reply's capability id does not match the request at line {request_line}; the session is cut here"
                        ),
                    ));
                    cut = true;
                    break;
                }
                None => problems.push(problem(
                    line,
                    "llm-request reply without a request before it".into(),
                )),
            },
            Event::Evaluation {
                line,
                id: eval,
                source,
            } => match drafts.last_mut() {
                Some(d) if d.eval.is_none() && pending.is_none() => {
                    d.eval = Some((line, eval, source))
                }
                _ => {
                    extra_evals.insert(eval);
                }
            },
            Event::ToolInput {
                line,
                cap,
                eval,
                name,
                args,
            } => {
                call_index.insert(cap, calls.len());
                calls.push(CallDraft {
                    eval,
                    name,
                    args,
                    result: None,
                    line,
                });
            }
            Event::ToolOutput { line, cap, result } => match call_index.get(cap) {
                Some(&i) => calls[i].result = Some(result),
                None => problems.push(problem(
                    line,
                    format!(
                        "capability-output {cap:?} has no capability-input; the call is not imported"
                    ),
                )),
            },
        }
    }
    let mut trailing = None;
    if !cut && let Some((line, _, args)) = pending {
        problems.push(problem(
            line,
            "the last llm-request has no reply (is the file cut off?); that turn is not imported"
                .into(),
        ));
        trailing = Some((line, args));
    }
    Paired {
        drafts,
        calls,
        extra_evals,
        trailing,
    }
}
