//! A plugin written in C against `recap-abi/include/recap_strategy.h`, compiled with
//! the system C compiler when there is one.

use recap_core::invariants::calls;
use recap_core::{Message, Registry, RenderRequest, SessionState};
use recap_plugin_host::{load, register};
use std::path::{Path, PathBuf};
use std::process::Command;

fn compile_c_sample() -> Option<PathBuf> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    if Command::new(&cc).arg("--version").output().is_err() {
        recap_gen::shared::skipped(&format!(
            "no C compiler ({cc}) on this machine; the C plugin sample was not tested"
        ));
        return None;
    }
    let abi = Path::new(env!("CARGO_MANIFEST_DIR")).join("../recap-abi");
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c-plugin");
    std::fs::create_dir_all(&out_dir).unwrap();
    let lib = out_dir.join(format!(
        "{}mission_only{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let output = Command::new(&cc)
        .args([
            "-std=c99", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-I",
        ])
        .arg(abi.join("include"))
        .arg("-o")
        .arg(&lib)
        .arg(abi.join("c-sample/mission_only.c"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{cc} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(lib)
}

#[test]
fn a_c_plugin_loads_and_renders() {
    let Some(lib) = compile_c_sample() else {
        return;
    };
    let plugin = load(&lib).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plugin.name(), "mission-only");
    assert_eq!(plugin.version(), "0.1.0");
    assert!(!plugin.has_describe() && !plugin.has_sessions());
    assert!(!plugin.self_test().sessions);

    let mut registry = Registry::new();
    register(&mut registry, &plugin).unwrap();
    let strategy = registry.build("mission-only").unwrap();
    for session in recap_gen::generate_corpus(9, 15, 0..=6) {
        let expected = vec![
            Message::system(session.system_prompt.as_str()),
            Message::user(session.mission.as_str()),
        ];
        let mut state = SessionState::new();
        for k in calls(&session) {
            let request = RenderRequest::for_call(&session, k).unwrap();
            assert_eq!(strategy.render(&request).unwrap(), expected);
            assert_eq!(
                strategy.render_session(&session, k, &mut state).unwrap(),
                expected
            );
        }
    }
}
