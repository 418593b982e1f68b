//! Measures what the ABI costs: renders every call of every session of a corpus with
//! a built-in called directly (each call alone, `render_call`, and through one replay
//! per session, with its per-session caches) and with the same built-in wrapped as a
//! plugin, through one replay per session (incremental plugin-side sessions) and
//! through full requests (`PluginStrategy::render_request`).
//!
//! ```text
//! cargo build --release --manifest-path crates/recap-plugin-host/tests/fixtures/Cargo.toml \
//!     -p recap-plugin-wrapped-builtins --examples
//! cargo run --release -p recap-plugin-host --example plugin_overhead -- \
//!     <target>/release/examples/libwrap_full_history.so full-history bench-data/*.jsonl
//! ```
//!
//! `PLUGIN_OVERHEAD_ONLY=<mode>` runs one pass of one path instead, for profilers
//! (`valgrind --tool=callgrind`, whose instruction counts do not depend on machine
//! load; subtract the `load` mode's count): `direct`, `direct-sessions`, `sessions`,
//! `full`, `load`, and the pieces of the per-turn cost: `encode` (the host writes each
//! turn once), `decode` (encode, then the plugin's reader), `clone` (a deep copy of
//! each turn, the floor of any transport), `stats` (bytes each response carries).
//!
//! `PLUGIN_OVERHEAD_WORKER=<recap executable>` loads the plugin in worker processes
//! (`--plugin-isolation process`; `target/release/recap` after `cargo build --release`)
//! instead of in this process. Sessions of a form the strategy does not render are
//! skipped.
//!
//! The criterion benchmark (`benches/plugin.rs`) is the authority; this is a quick check.

use recap_core::invariants::calls;
use recap_core::{CorpusReader, RenderRequest, Session, Strategy, StrategySpec, render_call};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn time(reps: usize, mut f: impl FnMut()) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..reps {
        let start = Instant::now();
        f();
        best = best.min(start.elapsed());
    }
    best
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: plugin_overhead <wrapped-builtin-lib> <spec> <corpus.jsonl>...";
    let lib = PathBuf::from(args.next().ok_or(usage)?);
    let spec = args.next().ok_or(usage)?;
    let mut sessions: Vec<Session> = Vec::new();
    for file in args {
        for entry in CorpusReader::open(std::path::Path::new(&file))? {
            sessions.push(entry.session?);
        }
    }
    let isolation = match std::env::var_os("PLUGIN_OVERHEAD_WORKER") {
        Some(worker) => {
            recap_plugin_host::Isolation::Process(recap_plugin_host::IsolationConfig::new(worker))
        }
        None => recap_plugin_host::Isolation::InProcess,
    };
    let plugin = recap_plugin_host::load_with(&lib, &isolation)?;
    let through_abi = recap_plugin_host::PluginStrategy::new(plugin, &StrategySpec::parse(&spec)?)?;
    let direct = recap_builtins::registry().build(&spec)?;
    sessions.retain(|s| direct.forms().contains(&s.form));

    let run_direct = |s: &dyn Strategy| {
        for session in &sessions {
            for k in calls(session) {
                std::hint::black_box(render_call(s, session, k).expect("renders"));
            }
        }
    };
    let run_sessions = |s: &dyn Strategy| {
        for session in &sessions {
            let mut replay = s.open();
            for k in calls(session) {
                std::hint::black_box(replay.call(session, k, 0).expect("renders"));
            }
        }
    };
    let run_full = || {
        for session in &sessions {
            for k in calls(session) {
                let request = RenderRequest::for_call(session, k).expect("valid call");
                std::hint::black_box(through_abi.render_request(&request).expect("renders"));
            }
        }
    };
    // For profilers: one pass of one path (see the module docs).
    match std::env::var("PLUGIN_OVERHEAD_ONLY").as_deref() {
        Ok("direct") => run_direct(direct.as_ref()),
        Ok("direct-sessions") => run_sessions(direct.as_ref()),
        Ok("sessions") => run_sessions(&through_abi),
        Ok("full") => run_full(),
        Ok("load") => {}
        // What a session response must carry per call: the messages after the kept
        // prefix, and how much of that repeats an earlier message of the same session.
        Ok("stats") => {
            let (mut prompt, mut sent, mut repeated) = (0usize, 0usize, 0usize);
            for session in &sessions {
                let mut previous: Vec<recap_core::Message> = Vec::new();
                let mut replay = direct.open();
                for k in calls(session) {
                    let messages = replay.call(session, k, 0).expect("renders").tail;
                    let kept = messages
                        .iter()
                        .zip(&previous)
                        .take_while(|(a, b)| a == b)
                        .count();
                    for m in &messages {
                        prompt += m.content.len();
                    }
                    for m in &messages[kept..] {
                        sent += m.content.len();
                        if previous.contains(m) {
                            repeated += m.content.len();
                        }
                    }
                    previous = messages;
                }
            }
            println!(
                "{spec}: prompt bytes {prompt}, sent after the kept prefix {sent}, of which whole repeated messages {repeated}"
            );
        }
        // The pieces of a session call, in-process: what the host writes for each new
        // turn, and what the plugin reads back.
        Ok("encode") => {
            let mut buf = Vec::new();
            for session in &sessions {
                for (i, turn) in session.turns.iter().enumerate() {
                    recap_abi::wire::put_session_render_request(
                        &mut buf,
                        i,
                        std::slice::from_ref(turn),
                    );
                    std::hint::black_box(&buf);
                }
            }
        }
        // The floor of any transport that gives the plugin its own turns: a deep copy.
        Ok("clone") => {
            for session in &sessions {
                for turn in &session.turns {
                    std::hint::black_box(turn.clone());
                }
            }
        }
        Ok("decode") => {
            let mut requests = Vec::new();
            for session in &sessions {
                for (i, turn) in session.turns.iter().enumerate() {
                    requests.push(recap_abi::wire::session_render_request(
                        i,
                        std::slice::from_ref(turn),
                    ));
                }
            }
            // Profilers: subtract the "encode" pass.
            for request in &requests {
                std::hint::black_box(
                    recap_abi::wire::decode_session_turns(request).expect("decodes"),
                );
            }
        }
        _ => {
            let reps = 7;
            let d = time(reps, || run_direct(direct.as_ref()));
            let ds = time(reps, || run_sessions(direct.as_ref()));
            let p = time(reps, || run_sessions(&through_abi));
            let f = time(reps, run_full);
            let ratio = |x: Duration, y: Duration| x.as_secs_f64() / y.as_secs_f64();
            println!("{spec}: direct {d:?} (each call alone), {ds:?} (one replay per session)");
            println!(
                "  plugin, incremental sessions: {p:?} ({:.2}x alone, {:.2}x replayed)",
                ratio(p, d),
                ratio(p, ds)
            );
            println!(
                "  plugin, full requests:        {f:?} ({:.2}x alone)",
                ratio(f, d)
            );
        }
    }
    Ok(())
}
