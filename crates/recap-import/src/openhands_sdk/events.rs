//! OpenHands SDK events fed into a session, in order: the system prompt and tools, user
//! and agent messages, actions (one model response may make several, sharing its
//! `llm_response_id`: one turn), observations as the results of their calls; and each
//! `Condensation` translated into what it removed from the prompt (full-history
//! message positions) and where its summary went.

use super::Event;
use crate::conversation::{Call, Conversation, Response};
use crate::messages::{Place, arguments_text, content_text};
use crate::ojson::J;
use crate::problem::At;
use crate::unmapped::Unmapped;
use recap_core::ToolSpec;
use serde_json::{Map, Value as Json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Keys every event has.
const EVENT_KEYS: [&str; 4] = ["kind", "id", "source", "timestamp"];

/// Where an event went in the session.
#[derive(Debug, Clone, Copy)]
enum Pos {
    System,
    Mission,
    /// The response of turn `t` (1-based).
    Turn(usize),
    /// Observation `j` of turn `t`.
    Obs(usize, usize),
}

/// Reading state across the events of one conversation.
struct Reader<'u> {
    usages: &'u BTreeMap<String, Map<String, Json>>,
    /// The response id of the turn being built.
    open_response: Option<String>,
    /// Each event id's place, for condensations.
    placed: BTreeMap<String, Pos>,
    /// Positions in event order (one per event that became a message), for summary
    /// offsets.
    order: Vec<(String, Pos)>,
    condensations: Vec<Json>,
    framing_noted: bool,
}

/// Feeds every event; returns the condensations as `recorded` replays them.
pub(super) fn feed<'f>(
    conv: &mut Conversation<'f>,
    paths: &[&'f Path],
    events: &[Event],
    usages: &BTreeMap<String, Map<String, Json>>,
    keys: &mut Unmapped,
) -> Vec<Json> {
    let mut r = Reader {
        usages,
        open_response: None,
        placed: BTreeMap::new(),
        order: Vec::new(),
        condensations: Vec::new(),
        framing_noted: false,
    };
    for e in events {
        conv.set_file(paths[e.file]);
        keys.set_file(e.file);
        r.event(conv, keys, e);
    }
    r.condensations
}

impl Reader<'_> {
    fn event(&mut self, conv: &mut Conversation, keys: &mut Unmapped, e: &Event) {
        let v = &e.value;
        let at = e.at;
        let Some(kind) = v.at("kind").as_str() else {
            conv.lossy(
                at,
                "bad-event",
                format!(
                    "an event ({}) without a string `kind`; not imported",
                    v.type_name()
                ),
            );
            return;
        };
        let before = position(conv);
        match kind {
            "SystemPromptEvent" => system_prompt(conv, keys, v, at),
            "MessageEvent" => self.message(conv, keys, v, at),
            "ActionEvent" => self.action(conv, keys, v, at),
            "ObservationEvent" | "AgentErrorEvent" | "UserRejectObservation" => {
                self.observation(conv, keys, kind, v, at)
            }
            "Condensation" => {
                self.condensation(conv, keys, v, at);
                return;
            }
            "ConversationStateUpdateEvent" | "CondensationRequest" | "PauseEvent" => {
                keys.dropped_item(
                    "events[]",
                    &format!("kind={kind}"),
                    "the conversation's own state and control events; never sent to the model",
                    at,
                );
                return;
            }
            other => {
                conv.lossy(
                    at,
                    "unknown-event",
                    format!("an event of unknown kind {other:?}; not imported"),
                );
                return;
            }
        }
        if let (Some(id), Some(pos)) = (v.at("id").as_str(), placed_at(conv, before, kind, v)) {
            self.placed.insert(id.to_string(), pos);
            self.order.push((id.to_string(), pos));
        }
    }

    fn message(&mut self, conv: &mut Conversation, keys: &mut Unmapped, v: &J, at: At) {
        keys.unknown(
            "events[MessageEvent]",
            v,
            &[
                &EVENT_KEYS[..],
                &[
                    "llm_message",
                    "llm_response_id",
                    "activated_skills",
                    "extended_content",
                    "critic_result",
                ],
            ]
            .concat(),
            at,
        );
        drop_common(keys, "events[MessageEvent]", v, at);
        let m = v.at("llm_message");
        keys.unknown(
            "events[MessageEvent].llm_message",
            m,
            &[
                "role",
                "content",
                "thinking_blocks",
                "reasoning_content",
                "tool_calls",
                "name",
            ],
            at,
        );
        let place = Place {
            name: "events[MessageEvent].llm_message",
            at,
        };
        let mut text = content_text(conv, keys, place, m.at("content"));
        // Extended content (skill knowledge) is sent after the message's own content.
        if let Some(extra) =
            content_text(conv, keys, place, v.at("extended_content")).filter(|t| !t.is_empty())
        {
            text = Some(match text {
                Some(t) => format!("{t}\n{extra}"),
                None => extra,
            });
        }
        if v.at("source").as_str() == Some("agent") || m.at("role").as_str() == Some("assistant") {
            let r = Response {
                content: text,
                reasoning: reasoning(keys, m, at),
                usage: self.usage(v),
                ..Response::default()
            };
            conv.assistant(r, at);
            self.open_response = None;
        } else {
            conv.user(text.unwrap_or_default(), false, at);
        }
    }

    fn action(&mut self, conv: &mut Conversation, keys: &mut Unmapped, v: &J, at: At) {
        keys.unknown(
            "events[ActionEvent]",
            v,
            &[
                &EVENT_KEYS[..],
                &[
                    "thought",
                    "reasoning_content",
                    "thinking_blocks",
                    "action",
                    "tool_name",
                    "tool_call_id",
                    "tool_call",
                    "llm_response_id",
                    "security_risk",
                    "summary",
                    "critic_result",
                    "responses_reasoning_item",
                ],
            ]
            .concat(),
            at,
        );
        drop_common(keys, "events[ActionEvent]", v, at);
        keys.dropped(
            "events[ActionEvent]",
            v,
            &[
                (
                    "action",
                    "the SDK's parsed copy of the call's arguments; the arguments as the model wrote them are kept",
                ),
                (
                    "security_risk",
                    "the model's risk estimate, also in the call's arguments",
                ),
                ("summary", "the model's summary, also in the call's arguments"),
                (
                    "responses_reasoning_item",
                    "encrypted reasoning of the Responses API; it has no text",
                ),
                ("tool_name", "the call's tool name, also in `tool_call`"),
                ("tool_call_id", "the call's id, also in `tool_call`"),
            ],
            at,
        );
        let place = Place {
            name: "events[ActionEvent].thought",
            at,
        };
        let thought = content_text(conv, keys, place, v.at("thought")).filter(|t| !t.is_empty());
        let call = v.at("tool_call");
        let calls = match call.at("name").as_str() {
            Some(name) => vec![Call {
                id: call
                    .at("id")
                    .as_str()
                    .or_else(|| v.at("tool_call_id").as_str())
                    .map(str::to_string),
                name: name.to_string(),
                arguments: arguments_text(call.get("arguments")),
            }],
            None => {
                conv.lossy(
                    at,
                    "bad-tool-call",
                    "an action without a `tool_call` naming its tool; the call is not carried",
                );
                Vec::new()
            }
        };
        keys.unknown(
            "events[ActionEvent].tool_call",
            call,
            &["id", "name", "arguments", "origin", "responses_item_id"],
            at,
        );
        let response = v.at("llm_response_id").as_str().map(str::to_string);
        let r = Response {
            content: thought,
            calls,
            reasoning: reasoning(keys, v, at),
            usage: None,
        };
        if response.is_some() && response == self.open_response && conv.has_turns() {
            // Another call of the same model response (parallel calls).
            conv.extend_assistant(r, at);
            return;
        }
        let r = Response {
            usage: self.usage(v),
            ..r
        };
        conv.assistant(r, at);
        self.open_response = response;
    }

    fn observation(
        &mut self,
        conv: &mut Conversation,
        keys: &mut Unmapped,
        kind: &str,
        v: &J,
        at: At,
    ) {
        let place_name = format!("events[{kind}]");
        keys.unknown(
            &place_name,
            v,
            &[
                &EVENT_KEYS[..],
                &[
                    "tool_name",
                    "tool_call_id",
                    "observation",
                    "action_id",
                    "error",
                    "rejection_reason",
                ],
            ]
            .concat(),
            at,
        );
        drop_common(keys, &place_name, v, at);
        keys.dropped(
            &place_name,
            v,
            &[(
                "action_id",
                "the event id of the action; the call id links the result",
            )],
            at,
        );
        let o = v.at("observation");
        let (text, is_error) = match kind {
            "AgentErrorEvent" => (v.at("error").as_str().unwrap_or("").to_string(), true),
            "UserRejectObservation" => {
                conv.lossy(
                    at,
                    "observation-framing",
                    "a rejected action: the user's reason is the result; the SDK's wording around it is not recorded",
                );
                (
                    v.at("rejection_reason").as_str().unwrap_or("").to_string(),
                    false,
                )
            }
            _ => (
                self.observation_text(conv, keys, o, at),
                o.at("is_error").as_bool() == Some(true),
            ),
        };
        let name = v.at("tool_name").as_str().map(str::to_string);
        match v.at("tool_call_id").as_str() {
            Some(id) => conv.tool_result(Some(id), name, text, is_error, at),
            None => conv.user(text, true, at),
        }
    }

    /// The text of an observation: its content parts; terminal output framed as
    /// OpenHands frames it for the model.
    fn observation_text(
        &mut self,
        conv: &mut Conversation,
        keys: &mut Unmapped,
        o: &J,
        at: At,
    ) -> String {
        let place = Place {
            name: "events[ObservationEvent].observation",
            at,
        };
        let content = content_text(conv, keys, place, o.at("content")).unwrap_or_default();
        if o.at("kind").as_str() != Some("TerminalObservation") {
            return content;
        }
        if !self.framing_noted {
            self.framing_noted = true;
            conv.session_lossy(
                "observation-framing",
                "terminal output is framed as OpenHands frames it for the model (prefix, output, suffix, working directory, interpreter, exit code); the event records the parts, not the framed text",
            );
        }
        crate::openhands::command_output(&content, o.at("metadata"), o.at("exit_code"))
    }

    /// The per-call token counts of the event's model response.
    fn usage(&self, v: &J) -> Option<Map<String, Json>> {
        v.at("llm_response_id")
            .as_str()
            .and_then(|id| self.usages.get(id))
            .cloned()
    }

    /// A `Condensation`: the messages it removed from the prompt (full-history positions,
    /// a call's response and results together) and where its summary went, for the
    /// calls after the turns so far.
    fn condensation(&mut self, conv: &mut Conversation, keys: &mut Unmapped, v: &J, at: At) {
        keys.unknown(
            "events[Condensation]",
            v,
            &[
                &EVENT_KEYS[..],
                &[
                    "forgotten_event_ids",
                    "summary",
                    "summary_offset",
                    "llm_response_id",
                ],
            ]
            .concat(),
            at,
        );
        let counts = conv.observation_counts();
        let start = |t: usize| 2 + counts[..t - 1].iter().map(|n| n + 1).sum::<usize>();
        let index = |pos: Pos| match pos {
            Pos::System => 0,
            Pos::Mission => 1,
            Pos::Turn(t) => start(t),
            Pos::Obs(t, j) => start(t) + 1 + j,
        };
        let mut forgotten: BTreeSet<String> = BTreeSet::new();
        let mut drop: BTreeSet<usize> = BTreeSet::new();
        let mut unknown = 0;
        for id in v.at("forgotten_event_ids").as_array().unwrap_or(&[]) {
            let Some(id) = id.as_str() else { continue };
            forgotten.insert(id.to_string());
            let Some(&pos) = self.placed.get(id) else {
                unknown += 1;
                continue;
            };
            // A call's response and its results are forgotten together (the SDK
            // drops the unmatched half of a pair from the view).
            let turn = match pos {
                Pos::Turn(t) => Some(t),
                Pos::Obs(t, j) if conv.is_tool_result(t, j) => Some(t),
                _ => None,
            };
            match turn {
                Some(t) => {
                    drop.insert(start(t));
                    for j in 0..counts[t - 1] {
                        if conv.is_tool_result(t, j) {
                            drop.insert(start(t) + 1 + j);
                        }
                    }
                }
                None => {
                    drop.insert(index(pos));
                }
            }
        }
        if unknown > 0 {
            conv.lossy(
                at,
                "condensation",
                format!(
                    "{unknown} forgotten event ids name no event of the conversation that became a message; they are ignored"
                ),
            );
        }
        // The summary goes before the event at `summary_offset` of the condensed view.
        let view: Vec<usize> = self
            .order
            .iter()
            .filter(|(id, _)| !forgotten.contains(id))
            .map(|(_, pos)| index(*pos))
            .filter(|i| !drop.contains(i))
            .collect();
        let kept = 2 + counts.iter().map(|n| n + 1).sum::<usize>() - drop.len();
        let summary_at = match v.at("summary_offset").as_u64() {
            Some(offset) => match view.get(offset as usize) {
                Some(&before) => (0..before).filter(|i| !drop.contains(i)).count(),
                None => kept,
            },
            None => kept,
        };
        let mut c = Map::new();
        c.insert("after_turns".into(), conv.turn_count().into());
        c.insert(
            "drop".into(),
            Json::Array(drop.into_iter().map(Json::from).collect()),
        );
        if let Some(summary) = v.at("summary").as_str() {
            c.insert("summary".into(), summary.into());
            c.insert("summary_at".into(), summary_at.into());
        }
        self.condensations.push(Json::Object(c));
    }
}

/// The session's shape before an event: turns, and observations of the last turn.
fn position(conv: &Conversation) -> (usize, usize) {
    (conv.turn_count(), conv.observation_count())
}

/// Where the event just fed went: the system prompt, the mission, a response, or an
/// observation.
fn placed_at(conv: &Conversation, before: (usize, usize), kind: &str, v: &J) -> Option<Pos> {
    let (turns, observations) = before;
    if kind == "SystemPromptEvent" {
        return Some(Pos::System);
    }
    if conv.turn_count() > turns {
        return Some(Pos::Turn(conv.turn_count()));
    }
    if kind == "ActionEvent" && conv.has_turns() {
        // A further call of the response being built.
        return Some(Pos::Turn(turns));
    }
    if turns == 0 {
        let user = v.at("source").as_str() == Some("user");
        return (user && conv.has_mission()).then_some(Pos::Mission);
    }
    (conv.observation_count() > observations).then_some(Pos::Obs(turns, observations))
}

/// The system prompt and its dynamic context (both sent as the system message), and
/// the tools (by title, with their descriptions: the event records no parameter
/// schema).
fn system_prompt(conv: &mut Conversation, keys: &mut Unmapped, v: &J, at: At) {
    keys.unknown(
        "events[SystemPromptEvent]",
        v,
        &[
            &EVENT_KEYS[..],
            &["system_prompt", "tools", "dynamic_context"],
        ]
        .concat(),
        at,
    );
    drop_common(keys, "events[SystemPromptEvent]", v, at);
    for key in ["system_prompt", "dynamic_context"] {
        let place = Place {
            name: "events[SystemPromptEvent]",
            at,
        };
        let part = v.at(key);
        let text = match part {
            J::Obj(_) => content_text(conv, keys, place, &J::Arr(vec![part.clone()])),
            other => content_text(conv, keys, place, other),
        };
        if let Some(text) = text {
            conv.system(text, at);
        }
    }
    for t in v.at("tools").as_array().unwrap_or(&[]) {
        let name = t.at("title").as_str().or_else(|| t.at("name").as_str());
        let Some(name) = name else { continue };
        keys.dropped(
            "events[SystemPromptEvent].tools[]",
            t,
            &[
                (
                    "action_type",
                    "the SDK's class of the tool's arguments; the event records no parameter schema",
                ),
                ("observation_type", "the SDK's class of the tool's result"),
                ("annotations", "the tool's hints for clients (read-only, destructive…)"),
                ("kind", "the SDK's class of the tool"),
            ],
            at,
        );
        conv.tools.insert(
            name.to_string(),
            ToolSpec {
                signature: None,
                description: t.at("description").as_str().map(str::to_string),
                parameters: t.get("parameters").filter(|p| !p.is_null()).map(J::to_json),
            },
        );
    }
}

/// The reasoning of a message or action: `reasoning_content`, else the text of its
/// thinking blocks (their signatures are counted as not carried).
fn reasoning(keys: &mut Unmapped, v: &J, at: At) -> Option<String> {
    let blocks = v.at("thinking_blocks").as_array().unwrap_or(&[]);
    for b in blocks {
        keys.dropped(
            "thinking_blocks[]",
            b,
            &[(
                "signature",
                "the provider's opaque check of the thinking text; the text is kept as reasoning",
            )],
            at,
        );
    }
    if let Some(r) = v.at("reasoning_content").as_str() {
        if !blocks.is_empty() {
            keys.dropped_item(
                "thinking_blocks[]",
                "thinking",
                "the same reasoning as `reasoning_content`, which is the one kept",
                at,
            );
        }
        return Some(r.to_string());
    }
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| b.at("thinking").as_str())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// Keys every event kind may carry that are not part of the conversation.
fn drop_common(keys: &mut Unmapped, place: &str, v: &J, at: At) {
    keys.dropped(
        place,
        v,
        &[
            (
                "id",
                "event ids link the log; the order of the turns carries it",
            ),
            ("timestamp", "per-event times have no place in a chat turn"),
            (
                "critic_result",
                "the critic's verdict on the agent's work; never sent to the model",
            ),
            (
                "activated_skills",
                "names of the skills whose knowledge the message carries",
            ),
        ],
        at,
    );
}
