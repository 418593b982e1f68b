//! The wire format ignores fields it does not know (a newer host may add some), while
//! recap-core's corpus decoders reject them (a typo in a corpus must not pass silently).
//! Before a request's session or turns reach those decoders, the fields recap-core
//! does not know are dropped here. Values (`data`, results, definitions' values) are
//! left alone: their encoding has its own rules.

use recap_core::chat::{CHAT_TURN_FIELDS, PTC_TURN_FIELDS};
use recap_core::session::SESSION_FIELDS;
use serde_json::{Map, Value as Json};

const TOOL_FIELDS: [&str; 3] = ["signature", "description", "parameters"];
const ERROR_FIELDS: [&str; 2] = ["message", "reason"];
const PTC_CALL_FIELDS: [&str; 3] = ["name", "args", "result"];
const DEFINITION_FIELDS: [&str; 4] = ["name", "kind", "docstring", "value"];
const ASSISTANT_FIELDS: [&str; 3] = ["content", "tool_calls", "reasoning"];
const CHAT_CALL_FIELDS: [&str; 3] = ["id", "name", "arguments"];
const TOOL_OBSERVATION_FIELDS: [&str; 5] = ["role", "tool_call_id", "name", "content", "is_error"];
const USER_OBSERVATION_FIELDS: [&str; 3] = ["role", "content", "environment"];

fn retain(obj: &mut Map<String, Json>, known: &[&str]) {
    obj.retain(|k, _| known.contains(&k.as_str()));
}

/// Applies `f` to every object of the array at `obj[key]`, when there is one.
fn each_object(obj: &mut Map<String, Json>, key: &str, mut f: impl FnMut(&mut Map<String, Json>)) {
    if let Some(Json::Array(items)) = obj.get_mut(key) {
        for item in items {
            if let Json::Object(o) = item {
                f(o);
            }
        }
    }
}

/// A request object, reduced to the session fields recap-core knows (turns included).
pub(crate) fn session(obj: &mut Map<String, Json>) {
    retain(obj, &SESSION_FIELDS);
    if let Some(Json::Object(tools)) = obj.get_mut("tools") {
        for spec in tools.values_mut() {
            if let Json::Object(spec) = spec {
                retain(spec, &TOOL_FIELDS);
            }
        }
    }
    if let Some(Json::Array(turns)) = obj.get_mut("turns") {
        turns.iter_mut().for_each(turn);
    }
}

/// One turn of either form, reduced to the fields recap-core knows.
pub(crate) fn turn(turn: &mut Json) {
    let Json::Object(obj) = turn else {
        return;
    };
    if obj.contains_key("assistant") {
        chat_turn(obj);
    } else {
        ptc_turn(obj);
    }
}

fn ptc_turn(obj: &mut Map<String, Json>) {
    retain(obj, &PTC_TURN_FIELDS);
    if let Some(Json::Object(error)) = obj.get_mut("error") {
        retain(error, &ERROR_FIELDS);
    }
    each_object(obj, "tool_calls", |c| retain(c, &PTC_CALL_FIELDS));
    each_object(obj, "definitions", |d| retain(d, &DEFINITION_FIELDS));
}

fn chat_turn(obj: &mut Map<String, Json>) {
    // PTC-Lisp fields stay, so that a turn mixing the forms is still refused.
    obj.retain(|k, _| {
        CHAT_TURN_FIELDS.contains(&k.as_str()) || PTC_TURN_FIELDS.contains(&k.as_str())
    });
    if let Some(Json::Object(assistant)) = obj.get_mut("assistant") {
        retain(assistant, &ASSISTANT_FIELDS);
        each_object(assistant, "tool_calls", |c| retain(c, &CHAT_CALL_FIELDS));
    }
    each_object(obj, "observations", |o| {
        match o.get("role").and_then(Json::as_str) {
            Some("tool") => retain(o, &TOOL_OBSERVATION_FIELDS),
            Some("user") => retain(o, &USER_OBSERVATION_FIELDS),
            // An unknown role is an error the decoder reports.
            _ => {}
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use recap_core::{ChatTurn, Session, Turn};
    use serde_json::json;

    #[test]
    fn unknown_fields_go_at_every_level_and_the_rest_decodes() {
        let mut s = json!({
            "id": "s", "mission": "m", "abi": {"major": 1}, "future": 1,
            "tools": {"t": {"description": "d", "cost": 3}},
            "turns": [{"number": 1, "program": "p", "success": false, "new": [],
                       "error": {"message": "e", "hint": "h"},
                       "tool_calls": [{"name": "t", "args": 1, "ms": 5}],
                       "definitions": [{"name": "x", "kind": "def", "line": 3}]}]
        });
        session(s.as_object_mut().unwrap());
        let decoded = Session::from_json(&s).unwrap();
        assert_eq!(decoded.turns[0].error.as_ref().unwrap().message, "e");
        assert_eq!(decoded.tools["t"].description.as_deref(), Some("d"));

        let mut t = json!({"number": 1, "tokens": [3],
            "assistant": {"content": null, "tool_calls": [{"id": "c", "name": "f", "arguments": "{}", "type": "function"}], "model": "x"},
            "observations": [{"role": "tool", "tool_call_id": "c", "content": "r", "environment": true, "ms": 1},
                             {"role": "user", "content": "u", "is_error": false}]});
        turn(&mut t);
        let chat = ChatTurn::from_json(&t, "turns[0]").unwrap();
        assert_eq!(chat.observations.len(), 2);
    }

    #[test]
    fn a_turn_mixing_the_forms_is_still_refused() {
        let mut t = json!({"number": 1, "assistant": {"content": "a"}, "program": "p"});
        turn(&mut t);
        assert!(ChatTurn::from_json(&t, "turns[0]").is_err());
        // Without `assistant` a turn is PTC-Lisp, and chat fields are unknown there.
        let mut t = json!({"number": 1, "program": "p", "success": true, "observations": []});
        turn(&mut t);
        assert!(Turn::from_json(&t, "turns[0]").is_ok());
    }
}
