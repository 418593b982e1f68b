//! Where a report came from: which recap, command line and configuration, plugins,
//! corpora and tokenizer vocabularies, each file identified by its SHA-256 — and, kept
//! apart because it differs on every run, when it ran.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Everything needed to repeat a run and to tell whether two reports measured the same
/// thing. Identical between two runs of the same command on the same files.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    /// The recap package version.
    pub recap_version: String,
    /// The git commit recap was built from (`unknown` outside a git checkout).
    pub git_commit: String,
    /// The full command line, program name first.
    pub command_line: Vec<String>,
    /// The experiment file (`--config`), verbatim.
    pub config: Option<ConfigFile>,
    pub plugins: Vec<PluginFile>,
    pub corpora: Vec<CorpusFile>,
    pub tokenizers: Vec<TokenizerVocabulary>,
    /// Plugin libraries that failed to load under `--keep-going`; the run went on
    /// without them (absent when there were none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugin_failures: Vec<PluginFailure>,
    /// A report merged from a sharded run (`recap merge`): each shard's command line
    /// (absent otherwise; `command_line` is then the merge's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardRun>,
}

/// One shard of a merged run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ShardRun {
    /// `I/N`.
    pub shard: String,
    pub command_line: Vec<String>,
}

/// A plugin library that did not load, and why.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PluginFailure {
    pub path: String,
    pub error: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ConfigFile {
    pub path: String,
    pub content: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PluginFile {
    pub path: String,
    /// The strategy name the plugin registers.
    pub name: String,
    pub version: String,
    pub sha256: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CorpusFile {
    /// As named (the `settings.corpora` path).
    pub path: String,
    pub bytes: u64,
    /// Of the file as stored (a `.gz` corpus: of the compressed bytes).
    pub sha256: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TokenizerVocabulary {
    pub name: String,
    /// Ordinary tokens (special tokens are counted as text, so they play no part).
    pub vocabulary_size: u64,
    /// See `vocabulary_sha256`.
    pub vocabulary_sha256: String,
}

/// Wall-clock facts of one run: the only block of a report that differs between two
/// identical runs (besides the `render_ns*` timing fields).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NonDeterministic {
    /// RFC 3339, UTC, whole seconds.
    pub started_at: String,
    pub finished_at: String,
    pub elapsed_seconds: f64,
    /// A merged report: when each shard ran (the run itself then spans the first shard's
    /// start to the merge's end).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardTime>,
}

/// When one shard of a merged run ran.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ShardTime {
    /// `I/N`.
    pub shard: String,
    pub started_at: String,
    pub finished_at: String,
    pub elapsed_seconds: f64,
}

impl NonDeterministic {
    pub fn new(started: SystemTime, finished: SystemTime) -> Self {
        NonDeterministic {
            started_at: rfc3339(started),
            finished_at: rfc3339(finished),
            elapsed_seconds: finished
                .duration_since(started)
                .unwrap_or(Duration::ZERO)
                .as_secs_f64(),
            shards: Vec::new(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("cannot read {} to hash it", path.display())]
pub struct HashError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 (lowercase hex) and size of a file, read in blocks.
pub fn file_sha256(path: &Path) -> Result<(String, u64), HashError> {
    let err = |source| HashError {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(err)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buf).map_err(err)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        bytes += n as u64;
    }
    Ok((hex(&hasher.finalize()), bytes))
}

/// Each corpus file's size and SHA-256, named as in the report.
pub fn corpus_files(corpora: &[PathBuf]) -> Result<Vec<CorpusFile>, HashError> {
    corpora
        .iter()
        .map(|path| {
            let (sha256, bytes) = file_sha256(path)?;
            Ok(CorpusFile {
                path: crate::source::corpus_name(path),
                bytes,
                sha256,
            })
        })
        .collect()
}

/// The SHA-256 of an encoding's vocabulary: for each ordinary token in id order, its id
/// (4 bytes, little-endian), its length (4 bytes) and its bytes. Two tokenizers with the
/// same hash split every text the same way. Both backends read the same published
/// vocabulary files, and `tests/tokenizer_identity.rs` shows they count alike, so one
/// hash serves both.
///
/// The figures are the ones `hash_tables` (a test) computes from the compiled-in `tiktoken`
/// tables, written down: hashing 200,000 tokens costs every process (every shard of a
/// sharded run) about as much as replaying a session, for a value fixed when recap is
/// built. A test recomputes them, so a dependency update that changes a vocabulary fails
/// there instead of passing unnoticed.
pub fn vocabulary(encoding: crate::tokenizer::Encoding) -> TokenizerVocabulary {
    let (size, sha256) = match encoding {
        crate::tokenizer::Encoding::O200kBase => (
            199_998,
            "bb5386e3399c28cc69b4bee4fa8bce4bfcabfd77b77eedfa5e0dec6a16f8568a",
        ),
        crate::tokenizer::Encoding::Cl100kBase => (
            100_256,
            "3494aad2103f500f737237788f1e4c5237da95faba58dec1c2327e5b20024443",
        ),
        crate::tokenizer::Encoding::DeepseekV3 => (
            128_000,
            "d9555739f05cabeae33925e02008b826d28fcafc0420428f9bbb423d12ad1aef",
        ),
    };
    TokenizerVocabulary {
        name: encoding.name().to_string(),
        vocabulary_size: size,
        vocabulary_sha256: sha256.to_string(),
    }
}

/// [`vocabulary`] computed from the `tiktoken` tables themselves.
#[cfg(test)]
fn hash_tables(encoding: crate::tokenizer::Encoding) -> TokenizerVocabulary {
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    if let Some(bpe) = tiktoken::get_encoding(encoding.name()) {
        let n = bpe.vocab_size() as u32;
        for id in 0..n {
            let bytes = bpe.decode(&[id]);
            hasher.update(id.to_le_bytes());
            hasher.update((bytes.len() as u32).to_le_bytes());
            hasher.update(&bytes);
        }
        size = u64::from(n);
    }
    TokenizerVocabulary {
        name: encoding.name().to_string(),
        vocabulary_size: size,
        vocabulary_sha256: hex(&hasher.finalize()),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a time (UTC; times before 1970 print as 1970).
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_date(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01, counted in 400-year eras
/// (146,097 days each) of years starting on 1 March, so the leap day ends a year.
fn civil_date(days: i64) -> (i64, u32, u32) {
    let shifted = days + 719_468; // days from 0000-03-01 to 1970-01-01
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_gregorian_utc() {
        let at = |s: u64| rfc3339(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(951_868_799), "2000-02-29T23:59:59Z");
        assert_eq!(at(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(at(4_102_444_800), "2100-01-01T00:00:00Z");
        assert_eq!(at(1_795_000_000), "2026-11-18T11:06:40Z");
    }

    #[test]
    fn file_hash_is_sha256_of_the_bytes() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("x");
        std::fs::write(&f, "abc").unwrap();
        let (sha, n) = file_sha256(&f).unwrap();
        assert_eq!(n, 3);
        assert_eq!(
            sha,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let e = file_sha256(&tmp.path().join("missing")).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
    }

    #[test]
    fn written_vocabularies_are_the_tables_hashes() {
        for encoding in crate::tokenizer::Encoding::ALL {
            assert_eq!(vocabulary(encoding), hash_tables(encoding), "{encoding}");
        }
        let (a, b) = (
            vocabulary(crate::tokenizer::Encoding::Cl100kBase),
            vocabulary(crate::tokenizer::Encoding::O200kBase),
        );
        assert_eq!(a.vocabulary_size, 100_256);
        assert_ne!(a.vocabulary_sha256, b.vocabulary_sha256);
    }

    #[test]
    fn elapsed_time_never_goes_negative() {
        let t = UNIX_EPOCH + Duration::from_secs(100);
        let nd = NonDeterministic::new(t, t - Duration::from_secs(5));
        assert_eq!(nd.elapsed_seconds, 0.0);
        assert_eq!(nd.started_at, "1970-01-01T00:01:40Z");
    }
}
