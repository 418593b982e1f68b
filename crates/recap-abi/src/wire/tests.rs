use super::*;
use recap_core::session::fenced_program;
use recap_core::tokens::WordCounter;
use recap_core::{DefKind, Definition, TurnError};

fn session() -> Session {
    let mut tools = BTreeMap::new();
    tools.insert(
        "search".to_string(),
        ToolSpec {
            signature: Some("(search q)".into()),
            description: None,
            parameters: None,
        },
    );
    let mut data = BTreeMap::new();
    data.insert("n".to_string(), Value::Keyword("k".into()));
    let turn = |number: u32, success: bool| Turn {
        number,
        program: format!("(def x{number} \"é\\n\")"),
        raw_response: fenced_program("(def x 1)"),
        success,
        error: (!success).then(|| TurnError {
            message: "boom \"quoted\"".into(),
            reason: None,
        }),
        result: Some(Value::Float(1.5)),
        prints: vec!["a\tb".into()],
        tool_calls: vec![],
        definitions: vec![Definition {
            name: "x".into(),
            kind: DefKind::Def,
            docstring: None,
            value: Some(Value::Set(vec![Value::Int(1)])),
        }],
        feedback: None,
        usage: None,
    };
    Session {
        id: "s1".into(),
        mission: "Find it".into(),
        system_prompt: "sys".into(),
        max_turns: 4,
        budget_recorded: true,
        form: Form::Ptc,
        tools,
        data,
        meta: Map::new(),
        turns: vec![turn(1, true), turn(2, false)],
        chat_turns: Vec::new(),
    }
}

#[test]
fn render_request_round_trips_through_the_sdk_decoder() {
    let s = session();
    let mut options = BTreeMap::new();
    options.insert("window".to_string(), "2".to_string());
    let bytes = render_request(&options, &SessionHeader::of_session(&s), &s.turns);
    let (opts, decoded) = decode_session_request(&bytes).unwrap();
    assert_eq!(opts, options);
    let mut expected = s.clone();
    expected.meta = Map::new();
    assert_eq!(decoded, expected);
}

#[test]
fn ptc_requests_carry_nothing_new_but_the_minor() {
    let s = session();
    let text = String::from_utf8(render_request(
        &BTreeMap::new(),
        &SessionHeader::of_session(&s),
        &s.turns,
    ))
    .unwrap();
    assert!(
        text.starts_with(r#"{"abi":{"major":1,"minor":2},"#),
        "{text}"
    );
    assert!(
        text.contains(
            r#""mission":"Find it","max_turns":4,"tools":{"search":{"signature":"(search q)"}},"#
        ),
        "{text}"
    );
    assert!(
        !text.contains("\"form\"") && !text.contains("token_counts"),
        "{text}"
    );
}

#[test]
fn session_delta_round_trips() {
    let s = session();
    let bytes = session_render_request(1, &s.turns[1..]);
    let (offset, turns) = decode_session_delta(&bytes).unwrap();
    assert_eq!(offset, 1);
    assert_eq!(Turn::from_json(&turns[0], "turns[1]").unwrap(), s.turns[1]);
    let open = session_open_request(&BTreeMap::new(), &SessionHeader::of_session(&s), None, None);
    let (_, header) = decode_session_request(&open).unwrap();
    assert!(header.turns.is_empty());
    assert_eq!(header.data, s.data);
    assert_eq!(header.tools, s.tools);
    let delta = decode_delta(&bytes, Form::Ptc).unwrap();
    assert_eq!(delta.turns, DeltaTurns::Ptc(s.turns[1..].to_vec()));
}

#[test]
fn chat_requests_round_trip_with_and_without_token_counts() {
    let mut seen_unbudgeted = false;
    for s in recap_gen::generate_chat_corpus(5, 20, 1..=6) {
        seen_unbudgeted |= !s.budget_recorded;
        let header = SessionHeader::of_session(&s);
        let counts =
            TokenCounts::of_session(&WordCounter, &s.system_prompt, &s.mission, &s.chat_turns);
        for with_counts in [false, true] {
            let c = with_counts.then_some(&counts);
            let bytes = chat_render_request(&BTreeMap::new(), &header, &s.chat_turns, c);
            let request = decode_request(&bytes).unwrap();
            let mut expected = s.clone();
            expected.meta = Map::new();
            assert_eq!(request.session, expected, "{}", s.id);
            assert_eq!(request.token_counts.as_ref(), c, "{}", s.id);

            // The same session opened, then sent turn by turn.
            let open = session_open_request(&BTreeMap::new(), &header, c, None);
            let opened = decode_request(&open).unwrap();
            assert_eq!(opened.session.form, Form::Chat);
            assert_eq!(opened.session.budget(), s.budget(), "{}", s.id);
            assert!(opened.session.chat_turns.is_empty());
            assert_eq!(
                opened.token_counts.as_ref().map(|c| c.turns.len()),
                c.map(|_| 0)
            );
            let mut out = Vec::new();
            put_chat_session_render_request(
                &mut out,
                1,
                &s.chat_turns[1..],
                c.map(|c| &c.turns[1..]),
            );
            let delta = decode_delta(&out, Form::Chat).unwrap();
            assert_eq!(delta.turns_offset, 1);
            assert_eq!(delta.turns, DeltaTurns::Chat(s.chat_turns[1..].to_vec()));
            assert_eq!(delta.token_counts.as_deref(), c.map(|c| &c.turns[1..]));
        }
    }
    assert!(seen_unbudgeted, "the corpus has sessions without a budget");
}

#[test]
fn mutated_chat_requests_are_answered_or_refused_never_a_panic() {
    let s = recap_gen::generate_chat_corpus(9, 1, 3..=3).remove(0);
    let counts = TokenCounts::of_session(&WordCounter, &s.system_prompt, &s.mission, &s.chat_turns);
    let header = SessionHeader::of_session(&s);
    let full = chat_render_request(&BTreeMap::new(), &header, &s.chat_turns, Some(&counts));
    let mut delta = Vec::new();
    put_chat_session_render_request(&mut delta, 1, &s.chat_turns[1..], Some(&counts.turns[1..]));
    let mut g = crate::mutation::Xorshift(0x9E37_79B9_7F4A_7C15);
    let tokens: [&[u8]; 8] = [b"\"", b"null", b"{", b"}", b",", b"[1]", b"\"chat\"", b"-1"];
    let mut decoded = 0;
    for base in [&full, &delta] {
        for _ in 0..1500 {
            let mut m = base.clone();
            crate::mutation::mutate(&mut g, &mut m, &tokens, false);
            if let Ok(r) = decode_request(&m) {
                // What is accepted is consistent: counts match the turns.
                if let Some(c) = &r.token_counts {
                    assert_eq!(c.turns.len(), r.session.chat_turns.len());
                }
                decoded += 1;
            }
            if let Ok(d) = decode_delta(&m, Form::Chat) {
                if let (Some(c), DeltaTurns::Chat(t)) = (&d.token_counts, &d.turns) {
                    assert_eq!(c.len(), t.len());
                }
                decoded += 1;
            }
        }
    }
    assert!(decoded > 300, "{decoded} mutants decoded");
}

#[test]
fn chat_requests_say_their_form_and_null_budget() {
    let s = recap_gen::chat::ChatSessionBuilder::new("m")
        .tool_turn("", &[("c1", "f", "{}")], &["r"])
        .build();
    let bytes = chat_render_request(
        &BTreeMap::new(),
        &SessionHeader::of_session(&s),
        &s.chat_turns,
        None,
    );
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        text.contains(r#""mission":"m","form":"chat","max_turns":null,"#),
        "{text}"
    );
    assert!(
        text.contains(
            r#""assistant":{"content":null,"tool_calls":[{"id":"c1","name":"f","arguments":"{}"}]}"#
        ),
        "{text}"
    );
    // From a render request too, where no budget is u32::MAX.
    let request = recap_core::RenderRequest::for_call(&s, 1).unwrap();
    assert_eq!(SessionHeader::of_request(&request).max_turns, None);
}

#[test]
fn token_counts_must_match_the_turns() {
    let s = recap_gen::chat::ChatSessionBuilder::new("m")
        .tool_turn("", &[("c1", "f", "{}")], &["r"])
        .build();
    let mut counts = TokenCounts::of_session(&WordCounter, "", "m", &s.chat_turns);
    counts.turns[0].pop();
    let bytes = chat_render_request(
        &BTreeMap::new(),
        &SessionHeader::of_session(&s),
        &s.chat_turns,
        Some(&counts),
    );
    let err = decode_request(&bytes).unwrap_err();
    assert!(
        err.0
            .contains("token_counts.turns[0]: 1 counts for a turn of 2 messages"),
        "{err:?}"
    );
    let mut out = Vec::new();
    put_chat_session_render_request(&mut out, 3, &s.chat_turns, Some(&[]));
    let err = decode_delta(&out, Form::Chat).unwrap_err();
    assert!(err.0.contains("0 entries for 1 turns"), "{err:?}");
    let err = decode_request(br#"{"mission":"m","form":"chat","token_counts":{"system":1}}"#)
        .unwrap_err();
    assert!(
        err.0.contains("expected tokenizer, system and mission"),
        "{err:?}"
    );
}

#[test]
fn requests_ignore_unknown_fields_and_reject_other_majors() {
    let ok = br#"{"abi":{"major":1,"minor":7},"future":[1,2],"mission":"m","turns":[]}"#;
    assert!(decode_session_request(ok).is_ok());
    let ok = br#"{"mission":"m","tools":{"t":{"cost":1}},"turns":[{"number":1,"program":"p","success":true,"ms":3,
        "tool_calls":[{"name":"t","args":1,"ms":2}]}]}"#;
    assert_eq!(decode_session_request(ok).unwrap().1.turns.len(), 1);
    let ok = br#"{"mission":"m","form":"chat","turns":[{"number":1,"assistant":{"content":"a","model":"x"},"observations":[],"latency":1}]}"#;
    assert_eq!(decode_request(ok).unwrap().session.chat_turns.len(), 1);
    let bad = br#"{"abi":{"major":2,"minor":0},"mission":"m"}"#;
    let err = decode_session_request(bad).unwrap_err();
    assert!(err.0.contains("ABI 2"), "{err:?}");
}

#[test]
fn an_open_request_names_its_pair() {
    let s = recap_gen::generate_corpus(5, 1, 2..=2).remove(0);
    let header = SessionHeader::of_session(&s);
    let open = session_open_request(&BTreeMap::new(), &header, None, Some(42));
    assert_eq!(decode_request(&open).map(|r| r.pair).ok(), Some(Some(42)));
    let open = session_open_request(&BTreeMap::new(), &header, None, None);
    assert_eq!(decode_request(&open).map(|r| r.pair).ok(), Some(None));
    let err = decode_request(br#"{"mission":"m","pair":"one"}"#).unwrap_err();
    assert!(err.0.contains("pair: expected a whole number"), "{err:?}");
}

#[test]
fn bad_requests_name_the_field() {
    let err = decode_session_request(br#"{"mission":"m","options":{"window":3}}"#).unwrap_err();
    assert!(err.0.contains("options.window"), "{err:?}");
    let err = decode_session_request(br#"{"mission":"m","turns":[{"number":1}]}"#).unwrap_err();
    assert!(err.0.contains("turns[0].program"), "{err:?}");
    let err = decode_session_request(b"[1]").unwrap_err();
    assert!(err.0.contains("an array"), "{err:?}");
    let err = decode_session_delta(br#"{"turns_offset":-1}"#).unwrap_err();
    assert!(err.0.contains("turns_offset"), "{err:?}");
    // The fast decoder gives up; the reference one names the field, offset included.
    let err = decode_session_turns(br#"{"turns_offset":2,"turns":[{"number":3}]}"#).unwrap_err();
    assert!(err.0.contains("turns[2].program"), "{err:?}");
    let err = decode_session_turns(
        br#"{"turns":[{"number":1,"program":"p","success":true,"result":{"$kword":1}}]}"#,
    )
    .unwrap_err();
    assert!(err.0.contains("turns[0].result/$kword"), "{err:?}");
    let err = decode_delta(br#"{"turns_offset":4,"turns":[{"number":5,"assistant":{}, "observations":[{"role":"robot"}]}]}"#, Form::Chat).unwrap_err();
    assert!(err.0.contains("turns[4].observations[0].role"), "{err:?}");
    let err = decode_request(br#"{"mission":"m","form":"video"}"#).unwrap_err();
    assert!(err.0.contains("unknown form \"video\""), "{err:?}");
    let err = decode_request(
        br#"{"mission":"m","form":"chat","turns":[{"number":1,"program":"p","success":true}]}"#,
    )
    .unwrap_err();
    assert!(
        err.0
            .contains("says chat but its turns are in the ptc form"),
        "{err:?}"
    );
}
