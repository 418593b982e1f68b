//! Agent Data Protocol (ADP) standardised trajectories → chat-form sessions (SPEC 11.1).
//!
//! A file holds trajectories `{id, content, details}` (a JSON array, JSON Lines, or one
//! object); `content` is one flat list of items tagged by `class_`. Observations become
//! the mission (the first user text), user replies and environment output; each action
//! is one model response: `api_action` a tool call, `code_action` code in the message
//! (a fenced block; its output comes back as environment output), `message_action` text.
//! ADP before 1.3 pairs an action and its result by position only: recap names such a
//! call `call_<turn>_<n>` and answers it with the environment observation that follows
//! (counted, `made-up-call-id`). From 1.3, `tool_call_id` pairs them and
//! `reasoning_content` is the reasoning. docs/importers.md has the whole mapping.

use crate::conversation::{Call, Conversation, Response};
use crate::messages::{Place, content_text, openai_tools};
use crate::ojson::J;
use crate::problem::{At, Problem};
use crate::source::{Doc, Located};
use crate::unmapped::Unmapped;
use crate::{Import, Options};
use std::path::Path;

/// Trajectory keys that are mapped.
const TRAJECTORY_KEYS: [&str; 6] = [
    "id",
    "content",
    "details",
    "schema_version",
    "available_custom_tools",
    "available_code_languages",
];

/// The keys every content item may have besides its own.
const ITEM_KEYS: [&str; 4] = ["class_", "tool_call_id", "reward", "reasoning_content"];

/// Imports every trajectory of a parsed file.
pub(crate) fn import_doc(file: &Path, doc: &Doc, _opts: &Options, out: &mut Import) {
    let stem = crate::source::stem(file);
    let mut keys = Unmapped::default();
    let object;
    let records: Vec<(At, &J)> = match doc {
        Doc::Lines(items) => items.iter().map(|l| (At::line(l.line), &l.value)).collect(),
        Doc::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, l)| (At::new(l.line, Some(i + 1)), &l.value))
            .collect(),
        Doc::Object(members) => {
            object = crate::source::object_of(members);
            vec![(At::line(members.first().map_or(1, |m| m.line)), &object)]
        }
        Doc::Other(Some(Located { line, value })) => {
            out.problems.push(
                Problem::skipped(
                    file,
                    format!(
                        "expected ADP trajectories (objects with `content`), got {}",
                        value.type_name()
                    ),
                )
                .at_line(*line)
                .kind("not-a-trajectory"),
            );
            Vec::new()
        }
        Doc::Other(None) => Vec::new(),
    };
    for (at, value) in records {
        trajectory(file, &stem, at, value, &mut keys, out);
    }
    out.problems.extend(keys.into_problems(file));
}

/// Whether recap reads this `schema_version`: absent (the schema of the published
/// samples) or 1.x.
fn known_version(v: &J) -> Result<(), String> {
    match v {
        J::Null => Ok(()),
        J::Str(s) if s.split('.').next() == Some("1") => Ok(()),
        other => Err(match other.as_str() {
            Some(s) => format!("{s:?}"),
            None => other.type_name().to_string(),
        }),
    }
}

fn trajectory(file: &Path, stem: &str, at: At, v: &J, keys: &mut Unmapped, out: &mut Import) {
    let n = at.record.unwrap_or(at.line);
    let id = match v.get("id") {
        Some(J::Str(s)) if !s.is_empty() => s.to_string(),
        Some(J::Num(num)) => num.to_string(),
        _ => format!("{stem}:{n}"),
    };
    let skip = |message: String, kind: &'static str| {
        Problem::skipped(file, message)
            .at(at)
            .in_session(&id)
            .kind(kind)
    };
    let Some(items) = v.at("content").as_array() else {
        out.problems.push(skip(
            format!(
                "a trajectory needs a `content` list of items, got {}; not imported",
                v.at("content").type_name()
            ),
            "not-a-trajectory",
        ));
        return;
    };
    if let Err(found) = known_version(v.at("schema_version")) {
        out.problems.push(skip(
            format!(
                "`schema_version` is {found}: not an ADP version recap reads (1.x, or none as in the published samples); trajectory not imported"
            ),
            "unknown-version",
        ));
        return;
    }
    keys.unknown("trajectory", v, &TRAJECTORY_KEYS, at);
    let mut conv = Conversation::new(file, id, at);
    conv.meta.insert("source".into(), "adp".into());
    for key in [
        "schema_version",
        "available_custom_tools",
        "available_code_languages",
    ] {
        if let Some(x) = v.get(key).filter(|x| !x.is_null()) {
            conv.meta.insert(key.into(), x.to_json());
        }
    }
    details(&mut conv, v.at("details"));
    if let Some(tools) = v
        .get("available_custom_tools")
        .filter(|t| t.as_array().is_some())
    {
        conv.tools.extend(openai_tools(tools));
    }
    let mut reader = Reader::default();
    for item in items {
        reader.item(&mut conv, keys, at, item);
    }
    if let Some(s) = conv.finish("adp", &mut out.problems) {
        out.sessions.push(s);
    }
}

/// `details` go to `meta.details`; a `tools` string there (the JSON of the tool
/// schemas, as the SWE-Gym conversion writes it) becomes the session's tools.
fn details(conv: &mut Conversation, details: &J) {
    let mut kept = details.to_json();
    if let Some(text) = details.at("tools").as_str() {
        match serde_json::from_str::<J>(text) {
            Ok(list) if list.as_array().is_some() => {
                conv.tools = openai_tools(&list);
                if let Some(d) = kept.as_object_mut() {
                    d.remove("tools");
                }
            }
            _ => conv.session_lossy(
                "bad-tools",
                "`details.tools` is not a JSON list of tool schemas; kept as text in meta.details, the session has no tools",
            ),
        }
    }
    if !details.is_null() {
        conv.meta.insert("details".into(), kept);
    }
}

/// What reading a trajectory's items keeps between them.
#[derive(Default)]
struct Reader {
    /// The call of the last `api_action` while no observation has answered it, and
    /// whether recap made its id up.
    open_call: Option<(String, bool)>,
    /// Ids of code actions (1.3): their output is environment output, not a result.
    code_ids: Vec<String>,
}

impl Reader {
    fn item(&mut self, conv: &mut Conversation, keys: &mut Unmapped, at: At, item: &J) {
        let class = item.at("class_").as_str().unwrap_or("");
        let place = Place {
            name: "content[]",
            at,
        };
        match class {
            "text_observation" | "image_observation" | "web_observation" => {
                self.observation(conv, keys, place, class, item)
            }
            "api_action" | "code_action" | "message_action" => {
                self.action(conv, keys, place, class, item)
            }
            "" => conv.lossy(
                at,
                "bad-item",
                format!(
                    "a content item ({}) without a string `class_`; not imported",
                    item.type_name()
                ),
            ),
            other => conv.lossy(
                at,
                "unknown-item",
                format!("a content item of unknown class {other:?}; not imported"),
            ),
        }
    }

    /// An action: one model response.
    fn action(
        &mut self,
        conv: &mut Conversation,
        keys: &mut Unmapped,
        place: Place,
        class: &str,
        item: &J,
    ) {
        let at = place.at;
        let own: &[&str] = match class {
            "api_action" => &["function", "kwargs", "description"],
            "code_action" => &["language", "content", "description"],
            _ => &["content", "description"],
        };
        count_keys(keys, class, item, own, at);
        let thought = item
            .at("description")
            .as_str()
            .filter(|d| !d.trim().is_empty());
        let id = item.at("tool_call_id").as_str().map(str::to_string);
        let mut r = Response {
            reasoning: item.at("reasoning_content").as_str().map(str::to_string),
            ..Response::default()
        };
        match class {
            "api_action" => {
                let Some(name) = item.at("function").as_str() else {
                    conv.lossy(
                        at,
                        "bad-tool-call",
                        "an api_action without a string `function`; not imported",
                    );
                    return;
                };
                let made_up = id.is_none();
                let id = id.unwrap_or_else(|| {
                    keys.counted(
                        "content[api_action]",
                        "an action without `tool_call_id`",
                        "ADP before 1.3 pairs an action with its result by position; recap names the call call_<turn>_1 and answers it with the environment observation that follows",
                        "made-up-call-id",
                        at,
                    );
                    format!("call_{}_1", conv.turn_count() + 1)
                });
                r.content = thought.map(str::to_string);
                r.calls.push(Call {
                    id: Some(id.clone()),
                    name: name.to_string(),
                    arguments: crate::messages::arguments_text(item.get("kwargs")),
                });
                self.open_call = Some((id, made_up));
            }
            "code_action" => {
                let language = item.at("language").as_str().unwrap_or("");
                let code = item.at("content").as_str().unwrap_or("");
                let block = format!("```{language}\n{code}\n```");
                r.content = Some(match thought {
                    Some(t) => format!("{t}\n\n{block}"),
                    None => block,
                });
                self.code_ids.extend(id);
                self.open_call = None;
            }
            _ => {
                let text = content_text(conv, keys, place, item.at("content"));
                r.content = match (thought, text) {
                    (Some(t), Some(c)) => Some(format!("{t}\n\n{c}")),
                    (Some(t), None) => Some(t.to_string()),
                    (None, c) => c,
                };
                self.open_call = None;
            }
        }
        conv.assistant(r, at);
    }

    /// An observation: the mission, a user reply, a system message, or what the
    /// environment returned (the result of the open call, if any).
    fn observation(
        &mut self,
        conv: &mut Conversation,
        keys: &mut Unmapped,
        place: Place,
        class: &str,
        item: &J,
    ) {
        let at = place.at;
        let own: &[&str] = match class {
            "text_observation" => &["content", "source", "name"],
            "image_observation" => &["content", "source", "name", "image", "annotations"],
            _ => &[
                "html",
                "axtree",
                "url",
                "viewport_size",
                "image_observation",
                "source",
                "name",
            ],
        };
        count_keys(keys, class, item, own, at);
        let text = match class {
            "text_observation" => content_text(conv, keys, place, item.at("content")),
            "image_observation" => {
                conv.lossy(
                    at,
                    "media",
                    "an image_observation is replaced by [image] (recap carries text only)",
                );
                Some("[image]".to_string())
            }
            _ => Some(web_text(conv, at, item)),
        }
        .unwrap_or_default();
        let source = item.at("source").as_str().unwrap_or("environment");
        match source {
            "user" => conv.user(text, false, at),
            "system" => conv.system(text, at),
            "environment" => self.environment(conv, keys, item, text, at),
            other => {
                conv.lossy(
                    at,
                    "unknown-source",
                    format!(
                        "an observation from {other:?} (expected user, environment or system); kept as environment output"
                    ),
                );
                conv.user(text, true, at);
            }
        }
    }

    /// Environment output: the result of the call it names (1.3) or of the call just
    /// made; else (the output of code, or of no call) environment output.
    fn environment(
        &mut self,
        conv: &mut Conversation,
        keys: &mut Unmapped,
        item: &J,
        text: String,
        at: At,
    ) {
        let named = item.at("tool_call_id").as_str();
        if named.is_some_and(|id| self.code_ids.iter().any(|c| c == id)) {
            conv.user(text, true, at);
            return;
        }
        let open = self.open_call.take();
        match named.map(|id| (id.to_string(), true)).or(open) {
            Some((id, made_up)) => {
                if !made_up {
                    keys.counted(
                        "content[text_observation]",
                        "a result without `tool_call_id`",
                        "ADP before 1.3 does not say which action an observation answers; recap takes it as the result of the action just before it",
                        "positional-result",
                        at,
                    );
                }
                let name = item.at("name").as_str().map(str::to_string);
                conv.tool_result(Some(&id), name, text, false, at);
            }
            None => conv.user(text, true, at),
        }
    }
}

/// Counts an item's keys: its class's own, the ones every item may have, and `reward`
/// (not carried).
fn count_keys(keys: &mut Unmapped, class: &str, item: &J, own: &[&str], at: At) {
    let known: Vec<&str> = own.iter().chain(ITEM_KEYS.iter()).copied().collect();
    let place = format!("content[{class}]");
    keys.unknown(&place, item, &known, at);
    keys.dropped(
        &place,
        item,
        &[("reward", "a training reward, not part of the conversation")],
        at,
    );
}

/// The text a web agent saw of a page: its accessibility tree, else its HTML; the URL
/// first. A screenshot is not carried.
fn web_text(conv: &mut Conversation, at: At, item: &J) -> String {
    let page = item
        .at("axtree")
        .as_str()
        .or_else(|| item.at("html").as_str())
        .unwrap_or("");
    let mut lost = Vec::new();
    if item.at("axtree").as_str().is_some() && item.at("html").as_str().is_some() {
        lost.push("its HTML (the accessibility tree is kept)");
    }
    if !item.at("image_observation").is_null() {
        lost.push("its screenshot");
    }
    if !lost.is_empty() {
        conv.lossy(
            at,
            "web-observation",
            format!(
                "a web_observation is carried as its URL and page text; not carried: {}",
                lost.join(", ")
            ),
        );
    }
    match item.at("url").as_str() {
        Some(url) => format!("{url}\n{page}"),
        None => page.to_string(),
    }
}
