//! The input of a run: corpus files streamed entry by entry, tagged with their corpus,
//! with the bytes read so far counted for progress.

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
/// `bytes` counts what has been read.
pub fn corpus_entries(
    corpora: &[PathBuf],
    bytes: &Arc<AtomicU64>,
) -> impl Iterator<Item = (usize, Entry)> + Send + use<> {
    let mut sources = Vec::with_capacity(corpora.len());
    for path in corpora {
        // Counted as stored: a gzip corpus's progress is in the compressed bytes its
        // size is given in.
        sources.push(
            match recap_core::corpus::open_file_counted(path, Some(Arc::clone(bytes))) {
                Ok(file) => CorpusSource::Readable(CorpusReader::new(
                    path,
                    io::BufReader::with_capacity(1 << 16, file),
                )),
                Err(rejected) => CorpusSource::Unreadable(Some(rejected)),
            },
        );
    }
    sources
        .into_iter()
        .enumerate()
        .flat_map(|(i, r)| r.map(move |e| (i, e)))
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
