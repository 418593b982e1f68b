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
