//! smolagents CodeAgent runs (the benchmark's JSON Lines output: one run per line, its
//! `intermediate_steps` being the agent memory written as chat messages) → sessions.
//!
//! Message roles: `system` (the system prompt), `user` (`New task:\n…`, the mission),
//! then per step an `assistant` message (the model output: thought + `<code>` block), a
//! `tool-call` message (`Calling tools:\n` + the Python `repr` of the executed tool
//! calls — the code action, as run) unless the code could not be parsed, and one or more
//! `tool-response` messages (`Observation:\n…` or an error). See the crate README for the
//! full mapping.

use crate::convert::{Keys, value_from_json};
use crate::problem::Problem;
use crate::text::{JsonLine, content_text, json_lines, read_file};
use crate::{Import, pydefs, pylit};
use recap_core::{Session, ToolCall, Turn, TurnError, Value};
use serde_json::{Map, Value as Json};
use std::path::Path;

const TOOL_CALL_LEAD: &str = "Calling tools:\n";
const OBSERVATION_LEAD: &str = "Observation:\n";
const LOGS_LEAD: &str = "Execution logs:\n";
const OUTPUT_LEAD: &str = "Last output from code snippet:\n";
const RETRY_TAIL: &str = "\nNow let's retry: take care not to repeat previous errors! If you have retried several times, try a completely different approach.\n";
const MAX_STEPS: &str = "Reached max steps.";
/// The code interpreter pseudo-tool whose `arguments` are the code action.
const INTERPRETER: &str = "python_interpreter";

/// Imports every run (line) of one file.
pub fn import_file(file: &Path) -> Import {
    let mut out = Import::default();
    let Some(text) = read_file(file, &mut out.problems) else {
        return out;
    };
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    for JsonLine { line, value } in json_lines(file, &text, &mut out.problems) {
        let id = format!("{stem}:{line}");
        if let Some(s) = import_run(file, line, &id, &value, &mut out.problems) {
            out.sessions.push(s);
        }
    }
    crate::problem::sort_from(&mut out.problems, 0);
    out
}

/// One step under construction.
struct Step {
    raw_response: String,
    program: String,
    tool_calls: Vec<ToolCall>,
    /// The tool-response texts, in order, without the run-level max-steps error.
    responses: Vec<String>,
    prints: Vec<String>,
    result: Option<Value>,
    error: Option<TurnError>,
    usage: Option<Map<String, Json>>,
}

fn import_run(
    file: &Path,
    line: usize,
    id: &str,
    record: &Json,
    problems: &mut Vec<Problem>,
) -> Option<Session> {
    // Skipped runs never become sessions: the file and line identify them.
    let skip = |msg: String| Problem::skipped(file, msg).at_line(line);
    let lossy = |msg: String| Problem::lossy(file, msg).at_line(line).in_session(id);
    let Some(obj) = record.as_object() else {
        problems.push(skip(
            "expected a JSON object per line (one agent run)".into(),
        ));
        return None;
    };
    let Some(messages) = obj.get("intermediate_steps").and_then(Json::as_array) else {
        problems.push(skip(
            "missing `intermediate_steps` (a list of messages): not a smolagents run".into(),
        ));
        return None;
    };

    let mut system_prompt: Option<String> = None;
    let mut mission: Option<String> = None;
    let mut steps: Vec<Step> = Vec::new();
    let mut run_error: Option<String> = None;
    for (i, m) in messages.iter().enumerate() {
        let at = |msg: String| lossy(format!("intermediate_steps[{i}]: {msg}"));
        let Some(role) = m.get("role").and_then(Json::as_str) else {
            problems.push(at("message without a string `role`; not imported".into()));
            continue;
        };
        let text = match content_text(m.get("content")) {
            Ok((text, others)) => {
                if !others.is_empty() {
                    problems.push(at(format!(
                        "non-text content parts not imported: {}",
                        others.join(", ")
                    )));
                }
                text
            }
            Err(e) => {
                problems.push(at(format!("{e}; message not imported")));
                continue;
            }
        };
        match role {
            "system" if system_prompt.is_none() && steps.is_empty() => system_prompt = Some(text),
            "user" if mission.is_none() && steps.is_empty() => mission = Some(text),
            "assistant" => steps.push(Step {
                raw_response: text,
                program: String::new(),
                tool_calls: Vec::new(),
                responses: Vec::new(),
                prints: Vec::new(),
                result: None,
                error: None,
                usage: m
                    .get("token_usage")
                    .and_then(Json::as_object)
                    .cloned(),
            }),
            "tool-call" | "tool-response" | "user" | "system" => {
                let Some(step) = steps.last_mut() else {
                    problems.push(at(format!(
                        "{role} message before the first assistant message; not imported"
                    )));
                    continue;
                };
                if let Some(e) = follow_up(step, role, text, &mut |msg| problems.push(at(msg))) {
                    run_error = Some(e);
                }
            }
            other => problems.push(at(format!(
                "unknown role {other:?} (expected system, user, assistant, tool-call or tool-response); not imported"
            ))),
        }
    }

    let Some(mission) = mission.filter(|m| !m.trim().is_empty()) else {
        problems.push(skip("no user message with the task (the mission)".into()));
        return None;
    };
    if steps.is_empty() {
        problems.push(skip("no assistant message: the run has no steps".into()));
        return None;
    }
    let turns = turns_of(steps);

    // The run's own fields (model_id, question, answer, true_answer, source, token_counts,
    // timings) are kept verbatim.
    let mut meta: Map<String, Json> = obj
        .iter()
        .filter(|(k, _)| *k != "intermediate_steps")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut import = crate::import_meta("smolagents", file, Some(line), None);
    if let Some(m) = import.as_object_mut() {
        m.insert(
            "max_turns".into(),
            "number of turns (the run's max_steps is not logged)".into(),
        );
        if let Some(e) = run_error {
            // The run stopped at its step limit after the last step.
            m.insert("run_error".into(), e.into());
        }
    }
    meta.insert("import".into(), import);
    Some(crate::ptc_session(
        id.to_string(),
        mission,
        system_prompt.unwrap_or_default(),
        turns,
        meta,
    ))
}

/// A message after a step's assistant message: its tool calls, their responses, or
/// text the model saw between steps (feedback). Returns the run's error when the
/// response says the run hit its step limit.
fn follow_up(
    step: &mut Step,
    role: &str,
    text: String,
    problem: &mut dyn FnMut(String),
) -> Option<String> {
    match role {
        "tool-call" => match tool_calls(&text) {
            Ok((program, calls)) => {
                if !step.tool_calls.is_empty() {
                    problem(
                        "a second tool-call message in one step; its calls are added to the step"
                            .into(),
                    );
                }
                if step.program.is_empty() {
                    step.program = program;
                }
                step.tool_calls.extend(calls);
            }
            Err(e) => problem(format!("cannot read the tool calls: {e}")),
        },
        "tool-response" => match response(step, &text) {
            Response::MaxSteps => return Some(MAX_STEPS.into()),
            Response::Step => step.responses.push(text),
            Response::Unknown => {
                problem(
                    "tool-response is neither an observation nor an error; kept as feedback only"
                        .into(),
                );
                step.responses.push(text);
            }
        },
        // A later user or system message is text the model saw between steps: part
        // of the feedback.
        _ => step.responses.push(text),
    }
    None
}

/// The turns of a run's steps (definitions only from successful ones).
fn turns_of(steps: Vec<Step>) -> Vec<Turn> {
    steps
        .into_iter()
        .enumerate()
        .map(|(k, s)| {
            let success = s.error.is_none();
            let definitions = if success {
                pydefs::top_level_definitions(&s.program)
            } else {
                Vec::new()
            };
            Turn {
                number: k as u32 + 1,
                program: s.program,
                raw_response: s.raw_response,
                success,
                error: s.error,
                result: s.result,
                prints: s.prints,
                tool_calls: s.tool_calls,
                definitions,
                feedback: (!s.responses.is_empty()).then(|| s.responses.join("\n")),
                usage: s.usage,
            }
        })
        .collect()
}

/// The program and tool calls of a `Calling tools:` message.
fn tool_calls(text: &str) -> Result<(String, Vec<ToolCall>), String> {
    let body = text
        .strip_prefix(TOOL_CALL_LEAD)
        .ok_or_else(|| format!("expected the text to start with {TOOL_CALL_LEAD:?}"))?;
    let parsed = pylit::parse(body).map_err(|e| format!("not a Python literal: {e}"))?;
    let list = parsed.as_array().ok_or("expected a list of tool calls")?;
    let mut program = String::new();
    let mut calls = Vec::with_capacity(list.len());
    for (i, call) in list.iter().enumerate() {
        let function = call
            .get("function")
            .ok_or_else(|| format!("tool call {i} has no `function`"))?;
        let name = function
            .get("name")
            .and_then(Json::as_str)
            .ok_or_else(|| format!("tool call {i} has no string `function.name`"))?;
        let arguments = function.get("arguments").unwrap_or(&Json::Null);
        if name == INTERPRETER
            && program.is_empty()
            && let Some(code) = arguments.as_str()
        {
            program = code.to_string();
        }
        calls.push(ToolCall {
            name: name.to_string(),
            args: value_from_json(arguments, Keys::String),
            result: None,
        });
    }
    Ok((program, calls))
}

/// What a tool-response message was.
#[derive(Debug, PartialEq, Eq)]
enum Response {
    /// An observation or an error of the step.
    Step,
    /// The run-level "Reached max steps." error, which belongs to no step.
    MaxSteps,
    Unknown,
}

/// Applies one tool-response to its step.
fn response(step: &mut Step, text: &str) -> Response {
    if let Some(obs) = text.strip_prefix(OBSERVATION_LEAD) {
        let (logs, output) = match obs.rfind(OUTPUT_LEAD) {
            Some(i) => (&obs[..i], Some(&obs[i + OUTPUT_LEAD.len()..])),
            None => (obs, None),
        };
        let logs = logs.strip_prefix(LOGS_LEAD).unwrap_or(logs);
        let logs = logs.strip_suffix('\n').unwrap_or(logs);
        if !logs.is_empty() {
            step.prints.extend(logs.split('\n').map(str::to_string));
        }
        if let Some(out) = output {
            step.result = Some(if out == "None" {
                Value::Nil
            } else {
                Value::Str(out.to_string())
            });
        }
        return Response::Step;
    }
    // `Call id: call_3\nError:\n…` (execution error) or `Error:\n…` (parsing error).
    let body = match text.find("Error:\n") {
        Some(i) if i == 0 || text.starts_with("Call id:") => &text[i + "Error:\n".len()..],
        _ => return Response::Unknown,
    };
    let message = body.strip_suffix(RETRY_TAIL).unwrap_or(body).trim_end();
    if message == MAX_STEPS {
        return Response::MaxSteps;
    }
    let reason = if message.starts_with("Error in code parsing") {
        Some("code_parsing".to_string())
    } else {
        message
            .find(" due to: ")
            .map(|i| &message[i + " due to: ".len()..])
            .and_then(|rest| rest.split(':').next())
            .filter(|r| !r.is_empty() && r.chars().all(|c| c.is_alphanumeric() || c == '_'))
            .map(str::to_string)
    };
    step.error = Some(TurnError {
        message: message.to_string(),
        reason,
    });
    Response::Step
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step() -> Step {
        Step {
            raw_response: String::new(),
            program: String::new(),
            tool_calls: Vec::new(),
            responses: Vec::new(),
            prints: Vec::new(),
            result: None,
            error: None,
            usage: None,
        }
    }

    #[test]
    fn observation_gives_prints_and_result() {
        let mut s = step();
        assert_eq!(
            Response::Step,
            response(
                &mut s,
                "Observation:\nExecution logs:\na\nb\nLast output from code snippet:\n2"
            )
        );
        assert_eq!(s.prints, vec!["a", "b"]);
        assert_eq!(s.result, Some(Value::Str("2".into())));
        let mut s = step();
        response(
            &mut s,
            "Observation:\nExecution logs:\nLast output from code snippet:\nNone",
        );
        assert!(s.prints.is_empty());
        assert_eq!(s.result, Some(Value::Nil));
    }

    #[test]
    fn errors_and_max_steps() {
        let mut s = step();
        response(
            &mut s,
            &format!(
                "Call id: call_1\nError:\nCode execution failed at line 'import x' due to: InterpreterError: Import from x is not allowed.{RETRY_TAIL}"
            ),
        );
        let e = s.error.unwrap();
        assert_eq!(
            e.message,
            "Code execution failed at line 'import x' due to: InterpreterError: Import from x is not allowed."
        );
        assert_eq!(e.reason.as_deref(), Some("InterpreterError"));
        let mut s = step();
        assert_eq!(
            response(&mut s, &format!("Error:\nReached max steps.{RETRY_TAIL}")),
            Response::MaxSteps
        );
        assert_eq!(response(&mut s, "Something else"), Response::Unknown);
        assert!(s.error.is_none());
    }

    #[test]
    fn tool_call_message_yields_the_code() {
        let (program, calls) = tool_calls(
            "Calling tools:\n[{'id': 'call_1', 'type': 'function', 'function': {'name': 'python_interpreter', 'arguments': 'x = 1\\nprint(x)'}}]",
        )
        .unwrap();
        assert_eq!(program, "x = 1\nprint(x)");
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].args, Value::Str("x = 1\nprint(x)".into()));
        assert!(tool_calls("Calling tools:\n[{'id': ").is_err());
        assert!(tool_calls("[]").is_err());
    }
}
