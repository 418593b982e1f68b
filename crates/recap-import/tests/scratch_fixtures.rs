mod common;
use recap_import::Kind;
#[test]
fn probe() {
    let f = common::fixture("");
    for (kind, dir) in [
        (Kind::AnthropicMessages, "anthropic-messages"),
        (Kind::ClaudeCode, "claude-code"),
        (Kind::SweAgent, "swe-agent"),
        (Kind::Openhands, "openhands"),
        (Kind::Tau2, "tau2"),
        (Kind::Auto, "mixed"),
        (Kind::OpenaiChat, "openai-chat"),
    ] {
        if std::env::var("ONLY").map_or(false, |o| o != dir) { continue; }
        let imp = recap_import::import(kind, &[f.join(dir)]).unwrap();
        eprintln!("== {dir}: files {} sessions {} turns {} calls {} failed {}", imp.files, imp.sessions.len(), imp.turns(), imp.tool_calls(), imp.failed_turns());
        for p in &imp.problems { eprintln!("   [{}] {p}", p.kind); }
        let bytes = common::jsonl(&imp);
        for l in String::from_utf8_lossy(&bytes).lines() { eprintln!("{l}"); }
        let _ = common::read_back(&bytes);
    }
}
