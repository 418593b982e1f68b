//! Which corpus lines a shard of a run reads (`recap run --shard I/N`, `recap eval
//! --shard I/N`), through [`recap_core::CorpusReader::only_lines`].
//!
//! A line belongs to one shard by its session id: shard `I` of `N` takes the lines whose
//! top-level `"id"` is a string `id` with `sha256(id) mod N = I` (the first 8 bytes of
//! the digest as a big-endian integer), so every line of one id, wherever it is, lands in
//! the same shard, and that shard's reader rejects a repeated id exactly as a run over
//! the whole corpus does. A line without a string id — malformed JSON, not an object —
//! is never a session, so it only has to land somewhere: in shard `line mod N` (its
//! 1-based line number in its file). A file that cannot be read at all is reported by
//! shard 0.
//!
//! Finding the id reads a line only as far as its `"id"` key (recap's importers and
//! generators write it first); the other shards' lines are never parsed.

use serde::de::{self, Deserializer as _, MapAccess, Visitor};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Shard `index` of `count` (0 ≤ index < count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Shard {
    index: u32,
    count: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("expected I/N (shard I of N, counted from 0: 0/4, 1/4, 2/4, 3/4), got {0:?}")]
    Syntax(String),
    #[error("a run has at least one shard; got {0:?}")]
    NoShards(String),
    #[error("shard {index} of {count} does not exist: shards are counted from 0 to {last}")]
    OutOfRange { index: u32, count: u32, last: u32 },
}

impl Shard {
    /// The whole corpus: one shard that takes every line.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    pub fn new(index: u32, count: u32) -> Result<Shard, ShardError> {
        if count == 0 {
            return Err(ShardError::NoShards(format!("{index}/{count}")));
        }
        if index >= count {
            return Err(ShardError::OutOfRange {
                index,
                count,
                last: count - 1,
            });
        }
        Ok(Shard { index, count })
    }

    pub fn index(self) -> u32 {
        self.index
    }

    pub fn count(self) -> u32 {
        self.count
    }

    /// The shard of a session id.
    pub fn of_id(id: &str, count: u32) -> u32 {
        let digest = Sha256::digest(id.as_bytes());
        let mut head = [0u8; 8];
        head.copy_from_slice(&digest[..8]);
        (u64::from_be_bytes(head) % u64::from(count.max(1))) as u32
    }

    /// Whether this shard reads a session of id `id`.
    pub fn owns_id(self, id: &str) -> bool {
        self.count == 1 || Shard::of_id(id, self.count) == self.index
    }

    /// Whether this shard reads the non-blank corpus line `bytes` (line end removed), line
    /// `line` (1-based) of its file; line 0 stands for a file that cannot be read.
    pub fn owns_line(self, line: usize, bytes: &[u8]) -> bool {
        if self.count == 1 {
            return true;
        }
        match session_id(bytes) {
            Some(id) => Shard::of_id(&id, self.count) == self.index,
            None => (line as u64 % u64::from(self.count)) as u32 == self.index,
        }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax(s.to_string());
        let (i, n) = s.split_once('/').ok_or_else(syntax)?;
        let number = |t: &str| {
            let t = t.trim();
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(syntax());
            }
            t.parse::<u32>().map_err(|_| syntax())
        };
        Shard::new(number(i)?, number(n)?)
    }
}

/// The string value of a line's top-level `"id"` key, read no further than that key's
/// value; `None` when the line is not a JSON object, fails before the key, has no such
/// key, or its value is not a string. Exact for every line that is a session: there the
/// key is unique and the value a string, which is what the reader reads as the id.
pub fn session_id(bytes: &[u8]) -> Option<String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    // Ends with an error on purpose once the id is read: the rest of the line is not
    // needed.
    let _ = (&mut de).deserialize_map(IdFinder { found: &mut found });
    found
}

struct IdFinder<'f> {
    found: &'f mut Option<String>,
}

impl<'de> Visitor<'de> for IdFinder<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a session object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "id" {
                let id = map.next_value::<Cow<'de, str>>()?;
                *self.found = Some(id.into_owned());
                return Err(de::Error::custom("id found"));
            }
            map.next_value::<de::IgnoredAny>()?;
        }
        Ok(())
    }
}

/// The shard's choice of corpus lines, counting what it sees (shared by the corpus
/// readers of a run, which take lines in order).
#[derive(Debug)]
pub(crate) struct Selection {
    shard: Shard,
    seen: AtomicU64,
    owned: AtomicU64,
}

impl Selection {
    pub(crate) fn new(shard: Shard) -> Self {
        Selection {
            shard,
            seen: AtomicU64::new(0),
            owned: AtomicU64::new(0),
        }
    }

    /// Whether the shard reads this entry (see [`Shard::owns_line`]).
    pub(crate) fn keep(&self, line: usize, bytes: &[u8]) -> bool {
        self.seen.fetch_add(1, Ordering::Relaxed);
        let keep = self.shard.owns_line(line, bytes);
        if keep {
            self.owned.fetch_add(1, Ordering::Relaxed);
        }
        keep
    }

    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.seen.load(Ordering::Relaxed),
            self.owned.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_what_cannot_be_a_shard() {
        assert_eq!("2/8".parse::<Shard>(), Shard::new(2, 8));
        assert_eq!("0/1".parse::<Shard>(), Ok(Shard::WHOLE));
        assert_eq!(
            " 3 / 4 ".parse::<Shard>().map(|s| s.to_string()),
            Ok("3/4".into())
        );
        for bad in ["", "2", "2/", "/8", "a/8", "-1/8", "2/8/1", "1.5/4"] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains("expected I/N"), "{bad:?}: {e}");
        }
        let e = "8/8".parse::<Shard>().unwrap_err().to_string();
        assert!(e.contains("from 0 to 7"), "{e}");
        let e = "0/0".parse::<Shard>().unwrap_err().to_string();
        assert!(e.contains("at least one shard"), "{e}");
    }

    #[test]
    fn the_id_is_read_as_the_reader_reads_it_wherever_the_key_is() {
        let id = |s: &str| session_id(s.as_bytes());
        assert_eq!(id(r#"{"id":"a","turns":[]}"#), Some("a".into()));
        assert_eq!(
            id(r#"{ "data": {"id": "inner"}, "id" : "x\u0041\n" }"#),
            Some("xA\n".into())
        );
        assert_eq!(id("\u{feff}{\"id\":\"bom\"}"), Some("bom".into()));
        // Not a session: no string id.
        assert_eq!(id(r#"{"id":7}"#), None);
        assert_eq!(id(r#"{"turns":[]}"#), None);
        assert_eq!(id(r#"[{"id":"a"}]"#), None);
        assert_eq!(id(r#"{"data": [1, 2"#), None);
        assert_eq!(id("not json"), None);
        // The rest of the line is not read: a line broken after its id still has one.
        assert_eq!(id(r#"{"id":"a","turns":[1,"#), Some("a".into()));
    }

    #[test]
    fn every_line_of_one_id_lands_in_one_shard_and_the_shards_cover_the_corpus() {
        let lines: Vec<String> = (0..200)
            .map(|i| format!(r#"{{"id":"s-{}","turns":[]}}"#, i % 150))
            .collect();
        for count in [1, 2, 3, 7] {
            let shards: Vec<Shard> = (0..count).map(|i| Shard::new(i, count).unwrap()).collect();
            for (n, line) in lines.iter().enumerate() {
                let owners: Vec<&Shard> = shards
                    .iter()
                    .filter(|s| s.owns_line(n + 1, line.as_bytes()))
                    .collect();
                assert_eq!(owners.len(), 1, "{line}");
                assert!(owners[0].owns_id(&format!("s-{}", n % 150)));
            }
        }
        // Lines without an id go by their line number.
        let s = Shard::new(1, 3).unwrap();
        assert!(s.owns_line(4, b"garbage") && !s.owns_line(5, b"garbage"));
        assert!(!s.owns_line(0, b""), "an unreadable file is shard 0's");
    }

    /// What each shard of `count` reads of `text`: (line, session id or rejected field).
    fn shard_entries(text: &str, count: u32) -> Vec<Vec<(usize, String)>> {
        (0..count)
            .map(|i| {
                let shard = Shard::new(i, count).unwrap();
                recap_core::CorpusReader::new(std::path::Path::new("c.jsonl"), text.as_bytes())
                    .only_lines(move |line, bytes| shard.owns_line(line, bytes))
                    .map(|e| match e.session {
                        Ok(s) => (e.line, s.id),
                        Err(r) => (e.line, format!("{}: {}", r.field, r.message)),
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn shards_read_every_line_once_and_reject_repeated_ids_as_the_whole_file_does() {
        let session = |id: &str| {
            format!(
                r#"{{"id":"{id}","mission":"m","turns":[{{"number":1,"program":"(def x 1)","success":true}}]}}"#
            )
        };
        let lines = [
            session("a"),
            String::new(),
            session("b"),
            "{broken".to_string(),
            session("a"),
            session("c"),
            session("b"),
            r#"{"id":"d","mission":"m"}"#.to_string(),
            session("d"),
        ];
        let text = lines.join("\n");
        let whole: Vec<(usize, String)> = shard_entries(&text, 1).remove(0);
        assert_eq!(whole.len(), 8, "{whole:?}");
        assert!(
            whole[3].1.contains("duplicate session id \"a\""),
            "{whole:?}"
        );
        for count in [2, 3, 7] {
            let mut merged: Vec<(usize, String)> =
                shard_entries(&text, count).into_iter().flatten().collect();
            merged.sort();
            assert_eq!(merged, whole, "{count} shards");
        }
        // A file that is not JSON Lines is reported once, by the shard of its line 1.
        let array = "[\n{\"id\":\"a\"},\n{\"id\":\"b\"}\n]\n";
        let shards = shard_entries(array, 3);
        assert_eq!(shards.iter().flatten().count(), 1, "{shards:?}");
        assert_eq!(
            shards[1].len(),
            1,
            "line 1 without an id is shard 1 mod 3's"
        );
    }

    #[test]
    fn the_hash_is_sha256_and_spreads_ids_evenly() {
        // sha256("a") = ca978112ca1bbdca…; 0xca978112ca1bbdca mod 7 = 3.
        assert_eq!(Shard::of_id("a", 7), (0xca97_8112_ca1b_bdca_u64 % 7) as u32);
        let mut per = [0u32; 8];
        for i in 0..8000 {
            per[Shard::of_id(&format!("session-{i}"), 8) as usize] += 1;
        }
        assert!(per.iter().all(|&n| (900..1100).contains(&n)), "{per:?}");
    }
}
