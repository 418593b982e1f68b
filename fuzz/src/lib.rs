//! Shared code of recap's fuzz targets: the properties checked ([`checks`], also
//! compiled into the main test suite), the strategy property ([`strategy_checks`]) and
//! structure-aware input builders ([`inputs`]).

pub mod checks;
pub mod inputs;
pub mod strategy_checks;
