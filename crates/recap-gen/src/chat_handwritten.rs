//! The hand-authored chat-form bench corpus (`bench-data/chat-handwritten.jsonl`), shaped
//! like real tool-calling runs: a customer-service dialogue with a simulated user
//! (airline and retail), a function-calling repair, a classic fenced-command run whose
//! observations are environment USER messages, an OpenHands-like run, parallel calls,
//! tool errors and recovery, a long run with long outputs, a Claude-Code-like run with
//! reasoning, a run that ended before its first response, and one with recorded usage.
//! All content is invented for recap.
//!
//! Regenerate the file with
//! `cargo run -p recap-gen --example chat-handwritten-corpus > bench-data/chat-handwritten.jsonl`;
//! a test checks the committed file is this module's output.

use crate::chat::{ChatSessionBuilder, ChatTurnBuilder as T};
use recap_core::{FieldError, Session};
use serde_json::{Map, Value as Json, json};
use std::fmt::Write as _;

fn schema(properties: Json, required: &[&str]) -> Json {
    json!({"type": "object", "properties": properties, "required": required})
}

fn string_param(description: &str) -> Json {
    json!({"type": "string", "description": description})
}

const AIRLINE_POLICY: &str = "# Airline agent policy\n\n\
The current time is 2024-05-15 15:00:00 EST.\n\n\
As an airline agent, you can help users book, modify, or cancel flight reservations.\n\n\
- Before taking any action that updates the booking database (booking, modifying flights, \
editing baggage, upgrading cabin class, or updating passenger information), you must list \
the action details and obtain explicit user confirmation (yes) to proceed.\n\
- You should only make one tool call at a time, and if you make a tool call, you should not \
respond to the user simultaneously.\n\
- Basic economy flights cannot be modified. Other reservations can be modified without \
changing the origin, destination, and trip type.\n\
- You should transfer the user to a human agent if and only if the request cannot be \
handled within the scope of your actions.";

fn airline() -> ChatSessionBuilder {
    ChatSessionBuilder::new("Hi there. I'd like to push my Seattle trip back by one day, please.")
        .id("airline-change-flight")
        .system(AIRLINE_POLICY)
        .tool(
            "get_user_details",
            "Get the details of a user, including their reservations.",
            schema(json!({"user_id": string_param("The user id, such as 'sara_doe_496'.")}), &["user_id"]),
        )
        .tool(
            "get_reservation_details",
            "Get the details of a reservation.",
            schema(json!({"reservation_id": string_param("The reservation id, such as '8JX2WO'.")}), &["reservation_id"]),
        )
        .tool(
            "search_direct_flight",
            "Search direct flights between two cities on a date.",
            schema(
                json!({
                    "origin": string_param("IATA code, such as 'JFK'."),
                    "destination": string_param("IATA code, such as 'SEA'."),
                    "date": string_param("The date, in the format 'YYYY-MM-DD'.")
                }),
                &["origin", "destination", "date"],
            ),
        )
        .tool(
            "update_reservation_flights",
            "Update the flights of a reservation.",
            schema(
                json!({
                    "reservation_id": string_param("The reservation id."),
                    "cabin": string_param("basic_economy, economy or business."),
                    "flights": {"type": "array", "items": {"type": "object"}, "description": "Every flight of the new itinerary, changed or not."},
                    "payment_id": string_param("The payment method for the fare difference.")
                }),
                &["reservation_id", "cabin", "flights", "payment_id"],
            ),
        )
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("airline customer service with a simulated user"))
        .meta("model", json!("gpt-4o"))
        .meta("reward", json!(1.0))
        .push(T::says("I can help with that. Could you please provide your user id?").user("Sure, it's olga_petrov_2231."))
        .push(
            T::silent()
                .call("call_q8Hn2vTzM1bWc0LxR5aYk7Ue", "get_user_details", r#"{"user_id": "olga_petrov_2231"}"#)
                .result(
                    "call_q8Hn2vTzM1bWc0LxR5aYk7Ue",
                    r#"{"user_id": "olga_petrov_2231", "name": {"first_name": "Olga", "last_name": "Petrov"}, "membership": "silver", "payment_methods": {"credit_card_7730114": {"source": "credit_card", "brand": "visa", "last_four": "0114"}, "gift_card_5512093": {"source": "gift_card", "amount": 62}}, "reservations": ["K3VQ8D", "TT04NM"]}"#,
                ),
        )
        .push(
            T::says("Thanks, Olga. I see two reservations on your profile, K3VQ8D and TT04NM. Which one is the Seattle trip?")
                .user("I think it's the first one? The flight leaves from JFK tomorrow."),
        )
        .push(
            T::silent()
                .call("call_5dKpW2nYc8QzA1sLm0VbTe6R", "get_reservation_details", r#"{"reservation_id": "K3VQ8D"}"#)
                .result(
                    "call_5dKpW2nYc8QzA1sLm0VbTe6R",
                    r#"{"reservation_id": "K3VQ8D", "origin": "JFK", "destination": "SEA", "flight_type": "one_way", "cabin": "economy", "flights": [{"flight_number": "HAT083", "date": "2024-05-16", "price": 187}], "passengers": [{"first_name": "Olga", "last_name": "Petrov", "dob": "1986-11-02"}], "payment_history": [{"payment_id": "credit_card_7730114", "amount": 187}], "insurance": "no"}"#,
                ),
        )
        .push(
            T::silent()
                .call("call_Yb7Lm2Qx9RkT4nVc1ZsHd0Pw", "search_direct_flight", r#"{"origin": "JFK", "destination": "SEA", "date": "2024-05-17"}"#)
                .result(
                    "call_Yb7Lm2Qx9RkT4nVc1ZsHd0Pw",
                    r#"[{"flight_number": "HAT083", "origin": "JFK", "destination": "SEA", "scheduled_departure_time_est": "07:10:00", "scheduled_arrival_time_est": "13:25:00", "status": "available", "available_seats": {"basic_economy": 4, "economy": 11, "business": 2}, "prices": {"basic_economy": 96, "economy": 203, "business": 640}}, {"flight_number": "HAT211", "origin": "JFK", "destination": "SEA", "scheduled_departure_time_est": "18:40:00", "scheduled_arrival_time_est": "00:55:00+1", "status": "available", "available_seats": {"basic_economy": 0, "economy": 3, "business": 5}, "prices": {"basic_economy": 88, "economy": 171, "business": 598}}]"#,
                ),
        )
        .push(
            T::says(
                "There are two direct economy flights from JFK to Seattle on May 17:\n\n\
                 1. HAT083, departs 07:10, arrives 13:25 — $203 (you pay $16 more)\n\
                 2. HAT211, departs 18:40, arrives 00:55 the next day — $171 (you get $16 back)\n\n\
                 Which one would you like? The difference would go to or from your Visa ending in 0114.",
            )
            .user("The morning one, same as my current flight. Yes, charge the visa."),
        )
        .push(
            T::says(
                "To confirm, I will change reservation K3VQ8D to:\n\
                 - HAT083 on 2024-05-17, economy\n\
                 - fare difference of $16 charged to credit_card_7730114\n\n\
                 Shall I proceed (yes/no)?",
            )
            .user("yes"),
        )
        .push(
            T::silent()
                .call(
                    "call_Nf3Jq7Xw0BtY5mKd2RgLc9Sv",
                    "update_reservation_flights",
                    r#"{"reservation_id": "K3VQ8D", "cabin": "economy", "flights": [{"flight_number": "HAT083", "date": "2024-05-17"}], "payment_id": "credit_card_7730114"}"#,
                )
                .result(
                    "call_Nf3Jq7Xw0BtY5mKd2RgLc9Sv",
                    r#"{"reservation_id": "K3VQ8D", "origin": "JFK", "destination": "SEA", "flight_type": "one_way", "cabin": "economy", "flights": [{"flight_number": "HAT083", "date": "2024-05-17", "price": 203}], "payment_history": [{"payment_id": "credit_card_7730114", "amount": 187}, {"payment_id": "credit_card_7730114", "amount": 16}]}"#,
                ),
        )
        .push(
            T::says("Done! You're now on HAT083 on May 17, departing JFK at 07:10. $16 was charged to your Visa ending in 0114. Anything else?")
                .user("Nope, that's everything. Thank you!\n###STOP###"),
        )
}

fn retail() -> ChatSessionBuilder {
    ChatSessionBuilder::new("hello, i want to return some stuff from my last order")
        .id("retail-return")
        .system("You are a retail customer-service agent. Authenticate the user by email, or by name and zip code, before anything else. Returns need the order to be delivered; refunds go to the original payment method or an existing gift card. Confirm every consequential action with the user (yes) first.")
        .tool(
            "find_user_id_by_email",
            "Find a user id by email.",
            schema(json!({"email": string_param("The email, such as 'something@example.com'.")}), &["email"]),
        )
        .tool(
            "get_order_details",
            "Get the status and details of an order.",
            schema(json!({"order_id": string_param("The order id, such as '#W0000000'; include the '#'.")}), &["order_id"]),
        )
        .tool(
            "return_delivered_order_items",
            "Return some items of a delivered order.",
            schema(
                json!({
                    "order_id": string_param("The order id."),
                    "item_ids": {"type": "array", "items": {"type": "string"}},
                    "payment_method_id": string_param("Where the refund goes.")
                }),
                &["order_id", "item_ids", "payment_method_id"],
            ),
        )
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("retail returns: a tool error, a wrong order, recovery"))
        .meta("model", json!("claude-3-5-sonnet"))
        .push(T::says("Happy to help with a return. First I need to verify your identity: what's the email on your account?").user("it's kwame.mensah@example.net"))
        .push(
            T::silent()
                .call("toolu_01Xb4mP7QaZ2RtV9cLw3KdYn", "find_user_id_by_email", r#"{"email":"kwame.mensah@example.net"}"#)
                .result("toolu_01Xb4mP7QaZ2RtV9cLw3KdYn", "kwame_mensah_8120"),
        )
        .push(T::says("Thanks, you're verified. Which order, and which items would you like to return?").user("order W5560217, the desk lamp and the two phone cases"))
        .push(
            T::silent()
                .call("toolu_01Hc8sN2PbW5YuE0fJm6TqLr", "get_order_details", r#"{"order_id":"W5560217"}"#)
                .error("toolu_01Hc8sN2PbW5YuE0fJm6TqLr", "Error: order not found"),
        )
        .push(
            T::says("Let me retry with the order id in the expected format.")
                .call("toolu_01Qe3vK9MdR1XaJ7nGz5HbWs", "get_order_details", r##"{"order_id":"#W5560217"}"##)
                .result(
                    "toolu_01Qe3vK9MdR1XaJ7nGz5HbWs",
                    "{\n  \"order_id\": \"#W5560217\",\n  \"status\": \"pending\",\n  \"items\": [\n    {\"item_id\": \"6017439182\", \"name\": \"Desk Lamp\", \"options\": {\"color\": \"white\", \"brightness\": \"high\"}, \"price\": 38.5},\n    {\"item_id\": \"2208813347\", \"name\": \"Phone Case\", \"options\": {\"model\": \"pixel 8\", \"color\": \"teal\"}, \"price\": 14.99},\n    {\"item_id\": \"2208813351\", \"name\": \"Phone Case\", \"options\": {\"model\": \"pixel 8\", \"color\": \"black\"}, \"price\": 14.99}\n  ],\n  \"payment_history\": [{\"transaction_type\": \"payment\", \"amount\": 68.48, \"payment_method_id\": \"paypal_3301947\"}]\n}\n",
                ),
        )
        .push(
            T::says("Order #W5560217 hasn't been delivered yet (it's still pending), so it can't be returned. Do you perhaps mean an earlier order that has arrived?")
                .user("oh wait. yes sorry, it's the one from march, #W1984402. just the lamp then"),
        )
        .push(
            T::silent()
                .call("toolu_01Ld6wT4RyA8ZkF2xCp9NmBv", "get_order_details", r##"{"order_id":"#W1984402"}"##)
                .result(
                    "toolu_01Ld6wT4RyA8ZkF2xCp9NmBv",
                    r##"{"order_id": "#W1984402", "status": "delivered", "items": [{"item_id": "6017439100", "name": "Desk Lamp", "options": {"color": "black", "brightness": "medium"}, "price": 41.0}], "payment_history": [{"transaction_type": "payment", "amount": 41.0, "payment_method_id": "gift_card_7719302"}]}"##,
                ),
        )
        .push(
            T::says("Found it. I can return the Desk Lamp (black, $41.00) from #W1984402 and refund $41.00 to gift card gift_card_7719302, which was used to pay. Shall I go ahead?")
                .user("yes please"),
        )
        .push(
            T::silent()
                .call(
                    "toolu_01Vn5cJ8WeS3GpD0bMq7KhXt",
                    "return_delivered_order_items",
                    r##"{"order_id":"#W1984402","item_ids":["6017439100"],"payment_method_id":"gift_card_7719302"}"##,
                )
                .result(
                    "toolu_01Vn5cJ8WeS3GpD0bMq7KhXt",
                    r##"{"order_id": "#W1984402", "status": "return requested", "return_items": ["6017439100"], "return_payment_method_id": "gift_card_7719302"}"##,
                ),
        )
        .push(
            T::says("The return is requested. You'll get an email with the shipping label; the $41.00 goes back to your gift card once we receive the lamp.")
                .user("great thx\n###STOP###"),
        )
}

const PARSER_PY: &str = "   38\t\n   39\tdef parse_header(line):\n   40\t    \"\"\"Split one `Name: value` header line.\"\"\"\n   41\t    name, _, rest = line.partition(\":\")\n   42\t    parts = rest.split()\n   43\t    headers[name.strip()] = parts[0]\n   44\t    return headers\n   45\t\n";

fn swe_function_calling() -> ChatSessionBuilder {
    ChatSessionBuilder::new(
        "<uploaded_files>\n/repo\n</uploaded_files>\nI've uploaded a python code repository in the directory /repo. Consider the following issue:\n\n\
         <issue>\nparse_header() crashes on a header with an empty value\n\n\
         ```python\n>>> from tinyhttp.headers import parse_header\n>>> parse_header(\"X-Trace:\")\nIndexError: list index out of range\n```\n\
         Expected: {\"X-Trace\": \"\"}\n</issue>\n\n\
         Can you help me implement the necessary changes to the repository so that the requirements specified in the issue are met?",
    )
    .id("swe-function-calling")
    .system("You are a helpful assistant that can interact with a computer to solve tasks.")
    .max_turns(50)
    .tool(
        "bash",
        "runs the given command directly in bash",
        schema(json!({"command": string_param("The bash command to execute.")}), &["command"]),
    )
    .tool(
        "str_replace_editor",
        "Custom editing tool for viewing, creating and editing files.",
        schema(
            json!({
                "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "undo_edit"]},
                "path": string_param("Absolute path to file or directory."),
                "old_str": string_param("Required for str_replace."),
                "new_str": string_param("Replacement for str_replace."),
                "view_range": {"type": "array", "items": {"type": "integer"}}
            }),
            &["command", "path"],
        ),
    )
    .tool("submit", "submits the current file", schema(json!({}), &[]))
    .meta("source", json!("handwritten"))
    .meta("scenario", json!("SWE-agent function-calling repair"))
    .meta("model", json!("gpt-4.1"))
    .meta("outcome", json!("submitted"))
    .push(
        T::says("Let me find the header parser.")
            .call("call_8mW2qLx0Tz4Rb7Nc1Yv5KsPd", "bash", r#"{"command":"grep -rn \"def parse_header\" /repo"}"#)
            .result("call_8mW2qLx0Tz4Rb7Nc1Yv5KsPd", "/repo/tinyhttp/headers.py:39:def parse_header(line):\n"),
    )
    .push(
        T::silent()
            .call("call_Rk5Vn9Qw2Hx7Lc0Bt3Zm8YsA", "str_replace_editor", r#"{"command":"view","path":"/repo/tinyhttp/headers.py","view_range":[38,45]}"#)
            .result("call_Rk5Vn9Qw2Hx7Lc0Bt3Zm8YsA", &format!("Here's the result of running `cat -n` on /repo/tinyhttp/headers.py:\n{PARSER_PY}")),
    )
    .push(
        T::says("`parts[0]` fails when nothing follows the colon. I'll reproduce it first.")
            .call(
                "call_Cw4Jt8Mb1Xq6Pn9Ld2Vr7KhZ",
                "bash",
                r#"{"command":"cd /repo && python -c 'from tinyhttp.headers import parse_header; print(parse_header(\"X-Trace:\"))'"}"#,
            )
            .error(
                "call_Cw4Jt8Mb1Xq6Pn9Ld2Vr7KhZ",
                "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n  File \"/repo/tinyhttp/headers.py\", line 43, in parse_header\n    headers[name.strip()] = parts[0]\n                            ~~~~~^^^\nIndexError: list index out of range\n",
            ),
    )
    .push(
        T::silent()
            .call(
                "call_Gs1Xd6Nq3Wb8Tk0Mz5Hv2RcL",
                "str_replace_editor",
                r#"{"command":"str_replace","path":"/repo/tinyhttp/headers.py","old_str":"    parts = rest.split()\n    headers[name.strip()] = parts[0]","new_str":"    headers[name.strip()] = rest.strip()"}"#,
            )
            .result(
                "call_Gs1Xd6Nq3Wb8Tk0Mz5Hv2RcL",
                "The file /repo/tinyhttp/headers.py has been edited. Here's the result of running `cat -n` on a snippet of /repo/tinyhttp/headers.py:\n    39\tdef parse_header(line):\n    40\t    \"\"\"Split one `Name: value` header line.\"\"\"\n    41\t    name, _, rest = line.partition(\":\")\n    42\t    headers[name.strip()] = rest.strip()\n    43\t    return headers\nReview the changes and make sure they are as expected. Edit the file again if necessary.",
            ),
    )
    .push(
        T::says("The old code also kept only the first word of a value with spaces; `rest.strip()` keeps it whole. Now the tests.")
            .call("call_Tn7Ke2Wq9Lz4Xb1Vm6Rc3HdS", "bash", r#"{"command":"cd /repo && python -m pytest -q tests/test_headers.py 2>&1 | tail -n 5"}"#)
            .result("call_Tn7Ke2Wq9Lz4Xb1Vm6Rc3HdS", "..........                                                               [100%]\n10 passed in 0.07s\n"),
    )
    .push(
        T::silent()
            .call("call_Pb3Wz8Rn5Mq0Kv7Xd2Lt9JcY", "submit", "{}")
            .result(
                "call_Pb3Wz8Rn5Mq0Kv7Xd2Lt9JcY",
                "diff --git a/tinyhttp/headers.py b/tinyhttp/headers.py\n--- a/tinyhttp/headers.py\n+++ b/tinyhttp/headers.py\n@@ -40,6 +40,5 @@ def parse_header(line):\n     name, _, rest = line.partition(\":\")\n-    parts = rest.split()\n-    headers[name.strip()] = parts[0]\n+    headers[name.strip()] = rest.strip()\n     return headers\n",
            ),
    )
}

const FOOTER: &str = "(Open file: /repo/src/units.py)\n(Current directory: /repo)\nbash-$";

fn swe_classic() -> ChatSessionBuilder {
    ChatSessionBuilder::new(
        "We're currently solving the following issue within our repository. Here's the issue text:\n\
         ISSUE:\nconvert(1, \"km\", \"mi\") returns 1.609 instead of 0.621\n\n\
         INSTRUCTIONS:\nNow, you're going to solve this issue on your own. Edit all the files you need to and run any checks or tests that you want. \
         When you're satisfied with all of the changes you've made, you can submit your changes to the code base by simply running the submit command.\n\
         (Open file: n/a)\n(Current directory: /repo)\nbash-$",
    )
    .id("swe-classic-fenced")
    .system(
        "SETTING: You are an autonomous programmer, and you're working directly in the command line with a special interface.\n\n\
         COMMANDS:\nopen <path> [<line_number>] - opens the file at the given path in the editor\n\
         goto <line_number> - moves the window to show <line_number>\n\
         edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit - replaces lines start_line through end_line\n\
         search_file <search_term> [<file>] - searches for search_term in file\n\
         submit - submits your current code and terminates the session\n\n\
         RESPONSE FORMAT:\nYour shell prompt is formatted as follows:\n(Open file: <path>) <cwd> $\n\n\
         You need to format your output using two fields; discussion and command.\n\
         Your output should always include _one_ discussion and _one_ command field EXACTLY as in the following example:\n\
         DISCUSSION\nFirst I'll start by using ls to see what files are in the current directory.\n```\nls -a\n```",
    )
    .max_turns(30)
    .meta("source", json!("handwritten"))
    .meta("scenario", json!("classic SWE-agent: fenced commands, environment output as user messages"))
    .meta("model", json!("gpt-4-0125-preview"))
    .push(
        T::says("DISCUSSION\nLet me reproduce the bug first.\n```\ncreate reproduce.py\n```")
            .env("[File: /repo/reproduce.py (1 lines total)]\n1:\n(Open file: /repo/reproduce.py)\n(Current directory: /repo)\nbash-$"),
    )
    .push(
        T::says("DISCUSSION\nNow the reproduction code.\n```\nedit 1:1\nfrom units import convert\nprint(convert(1, \"km\", \"mi\"))\nend_of_edit\n```")
            .env("[File: /repo/reproduce.py (2 lines total)]\n1:from units import convert\n2:print(convert(1, \"km\", \"mi\"))\nFile updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.\n(Open file: /repo/reproduce.py)\n(Current directory: /repo)\nbash-$"),
    )
    .push(
        T::says("DISCUSSION\n```\npython reproduce.py\n```")
            .env("1.609344\n(Open file: /repo/reproduce.py)\n(Current directory: /repo)\nbash-$"),
    )
    .push(
        T::says("DISCUSSION\nReproduced. Let's look at convert.\n```\nsearch_file \"def convert\" src/units.py\n```")
            .env("Found 1 matches for \"def convert\" in /repo/src/units.py:\nLine 18:def convert(value, src, dst):\nEnd of matches for \"def convert\" in /repo/src/units.py\n(Open file: /repo/reproduce.py)\n(Current directory: /repo)\nbash-$"),
    )
    .push(
        T::says("DISCUSSION\n```\nopen src/units.py 18\n```")
            .env(&format!(
                "[File: /repo/src/units.py (31 lines total)]\n(8 more lines above)\n9:FACTORS = {{\n10:    (\"km\", \"mi\"): 1.609344,\n11:    (\"mi\", \"km\"): 0.621371,\n12:    (\"kg\", \"lb\"): 2.204623,\n13:    (\"lb\", \"kg\"): 0.453592,\n14:}}\n15:\n16:\n17:\n18:def convert(value, src, dst):\n19:    \"\"\"Convert value from unit src to unit dst.\"\"\"\n20:    if src == dst:\n21:        return value\n22:    return value * FACTORS[(src, dst)]\n(9 more lines below)\n{FOOTER}"
            )),
    )
    .push(
        T::says("DISCUSSION\nThe two distance factors are swapped. Fixing lines 10-11.\n```\nedit 10:11\n    (\"km\", \"mi\"): 0.621371,\n    (\"mi\", \"km\"): 1.609344,\nedit_end\n```")
            .env(&format!("Error: the edit command needs `end_of_edit` on its own line.\n{FOOTER}"))
            .failed(),
    )
    .push(
        T::says("DISCUSSION\nI used the wrong terminator. Again:\n```\nedit 10:11\n    (\"km\", \"mi\"): 0.621371,\n    (\"mi\", \"km\"): 1.609344,\nend_of_edit\n```")
            .env(&format!("[File: /repo/src/units.py (31 lines total)]\n(8 more lines above)\n9:FACTORS = {{\n10:    (\"km\", \"mi\"): 0.621371,\n11:    (\"mi\", \"km\"): 1.609344,\n12:    (\"kg\", \"lb\"): 2.204623,\n(19 more lines below)\nFile updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.\n{FOOTER}")),
    )
    .push(
        T::says("DISCUSSION\n```\npython reproduce.py && rm reproduce.py\n```")
            .env(&format!("0.621371\n{FOOTER}")),
    )
    .push(
        T::says("DISCUSSION\nThe output is now correct and the script is removed.\n```\nsubmit\n```")
            .env("\ndiff --git a/src/units.py b/src/units.py\nindex 3b0c1e2..9f7a4d1 100644\n--- a/src/units.py\n+++ b/src/units.py\n@@ -7,8 +7,8 @@\n FACTORS = {\n-    (\"km\", \"mi\"): 1.609344,\n-    (\"mi\", \"km\"): 0.621371,\n+    (\"km\", \"mi\"): 0.621371,\n+    (\"mi\", \"km\"): 1.609344,\n"),
    )
}

fn openhands() -> ChatSessionBuilder {
    ChatSessionBuilder::new("Add a `--json` flag to `todo list` that prints the items as a JSON array. Keep the default output unchanged.")
        .id("openhands-run")
        .system("You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.\n<IMPORTANT>\n* If user provides a path, you should NOT assume it's relative to the current working directory.\n* When configuring git credentials, use \"openhands\" as the user.name.\n</IMPORTANT>")
        .tool(
            "execute_bash",
            "Execute a bash command in the terminal within a persistent shell session.",
            schema(
                json!({
                    "command": string_param("The bash command to execute."),
                    "is_input": {"type": "string", "enum": ["true", "false"]}
                }),
                &["command"],
            ),
        )
        .tool(
            "str_replace_editor",
            "Custom editing tool for viewing, creating and editing files in plain-text format.",
            schema(
                json!({
                    "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "undo_edit"]},
                    "path": string_param("Absolute path to file or directory, e.g. `/workspace/file.py`."),
                    "old_str": string_param("The string to replace."),
                    "new_str": string_param("The new string.")
                }),
                &["command", "path"],
            ),
        )
        .tool("think", "Log a thought; it changes nothing.", schema(json!({"thought": string_param("The thought.")}), &["thought"]))
        .tool("finish", "Finish the interaction.", schema(json!({"message": string_param("Final message to the user.")}), &["message"]))
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("OpenHands-style CodeAct run"))
        .meta("model", json!("claude-3-7-sonnet"))
        .push(
            T::says("I'll start by exploring the repository.")
                .call("toolu_01GvX7cN2qM9rT4wK8pL1zYb", "execute_bash", r#"{"command": "cd /workspace/todo && ls -R src | head -n 40"}"#)
                .result(
                    "toolu_01GvX7cN2qM9rT4wK8pL1zYb",
                    "src:\ntodo\n\nsrc/todo:\n__init__.py\ncli.py\nstore.py\n[The command completed with exit code 0.]\n[Current working directory: /workspace/todo]\n[Python interpreter: /usr/bin/python]\n[Command finished with exit code 0]",
                ),
        )
        .push(
            T::silent()
                .call("toolu_01Bw3kR8nV5xQ0sJ2mH7tLcD", "str_replace_editor", r#"{"command": "view", "path": "/workspace/todo/src/todo/cli.py"}"#)
                .result(
                    "toolu_01Bw3kR8nV5xQ0sJ2mH7tLcD",
                    "Here's the result of running `cat -n` on /workspace/todo/src/todo/cli.py:\n     1\timport argparse\n     2\t\n     3\tfrom .store import load_items\n     4\t\n     5\t\n     6\tdef cmd_list(args):\n     7\t    for i, item in enumerate(load_items(), 1):\n     8\t        mark = \"x\" if item.done else \" \"\n     9\t        print(f\"{i:>3}. [{mark}] {item.title}\")\n    10\t\n    11\t\n    12\tdef main(argv=None):\n    13\t    parser = argparse.ArgumentParser(prog=\"todo\")\n    14\t    sub = parser.add_subparsers(dest=\"cmd\", required=True)\n    15\t    p_list = sub.add_parser(\"list\")\n    16\t    p_list.set_defaults(func=cmd_list)\n    17\t    args = parser.parse_args(argv)\n    18\t    args.func(args)\n",
                ),
        )
        .push(
            T::silent()
                .call("toolu_01Ty6pF1cZ9wN4bX7qR2kM5s", "think", r#"{"thought": "Items have title and done. json.dumps a list of dicts in cmd_list when args.json; default path unchanged. ensure_ascii=False so titles with accents stay readable."}"#)
                .result("toolu_01Ty6pF1cZ9wN4bX7qR2kM5s", "Your thought has been logged."),
        )
        .push(
            T::silent()
                .call(
                    "toolu_01Mz4hQ9wB2vK7cT0xN5rJ8e",
                    "str_replace_editor",
                    r#"{"command": "str_replace", "path": "/workspace/todo/src/todo/cli.py", "old_str": "def cmd_list(args):\n    for i, item", "new_str": "def cmd_list(args):\n    if args.json:\n        items = [{\"title\": it.title, \"done\": it.done} for it in load_items()]\n        print(json.dumps(items, ensure_ascii=False))\n        return\n    for i, item"}"#,
                )
                .result("toolu_01Mz4hQ9wB2vK7cT0xN5rJ8e", "The file /workspace/todo/src/todo/cli.py has been edited. Review the changes and make sure they are as expected."),
        )
        .push(
            T::silent()
                .call(
                    "toolu_01Kp8sW3nD6xR1vB9mQ4tZ7c",
                    "str_replace_editor",
                    r#"{"command": "str_replace", "path": "/workspace/todo/src/todo/cli.py", "old_str": "import argparse\n", "new_str": "import argparse\nimport json\n"}"#,
                )
                .result("toolu_01Kp8sW3nD6xR1vB9mQ4tZ7c", "The file /workspace/todo/src/todo/cli.py has been edited. Review the changes and make sure they are as expected."),
        )
        .push(
            T::silent()
                .call(
                    "toolu_01Rc2xV7kM0pT5wN8bJ3qL6h",
                    "str_replace_editor",
                    r#"{"command": "str_replace", "path": "/workspace/todo/src/todo/cli.py", "old_str": "    p_list.set_defaults(func=cmd_list)", "new_str": "    p_list.add_argument(\"--json\", action=\"store_true\", help=\"print items as a JSON array\")\n    p_list.set_defaults(func=cmd_list)"}"#,
                )
                .result("toolu_01Rc2xV7kM0pT5wN8bJ3qL6h", "The file /workspace/todo/src/todo/cli.py has been edited. Review the changes and make sure they are as expected."),
        )
        .push(
            T::says("Let me try both outputs.")
                .call("toolu_01Dn9wK4tB7xM2cV5qR0pJ8s", "execute_bash", r#"{"command": "cd /workspace/todo && python -m todo list && python -m todo list --json"}"#)
                .result(
                    "toolu_01Dn9wK4tB7xM2cV5qR0pJ8s",
                    "  1. [x] Buy milk\n  2. [ ] Réserver le train\n  3. [ ] 買い物リストを書く\n[{\"title\": \"Buy milk\", \"done\": true}, {\"title\": \"Réserver le train\", \"done\": false}, {\"title\": \"買い物リストを書く\", \"done\": false}]\n[The command completed with exit code 0.]\n[Current working directory: /workspace/todo]\n[Python interpreter: /usr/bin/python]\n[Command finished with exit code 0]",
                ),
        )
        .push(
            T::says("Both outputs look right: the default listing is unchanged and --json prints an array.")
                .env("[auto-reply] Nobody is watching this run live. Keep working until the task is complete, then call `finish`."),
        )
        .push(
            T::silent()
                .call(
                    "toolu_01Wq5bN8xT1kV4mC7rJ0zP3d",
                    "str_replace_editor",
                    r#"{"command": "create", "path": "/workspace/todo/tests/test_cli_json.py", "file_text": "import json\n\nfrom todo.cli import main\n\n\ndef test_list_json(capsys, tmp_store):\n    main([\"list\", \"--json\"])\n    items = json.loads(capsys.readouterr().out)\n    assert items[0] == {\"title\": \"Buy milk\", \"done\": True}\n"}"#,
                )
                .result("toolu_01Wq5bN8xT1kV4mC7rJ0zP3d", "File created successfully at: /workspace/todo/tests/test_cli_json.py"),
        )
        .push(
            T::silent()
                .call("toolu_01Jx3mT6wB9kN2vR5cQ8pZ1f", "execute_bash", r#"{"command": "cd /workspace/todo && python -m pytest -q"}"#)
                .result(
                    "toolu_01Jx3mT6wB9kN2vR5cQ8pZ1f",
                    "......                                                                   [100%]\n6 passed in 0.21s\n[The command completed with exit code 0.]\n[Current working directory: /workspace/todo]\n[Python interpreter: /usr/bin/python]\n[Command finished with exit code 0]",
                ),
        )
        .push(
            T::silent()
                .call("toolu_01Hb7nW0xK3tV6mR9cJ2qP5g", "finish", r#"{"message": "Added `todo list --json` (JSON array of {title, done}, non-ASCII kept) and a test; the default output is unchanged. All 6 tests pass."}"#)
                .result("toolu_01Hb7nW0xK3tV6mR9cJ2qP5g", ""),
        )
}

fn parallel_calls() -> ChatSessionBuilder {
    ChatSessionBuilder::new("Which of these three cities had the warmest average July in 2023: Lisbon, Athens or Valletta? Give the averages and your sources.")
        .id("parallel-research")
        .system("You are a research assistant. Use web_search and fetch_page; cite every number you report. Prefer primary sources (national weather services).")
        .tool(
            "web_search",
            "Search the web. Returns up to 5 results with title, url and snippet.",
            schema(json!({"query": string_param("The search query.")}), &["query"]),
        )
        .tool(
            "fetch_page",
            "Fetch a page and return its main text.",
            schema(json!({"url": string_param("The URL.")}), &["url"]),
        )
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("parallel tool calls, results recorded out of order"))
        .meta("model", json!("gpt-4.1-mini"))
        .push(
            T::says("I'll search for all three cities at once.")
                .call("call_A1", "web_search", r#"{"query":"Lisbon July 2023 average temperature IPMA climate bulletin"}"#)
                .call("call_A2", "web_search", r#"{"query":"Athens July 2023 mean temperature HNMS monthly bulletin"}"#)
                .call("call_A3", "web_search", r#"{"query":"Valletta Malta July 2023 average temperature Met Office Malta"}"#)
                .result("call_A2", "1. HNMS — Monthly climate bulletin July 2023 — https://example.org/hnms/2023-07\n   \"…mean temperature at Athens (Elliniko) 30.4 °C, 2.1 °C above normal…\"\n2. Heatwave Kleon — news — https://example.org/news/kleon\n   \"…three consecutive heatwaves in July…\"\n")
                .result("call_A1", "1. IPMA — Boletim climatológico julho 2023 — https://example.org/ipma/2023-07\n   \"…temperatura média em Lisboa 24,6 °C…\"\n")
                .result("call_A3", "No results."),
        )
        .push(
            T::says("Valletta found nothing; I'll retry it with a different query and fetch the two bulletins meanwhile.")
                .call("call_B1", "fetch_page", r#"{"url":"https://example.org/ipma/2023-07"}"#)
                .call("call_B2", "fetch_page", r#"{"url":"https://example.org/hnms/2023-07"}"#)
                .call("call_B3", "web_search", r#"{"query":"Malta July 2023 mean air temperature Luqa"}"#)
                .call("call_B4", "web_search", r#"{"query":"Valletta July 2023 temperature record"}"#)
                .result("call_B1", "Boletim Climatológico Mensal — Julho 2023\r\n\r\nTemperatura do ar\r\nLisboa (Geofísico): média 24,6 °C; máxima média 29,8 °C; mínima média 19,4 °C.\r\nAnomalia da média: +1,3 °C em relação a 1981-2010.\r\n")
                .result("call_B2", "Monthly climate bulletin, July 2023\n\nAthens (Elliniko): mean 30.4 °C (normal 28.3 °C); absolute max 41.2 °C on 23 July.\nPrecipitation: 0.0 mm.\n\n")
                .result("call_B3", "1. Malta Meteorological Office — July 2023 summary — https://example.org/mt-met/2023-07\n   \"…mean air temperature at Luqa 29.1 °C, the warmest July on record…\"\n")
                .result("call_B4", "1. Times of Malta — https://example.org/tom/july-heat\n   \"…temperatures peaked at 42.3 °C…\"\n"),
        )
        .push(
            T::silent()
                .call("call_C1", "fetch_page", r#"{"url":"https://example.org/mt-met/2023-07"}"#)
                .result("call_C1", "July 2023 climate summary\n\nMean air temperature (Luqa): 29.1 °C — 2.6 °C above the 1991-2020 normal; warmest July since records began.\n"),
        )
        .push(T::says(
            "Athens was the warmest in July 2023:\n\n\
             | city | July 2023 mean | source |\n|---|---|---|\n\
             | Athens (Elliniko) | 30.4 °C | HNMS monthly bulletin |\n\
             | Valletta (Luqa) | 29.1 °C | Malta Meteorological Office |\n\
             | Lisbon (Geofísico) | 24.6 °C | IPMA boletim climatológico |",
        ))
}

fn tool_errors() -> ChatSessionBuilder {
    ChatSessionBuilder::new("Load sales_2024.csv into the reporting database and tell me the total revenue per region.")
        .id("tool-errors-recovery")
        .system("You are a data assistant with a SQL database and a file store. Always check a file's header before loading it.")
        .tool(
            "read_file",
            "Read a text file from the file store.",
            schema(json!({"path": string_param("Path in the store."), "max_lines": {"type": "integer"}}), &["path"]),
        )
        .tool(
            "run_sql",
            "Run one SQL statement; returns rows as CSV or an error.",
            schema(json!({"sql": string_param("The statement.")}), &["sql"]),
        )
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("malformed arguments, wrong paths, a timeout, SQL errors, and recovery"))
        .meta("model", json!("qwen3-coder"))
        .push(
            T::silent()
                .call("call_e1", "read_file", r#"{"path": "sales_2024.csv", "max_lines": 5"#)
                .error("call_e1", "Invalid JSON in arguments: EOF while parsing an object at line 1 column 40")
                .failed(),
        )
        .push(
            T::says("My arguments were cut off; trying again.")
                .call("call_e2", "read_file", r#"{"path": "sales_2024.csv", "max_lines": 5}"#)
                .error("call_e2", "Error: no such file: sales_2024.csv\nDid you mean: exports/sales_2024.csv, exports/sales_2023.csv"),
        )
        .push(
            T::silent()
                .call("call_e3", "read_file", r#"{"path": "exports/sales_2024.csv", "max_lines": 5}"#)
                .result("call_e3", "region;month;revenue_eur\r\nNord;2024-01;12 480,50\r\nSüd;2024-01;9 930,00\r\nOst;2024-01;4 117,25\r\nWest;2024-01;11 002,75\r\n"),
        )
        .push(
            T::says("Semicolon-separated, with decimal commas and spaces as thousands separators. I'll load it as text first.")
                .call("call_e4", "run_sql", r#"{"sql": "CREATE TABLE sales_raw (region TEXT, month TEXT, revenue_eur TEXT)"}"#)
                .call("call_e5", "run_sql", r#"{"sql": "COPY sales_raw FROM 'exports/sales_2024.csv' WITH (FORMAT csv, DELIMITER ';', HEADER true)"}"#)
                .result("call_e4", "CREATE TABLE")
                .error("call_e5", "Tool call timed out after 60 seconds"),
        )
        .push(
            T::silent()
                .call("call_e6", "run_sql", r#"{"sql": "SELECT count(*) FROM sales_raw"}"#)
                .result("call_e6", "count\n48\n"),
        )
        .push(
            T::says("The COPY finished despite the timeout (48 rows = 4 regions × 12 months). Now the totals.")
                .call("call_e7", "run_sql", r#"{"sql": "SELECT region, sum(revenue_eur::numeric) FROM sales_raw GROUP BY region"}"#)
                .error("call_e7", "ERROR:  invalid input syntax for type numeric: \"12 480,50\"\nLINE 1: SELECT region, sum(revenue_eur::numeric) FROM sales_raw GROUP BY region\n                           ^"),
        )
        .push(
            T::silent()
                .call(
                    "call_e8",
                    "run_sql",
                    r#"{"sql": "SELECT region, sum(replace(replace(revenue_eur, ' ', ''), ',', '.')::numeric) AS total FROM sales_raw GROUP BY region ORDER BY total DESC"}"#,
                )
                .result("call_e8", "region,total\nNord,151204.75\nWest,139877.10\nSüd,118650.00\nOst,50311.40\n"),
        )
        .push(T::says(
            "Total revenue per region in 2024 (EUR):\n\n- Nord: 151,204.75\n- West: 139,877.10\n- Süd: 118,650.00\n- Ost: 50,311.40\n\n\
             The file uses `;` and decimal commas, so I loaded it as text and converted when summing.",
        ))
}

/// One line of the nightly job's log, as the long run shows it.
fn log_line(day: u32, i: u32, failing: bool) -> String {
    let hour = (i * 7 / 60) % 24;
    let minute = (i * 7) % 60;
    let level = match i % 11 {
        0 => "WARN ",
        7 if failing => "ERROR",
        _ => "INFO ",
    };
    let what = match i % 6 {
        0 => format!("partition 2024-03-{day:02} shard {} loaded ({} rows)", i % 8, 1000 + i * 37),
        1 => "dedup: 0 duplicates".to_string(),
        2 => format!("checkpoint written to s3://etl-bucket/ckpt/{day:02}/{i:04}"),
        3 => "joined with dim_store (cache hit)".to_string(),
        4 if failing => "window start 2024-03-10 02:30 America/New_York: localize failed".to_string(),
        _ => format!("batch {i} committed in {} ms", 40 + (i * 13) % 200),
    };
    format!("2024-03-{day:02}T{hour:02}:{minute:02}:00Z {level} etl.load  {what}")
}

fn long_run() -> ChatSessionBuilder {
    let mut b = ChatSessionBuilder::new(
        "The nightly ETL job has failed every night since 2024-03-10. Find the cause, fix it, and re-run the missed nights (10 to 24 March).",
    )
    .id("long-run")
    .system("You are an on-call data engineer agent. You can run shell commands on the ETL host. Never delete data; re-runs must be idempotent.")
    .tool(
        "shell",
        "Run a shell command on the ETL host and return stdout and stderr.",
        schema(json!({"cmd": string_param("The command.")}), &["cmd"]),
    )
    .meta("source", json!("handwritten"))
    .meta("scenario", json!("long run: over 40 turns, long logs (LF and CRLF), repeated re-runs"))
    .meta("model", json!("gpt-4.1"));
    let mut n = 0u32;
    let mut shell = |b: ChatSessionBuilder, say: Option<&str>, cmd: &str, out: &str, error: bool| {
        n += 1;
        let id = format!("call_L{n:03}x{:08x}", n.wrapping_mul(2_654_435_761));
        let args = serde_json::to_string(&json!({"cmd": cmd})).unwrap_or_default();
        let turn = match say {
            Some(s) => T::says(s),
            None => T::silent(),
        }
        .call(&id, "shell", &args);
        let turn = if error {
            turn.error(&id, out)
        } else {
            turn.result(&id, out)
        };
        b.push(turn)
    };
    b = shell(b, Some("Let me see the failing runs."), "systemctl list-timers etl-nightly --all; journalctl -u etl-nightly --since 2024-03-09 | tail -n 20", &{
        let mut s = String::from("NEXT                        LEFT     LAST                        PASSED  UNIT              ACTIVATES\nMon 2024-03-25 01:00:00 UTC 9h left  Sun 2024-03-24 01:00:00 UTC 14h ago etl-nightly.timer etl-nightly.service\n\n");
        for d in 9..=24 {
            let status = if d < 10 { "Finished" } else { "Failed" };
            let _ = writeln!(s, "Mar {d:02} 01:00:00 etl-host systemd[1]: Started etl-nightly.service.");
            let _ = writeln!(s, "Mar {d:02} 01:{:02}:41 etl-host systemd[1]: etl-nightly.service: {status}.", 12 + d % 7);
        }
        s
    }, false);
    b = shell(b, None, "ls -la /opt/etl /opt/etl/logs | head -n 40", "/opt/etl:\ntotal 40\ndrwxr-xr-x 5 etl etl 4096 Mar  1 09:12 .\n-rw-r--r-- 1 etl etl 2211 Mar  1 09:12 config.yaml\n-rwxr-xr-x 1 etl etl 9873 Feb 28 17:40 etl.py\ndrwxr-xr-x 2 etl etl 4096 Mar 24 01:17 logs\ndrwxr-xr-x 2 etl etl 4096 Mar  1 09:12 sql\n\n/opt/etl/logs:\ntotal 2048\n-rw-r--r-- 1 etl etl  88120 Mar  9 01:14 2024-03-09.log\n-rw-r--r-- 1 etl etl  31002 Mar 10 01:13 2024-03-10.log\n-rw-r--r-- 1 etl etl  30877 Mar 11 01:14 2024-03-11.log\n", false);
    for day in [9u32, 10] {
        let mut log = String::new();
        for i in 0..120 {
            log.push_str(&log_line(day, i, day == 10));
            log.push('\n');
        }
        if day == 10 {
            log.push_str("Traceback (most recent call last):\n  File \"/opt/etl/etl.py\", line 212, in <module>\n    main()\n  File \"/opt/etl/etl.py\", line 188, in load_day\n    window = local_window(day, tz)\n  File \"/opt/etl/etl.py\", line 97, in local_window\n    start = tz.localize(datetime(day.year, day.month, day.day, 2, 30), is_dst=None)\npytz.exceptions.NonExistentTimeError: 2024-03-10 02:30:00\n");
        } else {
            log.push_str("2024-03-09T23:59:00Z INFO  etl.load  day complete: 31 522 rows\n");
        }
        b = shell(b, Some(&format!("Reading the log of March {day}.")), &format!("cat /opt/etl/logs/2024-03-{day:02}.log"), &log, false);
    }
    b = shell(b, Some("The job starts each day's window at 02:30 local time, which does not exist on the DST night."), "sed -n 85,110p /opt/etl/etl.py", "    85\tdef local_window(day, tz):\n    86\t    \"\"\"The day's load window in local time.\n    87\t\n    88\t    Starts at 02:30 so that late files from the 02:00 export are included.\n    89\t    \"\"\"\n    90\t    # TODO: the export moved to 01:00 in 2023; keep 02:30 for now\n    91\t    start = tz.localize(datetime(day.year, day.month, day.day, 2, 30), is_dst=None)\n    92\t    end = start + timedelta(days=1)\n    93\t    return start, end\n", false);
    b = shell(b, None, "grep -n \"timezone\" /opt/etl/config.yaml", "14:timezone: America/New_York   # stores report in local time\r\n", false);
    b = b.push(
        T::says("On 2024-03-10 clocks in America/New_York jump from 02:00 to 03:00, so 02:30 does not exist and `is_dst=None` raises. But why does every night after the 10th fail too?")
            .reasoning("The later nights shouldn't hit the DST gap. Maybe the job resumes from the failed day's checkpoint first. Check the 11th's log head.")
            .user("FYI: the job always resumes the oldest unfinished day first — that's by design."),
    );
    b = shell(b, Some("That explains it: each night retries March 10 first and fails there."), "head -n 5 /opt/etl/logs/2024-03-11.log", "2024-03-11T01:00:02Z INFO  etl.load  resuming unfinished day 2024-03-10\n2024-03-11T01:00:02Z INFO  etl.load  partition 2024-03-10 shard 0 loaded (1000 rows)\n", false);
    b = shell(b, Some("Fix: build the window with `is_dst=False` resolution via zoneinfo, which shifts a nonexistent time forward."), "cd /opt/etl && git diff", "diff --git a/etl.py b/etl.py\n--- a/etl.py\n+++ b/etl.py\n@@ -88,6 +88,7 @@ def local_window(day, tz):\n     \"\"\"\n-    start = tz.localize(datetime(day.year, day.month, day.day, 2, 30), is_dst=None)\n+    naive = datetime(day.year, day.month, day.day, 2, 30)\n+    start = tz.normalize(tz.localize(naive, is_dst=True))\n     end = start + timedelta(days=1)\n", false);
    b = shell(b, None, "cd /opt/etl && python -m pytest -q tests/test_window.py", "..F\n=================================== FAILURES ===================================\n___________________________ test_dst_gap_is_shifted ____________________________\n\n    def test_dst_gap_is_shifted():\n        start, _ = local_window(date(2024, 3, 10), NY)\n>       assert start.hour == 3\nE       AssertionError: assert 1 == 3\n\ntests/test_window.py:21: AssertionError\n1 failed, 2 passed in 0.18s\n", true);
    b = shell(b, Some("`is_dst=True` goes back to 01:30; a nonexistent time should move forward. Using `is_dst=False`."), "cd /opt/etl && sed -i 's/is_dst=True/is_dst=False/' etl.py && python -m pytest -q tests/test_window.py", "...\n3 passed in 0.16s\n", false);
    for day in 10u32..=24 {
        let mut log = String::new();
        for i in 0..(40 + day * 3) {
            log.push_str(&log_line(day, i, false));
            log.push_str("\r\n");
        }
        let _ = write!(log, "day 2024-03-{day:02} complete: {} rows\r\n", 30_000 + day * 211);
        let say = (day == 10).then_some("Re-running the missed nights one by one, oldest first.");
        b = shell(b, say, &format!("cd /opt/etl && ./etl.py --day 2024-03-{day:02} --idempotent"), &log, false);
    }
    b = shell(b, Some("All days loaded. Checking the row counts against the source export."), "psql -Atc \"SELECT day, count(*) FROM fact_sales WHERE day BETWEEN '2024-03-09' AND '2024-03-24' GROUP BY day ORDER BY day\"", &{
        let mut s = String::new();
        for d in 9..=24u32 {
            let _ = writeln!(s, "2024-03-{d:02}|{}", 30_000 + d * 211);
        }
        s
    }, false);
    b = shell(b, None, "psql -Atc \"SELECT count(*) FROM (SELECT id FROM fact_sales GROUP BY id HAVING count(*) > 1) d\"", "0\n", false);
    b = b.push(T::says("Should I also enable the timer's catch-up (`Persistent=true`) so a missed night runs at boot?").user("No, leave the timer alone. Just write up what happened."));
    for (i, path) in ["/opt/etl/etl.py", "/opt/etl/tests/test_window.py", "/opt/etl/config.yaml"].iter().enumerate() {
        let say = (i == 0).then_some("Recording the final state of the changed files.");
        b = shell(b, say, &format!("cd /opt/etl && git log -1 --format='%h %s' -- {path}"), &format!("{:07x} fix: shift nonexistent DST times forward in local_window\n", 0x3f1a2b0 + i as u32), false);
    }
    for check in ["df -h /var/lib/postgresql", "systemctl status etl-nightly.timer --no-pager", "tail -n 3 /opt/etl/logs/2024-03-24.log", "cat /opt/etl/VERSION", "date -u", "uptime", "id", "python --version", "pip show pytz | head -n 2", "echo done"] {
        b = shell(b, None, check, &format!("$ {check}\nok\n"), false);
    }
    b.push(T::says(
        "Cause: `local_window` built each day's window at 02:30 local time with `is_dst=None`; on 2024-03-10 that time does not exist in America/New_York (DST starts at 02:00), so the load raised `NonExistentTimeError`. Because the job always resumes the oldest unfinished day, every later night failed on March 10 too.\n\n\
         Fix: a nonexistent time now moves forward (`is_dst=False`), with a test for the DST gap.\n\n\
         Re-runs: 10–24 March loaded idempotently; row counts match the export and there are no duplicate ids.",
    ))
}

fn claude_code() -> ChatSessionBuilder {
    ChatSessionBuilder::new("the `stats` command prints NaN for empty groups, make it print 0 instead and update the snapshot tests")
        .id("claude-code-thinking")
        .system("You are an interactive CLI tool that helps users with software engineering tasks. Use the instructions below and the tools available to you to assist the user.\n\n# Tone and style\nYou should be concise, direct, and to the point.")
        .tool("Read", "Reads a file from the local filesystem.", schema(json!({"file_path": string_param("The absolute path to the file to read.")}), &["file_path"]))
        .tool("Grep", "A powerful search tool built on ripgrep.", schema(json!({"pattern": string_param("The regular expression pattern."), "path": string_param("File or directory to search in.")}), &["pattern"]))
        .tool("Edit", "Performs exact string replacements in files.", schema(json!({"file_path": string_param("The absolute path."), "old_string": string_param("The text to replace."), "new_string": string_param("The replacement.")}), &["file_path", "old_string", "new_string"]))
        .tool("Bash", "Executes a given bash command.", schema(json!({"command": string_param("The command to execute."), "description": string_param("What it does, in 5-10 words.")}), &["command"]))
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("Claude-Code-style run with thinking"))
        .meta("model", json!("claude-sonnet-4"))
        .push(
            T::silent()
                .reasoning("NaN for empty groups means a mean computed as sum/len with len 0 in floating point. Find the stats command.")
                .call("toolu_01Aq9Xv2Lm7Kp4Tn1Rb8Wc3Z", "Grep", r#"{"pattern":"fn (mean|average)","path":"/home/dev/tally/src"}"#)
                .call("toolu_01Bz6Nc3Qw8Jr5Vm2Xd9Kt4Y", "Grep", r#"{"pattern":"NaN","path":"/home/dev/tally/tests/snapshots"}"#)
                .result("toolu_01Aq9Xv2Lm7Kp4Tn1Rb8Wc3Z", "/home/dev/tally/src/stats.rs:41:fn mean(values: &[f64]) -> f64 {")
                .result("toolu_01Bz6Nc3Qw8Jr5Vm2Xd9Kt4Y", "/home/dev/tally/tests/snapshots/cli__stats_empty_group.snap:7:│ tea    │     0 │   NaN │\n/home/dev/tally/tests/snapshots/cli__stats_mixed.snap:12:│ other  │     0 │   NaN │"),
        )
        .push(
            T::silent()
                .reasoning("Read the function.")
                .call("toolu_01Cx4Mv7Ry1Kq8Wn5Tb2Lp9S", "Read", r#"{"file_path":"/home/dev/tally/src/stats.rs"}"#)
                .result(
                    "toolu_01Cx4Mv7Ry1Kq8Wn5Tb2Lp9S",
                    "    38\t/// The arithmetic mean.\r\n    39\t///\r\n    40\t/// Callers pass the values of one group.\r\n    41\tfn mean(values: &[f64]) -> f64 {\r\n    42\t    values.iter().sum::<f64>() / values.len() as f64\r\n    43\t}\r\n",
                ),
        )
        .push(
            T::says("The file uses CRLF line endings; I'll keep them.")
                .reasoning("Edit must match \\r\\n exactly. Old string: the division line only, which is unique.")
                .call(
                    "toolu_01Dw1Kv6Tn3Xq9Mb4Rc7Lz2P",
                    "Edit",
                    r#"{"file_path":"/home/dev/tally/src/stats.rs","old_string":"    values.iter().sum::<f64>() / values.len() as f64","new_string":"    if values.is_empty() {\r\n        return 0.0;\r\n    }\r\n    values.iter().sum::<f64>() / values.len() as f64"}"#,
                )
                .result("toolu_01Dw1Kv6Tn3Xq9Mb4Rc7Lz2P", "The file /home/dev/tally/src/stats.rs has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\r\n    41\tfn mean(values: &[f64]) -> f64 {\r\n    42\t    if values.is_empty() {\r\n    43\t        return 0.0;\r\n    44\t    }\r\n    45\t    values.iter().sum::<f64>() / values.len() as f64\r\n    46\t}"),
        )
        .push(
            T::silent()
                .reasoning("Now update snapshots. cargo insta test --accept would accept everything; safer to review: run tests first and look at the diff.")
                .call("toolu_01Ev8Lx3Wq6Kn1Tc9Mb5Rz4V", "Bash", r#"{"command":"cd /home/dev/tally && cargo insta test 2>&1 | tail -n 25","description":"Run snapshot tests"}"#)
                .result(
                    "toolu_01Ev8Lx3Wq6Kn1Tc9Mb5Rz4V",
                    "   Compiling tally v0.4.2 (/home/dev/tally)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 4.81s\n     Running tests/cli.rs (target/debug/deps/cli-5e1f0c2a7d9b3e44)\n\nrunning 9 tests\ntest stats_basic ... ok\ntest stats_empty_group ... FAILED\ntest stats_mixed ... FAILED\n\n━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━\nSnapshot: stats_empty_group\n-old snapshot\n+new results\n────────────┬───────────────────────────────────────\n    7     7 │ │ tea    │     0 │\n    7       │-  NaN │\n          7 │+    0 │\n────────────┴───────────────────────────────────────\ninfo: 2 snapshots to review\n",
                ),
        )
        .push(
            T::says("Only the two expected snapshots changed (NaN → 0). Accepting them.")
                .reasoning("The diff is exactly the intended change.")
                .call("toolu_01Fy2Mw9Kx5Tq8Lb3Rn6Vc1Z", "Bash", r#"{"command":"cd /home/dev/tally && cargo insta accept && cargo test -q 2>&1 | tail -n 3","description":"Accept snapshots and rerun tests"}"#)
                .result("toolu_01Fy2Mw9Kx5Tq8Lb3Rn6Vc1Z", "info: accepted 2 snapshots\n\nrunning 9 tests\n.........\ntest result: ok. 9 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.41s\n\n"),
        )
        .push(
            T::says("Done: `mean` returns 0 for an empty group (src/stats.rs:41), and the two snapshots (`stats_empty_group`, `stats_mixed`) now show 0. All 9 tests pass.")
                .reasoning("Summarise in two lines.")
                .user("nice, thanks"),
        )
}

fn zero_turns() -> ChatSessionBuilder {
    // Recorded with its budget: a chat line without turns is read as the PTC-Lisp form,
    // where `max_turns: null` would mean the default of 5, a budget this run never had.
    ChatSessionBuilder::new("Rename the `utils` package to `helpers` and update every import.")
        .id("zero-turns")
        .system("You are a software engineering agent working in /repo.")
        .max_turns(40)
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("the run ended before the first response (provider overloaded)"))
        .meta("outcome", json!("error: 529 overloaded before the first response"))
}

fn usage_recorded() -> ChatSessionBuilder {
    let anthropic = |input: u64, cache_read: u64, output: u64| {
        let mut u = Map::new();
        u.insert("input_tokens".into(), Json::from(input));
        u.insert("cache_read_input_tokens".into(), Json::from(cache_read));
        u.insert("output_tokens".into(), Json::from(output));
        u
    };
    ChatSessionBuilder::new("What's the disk usage of each directory under /srv, largest first? Flag anything over 50 GB.")
        .id("usage-recorded")
        .system("You are a sysadmin assistant with shell access. Read-only commands only.")
        .tool("shell", "Run a read-only shell command.", schema(json!({"cmd": string_param("The command.")}), &["cmd"]))
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("provider usage recorded on every turn"))
        .meta("model", json!("claude-3-5-haiku"))
        .push(
            T::silent()
                .call("toolu_01Uq3Wx8Kn5Lm2Tb7Rc9Vz4D", "shell", r#"{"cmd":"du -sh /srv/* 2>/dev/null | sort -rh"}"#)
                .result("toolu_01Uq3Wx8Kn5Lm2Tb7Rc9Vz4D", "73G\t/srv/backups\n21G\t/srv/media\n4.2G\t/srv/git\n812M\t/srv/www\n16K\t/srv/lost+found\n")
                .usage_object(anthropic(412, 0, 38)),
        )
        .push(
            T::says("/srv/backups is over 50 GB; let me see what's in it.")
                .call("toolu_01Vr4Xy9Lo6Mn3Uc8Sd0Wa5E", "shell", r#"{"cmd":"du -sh /srv/backups/* | sort -rh | head -n 5"}"#)
                .result("toolu_01Vr4Xy9Lo6Mn3Uc8Sd0Wa5E", "61G\t/srv/backups/db-2023\n9.8G\t/srv/backups/db-2024\n2.1G\t/srv/backups/configs\n")
                .usage_object(anthropic(96, 412, 52)),
        )
        .push(
            T::says(
                "Largest first:\n\n| dir | size |\n|---|---|\n| /srv/backups | 73G ⚠️ over 50 GB (61G of it is db-2023) |\n| /srv/media | 21G |\n| /srv/git | 4.2G |\n| /srv/www | 812M |\n| /srv/lost+found | 16K |",
            )
            .usage_object(anthropic(118, 508, 97)),
        )
}

fn plain_usage_dialogue() -> ChatSessionBuilder {
    ChatSessionBuilder::new("Traduis ce message pour mon propriétaire en anglais, ton poli : « Le chauffe-eau fuit depuis hier soir, pouvez-vous envoyer quelqu'un ? »")
        .id("plain-dialogue")
        .system("You are a helpful translator.")
        .max_turns(10)
        .meta("source", json!("handwritten"))
        .meta("scenario", json!("no tools: a plain dialogue with user replies and OpenAI usage"))
        .meta("model", json!("gpt-4o-mini"))
        .push(
            T::says("\"Hello, the water heater has been leaking since last night. Could you please send someone to take a look?\"")
                .user("un peu plus formel stp, et ajoute que je suis là toute la journée demain")
                .usage(61, 27),
        )
        .push(
            T::says("\"Dear Mr. Alvarez,\n\nI am writing to let you know that the water heater has been leaking since yesterday evening. Would it be possible to send someone to repair it? I will be at home all day tomorrow.\n\nKind regards,\"")
                .user("parfait merci")
                .usage(131, 58),
        )
        .push(T::says("Avec plaisir ! N'oubliez pas d'ajouter votre nom et votre numéro d'appartement à la fin.").usage(206, 23))
}

/// The hand-authored chat sessions, validated like corpus lines.
pub fn sessions() -> Result<Vec<Session>, FieldError> {
    [
        airline(),
        retail(),
        swe_function_calling(),
        swe_classic(),
        openhands(),
        parallel_calls(),
        tool_errors(),
        long_run(),
        claude_code(),
        zero_turns(),
        usage_recorded(),
        plain_usage_dialogue(),
    ]
    .into_iter()
    .map(ChatSessionBuilder::build_validated)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_session_validates_and_ids_are_unique() {
        let sessions = sessions().unwrap();
        assert!(sessions.len() >= 10);
        let mut ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), sessions.len());
    }
}
