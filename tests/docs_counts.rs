//! The counts the README and bench-data/README.md give for the bundled corpora are the
//! counts of the files.

use recap_core::CorpusReader;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Valid sessions of a bench-data file (every line of it is one).
fn sessions_in(name: &str) -> usize {
    let path = root().join("bench-data").join(name);
    let entries: Vec<_> = CorpusReader::open(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .collect();
    assert!(entries.iter().all(|e| e.session.is_ok()), "{name}");
    entries.len()
}

/// The number right after the first `marker` in `text`.
fn number_after(text: &str, marker: &str, doc: &Path) -> usize {
    let (_, rest) = text
        .split_once(marker)
        .unwrap_or_else(|| panic!("{}: no {marker:?}", doc.display()));
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("{}: no count after {marker:?}", doc.display()))
}

const CORPORA: [&str; 4] = [
    "handwritten.jsonl",
    "generated.jsonl",
    "chat-handwritten.jsonl",
    "chat-generated.jsonl",
];

#[test]
fn the_readme_gives_each_bundled_corpus_its_number_of_sessions() {
    let doc = root().join("README.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    let section = text
        .split_once("## Bundled corpora")
        .expect("the README's bundled corpora section")
        .1;
    for name in CORPORA {
        let said = number_after(section, &format!("`{name}` ("), &doc);
        assert_eq!(said, sessions_in(name), "README.md on {name}");
    }
}

#[test]
fn bench_data_readme_gives_each_corpus_its_number_of_sessions() {
    let doc = root().join("bench-data/README.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    for name in CORPORA {
        let said = number_after(&text, &format!("| `{name}` | "), &doc);
        assert_eq!(said, sessions_in(name), "bench-data/README.md on {name}");
    }
}

#[test]
fn the_readme_run_block_heads_each_form_with_its_sessions() {
    let doc = root().join("README.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    let ptc = sessions_in("handwritten.jsonl") + sessions_in("generated.jsonl");
    let chat = sessions_in("chat-handwritten.jsonl") + sessions_in("chat-generated.jsonl");
    assert_eq!(number_after(&text, "PTC-Lisp sessions: ", &doc), ptc);
    assert_eq!(number_after(&text, "\nchat sessions: ", &doc), chat);
}
