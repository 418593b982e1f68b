//! Partial reports: what one shard of a run writes (`recap run --shard I/N --out DIR`),
//! and their merge into the report the whole run would have written (`recap merge`).
//!
//! A shard reads the corpus lines [`crate::shard`] assigns to it and writes, into
//! its directory:
//!
//! - `outcomes.jsonl`: one [`wire::Record`] per corpus entry of the shard, in corpus
//!   order — the session's outcome as the run folds it, or its rejection;
//! - `calls.csv`: the shard's `calls.csv` (unless `--no-calls-csv`), each record saying
//!   how many of its bytes are the session's rows;
//! - `prompts/*.jsonl`: the prompt dumps, with `--dump-prompts`, likewise;
//! - `lowest.jsonl`: the texts of the shard's calls of lowest retention;
//! - `part.json` ([`PartHeader`]), moved into place last: the run's shape, provenance,
//!   settings, entry counts, each file's size and SHA-256, and the shard's calls of lowest
//!   retention.
//!
//! The merge reads every part's records in corpus order and folds them through the
//! aggregation a run folds its sessions through (`aggregate`), so every figure, format,
//! chart and page of the merged report comes from the code that writes a run's.

mod merge;
mod read;
mod sums;
pub mod wire;
mod write;

pub use merge::{MergeOptions, Merged, merge};
pub use read::{MergeError, Part, open_parts};
pub use write::{PartError, PartOptions, PartSummary, run_part};

pub use crate::output::{LOWEST_FILE, OUTCOMES_FILE, PART_FILE};

use crate::config::RunShape;
use crate::lowest_retention::Pick;
use crate::report::provenance::{NonDeterministic, Provenance};
use crate::shard::Shard;
use serde::{Deserialize, Serialize};

/// What `part.json` says it is; another value is a part this recap cannot read.
pub const FORMAT: &str = "recap partial report 1";

/// `part.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartHeader {
    pub format: String,
    pub shard: ShardId,
    pub run: RunShape,
    /// Corpus names as the report shows them, in run order.
    pub corpora: Vec<String>,
    /// The shard's provenance: its own command line, the corpora's and plugins' hashes.
    pub provenance: Provenance,
    /// The part has a `calls.csv`.
    pub calls_csv: bool,
    /// With `--dump-prompts`: each strategy's dump file name under `prompts/`.
    pub prompt_files: Option<Vec<String>>,
    pub entries: EntryCounts,
    /// Every data file of the part.
    pub files: Vec<FileSum>,
    /// Per strategy (baseline aside), the shard's first call of lowest retention.
    pub lowest_retention: Vec<LowestCall>,
    /// When the shard ran.
    pub ran: NonDeterministic,
    /// `ran.started_at` as seconds since 1970 (the merged report's elapsed time).
    pub started_unix: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardId {
    pub index: u32,
    pub count: u32,
}

impl From<Shard> for ShardId {
    fn from(s: Shard) -> Self {
        ShardId {
            index: s.index(),
            count: s.count(),
        }
    }
}

impl std::fmt::Display for ShardId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryCounts {
    /// Entries (non-blank lines, unreadable files) of the whole corpus: every shard
    /// reads past every line, so all of them count the same.
    pub total: u64,
    /// Entries of this shard: the records of `outcomes.jsonl`.
    pub owned: u64,
    pub sessions: u64,
    pub rejected: u64,
}

/// A file of a part, to check that the merge reads what the shard wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSum {
    /// Relative to the part directory (`prompts/x.jsonl`).
    pub name: String,
    pub bytes: u64,
    pub sha256: String,
}

/// A call of lowest retention and, when `recap inspect` could show it, the line of
/// [`LOWEST_FILE`] with its texts (a [`crate::lowest_retention::CallView`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LowestCall {
    pub pick: Pick,
    pub view: Option<usize>,
}
