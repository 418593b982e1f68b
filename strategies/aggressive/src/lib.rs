//! `aggressive` (sample plugin): the seeds' "minimal summaries for token-constrained
//! scenarios". One USER message holding the mission, the names of the live
//! definitions (functions and values), the last error, and the turns line — no
//! samples, no output, no tool calls, no programs.
//!
//! ```text
//! Find well-reviewed products in stock
//!
//! ; Defined: electronics, reviews, inventory, in-stock?
//! ; Last error (turn 3): sort-by: expected a collection, got a string
//!
//! Turns left: 2
//! ```
//!
//! Built as a `cdylib` and loaded with `recap ... --plugin`.

use recap_core::{
    Invariant, Message, RenderError, RenderRequest, SpecError, Strategy, StrategySpec,
};

pub const NAME: &str = "aggressive";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Aggressive;

impl Aggressive {
    /// The USER message after at least one turn.
    fn content(request: &RenderRequest<'_>) -> String {
        let mut out = String::with_capacity(request.mission.len() + 256);
        out.push_str(request.mission);
        let live = recap_core::memory::fold(request.turns);
        let mut summary = String::new();
        if !live.is_empty() {
            summary.push_str("; Defined: ");
            for (i, def) in live.iter().enumerate() {
                if i > 0 {
                    summary.push_str(", ");
                }
                summary.push_str(&def.name);
            }
        }
        if let Some(failed) = request.turns.iter().rev().find(|t| !t.success) {
            if !summary.is_empty() {
                summary.push('\n');
            }
            summary.push_str(&format!(
                "; Last error (turn {}): {}",
                failed.number,
                failed.error_message().unwrap_or_default()
            ));
        }
        if !summary.is_empty() {
            out.push_str("\n\n");
            out.push_str(&summary);
        }
        out.push_str("\n\n");
        out.push_str(&request.turns_line());
        out
    }
}

impl Strategy for Aggressive {
    fn spec(&self) -> String {
        NAME.to_string()
    }

    fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        // SPEC 5: with no turns completed every strategy renders the mission alone.
        let user = if request.turns.is_empty() {
            request.mission.to_string()
        } else {
            Self::content(request)
        };
        Ok(vec![
            Message::system(request.system_prompt),
            Message::user(user),
        ])
    }

    fn invariants(&self) -> Vec<Invariant> {
        // Not failed-turns-verbatim (only the last error, no programs), not append-only.
        let mut all = Invariant::UNIVERSAL.to_vec();
        all.extend([Invariant::MissionLeadsFirstUser, Invariant::TurnsLine]);
        all
    }
}

impl recap_abi::Plugin for Aggressive {
    const NAME: &'static str = NAME;
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const SUMMARY: &'static str =
        "minimal summary: definition names and the last error only (no samples, no output)";

    fn from_spec(_spec: &StrategySpec) -> Result<Self, SpecError> {
        // No options; the SDK rejects unknown keys before this is called.
        Ok(Aggressive)
    }
}

recap_abi::export_strategy!(Aggressive);

#[cfg(test)]
mod tests {
    use super::*;
    use recap_core::invariants::check_session;
    use recap_gen::builder::{SessionBuilder, TurnBuilder, closure, value};
    use serde_json::json;

    #[test]
    fn worked_example_after_three_turns() {
        let s = SessionBuilder::new("Find well-reviewed products in stock")
            .system("You are a PTC-Lisp agent.")
            .turn(
                TurnBuilder::ok("(def electronics ...)")
                    .def("electronics", value(json!([1, 2])))
                    .def("reviews", value(json!("text")))
                    .def_doc("inventory", "Warehouse stock", value(json!("stock")))
                    .definition(
                        "in-stock?",
                        recap_core::DefKind::Defn,
                        None,
                        Some(closure(&["name"], None)),
                    ),
            )
            .turn(TurnBuilder::ok("(println x)").prints(["In stock: Laptop"]))
            .turn(TurnBuilder::failed(
                "(def top (first (sort-by :rating reviews)))",
                "sort-by: expected a collection, got a string",
            ))
            .build();
        let m = Aggressive
            .render(&RenderRequest::for_call(&s, 3).unwrap())
            .unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(
            m[1].content,
            "Find well-reviewed products in stock\n\n\
             ; Defined: electronics, reviews, inventory, in-stock?\n\
             ; Last error (turn 3): sort-by: expected a collection, got a string\n\n\
             Turns left: 2"
        );
        let m = Aggressive
            .render(&RenderRequest::for_call(&s, 2).unwrap())
            .unwrap();
        assert!(
            !m[1].content.contains("In stock"),
            "no output: {}",
            m[1].content
        );
    }

    #[test]
    fn zero_turns_and_nothing_to_summarise() {
        let s = SessionBuilder::new("m")
            .system("sys")
            .turn(TurnBuilder::ok("(+ 1 2)"))
            .build();
        let m = Aggressive
            .render(&RenderRequest::for_call(&s, 0).unwrap())
            .unwrap();
        assert_eq!(m, vec![Message::system("sys"), Message::user("m")]);
        let m = Aggressive
            .render(&RenderRequest::for_call(&s, 1).unwrap())
            .unwrap();
        assert_eq!(m[1].content, "m\n\nTurns left: 4");
    }

    #[test]
    fn declared_invariants_hold_on_generated_sessions() {
        for s in recap_gen::generate_corpus(5, 40, 0..=12) {
            let violations = check_session(&Aggressive, &s).unwrap();
            assert!(violations.is_empty(), "session {}: {violations:?}", s.id);
        }
    }
}
