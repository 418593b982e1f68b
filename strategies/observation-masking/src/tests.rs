use super::*;
use recap_core::render_call;
use recap_core::{Observation, Role};
use recap_gen::chat::ChatSessionBuilder;

fn strategy(window: u32) -> ObservationMasking {
    ObservationMasking { window, polling: 1 }
}

#[test]
fn line_counts_follow_the_spec() {
    assert_eq!(line_count(""), 0);
    assert_eq!(line_count("a"), 1);
    assert_eq!(line_count("a\n"), 1);
    assert_eq!(line_count("a\nb"), 2);
    assert_eq!(line_count("a\r\nb\r\n"), 2);
    assert_eq!(line_count("a\rb\rc"), 3);
    assert_eq!(line_count("\n\n"), 2);
    assert_eq!(line_count("a\n\r\nb"), 3);
    assert_eq!(line_count("\r\r\n"), 2);
    assert_eq!(line_count("\r\n\n"), 2);
}

/// The definition, byte by byte: a break is `\r\n`, `\r` or `\n`; a line is open after
/// any other byte.
fn line_count_by_bytes(text: &str) -> usize {
    let bytes = text.as_bytes();
    let (mut lines, mut open, mut i) = (0, false, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'\r' => {
                lines += 1;
                open = false;
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            b'\n' => {
                lines += 1;
                open = false;
            }
            _ => open = true,
        }
        i += 1;
    }
    lines + usize::from(open)
}

proptest::proptest! {
    #[test]
    fn line_count_is_the_byte_by_byte_definition(text in "[a\r\né ]{0,40}") {
        proptest::prop_assert_eq!(line_count(&text), line_count_by_bytes(&text));
    }
}

fn session() -> recap_core::Session {
    ChatSessionBuilder::new("fix the bug")
        .system("sys")
        .tool_turn(
            "look",
            &[("c1", "read", "{\"path\":\"a.py\"}")],
            &["l1\nl2\nl3"],
        )
        .text_turn("Which file?", &["the other one"])
        .command_turn("```\nls\n```", "x\ny\n")
        .tool_turn("", &[("c2", "run", "{}"), ("c3", "run", "{}")], &["ok", ""])
        .build()
}

#[test]
fn older_environment_output_is_masked_and_replies_are_not() {
    let s = session();
    let m = render_call(&strategy(1), &s, 4).unwrap();
    // SYSTEM, mission, then turn 1: response + tool result.
    assert_eq!(m[3].role, Role::Tool);
    assert_eq!(m[3].content, "Old environment output: (3 lines omitted)");
    assert_eq!(m[3].tool_call_id.as_deref(), Some("c1"));
    // Turn 2: the user's reply is not environment output.
    assert_eq!(m[5].content, "the other one");
    // Turn 3: environment output delivered as a user message.
    assert_eq!(m[7].role, Role::User);
    assert_eq!(m[7].content, "Old environment output: (2 lines omitted)");
    // Turn 4 is inside the window: verbatim.
    assert_eq!(m[9].content, "ok");
    assert_eq!(m[10].content, "");
}

#[test]
fn the_last_window_turns_equal_full_history_and_a_wide_window_is_full_history() {
    let s = session();
    for k in 0..=4 {
        let request = RenderRequest::for_call(&s, k).unwrap();
        let full = recap_history::render(&request);
        assert_eq!(render_call(&strategy(10), &s, k).unwrap(), full, "call {k}");
        let masked = render_call(&strategy(2), &s, k).unwrap();
        assert_eq!(masked.len(), full.len());
        let history = History::of_request(&request);
        let keep_from = 2 + history.turn_start(k.saturating_sub(2));
        assert_eq!(masked[keep_from..], full[keep_from..], "call {k}");
    }
}

#[test]
fn a_replay_equals_each_call_rendered_alone() {
    let s = session();
    let strategy = strategy(1);
    let mut replay = strategy.open();
    for k in 0..=4 {
        assert_eq!(
            replay.call(&s, k, 0).unwrap().tail,
            render_call(&strategy, &s, k).unwrap()
        );
    }
}

#[test]
fn error_results_are_environment_output_too() {
    let s = ChatSessionBuilder::new("m")
        .turn(
            "",
            &[("c1", "f", "{}")],
            vec![Observation::Tool {
                tool_call_id: "c1".into(),
                name: None,
                content: "Traceback\nboom".into(),
                is_error: true,
            }],
        )
        .text_turn("done", &[])
        .build();
    let m = render_call(&strategy(1), &s, 2).unwrap();
    assert_eq!(m[3].content, "Old environment output: (2 lines omitted)");
}

#[test]
fn options_are_validated_and_canonical() {
    let spec = |s: &str| StrategySpec::parse(s).unwrap();
    assert_eq!(build(&spec("observation-masking")).unwrap().spec(), NAME);
    assert_eq!(
        build(&spec("observation-masking:window=3")).unwrap().spec(),
        "observation-masking:window=3"
    );
    assert!(build(&spec("observation-masking:window=0")).is_err());
    assert_eq!(
        build(&spec("observation-masking:polling=5,window=3"))
            .unwrap()
            .spec(),
        "observation-masking:polling=5,window=3"
    );
    assert_eq!(
        build(&spec("observation-masking:polling=1"))
            .unwrap()
            .spec(),
        NAME
    );
    let e = build(&spec("observation-masking:polling=0"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("polling") && e.contains("≥ 1"), "{e}");
    assert!(matches!(
        build(&spec("observation-masking:n=3")),
        Err(SpecError::UnknownOption { .. })
    ));
}

#[test]
fn the_boundary_moves_every_polling_calls() {
    let w2p3 = ObservationMasking {
        window: 2,
        polling: 3,
    };
    // ⌊k / 3⌋ · 3 − 2 turns masked at the call after k turns.
    let masked: Vec<usize> = (0..=9).map(|k| w2p3.masked_turns(k)).collect();
    assert_eq!(masked, [0, 0, 0, 1, 1, 1, 4, 4, 4, 7]);
    // polling = 1 is SWE-agent's default and recap's former rule: k − window.
    let w2 = strategy(2);
    assert!((0..=9).all(|k| w2.masked_turns(k) == k.saturating_sub(2)));
}

#[test]
fn between_moves_the_prompt_only_grows() {
    // Nine turns, each with a tool result; with polling 3 the calls between two moves
    // of the boundary extend the previous prompt (what the prompt cache keeps).
    let mut b = ChatSessionBuilder::new("m").system("sys");
    for i in 0..9 {
        let id = format!("c{i}");
        b = b.tool_turn("", &[(&id, "f", "{}")], &["out\nput"]);
    }
    let s = b.build();
    let polled = ObservationMasking {
        window: 2,
        polling: 3,
    };
    let render = |k: usize| render_call(&polled, &s, k).unwrap();
    // The replay, answering the calls in order as deltas, agrees with each call
    // rendered alone.
    let mut replay = polled.open();
    let mut held = replay.call(&s, 0, 0).unwrap().tail;
    for k in 1..=9 {
        let (before, now) = (render(k - 1), render(k));
        let extends = now.starts_with(&before);
        assert_eq!(extends, k % 3 != 0 || k < 3, "call {k}");
        held = replay.call(&s, k, held.len()).unwrap().apply(&held);
        assert_eq!(held, now, "call {k}");
    }
    // At call 6: turns 1..4 masked, 5..6 verbatim.
    let at6 = render(6);
    let tool_contents: Vec<&str> = at6
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.as_ref())
        .collect();
    assert_eq!(
        tool_contents,
        [
            "Old environment output: (2 lines omitted)",
            "Old environment output: (2 lines omitted)",
            "Old environment output: (2 lines omitted)",
            "Old environment output: (2 lines omitted)",
            "out\nput",
            "out\nput",
        ]
    );
}
