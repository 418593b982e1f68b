//! A replay's answer, applied to the prompt the caller holds, must give the call rendered
//! alone (`render_call`), however the calls come: in order (the harness), skipping
//! calls, with the previous prompt forgotten now and then (the harness forgets it after
//! a failed render). Every built-in over PTC-Lisp sessions here; the chat strategies
//! over chat sessions in `chat_properties.rs`.

use proptest::prelude::*;
use recap_core::invariants::calls;
use recap_core::{Session, Strategy};
use recap_gen::arb_session;
use recap_testkit::strategy_checks::walk_deltas;
use std::sync::Arc;

fn strategies() -> Vec<Arc<dyn Strategy>> {
    recap_testkit::specs::build_all()
        .into_iter()
        .map(|(_, strategy)| strategy)
        .filter(|s| s.forms().contains(&recap_core::Form::Ptc))
        .collect()
}

fn walk(
    strategy: &dyn Strategy,
    session: &Session,
    ks: &[(usize, bool)],
) -> Result<usize, TestCaseError> {
    walk_deltas(strategy, session, ks).map_err(TestCaseError::fail)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn deltas_in_order_equal_render(session in arb_session()) {
        let ks: Vec<(usize, bool)> = calls(&session).map(|k| (k, false)).collect();
        for strategy in strategies() {
            let kept = walk(strategy.as_ref(), &session, &ks)?;
            // full-history's prompt only grows: every call after the first keeps all of
            // the previous one.
            if strategy.spec() == "full-history" {
                prop_assert_eq!(kept, ks.len() - 1);
            }
        }
    }

    #[test]
    fn deltas_skipping_calls_and_forgotten_equal_render(
        session in arb_session(),
        picks in prop::collection::vec((0u16..1000, any::<bool>()), 1..40),
    ) {
        let n = calls(&session).len();
        let mut ks: Vec<(usize, bool)> =
            picks.iter().map(|&(p, forget)| (p as usize * n / 1000, forget)).collect();
        ks.sort_unstable_by_key(|&(k, _)| k);
        ks.dedup_by_key(|&mut (k, _)| k);
        for strategy in strategies() {
            walk(strategy.as_ref(), &session, &ks)?;
        }
    }
}
