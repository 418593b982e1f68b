//! The fast tokenizer backend (tiktoken 4.x) is the default only because it gives the
//! reference's (tiktoken-rs) token ids — hence counts — on everything recap counts:
//! every message of every prompt that every built-in renders for every call of every
//! bench-data corpus and of the imported shared real corpora, plus every text field of
//! the shared corpora's raw files. Every encoding with a reference backend (deepseek_v3 has none: skipped).
//!
//! The same pass proves the line split of `recap_harness::segments` exact: the ids of
//! a text's segments, concatenated, are the ids of the text (o200k_base, cl100k_base).
//!
//! The shared corpora live in `../shared/corpora` beside the workspace; when missing the
//! shared half is skipped with a message, or fails when CI=true.

use recap_core::{CorpusReader, Form, Session, Strategy};
use recap_harness::segments::segments;
use recap_harness::{Backend, Encoding, Tokenizer};
use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Compares both backends on distinct texts (a 64-bit hash filters repeats).
struct Checker {
    pairs: Vec<(Tokenizer, Tokenizer)>,
    seen: HashSet<u64>,
    texts: u64,
    bytes: u64,
    tokens: u64,
}

impl Checker {
    fn new() -> Self {
        Checker {
            // deepseek_v3 has only the fast backend: nothing to compare it with.
            pairs: Encoding::ALL
                .iter()
                .filter(|&&e| {
                    if !e.has_reference() {
                        eprintln!("skipping {e}: tiktoken-rs has no such vocabulary");
                    }
                    e.has_reference()
                })
                .map(|&e| {
                    (
                        Tokenizer::get(e, Backend::Fast),
                        Tokenizer::get(e, Backend::Reference),
                    )
                })
                .collect(),
            seen: HashSet::new(),
            texts: 0,
            bytes: 0,
            tokens: 0,
        }
    }

    fn check(&mut self, text: &str, origin: &dyn Fn() -> String) {
        let mut h = DefaultHasher::new();
        text.hash(&mut h);
        if !self.seen.insert(h.finish()) {
            return;
        }
        self.texts += 1;
        self.bytes += text.len() as u64;
        for (fast, reference) in &self.pairs {
            let want = reference.encode(text);
            let got = fast.encode(text);
            if got != want {
                let at = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
                panic!(
                    "{}: {} token ids differ from tiktoken-rs at token {at} ({} vs {} tokens)\ntext: {:?}",
                    origin(),
                    fast.encoding(),
                    got.len(),
                    want.len(),
                    text.chars().take(300).collect::<String>()
                );
            }
            assert_eq!(fast.count_tokens(text), want.len(), "{}: count", origin());
            // The harness counts changed messages line by line: the reference ids of the
            // segments must concatenate to the reference ids of the whole.
            if reference.encoding().line_additive() {
                let joined: Vec<u32> = segments(text).flat_map(|s| reference.encode(s)).collect();
                if joined != want {
                    let at = joined.iter().zip(&want).take_while(|(a, b)| a == b).count();
                    panic!(
                        "{}: {} ids of the line segments differ from the whole text's at token {at}\ntext: {:?}",
                        origin(),
                        reference.encoding(),
                        text.chars().take(300).collect::<String>()
                    );
                }
            }
            self.tokens += want.len() as u64;
        }
    }

    fn prompts(&mut self, corpus: &str, sessions: &[Session], strategies: &[Arc<dyn Strategy>]) {
        for s in sessions {
            for strategy in strategies {
                for k in 0..s.turns.len() {
                    let Ok(messages) = recap_core::render_call(strategy.as_ref(), s, k) else {
                        continue; // render errors are the harness's business, not this test's
                    };
                    for (i, m) in messages.iter().enumerate() {
                        self.check(&m.content, &|| {
                            format!(
                                "{corpus} session {} {} call {k} message {i}",
                                s.id,
                                strategy.spec()
                            )
                        });
                    }
                }
            }
        }
    }
}

/// The built-ins that render the PTC-Lisp form (every corpus read here is in it).
fn builtins() -> Vec<Arc<dyn Strategy>> {
    let mut registry = recap_builtins::registry();
    // Strategies with token budgets count with the run's tokenizer.
    registry.set_counter(Arc::new(Tokenizer::get(Encoding::O200kBase, Backend::Fast)));
    registry
        .infos()
        .map(|i| registry.build(&i.name).expect("built-in builds"))
        .filter(|s| s.forms().contains(&Form::Ptc))
        .collect()
}

fn read_corpus(path: &Path) -> Vec<Session> {
    CorpusReader::open(path)
        .unwrap_or_else(|e| panic!("{e}"))
        .map(|e| e.session.unwrap_or_else(|r| panic!("{r}")))
        .collect()
}

#[test]
fn fast_backend_matches_reference_on_every_bench_data_prompt() {
    let dir = workspace().join("bench-data");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let strategies = builtins();
    let mut c = Checker::new();
    for f in &files {
        c.prompts(&f.display().to_string(), &read_corpus(f), &strategies);
    }
    eprintln!(
        "bench-data: {} distinct message texts, {} bytes, {} tokens (both encodings): identical",
        c.texts, c.bytes, c.tokens
    );
    assert!(c.texts > 100);
}

fn shared_corpora() -> Option<PathBuf> {
    recap_gen::shared::path("corpora", "shared-corpus tokenizer identity")
}

#[test]
fn fast_backend_matches_reference_on_imported_shared_corpora_prompts() {
    let Some(dir) = shared_corpora() else { return };
    let strategies = builtins();
    let mut c = Checker::new();
    for (kind, sub) in [
        (recap_import::Kind::PtcRunner, "ptc-runner-loop"),
        (recap_import::Kind::Smolagents, "smolagents-code"),
    ] {
        let import = recap_import::import(kind, &[dir.join(sub)])
            .unwrap_or_else(|e| panic!("importing {sub}: {e}"));
        assert!(!import.sessions.is_empty(), "{sub}: no sessions imported");
        c.prompts(sub, &import.sessions, &strategies);
    }
    eprintln!(
        "shared corpora prompts: {} distinct message texts, {} bytes, {} tokens: identical",
        c.texts, c.bytes, c.tokens
    );
}

fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                out.push(k.clone());
                strings(x, out);
            }
        }
        _ => {}
    }
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, files);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            files.push(p);
        }
    }
}

#[test]
fn fast_backend_matches_reference_on_every_shared_corpus_text_field() {
    let Some(dir) = shared_corpora() else { return };
    let mut files = Vec::new();
    walk(&dir, &mut files);
    assert!(!files.is_empty(), "no .jsonl files under {}", dir.display());
    let mut c = Checker::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let json: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", f.display(), n + 1));
            let mut texts = Vec::new();
            strings(&json, &mut texts);
            for t in texts {
                c.check(&t, &|| format!("{}:{}", f.display(), n + 1));
            }
        }
    }
    eprintln!(
        "shared corpora raw text: {} files, {} distinct strings, {} bytes, {} tokens: identical",
        files.len(),
        c.texts,
        c.bytes,
        c.tokens
    );
}
