//! SPEC section 10, the binding worked example: exact bytes for all four built-ins.

use recap_core::{Message, Session};
use recap_gen::builder::{SessionBuilder, TurnBuilder, closure, value};
use serde_json::json;

const TURN1: &str = r#"(def electronics (filter (fn [p] (= (:category p) "Electronics")) data/products))
(def reviews (tool/search-reviews {:category "Electronics"}))
(def inventory "Warehouse stock; refreshed hourly" (tool/get-inventory))
(defn in-stock? "True when the product has units; uses inventory" [name] (includes? inventory name))"#;
const TURN2: &str = r#"(println "In stock:" (first (filter in-stock? ["Laptop" "Mouse"])))"#;
const TURN3: &str = "(def top (first (sort-by :rating reviews)))";
const REVIEWS: &str = "Customer Review Summary for Electronics: Laptop 4.5/5, Mouse 3.2/5, Keyboard 4.8/5, Monitor 4.1/5";
const INVENTORY: &str = "Warehouse Inventory Report: Laptop - 23 units, Mouse - OUT OF STOCK";
const ERROR: &str = "sort-by: expected a collection, got a string";

fn session() -> Session {
    SessionBuilder::new("Find well-reviewed products in stock")
        .system("You are a PTC-Lisp agent.")
        .max_turns(5)
        .turn(
            TurnBuilder::ok(TURN1)
                .call(
                    "search-reviews",
                    value(json!({"category": "Electronics"})),
                    Some(value(json!(REVIEWS))),
                )
                .call(
                    "get-inventory",
                    value(json!({})),
                    Some(value(json!(INVENTORY))),
                )
                .def(
                    "electronics",
                    value(json!([
                        {"name": "Laptop", "price": 1200, "category": "Electronics"},
                        {"name": "Mouse", "price": 25, "category": "Electronics"}
                    ])),
                )
                .def("reviews", value(json!(REVIEWS)))
                .def_doc(
                    "inventory",
                    "Warehouse stock; refreshed hourly",
                    value(json!(INVENTORY)),
                )
                .definition(
                    "in-stock?",
                    recap_core::DefKind::Defn,
                    Some("True when the product has units; uses inventory"),
                    Some(closure(&["name"], None)),
                ),
        )
        .turn(TurnBuilder::ok(TURN2).print("In stock: Laptop"))
        .turn(TurnBuilder::failed(TURN3, ERROR))
        .build_validated()
        .expect("the worked example is a valid session")
}

fn fenced(program: &str) -> String {
    format!("```clojure\n{program}\n```")
}

fn render(spec: &str, k: usize) -> Vec<Message> {
    let session = session();
    let strategy = recap_builtins::registry().build(spec).unwrap();
    recap_core::render_call(strategy.as_ref(), &session, k).unwrap()
}

const SUMMARY_1: &str = r#"; Tool calls:
;   search-reviews({:category "Electronics"}) -> string
;   get-inventory() -> string
; Function: in-stock? - "True when the product has units uses inventory"
; Defined: electronics = list[2], sample: [{:category "Electronics" :name "Laptop" ...} {:category "Electronics" :name "Mouse" ...}]
; Defined: reviews = string, sample: "Customer Review Summary for Electronics: Laptop 4.5/5, Mouse 3.2/5, Keyboard 4.8..."
; Defined: inventory - "Warehouse stock refreshed hourly" = string, sample: "Warehouse Inventory Report: Laptop - 23 units, Mouse - OUT OF STOCK""#;

const SUMMARY_3: &str = r#"; Tool calls:
;   search-reviews({:category "Electronics"})
;   get-inventory()
; Function: in-stock? - "True when the product has units uses inventory"
; Defined: electronics = list[2]
; Defined: reviews = string
; Defined: inventory - "Warehouse stock refreshed hourly" = string
; Output:
In stock: Laptop"#;

const FAILED_3: &str = "---
Your previous attempt:
```clojure
(def top (first (sort-by :rating reviews)))
```

Error: sort-by: expected a collection, got a string
---";

fn system() -> Message {
    Message::system("You are a PTC-Lisp agent.")
}

#[test]
fn single_user_coalesced_after_one_turn() {
    let expected = vec![
        system(),
        Message::user(format!(
            "Find well-reviewed products in stock\n\n{SUMMARY_1}\n\nTurns left: 4"
        )),
    ];
    assert_eq!(render("single-user-coalesced", 1), expected);
}

#[test]
fn single_user_coalesced_after_three_turns() {
    let expected = vec![
        system(),
        Message::user(format!(
            "Find well-reviewed products in stock\n\n{SUMMARY_3}\n\n{FAILED_3}\n\nTurns left: 2"
        )),
    ];
    assert_eq!(render("single-user-coalesced", 3), expected);
}

#[test]
fn per_turn_summary_after_three_turns() {
    let expected = vec![
        system(),
        Message::user("Find well-reviewed products in stock"),
        Message::assistant(SUMMARY_1),
        Message::user("Turns left: 4"),
        Message::assistant("; No tool calls made\n; Output:\nIn stock: Laptop"),
        Message::user("Turns left: 3"),
        Message::assistant(fenced(TURN3)),
        Message::user(format!("Error: {ERROR}\n\nTurns left: 2")),
    ];
    assert_eq!(render("per-turn-summary", 3), expected);
}

#[test]
fn full_history_after_three_turns() {
    let expected = vec![
        system(),
        Message::user("Find well-reviewed products in stock"),
        Message::assistant(fenced(TURN1)),
        Message::user("Turns left: 4"),
        Message::assistant(fenced(TURN2)),
        Message::user("In stock: Laptop\n\nTurns left: 3"),
        Message::assistant(fenced(TURN3)),
        Message::user(format!("Error: {ERROR}\n\nTurns left: 2")),
    ];
    assert_eq!(render("full-history", 3), expected);
}

#[test]
fn rolling_window_1_after_three_turns() {
    let expected = vec![
        system(),
        Message::user(format!(
            "Find well-reviewed products in stock\n\n{SUMMARY_3}"
        )),
        Message::assistant(fenced(TURN3)),
        Message::user(format!("Error: {ERROR}\n\nTurns left: 2")),
    ];
    assert_eq!(render("rolling-window:window=1", 3), expected);
}

#[test]
fn rolling_window_default_equals_full_history_within_the_window() {
    assert_eq!(render("rolling-window", 3), render("full-history", 3));
}

#[test]
fn every_strategy_renders_system_and_mission_at_call_zero() {
    for spec in recap_builtins::SPEC_BUILTINS {
        assert_eq!(
            render(spec, 0),
            vec![
                system(),
                Message::user("Find well-reviewed products in stock")
            ],
            "{spec}"
        );
    }
}
