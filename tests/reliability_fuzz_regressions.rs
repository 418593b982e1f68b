//! Every crash the fuzzers found, replayed in the normal test suite through the same
//! checks the fuzz targets run (`recap_testkit::checks` and its siblings, which the fuzz
//! crate calls too), plus the committed fuzz seeds. Add a crash input as a file under
//! `tests/fuzz-regressions/<target>/` and it is replayed from then on.

use recap_core::printer::{PrintOptions, to_clojure};
use recap_core::value::{SpecialFloat, Value, key_order};
use recap_testkit::{checks, plugin_checks, strategy_checks};
use std::cmp::Ordering;
use std::path::{Path, PathBuf};

fn inputs(dirs: &[&str]) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in dirs {
        let dir = root.join(dir);
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in read {
            let path = entry.expect("read a regression directory").path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn replay(dirs: &[&str], check: fn(&[u8])) -> usize {
    let files = inputs(dirs);
    for path in &files {
        let data = std::fs::read(path).expect("read a regression input");
        eprintln!("replaying {}", path.display());
        check(&data);
    }
    files.len()
}

#[test]
fn corpus_reader_crashes_and_seeds_replay_cleanly() {
    let n = replay(
        &[
            "tests/fuzz-regressions/corpus_reader",
            "fuzz/seeds/corpus_reader",
        ],
        checks::corpus_bytes,
    );
    assert!(n >= 3, "the committed seeds are replayed ({n} files)");
}

#[test]
fn value_printer_crashes_and_seeds_replay_cleanly() {
    let n = replay(
        &[
            "tests/fuzz-regressions/value_printer",
            "fuzz/seeds/value_printer",
        ],
        checks::value_bytes,
    );
    assert!(n >= 3, "the crash and the seeds are replayed ({n} files)");
}

#[test]
fn plugin_wire_crashes_and_seeds_replay_cleanly() {
    let n = replay(
        &[
            "tests/fuzz-regressions/plugin_wire",
            "fuzz/seeds/plugin_wire",
        ],
        plugin_checks::wire_bytes,
    );
    assert!(n >= 5, "the committed seeds are replayed ({n} files)");
}

/// The `strategies` target's property on real sessions: every bench-data session
/// renders through every built-in with no error and no broken invariant.
#[test]
fn bench_data_sessions_pass_the_strategies_property() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sessions = 0;
    for file in inputs(&["bench-data"]) {
        if file.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        for entry in recap_core::CorpusReader::open(&file).expect("open bench-data") {
            let session = entry.session.expect("bench-data sessions are valid");
            strategy_checks::session_renders(&session);
            sessions += 1;
        }
    }
    assert!(
        sessions > 0,
        "no bench-data sessions under {}",
        root.display()
    );
}

/// Fuzz crash `value_printer` #1: printing a set that mixes integers and floats near
/// 2^53 panicked in `sort_by` ("user-provided comparison function does not correctly
/// implement a total order"), because integers were compared with floats through a
/// lossy `as f64`. Reachable from any corpus value (a definition's sample, tool args).
#[test]
fn set_of_integers_and_floats_near_2_pow_53_prints_in_exact_order() {
    let two53 = 1i64 << 53;
    let set = Value::Set(vec![
        Value::Int(two53 + 1),
        Value::Float(two53 as f64),
        Value::Int(two53),
        Value::Int(two53 - 1),
        Value::Float(two53 as f64 + 2.0),
    ]);
    let (text, cut) = to_clojure(&set, PrintOptions::default());
    assert_eq!(
        text,
        "#{9007199254740991 9007199254740992.0 9007199254740992 9007199254740993 9007199254740994.0}"
    );
    assert!(!cut);
}

/// The same order must be a total order on every mix of numbers, or sorting may panic:
/// checked exhaustively on triples of awkward numbers.
#[test]
fn key_order_is_a_total_order_on_numbers() {
    let two53 = 1i64 << 53;
    let mut numbers = vec![
        Value::Int(0),
        Value::Float(0.0),
        Value::Float(-0.0),
        Value::Int(-1),
        Value::Float(-0.5),
        Value::Float(0.5),
        Value::Int(i64::MAX),
        Value::Int(i64::MIN),
        Value::Float(i64::MAX as f64),
        Value::Float(i64::MIN as f64),
        Value::Float(f64::MAX),
        Value::Float(f64::MIN),
        Value::Float(f64::INFINITY),
        Value::Float(f64::NEG_INFINITY),
        Value::Float(f64::NAN),
        Value::Float(-f64::NAN),
        Value::Special(SpecialFloat::Infinity),
        Value::Special(SpecialFloat::NegativeInfinity),
        Value::Special(SpecialFloat::NaN),
        Value::Float(f64::MIN_POSITIVE),
        Value::Float(4_503_599_627_370_495.5),
        Value::Int(4_503_599_627_370_495),
        Value::Int(4_503_599_627_370_496),
    ];
    for d in -3..=3 {
        numbers.push(Value::Int(two53 + d));
        numbers.push(Value::Float((two53 + d) as f64));
        numbers.push(Value::Int(-two53 + d));
        numbers.push(Value::Float((-two53 + d) as f64));
    }
    for a in &numbers {
        assert_eq!(key_order(a, a), Ordering::Equal, "{a:?} equals itself");
        for b in &numbers {
            assert_eq!(key_order(a, b), key_order(b, a).reverse(), "{a:?} vs {b:?}");
            for c in &numbers {
                let (ab, bc, ac) = (key_order(a, b), key_order(b, c), key_order(a, c));
                if ab != Ordering::Greater && bc != Ordering::Greater {
                    assert_ne!(
                        ac,
                        Ordering::Greater,
                        "{a:?} ≤ {b:?} ≤ {c:?} but {a:?} > {c:?}"
                    );
                }
                if ab == Ordering::Equal && bc == Ordering::Equal {
                    assert_eq!(ac, Ordering::Equal, "{a:?} = {b:?} = {c:?}");
                }
            }
        }
    }
    // And sorting them all does not panic, whatever the starting order.
    for rotation in 0..numbers.len() {
        let mut v = numbers.clone();
        v.rotate_left(rotation);
        v.sort_by(key_order);
        let mut r = v.clone();
        r.reverse();
        r.sort_by(key_order);
    }
}

/// Fuzz crash `value_structured` #1: a NaN float with the sign bit set (only possible
/// in a value built in code) sorted below every number, while its JSON encoding
/// (`{"$special":"nan"}`) sorts above them, so a value and its round trip printed
/// differently. Every NaN now sorts after every number.
#[test]
fn nan_of_either_sign_sorts_after_every_number() {
    let set = Value::Set(vec![
        Value::Float(-f64::NAN),
        Value::Int(990_718_715_436),
        Value::Special(SpecialFloat::NaN),
        Value::Float(f64::NEG_INFINITY),
    ]);
    let expected = "#{##-Inf 990718715436 ##NaN ##NaN}";
    assert_eq!(to_clojure(&set, PrintOptions::default()).0, expected);
    let decoded = Value::from_json(&set.to_json()).expect("decodes");
    assert_eq!(to_clojure(&decoded, PrintOptions::default()).0, expected);
    checks::value(&set);
}
