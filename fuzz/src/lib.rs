//! Shared code of recap's fuzz targets: the properties they check ([`checks`],
//! [`strategy_checks`], [`plugin_checks`] — also compiled into the main test suite) and
//! the structure-aware input builders ([`inputs`]).

pub mod checks;
pub mod inputs;
pub mod plugin_checks;
pub mod strategy_checks;
