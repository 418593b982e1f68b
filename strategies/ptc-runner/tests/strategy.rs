//! The `ptc-runner` strategy on the worked example of SPEC section 10 (with tools and
//! data added so that every section shows), checked byte for byte.

use recap_core::{Message, RenderRequest, Role, Session, Strategy, StrategySpec};
use recap_ptc_runner::{PtcRunner, build};
use serde_json::json;

fn session() -> Session {
    Session::from_json(&json!({
        "id": "worked-example",
        "system_prompt": "You are a PTC-Lisp agent.",
        "mission": "Find well-reviewed products in stock",
        "max_turns": 5,
        "tools": {
            "search-reviews": {"signature": "(category :string) -> :string", "description": "Search product reviews"},
            "get-inventory": {"signature": "-> :string"}
        },
        "data": {"products": [{"name": "Laptop", "price": 1200, "category": "Electronics"}]},
        "turns": [
            {
                "number": 1, "success": true,
                "program": "(def electronics (filter (fn [p] (= (:category p) \"Electronics\")) data/products))",
                "tool_calls": [
                    {"name": "search-reviews", "args": {"category": "Electronics"},
                     "result": "Customer Review Summary for Electronics: Laptop 4.5/5, Mouse 3.2/5, Keyboard 4.8/5, Monitor 4.1/5"},
                    {"name": "get-inventory", "args": {},
                     "result": "Warehouse Inventory Report: Laptop - 23 units, Mouse - OUT OF STOCK"}
                ],
                "definitions": [
                    {"name": "electronics", "kind": "def", "value": [
                        {"name": "Laptop", "price": 1200, "category": "Electronics"},
                        {"name": "Mouse", "price": 25, "category": "Electronics"}]},
                    {"name": "reviews", "kind": "def",
                     "value": "Customer Review Summary for Electronics: Laptop 4.5/5, Mouse 3.2/5, Keyboard 4.8/5, Monitor 4.1/5"},
                    {"name": "inventory", "kind": "def", "docstring": "Warehouse stock; refreshed hourly",
                     "value": "Warehouse Inventory Report: Laptop - 23 units, Mouse - OUT OF STOCK"},
                    {"name": "in-stock?", "kind": "defn", "docstring": "True when the product has units; uses inventory",
                     "value": {"$fn": {"params": ["name"]}}}
                ]
            },
            {"number": 2, "success": true, "program": "(println \"In stock:\" \"Laptop\")", "prints": ["In stock: Laptop"]},
            {"number": 3, "success": false, "program": "(def top (first (sort-by :rating reviews)))",
             "error": {"message": "sort-by: expected a collection, got a string"}}
        ]
    }))
    .expect("the worked example is a valid session")
}

const NAMESPACES: &str = "\
;; === tools ===
tool/get-inventory() -> string
tool/search-reviews(category string) -> string  ; Search product reviews
;; Example: (tool/search-reviews {:category ...})

;; === data/ ===
data/products                 ; list[1], sample: [{:category \"Electronics\" :name \"Laptop\" ...}]

;; === user/ (your prelude) ===
(in-stock? [name])            ; \"True when the product has units; uses inventory\"
electronics                   ; = list[2], sample: [{:category \"Electronics\" :name \"Laptop\" ...} {:category \"Electronics\" :name \"Mouse\" ...}]
inventory                     ; = string, sample: \"Warehouse Inventory Report: Laptop - 23 units, Mouse - OUT OF STOCK\"
reviews                       ; = string, sample: \"Customer Review Summary for Electronics: Laptop 4.5/5, Mouse 3.2/5, Keyboard 4.8...\"

;; Tool calls made:
;   search-reviews({:category \"Electronics\"})
;   get-inventory({})";

fn render(s: &Session, k: usize, strategy: &PtcRunner) -> Vec<Message> {
    recap_core::render_call(strategy, s, k).unwrap()
}

#[test]
fn zero_turns_is_system_and_mission() {
    let s = session();
    assert_eq!(
        render(&s, 0, &PtcRunner::default()),
        vec![
            Message::system("You are a PTC-Lisp agent."),
            Message::user("Find well-reviewed products in stock")
        ]
    );
}

#[test]
fn after_one_turn() {
    let s = session();
    let msgs = render(&s, 1, &PtcRunner::default());
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0], Message::system("You are a PTC-Lisp agent."));
    assert_eq!(msgs[1].role, Role::User);
    assert_eq!(
        msgs[1].content,
        format!("Find well-reviewed products in stock\n\n{NAMESPACES}\n\nTurns left: 3")
    );
}

#[test]
fn after_a_failed_third_turn_only_its_error_shows() {
    let s = session();
    let msgs = render(&s, 3, &PtcRunner::default());
    // Turn 2's print is not shown: there is no tool named println.
    assert_eq!(
        msgs[1].content,
        format!(
            "Find well-reviewed products in stock\n\n{NAMESPACES}\n\n---\nYour previous attempt:\n\
             ```clojure\n(def top (first (sort-by :rating reviews)))\n```\n\n\
             Error: sort-by: expected a collection, got a string\n---\n\nTurns left: 1"
        )
    );
}

#[test]
fn last_call_says_final_work_turn() {
    let mut s = session();
    s.max_turns = 4;
    let msgs = render(&s, 3, &PtcRunner::default());
    assert!(
        msgs[1]
            .content
            .ends_with("---\n\nFINAL WORK TURN - tools stripped, you must call (return result) or (fail reason) now."),
        "{}",
        msgs[1].content
    );
}

#[test]
fn a_println_tool_switches_samples_off_and_output_on() {
    let mut s = session();
    s.tools.insert(
        "println".into(),
        recap_core::ToolSpec {
            signature: Some("(msg :string) -> :nil".into()),
            description: None,
            parameters: None,
        },
    );
    let content = &render(&s, 2, &PtcRunner::default())[1].content;
    assert!(content.contains("\ntool/println() -> any\n"), "{content}");
    assert!(
        content.contains("\nreviews                       ; = string\n"),
        "{content}"
    );
    assert!(
        content.contains("\n\n;; Output:\nIn stock: Laptop\n\nTurns left: 2"),
        "{content}"
    );
}

#[test]
fn options_limit_calls_and_samples() {
    let spec = StrategySpec::parse("ptc-runner:tool_call_limit=1,sample_limit=1").unwrap();
    let strategy = PtcRunner::from_spec(&spec).unwrap();
    assert_eq!(
        strategy.spec(),
        "ptc-runner:sample_limit=1,tool_call_limit=1"
    );
    let content = &render(&session(), 1, &strategy)[1].content;
    assert!(
        content.contains(";; Tool calls made:\n;   get-inventory({})\n\n"),
        "{content}"
    );
    assert!(
        content.contains(
            "= list[2], sample: [{:category \"Electronics\" ...} ...] (2 items, showing first 1)"
        ),
        "{content}"
    );
    assert_eq!(PtcRunner::default().spec(), "ptc-runner");
}

#[test]
fn bad_options_are_clear_errors() {
    for (spec, needle) in [
        ("ptc-runner:window=2", "has no option \"window\""),
        ("ptc-runner:println_limit=0", "expected an integer ≥ 1"),
        ("ptc-runner:sample_limit=x", "expected an integer ≥ 1"),
    ] {
        let err = build(&StrategySpec::parse(spec).unwrap())
            .err()
            .expect(spec);
        assert!(err.to_string().contains(needle), "{spec}: {err}");
    }
}

#[test]
fn stats_count_successful_turns_only() {
    let s = session();
    let (_, stats) =
        PtcRunner::default().render_with_stats(&RenderRequest::for_call(&s, 3).unwrap());
    assert_eq!(stats.turns_compressed, 3);
    assert_eq!(stats.tool_calls_total, 2);
    assert_eq!(stats.printlns_total, 1);
    assert_eq!(stats.error_turns_collapsed, 0);
}
