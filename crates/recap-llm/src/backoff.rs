//! Waiting before a retry: exponential backoff with jitter, or the server's own
//! `Retry-After` when it sends one.

use crate::rng::Rng;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Exponential backoff: attempt `n` (0-based) waits a random time in `[d/2, d]` with
/// `d = min(base × 2^n, max)`. The jitter keeps concurrent workers from retrying in step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub base: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            base: Duration::from_millis(500),
            max: Duration::from_secs(30),
        }
    }
}

/// The longest `Retry-After` honoured: a server asking for more is waited on this long.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);

impl Backoff {
    pub fn delay(&self, attempt: u32, rng: &mut Rng) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(20)).unwrap_or(u32::MAX);
        let d = self.base.saturating_mul(factor).min(self.max);
        d / 2 + d.mul_f64(0.5 * rng.unit())
    }
}

/// A `Retry-After` value: delay-seconds (decimals accepted, as some servers send them)
/// or an HTTP date. `None` when it is neither; a date in the past is no wait.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0)
            .then(|| Duration::from_secs_f64(secs).min(MAX_RETRY_AFTER));
    }
    let at = parse_http_date(v)?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(at.saturating_sub(now)).min(MAX_RETRY_AFTER))
}

/// Seconds since the epoch of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the
/// form HTTP/1.1 servers must send.
fn parse_http_date(v: &str) -> Option<u64> {
    let rest = v.split_once(", ")?.1;
    let parts: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, time, "GMT"] = parts[..] else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| *m == month)? as i64 + 1;
    let day: i64 = day.parse().ok()?;
    let year: i64 = year.parse().ok()?;
    let hms: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, s] = hms[..] else { return None };
    let days = days_from_civil(year, month, day);
    u64::try_from(days * 86_400 + h * 3600 + m * 60 + s).ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_to_its_cap_with_jitter_below_it() {
        let b = Backoff {
            base: Duration::from_millis(100),
            max: Duration::from_secs(1),
        };
        let mut rng = Rng::new(3);
        for (attempt, full) in [(0, 100), (1, 200), (2, 400), (5, 1000), (40, 1000)] {
            let d = b.delay(attempt, &mut rng);
            let full = Duration::from_millis(full);
            assert!(d >= full / 2 && d <= full, "attempt {attempt}: {d:?}");
        }
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // Sun, 06 Nov 1994 08:49:30
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after("0.25", now),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:40:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("99999", now), Some(MAX_RETRY_AFTER));
    }
}
