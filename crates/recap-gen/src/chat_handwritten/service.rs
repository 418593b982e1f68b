//! Customer-service dialogues: an agent calling tools between the replies of a
//! (simulated) user, as in airline and retail benchmarks.

use super::{schema, string_param};
use crate::chat::{ChatSessionBuilder, ChatTurnBuilder as T};
use serde_json::json;

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

pub(super) fn airline() -> ChatSessionBuilder {
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

pub(super) fn retail() -> ChatSessionBuilder {
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
