//! ATIF trajectories (Harbor's Agent Trajectory Interchange Format, v1.0–v1.7) →
//! chat-form sessions (SPEC 11.1).
//!
//! A file holds one trajectory: `agent`, `steps`, metrics. Steps become messages (system,
//! user, agent), an agent step's tool calls and observation its turn, its `metrics` the
//! turn's usage (`steps.rs`). Trajectories are read together because they refer to
//! each other: a `continued_trajectory_ref` names the file the same run goes on in (a
//! continuation that starts with copied context is the agent's own compaction, recorded
//! as a restart), and a `subagent_trajectory_ref` a sub-agent's trajectory, which
//! becomes a session of its own (`meta.subagent_of`). docs/importers.md has the
//! whole mapping.

mod steps;

use crate::conversation::Conversation;
use crate::messages::openai_tools;
use crate::ojson::J;
use crate::problem::{At, Problem};
use crate::source::{self, Doc};
use crate::unmapped::Unmapped;
use crate::{Import, Kind};
use serde_json::{Map, Value as Json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use steps::{Collected, feed};

/// Root keys that are mapped.
const ROOT_KEYS: [&str; 10] = [
    "schema_version",
    "session_id",
    "trajectory_id",
    "agent",
    "steps",
    "notes",
    "final_metrics",
    "continued_trajectory_ref",
    "extra",
    "subagent_trajectories",
];

/// The schema versions recap reads.
const VERSIONS: [&str; 8] = [
    "ATIF-v1.0",
    "ATIF-v1.1",
    "ATIF-v1.2",
    "ATIF-v1.3",
    "ATIF-v1.4",
    "ATIF-v1.5",
    "ATIF-v1.6",
    "ATIF-v1.7",
];

/// One trajectory as read: the file it is in, where, its value and the line of each
/// step.
pub(super) struct Trajectory<'a> {
    file: usize,
    line: usize,
    value: J<'a>,
    step_lines: Vec<usize>,
    /// The trajectory whose `subagent_trajectories` holds this one (v1.7).
    embedded_in: Option<usize>,
}

impl<'a> Trajectory<'a> {
    fn steps(&self) -> &[J<'a>] {
        self.value.at("steps").as_array().unwrap_or(&[])
    }

    fn at(&self) -> At {
        At::line(self.line)
    }
}

/// Imports ATIF files, linking continuations and sub-agent trajectories across them.
pub fn import_files(files: &[PathBuf]) -> Import {
    let mut out = Import::default();
    let texts: Vec<Option<String>> = files
        .iter()
        .map(|f| source::read_text(f, &mut out.problems))
        .collect();
    link(files, &texts, &mut out);
    out
}

/// Imports one file's text (references to other files are not followed).
pub(crate) fn import_text(file: &Path, text: &str) -> Import {
    let mut out = Import::default();
    link(&[file.to_path_buf()], &[Some(text.to_string())], &mut out);
    out
}

/// Reads the trajectories of every text and imports them as linked sessions.
fn link(files: &[PathBuf], texts: &[Option<String>], out: &mut Import) {
    let mut trajectories: Vec<Trajectory> = Vec::new();
    for (i, (file, text)) in files.iter().zip(texts).enumerate() {
        if let Some(text) = text {
            read(file, i, text, &mut trajectories, out);
        }
    }
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let mut keys: Vec<Unmapped> = files.iter().map(|_| Unmapped::default()).collect();
    let mut linker = Linker {
        paths: &paths,
        all: &trajectories,
        done: BTreeSet::new(),
    };
    let referred = linker.referred();
    for t in 0..trajectories.len() {
        if !referred.contains(&t) {
            linker.session(t, None, &mut keys, out);
        }
    }
    // What only others refer to, but no session reached (a loop of references).
    for t in 0..trajectories.len() {
        linker.session(t, None, &mut keys, out);
    }
    for (path, keys) in paths.iter().zip(keys) {
        out.problems.extend(keys.into_problems(path));
    }
    crate::problem::sort_from(&mut out.problems, 0);
}

/// The trajectory (or trajectories, for a JSON array or JSON Lines of them) of one
/// file; a file of another format is one `wrong-importer` problem.
fn read<'a>(
    file: &Path,
    index: usize,
    text: &'a str,
    into: &mut Vec<Trajectory<'a>>,
    out: &mut Import,
) {
    let lines = matches!(source::data_extension(file).as_deref(), Some("jsonl"));
    let mut problems = Vec::new();
    let doc = source::parse(file, text, lines, &mut problems);
    if let Some((other, n, total)) = crate::sniff::misfit(Kind::Atif, file, &doc) {
        out.problems
            .push(crate::wrong_importer(file, Kind::Atif, other, n, total));
        return;
    }
    out.problems.append(&mut problems);
    let mut push = |line: usize, value: J<'a>, step_lines: Vec<usize>| {
        if value.as_object().is_none() {
            out.problems.push(
                Problem::skipped(
                    file,
                    format!(
                        "expected an ATIF trajectory object, got {}",
                        value.type_name()
                    ),
                )
                .at_line(line)
                .kind("not-a-trajectory"),
            );
            return;
        }
        let container = into.len();
        let embedded: Vec<J<'a>> = value
            .at("subagent_trajectories")
            .as_array()
            .unwrap_or(&[])
            .to_vec();
        into.push(Trajectory {
            file: index,
            line,
            value,
            step_lines,
            embedded_in: None,
        });
        for sub in embedded.into_iter().filter(|s| s.as_object().is_some()) {
            into.push(Trajectory {
                file: index,
                line,
                value: sub,
                step_lines: Vec::new(),
                embedded_in: Some(container),
            });
        }
    };
    match doc {
        Doc::Object(members) => {
            let step_lines = members
                .iter()
                .find(|m| m.key == "steps")
                .map(|m| m.item_lines.clone())
                .unwrap_or_default();
            let line = members.first().map_or(1, |m| m.line);
            push(line, source::object_of(&members), step_lines);
        }
        Doc::Lines(items) | Doc::Array(items) => {
            for l in items {
                push(l.line, l.value, Vec::new());
            }
        }
        Doc::Other(Some(l)) => push(l.line, l.value, Vec::new()),
        Doc::Other(None) => {}
    }
}

/// Follows the references between trajectories while building sessions.
struct Linker<'p, 't, 'a> {
    paths: &'p [&'p Path],
    all: &'t [Trajectory<'a>],
    /// Trajectories already imported (in a session of their own, or continuing one).
    done: BTreeSet<usize>,
}

impl Linker<'_, '_, '_> {
    /// The trajectory a reference from trajectory `from` names: a path next to its file
    /// (as written, or with the file's own prefix when the file was renamed
    /// `<prefix>trajectory.json`), or a `trajectory_id`.
    fn resolve(&self, from: usize, path: Option<&str>, id: Option<&str>) -> Option<usize> {
        if let Some(id) = id {
            let found = self
                .all
                .iter()
                .position(|t| t.value.at("trajectory_id").as_str() == Some(id));
            if found.is_some() {
                return found;
            }
        }
        let path = path?;
        let file = self.paths[self.all[from].file];
        let dir = file.parent().unwrap_or(Path::new(""));
        let name = file.file_name()?.to_str()?;
        let mut candidates = vec![dir.join(path)];
        if let Some(prefix) = name.strip_suffix("trajectory.json") {
            candidates.push(dir.join(format!("{prefix}{path}")));
        }
        self.all
            .iter()
            .position(|t| candidates.iter().any(|c| c == self.paths[t.file]))
    }

    /// The trajectory a trajectory continues in.
    fn continuation(&self, t: usize) -> Option<usize> {
        let reference = self.all[t].value.at("continued_trajectory_ref").as_str()?;
        self.resolve(t, Some(reference), None).filter(|&c| c != t)
    }

    /// Every trajectory another one refers to (continuations and sub-agents).
    fn referred(&self) -> BTreeSet<usize> {
        let mut referred = BTreeSet::new();
        for t in 0..self.all.len() {
            if self.all[t].embedded_in.is_some() {
                referred.insert(t);
            }
            referred.extend(self.continuation(t));
            for reference in self.all[t].steps().iter().flat_map(steps::subagent_refs) {
                referred.extend(self.resolve(
                    t,
                    reference.at("trajectory_path").as_str(),
                    reference.at("trajectory_id").as_str(),
                ));
            }
        }
        referred
    }

    /// Imports trajectory `t` and the continuations after it as one session, then the
    /// sub-agent trajectories it refers to as sessions of their own.
    fn session(&mut self, t: usize, parent: Option<&str>, keys: &mut [Unmapped], out: &mut Import) {
        if !self.done.insert(t) {
            return;
        }
        let first = &self.all[t];
        let file = self.paths[first.file];
        if let Err(p) = check_version(file, first) {
            out.problems.push(*p);
            return;
        }
        let id = session_id(file, first);
        let mut conv = Conversation::new(file, id.clone(), first.at());
        header(&mut conv, &mut keys[first.file], first);
        if let Some(parent) = parent {
            conv.meta.insert("subagent_of".into(), parent.into());
        }
        let mut seen = Collected::default();
        feed(&mut conv, &mut keys[first.file], first, 0, &mut seen);
        let mut restarts = Vec::new();
        let mut continued = Vec::new();
        let mut at = t;
        while let Some(next) = self.continuation(at) {
            if !self.done.insert(next) {
                break;
            }
            let cont = &self.all[next];
            if let Err(p) = check_version(self.paths[cont.file], cont) {
                out.problems.push(*p);
                break;
            }
            conv.set_file(self.paths[cont.file]);
            keys[cont.file].unknown("trajectory", &cont.value, &ROOT_KEYS, cont.at());
            continued.push(Json::from(self.paths[cont.file].display().to_string()));
            let (turns, observations) = (conv.turn_count(), conv.observation_count());
            feed(&mut conv, &mut keys[cont.file], cont, 0, &mut seen);
            if starts_with_copied_context(cont) {
                restart(&mut conv, cont, turns, observations, &mut restarts);
            }
            at = next;
        }
        conv.set_file(file);
        self.missing_continuation(at, &mut conv);
        let mut subagents = self.note_refs(t, &mut conv, &seen);
        subagents.extend((0..self.all.len()).filter(|&s| self.all[s].embedded_in == Some(t)));
        finish_meta(&mut conv, seen, continued, restarts);
        if let Some(s) = conv.finish("atif", &mut out.problems) {
            out.sessions.push(s);
        }
        for s in subagents {
            self.session(s, Some(&id), keys, out);
        }
    }

    /// A continuation the trajectory names that is not among the files read.
    fn missing_continuation(&self, last: usize, conv: &mut Conversation) {
        let t = &self.all[last];
        if let Some(reference) = t.value.at("continued_trajectory_ref").as_str()
            && self.continuation(last).is_none()
        {
            conv.session_lossy(
                "missing-trajectory",
                format!(
                    "the run continues in {reference:?}, which is not among the files imported; the session ends here (import the trajectory's directory to join it)"
                ),
            );
        }
    }

    /// `meta.subagent_refs`, with each reference's session when it was found; the
    /// sub-agent trajectories found.
    fn note_refs(&self, t: usize, conv: &mut Conversation, seen: &Collected) -> Vec<usize> {
        let mut found = Vec::new();
        let mut missing = Vec::new();
        let mut refs = Vec::new();
        for (step, reference) in &seen.subagent_refs {
            let path = reference.get("trajectory_path").and_then(Json::as_str);
            let id = reference.get("trajectory_id").and_then(Json::as_str);
            let target = self.resolve(t, path, id);
            let mut r = Map::new();
            r.insert("step_id".into(), step.clone());
            r.insert("ref".into(), reference.clone());
            match target {
                Some(s) => {
                    let sub = &self.all[s];
                    r.insert(
                        "session".into(),
                        session_id(self.paths[sub.file], sub).into(),
                    );
                    found.push(s);
                }
                None => missing.push(path.or(id).unwrap_or("?").to_string()),
            }
            refs.push(Json::Object(r));
        }
        if !missing.is_empty() {
            conv.session_lossy(
                "missing-trajectory",
                format!(
                    "{} sub-agent trajectories it refers to are not among the files imported ({}); the references are kept in meta.subagent_refs",
                    missing.len(),
                    missing.join(", ")
                ),
            );
        }
        if !refs.is_empty() {
            conv.meta.insert("subagent_refs".into(), Json::Array(refs));
        }
        found
    }
}

/// A trajectory of a schema version recap does not read is skipped, naming the field.
fn check_version(file: &Path, t: &Trajectory) -> Result<(), Box<Problem>> {
    let v = t.value.at("schema_version");
    match v.as_str() {
        Some(s) if VERSIONS.contains(&s) => Ok(()),
        _ => Err(Box::new(Problem::skipped(
            file,
            format!(
                "`schema_version` is {}: not an ATIF version recap reads ({} … {}); trajectory not imported",
                match v.as_str() {
                    Some(s) => format!("{s:?}"),
                    None => v.type_name().to_string(),
                },
                VERSIONS[0],
                VERSIONS[VERSIONS.len() - 1]
            ),
        )
        .at(t.at())
        .kind("unknown-version"))),
    }
}

/// `trajectory_id` (v1.7), else `<session_id>/<file stem>` (a run's trajectories share
/// its session id), else the file stem.
fn session_id(file: &Path, t: &Trajectory) -> String {
    if let Some(id) = t.value.at("trajectory_id").as_str() {
        return id.to_string();
    }
    let stem = source::stem(file);
    match t.value.at("session_id").as_str() {
        Some(s) if !s.is_empty() => format!("{s}/{stem}"),
        _ => stem,
    }
}

/// The trajectory's own facts: tools from `agent.tool_definitions`, the rest of `agent`,
/// metrics and notes in `meta`.
fn header(conv: &mut Conversation, keys: &mut Unmapped, t: &Trajectory) {
    let v = &t.value;
    keys.unknown("trajectory", v, &ROOT_KEYS, t.at());
    let agent = v.at("agent");
    keys.unknown(
        "agent",
        agent,
        &["name", "version", "model_name", "tool_definitions", "extra"],
        t.at(),
    );
    if let Some(tools) = agent
        .get("tool_definitions")
        .filter(|d| d.as_array().is_some())
    {
        conv.tools = openai_tools(tools);
    }
    let meta = &mut conv.meta;
    meta.insert("source".into(), "atif".into());
    if let Some(pairs) = agent.as_object() {
        let rest: Map<String, Json> = pairs
            .iter()
            .filter(|(k, _)| k != "tool_definitions")
            .map(|(k, v)| (k.to_string(), v.to_json()))
            .collect();
        meta.insert("agent".into(), Json::Object(rest));
    }
    for key in [
        "schema_version",
        "session_id",
        "trajectory_id",
        "final_metrics",
        "notes",
        "extra",
    ] {
        if let Some(x) = v.get(key).filter(|x| !x.is_null()) {
            meta.insert(key.into(), x.to_json());
        }
    }
}

fn starts_with_copied_context(t: &Trajectory) -> bool {
    t.steps()
        .first()
        .is_some_and(|s| s.at("is_copied_context").as_bool() == Some(true))
}

/// The agent's own compaction at a continuation: from the next call on it sent the
/// copied context, which starts at observation `observations` of turn `turns`.
fn restart(
    conv: &mut Conversation,
    cont: &Trajectory,
    turns: usize,
    observations: usize,
    restarts: &mut Vec<Json>,
) {
    let first_is_message = cont
        .steps()
        .first()
        .is_some_and(|s| s.at("source").as_str() != Some("agent"));
    if turns == 0 || !first_is_message || conv.turn_count() < turns {
        conv.session_lossy(
            "no-restart",
            "the continuation's copied context does not start with a message after a turn, so where the agent started over is not recorded",
        );
        return;
    }
    restarts.push(serde_json::json!({
        "after_turns": turns,
        "observation": observations,
    }));
}

/// `meta`: models, continuations, and what the agent sent at each call (recorded
/// where a continuation shows the agent started over).
fn finish_meta(
    conv: &mut Conversation,
    seen: Collected,
    continued: Vec<Json>,
    restarts: Vec<Json>,
) {
    let meta = &mut conv.meta;
    crate::conversation::insert_models(meta, seen.models);
    if !continued.is_empty() {
        meta.insert("continued_in".into(), Json::Array(continued));
    }
    if !restarts.is_empty() {
        meta.insert(
            recap_core::session::RECORDED_CONTEXT.into(),
            serde_json::json!({"sent": "history", "restarts": restarts}),
        );
    }
}
