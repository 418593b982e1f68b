//! One inspection log → one session: classify its records, pair them, read the mission
//! and system prompt from the first request, then build one turn per model call.

use super::feedback::{
    DefCount, error_from_feedback, failed_call_error, feedback_in, infer_status, success_prints,
    usage,
};
use super::records::{CallDraft, Draft, Event, Paired, event, pair};
use super::trace::{Trace, read_trace};
use super::{Layout, ResultsCache, assistant_text, call_program, layout};
use crate::convert::{Keys, value_from_json};
use crate::lisp;
use crate::problem::Problem;
use crate::text::{JsonLine, json_lines, read_file};
use recap_core::{Session, ToolCall, Turn, TurnError};
use serde_json::{Map, Value as Json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Where the problems of one run go: its file, its session, and the list.
struct Report<'p> {
    file: &'p Path,
    id: &'p str,
    problems: &'p mut Vec<Problem>,
}

impl Report<'_> {
    /// A lossy problem at `line`.
    fn lossy(&mut self, line: usize, message: String) {
        self.problems.push(
            Problem::lossy(self.file, message)
                .at_line(line)
                .in_session(self.id),
        );
    }

    /// A lossy problem at `line` of turn `number`.
    fn in_turn(&mut self, number: u32, line: usize, message: String) {
        self.problems.push(
            Problem::lossy(self.file, message)
                .at_line(line)
                .in_session(self.id)
                .in_turn(number),
        );
    }

    /// Input not imported, at `line` (0: the whole run).
    fn skipped(&mut self, line: usize, message: impl Into<String>) {
        let p = Problem::skipped(self.file, message).in_session(self.id);
        self.problems
            .push(if line > 0 { p.at_line(line) } else { p });
    }
}

pub(super) fn import_run(
    file: &Path,
    results: &mut ResultsCache,
    problems: &mut Vec<Problem>,
) -> Option<Session> {
    let text = read_file(file, problems)?;
    let records = json_lines(file, &text, problems);
    let layout = layout(file);
    let id = match &layout.arm {
        Some(arm) => format!("{arm}/{}", layout.run),
        None => layout.run.clone(),
    };
    let mut report = Report {
        file,
        id: &id,
        problems,
    };
    let (events, run_id) = classify(&records, &mut report);
    let skipped =
        |line: usize, msg: String| Problem::skipped(file, msg).at_line(line).in_session(&id);
    let paired = pair(&events, &skipped, report.problems);
    if paired.drafts.is_empty() {
        report.skipped(
            0,
            "no llm-request with a reply: nothing to import (is this a ptc-runner inspection log?)",
        );
        return None;
    }
    let (mission, system_prompt) = opening(&paired.drafts, &mut report)?;
    let trace = read_trace(layout.traces.as_deref(), report.problems);
    if !trace.found {
        let message = match &layout.traces {
            Some(t) => format!(
                "no traces file at {}: turn status is inferred from the feedback text",
                t.display()
            ),
            None => "not under <arm>/inspect/<run>/: no traces file, turn status is inferred from the feedback text".into(),
        };
        report
            .problems
            .push(Problem::lossy(file, message).in_session(&id));
    }
    let (turns, truncated) = build_turns(&paired, &trace, &mut report);
    if turns.is_empty() {
        return None;
    }
    let meta = session_meta(
        file,
        &layout,
        run_id,
        &trace,
        &paired,
        truncated,
        results,
        report.problems,
    );
    Some(crate::ptc_session(id, mission, system_prompt, turns, meta))
}

/// Pass 1: the records that matter, in file order, and the run id; a record that
/// cannot be classified is a skipped problem.
fn classify<'a>(records: &'a [JsonLine], report: &mut Report) -> (Vec<Event<'a>>, Option<&'a str>) {
    let mut events = Vec::new();
    let mut run_id = None;
    for JsonLine { line, value } in records {
        if run_id.is_none() {
            run_id = value.get("run_id").and_then(Json::as_str);
        }
        match event(value, *line) {
            Ok(Some(e)) => events.push(e),
            Ok(None) => {}
            Err(msg) => report.skipped(*line, format!("record not imported: {msg}")),
        }
    }
    (events, run_id)
}

/// The mission (the first request's first user message) and the system prompt (its
/// `system`); `None` when there is no mission.
fn opening(drafts: &[Draft], report: &mut Report) -> Option<(String, String)> {
    let first = drafts[0].request;
    let first_line = drafts[0].request_line;
    let mission = match first
        .get("messages")
        .and_then(Json::as_array)
        .and_then(|m| m.first())
    {
        Some(m) if m.get("role").and_then(Json::as_str) == Some("user") => {
            match m.get("content").and_then(Json::as_str) {
                Some(c) if !c.trim().is_empty() => c.to_string(),
                _ => {
                    report.skipped(first_line, "the first user message has no text: no mission");
                    return None;
                }
            }
        }
        _ => {
            report.skipped(
                first_line,
                "the first llm-request does not start with a user message (the mission)",
            );
            return None;
        }
    };
    let system_prompt = match first.get("system").and_then(Json::as_str) {
        Some(s) => s.to_string(),
        None => {
            report.lossy(
                first_line,
                "the first llm-request has no string `system`; system prompt left empty".into(),
            );
            String::new()
        }
    };
    for d in &drafts[1..] {
        if d.request.get("system").and_then(Json::as_str) != Some(system_prompt.as_str()) {
            report.lossy(
                d.request_line,
                "this request's system prompt differs from the first one; the session keeps the first".into(),
            );
        }
    }
    Some((mission, system_prompt))
}

/// Pass 3: one turn per model call, until a reply that is not `ok`; with the number of
/// observations the runner cut.
fn build_turns(paired: &Paired, trace: &Trace, report: &mut Report) -> (Vec<Turn>, usize) {
    let mut calls_by_eval: BTreeMap<&str, Vec<&CallDraft>> = BTreeMap::new();
    for c in &paired.calls {
        calls_by_eval.entry(c.eval).or_default().push(c);
    }
    let mut turns = Vec::new();
    let mut memory = DefCount::default();
    let mut truncated = 0usize;
    for (k, d) in paired.drafts.iter().enumerate() {
        // The next request shows the feedback, and the history the model saw.
        let next = match paired.drafts.get(k + 1) {
            Some(next) => Some((next.request_line, next.request)),
            None => paired.trailing,
        };
        let calls = d
            .eval
            .and_then(|(_, e, _)| calls_by_eval.get(e))
            .cloned()
            .unwrap_or_default();
        let call = ModelCall {
            number: k as u32 + 1,
            draft: d,
            next,
            calls: &calls,
        };
        let Some((turn, was_truncated)) = turn(&call, trace, &mut memory, report) else {
            break;
        };
        truncated += usize::from(was_truncated);
        turns.push(turn);
    }
    (turns, truncated)
}

/// One model call with what the turn is built from.
struct ModelCall<'d, 'a> {
    number: u32,
    draft: &'d Draft<'a>,
    /// The next request (line and arguments), which shows this turn's feedback.
    next: Option<(usize, &'a Map<String, Json>)>,
    /// The mission capability calls of the turn's evaluation.
    calls: &'d [&'d CallDraft<'a>],
}

/// The turn of one model call, and whether its observation was cut; `None` when its
/// reply is not `ok` (the session is cut there).
fn turn(
    call: &ModelCall,
    trace: &Trace,
    memory: &mut DefCount,
    report: &mut Report,
) -> Option<(Turn, bool)> {
    let (d, number) = (call.draft, call.number);
    let reply = match (
        d.reply.get("status").and_then(Json::as_str),
        d.reply.get("value"),
    ) {
        (Some("ok"), Some(v)) if v.is_object() => v,
        (status, _) => {
            report.problems.push(
                Problem::skipped(
                    report.file,
                    format!(
                        "llm-request reply has status {} and no object `value`; the session is cut here",
                        status.unwrap_or("(none)")
                    ),
                )
                .at_line(d.reply_line)
                .in_session(report.id)
                .in_turn(number),
            );
            return None;
        }
    };
    let content = reply.get("content").and_then(Json::as_str);
    let tool_calls: &[Json] = reply
        .get("tool_calls")
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let raw_response = assistant_text(content, tool_calls);
    let protocol_error = match tool_calls {
        [one] if call_program(one).is_some() => None,
        _ => Some(format!(
            "protocol error: the reply made {} tool calls; exactly one run_ptc_lisp call with a program is expected",
            tool_calls.len()
        )),
    };
    let program = tool_calls
        .iter()
        .find_map(call_program)
        .unwrap_or_default()
        .to_string();
    let feedback = call.next.and_then(|(line, next)| {
        feedback_in(d.request, next, &raw_response, &mut |msg| {
            report.in_turn(number, line, msg)
        })
    });
    if let Some((line, _, source)) = d.eval
        && source != program
        && protocol_error.is_none()
    {
        report.in_turn(
            number,
            line,
            "the evaluated source differs from the program in the reply; the turn keeps the reply's program".into(),
        );
    }
    if d.eval.is_none() && protocol_error.is_none() {
        report.in_turn(
            number,
            d.reply_line,
            "no evaluation-source follows this reply; tool calls unknown".into(),
        );
    }
    let (status, defined_count) = match d.eval.and_then(|(_, e, _)| trace.evals.get(e)) {
        Some((s, dc)) => (Some(s.as_str()), *dc),
        None => (None, None),
    };
    let status = status
        .map(str::to_string)
        .or_else(|| infer_status(feedback.as_deref(), &program, call.next.is_none()));
    let tool_calls_out = tool_calls_of(call, report);
    let error = match &protocol_error {
        Some(msg) => Some(TurnError {
            message: feedback
                .as_deref()
                .map(|f| error_from_feedback(f).0)
                .unwrap_or_else(|| msg.clone()),
            reason: Some("protocol_error".into()),
        }),
        None => status_error(call, status.as_deref(), feedback.as_deref(), report),
    };
    let success = error.is_none();
    let (prints, was_truncated) = match (&feedback, success) {
        (Some(f), true) => success_prints(f),
        _ => (Vec::new(), false),
    };
    let definitions = definitions(
        call,
        &program,
        status.as_deref(),
        success,
        defined_count,
        memory,
        report,
    );
    let turn = Turn {
        number,
        program,
        raw_response,
        success,
        error,
        result: None,
        prints,
        tool_calls: tool_calls_out,
        definitions,
        feedback,
        usage: reply.get("tokens").and_then(Json::as_object).map(usage),
    };
    Some((turn, was_truncated))
}

/// The turn's capability calls, their results as logged (a call without an output is a
/// problem).
fn tool_calls_of(call: &ModelCall, report: &mut Report) -> Vec<ToolCall> {
    let mut out = Vec::with_capacity(call.calls.len());
    for c in call.calls {
        if c.result.is_none() {
            report.in_turn(
                call.number,
                c.line,
                format!(
                    "capability call {:?} has no output; its result is unknown",
                    c.name
                ),
            );
        }
        out.push(ToolCall {
            name: c.name.to_string(),
            args: value_from_json(c.args, Keys::String),
            result: c.result.map(|r| {
                match (r.get("status").and_then(Json::as_str), r.get("value")) {
                    (Some("ok"), Some(v)) => value_from_json(v, Keys::String),
                    _ => value_from_json(r, Keys::String),
                }
            }),
        });
    }
    out
}

/// The error of a turn whose reply was a well-formed program, from its evaluation's
/// status (from the trace, or inferred from the feedback).
fn status_error(
    call: &ModelCall,
    status: Option<&str>,
    feedback: Option<&str>,
    report: &mut Report,
) -> Option<TurnError> {
    let is_last = call.next.is_none();
    match status {
        Some("continued") => None,
        Some("returned") if is_last => None,
        Some("returned") => Some(match feedback {
            Some(f) => TurnError {
                message: error_from_feedback(f).0,
                reason: Some("result_contract_error".into()),
            },
            None => TurnError {
                message: "the returned value was not accepted".into(),
                reason: Some("result_contract_error".into()),
            },
        }),
        Some(s @ ("evaluation_error" | "failed")) => Some(match feedback {
            Some(f) => {
                let (message, reason) = error_from_feedback(f);
                TurnError {
                    message,
                    reason: reason.or_else(|| Some(s.to_string())),
                }
            }
            None => match failed_call_error(call.calls) {
                Some(e) => e,
                None => {
                    report.in_turn(
                        call.number,
                        call.draft.reply_line,
                        format!(
                            "the evaluation ended with status {s} but no error text was logged"
                        ),
                    );
                    TurnError {
                        message: format!("evaluation {s} (no error text was logged)"),
                        reason: Some(s.to_string()),
                    }
                }
            },
        }),
        other => {
            report.in_turn(
                call.number,
                call.draft.reply_line,
                format!(
                    "unknown evaluation status {}; the turn counts as successful",
                    other.unwrap_or("(none recorded)")
                ),
            );
            None
        }
    }
}

/// The definitions of the turn's program (kept for successful turns only), checked
/// against the number the trace says the run held after it.
fn definitions(
    call: &ModelCall,
    program: &str,
    status: Option<&str>,
    success: bool,
    defined_count: Option<u64>,
    memory: &mut DefCount,
    report: &mut Report,
) -> Vec<recap_core::Definition> {
    let line = call.draft.reply_line;
    let parsed = match lisp::definitions(program) {
        Ok(defs) => defs,
        Err(e) => {
            report.in_turn(
                call.number,
                line,
                format!("cannot read the program to find its definitions: {e}"),
            );
            Vec::new()
        }
    };
    // The runtime publishes the bindings of every program that ran to the end
    // (continued or returned); recap keeps only those of successful turns.
    if matches!(status, Some("continued" | "returned")) {
        memory.apply(&parsed);
        if !success && !parsed.is_empty() {
            report.in_turn(
                call.number,
                line,
                format!(
                    "the runtime kept {} definition(s) of this rejected return; recap drops the definitions of failed turns",
                    parsed.len()
                ),
            );
        }
    }
    if let Some(expected) = defined_count
        && expected != memory.len() as u64
    {
        report.in_turn(
            call.number,
            line,
            format!(
                "after this turn the run held {expected} definitions, but the def/defn forms of the programs account for {}",
                memory.len()
            ),
        );
        memory.resync(expected);
    }
    if success { parsed } else { Vec::new() }
}

/// The session's `meta`: where it came from, the run's own facts, and the counts of
/// what the workflow did on its own.
#[allow(clippy::too_many_arguments)]
fn session_meta(
    file: &Path,
    layout: &Layout,
    run_id: Option<&str>,
    trace: &Trace,
    paired: &Paired,
    truncated: usize,
    results: &mut ResultsCache,
    problems: &mut Vec<Problem>,
) -> Map<String, Json> {
    let model_evals: BTreeSet<&str> = paired
        .drafts
        .iter()
        .filter_map(|d| d.eval.map(|e| e.1))
        .collect();
    let workflow_calls = paired
        .calls
        .iter()
        .filter(|c| !model_evals.contains(c.eval))
        .count();
    let mut meta = Map::new();
    let mut import = crate::import_meta("ptc-runner", file, None, None);
    if let Some(m) = import.as_object_mut() {
        m.insert(
            "max_turns".into(),
            "number of turns (the run's budget is not logged)".into(),
        );
    }
    meta.insert("import".into(), import);
    meta.insert("run".into(), layout.run.clone().into());
    if let Some(arm) = &layout.arm {
        meta.insert("arm".into(), arm.clone().into());
    }
    if let Some(r) = run_id {
        meta.insert("run_id".into(), r.into());
    }
    if let Some(m) = &trace.model {
        meta.insert("model".into(), m.clone().into());
    }
    if let Some(m) = &trace.model_revision {
        meta.insert("model_revision".into(), m.clone().into());
    }
    if let Some(o) = &trace.outcome {
        meta.insert("outcome".into(), o.clone());
    }
    if let Some(path) = &layout.results
        && let Some(r) = results.get(path, &layout.run, problems)
    {
        meta.insert("graded".into(), r);
    }
    meta.insert(
        "workflow_evaluations".into(),
        paired.extra_evals.len().into(),
    );
    meta.insert("workflow_tool_calls".into(), workflow_calls.into());
    meta.insert("truncated_observations".into(), truncated.into());
    if let Some(tools) = paired.drafts[0].request.get("tools") {
        meta.insert("request_tools".into(), tools.clone());
    }
    meta
}
