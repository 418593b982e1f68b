use super::*;
use crate::value::Closure;
use serde_json::json;

fn v(j: serde_json::Value) -> Value {
    Value::from_json(&j).expect("valid test value")
}

fn print(j: serde_json::Value, limit: Option<usize>, printable: Option<usize>) -> (String, bool) {
    to_clojure(&v(j), PrintOptions::new(limit, printable))
}

fn text(j: serde_json::Value) -> String {
    let (t, cut) = print(j, None, None);
    assert!(!cut, "nothing should be cut without limits: {t}");
    t
}

fn kw(name: &str) -> Value {
    Value::Keyword(name.into())
}

// ---- TRN: truncation -------------------------------------------------------------

#[test]
fn nth_char_start_counts_chars_not_bytes() {
    let s = format!("{}{}", "é".repeat(100), "a".repeat(100));
    assert_eq!(nth_char_start(&s, 0), Some(0));
    assert_eq!(nth_char_start(&s, 99), Some(198));
    assert_eq!(nth_char_start(&s, 100), Some(200));
    assert_eq!(nth_char_start(&s, 150), Some(250));
    assert_eq!(nth_char_start(&s, 199), Some(299));
    assert_eq!(nth_char_start(&s, 200), None);
    for n in 0..300 {
        assert_eq!(
            nth_char_start(&s, n),
            s.char_indices().nth(n).map(|(i, _)| i),
            "{n}"
        );
    }
}

#[test]
fn trn_002_sample_options_are_3_and_80() {
    assert_eq!(PrintOptions::SAMPLE, PrintOptions::new(Some(3), Some(80)));
    let (t, cut) = to_clojure(&v(json!([1, 2, 3, 4])), PrintOptions::SAMPLE);
    assert_eq!(t, "[1 2 3 ...] (4 items, showing first 3)");
    assert!(cut);
}

#[test]
fn trn_003_tool_args_options_are_3_and_60() {
    assert_eq!(
        PrintOptions::TOOL_ARGS,
        PrintOptions::new(Some(3), Some(60))
    );
    let (t, cut) = to_clojure(
        &v(json!({"limit": 5, "offset": 0, "query": "laptops"})),
        PrintOptions::TOOL_ARGS,
    );
    assert_eq!(t, "{:limit 5 :offset 0 ...}");
    assert!(cut);
}

#[test]
fn trn_004_cut_collection_shows_counts() {
    assert_eq!(
        print(json!([1, 2, 3, 4, 5]), Some(2), None),
        ("[1 2 ...] (5 items, showing first 2)".into(), true)
    );
    assert_eq!(
        print(json!({"$set": [5, 4, 3, 2, 1]}), Some(2), None),
        ("#{1 2 ...} (5 items, showing first 2)".into(), true)
    );
    assert_eq!(
        print(json!({"$tuple": [1, 2, 3]}), Some(1), None),
        ("[1 ...] (3 items, showing first 1)".into(), true)
    );
    // Limit 0 keeps the space before `...`, as the original does.
    assert_eq!(
        print(json!([1, 2, 3, 4, 5]), Some(0), None),
        ("[ ...] (5 items, showing first 0)".into(), true)
    );
    // Exactly `limit` items is not a cut.
    assert_eq!(
        print(json!([1, 2, 3]), Some(3), None),
        ("[1 2 3]".into(), false)
    );
    // Inner markers stay inline; the flag propagates.
    assert_eq!(
        print(json!([[1, 2, 3, 4], [5, 6]]), Some(3), None),
        (
            "[[1 2 3 ...] (4 items, showing first 3) [5 6]]".into(),
            true
        )
    );
}

#[test]
fn trn_004_cut_map_has_no_count() {
    assert_eq!(
        print(json!({"a": 1, "b": 2, "c": 3}), Some(2), None),
        ("{:a 1 :b 2 ...}".into(), true)
    );
    assert_eq!(
        print(json!({"a": 1}), Some(0), None),
        ("{ ...}".into(), true)
    );
}

#[test]
fn trn_005_cut_string_shows_ellipsis() {
    assert_eq!(
        print(json!("abcdefghij"), None, Some(4)),
        ("\"abcd...\"".into(), true)
    );
    assert_eq!(print(json!("abc"), None, Some(0)), ("\"...\"".into(), true));
    // Exactly the limit is not cut; lengths are chars, not bytes.
    assert_eq!(
        print(json!("abcd"), None, Some(4)),
        ("\"abcd\"".into(), false)
    );
    assert_eq!(
        print(json!("héllo"), None, Some(5)),
        ("\"héllo\"".into(), false)
    );
    assert_eq!(
        print(json!("héllo wörld"), None, Some(5)),
        ("\"héllo...\"".into(), true)
    );
    // The printable limit is not divided among list items.
    assert_eq!(
        print(json!(["abcdefghij", "xy"]), None, Some(5)),
        ("[\"abcde...\" \"xy\"]".into(), true)
    );
}

#[test]
fn map_budget_splits_printable_limit_among_kept_values() {
    // effective limit max(25 / 30, 1) = 1; per value max(25 - 10, 10) = 15.
    let long = "x".repeat(40);
    assert_eq!(
        print(json!({"a": long, "b": "y"}), None, Some(25)),
        (format!("{{:a \"{}...\" ...}}", "x".repeat(15)), true)
    );
    // Recursively: outer per-value 70, inner keeps 2 entries with 25 each.
    assert_eq!(
        print(
            json!({"outer": {"a": "x".repeat(50), "b": 2}}),
            Some(3),
            Some(80)
        ),
        (
            format!("{{:outer {{:a \"{}...\" :b 2}}}}", "x".repeat(25)),
            true
        )
    );
}

#[test]
fn hidden_keys_are_dropped_before_limiting_and_are_not_a_cut() {
    assert_eq!(
        print(json!({"_x": 1, "a": 1, "b": 2, "c": 3}), Some(3), None),
        ("{:a 1 :b 2 :c 3}".into(), false)
    );
    let string_key = v(json!({"$map": [["_s", 1], ["t", 2]]}));
    assert_eq!(
        to_clojure(&string_key, PrintOptions::default()).0,
        "{\"t\" 2}"
    );
    let shown = PrintOptions {
        show_hidden: true,
        ..Default::default()
    };
    assert_eq!(to_clojure(&string_key, shown).0, "{\"_s\" 1 \"t\" 2}");
}

// ---- SAM-003 and the scalar forms ------------------------------------------------

#[test]
fn sam_003_clojure_syntax_samples() {
    assert_eq!(text(json!({"count": 45, "id": 101})), "{:count 45 :id 101}");
    assert_eq!(
        text(json!([{"$kw": "a"}, "s", null, true])),
        "[:a \"s\" nil true]"
    );
    assert_eq!(text(json!({"$set": ["meals"]})), "#{\"meals\"}");
    assert_eq!(
        text(json!({"$map": [["c", 3], [{"$kw": "b"}, 2], [1, "a"]]})),
        "{1 \"a\" :b 2 \"c\" 3}"
    );
    assert_eq!(text(json!({"$var": "x"})), "#'x");
    assert_eq!(text(json!({"$builtin": true})), "#<builtin>");
    assert_eq!(text(json!({"$date": "2024-01-15"})), "\"2024-01-15\"");
    assert_eq!(text(json!({"$special": "negative_infinity"})), "##-Inf");
    assert_eq!(
        text(json!({"$fn": {"params": ["x", null], "rest": "more"}})),
        "#fn[x _ & more]"
    );
    assert_eq!(
        text(json!({"$fn": {"params": [], "rest": "args"}})),
        "#fn[& args]"
    );
    assert_eq!(text(json!(-42)), "-42");
}

#[test]
fn non_scalar_map_keys_print_whole_with_default_options() {
    let m = Value::Map(vec![(
        Value::List(vec![Value::Int(1), Value::Int(2), Value::Int(3)]),
        Value::Str("v".into()),
    )]);
    assert_eq!(
        to_clojure(&m, PrintOptions::new(Some(1), None)),
        ("{[1 2 3] \"v\"}".into(), false)
    );
}

#[test]
fn floats_are_fixed_point_with_10_decimals() {
    let cases: [(f64, &str); 10] = [
        (0.1 + 0.2, "0.3"),
        (1.0, "1.0"),
        (2.0 / 3.0, "0.6666666667"),
        (1e20, "100000000000000000000.0"),
        (1e-11, "0.0"),
        (-0.0, "-0.0"),
        (-2.5, "-2.5"),
        (123456789.12345679, "123456789.123456791"),
        (f64::MIN_POSITIVE, "0.0"),
        (5e-10, "0.0000000005"),
    ];
    for (f, want) in cases {
        assert_eq!(
            to_clojure(&Value::Float(f), PrintOptions::default()).0,
            want,
            "{f:e}"
        );
    }
    // Any finite float prints (the original raised on these).
    let big = to_clojure(&Value::Float(1e300), PrintOptions::default()).0;
    assert_eq!(big.len(), 301 + 2);
    assert!(big.starts_with('1') && big.ends_with(".0"), "{big}");
    let max = to_clojure(&Value::Float(f64::MAX), PrintOptions::default()).0;
    assert!(max.starts_with("17976931348623157") && max.ends_with(".0"));
    // Non-finite floats built in code print like the special floats.
    assert_eq!(
        to_clojure(&Value::Float(f64::NAN), PrintOptions::default()).0,
        "##NaN"
    );
    assert_eq!(
        to_clojure(&Value::Float(f64::NEG_INFINITY), PrintOptions::default()).0,
        "##-Inf"
    );
}

#[test]
fn strings_escape_quotes_backslashes_whitespace_hash_brace_and_controls() {
    assert_eq!(text(json!("a\"b\\c")), r#""a\"b\\c""#);
    assert_eq!(text(json!("l1\nl2\tend\r")), r#""l1\nl2\tend\r""#);
    assert_eq!(text(json!("total: #{x} # {")), r#""total: \#{x} # {""#);
    // SPEC section 2 difference 2: other controls as \uXXXX, no binary syntax.
    assert_eq!(
        text(json!("ctrl\u{1}char\u{7f}\u{85}")),
        r#""ctrl\u0001char\u007f\u0085""#
    );
    assert_eq!(text(json!("ünïcødé ✓ 🎉")), "\"ünïcødé ✓ 🎉\"");
    // Map string keys are escaped and never cut.
    let m = v(json!({"$map": [["k\"ey-that-is-long", "valuevaluevalue"]]}));
    assert_eq!(
        to_clojure(&m, PrintOptions::new(None, Some(5))),
        (r#"{"k\"ey-that-is-long" "valuevalue..."}"#.into(), true)
    );
}

#[test]
fn string_cut_counts_chars_of_the_original_not_of_escapes() {
    assert_eq!(
        print(json!("\"\"\"\"\"\""), None, Some(3)),
        (r#""\"\"\"...""#.into(), true)
    );
}

// ---- depth and size --------------------------------------------------------------

fn deep_list(depth: usize) -> Value {
    let mut v = Value::Int(1);
    for _ in 0..depth {
        v = Value::List(vec![v]);
    }
    v
}

#[test]
fn deep_200k_list_prints_fully_and_drops_without_overflow() {
    let v = deep_list(200_000);
    let (t, cut) = to_clojure(&v, PrintOptions::default());
    assert!(!cut);
    assert_eq!(t.len(), 400_001);
    assert!(t.starts_with("[[[[") && t.ends_with("]]]]"));
    assert_eq!(&t[199_998..200_003], "[[1]]");
    assert_eq!(t.matches('[').count(), 200_000);
    drop(v);
}

#[test]
fn deep_200k_maps_and_sets_print_with_budgets_and_drop() {
    let mut v = Value::Str("x".repeat(100));
    for i in 0..200_000 {
        v = if i % 2 == 0 {
            Value::Map(vec![(kw("k"), v), (kw("z"), Value::Int(1))])
        } else {
            Value::Set(vec![v])
        };
    }
    let (t, cut) = to_clojure(&v, PrintOptions::SAMPLE);
    assert!(
        cut,
        "the innermost string is longer than the minimal budget of 10"
    );
    assert!(t.starts_with("#{{:k #{{:k "), "{}", &t[..40]);
    assert!(t.contains(&format!("\"{}...\"", "x".repeat(10))));
    drop(v);
}

#[test]
fn wide_values_print_and_drop() {
    let wide = Value::List((0..100_000).map(|i| deep_list(i % 3)).collect());
    let (t, cut) = to_clojure(&wide, PrintOptions::default());
    assert!(!cut);
    assert!(t.starts_with("[1 [1] [[1]] 1 [1]"));
}

#[test]
fn string_of_50_mb_prints_whole_and_cut() {
    let s = "ab\"c\u{e9}".repeat(10 * 1024 * 1024);
    let chars = 5 * 10 * 1024 * 1024;
    let value = Value::Str(s);
    let (t, cut) = to_clojure(&value, PrintOptions::default());
    assert!(!cut);
    // Each repeat gains one backslash; two quotes around.
    assert_eq!(t.chars().count(), chars + 10 * 1024 * 1024 + 2);
    let (t, cut) = to_clojure(&value, PrintOptions::new(None, Some(7)));
    assert!(cut);
    assert_eq!(t, "\"ab\\\"c\u{e9}ab...\"");
}

// ---- TYP-001..012 ------------------------------------------------------------------

#[test]
fn typ_001_empty_list() {
    assert_eq!(type_of(&Value::List(vec![])), "list[0]");
}

#[test]
fn typ_002_list_length() {
    assert_eq!(type_of(&v(json!([1, 2, 3]))), "list[3]");
}

#[test]
fn typ_003_empty_map() {
    assert_eq!(type_of(&Value::Map(vec![])), "map[0]");
}

#[test]
fn typ_004_map_key_count() {
    assert_eq!(type_of(&v(json!({"a": 1, "_b": 2}))), "map[2]");
}

#[test]
fn typ_005_string() {
    assert_eq!(type_of(&Value::Str("s".into())), "string");
}

#[test]
fn typ_006_integer() {
    assert_eq!(type_of(&Value::Int(42)), "integer");
}

#[test]
fn typ_007_float() {
    assert_eq!(type_of(&Value::Float(1.0)), "float");
    assert_eq!(type_of(&v(json!({"$special": "nan"}))), "float");
}

#[test]
fn typ_008_boolean() {
    assert_eq!(type_of(&Value::Bool(false)), "boolean");
}

#[test]
fn typ_009_keyword() {
    assert_eq!(type_of(&kw("foo")), "keyword");
}

#[test]
fn typ_010_nil() {
    assert_eq!(type_of(&Value::Nil), "nil");
}

#[test]
fn typ_011_closure() {
    assert_eq!(type_of(&Value::Fn(Closure::default())), "#fn[...]");
}

#[test]
fn typ_012_set() {
    assert_eq!(type_of(&v(json!({"$set": [1, 2, 3]}))), "set[3]");
}

#[test]
fn type_of_anything_else_is_unknown() {
    for j in [
        json!({"$tuple": [1]}),
        json!({"$var": "x"}),
        json!({"$builtin": true}),
        json!({"$date": "2024-01-15"}),
    ] {
        assert_eq!(type_of(&v(j.clone())), "unknown", "{j}");
    }
}

// ---- fast paths against their references ---------------------------------------------

fn float_text(f: f64, via: fn(&mut String, f64)) -> String {
    let mut out = String::new();
    via(&mut out, f);
    out
}

#[test]
fn float_fast_path_matches_the_formatter_on_edges() {
    let mut cases = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        2.0 / 3.0,
        // Exact ties at the 11th decimal: ties go to even.
        1.0 / 2048.0,
        3.0 / 2048.0,
        -5.0 / 2048.0,
        5e-11,
        1.5e-10,
        2.5e-10,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::from_bits(1),
        123456789.12345679,
        // Around the fast path's limit (2^63) and beyond.
        9_223_372_036_854_774_784.0,
        9_223_372_036_854_775_808.0,
        1e20,
        f64::MAX,
        -f64::MAX,
    ];
    for e in -40..=70 {
        let p = 2f64.powi(e);
        cases.extend([p, -p, p * 1.5, p + 0.3, 10f64.powi(e / 4) + 0.5e-10]);
    }
    for f in cases {
        assert_eq!(
            float_text(f, push_float),
            float_text(f, push_float_fmt),
            "{f:e} ({:#x})",
            f.to_bits()
        );
    }
}

#[test]
fn write_decimal_prints_digits() {
    for n in [
        0,
        9,
        10,
        99,
        100,
        101,
        999,
        1000,
        12345,
        u64::MAX / 7,
        u64::MAX,
    ] {
        let mut out = String::from("x");
        write_decimal(&mut out, n);
        assert_eq!(out, format!("x{n}"));
    }
    for i in [i64::MIN, -1, 0, 7, i64::MAX] {
        assert_eq!(text(json!(i)), i.to_string());
    }
}

#[test]
fn write_type_of_appends_what_type_of_returns() {
    for j in [
        json!([1, 2]),
        json!({"a": 1}),
        json!("s"),
        json!(null),
        json!(1.5),
    ] {
        let value = v(j);
        let mut out = String::from("; ");
        write_type_of(&mut out, &value);
        assert_eq!(out, format!("; {}", type_of(&value)));
    }
}

/// The escaping rule char by char, as the original printer wrote it.
fn escape_by_chars(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '#' if chars.peek() == Some(&'{') => out.push_str("\\#"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    #[test]
    fn float_fast_path_matches_the_formatter(bits in proptest::prelude::any::<u64>()) {
        let f = f64::from_bits(bits);
        proptest::prop_assume!(f.is_finite());
        proptest::prop_assert_eq!(float_text(f, push_float), float_text(f, push_float_fmt));
    }

    #[test]
    fn float_fast_path_matches_on_short_decimals(m in -10_000_000i64..10_000_000, e in 0u32..12) {
        let f = m as f64 / 10f64.powi(e as i32);
        proptest::prop_assert_eq!(float_text(f, push_float), float_text(f, push_float_fmt));
    }

    #[test]
    fn byte_escaper_matches_the_char_rule(
        s in "([a-z \"\\\\#{}\n\t\r\u{0}-\u{1f}\u{7f}-\u{a0}\u{85}éΩ😀]|#\\{){0,40}",
    ) {
        let mut out = String::new();
        push_escaped(&mut out, &s);
        proptest::prop_assert_eq!(out, escape_by_chars(&s));
    }
}
