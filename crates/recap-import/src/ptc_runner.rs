//! ptc-runner inspection logs (`<arm>/inspect/<run>/run.inspection.jsonl`, with
//! `<arm>/traces/<run>/run.jsonl` and `<arm>/results.jsonl` beside them) → sessions.
//!
//! One model turn = one `llm-request` (capability-input + capability-output in the
//! workflow environment) and the first mission `evaluation-source` after its reply. The
//! feedback is what the *next* request appended after the assistant message; the tool
//! calls are the mission capability calls whose `evaluation_id` is the turn's
//! evaluation. Evaluations the workflow ran on its own (e.g. the citation check after a
//! final `return`) are not turns; they are counted in `meta`. See the crate README for
//! the full mapping.

use crate::convert::{Keys, value_from_json};
use crate::problem::Problem;
use crate::text::{JsonLine, json_lines, read_file};
use crate::{Import, lisp};
use recap_core::session::fenced_program;
use recap_core::{Definition, Session, ToolCall, Turn, TurnError};
use serde_json::{Map, Value as Json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The file name a directory walk picks up.
pub const INSPECTION_FILE: &str = "run.inspection.jsonl";

pub fn is_inspection_log(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == INSPECTION_FILE || n.strip_suffix(".gz") == Some(INSPECTION_FILE))
}

/// Imports each inspection log as one session.
pub fn import_files(files: &[PathBuf]) -> Import {
    let mut out = Import::default();
    let mut results = ResultsCache::default();
    for file in files {
        let start = out.problems.len();
        if let Some(session) = import_run(file, &mut results, &mut out.problems) {
            out.sessions.push(session);
        }
        crate::problem::sort_from(&mut out.problems, start);
    }
    out
}

/// The text of an assistant message as recap replays it: the reply's content (when it
/// is not blank — the runner stores blank content as null), then each `run_ptc_lisp`
/// program in a clojure fence. A content that does not end in a newline is separated
/// from the fence by a blank line. Any other tool call is written as `name(args-json)`.
pub fn assistant_text(content: Option<&str>, tool_calls: &[Json]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for call in tool_calls {
        match call_program(call) {
            Some(program) => parts.push(fenced_program(program)),
            None => parts.push(format!(
                "{}({})",
                call.get("name").and_then(Json::as_str).unwrap_or("?"),
                call.get("args").map(Json::to_string).unwrap_or_default()
            )),
        }
    }
    let calls = parts.join("\n\n");
    match content.filter(|c| !c.trim().is_empty()) {
        None => calls,
        Some(c) if calls.is_empty() => c.to_string(),
        Some(c) if c.ends_with('\n') => format!("{c}{calls}"),
        Some(c) => format!("{c}\n\n{calls}"),
    }
}

/// The program of a `run_ptc_lisp` tool call.
fn call_program(call: &Json) -> Option<&str> {
    if call.get("name").and_then(Json::as_str) != Some("run_ptc_lisp") {
        return None;
    }
    call.get("args")?.get("program")?.as_str()
}

/// Where the files beside an inspection log live.
struct Layout {
    run: String,
    arm: Option<String>,
    traces: Option<PathBuf>,
    results: Option<PathBuf>,
}

fn layout(file: &Path) -> Layout {
    let run_dir = file.parent();
    let run = run_dir
        .and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string_lossy().into_owned());
    let arm_dir = run_dir
        .and_then(Path::parent)
        .filter(|inspect| inspect.file_name().is_some_and(|n| n == "inspect"))
        .and_then(Path::parent);
    match arm_dir {
        Some(arm_dir) => Layout {
            arm: arm_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned()),
            traces: Some(arm_dir.join("traces").join(&run).join("run.jsonl")),
            results: Some(arm_dir.join("results.jsonl")),
            run,
        },
        None => Layout {
            run,
            arm: None,
            traces: None,
            results: None,
        },
    }
}

/// `results.jsonl` of each arm, read once: graded outcome by run tag.
#[derive(Default)]
struct ResultsCache {
    by_file: BTreeMap<PathBuf, BTreeMap<String, Json>>,
}

impl ResultsCache {
    fn get(&mut self, path: &Path, tag: &str, problems: &mut Vec<Problem>) -> Option<Json> {
        if !self.by_file.contains_key(path) {
            let mut by_tag = BTreeMap::new();
            if path.exists()
                && let Some(text) = read_file(path, problems)
            {
                for JsonLine { line, value } in json_lines(path, &text, problems) {
                    match value.get("tag").and_then(Json::as_str) {
                        Some(t) => {
                            by_tag.insert(t.to_string(), value.clone());
                        }
                        None => problems.push(
                            Problem::skipped(path, "graded result without a string `tag`")
                                .at_line(line),
                        ),
                    }
                }
            }
            self.by_file.insert(path.to_path_buf(), by_tag);
        }
        self.by_file.get(path).and_then(|m| m.get(tag)).cloned()
    }
}

/// The records of an inspection log that matter, in file order.
enum Event<'a> {
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
fn event(record: &Json, line: usize) -> Result<Option<Event<'_>>, String> {
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
struct Draft<'a> {
    request_line: usize,
    request: &'a Map<String, Json>,
    reply_line: usize,
    reply: &'a Json,
    eval: Option<(usize, &'a str, &'a str)>,
}

/// A mission capability call as logged.
struct CallDraft<'a> {
    eval: &'a str,
    name: &'a str,
    args: &'a Json,
    result: Option<&'a Json>,
    line: usize,
}

/// What `run.jsonl` says about the run.
#[derive(Default)]
struct Trace {
    found: bool,
    /// evaluation id → (status, defined_count)
    evals: BTreeMap<String, (String, Option<u64>)>,
    model: Option<String>,
    model_revision: Option<String>,
    outcome: Option<Json>,
}

fn read_trace(path: Option<&Path>, problems: &mut Vec<Problem>) -> Trace {
    let mut trace = Trace::default();
    let Some(path) = path.filter(|p| p.exists()) else {
        return trace;
    };
    let Some(text) = read_file(path, problems) else {
        return trace;
    };
    trace.found = true;
    for JsonLine { line, value } in json_lines(path, &text, problems) {
        let data = value.get("data");
        match value.get("type").and_then(Json::as_str) {
            Some("evaluation-stopped") => {
                let id = data
                    .and_then(|d| d.get("evaluation_id"))
                    .and_then(Json::as_str);
                let status = data.and_then(|d| d.get("status")).and_then(Json::as_str);
                match (id, status) {
                    (Some(id), Some(status)) => {
                        let defined = data
                            .and_then(|d| d.pointer("/continuation/defined_count"))
                            .and_then(Json::as_u64);
                        trace.evals.insert(id.to_string(), (status.to_string(), defined));
                    }
                    _ => problems.push(
                        Problem::skipped(
                            path,
                            "evaluation-stopped event without string `data.evaluation_id` and `data.status`",
                        )
                        .at_line(line),
                    ),
                }
            }
            Some("run-started") => {
                // The model's connector: older traces name the model, newer ones only
                // the connector's installation revision.
                let llm = data
                    .and_then(|d| d.get("connector_snapshots"))
                    .and_then(Json::as_array)
                    .and_then(|snaps| {
                        snaps.iter().find(|s| {
                            s.get("source").and_then(Json::as_str) == Some("llm")
                                || s.pointer("/acquisition/source").and_then(Json::as_str)
                                    == Some("llm")
                        })
                    });
                let text = |ptr: &str| {
                    llm.and_then(|s| s.pointer(ptr))
                        .and_then(Json::as_str)
                        .map(str::to_string)
                };
                trace.model = text("/model");
                trace.model_revision = text("/declaration/installation_revision");
            }
            Some("run-stopped") => {
                let mut o = Map::new();
                for key in ["outcome", "reason"] {
                    if let Some(v) = data.and_then(|d| d.get(key)) {
                        o.insert(key.into(), v.clone());
                    }
                }
                trace.outcome = Some(Json::Object(o));
            }
            // Other trace events repeat what the inspection log records in full.
            _ => {}
        }
    }
    trace
}

fn import_run(
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
    let p = |line: usize, msg: String| Problem::lossy(file, msg).at_line(line).in_session(&id);

    // Pass 1: classify records.
    let mut events = Vec::new();
    let mut run_id = None;
    for JsonLine { line, value } in &records {
        if run_id.is_none() {
            run_id = value.get("run_id").and_then(Json::as_str);
        }
        match event(value, *line) {
            Ok(Some(e)) => events.push(e),
            Ok(None) => {}
            Err(msg) => problems.push(
                Problem::skipped(file, format!("record not imported: {msg}"))
                    .at_line(*line)
                    .in_session(&id),
            ),
        }
    }

    // Pass 2: pair requests with replies, evaluations with turns, outputs with inputs.
    let mut drafts: Vec<Draft> = Vec::new();
    let mut pending: Option<(usize, Option<&str>, &Map<String, Json>)> = None;
    let mut cut = false;
    let mut extra_evals = BTreeSet::new();
    let mut calls: Vec<(&str, CallDraft)> = Vec::new();
    let mut call_index: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &events {
        match *e {
            Event::Request { line, cap, args } => {
                if let Some((prev, _, _)) = pending {
                    problems.push(
                        Problem::skipped(
                            file,
                            format!(
                                "the llm-request at line {prev} has no reply; the session is cut before that turn"
                            ),
                        )
                        .at_line(prev)
                        .in_session(&id),
                    );
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
                    problems.push(
                        Problem::skipped(
                            file,
                            format!(
                                "llm-request reply's capability id does not match the request at line {request_line}; the session is cut here"
                            ),
                        )
                        .at_line(line)
                        .in_session(&id),
                    );
                    cut = true;
                    break;
                }
                None => problems.push(
                    Problem::skipped(file, "llm-request reply without a request before it")
                        .at_line(line)
                        .in_session(&id),
                ),
            },
            Event::Evaluation { line, id: eval, source } => match drafts.last_mut() {
                Some(d) if d.eval.is_none() && pending.is_none() => d.eval = Some((line, eval, source)),
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
                calls.push((
                    cap,
                    CallDraft {
                        eval,
                        name,
                        args,
                        result: None,
                        line,
                    },
                ));
            }
            Event::ToolOutput { line, cap, result } => match call_index.get(cap) {
                Some(&i) => calls[i].1.result = Some(result),
                None => problems.push(
                    Problem::skipped(
                        file,
                        format!("capability-output {cap:?} has no capability-input; the call is not imported"),
                    )
                    .at_line(line)
                    .in_session(&id),
                ),
            },
        }
    }
    // A last request without a reply still shows the feedback of the turn before it.
    let mut trailing: Option<(usize, &Map<String, Json>)> = None;
    if !cut && let Some((line, _, args)) = pending {
        problems.push(
            Problem::skipped(file, "the last llm-request has no reply (is the file cut off?); that turn is not imported")
                .at_line(line)
                .in_session(&id),
        );
        trailing = Some((line, args));
    }
    if drafts.is_empty() {
        problems.push(
            Problem::skipped(
                file,
                "no llm-request with a reply: nothing to import (is this a ptc-runner inspection log?)",
            )
            .in_session(&id),
        );
        return None;
    }

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
                    problems.push(
                        Problem::skipped(file, "the first user message has no text: no mission")
                            .at_line(first_line)
                            .in_session(&id),
                    );
                    return None;
                }
            }
        }
        _ => {
            problems.push(
                Problem::skipped(
                    file,
                    "the first llm-request does not start with a user message (the mission)",
                )
                .at_line(first_line)
                .in_session(&id),
            );
            return None;
        }
    };
    let system_prompt = match first.get("system").and_then(Json::as_str) {
        Some(s) => s.to_string(),
        None => {
            problems.push(p(
                first_line,
                "the first llm-request has no string `system`; system prompt left empty".into(),
            ));
            String::new()
        }
    };
    for d in &drafts[1..] {
        if d.request.get("system").and_then(Json::as_str) != Some(system_prompt.as_str()) {
            problems.push(p(
                d.request_line,
                "this request's system prompt differs from the first one; the session keeps the first".into(),
            ));
        }
    }

    let trace = read_trace(layout.traces.as_deref(), problems);
    if !trace.found {
        problems.push(
            Problem::lossy(
                file,
                match &layout.traces {
                    Some(t) => format!(
                        "no traces file at {}: turn status is inferred from the feedback text",
                        t.display()
                    ),
                    None => "not under <arm>/inspect/<run>/: no traces file, turn status is inferred from the feedback text".into(),
                },
            )
            .in_session(&id),
        );
    }

    let mut calls_by_eval: BTreeMap<&str, Vec<&CallDraft>> = BTreeMap::new();
    for (_, c) in &calls {
        calls_by_eval.entry(c.eval).or_default().push(c);
    }

    // Pass 3: turns.
    let mut turns = Vec::new();
    let mut memory = DefCount::default();
    let mut truncated = 0usize;
    for (k, d) in drafts.iter().enumerate() {
        let number = k as u32 + 1;
        let tp = |line: usize, msg: String| p(line, msg).in_turn(number);
        let reply = match (
            d.reply.get("status").and_then(Json::as_str),
            d.reply.get("value"),
        ) {
            (Some("ok"), Some(v)) if v.is_object() => v,
            (status, _) => {
                problems.push(
                    Problem::skipped(
                        file,
                        format!(
                            "llm-request reply has status {} and no object `value`; the session is cut here",
                            status.unwrap_or("(none)")
                        ),
                    )
                    .at_line(d.reply_line)
                    .in_session(&id)
                    .in_turn(number),
                );
                break;
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

        // The next request shows the feedback, and the history the model saw.
        let next = match drafts.get(k + 1) {
            Some(next) => Some((next.request_line, next.request)),
            None => trailing,
        };
        let feedback = next.and_then(|(line, next)| {
            feedback_in(d.request, next, &raw_response, &mut |msg| {
                problems.push(tp(line, msg))
            })
        });

        let eval = d.eval;
        if let Some((line, _, source)) = eval
            && source != program
            && protocol_error.is_none()
        {
            problems.push(tp(
                line,
                "the evaluated source differs from the program in the reply; the turn keeps the reply's program".into(),
            ));
        }
        if eval.is_none() && protocol_error.is_none() {
            problems.push(tp(
                d.reply_line,
                "no evaluation-source follows this reply; tool calls unknown".into(),
            ));
        }
        let eval_id = eval.map(|(_, id, _)| id);
        let (status, defined_count) = match eval_id.and_then(|e| trace.evals.get(e)) {
            Some((s, dc)) => (Some(s.as_str()), *dc),
            None => (None, None),
        };
        let status = status
            .map(str::to_string)
            .or_else(|| infer_status(feedback.as_deref(), &program, next.is_none()));

        let turn_calls: Vec<&CallDraft> = eval_id
            .and_then(|e| calls_by_eval.get(e))
            .cloned()
            .unwrap_or_default();
        let mut tool_calls_out = Vec::with_capacity(turn_calls.len());
        for c in &turn_calls {
            if c.result.is_none() {
                problems.push(tp(
                    c.line,
                    format!(
                        "capability call {:?} has no output; its result is unknown",
                        c.name
                    ),
                ));
            }
            tool_calls_out.push(ToolCall {
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

        let is_last = next.is_none();
        let error = if let Some(msg) = &protocol_error {
            Some(TurnError {
                message: feedback
                    .as_deref()
                    .map(|f| error_from_feedback(f).0)
                    .unwrap_or_else(|| msg.clone()),
                reason: Some("protocol_error".into()),
            })
        } else {
            match status.as_deref() {
                Some("continued") => None,
                Some("returned") if is_last => None,
                Some("returned") => Some(match feedback.as_deref() {
                    Some(f) => TurnError {
                        message: error_from_feedback(f).0,
                        reason: Some("result_contract_error".into()),
                    },
                    None => TurnError {
                        message: "the returned value was not accepted".into(),
                        reason: Some("result_contract_error".into()),
                    },
                }),
                Some(s @ ("evaluation_error" | "failed")) => Some(match feedback.as_deref() {
                    Some(f) => {
                        let (message, reason) = error_from_feedback(f);
                        TurnError {
                            message,
                            reason: reason.or_else(|| Some(s.to_string())),
                        }
                    }
                    None => match failed_call_error(&turn_calls) {
                        Some(e) => e,
                        None => {
                            problems.push(tp(
                                d.reply_line,
                                format!("the evaluation ended with status {s} but no error text was logged"),
                            ));
                            TurnError {
                                message: format!("evaluation {s} (no error text was logged)"),
                                reason: Some(s.to_string()),
                            }
                        }
                    },
                }),
                other => {
                    problems.push(tp(
                        d.reply_line,
                        format!(
                            "unknown evaluation status {}; the turn counts as successful",
                            other.unwrap_or("(none recorded)")
                        ),
                    ));
                    None
                }
            }
        };
        let success = error.is_none();

        let (prints, was_truncated) = match (&feedback, success) {
            (Some(f), true) => success_prints(f),
            _ => (Vec::new(), false),
        };
        truncated += usize::from(was_truncated);

        let parsed = match lisp::definitions(&program) {
            Ok(defs) => defs,
            Err(e) => {
                problems.push(tp(
                    d.reply_line,
                    format!("cannot read the program to find its definitions: {e}"),
                ));
                Vec::new()
            }
        };
        // The runtime publishes the bindings of every program that ran to the end
        // (continued or returned); recap keeps only those of successful turns.
        if matches!(status.as_deref(), Some("continued" | "returned")) {
            memory.apply(&parsed);
            if !success && !parsed.is_empty() {
                problems.push(tp(
                    d.reply_line,
                    format!(
                        "the runtime kept {} definition(s) of this rejected return; recap drops the definitions of failed turns",
                        parsed.len()
                    ),
                ));
            }
        }
        if let Some(expected) = defined_count
            && expected != memory.len() as u64
        {
            problems.push(tp(
                d.reply_line,
                format!(
                    "after this turn the run held {expected} definitions, but the def/defn forms of the programs account for {}",
                    memory.len()
                ),
            ));
            memory.resync(expected);
        }

        turns.push(Turn {
            number,
            program,
            raw_response,
            success,
            error,
            result: None,
            prints,
            tool_calls: tool_calls_out,
            definitions: if success { parsed } else { Vec::new() },
            feedback,
            usage: reply.get("tokens").and_then(Json::as_object).map(usage),
        });
    }
    if turns.is_empty() {
        return None;
    }

    let model_evals: BTreeSet<&str> = drafts.iter().filter_map(|d| d.eval.map(|e| e.1)).collect();
    let workflow_calls = calls
        .iter()
        .filter(|(_, c)| !model_evals.contains(c.eval))
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
    meta.insert("workflow_evaluations".into(), extra_evals.len().into());
    meta.insert("workflow_tool_calls".into(), workflow_calls.into());
    meta.insert("truncated_observations".into(), truncated.into());
    if let Some(tools) = first.get("tools") {
        meta.insert("request_tools".into(), tools.clone());
    }

    Some(Session {
        id,
        mission,
        system_prompt,
        max_turns: turns.len() as u32,
        budget_recorded: true,
        form: recap_core::Form::Ptc,
        tools: BTreeMap::new(),
        data: BTreeMap::new(),
        meta,
        turns,
        chat_turns: Vec::new(),
    })
}

/// The feedback for the turn of `request`: the messages `next` appends after the
/// assistant message, joined by a blank line. Reports a history that does not line up.
fn feedback_in(
    request: &Map<String, Json>,
    next: &Map<String, Json>,
    raw_response: &str,
    report: &mut dyn FnMut(String),
) -> Option<String> {
    let empty = Vec::new();
    let before = request
        .get("messages")
        .and_then(Json::as_array)
        .unwrap_or(&empty);
    let after = match next.get("messages").and_then(Json::as_array) {
        Some(m) => m,
        None => {
            report("the next llm-request has no `messages`; feedback unknown".into());
            return None;
        }
    };
    if after.len() < before.len() + 2 || after[..before.len()] != before[..] {
        report(
            "the next request's history does not extend this request's history by an assistant message and feedback".into(),
        );
    }
    let assistant = after.get(before.len())?;
    if assistant.get("role").and_then(Json::as_str) != Some("assistant") {
        report(
            "the next request does not show this turn's assistant message; feedback unknown".into(),
        );
        return None;
    }
    let shown = assistant_text(
        assistant.get("content").and_then(Json::as_str),
        assistant
            .get("tool_calls")
            .and_then(Json::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]),
    );
    if shown != raw_response {
        report(
            "the next request shows a different assistant message than this turn's reply".into(),
        );
    }
    let parts: Vec<&str> = after[before.len() + 1..]
        .iter()
        .filter_map(|m| m.get("content").and_then(Json::as_str))
        .collect();
    if parts.is_empty() {
        report("the next request adds no feedback message after the assistant message".into());
        return None;
    }
    Some(parts.join("\n\n"))
}

const SUCCESS_LEAD: &str = "The correlated PTC-Lisp program succeeded";
const EVAL_ERROR_LEAD: &str = "The PTC-Lisp evaluation did not return successfully";
const CAPABILITY_LEAD: &str = "The capability call failed";
const CONTRACT_LEAD: &str = "The returned value did not satisfy";

/// The evaluation status a feedback text implies (used when no trace is available).
fn infer_status(feedback: Option<&str>, program: &str, is_last: bool) -> Option<String> {
    let status = match feedback {
        Some(f) if f.starts_with(SUCCESS_LEAD) => "continued",
        Some(f) if f.starts_with(EVAL_ERROR_LEAD) => "evaluation_error",
        Some(f) if f.starts_with(CAPABILITY_LEAD) => "failed",
        Some(f) if f.starts_with(CONTRACT_LEAD) => "returned",
        None if is_last && program.contains("(return") => "returned",
        _ => return None,
    };
    Some(status.to_string())
}

/// `(message, reason)` from an error feedback: the interpreter's own `message=` when
/// present, else the feedback without its closing instruction; the reason is the
/// `error_code=:x` or `reason=:x` keyword.
fn error_from_feedback(feedback: &str) -> (String, Option<String>) {
    let body = match feedback.find(" Send one corrected") {
        Some(i) => &feedback[..i],
        None => feedback,
    }
    .trim();
    let keyword = |key: &str| {
        body.find(key).map(|i| {
            body[i + key.len()..]
                .chars()
                .take_while(|c| !matches!(c, ';' | ' ' | '\n') && *c != '.')
                .collect::<String>()
        })
    };
    let reason = keyword("error_code=:").or_else(|| keyword("reason=:"));
    let message = match body.find("; message=") {
        // The runner writes `message=<text>. Send one…`: drop exactly that period.
        Some(i) => {
            let m = &body[i + "; message=".len()..];
            m.strip_suffix('.').unwrap_or(m).to_string()
        }
        None => body.to_string(),
    };
    (message, reason)
}

/// The error of a failed turn with no feedback: its failed capability call, if any.
fn failed_call_error(calls: &[&CallDraft]) -> Option<TurnError> {
    let (name, result) = calls.iter().find_map(|c| {
        let r = c.result?;
        (r.get("status").and_then(Json::as_str) == Some("error")).then_some((c.name, r))
    })?;
    let field = |k: &str| {
        result.get(k).map(|v| {
            v.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string())
        })
    };
    let details: Vec<String> = ["kind", "reason", "details"]
        .iter()
        .filter_map(|k| field(k).map(|v| format!("{k}={v}")))
        .collect();
    Some(TurnError {
        message: format!("capability {name} failed: {}", details.join("; ")),
        reason: field("reason"),
    })
}

const OUTPUT_OPEN: &str = "<untrusted_ptc_output source=\"evaluation\">";
const OUTPUT_CLOSE: &str = "</untrusted_ptc_output>";
const OUTPUT_CLOSE_ESCAPED: &str = "</untrusted_ptc_output (escaped)>";
const TRUNCATION_MARKER: &str = "\n... (observation truncated)";

/// The println lines of a success feedback (the runner joins all printed text with
/// newlines, so one entry per line), and whether the observation was cut.
fn success_prints(feedback: &str) -> (Vec<String>, bool) {
    let Some(start) = feedback.find(OUTPUT_OPEN) else {
        return (Vec::new(), false);
    };
    let inner = &feedback[start + OUTPUT_OPEN.len()..];
    let inner = match inner.rfind(OUTPUT_CLOSE) {
        Some(end) => &inner[..end],
        None => inner,
    };
    let (inner, truncated) = match inner.strip_suffix(TRUNCATION_MARKER) {
        Some(s) => (s, true),
        None => (inner, false),
    };
    let prints = match inner.find("\nprintln:\n") {
        Some(i) => inner[i + "\nprintln:\n".len()..]
            .replace(OUTPUT_CLOSE_ESCAPED, OUTPUT_CLOSE)
            .split('\n')
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    };
    (prints, truncated)
}

/// Provider token counts under recap's names (`input` → `input_tokens`, …); other
/// fields are kept as recorded.
fn usage(tokens: &Map<String, Json>) -> Map<String, Json> {
    tokens
        .iter()
        .map(|(k, v)| {
            let name = match k.as_str() {
                "input" => "input_tokens",
                "output" => "output_tokens",
                "cache_read" => "cache_read_tokens",
                "cache_creation" => "cache_creation_tokens",
                other => other,
            };
            (name.to_string(), v.clone())
        })
        .collect()
}

/// The names a run holds, to compare with the trace's `defined_count`.
#[derive(Default)]
struct DefCount {
    names: BTreeSet<String>,
    /// Definitions the trace reports beyond what the parsed programs explain.
    offset: i64,
}

impl DefCount {
    fn apply(&mut self, defs: &[Definition]) {
        for d in defs {
            self.names.insert(d.name.clone());
        }
    }

    fn len(&self) -> usize {
        (self.names.len() as i64 + self.offset).max(0) as usize
    }

    /// After a reported mismatch, compare later turns relative to the trace's count so
    /// one unexplained definition is reported once, not on every later turn.
    fn resync(&mut self, expected: u64) {
        self.offset = expected as i64 - self.names.len() as i64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn assistant_text_joins_content_and_fenced_program() {
        let call = json!({"name": "run_ptc_lisp", "args": {"program": "(+ 1 2)"}});
        let calls = [call];
        assert_eq!(assistant_text(None, &calls), "```clojure\n(+ 1 2)\n```");
        assert_eq!(
            assistant_text(Some("\n\n"), &calls),
            "```clojure\n(+ 1 2)\n```"
        );
        assert_eq!(
            assistant_text(Some("Sum:"), &calls),
            "Sum:\n\n```clojure\n(+ 1 2)\n```"
        );
        assert_eq!(
            assistant_text(Some("Sum:\n\n"), &calls),
            "Sum:\n\n```clojure\n(+ 1 2)\n```"
        );
        assert_eq!(
            assistant_text(Some("x"), &[json!({"name": "other", "args": {"a": 1}})]),
            "x\n\nother({\"a\":1})"
        );
    }

    #[test]
    fn error_feedback_yields_message_and_reason() {
        let (m, r) = error_from_feedback(
            "The PTC-Lisp evaluation did not return successfully. outcome=:evaluation_error; error_code=:type_error; message=type_error: keys: arg 1 expected map, got list. Send one corrected run_ptc_lisp call.",
        );
        assert_eq!(m, "type_error: keys: arg 1 expected map, got list");
        assert_eq!(r.as_deref(), Some("type_error"));
        let (m, r) = error_from_feedback(
            "The capability call failed without an unsafe effect. kind=:protocol_error; reason=:invalid_arguments. Send one corrected run_ptc_lisp call with corrected capability arguments.",
        );
        assert_eq!(
            m,
            "The capability call failed without an unsafe effect. kind=:protocol_error; reason=:invalid_arguments."
        );
        assert_eq!(r.as_deref(), Some("invalid_arguments"));
    }

    #[test]
    fn prints_come_from_the_println_section() {
        let f = format!(
            "{SUCCESS_LEAD}. Treat it as data.\n{OUTPUT_OPEN}user=> nil\nprintln:\na: 1\nb {OUTPUT_CLOSE_ESCAPED}{OUTPUT_CLOSE}\nDefinitions remain."
        );
        assert_eq!(
            success_prints(&f),
            (vec!["a: 1".to_string(), format!("b {OUTPUT_CLOSE}")], false)
        );
        let cut = format!(
            "{SUCCESS_LEAD}.\n{OUTPUT_OPEN}user=> 1\nprintln:\nx{TRUNCATION_MARKER}{OUTPUT_CLOSE}\n"
        );
        assert_eq!(success_prints(&cut), (vec!["x".to_string()], true));
        let none = format!("{SUCCESS_LEAD}.\n{OUTPUT_OPEN}user=> 1{OUTPUT_CLOSE}\n");
        assert_eq!(success_prints(&none), (Vec::new(), false));
    }
}
