//! The replay-fidelity decomposition of the shared ptc-runner corpus
//! (`recap_harness::replay_fidelity`, the code behind `examples/replay_fidelity.rs` and
//! the README's figures). Skipped with a message when ../shared is missing, failing
//! under RECAP_REQUIRE_SHARED=1.
//!
//! `characterization_*` tests pin figures that this same analysis produced on the
//! corpus: they catch any change of the analysis, of the importer or of the corpus, but
//! they cannot show the decomposition right, since nothing independent produced the
//! numbers (the evidence for it is the write-up in docs/results.md). The least-squares
//! solver it rests on is checked against a known answer.

mod common;

use recap_harness::replay_fidelity::{ROUTE_TOLERANCE, Template, analyse, least_squares};

#[test]
fn characterization_recorded_input_tokens_are_the_wire_text_plus_a_template_on_one_route() {
    let Some(dir) = common::shared("corpora/ptc-runner-loop") else {
        return;
    };
    let calls = analyse(&dir).expect("the corpus reads");
    assert_eq!(calls.len(), 377);
    // `input` includes the cached tokens.
    assert!(calls.iter().all(|c| c.cache_read <= c.recorded));

    // Fitted on the 228 calls that report cached tokens: ~196 fixed + ~27 per message.
    let t = Template::fit(&calls);
    assert_eq!(t.fitted_on, 228);
    assert!((180.0..210.0).contains(&t.fixed), "{}", t.fixed);
    assert!((25.0..30.0).contains(&t.per_message), "{}", t.per_message);

    // Route A: the DeepSeek-V3 tokens of exactly what was sent plus the template give
    // the provider's count to within 9 tokens — every call that reports cached tokens
    // and 11 more.
    let (a, b): (Vec<_>, Vec<_>) = calls
        .iter()
        .partition(|c| t.error(c).abs() <= ROUTE_TOLERANCE);
    assert_eq!(a.len(), 239);
    assert!(a.iter().all(|c| t.error(c).abs() < 9.0));
    assert_eq!(a.iter().filter(|c| c.cache_read > 0).count(), 228);

    // Route B: never reports cached tokens and always counts far less than route A
    // would for the same request.
    assert_eq!(b.len(), 138);
    assert!(b.iter().all(|c| c.cache_read == 0));
    assert!(b.iter().all(|c| t.error(c) < -150.0));

    // The first request of every session is the same system text and mission up to the
    // incident name; route B counts it ~188 tokens lower than route A.
    let firsts: Vec<_> = calls.iter().filter(|c| c.index == 1).collect();
    assert_eq!(firsts.len(), 24);
    for c in firsts {
        let on_a = t.error(c).abs() <= ROUTE_TOLERANCE;
        let offset = c.recorded as i64 - c.wire_ds as i64;
        assert!(
            if on_a {
                offset == 250
            } else {
                (61..=63).contains(&offset)
            },
            "{offset}"
        );
    }
}

#[test]
fn least_squares_recovers_a_plane_and_zeroes_an_empty_column() {
    // y = 2 + 3a - b, with an all-zero third column.
    let x: Vec<Vec<f64>> = [(0.0, 1.0), (1.0, 0.0), (2.0, 5.0), (4.0, 1.0)]
        .iter()
        .map(|&(a, b)| vec![1.0, a, b, 0.0])
        .collect();
    let y: Vec<f64> = x.iter().map(|r| 2.0 + 3.0 * r[1] - r[2]).collect();
    let (k, rmse) = least_squares(&x, &y);
    for (got, want) in k.iter().zip([2.0, 3.0, -1.0, 0.0]) {
        assert!((got - want).abs() < 1e-9, "{k:?}");
    }
    assert!(rmse < 1e-9);
}
