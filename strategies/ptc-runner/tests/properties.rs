//! Property tests over generated sessions (recap-gen): every invariant `ptc-runner`
//! declares holds on every call, checked by the shared checker; and, because the shared
//! checker's limits rule reads the `single-user-coalesced` layout, the limits of this
//! layout (`;; Tool calls made:`, `;; Output:`) are checked here directly.

use proptest::prelude::*;
use recap_core::invariants::{calls, check_session};
use recap_core::{Message, Role, Session, StrategySpec, ToolSpec};
use recap_ptc_runner::PtcRunner;

fn strategies() -> impl Strategy<Value = PtcRunner> {
    (1u32..=4, 1u32..=4).prop_map(|(p, t)| {
        PtcRunner::from_spec(
            &StrategySpec::parse(&format!("ptc-runner:println_limit={p},tool_call_limit={t}"))
                .unwrap(),
        )
        .unwrap()
    })
}

/// Generated sessions, half of them with a tool named `println` (the original's switch
/// for the Output section) and a tool with a valid signature.
fn sessions() -> impl Strategy<Value = Session> {
    (recap_gen::arb_session(), any::<bool>()).prop_map(|(mut s, println)| {
        if println {
            for (name, sig) in [
                ("println", "(msg :string) -> :nil"),
                (
                    "fetch_page",
                    "(page_id :int, tags [:keyword]) -> {title :string?}",
                ),
            ] {
                s.tools.insert(
                    name.to_string(),
                    ToolSpec {
                        signature: Some(sig.to_string()),
                        description: None,
                        parameters: None,
                    },
                );
            }
        }
        s
    })
}

/// Lines of the section that starts with `header`, up to the next blank line.
fn section<'a>(content: &'a str, header: &str) -> Option<Vec<&'a str>> {
    let start = content
        .find(&format!("\n\n{header}\n"))
        .map(|i| i + 2 + header.len() + 1)?;
    let rest = &content[start..];
    let end = rest.find("\n\n").unwrap_or(rest.len());
    Some(rest[..end].split('\n').collect())
}

fn check_layout(
    s: &Session,
    k: usize,
    strategy: &PtcRunner,
    msgs: &[Message],
) -> Result<(), TestCaseError> {
    prop_assert_eq!(msgs.len(), 2);
    prop_assert_eq!(msgs[0].role, Role::System);
    prop_assert_eq!(msgs[1].role, Role::User);
    let content = &msgs[1].content;
    prop_assert!(content.starts_with(&s.mission));
    if k == 0 {
        prop_assert_eq!(content, &s.mission);
        return Ok(());
    }
    let limits = strategy.limits;
    if let Some(lines) = section(content, ";; Tool calls made:") {
        prop_assert!(
            lines.len() <= limits.tool_call_limit,
            "{} call lines",
            lines.len()
        );
        prop_assert!(lines.iter().all(|l| l.starts_with(";   ")));
    } else {
        prop_assert!(content.contains("\n\n;; No tool calls made\n\n"));
    }
    if s.tools.contains_key("println") {
        // The Output section holds the last `println_limit` prints of successful turns.
        let prints: Vec<&str> = s.turns[..k]
            .iter()
            .filter(|t| t.success)
            .flat_map(|t| t.prints.iter().map(String::as_str))
            .collect();
        let shown = &prints[prints.len().saturating_sub(limits.println_limit)..];
        let expected = std::iter::once(";; Output:".to_string())
            .chain(shown.iter().map(|p| p.to_string()))
            .collect::<Vec<_>>()
            .join("\n");
        prop_assert!(
            content.contains(&format!("\n\n{expected}\n\n")),
            "Output section"
        );
    } else {
        prop_assert!(!content.contains("\n\n;; Output:"));
    }
    // Only the last turn's error, and only while it is failing.
    let last = &s.turns[k - 1];
    prop_assert_eq!(
        content.contains("\n\n---\nYour previous attempt:\n```clojure\n"),
        !last.success
    );
    let left = s.max_turns as usize - k - 1;
    if left == 0 {
        prop_assert!(content.ends_with(recap_ptc_runner::suc::FINAL_WORK_TURN));
    } else {
        let line = format!("Turns left: {left}");
        prop_assert!(content.ends_with(&line));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn declared_invariants_hold(s in sessions(), strategy in strategies()) {
        let violations = check_session(&strategy, &s).expect("ptc-runner never fails to render");
        prop_assert!(violations.is_empty(), "{:?}", violations);
    }

    #[test]
    fn layout_limits_and_error_collapsing(s in sessions(), strategy in strategies()) {
        for k in calls(&s) {
            let msgs = recap_core::render_call(&strategy, &s, k).unwrap();
            check_layout(&s, k, &strategy, &msgs)?;
        }
    }
}
