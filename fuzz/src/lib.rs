//! Shared code of recap's fuzz targets: the properties they check ([`checks`],
//! [`strategy_checks`], [`plugin_checks`]: `recap-testkit`'s, which the main test suite
//! replays on every saved crash input) and the structure-aware input builders
//! ([`inputs`]).

pub mod inputs;

pub use recap_testkit::{checks, plugin_checks, strategy_checks};
