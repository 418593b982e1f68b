//! Claude Code files read together: parts of one session id in different files (a
//! transcript split, or copied at several points of its life) are one session.
//!
//! Files whose main-thread entries share a session id form one group. Its files are put
//! in the order the session runs through them: a part whose first linked entry's
//! `parentUuid` is an entry of another part follows that part; parts without such a
//! link follow each other in the order of their first timestamps (then of their
//! names). An entry whose `uuid` an earlier part already holds is dropped and counted
//! (`duplicate-entry`), and the first main-thread entry of each later part continues
//! the conversation before it, so a part is never skipped whole. `Import::joins` names
//! the files of each joined session.

use super::import_entries;
use super::split::Entry;
use crate::ojson::J;
use crate::problem::{At, Problem};
use crate::source::{self, Doc};
use crate::unmapped::Unmapped;
use crate::{Import, Join, Kind, Options};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One file as read: its problems so far, and what it holds.
struct Read<'a> {
    path: &'a Path,
    /// Problems reading the bytes (kept first and in order, as for a lone file).
    read: Vec<Problem>,
    /// Problems parsing it.
    parse: Vec<Problem>,
    doc: Option<Doc<'a>>,
}

/// Imports Claude Code files, joining the parts of one session found in several.
pub fn import_files(files: &[PathBuf], opts: &Options) -> Import {
    let mut read_problems = Vec::with_capacity(files.len());
    let texts: Vec<Option<String>> = files
        .iter()
        .map(|f| {
            let mut problems = Vec::new();
            let text = source::read_text(f, &mut problems);
            read_problems.push(problems);
            text
        })
        .collect();
    let mut reads: Vec<Read> = files
        .iter()
        .zip(&texts)
        .zip(read_problems)
        .map(|((path, text), read)| parse(path, text.as_deref(), read))
        .collect();
    let mut out = Import::default();
    for group in groups(&reads) {
        for &i in &group {
            out.problems.append(&mut reads[i].read);
        }
        let sorted_from = out.problems.len();
        for &i in &group {
            out.problems.append(&mut reads[i].parse);
        }
        let order = if group.len() > 1 {
            running_order(&reads, &group)
        } else {
            group
        };
        import_group(&reads, &order, opts, &mut out);
        crate::problem::sort_from(&mut out.problems, sorted_from);
    }
    out
}

/// Parses one file's text as the chat importers do; a file that reads as another
/// format gets one `wrong-importer` problem and no document.
fn parse<'a>(path: &'a Path, text: Option<&'a str>, read: Vec<Problem>) -> Read<'a> {
    let mut parse = Vec::new();
    let doc = text.and_then(|text| {
        let lines = matches!(
            source::data_extension(path).as_deref(),
            Some("jsonl" | "ndjson")
        );
        let doc = source::parse(path, text, lines, &mut parse);
        match crate::sniff::misfit(Kind::ClaudeCode, path, &doc) {
            Some((other, n, total)) => {
                parse = vec![crate::wrong_importer(
                    path,
                    Kind::ClaudeCode,
                    other,
                    n,
                    total,
                )];
                None
            }
            None => Some(doc),
        }
    });
    Read {
        path,
        read,
        parse,
        doc,
    }
}

/// The values of a document's records, in order.
fn records<'d, 'a>(doc: &'d Doc<'a>) -> Box<dyn Iterator<Item = &'d J<'a>> + 'd> {
    match doc {
        Doc::Lines(items) | Doc::Array(items) => Box::new(items.iter().map(|l| &l.value)),
        _ => Box::new(std::iter::empty()),
    }
}

/// A user or assistant entry of the main thread.
fn is_main_message(v: &J) -> bool {
    matches!(v.at("type").as_str(), Some("user" | "assistant"))
        && v.at("isSidechain").as_bool() != Some(true)
}

/// Files that share a main-thread session id, each group in file order, the groups in
/// the order of their first files.
fn groups(reads: &[Read]) -> Vec<Vec<usize>> {
    let mut owner: BTreeMap<&str, usize> = BTreeMap::new();
    // Union-find over files: each file's root is the first file of its group.
    let mut root: Vec<usize> = (0..reads.len()).collect();
    fn find(root: &mut [usize], mut i: usize) -> usize {
        while root[i] != i {
            root[i] = root[root[i]];
            i = root[i];
        }
        i
    }
    for (i, r) in reads.iter().enumerate() {
        let Some(doc) = &r.doc else { continue };
        for v in records(doc).filter(|v| is_main_message(v)) {
            let Some(id) = v.at("sessionId").as_str() else {
                continue;
            };
            let j = *owner.entry(id).or_insert(i);
            let (a, b) = (find(&mut root, i), find(&mut root, j));
            root[a.max(b)] = a.min(b);
        }
    }
    let mut by_root: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..reads.len() {
        let r = find(&mut root, i);
        by_root.entry(r).or_default().push(i);
    }
    by_root.into_values().collect()
}

/// The files of one group in the order the session runs through them (see the module
/// documentation).
fn running_order(reads: &[Read], group: &[usize]) -> Vec<usize> {
    let mut holder: BTreeMap<&str, usize> = BTreeMap::new();
    for &i in group {
        if let Some(doc) = &reads[i].doc {
            for v in records(doc) {
                if let Some(u) = v.at("uuid").as_str() {
                    holder.entry(u).or_insert(i);
                }
            }
        }
    }
    // Per file: the first timestamp, and the file its first linked entry follows.
    let mut keyed: Vec<(&str, usize, Option<usize>)> = group
        .iter()
        .map(|&i| {
            let mut first_time = "";
            let mut after = None;
            if let Some(doc) = &reads[i].doc {
                for v in records(doc) {
                    if first_time.is_empty() {
                        first_time = v.at("timestamp").as_str().unwrap_or("");
                    }
                    if after.is_none()
                        && is_main_message(v)
                        && let Some(p) = v.at("parentUuid").as_str()
                    {
                        after = Some(holder.get(p).copied().filter(|&h| h != i));
                    }
                }
            }
            (first_time, i, after.flatten())
        })
        .collect();
    keyed.sort();
    let mut placed: Vec<usize> = Vec::with_capacity(keyed.len());
    while !keyed.is_empty() {
        // The earliest part whose predecessor is placed (or that has none); a cycle of
        // links takes the earliest part.
        let next = keyed
            .iter()
            .position(|(_, _, after)| after.is_none_or(|a| placed.contains(&a)))
            .unwrap_or(0);
        placed.push(keyed.remove(next).1);
    }
    placed
}

/// Imports the files of one group, in running order: their entries joined, entries
/// already read dropped and counted.
fn import_group(reads: &[Read], order: &[usize], opts: &Options, out: &mut Import) {
    let paths: Vec<&Path> = order.iter().map(|&i| reads[i].path).collect();
    let mut entries: Vec<Entry> = Vec::new();
    // Each uuid with the file it was first read from.
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut duplicates = 0;
    for (pos, &i) in order.iter().enumerate() {
        let Some(doc) = &reads[i].doc else { continue };
        let Some(part) = super::entries_of(reads[i].path, pos, doc, out) else {
            continue;
        };
        let mut dropped: Option<(usize, At, usize)> = None;
        let mut continues = pos > 0;
        for mut e in part {
            if let Some(u) = e.value.at("uuid").as_str() {
                if let Some(&first) = seen.get(u).filter(|&&f| f != pos) {
                    let d = dropped.get_or_insert((0, e.at, first));
                    d.0 += 1;
                    continue;
                }
                seen.insert(u, pos);
            }
            if continues && is_main_message(e.value) {
                e.continues = true;
                continues = false;
            }
            entries.push(e);
        }
        if let Some((n, at, first)) = dropped {
            duplicates += n;
            out.problems.push(
                Problem::lossy(
                    reads[i].path,
                    format!(
                        "{n} entries of this file are already imported from {} (the same uuid); they are not imported again",
                        paths[first].display()
                    ),
                )
                .at(at)
                .kind("duplicate-entry"),
            );
        }
    }
    let mut keys: Vec<Unmapped> = paths.iter().map(|_| Unmapped::default()).collect();
    import_entries(&paths, entries, opts, &mut keys, out);
    for (path, keys) in paths.iter().zip(keys) {
        out.problems.extend(keys.into_problems(path));
    }
    if paths.len() > 1 {
        let session_ids: BTreeSet<String> = order
            .iter()
            .filter_map(|&i| reads[i].doc.as_ref())
            .flat_map(records)
            .filter(|v| is_main_message(v))
            .filter_map(|v| v.at("sessionId").as_str().map(str::to_string))
            .collect();
        out.joins.push(Join {
            session_ids: session_ids.into_iter().collect(),
            files: paths.iter().map(|p| p.to_path_buf()).collect(),
            duplicates,
        });
    }
}
