//! What an evaluation asks and how: the sample, the questions, the sampling and the
//! threads.

use recap_llm::request::Sampling;

#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// Calls to sample (all calls when the corpus has fewer).
    pub sample: usize,
    pub seed: u64,
    pub next_action: bool,
    pub probes: bool,
    pub probes_per_call: usize,
    /// Also grade probe answers with a judge prompt.
    pub judge: bool,
    /// Bootstrap resamples.
    pub resamples: usize,
    pub sampling: Sampling,
    /// Threads that render and ask.
    pub threads: usize,
    /// Ask only about the sampled calls of this shard's sessions (`recap eval --shard`):
    /// the sample is drawn from the whole corpus, so the shards together ask exactly what
    /// one evaluation asks.
    pub shard: Option<recap_harness::Shard>,
}
