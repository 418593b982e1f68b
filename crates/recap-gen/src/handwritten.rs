//! The hand-authored bench corpus (`bench-data/handwritten.jsonl`), written with the
//! session builders so that every session reads like the run it stands for:
//! exploration with samples, println-heavy, tool-heavy with repeated calls, error
//! recovery, a long 30-turn run, single-shot (`max_turns: 1`), and one with recorded
//! feedback and provider token counts as importers produce them.
//!
//! Regenerate the file with
//! `cargo run -p recap-gen --example handwritten-corpus > bench-data/handwritten.jsonl`;
//! a test checks the committed file is this module's output.

use crate::builder::{SessionBuilder, TurnBuilder, closure, value};
use recap_core::{DefKind, FieldError, Session, Value};

use serde_json::json;

const SYSTEM: &str = "You are a PTC-Lisp agent. Each turn, write one program in a ```clojure block. \
Tools are called as (tool/name args); input data is under data/. \
Call (return result) when done or (fail reason) when the task is impossible.";

fn v(j: serde_json::Value) -> Value {
    value(j)
}

fn products() -> Value {
    v(json!([
        {"name": "Laptop", "price": 1200, "category": "Electronics", "rating": 4.5},
        {"name": "Mouse", "price": 25, "category": "Electronics", "rating": 3.2},
        {"name": "Keyboard", "price": 80, "category": "Electronics", "rating": 4.8},
        {"name": "Monitor", "price": 300, "category": "Electronics", "rating": 4.1},
        {"name": "Desk", "price": 450, "category": "Furniture", "rating": 4.0},
        {"name": "Chair", "price": 210, "category": "Furniture", "rating": 3.9}
    ]))
}

fn exploration() -> SessionBuilder {
    let reviews = "Customer Review Summary for Electronics: Laptop 4.5/5, Mouse 3.2/5, Keyboard 4.8/5, Monitor 4.1/5";
    let inventory = "Warehouse Inventory Report: Laptop - 23 units, Mouse - OUT OF STOCK, Keyboard - 4 units, Monitor - 0 units";
    SessionBuilder::new("Find well-reviewed products in stock")
        .id("explore-products")
        .system(SYSTEM)
        .max_turns(6)
        .tool("search-reviews", "(search-reviews {:category string}) -> string", "Review summaries per category")
        .tool("get-inventory", "(get-inventory) -> string", "The warehouse stock report")
        .data("products", products())
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("exploration with samples"))
        .turn(
            TurnBuilder::ok(
                "(def electronics (filter (fn [p] (= (:category p) \"Electronics\")) data/products))\n\
                 (def reviews (tool/search-reviews {:category \"Electronics\"}))\n\
                 (def inventory \"Warehouse stock; refreshed hourly\" (tool/get-inventory))",
            )
            .call("search-reviews", v(json!({"category": "Electronics"})), Some(v(json!(reviews))))
            .call("get-inventory", v(json!({})), Some(v(json!(inventory))))
            .def("electronics", v(json!([
                {"name": "Laptop", "price": 1200, "category": "Electronics", "rating": 4.5},
                {"name": "Mouse", "price": 25, "category": "Electronics", "rating": 3.2},
                {"name": "Keyboard", "price": 80, "category": "Electronics", "rating": 4.8},
                {"name": "Monitor", "price": 300, "category": "Electronics", "rating": 4.1}
            ])))
            .def("reviews", v(json!(reviews)))
            .def_doc("inventory", "Warehouse stock; refreshed hourly", v(json!(inventory))),
        )
        .turn(
            TurnBuilder::ok(
                "(defn in-stock?\n  \"True when the product has units;\n  uses inventory\"\n  [name]\n  (and (includes? inventory name) (not (includes? inventory (str name \" - OUT\")))))\n\
                 (def candidates (filter #(>= (:rating %) 4.0) electronics))",
            )
            .definition("in-stock?", DefKind::Defn, Some("True when the product has units;\n  uses inventory"), Some(closure(&["name"], None)))
            .def("candidates", v(json!([
                {"name": "Laptop", "price": 1200, "category": "Electronics", "rating": 4.5},
                {"name": "Keyboard", "price": 80, "category": "Electronics", "rating": 4.8},
                {"name": "Monitor", "price": 300, "category": "Electronics", "rating": 4.1}
            ]))),
        )
        .turn(
            TurnBuilder::ok("(def answer (mapv :name (filter #(in-stock? (:name %)) candidates)))")
                .def("answer", v(json!(["Laptop", "Keyboard", "Monitor"]))),
        )
        .turn(
            TurnBuilder::ok("(return {:products answer :checked (count candidates)})")
                .result(v(json!({"products": ["Laptop", "Keyboard", "Monitor"], "checked": 3}))),
        )
}

fn println_heavy() -> SessionBuilder {
    let mut b = SessionBuilder::new(
        "Which services logged the most errors yesterday? Print what you find as you go.",
    )
    .id("println-logs")
    .system(SYSTEM)
    .max_turns(8)
    .tool(
        "read-logs",
        "(read-logs {:service string :date string}) -> [string]",
        "Log lines of one service",
    )
    .tool(
        "list-services",
        "(list-services) -> [string]",
        "All service names",
    )
    .meta("source", json!("handwritten"))
    .meta("scenario", json!("println-heavy"));
    let services = [
        "auth",
        "billing",
        "search",
        "checkout",
        "email",
        "inventory",
    ];
    b = b.turn(
        TurnBuilder::ok(
            "(def services (tool/list-services))\n(doseq [s services] (println \"service:\" s))",
        )
        .call("list-services", Value::Nil, Some(v(json!(services))))
        .def("services", v(json!(services)))
        .prints(services.iter().map(|s| format!("service: {s}"))),
    );
    let counts = [41, 7, 0, 128, 3, 19];
    let mut t = TurnBuilder::ok(
        "(def errors (into {} (for [s services]\n  [s (count (filter #(includes? % \"ERROR\") (tool/read-logs {:service s :date \"2024-06-11\"})))])))\n\
         (doseq [[s n] errors] (println s \"errors:\" n))",
    );
    for (s, n) in services.iter().zip(counts) {
        let lines: Vec<String> = (0..3)
            .map(|i| {
                format!(
                    "2024-06-11T0{i}:12:03Z {} {s}: request {i} done",
                    if i == 0 && n > 0 { "ERROR" } else { "INFO" }
                )
            })
            .collect();
        t = t.call(
            "read-logs",
            v(json!({"service": s, "date": "2024-06-11"})),
            Some(v(json!(lines))),
        );
    }
    for (s, n) in services.iter().zip(counts) {
        t = t.print(&format!("{s} errors: {n}"));
    }
    let error_map: serde_json::Map<String, serde_json::Value> = services
        .iter()
        .zip(counts)
        .map(|(s, n)| (s.to_string(), json!(n)))
        .collect();
    t = t.def(
        "errors",
        v(json!({"$map": error_map.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>()})),
    );
    b = b.turn(t);
    let checkout_lines: Vec<String> = (0..24)
        .map(|i| {
            format!(
                "2024-06-11T{:02}:{:02}:17Z ERROR checkout: payment gateway timeout (attempt {})",
                i,
                (i * 7) % 60,
                i % 3 + 1
            )
        })
        .collect();
    b = b.turn(
        TurnBuilder::ok(
            "(def checkout-errors (filter #(includes? % \"ERROR\") (tool/read-logs {:service \"checkout\" :date \"2024-06-11\"})))\n\
             (doseq [line (take 24 checkout-errors)] (println line))",
        )
        .call("read-logs", v(json!({"service": "checkout", "date": "2024-06-11"})), Some(v(json!(checkout_lines))))
        .def("checkout-errors", v(json!(checkout_lines)))
        .prints(checkout_lines.clone()),
    );
    b = b.turn(
        TurnBuilder::ok("(println (str \"By hour:\\n\" (clojure.string/join \"\\n\" (map (fn [[h n]] (str h \": \" n)) (frequencies (map #(subs % 11 13) checkout-errors))))))")
            .print(&format!(
                "By hour:\n{}",
                (0..24).map(|h| format!("{h:02}: 1")).collect::<Vec<_>>().join("\n")
            )),
    );
    b.turn(
        TurnBuilder::ok(
            "(return {:top \"checkout\" :errors 128 :cause \"payment gateway timeout\"})",
        )
        .result(v(
            json!({"top": "checkout", "errors": 128, "cause": "payment gateway timeout"}),
        )),
    )
}

fn tool_heavy() -> SessionBuilder {
    let mut b = SessionBuilder::new(
        "Export all open orders to the warehouse system and wait until the export job finishes",
    )
    .id("tool-heavy-polling")
    .system(SYSTEM)
    .max_turns(6)
    .tool(
        "fetch-orders",
        "(fetch-orders {:status string :page int}) -> {:orders [...] :next int?}",
        "One page of orders",
    )
    .tool(
        "start-export",
        "(start-export {:order-ids [int]}) -> {:job string}",
        "Starts an export job",
    )
    .tool(
        "job-status",
        "(job-status job-id) -> {:state string :progress float}",
        "Status of a job",
    )
    .meta("source", json!("handwritten"))
    .meta("scenario", json!("tool-heavy with repeated calls"));
    let mut t = TurnBuilder::ok(
        "(def orders (loop [page 1 acc []]\n  (let [r (tool/fetch-orders {:status \"open\" :page page})]\n    (if (:next r) (recur (:next r) (into acc (:orders r))) (into acc (:orders r))))))",
    );
    let mut all = Vec::new();
    for page in 1..=8 {
        let orders: Vec<serde_json::Value> = (0..5)
            .map(|i| {
                let id = page * 100 + i;
                all.push(id);
                json!({"id": id, "customer": format!("C-{:04}", id * 7 % 1000), "total": (id % 97) as f64 + 0.99})
            })
            .collect();
        let next = if page < 8 {
            json!(page + 1)
        } else {
            json!(null)
        };
        t = t.call(
            "fetch-orders",
            v(json!({"status": "open", "page": page})),
            Some(v(json!({"orders": orders, "next": next}))),
        );
    }
    t = t.def(
        "orders",
        v(json!(
            all.iter().map(|id| json!({"id": id})).collect::<Vec<_>>()
        )),
    );
    b = b.turn(t);
    b = b.turn(
        TurnBuilder::ok("(def job (:job (tool/start-export {:order-ids (mapv :id orders)})))")
            .call(
                "start-export",
                v(json!({"order-ids": all})),
                Some(v(json!({"job": "exp-7731"}))),
            )
            .def("job", v(json!("exp-7731"))),
    );
    let mut t = TurnBuilder::ok(
        "(def final-status (loop [i 0]\n  (let [s (tool/job-status job)]\n    (if (or (= (:state s) \"done\") (> i 10)) s (recur (inc i))))))",
    );
    for i in 0..7 {
        let state = if i < 6 { "running" } else { "done" };
        t = t.call(
            "job-status",
            v(json!(["exp-7731"])),
            Some(v(
                json!({"state": state, "progress": ((i + 1) * 100 / 7) as f64 / 100.0}),
            )),
        );
    }
    t = t.def("final-status", v(json!({"state": "done", "progress": 1.0})));
    b = b.turn(t);
    let mut t = TurnBuilder::ok("(doseq [id (take 5 (map :id orders))] (tool/job-status job))");
    for _ in 0..5 {
        t = t.call(
            "job-status",
            v(json!(["exp-7731"])),
            Some(v(json!({"state": "done", "progress": 1.0}))),
        );
    }
    b = b.turn(t);
    b.turn(
        TurnBuilder::ok("(return {:job job :exported (count orders)})")
            .result(v(json!({"job": "exp-7731", "exported": 40}))),
    )
}

fn error_recovery() -> SessionBuilder {
    SessionBuilder::new("Compute the average rating per category and return a map {category avg}")
        .id("error-recovery")
        .system(SYSTEM)
        .max_turns(7)
        .data("products", products())
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("error recovery"))
        .turn(
            TurnBuilder::failed("(def by-cat (group-by :category products)", "Parse error: unexpected end of input, expected `)`")
                .reason("parse_error")
                .raw("I'll group the products by category first.\n\n```clojure\n(def by-cat (group-by :category products)\n```"),
        )
        .turn(
            TurnBuilder::ok("(def by-cat (group-by :category data/products))")
                .def("by-cat", v(json!({"$map": [
                    ["Electronics", [{"name": "Laptop"}, {"name": "Mouse"}, {"name": "Keyboard"}, {"name": "Monitor"}]],
                    ["Furniture", [{"name": "Desk"}, {"name": "Chair"}]]
                ]}))),
        )
        .turn(
            TurnBuilder::failed(
                "(def avgs (into {} (map (fn [[c ps]] [c (avg (map :rating ps))]) by-cat)))",
                "Undefined symbol: avg",
            )
            .reason("eval_error")
            .print("computing averages..."),
        )
        .turn(
            TurnBuilder::failed(
                "(defn avg [xs] (/ (reduce + xs) (count xs)))\n(def avgs (into {} (map (fn [[c ps]] [c (avg (map :ratings ps))]) by-cat)))",
                "reduce: + expects numbers, got nil (did you mean :rating?)",
            ),
        )
        .turn(
            TurnBuilder::ok(
                "(defn avg \"Mean of a non-empty seq; nil-safe\" [xs] (/ (reduce + xs) (count xs)))\n\
                 (def avgs (into {} (map (fn [[c ps]] [c (avg (map :rating ps))]) by-cat)))",
            )
            .defn("avg", Some("Mean of a non-empty seq; nil-safe"), &["xs"])
            .def("avgs", v(json!({"$map": [["Electronics", 4.15], ["Furniture", 3.95]]}))),
        )
        .turn(TurnBuilder::ok("(return avgs)").result(v(json!({"$map": [["Electronics", 4.15], ["Furniture", 3.95]]}))))
}

fn long_run() -> SessionBuilder {
    let mut b = SessionBuilder::new(
        "Audit the 2024 expense reports: find duplicates, out-of-policy items and the top spenders per department",
    )
    .id("long-30-turns")
    .system(SYSTEM)
    .max_turns(30)
    .tool("list-reports", "(list-reports {:year int :page int}) -> [map]", "Expense reports, 25 per page")
    .tool("get-report", "(get-report id) -> map", "One expense report with its items")
    .tool("policy", "(policy category) -> map", "The expense policy of a category")
    .meta("source", json!("handwritten"))
    .meta("scenario", json!("long run"));
    let departments = ["sales", "engineering", "support", "marketing", "finance"];
    for n in 1..=30u32 {
        let dept = departments[(n as usize) % departments.len()];
        let turn = match n % 6 {
            // Paging through reports with tool calls, storing each page.
            1 => {
                let page = n.div_ceil(6);
                let reports: Vec<serde_json::Value> = (0..25)
                    .map(|i| json!({"id": format!("R-{page}{i:02}"), "employee": format!("E{:03}", (i * 13 + page) % 200), "dept": departments[(i as usize) % 5], "total": ((i * 37 + page * 11) % 900) as f64 + 0.5}))
                    .collect();
                TurnBuilder::ok(&format!("(def page-{page} (tool/list-reports {{:year 2024 :page {page}}}))"))
                    .call("list-reports", v(json!({"year": 2024, "page": page})), Some(v(json!(reports.clone()))))
                    .def(&format!("page-{page}"), v(json!(reports)))
            }
            // Fetching details: repeated get-report calls.
            2 => {
                let mut t = TurnBuilder::ok(&format!("(def details-{n} (mapv tool/get-report (take 6 (map :id page-{}))))", n.div_ceil(6)));
                let mut details = Vec::new();
                for i in 0..6 {
                    let report = json!({"id": format!("R-{n}{i}"), "items": [{"category": "travel", "amount": 120 + i * 10}, {"category": "meals", "amount": 35 + i}]});
                    t = t.call("get-report", v(json!([format!("R-{n}{i}")])), Some(v(report.clone())));
                    details.push(report);
                }
                t.def(&format!("details-{n}"), v(json!(details)))
            }
            // Printing findings.
            3 => TurnBuilder::ok(&format!("(doseq [d (take 4 (dups details-{}))] (println \"duplicate:\" d))", n - 1))
                .prints((0..4).map(|i| format!("duplicate: R-{}{i} and R-{}{} ({dept}, same amount and date)", n - 1, n - 1, i + 1))),
            // A redefinition of the running tally.
            4 => TurnBuilder::ok(&format!("(def tally (merge-with + tally (spend-by-dept details-{})))", n - 2))
                .def("tally", v(json!({"sales": 1200 + n * 10, "engineering": 800 + n * 7, "support": 300 + n}))),
            // A helper function, then policy lookups.
            5 => TurnBuilder::ok(&format!("(defn over-policy? \"Amount above the category limit; see policy\" [item] (> (:amount item) (:limit (tool/policy (:category item)))))\n(def policy-{n} (tool/policy \"travel\"))"))
                .defn("over-policy?", Some("Amount above the category limit; see policy"), &["item"])
                .call("policy", v(json!(["travel"])), Some(v(json!({"limit": 150, "receipts": true}))))
                .def(&format!("policy-{n}"), v(json!({"limit": 150, "receipts": true}))),
            // Every sixth turn fails once.
            _ => TurnBuilder::failed(
                &format!("(def flagged (filter over-policy? (mapcat :items details-{})))", n - 4),
                &format!("over-policy?: tool/policy failed for category {dept:?}: rate limited, retry later"),
            )
            .reason("tool_error"),
        };
        b = b.turn(turn);
    }
    b
}

fn single_shot() -> SessionBuilder {
    SessionBuilder::new("What is the total price of all products in data/products?")
        .id("single-shot")
        .system(SYSTEM)
        .max_turns(1)
        .data("products", products())
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("single-shot"))
        .turn(
            TurnBuilder::ok("(return (reduce + (map :price data/products)))")
                .result(v(json!(2265))),
        )
}

fn recorded_feedback() -> SessionBuilder {
    SessionBuilder::new("Translate the three product titles to German; keep SKUs unchanged")
        .id("recorded-feedback")
        .system(SYSTEM)
        .max_turns(4)
        .tool("translate", "(translate {:text string :to string}) -> string", "Machine translation")
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("recorded feedback and usage, as importers produce"))
        .meta("model", json!("deepseek-v3.2"))
        .turn(
            TurnBuilder::ok("(def titles (map #(tool/translate {:text % :to \"de\"}) [\"Red chair SKU-1\" \"Blue desk SKU-2\" \"Lamp SKU-3\"]))")
                .call("translate", v(json!({"text": "Red chair SKU-1", "to": "de"})), Some(v(json!("Roter Stuhl SKU-1"))))
                .call("translate", v(json!({"text": "Blue desk SKU-2", "to": "de"})), Some(v(json!("Blauer Schreibtisch SKU-2"))))
                .call("translate", v(json!({"text": "Lamp SKU-3", "to": "de"})), Some(v(json!("Lampe SKU-3"))))
                .def("titles", v(json!(["Roter Stuhl SKU-1", "Blauer Schreibtisch SKU-2", "Lampe SKU-3"])))
                .feedback("Program executed. Defined: titles (list of 3).\n\nTurns left: 3")
                .usage(1834, 92),
        )
        .turn(
            TurnBuilder::failed("(return (zipmap skus titles))", "Undefined symbol: skus")
                .feedback("Error: Undefined symbol: skus\n\nTurns left: 2")
                .usage(1990, 21),
        )
        .turn(
            TurnBuilder::ok("(return titles)")
                .result(v(json!(["Roter Stuhl SKU-1", "Blauer Schreibtisch SKU-2", "Lampe SKU-3"])))
                .usage(2113, 12),
        )
}

/// The hand-authored sessions, validated like corpus lines.
pub fn sessions() -> Result<Vec<Session>, FieldError> {
    [
        exploration(),
        println_heavy(),
        tool_heavy(),
        error_recovery(),
        long_run(),
        single_shot(),
        recorded_feedback(),
    ]
    .into_iter()
    .map(SessionBuilder::build_validated)
    .collect()
}
