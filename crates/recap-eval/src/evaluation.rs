//! One evaluation: sample the calls, render each strategy's prompt for them, ask the
//! model (each distinct request once), grade the answers, and aggregate with bootstrap
//! intervals. The first strategy is the control (`full-history`).

use crate::action::Action;
use crate::bootstrap::{mean_interval, ratio_interval};
use crate::options::EvalOptions;
use crate::pool;
use crate::probes::{self, Fact, Probe};
use crate::report::{EvalReport, Measure, SampleInfo, StrategyResult, SummarizerCost};
use crate::sample::{CallRef, sample_calls};
use recap_core::tokens::message_tokens;
use recap_core::{Form, Message, Session, Strategy, TokenCounter};
use recap_llm::endpoint::{Completion, Endpoint, EndpointError, summarizer_purpose};
use recap_llm::request::{ChatRequest, Key, Tools, session_tools};
use recap_llm::response::Reply;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::sync::Arc;

/// Purposes under which requests are accounted ([`Endpoint::purposes`]).
pub const NEXT_ACTION: &str = "next-action";
pub const PROBE: &str = "probe";
pub const JUDGE: &str = "judge";

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("nothing to evaluate: {0}")]
    Empty(String),
    #[error("shard {shard} holds none of the {sampled} sampled calls: nothing to ask")]
    EmptyShard {
        shard: recap_harness::Shard,
        sampled: usize,
    },
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
}

/// What one strategy rendered for one sampled call.
enum Rendered {
    NotApplicable,
    Failed,
    Prompt(Vec<Message>),
}

/// What the evaluation asks about one rendered prompt.
#[derive(Clone, Copy)]
enum Question {
    NextAction,
    Probe(usize),
}

struct Ask {
    strategy: usize,
    call: usize,
    question: Question,
    request: usize,
}

/// The distinct requests of a phase, each with the purpose it is accounted under.
#[derive(Default)]
struct Requests {
    list: Vec<(ChatRequest, &'static str)>,
    index: HashMap<Key, usize>,
}

impl Requests {
    fn add(&mut self, r: ChatRequest, purpose: &'static str) -> usize {
        if let Some(&i) = self.index.get(&r.key) {
            return i;
        }
        self.index.insert(r.key, self.list.len());
        self.list.push((r, purpose));
        self.list.len() - 1
    }

    /// Every request asked, on `threads` threads; stops at the first fatal error.
    fn ask(
        &self,
        endpoint: &Endpoint,
        threads: usize,
    ) -> Result<Vec<Result<Arc<Completion>, EndpointError>>, EvalError> {
        let answers = pool::run(
            &self.list,
            threads,
            || endpoint.fatal().is_some(),
            |(r, purpose)| endpoint.complete(r, purpose),
        );
        if let Some(e) = endpoint.fatal() {
            return Err(e.clone().into());
        }
        answers
            .into_iter()
            .map(|a| a.ok_or_else(|| EvalError::Empty("a request was skipped".into())))
            .collect()
    }
}

/// Runs the evaluation. `strategies[0]` is the control.
pub fn evaluate(
    sessions: &[Session],
    strategies: &[Arc<dyn Strategy>],
    endpoint: &Endpoint,
    counter: &dyn TokenCounter,
    options: &EvalOptions,
) -> Result<EvalReport, EvalError> {
    if strategies.is_empty() {
        return Err(EvalError::Empty("no strategy".into()));
    }
    let (sample, sampled) = draw_sample(sessions, options)?;
    let call_probes = probes_of_sample(sessions, &sample, options);

    let rendered = render_all(sessions, strategies, &sample, options.threads);
    if let Some(e) = endpoint.fatal() {
        return Err(e.clone().into());
    }

    let (requests, asks) = build_requests(sessions, &sample, &rendered, &call_probes, options);
    let answers = requests.ask(endpoint, options.threads)?;
    let (judge_requests, judge_of) = judge_requests(&asks, &answers, &call_probes, options);
    let verdicts = judge_requests.ask(endpoint, options.threads)?;

    let tokens = prompt_tokens_all(&rendered, counter, options.threads);
    let grades = grade_all(
        sessions,
        &sample,
        &call_probes,
        &asks,
        &answers,
        &judge_of,
        &verdicts,
        strategies.len(),
    );
    let purposes = endpoint.purposes();
    let mut results = Vec::new();
    for (s, strategy) in strategies.iter().enumerate() {
        let spec = strategy.spec();
        let summarizer = purposes
            .get(&summarizer_purpose(&spec))
            .map(|t| SummarizerCost {
                requests: t.requests,
                prompt_tokens: t.prompt_tokens,
                completion_tokens: t.completion_tokens,
            });
        results.push(strategy_result(
            spec, s, &rendered, &tokens, &grades, summarizer, options,
        ));
    }
    let probes_asked = call_probes.iter().map(Vec::len).sum();
    let mut report = EvalReport::new(
        endpoint.url().to_string(),
        options,
        sample_info(sessions, &sample, options, probes_asked),
        results,
        endpoint.totals(),
        purposes,
    );
    if let Some(shard) = options.shard {
        report.notes.push(format!(
            "shard {shard}: {} of the {sampled} sampled calls, those of its sessions; merge the \
             shards' caches (--merge-cache) and run without --shard for the whole evaluation",
            sample.len()
        ));
    }
    Ok(report)
}

/// The sampled calls this evaluation asks about (those of its shard, if any) and how many
/// the whole corpus's sample holds.
fn draw_sample(
    sessions: &[Session],
    options: &EvalOptions,
) -> Result<(Vec<CallRef>, usize), EvalError> {
    let calls_per_session: Vec<usize> = sessions.iter().map(Session::turn_count).collect();
    let mut sample = sample_calls(&calls_per_session, options.sample, options.seed);
    if sample.is_empty() {
        return Err(EvalError::Empty(
            "the corpora have no call whose next turn was recorded".into(),
        ));
    }
    let sampled = sample.len();
    if let Some(shard) = options.shard {
        sample.retain(|c| shard.owns_id(&sessions[c.session].id));
        if sample.is_empty() {
            return Err(EvalError::EmptyShard { shard, sampled });
        }
    }
    Ok((sample, sampled))
}

/// The probes of each sampled call (none when probes are off).
fn probes_of_sample(
    sessions: &[Session],
    sample: &[CallRef],
    options: &EvalOptions,
) -> Vec<Vec<Probe>> {
    let facts: HashMap<usize, Vec<Fact>> = if options.probes {
        let mut m = HashMap::new();
        for c in sample {
            m.entry(c.session)
                .or_insert_with(|| probes::session_facts(&sessions[c.session]));
        }
        m
    } else {
        HashMap::new()
    };
    sample
        .iter()
        .map(|c| match facts.get(&c.session) {
            Some(f) => {
                probes::probes_for_call(f, c.k, options.probes_per_call, options.seed, c.session)
            }
            None => Vec::new(),
        })
        .collect()
}

/// The next-action and probe requests of every rendered prompt, identical ones merged,
/// and what each strategy's call asked.
fn build_requests(
    sessions: &[Session],
    sample: &[CallRef],
    rendered: &[Vec<Rendered>],
    call_probes: &[Vec<Probe>],
    options: &EvalOptions,
) -> (Requests, Vec<Ask>) {
    let mut tools: HashMap<usize, Vec<Json>> = HashMap::new();
    for c in sample {
        if sessions[c.session].form == Form::Chat {
            tools
                .entry(c.session)
                .or_insert_with(|| session_tools(&sessions[c.session]));
        }
    }
    // Bodies are built and hashed on every thread (each is a whole prompt), then
    // merged in order so that identical requests become one.
    let jobs: Vec<(usize, usize)> = (0..rendered.len())
        .flat_map(|s| (0..sample.len()).map(move |i| (s, i)))
        .collect();
    let built = pool::run(
        &jobs,
        options.threads,
        || false,
        |&(s, i)| {
            let Rendered::Prompt(messages) = &rendered[s][i] else {
                return Vec::new();
            };
            let c = sample[i];
            let session_tools = tools.get(&c.session).map(Vec::as_slice);
            let mut out = Vec::new();
            if options.next_action {
                let t = session_tools.map_or(Tools::None, Tools::Offer);
                let r = ChatRequest::new(&options.sampling, messages, t);
                out.push((Question::NextAction, r, NEXT_ACTION));
            }
            for (j, probe) in call_probes[i].iter().enumerate() {
                let question = Message::user(probe.question.as_str());
                let t = session_tools.map_or(Tools::None, Tools::Describe);
                let r = ChatRequest::with_question(&options.sampling, messages, Some(&question), t);
                out.push((Question::Probe(j), r, PROBE));
            }
            out
        },
    );
    let mut requests = Requests::default();
    let mut asks = Vec::new();
    for (&(s, i), made) in jobs.iter().zip(built) {
        for (question, r, purpose) in made.unwrap_or_default() {
            asks.push(Ask {
                strategy: s,
                call: i,
                question,
                request: requests.add(r, purpose),
            });
        }
    }
    (requests, asks)
}

/// The judge's requests (none unless judging) and, per probe request, its judge request.
/// The judge reads each probe answer once, whichever strategies led to it.
fn judge_requests(
    asks: &[Ask],
    answers: &[Result<Arc<Completion>, EndpointError>],
    call_probes: &[Vec<Probe>],
    options: &EvalOptions,
) -> (Requests, HashMap<usize, usize>) {
    let mut judge_requests = Requests::default();
    let mut judge_of: HashMap<usize, usize> = HashMap::new();
    if options.judge {
        for a in asks {
            if let Question::Probe(j) = a.question
                && let Ok(c) = &answers[a.request]
                && let Ok(reply) = &c.reply
            {
                let probe = &call_probes[a.call][j];
                let prompt = probes::judge_prompt(
                    &probe.question,
                    &probe.fact.text,
                    reply.content.as_deref().unwrap_or(""),
                );
                let r = ChatRequest::new(&options.sampling, &[Message::user(prompt)], Tools::None);
                judge_of.insert(a.request, judge_requests.add(r, JUDGE));
            }
        }
    }
    (judge_requests, judge_of)
}

/// What the report says of the sample.
fn sample_info(
    sessions: &[Session],
    sample: &[CallRef],
    options: &EvalOptions,
    probes: usize,
) -> SampleInfo {
    SampleInfo {
        requested: options.sample,
        calls: sample.len(),
        sessions: {
            let mut s: Vec<usize> = sample.iter().map(|c| c.session).collect();
            s.dedup();
            s.len()
        },
        chat_calls: sample
            .iter()
            .filter(|c| sessions[c.session].form == Form::Chat)
            .count(),
        ptc_calls: sample
            .iter()
            .filter(|c| sessions[c.session].form == Form::Ptc)
            .count(),
        probes,
    }
}

/// Every strategy's prompt for every sampled call: one job per (strategy, session),
/// rendering that session's sampled calls in order through one replay.
fn render_all(
    sessions: &[Session],
    strategies: &[Arc<dyn Strategy>],
    sample: &[CallRef],
    threads: usize,
) -> Vec<Vec<Rendered>> {
    // Sampled calls of each session, as (index in the sample, k); the sample is sorted.
    let mut by_session: Vec<(usize, Vec<(usize, usize)>)> = Vec::new();
    for (i, c) in sample.iter().enumerate() {
        match by_session.last_mut() {
            Some((s, calls)) if *s == c.session => calls.push((i, c.k)),
            _ => by_session.push((c.session, vec![(i, c.k)])),
        }
    }
    let jobs: Vec<(usize, usize)> = (0..strategies.len())
        .flat_map(|s| (0..by_session.len()).map(move |j| (s, j)))
        .collect();
    let done = pool::run(
        &jobs,
        threads,
        || false,
        |&(s, j)| {
            let strategy = &strategies[s];
            let (session_index, calls) = &by_session[j];
            let session = &sessions[*session_index];
            if !strategy.applies_to(session) {
                return calls
                    .iter()
                    .map(|_| Rendered::NotApplicable)
                    .collect::<Vec<_>>();
            }
            let mut replay = strategy.open();
            // Each prompt whole: the replay is told the caller holds nothing.
            calls
                .iter()
                .map(|&(_, k)| match replay.call(session, k, 0) {
                    Ok(d) => Rendered::Prompt(d.tail),
                    Err(_) => Rendered::Failed,
                })
                .collect()
        },
    );
    let mut out: Vec<Vec<Rendered>> = (0..strategies.len())
        .map(|_| (0..sample.len()).map(|_| Rendered::Failed).collect())
        .collect();
    for (&(s, j), result) in jobs.iter().zip(done) {
        for (&(i, _), r) in by_session[j].1.iter().zip(result.unwrap_or_default()) {
            out[s][i] = r;
        }
    }
    out
}

/// One graded question.
#[derive(Debug, Clone, Copy, Default)]
struct Grade {
    /// `None`: no answer (the request failed).
    correct: Option<bool>,
    first_tool: Option<bool>,
    judged: Option<bool>,
    malformed: bool,
}

/// Per strategy, per sampled call: the next-action grade and the probe grades.
struct Grades {
    next: Vec<Vec<Option<Grade>>>,
    probes: Vec<Vec<Vec<Grade>>>,
}

#[allow(clippy::too_many_arguments)]
fn grade_all(
    sessions: &[Session],
    sample: &[CallRef],
    call_probes: &[Vec<Probe>],
    asks: &[Ask],
    answers: &[Result<Arc<Completion>, EndpointError>],
    judge_of: &HashMap<usize, usize>,
    verdicts: &[Result<Arc<Completion>, EndpointError>],
    strategies: usize,
) -> Grades {
    let mut g = Grades {
        next: vec![vec![None; sample.len()]; strategies],
        probes: vec![vec![Vec::new(); sample.len()]; strategies],
    };
    for a in asks {
        let answer = &answers[a.request];
        let c = sample[a.call];
        let session = &sessions[c.session];
        let reply: Option<Result<&Reply, ()>> = match answer {
            Ok(done) => Some(done.reply.as_ref().map_err(|_| ())),
            Err(_) => None,
        };
        match a.question {
            Question::NextAction => {
                let grade = match reply {
                    None => Grade::default(),
                    Some(Err(())) => Grade {
                        correct: Some(false),
                        first_tool: Some(false),
                        malformed: true,
                        ..Grade::default()
                    },
                    Some(Ok(reply)) => {
                        let (recorded, given) = match session.form {
                            Form::Chat => (
                                Action::of_chat_turn(&session.chat_turns[c.k]),
                                Action::of_chat_reply(reply),
                            ),
                            Form::Ptc => (
                                Action::of_program(&session.turns[c.k].program),
                                Action::of_ptc_reply(reply),
                            ),
                        };
                        Grade {
                            correct: Some(recorded.agrees_with(&given)),
                            first_tool: Some(recorded.same_first_tool(&given)),
                            ..Grade::default()
                        }
                    }
                };
                g.next[a.strategy][a.call] = Some(grade);
            }
            Question::Probe(j) => {
                let fact = &call_probes[a.call][j].fact.text;
                let judged = judge_of
                    .get(&a.request)
                    .and_then(|&v| verdicts[v].as_ref().ok())
                    .and_then(|v| v.reply.as_ref().ok())
                    .and_then(|r| probes::judge_verdict(r.content.as_deref().unwrap_or("")));
                let grade = match reply {
                    None => Grade::default(),
                    Some(Err(())) => Grade {
                        correct: Some(false),
                        malformed: true,
                        ..Grade::default()
                    },
                    Some(Ok(reply)) => Grade {
                        correct: Some(probes::grade(reply.content.as_deref().unwrap_or(""), fact)),
                        judged,
                        ..Grade::default()
                    },
                };
                g.probes[a.strategy][a.call].push(grade);
            }
        }
    }
    g
}

fn as_f64(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

/// A measure over graded questions: `pick` reads the outcome of each (`None`: not
/// counted), `control` the control's outcome of the same question.
fn measure(
    graded: &[(Grade, Option<Grade>)],
    pick: impl Fn(&Grade) -> Option<bool>,
    seed: u64,
    resamples: usize,
) -> Measure {
    let values: Vec<f64> = graded
        .iter()
        .filter_map(|(g, _)| pick(g))
        .map(as_f64)
        .collect();
    let pairs: Vec<(f64, f64)> = graded
        .iter()
        .filter_map(|(g, c)| Some((as_f64(pick(g)?), as_f64(pick(c.as_ref()?)?))))
        .collect();
    let agreed = values.iter().filter(|&&v| v == 1.0).count();
    let rate = (!values.is_empty()).then(|| agreed as f64 / values.len() as f64);
    let (a, b) = pairs
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    Measure {
        asked: values.len(),
        agreed,
        rate,
        interval: mean_interval(&values, resamples, seed),
        relative: (b > 0.0).then(|| a / b),
        relative_interval: ratio_interval(&pairs, resamples, seed),
        malformed: graded.iter().filter(|(g, _)| g.malformed).count(),
        failed: graded.iter().filter(|(g, _)| g.correct.is_none()).count(),
    }
}

/// Prompt tokens of every rendered prompt (SPEC 9 / 11.2). Strategies send many of the
/// same messages at many calls, so each distinct message is counted once.
fn prompt_tokens_all(
    rendered: &[Vec<Rendered>],
    counter: &dyn TokenCounter,
    threads: usize,
) -> Vec<Vec<u64>> {
    let mut distinct: HashMap<&Message, usize> = HashMap::new();
    let mut order: Vec<&Message> = Vec::new();
    for per_call in rendered {
        for r in per_call {
            if let Rendered::Prompt(messages) = r {
                for m in messages {
                    distinct.entry(m).or_insert_with(|| {
                        order.push(m);
                        order.len() - 1
                    });
                }
            }
        }
    }
    let counts: Vec<u64> = pool::run(&order, threads, || false, |m| message_tokens(counter, m))
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect();
    rendered
        .iter()
        .map(|per_call| {
            per_call
                .iter()
                .map(|r| match r {
                    Rendered::Prompt(messages) => {
                        3 + messages.iter().map(|m| counts[distinct[m]]).sum::<u64>()
                    }
                    _ => 0,
                })
                .collect()
        })
        .collect()
}

fn strategy_result(
    spec: String,
    s: usize,
    rendered: &[Vec<Rendered>],
    tokens_of: &[Vec<u64>],
    grades: &Grades,
    summarizer: Option<SummarizerCost>,
    options: &EvalOptions,
) -> StrategyResult {
    let mut not_applicable = 0;
    let mut render_errors = 0;
    let mut tokens = 0u64;
    let mut control_tokens = 0u64;
    let mut prompts = 0usize;
    for (i, r) in rendered[s].iter().enumerate() {
        match r {
            Rendered::NotApplicable => not_applicable += 1,
            Rendered::Failed => render_errors += 1,
            Rendered::Prompt(_) => {
                prompts += 1;
                tokens += tokens_of[s][i];
                if let Rendered::Prompt(_) = &rendered[0][i] {
                    control_tokens += tokens_of[0][i];
                }
            }
        }
    }
    let seed = options.seed ^ (s as u64).wrapping_mul(0x9E37_79B9);
    let next: Vec<(Grade, Option<Grade>)> = grades.next[s]
        .iter()
        .zip(&grades.next[0])
        .filter_map(|(g, c)| Some(((*g)?, *c)))
        .collect();
    let probe_grades: Vec<(Grade, Option<Grade>)> = grades.probes[s]
        .iter()
        .zip(&grades.probes[0])
        .flat_map(|(gs, cs)| {
            gs.iter()
                .enumerate()
                .map(move |(j, g)| (*g, cs.get(j).copied()))
        })
        .collect();
    let next_action = options
        .next_action
        .then(|| measure(&next, |g| g.correct, seed, options.resamples));
    let first_tool = options
        .next_action
        .then(|| measure(&next, |g| g.first_tool, seed, options.resamples));
    let probes = options
        .probes
        .then(|| measure(&probe_grades, |g| g.correct, seed ^ 1, options.resamples));
    let judged = (options.probes && options.judge)
        .then(|| measure(&probe_grades, |g| g.judged, seed ^ 2, options.resamples));
    StrategyResult {
        strategy: spec,
        control: s == 0,
        calls: prompts,
        not_applicable,
        render_errors,
        prompt_tokens: tokens,
        mean_prompt_tokens: (prompts > 0).then(|| tokens as f64 / prompts as f64),
        savings: (control_tokens > 0).then(|| 1.0 - tokens as f64 / control_tokens as f64),
        summarizer,
        next_action,
        first_tool,
        probes,
        judged,
    }
}
