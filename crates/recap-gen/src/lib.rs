//! Generators of realistic recorded sessions, public so that property tests, benchmarks
//! and the bench-data corpus all draw from the same distribution:
//!
//! - [`values`] and [`sessions`]: proptest strategies ([`arb_session`] for property
//!   tests, [`session_in`] for a chosen number of turns);
//! - [`chat_sessions`]: the same for chat-form sessions (SPEC 11: tool calls, user
//!   replies, fenced commands; [`arb_chat_session`], [`chat_session_in`]);
//! - [`generate_corpus`] and [`generate_chat_corpus`]: deterministic, seeded corpora
//!   built on those strategies;
//! - [`builder`] and [`chat`]: builders for hand-written sessions, and the hand-authored
//!   bench corpora built with them ([`handwritten`], [`chat_handwritten`]);
//! - [`shared`]: the shared golden cases and corpora beside the workspace, skipped with a
//!   visible notice when missing (failing under `RECAP_REQUIRE_SHARED=1`).
//!
//! Every generated session validates: it survives `Session::to_json` →
//! `Session::from_json` unchanged.

pub mod builder;
pub mod chat;
mod chat_arguments;
pub mod chat_handwritten;
mod chat_ids;
pub mod chat_pools;
pub mod chat_sessions;
mod chat_texts;
pub mod handwritten;
pub mod sessions;
pub mod shared;
pub mod values;

pub use chat_sessions::{arb_chat_session, chat_session_in, chat_session_with};
pub use sessions::{arb_session, session_in, session_with};

use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use recap_core::Session;
use std::io::{self, Write};
use std::ops::RangeInclusive;

/// `n_sessions` sessions whose number of turns lies in `turns_range`, the same for the
/// same arguments (with the same proptest version, pinned by Cargo.lock). Ids are
/// `gen-{seed}-{index}`, unique in the corpus.
pub fn generate_corpus(
    seed: u64,
    n_sessions: usize,
    turns_range: RangeInclusive<u32>,
) -> Vec<Session> {
    draw(seed, n_sessions, &session_in(turns_range), "gen")
}

/// `n_sessions` chat-form sessions whose number of turns lies in `turns_range` (at least
/// 1, see [`chat_session_in`]), the same for the same arguments. Ids are
/// `chat-gen-{seed}-{index}`.
pub fn generate_chat_corpus(
    seed: u64,
    n_sessions: usize,
    turns_range: RangeInclusive<u32>,
) -> Vec<Session> {
    draw(seed, n_sessions, &chat_session_in(turns_range), "chat-gen")
}

fn draw(
    seed: u64,
    n_sessions: usize,
    strategy: &BoxedStrategy<Session>,
    prefix: &str,
) -> Vec<Session> {
    let mut runner = seeded_runner(seed);
    (0..n_sessions)
        .map(|i| {
            // The filters of the strategies reject rarely (a blank free-text mission),
            // far from exhausting their retries, so a tree can always be drawn.
            let tree = strategy
                .new_tree(&mut runner)
                .unwrap_or_else(|reason| panic!("session generator rejected every draw: {reason}"));
            let mut session = tree.current();
            session.id = format!("{prefix}-{seed}-{i:04}");
            session
        })
        .collect()
}

/// A test runner whose random stream depends only on `seed`.
pub fn seeded_runner(seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        // Distinct words per chunk so seed 0 is not an all-zero key.
        let word = seed ^ (0x9E37_79B9_7F4A_7C15u64.wrapping_mul(i as u64 + 1));
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// Writes sessions as a JSON Lines corpus.
pub fn write_jsonl<W: Write>(out: &mut W, sessions: &[Session]) -> io::Result<()> {
    for session in sessions {
        serde_json::to_writer(&mut *out, &session.to_json()).map_err(io::Error::other)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn corpus_is_deterministic_and_ids_are_unique() {
        let a = generate_corpus(7, 6, 0..=8);
        let b = generate_corpus(7, 6, 0..=8);
        assert_eq!(a, b);
        let c = generate_corpus(8, 6, 0..=8);
        assert_ne!(a, c);
        let mut ids: Vec<_> = a.iter().map(|s| s.id.as_str()).collect();
        ids.dedup();
        assert_eq!(ids.len(), 6);
        for s in &a {
            assert!(s.turns.len() <= 8);
            assert!(s.turns.len() as u32 <= s.max_turns);
        }
    }

    #[test]
    fn corpus_lines_are_valid_sessions() {
        let sessions = generate_corpus(1, 5, 1..=12);
        let mut buf = Vec::new();
        write_jsonl(&mut buf, &sessions).unwrap();
        let reader = recap_core::CorpusReader::new(std::path::Path::new("mem.jsonl"), &buf[..]);
        let read: Vec<Session> = reader.map(|e| e.session.unwrap()).collect();
        assert_eq!(read, sessions);
    }

    #[test]
    fn chat_corpus_is_deterministic_valid_and_in_range() {
        let a = generate_chat_corpus(7, 6, 0..=8);
        assert_eq!(a, generate_chat_corpus(7, 6, 0..=8));
        assert_ne!(a, generate_chat_corpus(8, 6, 0..=8));
        let mut buf = Vec::new();
        write_jsonl(&mut buf, &a).unwrap();
        let reader = recap_core::CorpusReader::new(std::path::Path::new("mem.jsonl"), &buf[..]);
        let read: Vec<Session> = reader.map(|e| e.session.unwrap()).collect();
        assert_eq!(read, a);
        for (i, s) in a.iter().enumerate() {
            assert_eq!(s.id, format!("chat-gen-7-{i:04}"));
            assert_eq!(s.form, recap_core::Form::Chat);
            assert!(
                (1..=8).contains(&s.chat_turns.len()),
                "{}",
                s.chat_turns.len()
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn generated_sessions_round_trip_through_json(session in arb_session()) {
            let json = session.to_json();
            let back = Session::from_json(&json);
            prop_assert!(back.is_ok(), "rejected: {:?}", back.err());
            prop_assert_eq!(back.unwrap(), session);
        }

        #[test]
        fn generated_chat_sessions_round_trip_through_json(session in arb_chat_session()) {
            let json = session.to_json();
            let back = Session::from_json(&json);
            prop_assert!(back.is_ok(), "rejected: {:?}", back.err());
            prop_assert_eq!(back.unwrap(), session);
        }
    }
}
