//! Import speed of every chat-form importer (the target of the importers issue: at least
//! 100 MB/s per core): `import/<kind>` imports one large input generated in memory in
//! that format — sessions shaped like the shared dev corpora (text-heavy observations,
//! tool calls with object arguments, per-entry envelopes) — from its text to sessions;
//! throughput = bytes of input. `import-and-write/<kind>` also writes the corpus lines,
//! as `recap import` does. Reading the file and gunzipping are not measured.
//!
//! One thread: the figure is per core. On a shared machine, `RECAP_BENCH_CLOCK=cpu`
//! measures the process's CPU time instead of the wall clock (benches/common/cpu.rs);
//! the one-pass figure printed before the measurements uses CPU time always.

mod common;

use criterion::measurement::Measurement;
use criterion::{Criterion, SamplingMode, Throughput};
use recap_import::{Kind, Options};
use serde_json::{Value as Json, json};
use std::hint::black_box;
use std::path::Path;

/// A deterministic stream of numbers (xorshift), so every run imports the same input.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: [&str; 16] = [
    "config", "parser", "value", "request", "handler", "return", "error", "session", "import",
    "buffer", "window", "render", "token", "record", "field", "struct",
];

/// Source-like text of about `bytes` bytes: lines of words, paths and numbers.
fn text(rng: &mut Rng, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 80);
    let mut line = 1;
    while out.len() < bytes {
        out.push_str(&format!("{line:>5}\t"));
        for _ in 0..(3 + rng.below(8)) {
            out.push_str(WORDS[rng.below(16) as usize]);
            out.push(if rng.below(5) == 0 { '.' } else { ' ' });
        }
        out.push_str(&format!(
            "/src/{}/{}.rs:{}\n",
            WORDS[rng.below(16) as usize],
            rng.below(900),
            rng.below(4000)
        ));
        line += 1;
    }
    out
}

fn args(rng: &mut Rng) -> Json {
    json!({
        "path": format!("/workspace/src/{}/{}.rs", WORDS[rng.below(16) as usize], rng.below(100)),
        "command": format!("grep -rn {} /workspace/src", WORDS[rng.below(16) as usize]),
        "limit": rng.below(500),
    })
}

fn observation(rng: &mut Rng) -> String {
    let size = 400 + rng.below(3000) as usize;
    text(rng, size)
}

/// Claude Code native transcript lines: per turn a response split over thinking, text
/// and tool_use entries sharing message.id, a hook notice, the tool result.
fn claude_code(rng: &mut Rng, target: usize) -> String {
    let mut out = String::new();
    let mut s = 0;
    while out.len() < target {
        s += 1;
        let sid = format!("session-{s}");
        let envelope = |uuid: String, parent: Option<String>| {
            json!({"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": "/work/project",
                   "sessionId": sid, "version": "2.1.0", "gitBranch": "main", "uuid": uuid, "timestamp": "2026-01-01T00:00:00.000Z"})
        };
        let mut e = envelope(format!("{s}-u0"), None);
        e["type"] = json!("user");
        e["message"] = json!({"role": "user", "content": text(rng, 300)});
        out.push_str(&e.to_string());
        out.push('\n');
        let mut parent = format!("{s}-u0");
        for t in 0..30 {
            let mid = format!("msg_{s}_{t}");
            let call = format!("toolu_{s}_{t}");
            let blocks = [
                json!({"type": "thinking", "thinking": text(rng, 200), "signature": "c2lnbmF0dXJlIGJ5dGVz"}),
                json!({"type": "text", "text": text(rng, 120)}),
                json!({"type": "tool_use", "id": call, "name": "Bash", "input": args(rng)}),
            ];
            for (b, block) in blocks.into_iter().enumerate() {
                let uuid = format!("{s}-a{t}-{b}");
                let mut e = envelope(uuid.clone(), Some(parent.clone()));
                e["type"] = json!("assistant");
                e["requestId"] = json!(format!("req_{s}_{t}"));
                e["message"] = json!({"model": "claude-model", "id": mid, "type": "message", "role": "assistant",
                    "content": [block], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": 4, "cache_read_input_tokens": 20000 + t, "output_tokens": 90}});
                out.push_str(&e.to_string());
                out.push('\n');
                parent = uuid;
            }
            let mut hook = envelope(format!("{s}-h{t}"), Some(parent.clone()));
            hook["type"] = json!("system");
            hook["content"] = json!("PreToolUse:Bash [hook] completed successfully");
            hook["level"] = json!("info");
            out.push_str(&hook.to_string());
            out.push('\n');
            let result = observation(rng);
            let uuid = format!("{s}-r{t}");
            let mut e = envelope(uuid.clone(), Some(parent.clone()));
            e["type"] = json!("user");
            e["message"] = json!({"role": "user", "content": [{"tool_use_id": call, "type": "tool_result", "content": result, "is_error": rng.below(10) == 0}]});
            e["toolUseResult"] = json!({"stdout": result, "stderr": "", "interrupted": false});
            out.push_str(&e.to_string());
            out.push('\n');
            parent = uuid;
        }
    }
    out
}

/// One SWE-agent trajectory (pretty-printed, as SWE-agent writes it) with many steps.
fn swe_agent(rng: &mut Rng, target: usize) -> String {
    let mut history = vec![
        json!({"role": "system", "content": text(rng, 2000), "agent": "main", "message_type": "system_prompt"}),
        json!({"role": "user", "content": text(rng, 1500), "agent": "main", "message_type": "observation"}),
    ];
    let mut trajectory = Vec::new();
    let mut size = 0;
    let mut t = 0;
    while size < target {
        t += 1;
        let thought = text(rng, 300);
        let command = format!("grep -rn {} src/", WORDS[rng.below(16) as usize]);
        let obs = observation(rng);
        size += 2 * (thought.len() + obs.len()) + 300;
        history.push(
            json!({"role": "assistant", "content": format!("{thought}\n```\n{command}\n```"),
            "thought": thought, "action": command, "agent": "main", "message_type": "action"}),
        );
        history.push(
            json!({"role": "user", "content": obs, "agent": "main", "message_type": "observation"}),
        );
        trajectory.push(
            json!({"action": command, "observation": obs, "response": "", "thought": thought,
            "execution_time": 0.5, "state": {"open_file": "n/a", "working_dir": "/repo"}}),
        );
    }
    let _ = t;
    serde_json::to_string_pretty(
        &json!({"environment": "main", "trajectory": trajectory, "history": history,
        "info": {"exit_status": "submitted", "model_stats": {"api_calls": t}}}),
    )
    .expect("serialising a value")
}

/// OpenHands evaluation output lines: events with the full model response on each
/// action and observation, as the current format records them.
fn openhands(rng: &mut Rng, target: usize) -> String {
    let mut out = String::new();
    let mut s = 0;
    while out.len() < target {
        s += 1;
        let mut history = vec![
            json!({"id": 0, "timestamp": "t", "source": "agent", "message": "system", "action": "system",
                   "args": {"content": text(rng, 3000), "tools": [{"type": "function", "function": {"name": "execute_bash", "parameters": {"type": "object"}}}]}}),
            json!({"id": 1, "timestamp": "t", "source": "user", "message": "task", "action": "message",
                   "args": {"content": text(rng, 800)}}),
        ];
        for t in 0..25 {
            let call = format!("toolu_{t}");
            let response = json!({"id": format!("gen-{s}-{t}"), "model": "m", "object": "chat.completion",
                "choices": [{"finish_reason": "tool_calls", "index": 0, "message": {"content": text(rng, 200), "role": "assistant",
                    "tool_calls": [{"index": 1, "function": {"arguments": args(rng).to_string(), "name": "execute_bash"}, "id": call, "type": "function"}]}}],
                "usage": {"completion_tokens": 80, "prompt_tokens": 5000 + t}});
            let meta = json!({"function_name": "execute_bash", "tool_call_id": call, "model_response": response, "total_calls_in_response": 1});
            history.push(json!({"id": 2 * t + 2, "timestamp": "t", "source": "agent", "message": "Running command", "action": "run",
                "tool_call_metadata": meta, "args": {"command": "ls", "thought": ""}, "llm_metrics": {"accumulated_cost": 0.1}}));
            history.push(json!({"id": 2 * t + 3, "timestamp": "t", "source": "agent", "message": "Command executed", "cause": 2 * t + 2,
                "observation": "run", "tool_call_metadata": meta, "content": observation(rng),
                "extras": {"command": "ls", "metadata": {"exit_code": 0, "working_dir": "/workspace", "prefix": "", "suffix": ""}}, "success": true}));
        }
        let record = json!({"instance_id": format!("repo__task-{s}"), "instruction": "task", "metadata": {"max_iterations": 100},
            "history": history, "metrics": {"accumulated_cost": 1.0}});
        out.push_str(&record.to_string());
        out.push('\n');
    }
    out
}

/// tau2-bench results: one pretty-printed object with many simulations.
fn tau2(rng: &mut Rng, target: usize) -> String {
    let mut sims = Vec::new();
    let mut size = 0;
    let msg = |role: &str, content: Json, calls: Json| {
        json!({"role": role, "content": content, "tool_calls": calls, "reasoning": null, "turn_idx": 1,
               "timestamp": "2026-01-01T00:00:00", "cost": 0.001, "usage": {"completion_tokens": 40, "prompt_tokens": 3000}, "raw_data": null, "errors": null})
    };
    while size < target {
        let mut messages = vec![msg(
            "assistant",
            json!("Hi! How can I help you today?"),
            Json::Null,
        )];
        for t in 0..12 {
            let user = text(rng, 200);
            let call = format!("call_{t}");
            let result = observation(rng);
            size += user.len() + result.len() + 900;
            messages.push(msg("user", json!(user), Json::Null));
            messages.push(msg("assistant", Json::Null, json!([{"id": call, "name": "get_order", "arguments": args(rng), "requestor": "assistant"}])));
            messages.push(json!({"id": call, "role": "tool", "content": result, "requestor": "assistant", "error": false, "turn_idx": 2, "timestamp": "t"}));
            messages.push(msg("assistant", json!(text(rng, 150)), Json::Null));
        }
        sims.push(json!({"id": format!("sim-{}", sims.len()), "task_id": "t1", "termination_reason": "user_stop",
            "reward_info": {"reward": 1.0}, "agent_cost": 0.1, "trial": 0, "messages": messages}));
    }
    serde_json::to_string_pretty(&json!({"timestamp": "t", "info": {"agent_info": {"implementation": "llm_agent"},
        "environment_info": {"domain_name": "retail", "policy": text(rng, 5000), "tool_defs": null}},
        "tasks": [{"id": "t1", "ticket": null}], "simulations": sims}))
    .expect("serialising a value")
}

/// OpenAI chat transcripts, one conversation per line.
fn openai_chat(rng: &mut Rng, target: usize) -> String {
    let mut out = String::new();
    while out.len() < target {
        let mut messages = vec![
            json!({"role": "system", "content": text(rng, 1000)}),
            json!({"role": "user", "content": text(rng, 400)}),
        ];
        for t in 0..20 {
            let call = format!("call_{t}");
            messages.push(json!({"role": "assistant", "content": text(rng, 150), "reasoning_content": text(rng, 200),
                "tool_calls": [{"id": call, "type": "function", "function": {"name": "search", "arguments": args(rng).to_string()}}]}));
            messages
                .push(json!({"role": "tool", "tool_call_id": call, "content": observation(rng)}));
        }
        out.push_str(&json!({"model": "m", "messages": messages}).to_string());
        out.push('\n');
    }
    out
}

/// Anthropic Messages API conversations, one per line.
fn anthropic(rng: &mut Rng, target: usize) -> String {
    let mut out = String::new();
    while out.len() < target {
        let mut messages = vec![json!({"role": "user", "content": text(rng, 400)})];
        for t in 0..20 {
            let call = format!("toolu_{t}");
            messages.push(json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": text(rng, 200), "signature": "c2ln"},
                {"type": "text", "text": text(rng, 150)},
                {"type": "tool_use", "id": call, "name": "search", "input": args(rng)}]}));
            messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": observation(rng)}]}));
        }
        out.push_str(
            &json!({"model": "m", "system": text(rng, 1000), "messages": messages}).to_string(),
        );
        out.push('\n');
    }
    out
}

fn inputs() -> Vec<(Kind, &'static str, String)> {
    let target = if common::measuring() {
        24 << 20
    } else {
        64 << 10
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    vec![
        (
            Kind::ClaudeCode,
            "transcript.jsonl",
            claude_code(&mut rng, target),
        ),
        (Kind::SweAgent, "run/task.traj", swe_agent(&mut rng, target)),
        (Kind::Openhands, "output.jsonl", openhands(&mut rng, target)),
        (Kind::Tau2, "results.json", tau2(&mut rng, target)),
        (
            Kind::OpenaiChat,
            "chats.jsonl",
            openai_chat(&mut rng, target),
        ),
        (
            Kind::AnthropicMessages,
            "messages.jsonl",
            anthropic(&mut rng, target),
        ),
    ]
}

/// One import of each input, timed in CPU time (per core: one thread), printed in MB/s.
fn one_pass(inputs: &[(Kind, &'static str, String)], opts: &Options) {
    for (kind, name, text) in inputs {
        let before = common::cpu::process_cpu_time();
        let imported = recap_import::import_text(*kind, Path::new(name), text, opts);
        let cpu = common::cpu::process_cpu_time()
            .zip(before)
            .map(|(after, before)| (after - before).as_secs_f64());
        // A check that the input is what the importer expects.
        assert!(
            !imported.sessions.is_empty(),
            "{kind}: {:?}",
            imported.problems.first()
        );
        assert!(
            imported
                .problems
                .iter()
                .all(|p| p.severity == recap_import::Severity::Lossy),
            "{kind}: {}",
            imported.problems[0]
        );
        let rate = cpu.filter(|s| *s > 0.0).map_or("-".to_string(), |s| {
            format!("{:.0}", text.len() as f64 / 1e6 / s)
        });
        eprintln!(
            "import/{kind}: {:.1} MB in {} sessions, {} turns: {rate} MB/s of CPU time (one pass)",
            text.len() as f64 / 1e6,
            imported.sessions.len(),
            imported.turns(),
        );
    }
}

fn import<M: Measurement>(c: &mut Criterion<M>) {
    let opts = Options::default();
    let inputs = inputs();
    one_pass(&inputs, &opts);
    let mut group = c.benchmark_group("import");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    for (kind, name, text) in &inputs {
        group.throughput(Throughput::BytesDecimal(text.len() as u64));
        group.bench_function(kind.name(), |b| {
            b.iter(|| recap_import::import_text(*kind, Path::new(name), black_box(text), &opts))
        });
    }
    group.finish();
    let mut group = c.benchmark_group("import-and-write");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    for (kind, name, text) in &inputs {
        group.throughput(Throughput::BytesDecimal(text.len() as u64));
        group.bench_function(kind.name(), |b| {
            b.iter(|| {
                let imported =
                    recap_import::import_text(*kind, Path::new(name), black_box(text), &opts);
                let mut out = Vec::with_capacity(text.len());
                imported.write_jsonl(&mut out).expect("writing to memory");
                out
            })
        });
    }
    group.finish();
}

// criterion_main! fixes the measurement at compile time; the clock is chosen at run
// time here (`RECAP_BENCH_CLOCK=cpu`), so main is written out.
fn main() {
    if common::cpu::cpu_clock_requested() {
        let mut c = Criterion::default()
            .with_measurement(common::cpu::ProcessCpuTime)
            .configure_from_args();
        import(&mut c);
        c.final_summary();
    } else {
        let mut c = Criterion::default().configure_from_args();
        import(&mut c);
        c.final_summary();
    }
}
