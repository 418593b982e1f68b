//! A transcript's entries (of one file, or of the files of one joined session) split
//! into the main conversation(s) and the sub-agent conversations.

use crate::Import;
use crate::ojson::J;
use crate::problem::{At, Problem};
use crate::unmapped::Unmapped;
use std::collections::BTreeMap;
use std::path::Path;

/// One entry with where it is.
pub(super) struct Entry<'a> {
    /// The index of its file among the files read together.
    pub file: usize,
    pub at: At,
    pub value: &'a J<'a>,
    /// The first main-thread entry of a later part of a session joined from several
    /// files: it continues the conversation before it, whatever its parent.
    pub continues: bool,
}

/// The entries of one session under construction.
pub(super) struct Group<'a> {
    pub entries: Vec<Entry<'a>>,
    pub sidechain: bool,
}

/// Splits entries into the main conversation(s) and the sidechains, each in file
/// order. Entries that are not messages are counted here.
pub(super) fn split<'a>(
    files: &[&Path],
    entries: Vec<Entry<'a>>,
    keys: &mut [Unmapped],
    out: &mut Import,
) -> Vec<Group<'a>> {
    let mut groups: Vec<Group> = Vec::new();
    // The group of the current main conversation, and of each sidechain entry by uuid.
    let mut main: Option<usize> = None;
    let mut side_of: BTreeMap<String, usize> = BTreeMap::new();
    for e in entries {
        let v = e.value;
        let file = files[e.file];
        let keys = &mut keys[e.file];
        let Some(kind) = v.at("type").as_str() else {
            out.problems.push(
                Problem::skipped(
                    file,
                    format!(
                        "a transcript entry ({}) without a string `type`; not imported",
                        v.type_name()
                    ),
                )
                .at(e.at)
                .kind("bad-entry"),
            );
            continue;
        };
        match kind {
            "user" | "assistant" => {}
            "system" => {
                keys.dropped_item(
                    "entry",
                    "type=system",
                    "hook and status notices that Claude Code shows in its UI; they are not sent to the model",
                    e.at,
                );
                continue;
            }
            "summary" => {
                keys.dropped_item(
                    "entry",
                    "type=summary",
                    "conversation titles for Claude Code's resume list; never sent to the model",
                    e.at,
                );
                continue;
            }
            "queue-operation" | "file-history-snapshot" | "progress" => {
                keys.dropped_item(
                    "entry",
                    &format!("type={kind}"),
                    "Claude Code's own bookkeeping entries; not messages",
                    e.at,
                );
                continue;
            }
            other => {
                out.problems.push(
                    Problem::lossy(
                        file,
                        format!("an entry of unknown type {other:?}; not imported"),
                    )
                    .at(e.at)
                    .kind("unknown-entry"),
                );
                continue;
            }
        }
        let uuid = v.at("uuid").as_str().map(str::to_string);
        let parent = v.at("parentUuid").as_str();
        if v.at("isSidechain").as_bool() == Some(true) {
            let g = match parent.and_then(|p| side_of.get(p)) {
                Some(g) => *g,
                None => {
                    if parent.is_some() {
                        out.problems.push(
                            Problem::lossy(
                                file,
                                "a sidechain entry whose parent is not in the file starts a sub-agent session of its own",
                            )
                            .at(e.at)
                            .kind("orphan-entry"),
                        );
                    }
                    groups.push(Group {
                        entries: Vec::new(),
                        sidechain: true,
                    });
                    groups.len() - 1
                }
            };
            if let Some(u) = uuid {
                side_of.insert(u, g);
            }
            groups[g].entries.push(e);
        } else {
            let continues =
                e.continues || v.at("isCompactSummary").as_bool() == Some(true) || parent.is_some();
            let g = match main {
                Some(g) if continues || groups[g].entries.is_empty() => g,
                _ => {
                    groups.push(Group {
                        entries: Vec::new(),
                        sidechain: false,
                    });
                    groups.len() - 1
                }
            };
            main = Some(g);
            groups[g].entries.push(e);
        }
    }
    groups
}
