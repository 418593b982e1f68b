use super::*;

/// A `session_open` request sent twice in a row is read once, alike.
#[test]
fn an_open_request_sent_twice_in_a_row_is_read_once_and_alike() {
    let s = recap_gen::chat::ChatSessionBuilder::new("find the bug")
        .system("You fix bugs.")
        .build();
    let header = wire::SessionHeader::of_session(&s);
    let bytes = wire::session_open_request(&BTreeMap::new(), &header, None, None);
    let reference = wire::decode_request(&bytes).expect("a request");
    assert_eq!(decode_open_once(&bytes).ok(), Some(reference.clone()));
    assert_eq!(decode_open_once(&bytes).ok(), Some(reference));
    assert!(decode_open_once(b"{").is_err());
}

/// An answer written twice in a row is the same bytes; another answer its own.
#[test]
fn an_answer_written_twice_in_a_row_is_written_alike() {
    let m = [Message::user("a"), Message::assistant("b \"quoted\"")];
    let items = [
        wire::Item::New(&m[0]),
        wire::Item::Previous { from: 0, to: 2 },
        wire::Item::New(&m[1]),
    ];
    let direct = wire::items_response(&items, Some(3));
    assert_eq!(encode_once(&items, 3), direct);
    assert_eq!(encode_once(&items, 3), direct);
    assert_eq!(
        encode_once(&items, 2),
        wire::items_response(&items, Some(2))
    );
    let other = [wire::Item::New(&m[1])];
    assert_eq!(
        encode_once(&other, 2),
        wire::items_response(&other, Some(2))
    );
    let changed = [Message::user("a"), Message::assistant("c")];
    let changed = [
        wire::Item::New(&changed[0]),
        wire::Item::Previous { from: 0, to: 2 },
        wire::Item::New(&changed[1]),
    ];
    assert_eq!(encode_once(&items, 3), direct);
    assert_eq!(
        encode_once(&changed, 3),
        wire::items_response(&changed, Some(3))
    );
}

#[test]
fn names() {
    for good in ["a", "observation-masking", "x_1", "9lives"] {
        assert!(is_valid_name(good), "{good}");
    }
    let long = "a".repeat(65);
    for bad in ["", "-a", "A", "a:b", "a b", "é", long.as_str()] {
        assert!(!is_valid_name(bad), "{bad}");
    }
}

/// What `reuse_previous` writes, read back as the host reads it and resolved as
/// the host resolves it.
fn resolve(items: &[wire::Item<'_>], previous: &[Message]) -> Vec<Message> {
    items
        .iter()
        .flat_map(|i| match *i {
            wire::Item::New(m) => vec![m.clone()],
            wire::Item::Previous { from, to } => previous[from..to].to_vec(),
        })
        .collect()
}

#[test]
fn a_sliding_window_is_sent_as_references_and_what_is_new() {
    let history: Vec<Message> = (0..12)
        .map(|i| Message::user(format!("turn {i}")))
        .collect();
    let previous: Vec<Message> = history[..8].to_vec();
    // The window moved by two, and two messages are new.
    let now: Vec<Message> = history[2..10].to_vec();
    let items = reuse_previous(&now, &previous);
    assert_eq!(
        items,
        vec![
            wire::Item::Previous { from: 2, to: 8 },
            wire::Item::New(&now[6]),
            wire::Item::New(&now[7]),
        ]
    );
    assert_eq!(resolve(&items, &previous), now);
    // A message changed in the middle (masked): the runs either side are reused.
    let mut masked = previous.clone();
    masked[3] = Message::user("[masked]");
    let items = reuse_previous(&masked, &previous);
    assert_eq!(items.len(), 3, "{items:?}");
    assert_eq!(resolve(&items, &previous), masked);
    // Repeats and reorderings resolve too; nothing in common sends everything.
    let shuffled = vec![
        previous[5].clone(),
        previous[5].clone(),
        previous[0].clone(),
    ];
    assert_eq!(
        resolve(&reuse_previous(&shuffled, &previous), &previous),
        shuffled
    );
    let fresh: Vec<Message> = (0..3).map(|i| Message::assistant(format!("{i}"))).collect();
    let items = reuse_previous(&fresh, &previous);
    assert!(items.iter().all(|i| matches!(i, wire::Item::New(_))));
}

#[test]
fn after_many_misses_only_runs_are_continued() {
    let previous: Vec<Message> = (0..100).map(|i| Message::user(format!("{i:03}"))).collect();
    // 40 new messages, then one the search would have found: past the limit of
    // searches it is sent whole, and the response still resolves to the prompt.
    let mut now: Vec<Message> = (0..40).map(|i| Message::user(format!("new {i}"))).collect();
    now.push(previous[50].clone());
    let items = reuse_previous(&now, &previous);
    assert!(items.iter().all(|i| matches!(i, wire::Item::New(_))));
    assert_eq!(resolve(&items, &previous), now);
}

/// The last two programs as assistant messages after the opening: a window that
/// slides at every call.
struct LastTwo;

impl LastTwo {
    fn render(r: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        let mut messages = vec![Message::system(r.system_prompt), Message::user(r.mission)];
        let from = r.turns.len().saturating_sub(2);
        messages.extend(
            r.turns[from..]
                .iter()
                .map(|t| Message::assistant(&t.program)),
        );
        Ok(messages)
    }
}

impl Strategy for LastTwo {
    fn spec(&self) -> String {
        "last-two".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        recap_core::each_call(LastTwo::render)
    }
}

impl Plugin for LastTwo {
    const NAME: &'static str = "last-two";
    const VERSION: &'static str = "0.1.0";
    fn from_spec(_: &StrategySpec) -> Result<Self, SpecError> {
        Ok(LastTwo)
    }
}

/// Every call of a session through the SDK's session path, opened with `open`:
/// whether any response referred to earlier messages, and that each resolves to
/// what `render` gives.
fn replay(open: &[u8], session: &Session) -> bool {
    let mut state = open_session::<LastTwo>(open).expect("the session opens");
    let (mut previous, mut referred) = (Vec::<Message>::new(), false);
    for k in 1..=session.turns.len() {
        let mut request = Vec::new();
        wire::put_session_render_request(&mut request, k - 1, &session.turns[k - 1..k]);
        let bytes = session_step(&mut state, &request).expect("the call renders");
        let response = wire::Response::from_slice(&bytes).expect("a valid response");
        referred |= !response.reused.is_empty();
        let kept = response.messages_kept.unwrap_or(0);
        let mut new = response.messages.unwrap_or_default().into_iter();
        let mut prompt = previous[..kept].to_vec();
        let mut taken = 0;
        for r in &response.reused {
            prompt.extend(new.by_ref().take(r.at - taken));
            taken = r.at;
            prompt.extend_from_slice(&previous[r.from..r.to]);
        }
        prompt.extend(new);
        let want = render_call(&LastTwo, session, k).expect("renders");
        assert_eq!(prompt, want, "call {k}");
        previous = prompt;
    }
    referred
}

#[test]
fn references_go_only_to_a_host_that_reads_them() {
    let session = recap_gen::generate_corpus(3, 1, 6..=6).remove(0);
    let header = wire::SessionHeader::of_session(&session);
    let open = wire::session_open_request(&BTreeMap::new(), &header, None, None);
    assert!(replay(&open, &session), "a 1.2 host is sent references");
    let text = String::from_utf8(open).expect("UTF-8");
    let minor = format!("\"minor\":{ABI_MINOR}");
    assert!(text.contains(&minor), "{text}");
    let older = text.replace(&minor, "\"minor\":1");
    assert!(
        !replay(older.as_bytes(), &session),
        "a 1.1 host is sent messages only"
    );
}
