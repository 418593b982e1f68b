//! Property tests over generated sessions (recap-gen): the invariants `ptc-trim` declares
//! hold on every call, and what it keeps is a subsequence of the full-history prompt.

use proptest::prelude::*;
use recap_core::invariants::{calls, check_session};
use recap_core::{RenderRequest, StrategySpec};
use recap_ptc_trim::PtcTrim;

fn strategies() -> impl Strategy<Value = PtcTrim> {
    (1u32..=6, 1u32..=3, any::<bool>(), prop::option::of(20u32..=2000)).prop_map(
        |(turns, keep, initial, tokens)| {
            let mut spec = format!(
                "ptc-trim:trigger_turns={turns},keep_recent_turns={keep},keep_initial_user={initial}"
            );
            if let Some(t) = tokens {
                spec.push_str(&format!(",trigger_tokens={t}"));
            }
            PtcTrim::from_spec(&StrategySpec::parse(&spec).unwrap()).unwrap()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn declared_invariants_hold(s in recap_gen::arb_session(), strategy in strategies()) {
        let violations = check_session(&strategy, &s).expect("ptc-trim never fails to render");
        prop_assert!(violations.is_empty(), "{:?}", violations);
    }

    #[test]
    fn keeps_a_subsequence_ending_with_the_last_message(s in recap_gen::arb_session(), strategy in strategies()) {
        for k in calls(&s) {
            let request = RenderRequest::for_call(&s, k).unwrap();
            let full = recap_history::render(&request);
            let trimmed = strategy.render(&request);
            let mut rest = full.iter();
            for m in &trimmed {
                prop_assert!(rest.any(|f| f == m), "not a subsequence of full-history");
            }
            prop_assert_eq!(trimmed.last(), full.last());
            prop_assert_eq!(&trimmed[0], &full[0]);
        }
    }
}
