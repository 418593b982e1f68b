//! OpenHands V1 (software-agent-sdk) conversations → chat-form sessions (SPEC 11.1).
//!
//! A conversation is a directory (`base_state.json` and `events/event-NNNNN-<id>.json`,
//! or only the event files, as the CLI records them) or one file of events (JSON Lines,
//! or a JSON array). Event files are read in name order, which is the event order.
//! Events become messages (`events.rs`); the per-call token counts, which only the
//! conversation's metrics hold, are joined to the responses by response id; the
//! agent's own condensations are recorded so that `recorded` replays them. The file
//! walk and the grouping of files into conversations are here. docs/importers.md has
//! the whole mapping.

mod events;

use crate::conversation::Conversation;
use crate::ojson::J;
use crate::problem::{At, Problem};
use crate::source::{self, Doc};
use crate::unmapped::Unmapped;
use crate::{Import, Kind};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One event with the file and line it was read from.
pub(super) struct Event<'a> {
    pub file: usize,
    pub at: At,
    pub value: J<'a>,
}

/// The files of one conversation: its `base_state.json` (if any) and its event files.
#[derive(Default)]
struct Unit {
    key: PathBuf,
    base_state: Option<usize>,
    events: Vec<usize>,
}

/// Whether `path` is an event file of a conversation directory.
fn is_event_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("event-") && n.ends_with(".json"))
}

fn is_base_state(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "base_state.json")
}

/// The conversation a file belongs to: a base state and the event files of its
/// directory (or of its `events/` directory) are one; any other file is one of its own.
fn unit_key(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new(""));
    if is_base_state(path) {
        return dir.to_path_buf();
    }
    if is_event_file(path) {
        if dir.file_name().is_some_and(|n| n == "events")
            && let Some(conversation) = dir.parent()
            && conversation.join("base_state.json").exists()
        {
            return conversation.to_path_buf();
        }
        return dir.to_path_buf();
    }
    path.to_path_buf()
}

/// Imports OpenHands SDK files, one session per conversation.
pub fn import_files(files: &[PathBuf]) -> Import {
    let mut units: Vec<Unit> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let key = unit_key(f);
        let n = match units.iter().position(|u| u.key == key) {
            Some(n) => n,
            None => {
                units.push(Unit {
                    key,
                    ..Unit::default()
                });
                units.len() - 1
            }
        };
        if is_base_state(f) {
            units[n].base_state = Some(i);
        } else {
            units[n].events.push(i);
        }
    }
    let mut out = Import::default();
    for unit in &units {
        let start = out.problems.len();
        import_unit(files, unit, &mut out);
        crate::problem::sort_from(&mut out.problems, start);
    }
    out
}

/// Imports one file's text: the events in it (no base state).
pub(crate) fn import_text(file: &Path, text: &str) -> Import {
    let mut out = Import::default();
    let paths = [file];
    let mut events = Vec::new();
    if let Some(doc) = parse(file, text, &mut out) {
        collect_events(&paths, 0, doc, &mut events, &mut out);
    }
    let unit = Unit {
        key: file.to_path_buf(),
        base_state: None,
        events: vec![0],
    };
    session(&paths, &unit, None, events, &mut out);
    out
}

/// Reads and parses one file; a file of another format is one `wrong-importer` problem.
fn parse<'a>(file: &Path, text: &'a str, out: &mut Import) -> Option<Doc<'a>> {
    let lines = matches!(source::data_extension(file).as_deref(), Some("jsonl"));
    let mut problems = Vec::new();
    let doc = source::parse(file, text, lines, &mut problems);
    if let Some((other, n, total)) = crate::sniff::misfit(Kind::OpenhandsSdk, file, &doc) {
        out.problems.push(crate::wrong_importer(
            file,
            Kind::OpenhandsSdk,
            other,
            n,
            total,
        ));
        return None;
    }
    out.problems.append(&mut problems);
    Some(doc)
}

fn import_unit(files: &[PathBuf], unit: &Unit, out: &mut Import) {
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let texts: Vec<(usize, Option<String>)> = unit
        .base_state
        .iter()
        .chain(&unit.events)
        .map(|&i| (i, source::read_text(&files[i], &mut out.problems)))
        .collect();
    let mut base = None;
    let mut events: Vec<Event> = Vec::new();
    for (i, text) in &texts {
        let Some(text) = text else { continue };
        let Some(doc) = parse(&files[*i], text, out) else {
            continue;
        };
        if Some(*i) == unit.base_state {
            if let Doc::Object(members) = &doc {
                base = Some((
                    *i,
                    At::line(members.first().map_or(1, |m| m.line)),
                    source::object_of(members),
                ));
            }
            continue;
        }
        collect_events(&paths, *i, doc, &mut events, out);
    }
    session(&paths, unit, base, events, out);
}

/// The session of one conversation's events (and base state, when there is one).
fn session(
    paths: &[&Path],
    unit: &Unit,
    base: Option<(usize, At, J)>,
    events: Vec<Event>,
    out: &mut Import,
) {
    let Some(first) = events.first() else {
        if let Some((i, at, _)) = &base {
            out.problems.push(
                Problem::skipped(
                    paths[*i],
                    "a conversation's base state without any event file: nothing to import",
                )
                .at(*at)
                .kind("not-a-conversation"),
            );
        }
        return;
    };
    let file = paths[first.file];
    let id = session_id(unit, base.as_ref().map(|b| &b.2), file);
    let mut conv = Conversation::new(file, id, first.at);
    let mut keys = Unmapped::default();
    let stats = last_stats(&events);
    let usages = per_call_usage(base.as_ref().map(|b| &b.2), stats.as_ref());
    if let Some((i, at, value)) = &base {
        keys.set_file(*i);
        base_state(&mut conv, &mut keys, value, *at);
    } else if let Some(stats) = &stats {
        conv.meta.insert("stats".into(), stats.to_json());
    }
    conv.meta.insert("source".into(), "openhands-sdk".into());
    let condensations = events::feed(&mut conv, paths, &events, &usages, &mut keys);
    let mut record = Map::new();
    record.insert("sent".into(), "history".into());
    if !condensations.is_empty() {
        record.insert("condensations".into(), Json::Array(condensations));
    }
    // The agent sends its whole view of the event log at every call: the events after
    // its own condensations, which the log records.
    conv.meta.insert(
        recap_core::session::RECORDED_CONTEXT.into(),
        Json::Object(record),
    );
    conv.set_file(file);
    if let Some(s) = conv.finish("openhands-sdk", &mut out.problems) {
        out.sessions.push(s);
    }
    out.problems.extend(keys.into_problems_across(paths));
}

/// The events of one parsed file: one event, a JSON array of them, or JSON Lines.
fn collect_events<'a>(
    paths: &[&Path],
    file: usize,
    doc: Doc<'a>,
    into: &mut Vec<Event<'a>>,
    out: &mut Import,
) {
    match doc {
        Doc::Object(members) => {
            let at = At::line(members.first().map_or(1, |m| m.line));
            into.push(Event {
                file,
                at,
                value: source::object_of(&members),
            });
        }
        Doc::Lines(items) => into.extend(items.into_iter().map(|l| Event {
            file,
            at: At::line(l.line),
            value: l.value,
        })),
        Doc::Array(items) => into.extend(items.into_iter().enumerate().map(|(n, l)| Event {
            file,
            at: At::new(l.line, Some(n + 1)),
            value: l.value,
        })),
        Doc::Other(Some(l)) => out.problems.push(
            Problem::skipped(
                paths[file],
                format!(
                    "expected OpenHands SDK events (objects with `kind`), got {}",
                    l.value.type_name()
                ),
            )
            .at_line(l.line)
            .kind("not-an-event-stream"),
        ),
        Doc::Other(None) => {}
    }
}

/// The conversation's `id` from its base state, else the name of its directory (event
/// files) or `<directory>/<stem>` (one file of events).
fn session_id(unit: &Unit, base: Option<&J>, first_file: &Path) -> String {
    if let Some(id) = base.and_then(|b| b.at("id").as_str()) {
        return id.to_string();
    }
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    if is_event_file(first_file) {
        return name(&unit.key);
    }
    match first_file.parent().map(name).filter(|n| !n.is_empty()) {
        Some(dir) => format!("{dir}/{}", source::stem(first_file)),
        None => source::stem(first_file),
    }
}

/// The last `stats` a `ConversationStateUpdateEvent` recorded (event files without a
/// base state carry their metrics this way).
fn last_stats<'a>(events: &[Event<'a>]) -> Option<J<'a>> {
    events
        .iter()
        .rev()
        .find(|e| {
            e.value.at("kind").as_str() == Some("ConversationStateUpdateEvent")
                && e.value.at("key").as_str() == Some("stats")
        })
        .map(|e| e.value.at("value").clone())
}

/// Per-call token counts by response id, from the metrics of every usage (the agent's
/// LLM, a condenser's…): `stats.usage_to_metrics.<usage id>.token_usages[]`.
fn per_call_usage(base: Option<&J>, stats: Option<&J>) -> BTreeMap<String, Map<String, Json>> {
    let stats = base.map(|b| b.at("stats")).or(stats);
    let mut usages = BTreeMap::new();
    for (_, metrics) in stats
        .map(|s| s.at("usage_to_metrics"))
        .and_then(J::as_object)
        .unwrap_or(&[])
    {
        for u in metrics.at("token_usages").as_array().unwrap_or(&[]) {
            if let Some(id) = u.at("response_id").as_str().filter(|id| !id.is_empty()) {
                let kept: Map<String, Json> = u
                    .as_object()
                    .unwrap_or(&[])
                    .iter()
                    .filter(|(k, _)| k != "response_id")
                    .map(|(k, v)| (k.to_string(), v.to_json()))
                    .collect();
                usages.insert(id.to_string(), kept);
            }
        }
    }
    usages
}

/// The base state's facts: the model, the agent's configuration (API key left out),
/// the run's status and metrics, the iteration budget.
fn base_state(conv: &mut Conversation, keys: &mut Unmapped, v: &J, at: At) {
    keys.dropped(
        "base_state",
        v,
        &[
            (
                "persistence_dir",
                "where the conversation was saved on the recording machine",
            ),
            (
                "blocked_actions",
                "actions the user blocked while confirming (runtime state)",
            ),
            (
                "blocked_messages",
                "messages the user blocked (runtime state)",
            ),
        ],
        at,
    );
    for (k, value) in v.as_object().unwrap_or(&[]) {
        match k.as_ref() {
            "persistence_dir" | "blocked_actions" | "blocked_messages" => {}
            "agent" => {
                let mut agent = value.to_json();
                if let Some(llm) = agent.get_mut("llm").and_then(Json::as_object_mut) {
                    llm.remove("api_key");
                }
                if let Some(model) = value.at("llm").at("model").as_str() {
                    conv.meta.insert("model".into(), model.into());
                }
                conv.meta.insert("agent".into(), agent);
            }
            "max_iterations" => {
                conv.budget = value.as_u64().and_then(|n| u32::try_from(n).ok());
                conv.meta.insert(k.to_string(), value.to_json());
            }
            _ => {
                conv.meta.insert(k.to_string(), value.to_json());
            }
        }
    }
}
