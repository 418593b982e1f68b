//! `recap import auto`: each file with the importer its name or content shows. Formats
//! whose importer reads files together (ptc-runner's inspection logs with their traces,
//! Claude Code parts of one session) are imported as a group, at the place of the
//! group's first file (ptc-runner logs last); every other file on its own, in order.
//! `Import::formats` says which format each file was read as.

use crate::problem::Problem;
use crate::source;
use crate::{Import, Kind, Options, claude_code, import_text_into, ptc_runner, smolagents, sniff};
use std::path::{Path, PathBuf};

/// One file and the format it was recognised as (`None`: unknown, or unreadable).
struct Planned {
    file: PathBuf,
    kind: Option<Kind>,
    /// The text, kept for the importers that read text.
    text: Option<String>,
    /// Problems reading it (importers that read the file themselves report their own).
    read: Vec<Problem>,
}

pub(crate) fn auto(files: &[PathBuf], opts: &Options, all: &mut Import) {
    let logs: Vec<&PathBuf> = files
        .iter()
        .filter(|f| ptc_runner::is_inspection_log(f))
        .collect();
    let mut plan: Vec<Planned> = files.iter().map(|f| recognise(f, &logs)).collect();
    all.formats
        .extend(plan.iter().map(|p| (p.file.clone(), p.kind)));
    let mut ptc = Vec::new();
    let mut done: Vec<Kind> = Vec::new();
    for i in 0..plan.len() {
        let file = plan[i].file.clone();
        match plan[i].kind {
            Some(Kind::PtcRunner) => {
                if ptc_runner::is_inspection_log(&file) {
                    ptc.push(file);
                }
            }
            Some(Kind::Smolagents) => all.extend(smolagents::import_file(&file)),
            Some(Kind::Inspect) => all.extend(crate::inspect::import_file(&file)),
            Some(kind) if kind.reads_files_together() => {
                if !done.contains(&kind) {
                    done.push(kind);
                    let group: Vec<PathBuf> = plan
                        .iter()
                        .filter(|p| p.kind == Some(kind))
                        .map(|p| p.file.clone())
                        .collect();
                    all.extend(import_together(kind, &group, opts));
                }
            }
            kind => {
                let p = &mut plan[i];
                all.problems.append(&mut p.read);
                let Some(text) = p.text.take() else { continue };
                let mut out = Import::default();
                import_text_into(kind.unwrap_or(Kind::Auto), &file, &text, opts, &mut out);
                all.extend(out);
            }
        }
    }
    if !ptc.is_empty() {
        all.extend(ptc_runner::import_files(&ptc));
    }
}

/// Imports files of a format whose importer reads them together.
fn import_together(kind: Kind, files: &[PathBuf], opts: &Options) -> Import {
    match kind {
        Kind::ClaudeCode => claude_code::import_files(files, opts),
        Kind::Atif => crate::atif::import_files(files),
        Kind::OpenhandsSdk => crate::openhands_sdk::import_files(files),
        _ => Import::default(),
    }
}

/// What a file is: by name (ptc-runner logs and the files beside them, `.traj`), else
/// by its content.
fn recognise(file: &Path, logs: &[&PathBuf]) -> Planned {
    let mut planned = Planned {
        file: file.to_path_buf(),
        kind: None,
        text: None,
        read: Vec::new(),
    };
    if ptc_runner::is_inspection_log(file) || is_ptc_side_file(file, logs) {
        // Side files are read by the ptc-runner importer with their inspection log.
        planned.kind = Some(Kind::PtcRunner);
        return planned;
    }
    if source::data_extension(file).as_deref() == Some("eval") {
        // An Inspect archive: read by its importer from its bytes.
        planned.kind = Some(Kind::Inspect);
        return planned;
    }
    let Some(text) = source::read_text(file, &mut planned.read) else {
        return planned;
    };
    let lines = matches!(
        source::data_extension(file).as_deref(),
        Some("jsonl" | "ndjson")
    );
    let mut ignored = Vec::new();
    let doc = source::parse(file, &text, lines, &mut ignored);
    planned.kind = sniff::file_kind(file, Some(&doc));
    drop(doc);
    planned.text = Some(text);
    planned
}

/// A ptc-runner run's `results.jsonl` or `traces/<run>/run.jsonl` whose inspection log
/// (`inspect/<run>/run.inspection.jsonl` of the same arm) is being imported.
fn is_ptc_side_file(file: &Path, logs: &[&PathBuf]) -> bool {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let arm_of_log = |log: &&PathBuf| log.parent()?.parent()?.parent().map(Path::to_path_buf);
    match name {
        "results.jsonl" => {
            let arm = file.parent();
            logs.iter().any(|l| arm_of_log(l).as_deref() == arm)
        }
        "run.jsonl" => {
            let run_dir = file.parent();
            let traces = run_dir.and_then(Path::parent);
            if traces
                .and_then(Path::file_name)
                .is_none_or(|n| n != "traces")
            {
                return false;
            }
            let (Some(arm), Some(run)) = (
                traces.and_then(Path::parent),
                run_dir.and_then(Path::file_name),
            ) else {
                return false;
            };
            logs.iter()
                .any(|l| l.parent() == Some(arm.join("inspect").join(run).as_path()))
        }
        _ => false,
    }
}
