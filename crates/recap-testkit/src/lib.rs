//! Support shared by recap's tests, benches and fuzz targets (a dev-only crate, never
//! published): the properties the fuzz targets check ([`checks`], [`plugin_checks`],
//! [`strategy_checks`]), which the main test suite replays on saved crash inputs; the
//! plugin libraries built for tests ([`plugins`]); running the `recap` binary ([`cli`]);
//! and the strategy specs the cross-strategy properties run ([`specs`]).

pub mod checks;
pub mod cli;
pub mod faulty_runs;
pub mod plugin_checks;
pub mod plugins;
pub mod specs;
pub mod strategy_checks;
