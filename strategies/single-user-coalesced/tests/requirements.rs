//! One or more tests per requirement ID of the requirements table (seeds/000) that
//! SPEC maps to `single-user-coalesced`. Each test name starts with the lowercased ID;
//! docs/requirements.md maps every ID to its test.

use recap_core::{DefKind, RenderRequest, Session, Value, to_clojure};
use recap_gen::builder::{SessionBuilder, TurnBuilder, closure, value};
use recap_single_user_coalesced::{
    ARGS_PRINT, SAMPLE_PRINT, SummaryOptions, render, render_with, summary,
};
use serde_json::json;

const MISSION: &str = "Find well-reviewed products in stock";

fn session(turns: Vec<TurnBuilder>) -> Session {
    let mut b = SessionBuilder::new(MISSION).system("sys").max_turns(30);
    for t in turns {
        b = b.turn(t);
    }
    b.build_validated().expect("test session is valid")
}

/// The summary over all turns of a session with these turns, default options.
fn summarize(turns: Vec<TurnBuilder>) -> String {
    summarize_with(turns, SummaryOptions::default())
}

fn summarize_with(turns: Vec<TurnBuilder>, opts: SummaryOptions) -> String {
    let s = session(turns);
    summary(&s.turns, opts).expect("some turn succeeded")
}

/// The USER content of the call after all turns.
fn user_content(s: &Session) -> String {
    let req = RenderRequest::for_call(s, s.turns.len()).unwrap();
    let msgs = render(&req);
    assert_eq!(msgs.len(), 2);
    msgs[1].content.to_string()
}

fn opts(println_limit: u32, tool_call_limit: u32) -> SummaryOptions {
    SummaryOptions {
        println_limit,
        tool_call_limit,
    }
}

fn v(j: serde_json::Value) -> Value {
    value(j)
}

// ---- API ----------------------------------------------------------------------------

#[test]
fn api_004_default_println_limit_is_15() {
    assert_eq!(SummaryOptions::default().println_limit, 15);
    let prints: Vec<String> = (1..=16).map(|i| format!("p{i}")).collect();
    let s = summarize(vec![TurnBuilder::ok("(doseq ...)").prints(prints)]);
    assert!(!s.contains("\np1\n"), "{s}");
    assert!(
        s.ends_with("; Output:\np2\np3\np4\np5\np6\np7\np8\np9\np10\np11\np12\np13\np14\np15\np16")
    );
}

#[test]
fn api_005_default_tool_call_limit_is_20() {
    assert_eq!(SummaryOptions::default().tool_call_limit, 20);
    let mut t = TurnBuilder::ok("(dotimes ...)");
    for i in 1..=21 {
        t = t.call(&format!("t{i}"), v(json!({"i": i})), None);
    }
    let s = summarize(vec![t]);
    assert!(!s.contains("t1("), "{s}");
    assert_eq!(s.lines().filter(|l| l.starts_with(";   ")).count(), 20);
}

#[test]
fn api_006_options_are_normalized_and_validated() {
    let spec = recap_core::StrategySpec::parse("single-user-coalesced:println_limit=3").unwrap();
    assert_eq!(SummaryOptions::from_spec(&spec).unwrap(), opts(3, 20));
    for bad in [
        "println_limit=0",
        "tool_call_limit=x",
        "println_limit=-2",
        "tool_call_limit=1.5",
    ] {
        let spec =
            recap_core::StrategySpec::parse(&format!("single-user-coalesced:{bad}")).unwrap();
        let err = recap_single_user_coalesced::build(&spec).err().expect(bad);
        assert!(err.to_string().contains("integer ≥ 1"), "{bad}: {err}");
    }
}

// ---- input data (NS-* are the interpreter's: not applicable) ----------------------

// What the summary must do with the input data `data/key` reads: not list it among the
// definitions.
#[test]
fn input_data_is_not_listed_among_the_definitions() {
    let s = SessionBuilder::new(MISSION)
        .data("products", v(json!([{"name": "Laptop"}])))
        .turn(TurnBuilder::ok("(def n (count data/products))").def("n", v(json!(1))))
        .build();
    let content = user_content(&s);
    assert!(content.contains("; Defined: n = integer, sample: 1"));
    assert!(
        !content.contains("Defined: products") && !content.contains("Laptop"),
        "{content}"
    );
}

// ---- FMT ---------------------------------------------------------------------------

#[test]
fn fmt_001_tool_calls_header() {
    let s = summarize(vec![TurnBuilder::ok("(tool/search {:q 1})").call(
        "search",
        v(json!({"q": 1})),
        None,
    )]);
    assert!(s.starts_with("; Tool calls:\n"), "{s}");
}

#[test]
fn fmt_002_entry_indent_and_parens_even_without_args() {
    let s = summarize(vec![
        TurnBuilder::ok("(calls)")
            .call("get-inventory", v(json!({})), None)
            .call("ping", Value::Nil, None)
            .call("no-args", v(json!([])), None)
            .call("positional", v(json!([1, "a", {"$kw": "k"}])), None)
            .call("too-many", v(json!([1, 2, 3, 4, 5])), None)
            .call("hidden", v(json!({"_token": "secret"})), None)
            .call("search", v(json!({"query": "laptops"})), None),
    ]);
    assert_eq!(
        s,
        "; Tool calls:\n\
         ;   get-inventory()\n\
         ;   ping()\n\
         ;   no-args()\n\
         ;   positional(1 \"a\" :k)\n\
         ;   too-many([1 2 3 ...] (5 items, showing first 3))\n\
         ;   hidden()\n\
         ;   search({:query \"laptops\"})"
    );
}

#[test]
fn fmt_003_no_tool_calls_made() {
    let s = summarize(vec![TurnBuilder::ok("(def x 1)").def("x", v(json!(1)))]);
    assert_eq!(s, "; No tool calls made\n; Defined: x = integer, sample: 1");
}

#[test]
fn fmt_004_function_with_docstring() {
    let s = summarize(vec![TurnBuilder::ok("(defn f ...)").defn(
        "f",
        Some("Adds one"),
        &["x"],
    )]);
    assert_eq!(s, "; No tool calls made\n; Function: f - \"Adds one\"");
}

#[test]
fn fmt_005_function_without_docstring() {
    let s = summarize(vec![
        TurnBuilder::ok("(defn f ...)")
            .defn("f", None, &["x"])
            .defn("g", Some(""), &[])
            .definition("h", DefKind::Defn, None, None),
    ]);
    assert_eq!(
        s,
        "; No tool calls made\n; Function: f\n; Function: g\n; Function: h"
    );
}

#[test]
fn fmt_006_defined_with_docstring_and_sample() {
    let s = summarize(vec![TurnBuilder::ok("(def x ...)").def_doc(
        "x",
        "The count",
        v(json!(3)),
    )]);
    assert!(
        s.ends_with("\n; Defined: x - \"The count\" = integer, sample: 3"),
        "{s}"
    );
}

#[test]
fn fmt_007_defined_with_sample_without_docstring() {
    let s = summarize(vec![
        TurnBuilder::ok("(def x ...)").def("x", v(json!({"a": 1}))),
    ]);
    assert!(
        s.ends_with("\n; Defined: x = map[1], sample: {:a 1}"),
        "{s}"
    );
}

#[test]
fn fmt_008_defined_without_sample() {
    let s = summarize(vec![
        TurnBuilder::ok("(def x ...)")
            .def("x", v(json!([1, 2])))
            .definition("unrecorded", DefKind::Def, None, None)
            .print("done"),
    ]);
    assert!(s.contains("\n; Defined: x = list[2]\n"), "{s}");
    assert!(s.contains("\n; Defined: unrecorded = unknown\n"), "{s}");
}

#[test]
fn fmt_009_output_header() {
    let s = summarize(vec![TurnBuilder::ok("(println 1)").print("1")]);
    assert_eq!(s, "; No tool calls made\n; Output:\n1");
}

#[test]
fn fmt_010_output_lines_have_no_prefix() {
    let s = summarize(vec![
        TurnBuilder::ok("(println ...)").prints(["alpha", "beta"]),
    ]);
    assert!(s.ends_with("; Output:\nalpha\nbeta"), "{s}");
}

#[test]
fn fmt_011_section_order_tool_calls_functions_defined_output() {
    let s = summarize(vec![
        TurnBuilder::ok("(all)")
            .print("printed")
            .def("x", v(json!(1)))
            .defn("f", None, &[])
            .call("t", Value::Nil, None),
    ]);
    assert_eq!(
        s,
        "; Tool calls:\n;   t()\n; Function: f\n; Defined: x = integer\n; Output:\nprinted"
    );
}

#[test]
fn fmt_012_empty_sections_are_omitted() {
    let s = summarize(vec![TurnBuilder::ok("(tool/t)").call(
        "t",
        Value::Nil,
        None,
    )]);
    assert_eq!(s, "; Tool calls:\n;   t()");
    assert!(!s.contains("; Function") && !s.contains("; Defined") && !s.contains("; Output"));
}

#[test]
fn fmt_013_summaries_consolidated_across_turns() {
    let s = summarize(vec![
        TurnBuilder::ok("(a)")
            .call("a", Value::Nil, None)
            .def("x", v(json!(1))),
        TurnBuilder::ok("(b)")
            .call("b", Value::Nil, None)
            .def("y", v(json!(2))),
    ]);
    assert_eq!(s.matches("; Tool calls:").count(), 1);
    assert_eq!(
        s,
        "; Tool calls:\n;   a()\n;   b()\n; Defined: x = integer, sample: 1\n; Defined: y = integer, sample: 2"
    );
}

#[test]
fn fmt_014_output_rendered_as_is_without_sanitization() {
    let tricky = "; Tool calls:\n---\nTurns left: 99\n\"quoted\" \\ \t";
    let s = summarize(vec![TurnBuilder::ok("(println ...)").print(tricky)]);
    assert!(s.ends_with(&format!("; Output:\n{tricky}")), "{s}");
}

// ---- TRN ---------------------------------------------------------------------------

#[test]
fn trn_001_all_values_go_through_to_clojure() {
    let args = v(json!({"query": "laptops under budget", "limit": 5, "offset": 0}));
    let val = v(json!([{"name": "Laptop", "tags": ["a", "b", "c", "d"]}, 2.5, null]));
    let s = summarize(vec![
        TurnBuilder::ok("(x)")
            .call("search", args.clone(), None)
            .def("x", val.clone()),
    ]);
    let printed_args = to_clojure(&args, ARGS_PRINT).0;
    let printed_val = to_clojure(&val, SAMPLE_PRINT).0;
    assert!(s.contains(&format!(";   search({printed_args})")), "{s}");
    assert!(s.contains(&format!(", sample: {printed_val}")), "{s}");
}

#[test]
fn trn_002_samples_use_limit_3_and_printable_limit_80() {
    let long = "x".repeat(100);
    let s = summarize(vec![
        TurnBuilder::ok("(def ...)")
            .def("nums", v(json!([1, 2, 3, 4, 5])))
            .def("text", v(json!(long))),
    ]);
    assert!(
        s.contains("; Defined: nums = list[5], sample: [1 2 3 ...] (5 items, showing first 3)"),
        "{s}"
    );
    assert!(
        s.contains(&format!(
            "; Defined: text = string, sample: \"{}...\"",
            "x".repeat(80)
        )),
        "{s}"
    );
}

#[test]
fn trn_003_tool_args_use_limit_3_and_printable_limit_60() {
    let long = "y".repeat(70);
    let s = summarize(vec![
        TurnBuilder::ok("(calls)")
            .call(
                "search",
                v(json!({"limit": 5, "offset": 0, "query": "laptops"})),
                None,
            )
            .call("say", v(json!([long])), None),
    ]);
    assert!(s.contains(";   search({:limit 5 :offset 0 ...})"), "{s}");
    assert!(
        s.contains(&format!(";   say(\"{}...\")", "y".repeat(60))),
        "{s}"
    );
}

#[test]
fn trn_004_truncated_collection_in_summary_shows_counts() {
    let s = summarize(vec![
        TurnBuilder::ok("(def ...)").def("xs", v(json!([[1, 2, 3, 4], 2, 3, 4]))),
    ]);
    assert!(
        s.ends_with(
            "sample: [[1 2 3 ...] (4 items, showing first 3) 2 3 ...] (4 items, showing first 3)"
        ),
        "{s}"
    );
}

#[test]
fn trn_005_truncated_string_in_summary_ends_with_dots() {
    let s = summarize(vec![TurnBuilder::ok("(t)").call(
        "t",
        v(json!(["z".repeat(61)])),
        None,
    )]);
    assert!(s.ends_with(&format!("t(\"{}...\")", "z".repeat(60))), "{s}");
}

#[test]
fn trn_006_println_limit_counts_calls_not_lines() {
    let s = summarize_with(
        vec![TurnBuilder::ok("(println ...)").prints(["a\nb\nc", "d", "e\nf"])],
        opts(2, 20),
    );
    assert!(s.ends_with("; Output:\nd\ne\nf"), "{s}");
}

#[test]
fn trn_007_output_lines_preserved_as_is() {
    let line = "   indented\twith tab, trailing space ";
    let s = summarize(vec![TurnBuilder::ok("(println ...)").print(line)]);
    assert!(s.ends_with(&format!("; Output:\n{line}")), "{s:?}");
}

#[test]
fn trn_008_each_recorded_println_call_is_one_output_entry() {
    let s = summarize_with(
        vec![
            TurnBuilder::ok("(println 1)").print("one"),
            TurnBuilder::ok("(println 2) (println 3)").prints(["two", "three"]),
        ],
        opts(2, 20),
    );
    assert!(s.ends_with("; Output:\ntwo\nthree"), "{s}");
}

#[test]
fn trn_009_multiline_println_is_one_call() {
    let s = summarize_with(
        vec![TurnBuilder::ok("(println ...)").prints(["first", "line 1\nline 2\nline 3"])],
        opts(1, 20),
    );
    assert!(s.ends_with("; Output:\nline 1\nline 2\nline 3"), "{s}");
}

#[test]
fn trn_010_println_limit_drops_oldest_first() {
    let s = summarize_with(
        vec![
            TurnBuilder::ok("(println ...)").prints(["1", "2"]),
            TurnBuilder::ok("(println ...)").prints(["3", "4"]),
        ],
        opts(3, 20),
    );
    assert!(s.ends_with("; Output:\n2\n3\n4"), "{s}");
}

#[test]
fn trn_011_each_print_is_cut_at_2000_characters() {
    // Multi-byte characters: the cut counts characters, not bytes.
    let long: String = "é".repeat(2500);
    let exact: String = "a".repeat(2000);
    let s = summarize(vec![
        TurnBuilder::ok("(println ...)").prints([long.clone(), exact.clone()]),
    ]);
    let expected = format!("; Output:\n{}...\n{exact}", "é".repeat(2000));
    assert!(s.ends_with(&expected), "cut print differs");
}

// ---- SAM ---------------------------------------------------------------------------

#[test]
fn sam_001_without_println_samples_are_shown() {
    let s = summarize(vec![
        TurnBuilder::ok("(def x ...)").def("x", v(json!("hello"))),
    ]);
    assert!(
        s.ends_with("; Defined: x = string, sample: \"hello\""),
        "{s}"
    );
}

#[test]
fn sam_002_any_println_omits_samples_and_result_types_everywhere() {
    let turns = || {
        vec![
            TurnBuilder::ok("(def x (tool/t))")
                .call("t", Value::Nil, Some(v(json!("r"))))
                .def("x", v(json!("hello"))),
            TurnBuilder::ok("(println x)").print("hello"),
        ]
    };
    let s = summarize(turns());
    assert_eq!(
        s,
        "; Tool calls:\n;   t()\n; Defined: x = string\n; Output:\nhello"
    );
    // Only successful turns count: a failed turn's prints do not drop samples.
    let s = summarize(vec![
        TurnBuilder::ok("(def x (tool/t))")
            .call("t", Value::Nil, Some(v(json!("r"))))
            .def("x", v(json!("hello"))),
        TurnBuilder::failed("(println x) (boom)", "boom").print("hello"),
    ]);
    assert_eq!(
        s,
        "; Tool calls:\n;   t() -> string\n; Defined: x = string, sample: \"hello\""
    );
}

#[test]
fn sam_003_samples_use_clojure_syntax() {
    let s = summarize(vec![TurnBuilder::ok("(def x ...)").def(
        "x",
        v(json!({"name": "Laptop", "tags": {"$set": [{"$kw": "new"}]}})),
    )]);
    assert!(
        s.ends_with("sample: {:name \"Laptop\" :tags #{:new}}"),
        "{s}"
    );
}

// ---- DEF ---------------------------------------------------------------------------

#[test]
fn def_001_redefinition_within_a_turn_shows_only_the_final_value() {
    let s = summarize(vec![
        TurnBuilder::ok("(def x 1) (def x 2)")
            .def("x", v(json!(1)))
            .def("x", v(json!("two"))),
    ]);
    assert_eq!(
        s,
        "; No tool calls made\n; Defined: x = string, sample: \"two\""
    );
}

#[test]
fn def_002_redefinition_across_turns_latest_wins_and_moves_to_end() {
    let s = summarize(vec![
        TurnBuilder::ok("(def a 1) (def b 2)")
            .def("a", v(json!(1)))
            .def("b", v(json!(2))),
        TurnBuilder::ok("(def a [3])").def("a", v(json!([3]))),
    ]);
    assert_eq!(
        s,
        "; No tool calls made\n; Defined: b = integer, sample: 2\n; Defined: a = list[1], sample: [3]"
    );
}

#[test]
fn def_003_nil_definition_has_no_sample() {
    let s = summarize(vec![TurnBuilder::ok("(def x nil)").def("x", Value::Nil)]);
    assert!(s.ends_with("; Defined: x = nil"), "{s}");
}

#[test]
fn def_004_empty_collections_have_no_sample_but_empty_strings_do() {
    let s = summarize(vec![
        TurnBuilder::ok("(def ...)")
            .def("l", v(json!([])))
            .def("m", v(json!({})))
            .def("s", v(json!({"$set": []})))
            .def("e", v(json!(""))),
    ]);
    assert_eq!(
        s,
        "; No tool calls made\n; Defined: l = list[0]\n; Defined: m = map[0]\n; Defined: s = set[0]\n; Defined: e = string, sample: \"\""
    );
}

#[test]
fn def_005_def_and_defn_both_support_docstrings() {
    let s = summarize(vec![
        TurnBuilder::ok("(def ...) (defn ...)")
            .def_doc("x", "A value", v(json!(1)))
            .defn("f", Some("A function"), &["a"]),
    ]);
    assert!(s.contains("; Function: f - \"A function\""), "{s}");
    assert!(s.contains("; Defined: x - \"A value\" = integer"), "{s}");
}

#[test]
fn def_006_docstrings_come_from_the_recording() {
    // The recorded docstring is used (not re-parsed from the program); a closure's own
    // docstring is the fallback, and the definition's wins over it.
    let s = summarize(vec![
        TurnBuilder::ok("(defn f \"in program\" [] 1)")
            .definition(
                "f",
                DefKind::Defn,
                None,
                Some(closure(&[], Some("from closure"))),
            )
            .definition(
                "g",
                DefKind::Def,
                Some("from def"),
                Some(closure(&[], Some("from closure"))),
            ),
    ]);
    assert_eq!(
        s,
        "; No tool calls made\n; Function: f - \"from closure\"\n; Function: g - \"from def\""
    );
}

#[test]
fn def_007_docstring_semicolons_removed_and_line_breaks_become_spaces() {
    let s = summarize(vec![
        TurnBuilder::ok("(def ...)")
            .def_doc("x", "a; b;; c\nd\r\ne\rf", v(json!(1)))
            .def_doc("y", ";;", v(json!(2))),
    ]);
    assert!(
        s.contains("; Defined: x - \"a b c d e f\" = integer"),
        "{s}"
    );
    assert!(s.contains("; Defined: y = integer"), "{s}");
}

#[test]
fn def_008_definitions_accumulate_from_all_previous_successful_turns() {
    let s = summarize(vec![
        TurnBuilder::ok("(def a 1)").def("a", v(json!(1))),
        TurnBuilder::failed("(def lost 2) (boom)", "boom").def("lost", v(json!(2))),
        TurnBuilder::ok("(def b 3)").def("b", v(json!(3))),
    ]);
    assert!(
        s.contains("; Defined: a = integer") && s.contains("; Defined: b = integer"),
        "{s}"
    );
    assert!(!s.contains("lost"), "{s}");
}

#[test]
fn def_009_order_follows_order_of_definition() {
    let s = summarize(vec![
        TurnBuilder::ok("(def z ...) (def a ...)")
            .def("z", v(json!(1)))
            .def("a", v(json!(2))),
        TurnBuilder::ok("(def m ...)").def("m", v(json!(3))),
    ]);
    let pos = |n: &str| s.find(&format!("; Defined: {n} ")).unwrap();
    assert!(pos("z") < pos("a") && pos("a") < pos("m"), "{s}");
}

// ---- TC ----------------------------------------------------------------------------

#[test]
fn tc_001_tool_calls_accumulate_across_turns() {
    let s = summarize(vec![
        TurnBuilder::ok("(a)").call("a", Value::Nil, None),
        TurnBuilder::ok("(b)").call("b", Value::Nil, None),
        TurnBuilder::ok("(c)").call("c", Value::Nil, None),
    ]);
    assert_eq!(s, "; Tool calls:\n;   a()\n;   b()\n;   c()");
}

#[test]
fn tc_002_tool_calls_limited_by_tool_call_limit() {
    let mut t = TurnBuilder::ok("(many)");
    for i in 0..10 {
        t = t.call(&format!("t{i}"), Value::Nil, None);
    }
    let s = summarize_with(vec![t], opts(15, 4));
    assert_eq!(s, "; Tool calls:\n;   t6()\n;   t7()\n;   t8()\n;   t9()");
}

#[test]
fn tc_003_tool_call_format_is_name_and_truncated_args() {
    let s = summarize(vec![
        TurnBuilder::ok("(send)").call(
            "send-email",
            v(json!({"body": "Please bring the signed documents to the meeting at 3pm", "to": "alice@example.com"})),
            None,
        ),
    ]);
    assert_eq!(
        s,
        "; Tool calls:\n;   send-email({:body \"Please bring the sig...\" :to \"alice@example.com\"})"
    );
}

#[test]
fn tc_004_tool_results_are_not_shown_in_the_tool_call_list() {
    let s = summarize(vec![TurnBuilder::ok("(tool/t)").call(
        "t",
        Value::Nil,
        Some(v(json!("SECRET RESULT TEXT"))),
    )]);
    assert_eq!(s, "; Tool calls:\n;   t() -> string");
}

#[test]
fn tc_005_tool_results_appear_in_defined_when_stored() {
    let s = summarize(vec![
        TurnBuilder::ok("(def r (tool/t))")
            .call("t", Value::Nil, Some(v(json!("the result"))))
            .def("r", v(json!("the result"))),
    ]);
    assert!(
        s.ends_with("; Defined: r = string, sample: \"the result\""),
        "{s}"
    );
}

#[test]
fn tc_006_result_type_shown_only_when_nothing_was_printed() {
    let call =
        || TurnBuilder::ok("(tool/t)").call("t", v(json!([1])), Some(v(json!({"a": [1, 2]}))));
    assert_eq!(summarize(vec![call()]), "; Tool calls:\n;   t(1) -> map[1]");
    assert_eq!(
        summarize(vec![call().print("x")]),
        "; Tool calls:\n;   t(1)\n; Output:\nx"
    );
    // No recorded result: no type.
    let s = summarize(vec![TurnBuilder::ok("(tool/t)").call(
        "t",
        Value::Nil,
        None,
    )]);
    assert_eq!(s, "; Tool calls:\n;   t()");
}

#[test]
fn tc_007_tool_call_limit_drops_oldest_first_across_turns() {
    let s = summarize_with(
        vec![
            TurnBuilder::ok("(a) (b)")
                .call("a", Value::Nil, None)
                .call("b", Value::Nil, None),
            TurnBuilder::ok("(c)").call("c", Value::Nil, None),
        ],
        opts(15, 2),
    );
    assert_eq!(s, "; Tool calls:\n;   b()\n;   c()");
}

#[test]
fn tc_008_consecutive_identical_calls_are_merged() {
    let alice = || v(json!({"to": "Alice", "urgent": true}));
    let alice_reordered = v(json!({"$map": [[{"$kw": "urgent"}, true], [{"$kw": "to"}, "Alice"]]}));
    let s = summarize(vec![
        TurnBuilder::ok("(calls)")
            .call("make-call", alice(), Some(v(json!(1))))
            .call("make-call", alice(), Some(v(json!(2))))
            .call("make-call", alice_reordered, Some(v(json!("busy"))))
            .call("other", Value::Nil, None)
            .call("make-call", alice(), None),
        TurnBuilder::ok("(more)")
            .call("other", Value::Nil, None)
            .call("other", Value::Nil, None),
    ]);
    assert_eq!(
        s,
        "; Tool calls:\n\
         ;   make-call({:to \"Alice\" :urgent true}) x3 -> string\n\
         ;   other()\n\
         ;   make-call({:to \"Alice\" :urgent true})\n\
         ;   other() x2"
    );
}

#[test]
fn tc_008_merging_happens_after_the_limit() {
    let mut t = TurnBuilder::ok("(poll)").call("start", Value::Nil, None);
    for _ in 0..5 {
        t = t.call("poll", v(json!(["job-1"])), None);
    }
    let s = summarize_with(vec![t], opts(15, 3));
    assert_eq!(s, "; Tool calls:\n;   poll(\"job-1\") x3");
}

#[test]
fn tc_008_different_args_are_not_merged() {
    let s = summarize(vec![
        TurnBuilder::ok("(calls)")
            .call("f", v(json!([1])), None)
            .call("f", v(json!([2])), None),
    ]);
    assert_eq!(s, "; Tool calls:\n;   f(1)\n;   f(2)");
}

// ---- MSG ---------------------------------------------------------------------------

#[test]
fn msg_001_successful_turns_accumulate_into_a_single_user_message() {
    let s = session(vec![
        TurnBuilder::ok("(a)").def("a", v(json!(1))),
        TurnBuilder::ok("(b)").def("b", v(json!(2))),
        TurnBuilder::ok("(c)").def("c", v(json!(3))),
    ]);
    let content = user_content(&s);
    for name in ["a", "b", "c"] {
        assert!(content.contains(&format!("; Defined: {name} = integer")));
    }
}

#[test]
fn msg_002_message_array_is_system_then_one_user() {
    let s = session(vec![
        TurnBuilder::ok("(a)"),
        TurnBuilder::failed("(b)", "bad"),
    ]);
    for k in 0..=2 {
        let msgs = render(&RenderRequest::for_call(&s, k).unwrap());
        let roles: Vec<_> = msgs.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user"], "call {k}");
    }
}

#[test]
fn msg_003_mission_text_appears_first() {
    let s = session(vec![
        TurnBuilder::failed("(b)", "bad"),
        TurnBuilder::ok("(a)"),
    ]);
    assert!(user_content(&s).starts_with(MISSION));
}

#[test]
fn msg_004_blank_line_separates_mission_from_context() {
    let s = session(vec![TurnBuilder::ok("(a)")]);
    assert_eq!(
        user_content(&s),
        format!("{MISSION}\n\n; No tool calls made\n\nTurns left: 29")
    );
}

#[test]
fn msg_005_turns_left_then_the_final_turn_warning() {
    let s = SessionBuilder::new(MISSION)
        .max_turns(3)
        .turn(TurnBuilder::ok("(a)"))
        .turn(TurnBuilder::ok("(b)"))
        .build();
    let call = |k| {
        render(&RenderRequest::for_call(&s, k).unwrap())[1]
            .content
            .clone()
    };
    assert!(call(1).ends_with("\n\nTurns left: 2"));
    assert!(
        call(2).ends_with(
            "\n\n⚠️ FINAL TURN - you must call (return result) or (fail response) next."
        )
    );
}

#[test]
fn msg_006_system_prompt_unchanged() {
    let system = "  You are an agent.\n\nRules; with ; semicolons\n";
    let s = SessionBuilder::new(MISSION)
        .system(system)
        .turn(TurnBuilder::ok("(a)"))
        .build();
    let msgs = render(&RenderRequest::for_call(&s, 1).unwrap());
    assert_eq!(msgs[0].content, system);
}

#[test]
fn msg_007_mission_is_never_removed() {
    let mut turns = Vec::new();
    for i in 0..29 {
        let mut t = if i % 4 == 3 {
            TurnBuilder::failed(&format!("(fail {i})"), "boom")
        } else {
            TurnBuilder::ok(&format!("(step {i})"))
        };
        for j in 0..10 {
            t = t.call("t", v(json!([i, j])), Some(v(json!("x".repeat(500)))));
        }
        turns.push(t.print(&"p".repeat(3000)));
    }
    let s = session(turns);
    for k in 0..=29 {
        let msgs = render(&RenderRequest::for_call(&s, k).unwrap());
        assert!(msgs[1].content.starts_with(MISSION), "call {k}");
    }
}

// ---- CMP ---------------------------------------------------------------------------

#[test]
fn cmp_001_successful_turns_are_compressed_to_a_summary() {
    let program = "(def xs (tool/fetch {:page 1}))\n(println (count xs))";
    let s = session(vec![
        TurnBuilder::ok(program)
            .call("fetch", v(json!({"page": 1})), Some(v(json!([1, 2]))))
            .def("xs", v(json!([1, 2])))
            .print("2"),
    ]);
    let content = user_content(&s);
    assert!(!content.contains(program));
    assert!(content.contains("; Defined: xs = list[2]"));
}

#[test]
fn cmp_002_failed_turn_code_is_kept_in_full() {
    let program =
        "(def top\n  (first\n    (sort-by :rating reviews)))\n;; a comment; with semicolons";
    let s = session(vec![TurnBuilder::failed(
        program,
        "sort-by: expected a collection",
    )]);
    assert!(user_content(&s).contains(&format!("```clojure\n{program}\n```")));
}

#[test]
fn cmp_003_failed_turns_keep_the_attempt_and_its_error_together() {
    let s = session(vec![TurnBuilder::failed(
        "(boom)",
        "Undefined symbol: boom",
    )]);
    assert_eq!(
        user_content(&s),
        format!(
            "{MISSION}\n\n---\nYour previous attempt:\n```clojure\n(boom)\n```\n\nError: Undefined symbol: boom\n---\n\nTurns left: 29"
        )
    );
}

#[test]
fn cmp_004_compression_happens_at_render_time() {
    // The same turn is summarized differently once a later turn prints: nothing about
    // it was fixed when it was recorded.
    let s = session(vec![
        TurnBuilder::ok("(def x 1)").def("x", v(json!(1))),
        TurnBuilder::ok("(println x)").print("1"),
    ]);
    let call = |k| {
        render(&RenderRequest::for_call(&s, k).unwrap())[1]
            .content
            .clone()
    };
    assert!(call(1).contains("; Defined: x = integer, sample: 1"));
    assert!(call(2).contains("; Defined: x = integer\n"));
    // A render only looks at the turns so far.
    let mut shorter = s.clone();
    shorter.turns.truncate(1);
    assert_eq!(
        call(1),
        render(&RenderRequest::for_call(&shorter, 1).unwrap())[1].content
    );
}

// ---- ERR ---------------------------------------------------------------------------

#[test]
fn err_001_failed_turns_are_not_compressed() {
    let s = session(vec![
        TurnBuilder::failed("(def y (tool/t)) (boom)", "boom")
            .call("t", Value::Nil, Some(v(json!(1))))
            .def("y", v(json!(1)))
            .print("partial output"),
    ]);
    let content = user_content(&s);
    // No summary is made from a failed turn: its calls, definitions and prints stay out.
    assert!(
        !content.contains("; Tool calls")
            && !content.contains("; Defined")
            && !content.contains("partial output")
    );
    assert!(content.contains("(def y (tool/t)) (boom)"));
}

#[test]
fn err_002_each_failed_turn_is_kept_in_order() {
    let s = session(vec![
        TurnBuilder::failed("(first-try)", "error one"),
        TurnBuilder::ok("(ok)"),
        TurnBuilder::failed("(second-try)", "error two"),
    ]);
    let content = user_content(&s);
    let one = content.find("(first-try)").unwrap();
    let two = content.find("(second-try)").unwrap();
    assert!(one < two);
    assert_eq!(content.matches("Your previous attempt:").count(), 2);
    assert!(content.contains("---\n\n---\nYour previous attempt:\n```clojure\n(second-try)"));
}

#[test]
fn err_003_error_message_follows_the_failed_attempt() {
    let s = SessionBuilder::new(MISSION)
        .turn(TurnBuilder::failed("(x)", "the message").reason("eval_error"))
        .build_validated()
        .unwrap();
    let content = user_content(&s);
    assert!(content.contains("```clojure\n(x)\n```\n\nError: the message\n---"));
    // An error recorded with only a reason shows the reason as its message.
    let json = json!({"id": "r", "mission": MISSION, "turns": [
        {"number": 1, "program": "(x)", "success": false, "error": {"reason": "timeout"}}
    ]});
    let s = Session::from_json(&json).unwrap();
    assert!(user_content(&s).contains("\n\nError: timeout\n---"));
}

// ---- SS ----------------------------------------------------------------------------

#[test]
fn ss_002_max_turns_defaults_to_5() {
    let json = json!({"id": "d", "mission": MISSION, "turns": [
        {"number": 1, "program": "(a)", "success": true}
    ]});
    let s = Session::from_json(&json).unwrap();
    assert_eq!(s.max_turns, 5);
    assert!(user_content(&s).ends_with("Turns left: 4"));
}

#[test]
fn ss_001_single_shot_renders_system_and_mission() {
    let s = SessionBuilder::new(MISSION)
        .max_turns(1)
        .system("sys")
        .build();
    let msgs = render_with(&RenderRequest::for_call(&s, 0).unwrap(), opts(1, 1));
    assert_eq!(
        msgs,
        recap_history::render(&RenderRequest::for_call(&s, 0).unwrap())
    );
}
