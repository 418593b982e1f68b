//! What `<arm>/traces/<run>/run.jsonl` says about a run: each evaluation's status and
//! definition count, the model, the outcome.

use crate::problem::Problem;
use crate::text::{JsonLine, json_lines, read_file};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::path::Path;

/// What `run.jsonl` says about the run.
#[derive(Default)]
pub(super) struct Trace {
    pub found: bool,
    /// evaluation id → (status, defined_count)
    pub evals: BTreeMap<String, (String, Option<u64>)>,
    pub model: Option<String>,
    pub model_revision: Option<String>,
    pub outcome: Option<Json>,
}

pub(super) fn read_trace(path: Option<&Path>, problems: &mut Vec<Problem>) -> Trace {
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
