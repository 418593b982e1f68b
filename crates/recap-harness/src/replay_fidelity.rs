//! Where does the replay-fidelity gap of the ptc-runner corpus come from?
//!
//! `cargo run --release -p recap-import --example replay_fidelity -- <ptc-runner dir> [--csv out.csv]`
//! (the example is this module's command line; `crates/recap-import/tests/replay_fidelity.rs`
//! checks the figures it prints).
//!
//! Reads every `llm-request` of the inspection logs (the exact request: system text,
//! messages with their tool calls, tool schema) and its reply's provider counts, and
//! counts the request several ways, adding one factor at a time:
//!
//! - `recap_o200k`: what `recap run` reports — SPEC section 9's formula
//!   (`3 + Σ(3 + tokens(role) + tokens(content))`) over recap's replayed messages
//!   (assistant = content + program in a clojure fence), o200k_base.
//! - `recap_ds`: the same formula and messages, DeepSeek-V3 tokenizer.
//! - `text_ds`: only the message texts (no per-message overhead), DeepSeek-V3.
//! - `wire_ds`: the texts as the runner sent them: the program as raw tool-call
//!   argument text instead of the fence, plus the tool schema JSON.
//! - `wire_json_ds`: as `wire_ds` but with the arguments as a JSON object string
//!   (`{"program": "..."}`, escaped), the OpenAI wire shape.
//!
//! Every count is compared with the provider's recorded `input` (which includes the
//! cached tokens: `cache_read <= input` on every call). The summary fits the provider's
//! template overhead on the calls that report cached tokens, splits the calls into the
//! route that follows it and the route that does not, and breaks each route's gap into
//! tokenizer, tool schema, wrapper and template shares, with least-squares fits of what
//! each route counts and bills (see `crates/recap-import/README.md`, "Replay
//! fidelity", and `docs/results.md`).

use recap_import::ptc_runner::{assistant_text, is_inspection_log};
use recap_import::walk;
use serde_json::Value as Json;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tiktoken::CoreBpe;

/// A tokenizer that remembers its counts: every request re-sends the whole history, so
/// the same texts come back call after call. (Lookup only; nothing iterates the map.)
struct Memo {
    bpe: &'static CoreBpe,
    seen: RefCell<HashMap<String, usize>>,
}

impl Memo {
    fn new(bpe: &'static CoreBpe) -> Self {
        Memo {
            bpe,
            seen: RefCell::new(HashMap::new()),
        }
    }

    fn count(&self, text: &str) -> usize {
        if let Some(&n) = self.seen.borrow().get(text) {
            return n;
        }
        let n = self.bpe.count(text);
        self.seen.borrow_mut().insert(text.to_string(), n);
        n
    }
}

/// One recorded request and its counts.
pub struct Call {
    pub run: String,
    pub index: usize,
    pub messages: usize,
    pub recorded: u64,
    pub cache_read: u64,
    pub output: u64,
    pub cost: f64,
    pub recap_o200k: usize,
    pub recap_ds: usize,
    pub text_ds: usize,
    pub wire_ds: usize,
    pub wire_json_ds: usize,
    pub schema_ds: usize,
    /// Tokens of the system text alone (DeepSeek-V3).
    pub system_ds: usize,
    /// The wire texts counted with o200k_base, and their size in characters and digits:
    /// to tell which counting scheme a route's numbers follow.
    pub wire_o200k: usize,
    pub wire_chars: usize,
    pub wire_digits: usize,
    /// DeepSeek-V3 tokens of the request's assistant contents, programs and tool
    /// results: which part a route counts differently.
    pub content_ds: usize,
    pub program_ds: usize,
    pub feedback_ds: usize,
    /// DeepSeek-V3 tokens of the hex runs of 16+ characters (content digests) in the
    /// wire texts, each counted on its own.
    pub hex_ds: usize,
}

/// The example's command line: `<ptc-runner-loop dir> [--csv out.csv]`; prints the
/// summary.
pub fn run(args: impl IntoIterator<Item = String>) -> Result<(), String> {
    let mut args = args.into_iter();
    let mut dir = None;
    let mut csv = None;
    while let Some(a) = args.next() {
        if a == "--csv" {
            csv = Some(PathBuf::from(args.next().ok_or("--csv needs a path")?));
        } else {
            dir = Some(PathBuf::from(a));
        }
    }
    let dir = dir.ok_or("usage: replay_fidelity <ptc-runner-loop dir> [--csv out.csv]")?;
    let calls = analyse(&dir)?;
    if let Some(path) = csv {
        std::fs::write(&path, to_csv(&calls)).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    print!("{}", summary(&calls));
    Ok(())
}

/// Every recorded request under `dir` with its counts, files in sorted order.
pub fn analyse(dir: &Path) -> Result<Vec<Call>, String> {
    let o200k =
        &Memo::new(tiktoken::get_encoding("o200k_base").ok_or("tiktoken lacks o200k_base")?);
    let ds = &Memo::new(tiktoken::get_encoding("deepseek_v3").ok_or("tiktoken lacks deepseek_v3")?);
    let files = walk::collect(
        &[dir.to_path_buf()],
        is_inspection_log,
        "run.inspection.jsonl files",
    )
    .map_err(|e| e.to_string())?;
    let mut calls = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let run = file
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        calls.extend(
            calls_of(&text, &run, o200k, ds).map_err(|e| format!("{}: {e}", file.display()))?,
        );
    }
    if calls.is_empty() {
        return Err(format!("no llm-request calls under {}", dir.display()));
    }
    Ok(calls)
}

/// The requests of one inspection log, in order, paired with their replies' counts.
fn calls_of(text: &str, run: &str, o200k: &Memo, ds: &Memo) -> Result<Vec<Call>, String> {
    let mut requests: BTreeMap<String, (usize, Json)> = BTreeMap::new();
    let mut calls = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let r: Json = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        let payload = &r["payload"];
        if payload["name"] != "llm-request" {
            continue;
        }
        let id = r["correlation"]["capability_id"]
            .as_str()
            .unwrap_or("")
            .to_string();
        match r["record_type"].as_str() {
            Some("capability-input") => {
                requests.insert(id, (n + 1, payload["arguments"].clone()));
            }
            Some("capability-output") => {
                let Some((_, request)) = requests.remove(&id) else {
                    return Err(format!("line {}: reply without request {id}", n + 1));
                };
                let tokens = &payload["result"]["value"]["tokens"];
                let Some(recorded) = tokens["input"].as_u64() else {
                    continue; // a failed request records no counts
                };
                let index = calls.len() + 1;
                calls.push(count(&request, tokens, recorded, run, index, o200k, ds));
            }
            _ => {}
        }
    }
    Ok(calls)
}

fn count(
    request: &Json,
    tokens: &Json,
    recorded: u64,
    run: &str,
    index: usize,
    o200k: &Memo,
    ds: &Memo,
) -> Call {
    let system = request["system"].as_str().unwrap_or("");
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let schema = request["tools"].to_string();
    // recap's replay: role + text per message (the runner's `tool` role is recap's user).
    let mut recap: Vec<(&str, String)> = vec![("system", system.to_string())];
    // The wire: the text the provider's template embeds (content, raw args or JSON args).
    let mut wire: Vec<String> = vec![system.to_string(), schema.clone()];
    let mut wire_json: Vec<String> = vec![system.to_string(), schema.clone()];
    let (mut content_ds, mut program_ds, mut feedback_ds) = (0, 0, 0);
    for m in &messages {
        let content = m["content"].as_str();
        let calls = m["tool_calls"].as_array().cloned().unwrap_or_default();
        match m["role"].as_str() {
            Some("assistant") => {
                recap.push(("assistant", assistant_text(content, &calls)));
                content_ds += ds.count(content.unwrap_or(""));
                let mut raw = content.unwrap_or("").to_string();
                let mut json = raw.clone();
                for c in &calls {
                    raw.push_str(c["name"].as_str().unwrap_or(""));
                    raw.push_str(c["args"]["program"].as_str().unwrap_or(""));
                    program_ds += ds.count(c["args"]["program"].as_str().unwrap_or(""));
                    json.push_str(c["name"].as_str().unwrap_or(""));
                    json.push_str(&c["args"].to_string());
                }
                wire.push(raw);
                wire_json.push(json);
            }
            _ => {
                if m["role"] == "tool" {
                    feedback_ds += ds.count(content.unwrap_or(""));
                }
                recap.push(("user", content.unwrap_or("").to_string()));
                wire.push(content.unwrap_or("").to_string());
                wire_json.push(content.unwrap_or("").to_string());
            }
        }
    }
    let formula = |bpe: &Memo| {
        3 + recap
            .iter()
            .map(|(role, text)| 3 + bpe.count(role) + bpe.count(text))
            .sum::<usize>()
    };
    let texts = |bpe: &Memo, v: &[String]| v.iter().map(|t| bpe.count(t)).sum::<usize>();
    Call {
        run: run.to_string(),
        index,
        messages: recap.len(),
        recorded,
        cache_read: tokens["cache_read"].as_u64().unwrap_or(0),
        output: tokens["output"].as_u64().unwrap_or(0),
        cost: tokens["total_cost"].as_f64().unwrap_or(0.0),
        recap_o200k: formula(o200k),
        recap_ds: formula(ds),
        text_ds: recap.iter().map(|(_, t)| ds.count(t)).sum(),
        wire_ds: texts(ds, &wire),
        wire_json_ds: texts(ds, &wire_json),
        schema_ds: ds.count(&schema),
        system_ds: ds.count(system),
        wire_o200k: texts(o200k, &wire),
        wire_chars: wire.iter().map(|t| t.chars().count()).sum(),
        wire_digits: wire
            .iter()
            .map(|t| t.chars().filter(char::is_ascii_digit).count())
            .sum(),
        content_ds,
        program_ds,
        feedback_ds,
        hex_ds: wire
            .iter()
            .flat_map(|t| hex_runs(t))
            .map(|h| ds.count(h))
            .sum(),
    }
}

/// Runs of 16 or more hex digits (sha256 content digests, call ids).
fn hex_runs(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (c.is_ascii_hexdigit(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if i - s >= 16 {
                    out.push(&text[s..i]);
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

fn to_csv(calls: &[Call]) -> String {
    let mut s = String::from(
        "run,call,messages,recorded_input,cache_read,output,total_cost,recap_o200k,recap_ds,text_ds,wire_ds,wire_json_ds,schema_ds,system_ds,wire_o200k,wire_chars,wire_digits,content_ds,program_ds,feedback_ds,hex_ds\n",
    );
    for c in calls {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            c.run,
            c.index,
            c.messages,
            c.recorded,
            c.cache_read,
            c.output,
            c.cost,
            c.recap_o200k,
            c.recap_ds,
            c.text_ds,
            c.wire_ds,
            c.wire_json_ds,
            c.schema_ds,
            c.system_ds,
            c.wire_o200k,
            c.wire_chars,
            c.wire_digits,
            c.content_ds,
            c.program_ds,
            c.feedback_ds,
            c.hex_ds
        );
    }
    s
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

fn spread(values: impl Iterator<Item = f64>) -> String {
    let mut v: Vec<f64> = values.collect();
    if v.is_empty() {
        return "-".into();
    }
    v.sort_by(f64::total_cmp);
    format!(
        "{:.3} ({:.3}..{:.3}, min {:.3}, max {:.3})",
        quantile(&v, 0.5),
        quantile(&v, 0.1),
        quantile(&v, 0.9),
        v[0],
        v[v.len() - 1]
    )
}

/// Least squares `y = a + b x`.
fn fit_line(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(sx, sy), (x, y)| (sx + x, sy + y));
    let (mx, my) = (sx / n, sy / n);
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(sxy, sxx), (x, y)| {
        (sxy + (x - mx) * (y - my), sxx + (x - mx) * (x - mx))
    });
    let b = if sxx == 0.0 { 0.0 } else { sxy / sxx };
    (my - b * mx, b)
}

/// Ordinary least squares through the normal equations: coefficients and the RMS error.
/// (A handful of columns; Gaussian elimination with partial pivoting is plenty.)
pub fn least_squares(x: &[Vec<f64>], y: &[f64]) -> (Vec<f64>, f64) {
    let k = x.first().map_or(0, Vec::len);
    let mut m: Vec<Vec<f64>> = (0..k)
        .map(|i| {
            let mut row: Vec<f64> = (0..k)
                .map(|j| x.iter().map(|r| r[i] * r[j]).sum())
                .collect();
            row.push(x.iter().zip(y).map(|(r, v)| r[i] * v).sum());
            row
        })
        .collect();
    // An all-zero column (no cached tokens in a group) gets coefficient 0.
    for (i, row) in m.iter_mut().enumerate() {
        if row[i] == 0.0 {
            *row = (0..=k).map(|c| f64::from(u8::from(c == i))).collect();
        }
    }
    for i in 0..k {
        let pivot = (i..k)
            .max_by(|&a, &b| m[a][i].abs().total_cmp(&m[b][i].abs()))
            .unwrap_or(i);
        m.swap(i, pivot);
        let pivot_row = m[i].clone();
        for (r, row) in m.iter_mut().enumerate() {
            if r != i && pivot_row[i] != 0.0 {
                let f = row[i] / pivot_row[i];
                for (cell, p) in row.iter_mut().zip(&pivot_row).skip(i) {
                    *cell -= f * p;
                }
            }
        }
    }
    let coef: Vec<f64> = (0..k)
        .map(|i| {
            if m[i][i] == 0.0 {
                0.0
            } else {
                m[i][k] / m[i][i]
            }
        })
        .collect();
    let sq: f64 = x
        .iter()
        .zip(y)
        .map(|(r, v)| (r.iter().zip(&coef).map(|(a, c)| a * c).sum::<f64>() - v).powi(2))
        .sum();
    (coef, (sq / y.len().max(1) as f64).sqrt())
}

/// How a group's recorded counts depend on each part of the request, and what it was
/// billed per million tokens (the cost fit tells whether the routes price differently).
fn regressions(group: &[&Call]) -> String {
    let mut s = String::new();
    let y: Vec<f64> = group.iter().map(|c| c.recorded as f64).collect();
    let x: Vec<Vec<f64>> = group
        .iter()
        .map(|c| vec![1.0, c.wire_ds as f64, c.messages as f64])
        .collect();
    let (k, rmse) = least_squares(&x, &y);
    let _ = writeln!(
        s,
        "  fit recorded = {:.1} + {:.3} x wire_ds + {:.2} x messages (rms error {rmse:.1} tokens)",
        k[0], k[1], k[2]
    );
    let x: Vec<Vec<f64>> = group
        .iter()
        .map(|c| {
            vec![
                1.0,
                c.content_ds as f64,
                c.program_ds as f64,
                (c.feedback_ds as f64),
                c.hex_ds as f64,
                c.messages as f64,
            ]
        })
        .collect();
    let (k, rmse) = least_squares(&x, &y);
    let _ = writeln!(
        s,
        "  fit recorded = {:.0} + {:.3} x content + {:.3} x program + {:.3} x tool results {:+.3} x hex digests + {:.2} x messages (rms error {rmse:.1} tokens)",
        k[0], k[1], k[2], k[3], k[4], k[5]
    );
    let cost: Vec<f64> = group.iter().map(|c| c.cost * 1e6).collect();
    let x: Vec<Vec<f64>> = group
        .iter()
        .map(|c| {
            vec![
                (c.recorded - c.cache_read) as f64,
                c.cache_read as f64,
                c.output as f64,
            ]
        })
        .collect();
    let (k, rmse) = least_squares(&x, &cost);
    let _ = writeln!(
        s,
        "  billed $/M tokens: uncached input {:.4}, cached input {:.4}, output {:.4} (rms error {rmse:.2} micro-$)",
        k[0], k[1], k[2]
    );
    s
}

/// A call is on the "template route" when the provider's count is the wire text in
/// DeepSeek-V3 tokens plus the template fitted on the calls that report cached tokens.
pub const ROUTE_TOLERANCE: f64 = 20.0;

/// The provider's template overhead: `recorded - wire_ds = fixed + per_message x messages`,
/// fitted on the calls that report cached tokens (a recorded criterion, independent of
/// the counts themselves).
pub struct Template {
    pub fixed: f64,
    pub per_message: f64,
    pub fitted_on: usize,
}

impl Template {
    pub fn fit(calls: &[Call]) -> Template {
        let cached: Vec<(f64, f64)> = calls
            .iter()
            .filter(|c| c.cache_read > 0)
            .map(|c| (c.messages as f64, c.recorded as f64 - c.wire_ds as f64))
            .collect();
        let (fixed, per_message) = fit_line(&cached);
        Template {
            fixed,
            per_message,
            fitted_on: cached.len(),
        }
    }

    pub fn overhead(&self, c: &Call) -> f64 {
        self.fixed + self.per_message * c.messages as f64
    }

    /// Recorded minus predicted, in tokens.
    pub fn error(&self, c: &Call) -> f64 {
        c.recorded as f64 - c.wire_ds as f64 - self.overhead(c)
    }
}

pub fn summary(calls: &[Call]) -> String {
    let mut s = String::new();
    let t = Template::fit(calls);
    let template = |c: &Call| t.overhead(c);
    let error = |c: &Call| t.error(c);
    let _ = writeln!(
        s,
        "template fitted on {} calls with cached tokens: recorded = wire_ds + {:.1} + {:.2} x messages",
        t.fitted_on, t.fixed, t.per_message
    );
    let on_route = |c: &Call| error(c).abs() <= ROUTE_TOLERANCE;
    type Filter<'a> = Box<dyn Fn(&Call) -> bool + 'a>;
    let groups: [(&str, Filter); 3] = [
        ("all", Box::new(|_| true)),
        (
            "route A (within 20 tokens of the template)",
            Box::new(on_route),
        ),
        ("route B (the rest)", Box::new(move |c| !on_route(c))),
    ];
    type Measure = fn(&Call) -> usize;
    let measures: [(&str, Measure); 5] = [
        ("recap_o200k", |c| c.recap_o200k),
        ("recap_ds", |c| c.recap_ds),
        ("text_ds", |c| c.text_ds),
        ("wire_ds", |c| c.wire_ds),
        ("wire_json_ds", |c| c.wire_json_ds),
    ];
    for (name, keep) in &groups {
        let group: Vec<&Call> = calls.iter().filter(|c| keep(c)).collect();
        let hits = group.iter().filter(|c| c.cache_read > 0).count();
        let _ = writeln!(
            s,
            "{name}: {} calls ({hits} report cached tokens)",
            group.len()
        );
        if group.is_empty() {
            continue;
        }
        for (m, f) in measures {
            let _ = writeln!(
                s,
                "  {m:<13} / recorded: median {}",
                spread(group.iter().map(|c| f(c) as f64 / c.recorded as f64))
            );
        }
        let _ = writeln!(
            s,
            "  (wire_ds + template) / recorded: median {}",
            spread(
                group
                    .iter()
                    .map(|c| (c.wire_ds as f64 + template(c)) / c.recorded as f64)
            )
        );
        let _ = writeln!(
            s,
            "  recorded - (wire_ds + template), tokens: median {}",
            spread(group.iter().map(|c| error(c)))
        );
        // Each factor's share of the recorded count, in the order recap closes the gap.
        let share =
            |f: &dyn Fn(&Call) -> f64| spread(group.iter().map(|c| f(c) / c.recorded as f64));
        let _ = writeln!(
            s,
            "  gap of recap_o200k, as shares of recorded (median (p10..p90)):"
        );
        let _ = writeln!(
            s,
            "    tokenizer o200k -> deepseek_v3: {}",
            share(&|c| c.recap_ds as f64 - c.recap_o200k as f64)
        );
        let _ = writeln!(
            s,
            "    tool schema:                    {}",
            share(&|c| c.schema_ds as f64)
        );
        let _ = writeln!(
            s,
            "    tool-call wrapper vs fence:     {}",
            share(&|c| (c.wire_ds - c.schema_ds) as f64 - c.text_ds as f64)
        );
        let _ = writeln!(
            s,
            "    chat template vs 3+3/message:   {}",
            share(&|c| template(c) - (c.recap_ds - c.text_ds) as f64)
        );
        let _ = writeln!(
            s,
            "    unexplained:                    {}",
            share(&|c| error(c))
        );
        let _ = writeln!(
            s,
            "    of which hex digests (their deepseek_v3 tokens): {}",
            share(&|c| c.hex_ds as f64)
        );
        s.push_str(&regressions(&group));
    }
    s
}
