//! Opening the parts of a sharded run and refusing a set that does not make one run:
//! parts of different recaps, strategies, tokenizers, settings or corpora, a shard
//! missing or given twice, a part that is not finished.

use super::{FORMAT, PART_FILE, PartHeader, ShardId};
use crate::output::{LOCK_FILE, OutputError, STAGING_PREFIX};
use serde_json::{Value as Json, json};
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

/// A finished part: its directory and header.
#[derive(Debug, Clone)]
pub struct Part {
    pub dir: PathBuf,
    pub header: PartHeader,
}

impl Part {
    fn name(&self) -> String {
        format!("shard {} ({})", self.header.shard, self.dir.display())
    }
}

/// Why parts cannot be merged; nothing is written then.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("no part directories given")]
    NoParts,
    #[error(
        "{} is not a shard's partial report: it has no {PART_FILE} (`recap run --shard I/N --out DIR` writes one)",
        .0.display()
    )]
    NotAPart(PathBuf),
    #[error(
        "{} holds an unfinished part: {why}; merge once that shard has finished, or run it again with --force",
        dir.display()
    )]
    Unfinished { dir: PathBuf, why: String },
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: not a partial report this recap reads: {message}", path.display())]
    Header { path: PathBuf, message: String },
    #[error("cannot merge parts of different {what}: {detail}")]
    Differ { what: &'static str, detail: String },
    #[error(
        "{} and {} are both shard {shard}; give each shard's part once",
        first.display(),
        second.display()
    )]
    Duplicate {
        shard: ShardId,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("shard{} {missing} of {count} missing: the parts given are {given}", if .missing.contains(',') { "s" } else { "" })]
    Missing {
        count: u32,
        missing: String,
        given: String,
    },
    #[error("{} is damaged: {why}; run that shard again", dir.display())]
    Damaged { dir: PathBuf, why: String },
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error("writing the merged report: {0}")]
    Write(#[source] io::Error),
}

/// Reads the header of every part and checks that together they are the shards of one
/// run, each once. The parts come back in shard order.
pub fn open_parts(dirs: &[PathBuf]) -> Result<Vec<Part>, MergeError> {
    if dirs.is_empty() {
        return Err(MergeError::NoParts);
    }
    let mut parts = Vec::with_capacity(dirs.len());
    for dir in dirs {
        parts.push(open_part(dir)?);
    }
    for part in &parts[1..] {
        compare(&parts[0], part)?;
    }
    parts.sort_by_key(|p| p.header.shard.index);
    for pair in parts.windows(2) {
        if pair[0].header.shard == pair[1].header.shard {
            return Err(MergeError::Duplicate {
                shard: pair[0].header.shard,
                first: pair[0].dir.clone(),
                second: pair[1].dir.clone(),
            });
        }
    }
    let count = parts[0].header.shard.count;
    let missing: Vec<String> = (0..count)
        .filter(|i| !parts.iter().any(|p| p.header.shard.index == *i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Missing {
            count,
            missing: missing.join(", "),
            given: parts.iter().map(Part::name).collect::<Vec<_>>().join(", "),
        });
    }
    Ok(parts)
}

fn open_part(dir: &Path) -> Result<Part, MergeError> {
    let path = dir.join(PART_FILE);
    if let Some(why) = unfinished(dir) {
        return Err(MergeError::Unfinished {
            dir: dir.to_path_buf(),
            why,
        });
    }
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(MergeError::NotAPart(dir.to_path_buf()));
        }
        Err(source) => return Err(MergeError::Read { path, source }),
    };
    let header: PartHeader = match serde_json::from_slice(&bytes) {
        Ok(h) => h,
        Err(e) => {
            // Another format's fields need not parse as this one's: say which it is.
            #[derive(serde::Deserialize)]
            struct Format {
                format: Option<String>,
            }
            let format = serde_json::from_slice::<Format>(&bytes)
                .ok()
                .and_then(|f| f.format);
            let message = match format {
                Some(f) if f != FORMAT => {
                    format!("its format is {f:?}, this recap reads {FORMAT:?}")
                }
                _ => e.to_string(),
            };
            return Err(MergeError::Header { path, message });
        }
    };
    if header.format != FORMAT {
        return Err(MergeError::Header {
            path,
            message: format!(
                "its format is {:?}, this recap reads {FORMAT:?}",
                header.format
            ),
        });
    }
    if let Some(message) = inconsistent(&header) {
        return Err(MergeError::Header { path, message });
    }
    Ok(Part {
        dir: dir.to_path_buf(),
        header,
    })
}

/// What in a header contradicts the rest of it, if anything (the merge indexes by it).
fn inconsistent(h: &PartHeader) -> Option<String> {
    let strategies = h.run.strategies.len();
    if h.shard.count == 0 || h.shard.index >= h.shard.count {
        return Some(format!("shard {} does not exist", h.shard));
    }
    if h.run.baseline >= strategies {
        return Some(format!(
            "baseline {} of {strategies} strategies",
            h.run.baseline
        ));
    }
    if h.run.tokenizers.is_empty() {
        return Some("no tokenizer".into());
    }
    if let Some(files) = &h.prompt_files
        && files.len() != strategies
    {
        return Some(format!(
            "{} prompt files for {strategies} strategies",
            files.len()
        ));
    }
    None
}

/// Why `dir` holds a part that is not finished, if it does: a shard holds its lock (it
/// is writing), or a shard was killed while it wrote (its lock file or staging
/// directory is left).
fn unfinished(dir: &Path) -> Option<String> {
    let lock = dir.join(LOCK_FILE);
    if let Ok(file) = File::open(&lock) {
        return Some(match file.try_lock_shared() {
            Err(fs::TryLockError::WouldBlock) => {
                let pid = fs::read_to_string(&lock).unwrap_or_default();
                format!("a shard (process {}) is writing into it", pid.trim())
            }
            _ => format!(
                "a shard was stopped while it wrote there ({} is left)",
                lock.display()
            ),
        });
    }
    let staging = fs::read_dir(dir)
        .ok()?
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(STAGING_PREFIX))?;
    Some(format!(
        "a shard was stopped while it wrote there ({} is left)",
        staging.path().display()
    ))
}

/// What must be equal in every part, by the words of the refusal.
fn identity(h: &PartHeader) -> [(&'static str, Json); 6] {
    let p = &h.provenance;
    let command = options(&p.command_line);
    [
        (
            "recap versions",
            json!({"recap": p.recap_version, "commit": p.git_commit, "format": h.format}),
        ),
        (
            "strategies",
            json!({"strategies": h.run.strategies, "baseline": h.run.baseline,
                   "plugins": p.plugins, "plugin_failures": p.plugin_failures}),
        ),
        (
            "tokenizers",
            // The vocabularies' hashes are shard 0's alone (the same recap has the same).
            json!({"tokenizers": h.run.tokenizers, "backend": h.run.tokenizer_backend}),
        ),
        (
            "corpora",
            json!({"corpora": p.corpora, "names": h.corpora, "entries": h.entries.total}),
        ),
        (
            "settings",
            json!({"cache_read_ratio": h.run.cache_read_ratio,
                   "session_details": h.run.session_details, "examples": h.run.examples,
                   "calls_csv": h.calls_csv, "prompt_files": h.prompt_files,
                   "config": p.config, "shards": h.shard.count}),
        ),
        // Last: an option named above is reported by its field.
        ("settings", json!({"command line options": command})),
    ]
}

fn compare(a: &Part, b: &Part) -> Result<(), MergeError> {
    for ((what, x), (_, y)) in identity(&a.header).into_iter().zip(identity(&b.header)) {
        if x == y {
            continue;
        }
        let (x, y) = first_difference(&x, &y);
        return Err(MergeError::Differ {
            what,
            detail: format!("{} has {}, {} has {}", a.name(), x, b.name(), y),
        });
    }
    Ok(())
}

/// Where two values first differ, as `path = value` on each side (`none` where one side
/// has nothing), so that a refusal names the very field.
fn first_difference(a: &Json, b: &Json) -> (String, String) {
    fn walk(a: &Json, b: &Json, path: String) -> Option<(String, String, String)> {
        let none = Json::Null;
        match (a, b) {
            (Json::Object(x), Json::Object(y)) => {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                keys.into_iter().find_map(|k| {
                    let at = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    walk(x.get(k).unwrap_or(&none), y.get(k).unwrap_or(&none), at)
                })
            }
            (Json::Array(x), Json::Array(y)) => (0..x.len().max(y.len())).find_map(|i| {
                walk(
                    x.get(i).unwrap_or(&none),
                    y.get(i).unwrap_or(&none),
                    format!("{path}[{i}]"),
                )
            }),
            _ if a == b => None,
            _ => Some((path, short(a), short(b))),
        }
    }
    match walk(a, b, String::new()) {
        Some((path, x, y)) => (format!("{path} = {x}"), format!("{path} = {y}")),
        None => (short(a), short(b)),
    }
}

fn short(v: &Json) -> String {
    if v.is_null() {
        return "none".into();
    }
    let text = v.to_string();
    match text.char_indices().nth(240) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// A shard's command line without what differs between the shards of one run — the
/// program's path, `--shard`, `--out`, `--force`, `--jobs` and `--format` — so that
/// parts run with different options are refused even for an option the part does not
/// record otherwise.
pub(crate) fn options(command_line: &[String]) -> Vec<String> {
    const WITH_VALUE: [&str; 4] = ["--shard", "--out", "--jobs", "--format"];
    let mut out = Vec::new();
    let mut args = command_line.iter().skip(1);
    while let Some(a) = args.next() {
        if WITH_VALUE.contains(&a.as_str()) || a == "-j" {
            args.next();
        } else if a == "--force"
            || WITH_VALUE.iter().any(|o| a.starts_with(&format!("{o}=")))
            || (a.starts_with("-j") && a.len() > 2 && !a.starts_with("--"))
        {
        } else {
            out.push(a.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_leave_out_what_differs_between_shards() {
        let line = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let a = options(&line(
            "/usr/bin/recap run c.jsonl --shard 1/4 --out p1 --jobs 2 --strategy x --force",
        ));
        let b = options(&line(
            "recap run c.jsonl --shard=3/4 --out=p3 -j8 --strategy x",
        ));
        assert_eq!(a, b);
        assert_eq!(a, line("run c.jsonl --strategy x"));
        let c = options(&line("recap run c.jsonl --shard 1/4 --out p --strategy y"));
        assert_ne!(a, c);
    }

    #[test]
    fn a_difference_is_named_by_its_field() {
        let (a, b) = first_difference(&json!({"x": 1, "y": [1, 2]}), &json!({"x": 1, "y": [1]}));
        assert_eq!((a.as_str(), b.as_str()), ("y[1] = 2", "y[1] = none"));
        let (a, b) = first_difference(&json!({"s": [{"n": "a"}]}), &json!({"s": [{"n": "b"}]}));
        assert_eq!(
            (a.as_str(), b.as_str()),
            ("s[0].n = \"a\"", "s[0].n = \"b\"")
        );
        assert!(short(&json!("a".repeat(500))).ends_with('…'));
    }
}
