//! Keys of a log that an importer does not carry over. Every one is counted: per file,
//! place (`entry`, `message.content[]`…) and key, one lossy problem that says how often
//! it occurred, where first, and why it is not carried — so nothing is dropped silently,
//! and a large log does not bury its real problems under thousands of identical ones.

use crate::ojson::J;
use crate::problem::{At, Problem};
use std::collections::BTreeMap;
use std::path::Path;

struct Seen {
    count: usize,
    first: At,
    /// The file of the first occurrence (see [`Unmapped::set_file`]).
    file: usize,
    why: &'static str,
    kind: &'static str,
}

/// The not-carried keys of one file, by place and key. Nested maps so that counting
/// an occurrence already seen allocates nothing (this runs for every key of every
/// record).
#[derive(Default)]
pub(crate) struct Unmapped {
    seen: BTreeMap<String, BTreeMap<String, Seen>>,
    /// The file being read, when one count spans several files.
    file: usize,
}

/// A value that carries nothing: `null`, `[]`, `{}`.
fn is_empty(v: &J) -> bool {
    match v {
        J::Null => true,
        J::Arr(a) => a.is_empty(),
        J::Obj(o) => o.is_empty(),
        _ => false,
    }
}

impl Unmapped {
    fn note(&mut self, place: &str, key: &str, why: &'static str, kind: &'static str, at: At) {
        if let Some(seen) = self.seen.get_mut(place).and_then(|keys| keys.get_mut(key)) {
            seen.count += 1;
            return;
        }
        self.seen.entry(place.to_string()).or_default().insert(
            key.to_string(),
            Seen {
                count: 1,
                first: at,
                file: self.file,
                why,
                kind,
            },
        );
    }

    /// Counts every key of `obj` that is neither in `known` (mapped, or deliberately
    /// not carried and counted through [`Unmapped::dropped`]) nor empty.
    pub fn unknown(&mut self, place: &str, obj: &J, known: &[&str], at: At) {
        let Some(pairs) = obj.as_object() else {
            return;
        };
        for (k, v) in pairs {
            if !known.contains(&k.as_ref()) && !is_empty(v) {
                self.note(
                    place,
                    k,
                    "a key this importer does not know; its value is not carried over",
                    "unknown-key",
                    at,
                );
            }
        }
    }

    /// Counts each of `keys` present (and not empty) in `obj` as deliberately not
    /// carried, with its reason.
    pub fn dropped(&mut self, place: &str, obj: &J, keys: &[(&str, &'static str)], at: At) {
        let Some(pairs) = obj.as_object() else {
            return;
        };
        for (k, v) in pairs {
            if is_empty(v) {
                continue;
            }
            if let Some((_, why)) = keys.iter().find(|(name, _)| name == k) {
                self.note(place, k, why, "dropped-key", at);
            }
        }
    }

    /// Counts one lossy mapping of kind `kind` (`what` at `place`, for `why`) that
    /// recurs through a log, so it is one problem per file however often it occurs.
    pub fn counted(
        &mut self,
        place: &str,
        what: &str,
        why: &'static str,
        kind: &'static str,
        at: At,
    ) {
        self.note(place, what, why, kind, at);
    }

    /// Counts one deliberately dropped detail that is not a key of its own (a block
    /// type, an entry type…).
    pub fn dropped_item(&mut self, place: &str, what: &str, why: &'static str, at: At) {
        self.note(place, what, why, "dropped-key", at);
    }

    /// The keys noted from now on are in file `file` (an index into the paths given to
    /// [`Unmapped::into_problems_across`]): a log written one event per file is counted
    /// once per place and key, not once per file.
    pub fn set_file(&mut self, file: usize) {
        self.file = file;
    }

    /// [`Unmapped::into_problems`] for counts that span `files`: each problem names the
    /// file of its first occurrence.
    pub fn into_problems_across(self, files: &[&Path]) -> Vec<Problem> {
        let firsts: Vec<usize> = self
            .seen
            .values()
            .flat_map(|keys| keys.values().map(|s| s.file))
            .collect();
        self.into_problems(Path::new(""))
            .into_iter()
            .zip(firsts)
            .map(|(p, f)| Problem {
                file: files[f].to_path_buf(),
                ..p
            })
            .collect()
    }

    /// One lossy problem per place and key, in place then key order.
    pub fn into_problems(self, file: &Path) -> Vec<Problem> {
        self.seen
            .into_iter()
            .flat_map(|(place, keys)| {
                keys.into_iter()
                    .map(move |(key, s)| (place.clone(), key, s))
            })
            .map(|(place, key, s)| {
                let times = if s.count == 1 {
                    "once".to_string()
                } else {
                    format!("{} times, first here", s.count)
                };
                let message = match s.kind {
                    "dropped-key" | "unknown-key" => {
                        format!("`{place}.{key}` not carried over ({times}): {}", s.why)
                    }
                    _ => format!("`{place}`: {key} ({times}): {}", s.why),
                };
                Problem::lossy(file, message).at(s.first).kind(s.kind)
            })
            .collect()
    }
}
