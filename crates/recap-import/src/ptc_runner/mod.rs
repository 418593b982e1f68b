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

mod feedback;
mod records;
mod run;
#[cfg(test)]
mod tests;
mod trace;

use crate::Import;
use crate::problem::Problem;
use crate::text::{JsonLine, json_lines, read_file};
use recap_core::session::fenced_program;
use serde_json::Value as Json;
use std::collections::BTreeMap;
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
        if let Some(session) = run::import_run(file, &mut results, &mut out.problems) {
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
pub(super) fn call_program(call: &Json) -> Option<&str> {
    if call.get("name").and_then(Json::as_str) != Some("run_ptc_lisp") {
        return None;
    }
    call.get("args")?.get("program")?.as_str()
}

/// Where the files beside an inspection log live.
pub(super) struct Layout {
    pub run: String,
    pub arm: Option<String>,
    pub traces: Option<PathBuf>,
    pub results: Option<PathBuf>,
}

pub(super) fn layout(file: &Path) -> Layout {
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
pub(super) struct ResultsCache {
    by_file: BTreeMap<PathBuf, BTreeMap<String, Json>>,
}

impl ResultsCache {
    pub fn get(&mut self, path: &Path, tag: &str, problems: &mut Vec<Problem>) -> Option<Json> {
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
