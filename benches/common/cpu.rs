//! A criterion measurement of the process's CPU time (user + system, all threads,
//! finished ones included), for benches whose wall time is dominated by other load on
//! a shared machine. Selected with `RECAP_BENCH_CLOCK=cpu`.
//!
//! Read from `/proc/self/stat` (Linux), so the resolution is one clock tick (10 ms at
//! the usual 100 Hz): only for benches whose samples last a second or so (the harness
//! bench: flat sampling, ≥ 0.5 s per sample).

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use std::sync::OnceLock;
use std::time::Duration;

/// `RECAP_BENCH_CLOCK=cpu` asks for [`ProcessCpuTime`]; anything else (or nothing) is
/// criterion's wall clock.
pub fn cpu_clock_requested() -> bool {
    match std::env::var("RECAP_BENCH_CLOCK").as_deref() {
        Ok("cpu") => {
            if process_cpu_time().is_none() {
                panic!("RECAP_BENCH_CLOCK=cpu needs /proc/self/stat (Linux)");
            }
            true
        }
        Ok("wall") | Err(_) => false,
        Ok(other) => panic!("RECAP_BENCH_CLOCK={other:?}: expected `cpu` or `wall`"),
    }
}

/// CPU time used by this process so far, or `None` without `/proc/self/stat`.
pub fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so fields are
    // counted from the last `)`. utime and stime are fields 14 and 15 (1-based), i.e.
    // the 12th and 13th after the comm.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime + stime;
    let hz = clock_ticks_per_second();
    Some(Duration::from_secs(ticks / hz) + Duration::from_nanos((ticks % hz) * 1_000_000_000 / hz))
}

/// `getconf CLK_TCK` (the kernel's USER_HZ), 100 when it cannot be asked.
fn clock_ticks_per_second() -> u64 {
    static HZ: OnceLock<u64> = OnceLock::new();
    *HZ.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .filter(|&hz| hz > 0)
            .unwrap_or(100)
    })
}

/// Process CPU time as a criterion measurement; reported like wall time.
pub struct ProcessCpuTime;

/// Durations format the same whatever clock measured them.
static WALL: WallTime = WallTime;

impl Measurement for ProcessCpuTime {
    type Intermediate = Duration;
    type Value = Duration;

    fn start(&self) -> Duration {
        process_cpu_time().unwrap_or_default()
    }
    fn end(&self, start: Duration) -> Duration {
        process_cpu_time().unwrap_or_default().saturating_sub(start)
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WALL.formatter()
    }
}
