//! Measures what the ABI costs: renders every call of every session of a corpus with
//! a built-in called directly and with the same built-in wrapped as a plugin, through
//! incremental sessions (`render_session`) and through full requests (`render`).
//!
//! ```text
//! cargo build --release --manifest-path crates/recap-plugin-host/tests/fixtures/Cargo.toml \
//!     -p recap-plugin-wrapped-builtins --examples
//! cargo run --release -p recap-plugin-host --example plugin_overhead -- \
//!     <target>/release/examples/libwrap_full_history.so full-history bench-data/*.jsonl
//! ```
//!
//! The criterion benchmark of issue 7 is the authority; this is a quick check.

use recap_core::invariants::calls;
use recap_core::{CorpusReader, Registry, RenderRequest, Session, SessionState, Strategy};
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
    let plugin = recap_plugin_host::load(&lib)?;
    let mut registry = Registry::new();
    recap_plugin_host::register(&mut registry, &plugin)?;
    let through_abi = registry.build(&spec)?;
    let direct = recap_builtins::registry().build(&spec)?;

    let run_direct = |s: &dyn Strategy| {
        for session in &sessions {
            for k in calls(session) {
                let request = RenderRequest::for_call(session, k).expect("valid call");
                std::hint::black_box(s.render(&request).expect("renders"));
            }
        }
    };
    let run_sessions = |s: &dyn Strategy| {
        for session in &sessions {
            let mut state = SessionState::new();
            for k in calls(session) {
                std::hint::black_box(s.render_session(session, k, &mut state).expect("renders"));
            }
        }
    };
    // For profilers (e.g. valgrind --tool=callgrind, whose instruction counts do not
    // depend on machine load): one pass of one path.
    match std::env::var("PLUGIN_OVERHEAD_ONLY").as_deref() {
        Ok("direct") => run_direct(direct.as_ref()),
        Ok("sessions") => run_sessions(through_abi.as_ref()),
        Ok("full") => run_direct(through_abi.as_ref()),
        Ok("load") => {}
        _ => {
            let reps = 7;
            let d = time(reps, || run_direct(direct.as_ref()));
            let p = time(reps, || run_sessions(through_abi.as_ref()));
            let f = time(reps, || run_direct(through_abi.as_ref()));
            let ratio = |x: Duration| x.as_secs_f64() / d.as_secs_f64();
            println!("{spec}: direct {d:?}");
            println!(
                "  plugin, incremental sessions: {p:?} ({:.2}x direct)",
                ratio(p)
            );
            println!(
                "  plugin, full requests:        {f:?} ({:.2}x direct)",
                ratio(f)
            );
        }
    }
    Ok(())
}
