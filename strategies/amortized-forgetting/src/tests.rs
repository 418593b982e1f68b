use super::*;
use recap_core::Role;
use recap_core::{Message, Session, render_call};
use recap_gen::chat::ChatSessionBuilder;

fn af(max_size: u64, keep_first: u64) -> AmortizedForgetting {
    AmortizedForgetting {
        max_size,
        keep_first,
    }
}

/// Ten turns: tool turns with one or two results, and a user reply.
fn session() -> Session {
    let mut b = ChatSessionBuilder::new("mission");
    for t in 0..10 {
        let id1 = format!("a{t}");
        let id2 = format!("b{t}");
        b = match t % 3 {
            0 => b.tool_turn("", &[(&id1, "f", "{}")], &["r"]),
            1 => b.tool_turn(
                "two",
                &[(&id1, "f", "{}"), (&id2, "g", "{}")],
                &["r1", "r2"],
            ),
            _ => b.text_turn("ask", &["answer"]),
        };
    }
    b.build()
}

#[test]
fn history_within_max_size_is_full_history() {
    let s = session();
    for k in 0..=10 {
        let r = RenderRequest::for_call(&s, k).unwrap();
        assert_eq!(
            render_call(&af(1000, 0), &s, k).unwrap(),
            recap_history::render(&r)
        );
    }
}

#[test]
fn prompts_only_grow_between_cuts_and_never_exceed_max_size_after_a_cut() {
    let s = session();
    let strategy = af(8, 1);
    let mut previous: Option<(usize, Vec<Message>)> = None;
    let mut cuts = 0;
    for k in 0..=10 {
        let r = RenderRequest::for_call(&s, k).unwrap();
        let h = History::of_request(&r);
        let (head_end, f) = strategy.cut(&h);
        let m = render_call(&strategy, &s, k).unwrap();
        assert_eq!(&m[..2], &recap_history::opening(&r)[..]);
        // The tail never starts with a result.
        assert_ne!(
            h.messages().get(f).map(|m| m.role),
            Some(Role::Tool),
            "call {k}"
        );
        assert!(head_end <= f);
        if let Some((pf, pm)) = &previous {
            if *pf == f {
                assert!(
                    m.starts_with(pm),
                    "call {k}: no cut, so the prompt only grows"
                );
            } else {
                cuts += 1;
                assert!(f > *pf);
            }
        }
        // After this call's cut (if any) the history sent is back within max_size,
        // except for the extension past results.
        assert!(head_end + (h.messages().len() - f) <= 8 + 2, "call {k}");
        previous = Some((f, m));
    }
    assert!(
        cuts >= 2,
        "the session is long enough to cut twice, cut {cuts} times"
    );
}

#[test]
fn a_replay_equals_each_call_rendered_alone_and_invariants_hold() {
    let s = session();
    let strategy = af(6, 2);
    let mut replay = strategy.open();
    for k in 0..=10 {
        assert_eq!(
            replay.call(&s, k, 0).unwrap().tail,
            render_call(&strategy, &s, k).unwrap()
        );
    }
    assert_eq!(
        recap_core::invariants::check_session(&strategy, &s).unwrap(),
        vec![]
    );
}

#[test]
fn a_head_ending_inside_a_group_is_extended_to_its_end() {
    // keep_first=2 ends after turn 1's response and its first... turn 0 has 2 messages
    // (call + result), turn 1 has 3: keep_first = 3 would end after turn 1's first result.
    let s = session();
    let r = RenderRequest::for_call(&s, 10).unwrap();
    let h = History::of_request(&r);
    let (head_end, _) = af(10, 3).cut(&h);
    assert_eq!(head_end, 5, "the head takes turn 1's second result too");
}

#[test]
fn options_are_validated() {
    let b = |s: &str| build(&StrategySpec::parse(s).unwrap());
    assert_eq!(b(NAME).unwrap().spec(), NAME);
    assert_eq!(
        b("amortized-forgetting:max_size=20,keep_first=2")
            .unwrap()
            .spec(),
        "amortized-forgetting:keep_first=2,max_size=20"
    );
    for bad in [
        "amortized-forgetting:max_size=1",
        "amortized-forgetting:max_size=10,keep_first=5",
        "amortized-forgetting:keep_first=-1",
    ] {
        assert!(matches!(b(bad), Err(SpecError::BadValue { .. })), "{bad}");
    }
}
