//! The input of a run: corpus files streamed entry by entry, tagged with their corpus,
//! with the bytes read so far counted for progress.

use crate::shard::Selection;
use recap_core::{CorpusReader, Entry, RejectedSession, Session};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// A corpus name as reports show it: the path as given.
pub fn corpus_name(path: &Path) -> String {
    path.display().to_string()
}

/// The entries of `corpora` as (corpus index, entry), in corpus then line order. A file
/// that cannot be read (missing, unreadable, a directory) yields one rejection at line
/// 0, field `file` (as `recap validate` reports it), and every other file still runs.
/// `bytes` counts what has been read. With a `select`ion (a shard of the run), only the
/// entries it keeps are read and yielded.
pub(crate) fn corpus_entries(
    corpora: &[PathBuf],
    bytes: &Arc<AtomicU64>,
    select: Option<Arc<Selection>>,
) -> impl Iterator<Item = (usize, Entry)> + Send + use<> {
    let mut sources = Vec::with_capacity(corpora.len());
    for path in corpora {
        // Counted as stored: a gzip corpus's progress is in the compressed bytes its
        // size is given in.
        sources.push(
            match recap_core::corpus::open_file_counted(path, Some(Arc::clone(bytes))) {
                Ok(file) => {
                    let reader =
                        CorpusReader::new(path, io::BufReader::with_capacity(1 << 16, file));
                    CorpusSource::Readable(match &select {
                        Some(s) => {
                            let s = Arc::clone(s);
                            reader.only_lines(move |line, bytes| s.keep(line, bytes))
                        }
                        None => reader,
                    })
                }
                Err(rejected) => CorpusSource::Unreadable(
                    select
                        .as_ref()
                        .is_none_or(|s| s.keep(0, &[]))
                        .then_some(rejected),
                ),
            },
        );
    }
    sources
        .into_iter()
        .enumerate()
        .flat_map(|(i, r)| r.map(move |e| (i, e)))
}

/// Every entry of `corpora`, as a run without a shard reads them, for callers outside
/// the harness that drive [`crate::run_entries`] themselves (the Python package stops a run
/// between entries on Ctrl-C).
pub fn all_corpus_entries(
    corpora: &[PathBuf],
    bytes: &Arc<AtomicU64>,
) -> impl Iterator<Item = (usize, Entry)> + Send + use<> {
    corpus_entries(corpora, bytes, None)
}

/// In-memory sessions as the entries of corpus 0, numbered from line 1.
pub(crate) fn session_entries(
    sessions: Vec<Session>,
) -> impl Iterator<Item = (usize, Entry)> + Send {
    sessions.into_iter().enumerate().map(|(i, s)| {
        (
            0,
            Entry {
                line: i + 1,
                session: Ok(s),
            },
        )
    })
}

/// One corpus of a run: its sessions, or the single rejection saying why it could not
/// be read.
enum CorpusSource<R> {
    Readable(CorpusReader<R>),
    Unreadable(Option<RejectedSession>),
}

impl<R: io::BufRead> Iterator for CorpusSource<R> {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        match self {
            CorpusSource::Readable(r) => r.next(),
            CorpusSource::Unreadable(rejected) => rejected.take().map(|r| Entry {
                line: 0,
                session: Err(r),
            }),
        }
    }
}
