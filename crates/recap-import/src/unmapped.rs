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
    why: &'static str,
    kind: &'static str,
}

/// The not-carried keys of one file, by place and key. Nested maps so that counting
/// an occurrence already seen allocates nothing (this runs for every key of every
/// record).
#[derive(Default)]
pub(crate) struct Unmapped {
    seen: BTreeMap<String, BTreeMap<String, Seen>>,
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

    /// Counts one deliberately dropped detail that is not a key of its own (a block
    /// type, an entry type…).
    pub fn dropped_item(&mut self, place: &str, what: &str, why: &'static str, at: At) {
        self.note(place, what, why, "dropped-key", at);
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
                Problem::lossy(
                    file,
                    format!("`{place}.{key}` not carried over ({times}): {}", s.why),
                )
                .at(s.first)
                .kind(s.kind)
            })
            .collect()
    }
}
