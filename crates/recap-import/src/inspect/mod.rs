//! Inspect AI evaluation logs → chat-form sessions (SPEC 11.1): `.eval` archives (a zip
//! of `header.json`, one `samples/<id>_epoch_<n>.json` per sample, summaries and a
//! journal) and `.json` logs (one object with `samples`), log versions 2 and 3.
//!
//! Each epoch of a sample is a session (`sample.rs`). This module reads the containers:
//! the log's header (`eval`, `plan`, `results`, `stats`; from `_journal/start.json`
//! when an archive has no header yet) and its samples. A cut archive keeps the samples
//! that are complete before the cut. docs/importers.md has the whole mapping.

mod sample;

use crate::Import;
use crate::ojson::J;
use crate::problem::{At, Problem};
use crate::source::{self, Doc};
use crate::unmapped::Unmapped;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

/// The log versions recap reads.
const VERSIONS: [u64; 2] = [2, 3];

/// What a sample needs from its log.
pub(super) struct Log<'h> {
    /// The log's header (`version`, `status`, `eval`, …), without `samples`.
    pub header: &'h J<'h>,
}

/// One sample's JSON: the path its problems name and where it starts.
struct SampleText {
    /// The log file, or `<log>/<entry>` for a sample inside an archive.
    path: PathBuf,
    text: String,
}

/// Imports one log file: an `.eval` archive (recognised by its bytes) or a JSON log.
pub fn import_file(file: &Path) -> Import {
    let mut out = Import::default();
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            out.problems.push(
                Problem::skipped(file, format!("cannot read file: {e}")).kind("unreadable-file"),
            );
            return out;
        }
    };
    if bytes.starts_with(b"PK") {
        archive(file, &bytes, &mut out);
    } else {
        let text = source::decode(file, bytes, &mut out.problems);
        json_log(file, &text, &mut out);
    }
    crate::problem::sort_from(&mut out.problems, 0);
    out
}

/// Imports a JSON log's text (benchmarks and tests; an archive needs its bytes).
pub(crate) fn import_text(file: &Path, text: &str) -> Import {
    let mut out = Import::default();
    json_log(file, text, &mut out);
    out
}

/// A `.json` log: one object whose `samples` are read one by one.
fn json_log(file: &Path, text: &str, out: &mut Import) {
    let mut problems = Vec::new();
    let doc = source::parse(file, text, false, &mut problems);
    if let Some((other, n, total)) = crate::sniff::misfit(crate::Kind::Inspect, file, &doc) {
        out.problems.push(crate::wrong_importer(
            file,
            crate::Kind::Inspect,
            other,
            n,
            total,
        ));
        return;
    }
    out.problems.append(&mut problems);
    let members = match doc {
        Doc::Object(members) => members,
        Doc::Other(None) => return,
        _ => {
            out.problems.push(
                Problem::skipped(file, "expected one Inspect log object (with `eval`)")
                    .at_line(1)
                    .kind("not-an-eval-log"),
            );
            return;
        }
    };
    let header = J::Obj(
        members
            .iter()
            .filter(|m| m.key != "samples")
            .map(|m| (m.key.clone().into(), m.value.clone()))
            .collect(),
    );
    let at = At::line(members.first().map_or(1, |m| m.line));
    if !is_log(file, &header, at, out) {
        return;
    }
    let log = Log { header: &header };
    let Some(samples) = members.iter().find(|m| m.key == "samples") else {
        return;
    };
    let mut keys = Unmapped::default();
    count_header_keys(&header, at, &mut keys);
    for (i, s) in samples.value.as_array().unwrap_or(&[]).iter().enumerate() {
        let line = samples.item_lines.get(i).copied().unwrap_or(samples.line);
        sample::import(&log, file, At::new(line, Some(i + 1)), s, &mut keys, out);
    }
    out.problems.extend(keys.into_problems(file));
}

/// The header keys besides `version`, `status` and `eval` (which every session keeps in
/// `meta.inspect`), counted as not carried.
fn count_header_keys(header: &J, at: At, keys: &mut Unmapped) {
    keys.unknown(
        "log",
        header,
        &[
            "version",
            "status",
            "eval",
            "plan",
            "results",
            "stats",
            "reductions",
            "invalidated",
            "error",
            "location",
        ],
        at,
    );
    keys.dropped(
        "log",
        header,
        &[
            (
                "plan",
                "the solver plan of the run; the messages show what it did",
            ),
            (
                "results",
                "the run's aggregate scores; each sample's score is kept",
            ),
            (
                "stats",
                "the run's total usage and times; per-call usage is kept on the turns",
            ),
            ("reductions", "scores reduced over epochs"),
            ("invalidated", "whether the log was invalidated"),
            ("error", "the run's error, if it failed"),
            ("location", "where the log was written"),
        ],
        at,
    );
}

/// Whether the header is an Inspect log of a version recap reads; a problem if not.
fn is_log(file: &Path, header: &J, at: At, out: &mut Import) -> bool {
    if header.at("eval").as_object().is_none() {
        out.problems.push(
            Problem::skipped(
                file,
                "no `eval` object: not an Inspect log (or its header is missing)",
            )
            .at(at)
            .kind("not-an-eval-log"),
        );
        return false;
    }
    match header.at("version").as_u64() {
        Some(v) if VERSIONS.contains(&v) => true,
        _ => {
            let found = header.at("version");
            out.problems.push(
                Problem::skipped(
                    file,
                    format!(
                        "log `version` is {}: not an Inspect log version recap reads (2 or 3); no sample of it is imported",
                        match found.as_u64() {
                            Some(v) => v.to_string(),
                            None => found.type_name().to_string(),
                        }
                    ),
                )
                .at(at)
                .kind("unknown-version"),
            );
            false
        }
    }
}

/// An `.eval` archive: its header, then its samples in archive order. An archive whose
/// end (the zip directory) is missing is read entry by entry up to the cut.
fn archive(file: &Path, bytes: &[u8], out: &mut Import) {
    let entries = match zip::ZipArchive::new(Cursor::new(bytes)) {
        Ok(mut zip) => whole_archive(file, &mut zip, out),
        Err(e) => {
            let entries = streamed_entries(bytes);
            out.problems.push(
                Problem::skipped(
                    file,
                    format!(
                        "the `.eval` archive is cut off or damaged ({e}); the {} complete entries before the damage are read",
                        entries.len()
                    ),
                )
                .kind("truncated"),
            );
            entries
        }
    };
    let find = |name: &str| entries.iter().find(|(n, _)| n == name);
    let Some((name, header_text)) = find("header.json").or_else(|| find("_journal/start.json"))
    else {
        out.problems.push(
            Problem::skipped(
                file,
                "the archive holds neither `header.json` nor `_journal/start.json`: not an Inspect log, or cut before its header",
            )
            .kind("not-an-eval-log"),
        );
        return;
    };
    let header_path = file.join(name);
    let mut problems = Vec::new();
    let header = match source::parse(&header_path, header_text, false, &mut problems) {
        Doc::Object(members) => source::object_of(&members),
        _ => {
            out.problems.append(&mut problems);
            return;
        }
    };
    out.problems.append(&mut problems);
    if !is_log(&header_path, &header, At::line(1), out) {
        return;
    }
    let log = Log { header: &header };
    let samples: Vec<SampleText> = entries
        .iter()
        .filter(|(n, _)| n.starts_with("samples/") && n.ends_with(".json"))
        .map(|(n, text)| SampleText {
            path: file.join(n),
            text: text.clone(),
        })
        .collect();
    let mut keys = Unmapped::default();
    let mut paths: Vec<&Path> = vec![&header_path];
    paths.extend(samples.iter().map(|s| s.path.as_path()));
    count_header_keys(&header, At::line(1), &mut keys);
    for (i, s) in samples.iter().enumerate() {
        keys.set_file(i + 1);
        let doc = source::parse(&s.path, &s.text, false, &mut out.problems);
        if let Doc::Object(members) = doc {
            let value = source::object_of(&members);
            let at = At::line(members.first().map_or(1, |m| m.line));
            sample::import(&log, &s.path, at, &value, &mut keys, out);
        }
    }
    out.problems.extend(keys.into_problems_across(&paths));
}

/// Every entry of a readable archive as text, in archive order; an entry that cannot be
/// read is a problem.
fn whole_archive(
    file: &Path,
    zip: &mut zip::ZipArchive<Cursor<&[u8]>>,
    out: &mut Import,
) -> Vec<(String, String)> {
    let mut entries = Vec::new();
    for i in 0..zip.len() {
        let mut entry = match zip.by_index(i) {
            Ok(e) => e,
            Err(e) => {
                out.problems.push(
                    Problem::skipped(file, format!("archive entry {i} cannot be read: {e}"))
                        .kind("truncated"),
                );
                continue;
            }
        };
        let name = entry.name().map(|n| n.to_string()).unwrap_or_default();
        let mut bytes = Vec::new();
        match entry.read_to_end(&mut bytes) {
            Ok(_) => {
                let text = source::decode(&file.join(&name), bytes, &mut out.problems);
                entries.push((name, text));
            }
            Err(e) => out.problems.push(
                Problem::skipped(
                    &file.join(&name),
                    format!("archive entry cannot be decompressed: {e}"),
                )
                .kind("truncated"),
            ),
        }
    }
    entries
}

/// The complete entries at the start of an archive read as a stream, for an archive
/// whose directory (at its end) is missing.
fn streamed_entries(bytes: &[u8]) -> Vec<(String, String)> {
    let mut reader = Cursor::new(bytes);
    let mut entries = Vec::new();
    while let Ok(Some(mut entry)) = zip::read::read_zipfile_from_stream(&mut reader) {
        let name = entry.name().map(|n| n.to_string()).unwrap_or_default();
        let mut data = Vec::new();
        if entry.read_to_end(&mut data).is_err() {
            break;
        }
        match String::from_utf8(data) {
            Ok(text) => entries.push((name, text)),
            Err(_) => break,
        }
    }
    entries
}
