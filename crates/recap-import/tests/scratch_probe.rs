mod common;
use recap_import::Kind;
#[test]
fn probe() {
    let root = recap_gen::shared::root().join("corpora");
    for (kind, dir) in [
        (Kind::ClaudeCode, "claude-code-attio-mcp-server"),
        (Kind::ClaudeCode, "claude-code-reliability-snapshots"),
        (Kind::SweAgent, "swe-agent-traj"),
        (Kind::Openhands, "openhands-events"),
        (Kind::Tau2, "tau2-bench-results"),
    ] {
        let t = std::time::Instant::now();
        let imp = recap_import::import(kind, &[root.join(dir)]).unwrap();
        eprintln!("== {dir} ({:?}): files {} sessions {} turns {} calls {} failed {}", t.elapsed(), imp.files, imp.sessions.len(), imp.turns(), imp.tool_calls(), imp.failed_turns());
        eprintln!("   {:?}", common::counts(&imp));
        let bytes = common::jsonl(&imp);
        let s = common::read_back(&bytes);
        let t = std::time::Instant::now();
        let n = common::full_history_retains_every_fact(&s);
        eprintln!("   facts {n} ({:?})", t.elapsed());
    }
}
