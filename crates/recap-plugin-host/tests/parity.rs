//! Parity: every built-in strategy, wrapped by the SDK (`export_strategy!`) and called
//! through the ABI, renders byte-identical messages to its direct call on every call
//! of every bench-data session and of a generated chat corpus (each in the forms it
//! declares) through incremental sessions (and on every 4th call and the last through
//! full requests), with default and non-default options. Chat requests carry token
//! counts (the registry has a tokenizer), which the wrapped built-ins ignore.
//!
//! The built-ins that need the run's tokenizer to be built (token budgets) are not
//! wrapped: a plugin gets per-message token counts with each chat request, not a
//! tokenizer it could count its own texts with.

use recap_testkit::plugins as support;

use recap_core::invariants::calls;
use recap_core::tokens::WordCounter;
use recap_core::{
    CorpusReader, Message, Registry, RenderRequest, Session, SpecError, StrategySpec, render_call,
};
use recap_plugin_host::{PluginStrategy, load, register};
use std::sync::Arc;
use support::{workspace_root, wrapped_builtin};

fn bench_sessions() -> Vec<(String, Session)> {
    let dir = workspace_root().join("bench-data");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (bench-data is part of the repository)",
                dir.display()
            )
        })
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no bench-data/*.jsonl in {}",
        dir.display()
    );
    let mut sessions = Vec::new();
    for file in files {
        for entry in CorpusReader::open(&file).unwrap() {
            let session = entry
                .session
                .unwrap_or_else(|e| panic!("{}: bench-data must be valid: {e}", file.display()));
            sessions.push((format!("{}:{}", file.display(), session.id), session));
        }
    }
    for session in recap_gen::generate_chat_corpus(8, 30, 1..=14) {
        sessions.push((format!("generated chat {}", session.id), session));
    }
    sessions
}

/// The default spec, and one with every integer option at 2 (when the built-in
/// accepts that), so that option forwarding is covered too.
fn specs(registry: &Registry, name: &str) -> Vec<String> {
    let info = registry.get(name).unwrap();
    let mut specs = vec![name.to_string()];
    let tight: Vec<String> = info
        .options
        .iter()
        .filter(|o| o.default.parse::<u32>().is_ok())
        .map(|o| format!("{}=2", o.key))
        .collect();
    if !tight.is_empty() {
        let spec = format!("{name}:{}", tight.join(","));
        if registry.build(&spec).is_ok() {
            specs.push(spec);
        }
    }
    specs
}

#[test]
fn every_builtin_through_the_abi_renders_the_same_bytes() {
    let direct = recap_builtins::registry();
    let sessions = bench_sessions();
    // Without the run's tokenizer the token-budget built-ins cannot be built at all.
    // `recorded` replays a session's record rather than rendering a request: nothing
    // for a plugin to reproduce.
    let (names, need_tokenizer): (Vec<String>, Vec<String>) = direct
        .infos()
        .map(|i| i.name.clone())
        .filter(|name| direct.build(name).map_or(true, |s| !s.replays_record()))
        .partition(|name| !matches!(direct.build(name), Err(SpecError::NeedsTokenizer { .. })));
    assert!(names.len() >= 6, "{names:?}");
    assert_eq!(
        need_tokenizer,
        ["token-budget-trim", "tool-result-clearing"],
        "built-ins left out of the parity test"
    );
    let mut forms_seen = std::collections::BTreeSet::new();
    for name in &names {
        let lib = wrapped_builtin(name).unwrap_or_else(|| {
            panic!(
                "no plugin wrapper for built-in {name:?}: add examples/wrap_{}.rs to \
                 crates/recap-plugin-host/tests/fixtures/wrapped",
                name.replace('-', "_")
            )
        });
        let plugin = load(&lib).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plugin.name(), name);
        assert_eq!(
            plugin.options(),
            direct.get(name).unwrap().options.as_slice(),
            "{name}: options travel through describe"
        );
        let mut through_abi = Registry::new();
        through_abi.set_counter(Arc::new(WordCounter));
        register(&mut through_abi, &plugin).unwrap();

        for spec in specs(&direct, name) {
            let want = direct.build(&spec).unwrap();
            let got = through_abi.build(&spec).unwrap();
            assert_eq!(got.spec(), want.spec(), "{spec}: canonical spec");
            assert_eq!(
                got.invariants(),
                want.invariants(),
                "{spec}: declared invariants"
            );
            assert_eq!(got.forms(), want.forms(), "{spec}: declared forms");
            forms_seen.extend(want.forms());
            let parsed = StrategySpec::parse(&spec).unwrap();
            assert_eq!(parsed.name, *name);
            let full_requests = PluginStrategy::new(Arc::clone(&plugin), &parsed)
                .unwrap()
                .counting_with(Some(Arc::new(WordCounter)));
            let mut renders = 0usize;
            let mut kept_some = 0usize;
            for (label, session) in sessions
                .iter()
                .filter(|(_, s)| want.forms().contains(&s.form))
            {
                // Two walks, opened as the harness opens the two replays of its
                // determinism check (their plugin-side sessions hold one copy of the
                // turns while in step): the first asks for each prompt whole, the
                // second as the harness does, against the prompt it holds, which it
                // forgets now and then (as after a failed render); a call it skips
                // leaves it holding an older prompt than the plugin's last response,
                // and sets the two apart.
                let [mut whole, mut deltas] = got.open_pair();
                let mut held: Vec<Message> = Vec::new();
                let last = calls(session).last().unwrap_or(0);
                for k in calls(session) {
                    let expected = render_call(want.as_ref(), session, k).unwrap();
                    let incremental = whole.call(session, k, 0).unwrap().tail;
                    assert!(
                        incremental == expected,
                        "{spec} {label} call {k}: session render differs"
                    );
                    if k % 5 == 3 {
                        held.clear();
                    }
                    if k % 7 != 6 {
                        let delta = deltas
                            .call(session, k, held.len())
                            .and_then(|d| d.within(held.len()))
                            .unwrap();
                        kept_some += usize::from(delta.kept > 0);
                        let applied = delta.apply(&held);
                        assert!(
                            applied == expected,
                            "{spec} {label} call {k}: the delta (kept {}) differs",
                            delta.kept
                        );
                        held = applied;
                    }
                    // A full request re-serialises the whole history (quadratic over a
                    // session), so it is checked on every 4th call and the last one.
                    if k % 4 == 0 || k == last {
                        let request = RenderRequest::for_call(session, k).unwrap();
                        let full = full_requests.render_request(&request).unwrap();
                        assert!(
                            full == expected,
                            "{spec} {label} call {k}: full-request render differs"
                        );
                    }
                    renders += 1;
                }
            }
            assert!(renders > 0, "{spec}: no session of its forms");
            // Every strategy keeps at least its opening from one call to the next.
            assert!(
                kept_some * 3 > renders,
                "{spec}: {kept_some} of {renders} calls kept some of the previous prompt"
            );
            eprintln!("{spec}: {renders} calls identical through the ABI");
        }
    }
    assert_eq!(forms_seen.len(), 2, "both forms went through the ABI");
}

/// Every twin loads into one process beside the others without static TLS, as a run
/// with many plugins (and `benches/plugin.rs`) loads them. A library taking static TLS
/// (mimalloc's default model) draws on the little glibc keeps for libraries loaded later
/// (~1.6 KiB), and the eighth twin loaded by the plugin bench failed with "cannot
/// allocate memory in static TLS block". The check reruns this test in a child process
/// with that reserve set to nothing (`GLIBC_TUNABLES`), where a library needing static
/// TLS cannot load at all.
#[test]
fn every_twin_loads_beside_the_others_without_static_tls() {
    const CHILD: &str = "RECAP_TEST_NO_STATIC_TLS_CHILD";
    let direct = recap_builtins::registry();
    let names: Vec<String> = direct
        .infos()
        .map(|i| i.name.clone())
        .filter(|name| wrapped_builtin(name).is_some())
        .collect();
    assert!(names.len() >= 8, "{names:?}");
    if std::env::var_os(CHILD).is_some() {
        let held: Vec<_> = names
            .iter()
            .map(|name| {
                let lib = wrapped_builtin(name).expect("listed above");
                load(&lib).unwrap_or_else(|e| panic!("{name} beside the others: {e}"))
            })
            .collect();
        for (plugin, name) in held.iter().zip(&names) {
            assert_eq!(plugin.name(), name);
        }
        return;
    }
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        eprintln!("skipped: the static TLS reserve is a glibc setting");
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "every_twin_loads_beside_the_others_without_static_tls",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("GLIBC_TUNABLES", "glibc.rtld.optional_static_tls=0")
        .output()
        .expect("rerun the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "twins loaded without a static TLS reserve:\n{stdout}\n{stderr}"
    );
}
