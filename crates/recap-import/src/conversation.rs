//! Builds one chat-form session (SPEC 11.1) from a log's messages in order, whatever
//! the format: every chat importer feeds it system, user, assistant and tool messages,
//! and it decides where each goes — system prompt, mission, a turn's response, or an
//! observation — pairs tool results with their calls, and counts what does not fit.

use crate::problem::{At, Problem};
use recap_core::{AssistantTurn, ChatToolCall, ChatTurn, Form, Observation, Session, ToolSpec};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::path::Path;

/// A tool call as a log records it.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub id: Option<String>,
    pub name: String,
    /// The arguments' JSON text as the model wrote it (or an object written compactly).
    pub arguments: String,
}

/// A response's parts before they become a turn.
#[derive(Debug, Default)]
pub(crate) struct Response {
    pub content: Option<String>,
    pub calls: Vec<Call>,
    pub reasoning: Option<String>,
    pub usage: Option<Map<String, Json>>,
}

/// One session under construction.
pub(crate) struct Conversation<'f> {
    /// The file the session starts in (session-level problems, `meta.import`).
    origin: &'f Path,
    /// The file of the message being read (a session joined from several files).
    file: &'f Path,
    pub id: String,
    /// Where the session starts in its file (for session-level problems).
    pub at: At,
    system: Vec<String>,
    mission: Vec<String>,
    turns: Vec<ChatTurn>,
    pub problems: Vec<Problem>,
    pub tools: BTreeMap<String, ToolSpec>,
    pub meta: Map<String, Json>,
    /// The turn budget the log records, if any.
    pub budget: Option<u32>,
}

impl<'f> Conversation<'f> {
    pub fn new(file: &'f Path, id: String, at: At) -> Self {
        Conversation {
            origin: file,
            file,
            id,
            at,
            system: Vec::new(),
            mission: Vec::new(),
            turns: Vec::new(),
            problems: Vec::new(),
            tools: BTreeMap::new(),
            meta: Map::new(),
            budget: None,
        }
    }

    /// The messages that follow come from `file` (a session joined from several files).
    pub fn set_file(&mut self, file: &'f Path) {
        self.file = file;
    }

    pub fn has_turns(&self) -> bool {
        !self.turns.is_empty()
    }

    pub fn turn_count(&self) -> usize {
        self.turns.len()
    }

    /// How many observations each turn holds so far, in turn order.
    pub fn observation_counts(&self) -> Vec<usize> {
        self.turns.iter().map(|t| t.observations.len()).collect()
    }

    /// Whether observation `j` of turn `turn` (1-based) is a tool result.
    pub fn is_tool_result(&self, turn: usize, j: usize) -> bool {
        self.turns
            .get(turn.wrapping_sub(1))
            .and_then(|t| t.observations.get(j))
            .is_some_and(|o| matches!(o, Observation::Tool { .. }))
    }

    /// How many observations the current (last) turn holds so far.
    pub fn observation_count(&self) -> usize {
        self.turns.last().map_or(0, |t| t.observations.len())
    }

    pub fn has_mission(&self) -> bool {
        !self.mission.is_empty()
    }

    /// A lossy problem at `at`, in this session and its current turn.
    pub fn lossy(&mut self, at: At, kind: &'static str, message: impl Into<String>) {
        let p = self.locate(Problem::lossy(self.file, message).kind(kind), at);
        self.problems.push(p);
    }

    /// A lossy problem about the whole session (no turn).
    pub fn session_lossy(&mut self, kind: &'static str, message: impl Into<String>) {
        let p = Problem::lossy(self.origin, message)
            .kind(kind)
            .at(self.at)
            .in_session(&self.id);
        self.problems.push(p);
    }

    /// A skipped-input problem at `at`, in this session and its current turn.
    pub fn skipped(&mut self, at: At, kind: &'static str, message: impl Into<String>) {
        let p = self.locate(Problem::skipped(self.file, message).kind(kind), at);
        self.problems.push(p);
    }

    fn locate(&self, p: Problem, at: At) -> Problem {
        let p = p.at(at).in_session(&self.id);
        match self.turns.len() {
            0 => p,
            n => p.in_turn(n as u32),
        }
    }

    /// A system message: part of the system prompt before the first response; after
    /// it, the chat form has no place for one, so it becomes a user observation.
    pub fn system(&mut self, text: String, at: At) {
        if self.turns.is_empty() {
            self.system.push(text);
        } else {
            self.lossy(
                at,
                "late-system-message",
                "a system message after the first response is kept as a user observation (the chat form has system text only at the start)",
            );
            self.observe(Observation::User {
                content: text.into(),
                environment: false,
            });
        }
    }

    /// A user message: part of the mission before the first response, an observation
    /// after it. `environment` only when the log or its format says so.
    pub fn user(&mut self, text: String, environment: bool, _at: At) {
        if self.turns.is_empty() {
            self.mission.push(text);
        } else {
            self.observe(Observation::User {
                content: text.into(),
                environment,
            });
        }
    }

    fn observe(&mut self, o: Observation) {
        if let Some(t) = self.turns.last_mut() {
            t.observations.push(o);
        }
    }

    /// A model response: a new turn. A response before any user message has no place
    /// in the chat form (the mission comes first); it is counted and left out.
    pub fn assistant(&mut self, r: Response, at: At) {
        if self.mission.is_empty() {
            self.lossy(
                at,
                "before-mission",
                "a response before the first user message (the mission) is not imported: the chat form starts with the mission",
            );
            return;
        }
        let number = self.turns.len() as u32 + 1;
        self.turns.push(ChatTurn {
            number,
            assistant: AssistantTurn {
                content: None,
                tool_calls: Vec::new(),
                reasoning: None,
            },
            observations: Vec::new(),
            success: true,
            usage: None,
        });
        self.extend_assistant(r, at);
    }

    /// Adds more of the current response to the last turn (logs that write one response
    /// over several entries); text and reasoning parts are joined by a newline.
    pub fn extend_assistant(&mut self, r: Response, at: At) {
        let mut calls = Vec::with_capacity(r.calls.len());
        let number = self.turns.len() as u32;
        for call in r.calls {
            calls.push(self.check_call(call, number, at));
        }
        let Some(turn) = self.turns.last_mut() else {
            return;
        };
        let a = &mut turn.assistant;
        append_text(&mut a.content, r.content);
        append(&mut a.reasoning, r.reasoning);
        a.tool_calls.extend(calls);
        if r.usage.is_some() {
            turn.usage = r.usage;
        }
        self.dedupe_call_ids(at);
    }

    fn check_call(&mut self, call: Call, turn: u32, at: At) -> ChatToolCall {
        let existing = self
            .turns
            .last()
            .map_or(0, |t| t.assistant.tool_calls.len());
        let id = match call.id {
            Some(id) => id,
            None => {
                let made = format!("call_{turn}_{}", existing + 1);
                self.lossy(
                    at,
                    "made-up-call-id",
                    format!(
                        "tool call {:?} has no id in the log; recap names it {made:?} so its result can answer it",
                        call.name
                    ),
                );
                made
            }
        };
        let text = call.arguments.trim();
        if !text.is_empty() && serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() {
            self.lossy(
                at,
                "arguments-not-json",
                format!(
                    "the arguments of call {:?} are not valid JSON; kept as the text the model wrote",
                    call.name
                ),
            );
        }
        ChatToolCall {
            id: id.into(),
            name: call.name.into(),
            arguments: call.arguments.into(),
        }
    }

    /// A response may not name two calls alike (the corpus format rejects it); later
    /// copies get a suffix.
    fn dedupe_call_ids(&mut self, at: At) {
        let Some(turn) = self.turns.last_mut() else {
            return;
        };
        let calls = &mut turn.assistant.tool_calls;
        let mut renamed = Vec::new();
        for i in 1..calls.len() {
            if calls[..i].iter().any(|c| c.id == calls[i].id) {
                let mut n = 2;
                while calls.iter().any(|c| c.id == format!("{}#{n}", calls[i].id)) {
                    n += 1;
                }
                let new = format!("{}#{n}", calls[i].id);
                renamed.push((calls[i].id.clone(), new.clone()));
                calls[i].id = new.into();
            }
        }
        for (old, new) in renamed {
            self.lossy(
                at,
                "duplicate-call-id",
                format!("two calls of one response share the id {old:?}; the later one is renamed {new:?}"),
            );
        }
    }

    /// A tool's result. It answers the call with `call_id` (or, without an id, the
    /// first unanswered call named `name`) of the current response; a result that
    /// answers nothing there is kept as environment output and counted.
    pub fn tool_result(
        &mut self,
        call_id: Option<&str>,
        name: Option<String>,
        content: String,
        is_error: bool,
        at: At,
    ) {
        let Some(last) = self.turns.last() else {
            self.skipped(
                at,
                "result-before-response",
                "a tool result before the first response answers nothing; not imported",
            );
            return;
        };
        let answered = |id: &str| {
            last.observations
                .iter()
                .any(|o| matches!(o, Observation::Tool { tool_call_id, .. } if tool_call_id == id))
        };
        let target = match call_id {
            Some(id) => last
                .assistant
                .tool_calls
                .iter()
                .find(|c| c.id == id)
                .map(|c| c.id.clone()),
            None => last
                .assistant
                .tool_calls
                .iter()
                .find(|c| name.as_deref() == Some(c.name.as_str()) && !answered(&c.id))
                .map(|c| c.id.clone()),
        };
        if let Some(id) = target.as_deref().filter(|id| answered(id)) {
            let id = id.to_string();
            self.lossy(
                at,
                "repeated-result",
                format!(
                    "a second result for call {id:?}; kept as environment output (a call is answered once)"
                ),
            );
            self.observe(Observation::User {
                content: content.into(),
                environment: true,
            });
            return;
        }
        match target {
            Some(tool_call_id) => self.observe(Observation::Tool {
                tool_call_id,
                name: name.map(Into::into),
                content: content.into(),
                is_error,
            }),
            None => {
                let earlier = call_id.is_some_and(|id| {
                    self.turns
                        .iter()
                        .any(|t| t.assistant.tool_calls.iter().any(|c| c.id == id))
                });
                let what = match (call_id, earlier) {
                    (Some(id), true) => {
                        format!("the result of call {id:?} comes after a later response")
                    }
                    (Some(id), false) => format!("a tool result for the unknown call id {id:?}"),
                    (None, _) => format!(
                        "a tool result without a call id matches no unanswered call{} of the response",
                        name.as_deref()
                            .map(|n| format!(" named {n:?}"))
                            .unwrap_or_default()
                    ),
                };
                self.lossy(
                    at,
                    if earlier {
                        "late-result"
                    } else {
                        "unknown-call-id"
                    },
                    format!("{what}; kept as environment output (a user observation)"),
                );
                self.observe(Observation::User {
                    content: content.into(),
                    environment: true,
                });
            }
        }
    }

    /// Marks the current turn as failed (the log says its action failed).
    pub fn fail_turn(&mut self) {
        if let Some(t) = self.turns.last_mut() {
            t.success = false;
        }
    }

    /// The session, or `None` (with a skipped problem) when the log had no mission.
    pub fn finish(mut self, importer: &str, out: &mut Vec<Problem>) -> Option<Session> {
        let mission = self.mission.join("\n\n");
        if mission.trim().is_empty() {
            let p = Problem::skipped(
                self.origin,
                "no user message with text before the first response: no mission; session not imported",
            )
            .at(self.at)
            .in_session(&self.id)
            .kind("no-mission");
            out.append(&mut self.problems);
            out.push(p);
            return None;
        }
        if self.turns.is_empty() {
            let p = Problem::skipped(
                self.origin,
                "no response after the mission: nothing to replay; session not imported",
            )
            .at(self.at)
            .in_session(&self.id)
            .kind("no-response");
            out.append(&mut self.problems);
            out.push(p);
            return None;
        }
        let mut unanswered = Vec::new();
        let last = self.turns.len() - 1;
        for (i, t) in self.turns.iter_mut().enumerate() {
            if t.observations.iter().any(Observation::is_error) {
                t.success = false;
            }
            let observations = &t.observations;
            let answered = |c: &ChatToolCall| {
                observations.iter().any(
                    |o| matches!(o, Observation::Tool { tool_call_id, .. } if *tool_call_id == c.id),
                )
            };
            for c in t.assistant.tool_calls.iter().filter(|c| !answered(c)) {
                unanswered.push((t.number, c.name.clone(), c.id.clone(), i < last));
            }
            // A call must be answered before the next response (SPEC 11.4, as provider
            // APIs enforce); one the log never answered cannot stay in an earlier turn.
            if i < last {
                t.assistant.tool_calls.retain(|c| answered(c));
            }
        }
        for (number, name, id, dropped) in unanswered {
            let what = if dropped {
                "; a later response follows, so the call is left out of the turn (every call is answered before the next response)"
            } else {
                ""
            };
            let p = Problem::lossy(
                self.origin,
                format!("no result for call {name:?} (id {id:?}) in the log{what}"),
            )
            .at(self.at)
            .in_session(&self.id)
            .in_turn(number)
            .kind("no-result");
            self.problems.push(p);
        }
        let budget = match self.budget {
            Some(b) if (b as usize) < self.turns.len() => {
                let p = Problem::lossy(
                    self.origin,
                    format!(
                        "the log's turn budget {b} is below its {} turns; max_turns is left null",
                        self.turns.len()
                    ),
                )
                .at(self.at)
                .in_session(&self.id)
                .kind("budget-exceeded");
                self.problems.push(p);
                None
            }
            b => b.filter(|b| *b >= 1),
        };
        if self.meta.contains_key("import") {
            let p = Problem::lossy(
                self.origin,
                "the log's own `import` field is replaced by recap's import record",
            )
            .at(self.at)
            .in_session(&self.id)
            .kind("meta-import");
            self.problems.push(p);
        }
        self.meta.insert(
            "import".into(),
            crate::import_meta(
                importer,
                self.origin,
                (self.at.line > 0).then_some(self.at.line),
                self.at.record,
            ),
        );
        out.append(&mut self.problems);
        Some(Session {
            id: self.id,
            mission,
            system_prompt: self.system.join("\n\n"),
            max_turns: budget.unwrap_or(u32::MAX),
            budget_recorded: budget.is_some(),
            form: Form::Chat,
            tools: self.tools,
            data: BTreeMap::new(),
            meta: self.meta,
            turns: Vec::new(),
            chat_turns: self.turns,
        })
    }
}

/// `meta.model` for the one model a session's responses came from, `meta.models` (in
/// order of first use) for several, nothing for none.
pub(crate) fn insert_models(meta: &mut Map<String, Json>, mut models: Vec<String>) {
    match models.len() {
        0 => {}
        1 => {
            meta.insert("model".into(), Json::from(models.remove(0)));
        }
        _ => {
            meta.insert(
                "models".into(),
                Json::Array(models.into_iter().map(Json::from).collect()),
            );
        }
    }
}

/// Appends `more` to an optional text, a newline between.
/// [`append`] for a response's shared text, which is rebuilt rather than grown.
fn append_text(text: &mut Option<recap_core::Text>, more: Option<String>) {
    let mut joined = text.take().map(String::from);
    append(&mut joined, more);
    *text = joined.map(Into::into);
}

fn append(text: &mut Option<String>, more: Option<String>) {
    match (text.as_mut(), more) {
        (_, None) => {}
        (None, Some(m)) => *text = Some(m),
        (Some(t), Some(m)) => {
            t.push('\n');
            t.push_str(&m);
        }
    }
}
