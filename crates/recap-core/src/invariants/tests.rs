use super::*;
use crate::session::Turn;
use crate::test_fixtures::turn;
use std::collections::BTreeMap;

/// The context of a call checked on its own: no previous call, no second render.
fn single_render<'a>(session: &'a Session, k: usize, messages: &'a [Message]) -> CheckContext<'a> {
    CheckContext {
        session,
        k,
        messages,
        previous: None,
        second_render: None,
        print_lines: None,
        sightings: None,
    }
}

fn session(turns: Vec<Turn>) -> Session {
    Session {
        id: "s".into(),
        mission: "Do it".into(),
        system_prompt: "sys".into(),
        max_turns: 5,
        budget_recorded: true,
        form: Form::Ptc,
        tools: BTreeMap::new(),
        data: BTreeMap::new(),
        meta: Default::default(),
        turns,
        chat_turns: Vec::new(),
    }
}

fn ids(v: &[Violation]) -> Vec<&'static str> {
    v.iter().map(|v| v.invariant).collect()
}

const ALL: [Invariant; 9] = [
    Invariant::SystemFirst,
    Invariant::MissionVerbatim,
    Invariant::MissionLeadsFirstUser,
    Invariant::RoleAlternation,
    Invariant::FailedTurnsVerbatim,
    Invariant::TurnsLine,
    Invariant::Deterministic,
    Invariant::Limits {
        tool_call_limit: 2,
        println_limit: 2,
    },
    Invariant::AppendOnly,
];

#[test]
fn a_good_render_passes_every_invariant() {
    let s = session(vec![turn(1, false)]);
    let msgs = vec![
        Message::system("sys"),
        Message::user("Do it"),
        Message::assistant("```clojure\n(step 1)\n```"),
        Message::user("Error: boom\n\nTurns left: 4"),
    ];
    let prev = &msgs[..2];
    let ctx = CheckContext {
        session: &s,
        k: 1,
        messages: &msgs,
        previous: Some(prev),
        second_render: Some(&msgs),
        print_lines: None,
        sightings: None,
    };
    assert_eq!(check(&ALL, &ctx), vec![]);
}

#[test]
fn each_broken_rule_is_reported_with_the_call() {
    let s = session(vec![turn(1, true), turn(2, false)]);
    let msgs = vec![
        Message::user("sys"),
        Message::user("mission moved: Do it"),
        Message::user("; Tool calls:\n;   a()\n;   b()\n;   c()\n\nTurns left: 4"),
    ];
    let other = vec![Message::system("x")];
    let ctx = CheckContext {
        session: &s,
        k: 2,
        messages: &msgs,
        previous: Some(&other),
        second_render: Some(&other),
        print_lines: None,
        sightings: None,
    };
    let v = check(&ALL, &ctx);
    assert!(v.iter().all(|v| v.call == 2));
    assert_eq!(
        ids(&v),
        [
            "system-first",
            "mission-leads-first-user",
            "role-alternation",
            "failed-turns-verbatim",
            "turns-line",
            "deterministic",
            "append-only"
        ]
    );
}

#[test]
fn limits_count_tool_lines_and_output_lines_of_summaries() {
    let mut t = turn(1, true);
    t.prints = vec!["one".into(), "two\nlines".into(), "three".into()];
    let s = session(vec![t]);
    let limits = [Invariant::Limits {
        tool_call_limit: 2,
        println_limit: 2,
    }];
    let check_user = |content: &str| {
        let msgs = vec![Message::system("sys"), Message::user(content)];
        let ctx = single_render(&s, 1, &msgs);
        check(&limits, &ctx)
    };
    // Two prints can make three lines ("two\nlines" + "three").
    assert_eq!(
        check_user(
            "Do it\n\n; Tool calls:\n;   a()\n;   b() x4\n; Output:\ntwo\nlines\nthree\n\nTurns left: 4"
        ),
        vec![]
    );
    let v = check_user("Do it\n\n; Tool calls:\n;   a()\n;   b()\n;   c()\n\nTurns left: 4");
    assert!(v[0].detail.contains("3 tool-call lines"), "{v:?}");
    let v = check_user(
        "Do it\n\n; No tool calls made\n; Output:\none\ntwo\nlines\nthree\n\nTurns left: 4",
    );
    assert!(v[0].detail.contains("4 Output lines"), "{v:?}");
    // Text that is not a summary (a program's comments) is not counted.
    assert_eq!(
        check_user("Do it\n\n---\n; Tool calls:\n;   a()\n;   b()\n;   c()\n---\n\nTurns left: 4"),
        vec![]
    );
}

#[test]
fn turns_line_is_not_required_at_call_zero_or_for_recorded_feedback() {
    let mut t = turn(1, true);
    t.feedback = Some("Recorded.".into());
    let s = session(vec![t]);
    let zero = vec![Message::system("sys"), Message::user("Do it")];
    let ctx = single_render(&s, 0, &zero);
    assert_eq!(check(&[Invariant::TurnsLine], &ctx), vec![]);
    let one = vec![
        Message::system("sys"),
        Message::user("Do it"),
        Message::assistant("x"),
        Message::user("Recorded."),
    ];
    let ctx = single_render(&s, 1, &one);
    assert_eq!(check(&[Invariant::TurnsLine], &ctx), vec![]);
}

#[test]
fn ends_with_turns_line_matches_the_turns_line() {
    for left in [0, 1, 2, 9, 10, 29, 100, u32::MAX] {
        let line = turns_line(left);
        assert!(
            ends_with_turns_line(&format!("x\n\n{line}"), left),
            "{left}"
        );
        assert!(!ends_with_turns_line(&format!("{line}."), left), "{left}");
    }
    assert!(!ends_with_turns_line("Turns left: 12", 2));
    assert!(!ends_with_turns_line("Turns left: 3", 13));
}

/// The limits rule's "most lines `limit` prints can make" is the same whether the
/// caller keeps the session's print line counts or not, and is the sum of the
/// `limit` longest prints of the turns before the call.
#[test]
fn most_lines_is_the_longest_prints_sum_with_or_without_kept_counts() {
    let prints: [&[&str]; 4] = [
        &["a\nb\nc", "d"],
        &[],
        &["e\nf", "", "g\n"],
        &["h\ni\nj\nk"],
    ];
    let turns = prints
        .iter()
        .enumerate()
        .map(|(i, p)| Turn {
            prints: p.iter().map(|s| s.to_string()).collect(),
            ..turn(i as u32 + 1, true)
        })
        .collect();
    let s = session(turns);
    let kept = PrintLines::of(&s);
    for k in 0..=4 {
        let mut naive: Vec<usize> = prints[..k]
            .iter()
            .flat_map(|p| p.iter().map(|t| t.split('\n').count()))
            .collect();
        naive.sort_unstable_by(|a, b| b.cmp(a));
        for limit in 0..8 {
            let want: usize = naive.iter().take(limit).sum();
            let mut ctx = single_render(&s, k, &[]);
            assert_eq!(most_lines(&ctx, limit), want, "k {k}, limit {limit}");
            ctx.print_lines = Some(&kept);
            assert_eq!(most_lines(&ctx, limit), want, "kept, k {k}, limit {limit}");
        }
    }
}

/// `appears` answers as `str::contains` over each message would, at the edges where
/// a byte searcher could differ.
#[test]
fn appears_agrees_with_str_contains() {
    let sets: [&[&str]; 4] = [&[], &[""], &["ab", ""], &["héllo wörld", "⚠️ FINAL"]];
    let needles = [
        "",
        "a",
        "ab",
        "abc",
        "b\n",
        "é",
        "héllo wörld!",
        "⚠️",
        "\u{fe0f}",
        "wörld",
        "ab⚠",
        "d⚠",
    ];
    for set in sets {
        let messages: Vec<Message> = set.iter().map(|c| Message::user(*c)).collect();
        for needle in needles {
            assert_eq!(
                appears(&messages, needle),
                messages.iter().any(|m| m.content.contains(needle)),
                "{needle:?} in {set:?}"
            );
        }
    }
    // An empty needle is found in an empty message, but not among no messages.
    assert!(appears(&[Message::user("")], ""));
    assert!(!appears(&[], ""));
    // A match never spans two messages.
    assert!(!appears(
        &[Message::user("he"), Message::user("llo")],
        "hello"
    ));
}

/// Sightings answer as the search does while the texts move between messages and
/// offsets, vanish, come back, or sit where another text was; alternatives are
/// answered as a whole.
#[test]
fn sightings_answer_as_the_search_whatever_they_remember() {
    let needles = ["mission text", "(def x 1)", "", "é⚠️", "x 1"];
    let prompts: [&[&str]; 8] = [
        &["mission text", "a (def x 1) b"],
        &["mission text", "a (def x 1) b"],
        &["", "mission text\n(def x 1)"],
        &["(def x 1)mission text"],
        &["nothing here"],
        &[],
        &["zz mission text é⚠️", "(def y 1)", "(def x 1"],
        &["mission tex", "t (def x 1)", "é⚠"],
    ];
    let sightings = Sightings::new();
    for prompt in prompts {
        let messages: Vec<Message> = prompt.iter().map(|c| Message::user(*c)).collect();
        for needle in needles {
            assert_eq!(
                sightings.any_appears(&messages, &[needle]),
                appears(&messages, needle),
                "{needle:?} in {prompt:?}"
            );
        }
        for pair in needles.windows(2) {
            assert_eq!(
                sightings.any_appears(&messages, pair),
                pair.iter().any(|n| appears(&messages, n)),
                "{pair:?} in {prompt:?}"
            );
        }
    }
}

/// Each way of showing a failed turn passes on its own: the reply as a whole message,
/// the program or the reply inside a longer one, the error inside a longer message,
/// the recorded feedback whole or inside one; anything else is reported.
#[test]
fn failed_turns_are_found_whole_or_inside_a_message() {
    let mut t = turn(1, false);
    t.feedback = Some("Recorded: it broke.".into());
    let s = session(vec![t]);
    let rule = [Invariant::FailedTurnsVerbatim];
    let check_with = |contents: &[&str]| {
        let msgs: Vec<Message> = contents.iter().map(|c| Message::user(*c)).collect();
        let ctx = single_render(&s, 1, &msgs);
        ids(&check(&rule, &ctx))
    };
    let reply = "```clojure\n(step 1)\n```";
    for shown in [
        [reply, "boom"],
        ["x (step 1) y", "Error: boom\n\nTurns left: 4"],
        [&format!("before {reply} after"), "Recorded: it broke."],
        ["(step 1)", "then Recorded: it broke. and more"],
    ] {
        assert_eq!(check_with(&shown), Vec::<&str>::new(), "{shown:?}");
    }
    for missing in [["(step 2)", "boom"], [reply, "Error: bom"]] {
        assert_eq!(
            check_with(&missing),
            ["failed-turns-verbatim"],
            "{missing:?}"
        );
    }
}

#[test]
fn final_turn_line_is_required_on_the_last_call() {
    let mut s = session(vec![turn(1, true)]);
    s.max_turns = 2;
    let msgs = vec![
        Message::system("sys"),
        Message::user("Do it\n\nTurns left: 1"),
    ];
    let ctx = single_render(&s, 1, &msgs);
    let v = check(&[Invariant::TurnsLine], &ctx);
    assert!(v[0].detail.contains("FINAL TURN"), "{v:?}");
}

/// The Output section's lines, counted as the limits rule counted them before it
/// read the section whole: line by line, stopping at an empty line followed by one
/// that ends the section.
fn output_lines_split(rest: &str) -> usize {
    let mut lines = rest.split('\n').peekable();
    let mut n = 0;
    while let Some(line) = lines.next() {
        if line.is_empty() && lines.peek().is_some_and(|next| ends_section(next)) {
            break;
        }
        n += 1;
    }
    n
}

proptest::proptest! {
    /// Over texts made of the lines that matter (empty ones, section ends, near
    /// misses), the section's count is the line-by-line count.
    #[test]
    fn output_lines_are_counted_as_line_by_line(
        parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "", "a", "---", "--", "Turns left: 3", "Turns left:", FINAL_TURN_LINE,
                "x\r", "\u{e9}",
            ]),
            0..12,
        ),
        trailing_break in proptest::bool::ANY,
    ) {
        let mut rest = parts.join("\n");
        if trailing_break {
            rest.push('\n');
        }
        proptest::prop_assert_eq!(output_lines(&rest), output_lines_split(&rest));
    }
}
