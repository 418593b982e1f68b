//! Golden-case runner: loads cases in the format of
//! `../shared/conformance/ptc_runner_cases.json`, evaluates each one and compares the
//! result with `expected` as JSON values.
//!
//! `format.to_clojure` and `type_of` are evaluated here against recap-core's printer;
//! every other kind is handed to `recap_ptc_runner::conformance::evaluate`. A kind that
//! nobody evaluates fails with "not implemented: <fn>", so nothing passes silently.
//! Cases with `"binding": false`, and cases whose name ends in `_quirk` (SPEC section 2:
//! those document behaviour recap deliberately does not copy), are skipped.
//!
//! Used by `recap conformance` and by this crate's tests.

mod cases;
mod eval;
mod report;

pub use cases::{Case, LoadError, load, parse_cases};
pub use eval::evaluate;
pub use report::{CaseResult, Failure, Outcome, Report, run, run_case};
