//! Golden-case runner: loads cases in the format of
//! `../shared/conformance/ptc_runner_cases.json`, evaluates each one and compares the
//! result with `expected` as JSON values.
//!
//! Every kind is evaluated here, in one table ([`evaluate`]): `format.to_clojure` and
//! `type_of` against recap-core's printer, the renderer kinds (`suc.*`, `ns.*`,
//! `exec.*`, `compression.*`) against `recap-ptc-runner`'s reference renderers, and
//! `compaction.trim` against `recap-ptc-trim`. A kind that nobody evaluates fails with
//! "not implemented: `<fn>`", so nothing passes silently.
//! Cases with `"binding": false`, and cases whose name ends in `_quirk` (SPEC section 2:
//! those document behaviour recap deliberately does not copy), are skipped.
//!
//! Used by `recap conformance` and by this crate's tests.

mod cases;
mod elixir;
mod eval;
mod fields;
mod ptc_runner;
mod ptc_trim;
mod report;

pub use cases::{Case, LoadError, load, parse_cases};
pub use eval::evaluate;
pub use report::{CaseResult, Failure, Outcome, Report, run, run_case};
