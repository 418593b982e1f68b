//! The persistent response cache: one SQLite file, one row per request ever answered,
//! keyed by [`Key`] (model and exact body). Reruns cost nothing and reproduce exactly.
//!
//! Durability: WAL journal, and every response is committed on its own as it arrives, so
//! a killed run (`kill -9`) loses only the requests in flight and the next run resumes
//! where it stopped. A cache that is damaged — not an SQLite file, failing SQLite's own
//! check, or a row whose stored request or checksum does not match — is a clear error,
//! never a silent wrong answer.
//!
//! Rows hold the answer and a checksum of (key, answer), not the request: requests are
//! whole prompts, tens of times larger than answers, and SQLite's integrity check at
//! every open reads the whole file.

use crate::request::{Key, sha256};
use rusqlite::{Connection, OptionalExtension, params};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the cache file says it is, so that another program's database is refused.
const FORMAT: &str = "recap-eval response cache 2";
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error(
        "the response cache {path} is damaged ({detail}); move it away or pass another --cache \
         file (its answers cannot be trusted, so nothing was read from it)"
    )]
    Corrupt { path: PathBuf, detail: String },
    #[error("the response cache {path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("the response cache {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One stored answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// The response body as the server sent it.
    pub response: String,
}

pub struct Cache {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache").field("path", &self.path).finish()
    }
}

impl Cache {
    /// Opens (or creates) the cache at `path`, checking that it is intact.
    pub fn open(path: &Path) -> Result<Cache, CacheError> {
        let path = path.to_path_buf();
        check_magic(&path)?;
        let conn = Connection::open(&path).map_err(|e| classify(&path, e))?;
        let cache = Cache {
            path: path.clone(),
            conn: Mutex::new(conn),
        };
        cache.prepare()?;
        Ok(cache)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite half-written (it commits or
        // not), so the connection is still usable.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn prepare(&self) -> Result<(), CacheError> {
        let conn = self.conn();
        let err = |e| classify(&self.path, e);
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(err)?;
        let check: String = conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(err)?;
        if check != "ok" {
            return Err(self.corrupt(format!("SQLite's check says: {check}")));
        }
        conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .map_err(err)?;
        // In WAL mode NORMAL loses nothing when the process dies, only on power loss.
        conn.execute_batch(
            "PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS responses (
                 key BLOB PRIMARY KEY,
                 model TEXT NOT NULL,
                 response TEXT NOT NULL,
                 checksum BLOB NOT NULL,
                 stored_at INTEGER NOT NULL
             );",
        )
        .map_err(err)?;
        let format: Option<String> = conn
            .query_row("SELECT value FROM meta WHERE name = 'format'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(err)?;
        match format {
            Some(f) if f == FORMAT => Ok(()),
            Some(f) => Err(self.corrupt(format!("it says it is {f:?}, not {FORMAT:?}"))),
            None => conn
                .execute(
                    "INSERT INTO meta (name, value) VALUES ('format', ?1)",
                    params![FORMAT],
                )
                .map(|_| ())
                .map_err(err),
        }
    }

    fn corrupt(&self, detail: String) -> CacheError {
        CacheError::Corrupt {
            path: self.path.clone(),
            detail,
        }
    }

    /// The stored answer under `key`, checked against its checksum.
    pub fn get(&self, key: &Key) -> Result<Option<Stored>, CacheError> {
        let row: Option<(String, Vec<u8>)> = self
            .conn()
            .prepare_cached("SELECT response, checksum FROM responses WHERE key = ?1")
            .and_then(|mut st| {
                st.query_row(params![&key.0[..]], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .map_err(|e| classify(&self.path, e))?;
        let Some((response, sum)) = row else {
            return Ok(None);
        };
        if sum[..] != checksum(key, &response)[..] {
            return Err(self.corrupt(format!(
                "the answer under key {} does not match its checksum",
                key.hex()
            )));
        }
        Ok(Some(Stored { response }))
    }

    /// Stores an answer and commits it at once.
    pub fn put(&self, key: &Key, model: &str, response: &str) -> Result<(), CacheError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        self.conn()
            .prepare_cached(
                "INSERT OR REPLACE INTO responses (key, model, response, checksum, stored_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    &key.0[..],
                    model,
                    response,
                    &checksum(key, response)[..],
                    now
                ])
            })
            .map(|_| ())
            .map_err(|e| classify(&self.path, e))
    }

    /// How many answers the cache holds.
    pub fn len(&self) -> Result<u64, CacheError> {
        self.conn()
            .query_row("SELECT COUNT(*) FROM responses", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| classify(&self.path, e))
    }

    pub fn is_empty(&self) -> Result<bool, CacheError> {
        Ok(self.len()? == 0)
    }
}

/// A stored answer as a row: key, model, response, checksum, stored_at.
type Row = (Vec<u8>, String, String, Vec<u8>, i64);

/// What [`Cache::merge_from`] did with another cache's answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Merged {
    /// Answers this cache did not hold, now held.
    pub added: u64,
    /// Answers it already held, word for word.
    pub held: u64,
    /// Requests it already held with another answer (a model sampled twice): its own
    /// answer is kept.
    pub differing: u64,
}

impl Cache {
    /// Copies into this cache every answer of the cache at `other` that it does not hold
    /// (the shards of `recap eval --shard` each keep their own cache). Every row of
    /// `other` is checked against its checksum first; a damaged one stops the merge with
    /// nothing copied (one transaction). Where both hold a request, this cache's answer
    /// stays, so merging caches in a given order always gives the same answers.
    pub fn merge_from(&self, other: &Path) -> Result<Merged, CacheError> {
        if !other.exists() {
            return Err(CacheError::Io {
                path: other.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        }
        let from = Cache::open(other)?;
        let rows: Vec<Row> = from
            .conn()
            .prepare("SELECT key, model, response, checksum, stored_at FROM responses ORDER BY key")
            .and_then(|mut st| {
                st.query_map([], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })?
                .collect()
            })
            .map_err(|e| classify(other, e))?;
        let mut merged = Merged::default();
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| classify(&self.path, e))?;
        for (key, model, response, sum, stored_at) in rows {
            let key = Key(key
                .as_slice()
                .try_into()
                .map_err(|_| from.corrupt(format!("a key of {} bytes, not 32", key.len())))?);
            if sum[..] != checksum(&key, &response)[..] {
                return Err(from.corrupt(format!(
                    "the answer under key {} does not match its checksum",
                    key.hex()
                )));
            }
            let held: Option<String> = tx
                .query_row(
                    "SELECT response FROM responses WHERE key = ?1",
                    params![&key.0[..]],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| classify(&self.path, e))?;
            match held {
                Some(h) if h == response => merged.held += 1,
                Some(_) => merged.differing += 1,
                None => {
                    tx.execute(
                        "INSERT INTO responses (key, model, response, checksum, stored_at)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![&key.0[..], model, response, &sum[..], stored_at],
                    )
                    .map_err(|e| classify(&self.path, e))?;
                    merged.added += 1;
                }
            }
        }
        tx.commit().map_err(|e| classify(&self.path, e))?;
        Ok(merged)
    }
}

/// SHA-256 of the key and the answer: a row whose answer or key was damaged fails it.
fn checksum(key: &Key, response: &str) -> [u8; 32] {
    let mut bytes = Vec::with_capacity(32 + response.len());
    bytes.extend_from_slice(&key.0);
    bytes.extend_from_slice(response.as_bytes());
    sha256(&bytes)
}

/// A file that exists and is not empty must start as every SQLite database does.
fn check_magic(path: &Path) -> Result<(), CacheError> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(CacheError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut head = Vec::with_capacity(16);
    file.by_ref()
        .take(16)
        .read_to_end(&mut head)
        .map_err(|source| CacheError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if head.is_empty() || head[..] == SQLITE_MAGIC[..] {
        Ok(())
    } else {
        Err(CacheError::Corrupt {
            path: path.to_path_buf(),
            detail: "it is not an SQLite database".into(),
        })
    }
}

/// SQLite's own words for a damaged file become [`CacheError::Corrupt`].
fn classify(path: &Path, e: rusqlite::Error) -> CacheError {
    use rusqlite::ffi::ErrorCode;
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => CacheError::Corrupt {
            path: path.to_path_buf(),
            detail: e.to_string(),
        },
        _ => CacheError::Sqlite {
            path: path.to_path_buf(),
            source: e,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.sqlite");
        let key = Key::of("m", "body");
        {
            let c = Cache::open(&path).unwrap();
            assert_eq!(c.get(&key).unwrap(), None);
            c.put(&key, "m", "answer").unwrap();
        }
        let c = Cache::open(&path).unwrap();
        assert_eq!(c.get(&key).unwrap().unwrap().response, "answer");
        assert_eq!(c.len().unwrap(), 1);
    }

    #[test]
    fn a_file_that_is_not_a_database_is_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.sqlite");
        std::fs::write(&path, "hello, this is not sqlite at all").unwrap();
        let err = Cache::open(&path).unwrap_err();
        assert!(matches!(err, CacheError::Corrupt { .. }), "{err}");
        assert!(err.to_string().contains("c.sqlite"), "{err}");
    }

    #[test]
    fn merged_caches_hold_every_answer_once_and_keep_their_own_on_a_clash() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (Key::of("m", "a"), Key::of("m", "b"), Key::of("m", "c"));
        let one = Cache::open(&dir.path().join("one.sqlite")).unwrap();
        one.put(&a, "m", "A").unwrap();
        one.put(&b, "m", "B").unwrap();
        let two_path = dir.path().join("two.sqlite");
        let two = Cache::open(&two_path).unwrap();
        two.put(&b, "m", "B").unwrap();
        two.put(&c, "m", "C").unwrap();
        two.put(&a, "m", "another A").unwrap();
        let m = one.merge_from(&two_path).unwrap();
        assert_eq!(
            m,
            Merged {
                added: 1,
                held: 1,
                differing: 1
            }
        );
        assert_eq!(one.len().unwrap(), 3);
        assert_eq!(one.get(&c).unwrap().unwrap().response, "C");
        assert_eq!(one.get(&a).unwrap().unwrap().response, "A");
        // Merging again adds nothing.
        assert_eq!(one.merge_from(&two_path).unwrap().added, 0);
        // A damaged row stops the merge before anything is copied.
        let three_path = dir.path().join("three.sqlite");
        let three = Cache::open(&three_path).unwrap();
        three.put(&Key::of("m", "d"), "m", "D").unwrap();
        three.put(&Key::of("m", "e"), "m", "E").unwrap();
        three
            .conn()
            .execute(
                "UPDATE responses SET response = 'x' WHERE response = 'E'",
                [],
            )
            .unwrap();
        let err = one.merge_from(&three_path).unwrap_err();
        assert!(
            err.to_string().contains("three.sqlite") && err.to_string().contains("checksum"),
            "{err}"
        );
        assert_eq!(one.len().unwrap(), 3, "nothing copied");
        let missing = one.merge_from(&dir.path().join("none.sqlite")).unwrap_err();
        assert!(missing.to_string().contains("none.sqlite"), "{missing}");
    }

    #[test]
    fn a_tampered_row_is_an_error_not_an_answer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.sqlite");
        let key = Key::of("m", "body");
        let c = Cache::open(&path).unwrap();
        c.put(&key, "m", "answer").unwrap();
        c.conn()
            .execute("UPDATE responses SET response = 'other'", [])
            .unwrap();
        let err = c.get(&key).unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
        // An answer filed under another request's key is caught the same way.
        c.put(&key, "m", "answer").unwrap();
        let other = Key::of("m", "another body");
        c.conn()
            .execute("UPDATE responses SET key = ?1", params![&other.0[..]])
            .unwrap();
        assert!(c.get(&other).is_err());
    }
}
