//! Request-rate and token-rate limits (per minute, as providers state them) and the
//! concurrency limit, shared by every thread that sends requests.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

const WINDOW: Duration = Duration::from_secs(60);

/// At most `requests_per_minute` requests, and at most `tokens_per_minute` tokens
/// (prompt estimate plus the completion tokens asked for), in any 60-second window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateLimits {
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u64>,
}

#[derive(Debug)]
pub struct RateLimiter {
    limits: RateLimits,
    span: Duration,
    window: Mutex<VecDeque<(Instant, u64)>>,
}

impl RateLimiter {
    pub fn new(limits: RateLimits) -> Self {
        Self::with_window(limits, WINDOW)
    }

    /// Limits over another window than a minute (tests shorten it).
    pub fn with_window(limits: RateLimits, span: Duration) -> Self {
        RateLimiter {
            limits,
            span,
            window: Mutex::new(VecDeque::new()),
        }
    }

    /// Waits until a request of `tokens` fits the limits, then counts it. A request
    /// larger than the whole token limit goes alone, once the window is empty.
    pub fn acquire(&self, tokens: u64) {
        loop {
            let wait = {
                let mut w = self.window.lock().unwrap_or_else(|p| p.into_inner());
                let now = Instant::now();
                while w
                    .front()
                    .is_some_and(|(t, _)| now.duration_since(*t) >= self.span)
                {
                    w.pop_front();
                }
                let requests_ok = self
                    .limits
                    .requests_per_minute
                    .is_none_or(|rpm| w.len() < rpm as usize);
                let used: u64 = w.iter().map(|(_, n)| n).sum();
                let tokens_ok = self
                    .limits
                    .tokens_per_minute
                    .is_none_or(|tpm| w.is_empty() || used + tokens <= tpm);
                if requests_ok && tokens_ok {
                    w.push_back((now, tokens));
                    return;
                }
                // Something is in the window, or a limit would have passed.
                w.front().map_or(Duration::from_millis(10), |(t, _)| {
                    self.span.saturating_sub(now.duration_since(*t))
                })
            };
            std::thread::sleep(wait.min(Duration::from_millis(250)));
        }
    }
}

/// At most `n` requests in flight at once, whoever sends them.
#[derive(Debug)]
pub struct Permits {
    free: Mutex<usize>,
    freed: Condvar,
}

pub struct Permit<'a>(&'a Permits);

impl Permits {
    pub fn new(n: usize) -> Self {
        Permits {
            free: Mutex::new(n.max(1)),
            freed: Condvar::new(),
        }
    }

    pub fn take(&self) -> Permit<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut free = self.0.free.lock().unwrap_or_else(|p| p.into_inner());
        *free += 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn permits_bound_what_runs_at_once() {
        let permits = Arc::new(Permits::new(2));
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        std::thread::scope(|s| {
            for _ in 0..6 {
                s.spawn(|| {
                    let _p = permits.take();
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    running.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        assert_eq!(peak.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn the_request_limit_admits_that_many_at_once() {
        let l = RateLimiter::new(RateLimits {
            requests_per_minute: Some(3),
            tokens_per_minute: None,
        });
        let start = Instant::now();
        for _ in 0..3 {
            l.acquire(1);
        }
        assert!(start.elapsed() < Duration::from_millis(100));
        assert_eq!(l.window.lock().unwrap().len(), 3);
    }

    #[test]
    fn past_the_limits_a_request_waits_for_the_window_to_move() {
        let span = Duration::from_millis(300);
        let by_requests = RateLimiter::with_window(
            RateLimits {
                requests_per_minute: Some(2),
                tokens_per_minute: None,
            },
            span,
        );
        let by_tokens = RateLimiter::with_window(
            RateLimits {
                requests_per_minute: None,
                tokens_per_minute: Some(100),
            },
            span,
        );
        for (l, tokens) in [(&by_requests, 1), (&by_tokens, 60)] {
            let start = Instant::now();
            l.acquire(tokens);
            l.acquire(if tokens == 1 { 1 } else { 30 });
            assert!(start.elapsed() < span / 2);
            l.acquire(tokens);
            assert!(start.elapsed() >= span, "{:?}", start.elapsed());
        }
    }

    #[test]
    fn a_request_over_the_token_limit_goes_alone() {
        let l = RateLimiter::new(RateLimits {
            requests_per_minute: None,
            tokens_per_minute: Some(10),
        });
        let start = Instant::now();
        l.acquire(50);
        assert!(start.elapsed() < Duration::from_millis(100));
    }
}
