use super::*;
use crate::line_store::LineStore;
use crate::tokenizer::{Backend, Encoding};

fn tok() -> Tokenizer {
    Tokenizer::get(Encoding::O200kBase, Backend::Reference)
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[test]
fn line_cache_counts_and_prefixes_equal_whole_text_ones() {
    let texts = [
        "mission\n\n; Tool calls:\n;   a()\n; Output:\nline one\n\nTurns left: 4",
        "mission\n\n; Tool calls:\n;   a()\n;   b()\n; Output:\nline one\n\nTurns left: 3",
        "mission\n\n; Tool calls:\n;   a()",
        "mission",
        "",
        "other\nmission",
        // A common first line, then lines that differ in their first byte, or later.
        "mission\nzeta line\nend",
        "mission\nalpha line\nend",
        "mission\nalphabet\nend",
    ];
    for e in [
        Encoding::O200kBase,
        Encoding::Cl100kBase,
        Encoding::DeepseekV3,
    ] {
        let t = Tokenizer::get(e, Backend::Fast);
        let mut cache = SegmentCounts::new(&t);
        let mut store = LineStore::default();
        let as_texts: Vec<Text> = texts.iter().map(|b| Text::from(*b)).collect();
        // Twice: the second count of each text comes from the cache.
        for a in texts.iter().chain(&texts) {
            let mut lines = store.call();
            assert_eq!(
                cache.count(&t, &mut lines, a) as usize,
                t.count_tokens(a),
                "{e} {a:?}"
            );
            for (b, bt) in texts.iter().zip(&as_texts) {
                let want = common_prefix(&t.encode(a), &t.encode(b)) as u64;
                // From the walk of `b`, whether or not it was walked before.
                assert_eq!(
                    cache.common_prefix(&t, &mut lines, a, bt),
                    want,
                    "{e} {a:?} {b:?}"
                );
            }
        }
        assert!(cache.segments_reused > 0);
    }
}

/// A shared text is counted once and then remembered by allocation, with the same
/// count and the same line statistics as counting it again; a text no one else holds is
/// not kept.
#[test]
fn shared_texts_are_counted_once_with_the_same_figures() {
    let t = tok();
    let text = Text::from("first line\nsecond line\n\nthird");
    let held = text.clone();
    let (mut memo, mut plain) = (SegmentCounts::new(&t), SegmentCounts::new(&t));
    let (mut memo_lines, mut plain_lines) = (LineStore::default(), LineStore::default());
    for _ in 0..3 {
        assert_eq!(
            memo.count_text(&t, &text, &mut memo_lines.call()),
            plain.count(&t, &mut plain_lines.call(), &text)
        );
        assert_eq!(memo.segments_tokenized, plain.segments_tokenized);
        assert_eq!(memo.segments_reused, plain.segments_reused);
    }
    assert_eq!(memo_lines.shared_texts(), 1);
    let alone = Text::from("made for one prompt");
    assert_eq!(
        memo.count_text(&t, &alone, &mut memo_lines.call()),
        plain.count(&t, &mut plain_lines.call(), &alone)
    );
    assert_eq!(memo_lines.shared_texts(), 1, "an unshared text is not kept");
    drop(held);
    assert!(
        text.is_shared(),
        "the memo holds the text, so its address stays its own"
    );
}

#[test]
fn diff_of_append_only_prompts() {
    let a = vec![Message::system("s"), Message::user("m")];
    let mut b = a.clone();
    b.push(Message::assistant("x"));
    b.push(Message::user("m"));
    let d = CallDiff::new(Some((&a).into()), &b, 0);
    assert_eq!(d.first_diff, 2);
    assert!(!d.partial);
    // The last USER equals message 1 of the previous call by content.
    assert_eq!(d.reuse, vec![Some(0), Some(1), None, Some(1)]);
}

#[test]
fn partial_prefix_of_single_user_prompts() {
    let t = tok();
    let roles = RoleTokens::new(&t);
    let calls = [
        vec![Message::system("s"), Message::user("alpha beta")],
        vec![Message::system("s"), Message::user("alpha beta gamma")],
        vec![Message::system("s"), Message::user("alpha delta")],
    ];
    let mut mem = TokenMemory::default();
    let mut cache = SegmentCounts::new(&t);
    let mut store = LineStore::default();
    let mut counts = Vec::new();
    let mut prev: Option<&[Message]> = None;
    for cur in &calls {
        let diff = CallDiff::new(prev.map(Prev::from), cur, 0);
        let got = count_call(
            &t,
            &roles,
            prev.map(Prev::from),
            cur,
            &diff,
            &mut mem,
            &mut cache,
            &mut store.call(),
            &mut counts,
        );
        assert_eq!(got.prompt, prompt_tokens(&t, cur));
        if let Some(p) = prev {
            let ids_a = t.encode(&p[1].content);
            let ids_b = t.encode(&cur[1].content);
            // SYSTEM whole, then <|start|> user <|message|> and the common prefix.
            let expect = prompt_tokens(&t, &p[..1]) - 3
                + 2
                + roles.get(Role::User) as u64
                + common_prefix(&ids_a, &ids_b) as u64;
            assert_eq!(got.cached, expect);
        }
        prev = Some(cur);
    }
}

/// A text another reader (retention) walked earlier in the call is counted from that
/// walk, with the counts and line statistics of a text counted on its own; and a second
/// tokenizer reads the same walk.
#[test]
fn a_text_walked_earlier_in_the_call_is_counted_as_one_counted_alone() {
    let text = Text::from("mission\n\nline one\nline one\nindented\nlast");
    for e in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let t = Tokenizer::get(e, Backend::Fast);
        let (mut walked, mut alone) = (SegmentCounts::new(&t), SegmentCounts::new(&t));
        let (mut shared, mut own) = (LineStore::default(), LineStore::default());
        for _ in 0..2 {
            let mut lines = shared.call();
            let walk = lines.walk_text(&text);
            assert_eq!(walk.len(), 5, "four distinct lines, one twice");
            let n = walked.count_text(&t, &text, &mut lines);
            assert_eq!(n, alone.count(&t, &mut own.call(), &text));
            assert_eq!(n as usize, t.count_tokens(&text));
            assert_eq!(walked.segments_tokenized, alone.segments_tokenized);
            assert_eq!(walked.segments_reused, alone.segments_reused);
            assert_eq!(lines.walk_text(&text), walk, "the count read the same walk");
        }
        assert_eq!((walked.segments_tokenized, walked.segments_reused), (4, 6));
    }
}
