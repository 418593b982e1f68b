//! The engine's shortcuts (message reuse, line-level caches shared across strategies,
//! the fast backend, incremental retention scans) change nothing: on every bench-data
//! session of both forms, every built-in's totals equal a straightforward computation —
//! whole prompts tokenized with tiktoken-rs by the formula of SPEC 9 / 11.2, common
//! prefixes from whole-message token ids, facts searched in whole texts.

mod common;

use common::builtins;
use recap_core::{CorpusReader, Form, Message, Session, Strategy};
use recap_harness::retention::Facts;
use recap_harness::run_sessions;
use std::path::PathBuf;
use std::sync::Arc;

fn sessions() -> Vec<Session> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench-data");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| CorpusReader::open(f).unwrap_or_else(|e| panic!("{e}")))
        .map(|e| e.session.unwrap_or_else(|r| panic!("{r}")))
        .collect()
}

struct Naive {
    total: u64,
    peak: u64,
    cached: u64,
    facts: u64,
    retained: u64,
}

fn ids(tok: &tiktoken_rs::CoreBPE, t: &str) -> Vec<u32> {
    tok.encode_ordinary(t)
}

/// SPEC 9 from the definitions, nothing reused.
fn naive(strategy: &dyn Strategy, sessions: &[Session], tok: &tiktoken_rs::CoreBPE) -> Naive {
    let mut n = Naive {
        total: 0,
        peak: 0,
        cached: 0,
        facts: 0,
        retained: 0,
    };
    let msg_ids = |m: &Message| -> Vec<u32> {
        // <|start|> role <|message|> content, then each tool call as
        // <|call|> name <|args|> arguments <|end call|>, then <|end|>; sentinel ids for
        // the markers.
        let mut v = vec![u32::MAX];
        v.extend(ids(tok, m.role.as_str()));
        v.push(u32::MAX - 1);
        v.extend(ids(tok, &m.content));
        for c in &m.tool_calls {
            v.push(u32::MAX - 3);
            v.extend(ids(tok, &c.name));
            v.push(u32::MAX - 4);
            v.extend(ids(tok, &c.arguments));
            v.push(u32::MAX - 5);
        }
        v.push(u32::MAX - 2);
        v
    };
    for s in sessions {
        if !strategy.applies_to(s) {
            continue;
        }
        let mut prev: Option<Vec<Message>> = None;
        for k in 0..s.turn_count() {
            let msgs = recap_core::render_call(strategy, s, k).unwrap();

            let prompt: u64 = 3 + msgs.iter().map(|m| msg_ids(m).len() as u64).sum::<u64>();
            n.total += prompt;
            n.peak = n.peak.max(prompt);
            if let Some(p) = &prev {
                // SPEC 9: equal messages in order count whole; the first differing one
                // (ids included, as a cache sees them) adds the common prefix of the two
                // messages' token streams.
                let same = p.iter().zip(&msgs).take_while(|(x, y)| x == y).count();
                n.cached += msgs[..same]
                    .iter()
                    .map(|m| msg_ids(m).len() as u64)
                    .sum::<u64>();
                if let (Some(a), Some(b)) = (p.get(same), msgs.get(same)) {
                    let (a, b) = (msg_ids(a), msg_ids(b));
                    n.cached += a.iter().zip(&b).take_while(|(x, y)| x == y).count() as u64;
                }
            }
            let facts = match s.form {
                Form::Ptc => Facts::from_turns(&s.turns[..k]),
                Form::Chat => {
                    let mut f = Facts::new();
                    s.chat_turns[..k].iter().for_each(|t| f.add_chat_turn(t));
                    f
                }
            };
            n.facts += facts.len() as u64;
            let texts: Vec<&str> = msgs
                .iter()
                .flat_map(|m| {
                    std::iter::once(m.content.as_str())
                        .chain(m.tool_calls.iter().map(|c| c.arguments.as_str()))
                })
                .collect();
            n.retained += facts
                .list()
                .iter()
                .filter(|f| texts.iter().any(|t| t.contains(f.as_str())))
                .count() as u64;
            prev = Some(msgs);
        }
    }
    n
}

#[test]
fn engine_totals_equal_the_definitions_on_bench_data() {
    let sessions = sessions();
    let registry = builtins::registry();
    let strategies: Vec<Arc<dyn Strategy>> = registry
        .infos()
        .map(|i| registry.build(&i.name).unwrap())
        .collect();
    let cfg = builtins::config(&registry, strategies.iter().cloned(), 2);
    let report = run_sessions(&cfg, "bench-data", sessions.clone()).unwrap();
    for (t, reference) in [
        tiktoken_rs::o200k_base_singleton(),
        tiktoken_rs::cl100k_base_singleton(),
    ]
    .into_iter()
    .enumerate()
    {
        let tokenizer = ["o200k_base", "cl100k_base"][t];
        for (form, strategy) in Form::ALL
            .iter()
            .flat_map(|f| strategies.iter().map(move |s| (*f, s)))
        {
            let of_form: Vec<Session> = sessions
                .iter()
                .filter(|s| s.form == form)
                .cloned()
                .collect();
            let applicable = of_form.iter().filter(|s| strategy.applies_to(s)).count();
            let row = report.runs.iter().find(|r| {
                r.form == form.as_str() && r.strategy == strategy.spec() && r.tokenizer == tokenizer
            });
            // A strategy without a session of the form has no row for it.
            let Some(run) = row else {
                assert_eq!(applicable, 0, "{form} {}", strategy.spec());
                continue;
            };
            assert_eq!(run.sessions as usize, applicable, "{}", run.strategy);
            assert_eq!(
                run.not_applicable as usize,
                of_form.len() - applicable,
                "{}",
                run.strategy
            );
            let want = naive(strategy.as_ref(), &of_form, reference);
            let what = format!("{form} {} {}", run.strategy, run.tokenizer);
            assert_eq!(run.prompt_tokens_total, want.total, "{what}: total");
            assert_eq!(run.prompt_tokens_peak, want.peak, "{what}: peak");
            assert_eq!(run.cached_tokens, want.cached, "{what}: cached");
            assert_eq!(run.retention_facts, want.facts, "{what}: facts");
            assert_eq!(run.retention_retained, want.retained, "{what}: retained");
        }
    }
}
