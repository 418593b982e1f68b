//! The per-call time limit's setting: one limit for every plugin call of the process.
//!
//! How it is enforced is elsewhere: [`crate::watchdog`] checks the deadline of every
//! call in flight; an in-process call runs on a thread that may be given up and is given
//! up when it overruns ([`crate::backend`], [`recap_core::rescue`]), an isolated call's
//! worker process is killed ([`crate::isolated`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The limit when none is set: long enough for any sane render of any recorded session
/// (renders take micro- to milliseconds), short enough that a hung plugin is noticed.
pub const DEFAULT_CALL_TIME_LIMIT: Duration = Duration::from_secs(30);

/// The environment variable that overrides the default limit (seconds, fractions
/// allowed; `0` or `none` for no limit). Commands with a `--plugin-timeout` flag call
/// [`set_call_time_limit`] instead.
pub const TIME_LIMIT_ENV: &str = "RECAP_PLUGIN_TIMEOUT";

/// Milliseconds; `u64::MAX` = not set yet (use the environment or the default), 0 = no limit.
static LIMIT_MS: AtomicU64 = AtomicU64::new(u64::MAX);

/// Sets the per-call limit for every plugin call of this process; `None` disables it.
pub fn set_call_time_limit(limit: Option<Duration>) {
    let ms = limit.map_or(0, |d| {
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX - 1).max(1)
    });
    LIMIT_MS.store(ms, Ordering::Relaxed);
}

/// The per-call limit in force: set by [`set_call_time_limit`], else from
/// [`TIME_LIMIT_ENV`], else [`DEFAULT_CALL_TIME_LIMIT`].
pub fn call_time_limit() -> Option<Duration> {
    let mut ms = LIMIT_MS.load(Ordering::Relaxed);
    if ms == u64::MAX {
        ms = std::env::var(TIME_LIMIT_ENV)
            .ok()
            .and_then(|v| parse_limit(&v).ok())
            .map_or(DEFAULT_CALL_TIME_LIMIT.as_millis() as u64, |l| {
                l.map_or(0, |d| (d.as_millis() as u64).max(1))
            });
        LIMIT_MS.store(ms, Ordering::Relaxed);
    }
    (ms != 0).then(|| Duration::from_millis(ms))
}

/// Parses a limit in seconds (`2`, `0.5`); `0` and `none` mean no limit.
pub fn parse_limit(text: &str) -> Result<Option<Duration>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let secs: f64 = text
        .strip_suffix('s')
        .unwrap_or(text)
        .parse()
        .map_err(|_| format!("expected a number of seconds or `none`, got {text:?}"))?;
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(format!(
            "expected a number of seconds between 0 and 1e9, got {text:?}"
        ));
    }
    Ok((secs > 0.0).then(|| Duration::from_secs_f64(secs)))
}

/// A call that did not return within the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedOut {
    pub limit: Duration,
    /// The call was not made: an earlier call to the same plugin timed out.
    pub earlier: bool,
}

/// The limit to name in a message about a call that overran (the default when the
/// limit was switched off in the meantime).
pub(crate) fn limit_for_message() -> Duration {
    call_time_limit().unwrap_or(DEFAULT_CALL_TIME_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_limits() {
        assert_eq!(parse_limit("2"), Ok(Some(Duration::from_secs(2))));
        assert_eq!(parse_limit("0.5s"), Ok(Some(Duration::from_millis(500))));
        assert_eq!(parse_limit("0"), Ok(None));
        assert_eq!(parse_limit("none"), Ok(None));
        for bad in ["", "-1", "abc", "NaN", "inf"] {
            assert!(parse_limit(bad).is_err(), "{bad:?}");
        }
    }
}
