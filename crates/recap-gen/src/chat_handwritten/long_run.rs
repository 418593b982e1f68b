//! A long run (over 40 turns) of an on-call agent with long logs, LF and CRLF.

use super::{schema, string_param};
use crate::chat::{ChatSessionBuilder, ChatTurnBuilder as T};
use serde_json::json;
use std::fmt::Write as _;

/// One line of the nightly job's log, as the long run shows it.
fn log_line(day: u32, i: u32, failing: bool) -> String {
    let hour = (i * 7 / 60) % 24;
    let minute = (i * 7) % 60;
    let level = match i % 11 {
        0 => "WARN ",
        7 if failing => "ERROR",
        _ => "INFO ",
    };
    let what = match i % 6 {
        0 => format!(
            "partition 2024-03-{day:02} shard {} loaded ({} rows)",
            i % 8,
            1000 + i * 37
        ),
        1 => "dedup: 0 duplicates".to_string(),
        2 => format!("checkpoint written to s3://etl-bucket/ckpt/{day:02}/{i:04}"),
        3 => "joined with dim_store (cache hit)".to_string(),
        4 if failing => {
            "window start 2024-03-10 02:30 America/New_York: localize failed".to_string()
        }
        _ => format!("batch {i} committed in {} ms", 40 + (i * 13) % 200),
    };
    format!("2024-03-{day:02}T{hour:02}:{minute:02}:00Z {level} etl.load  {what}")
}

/// The session being written and how many shell calls it holds (each call's id is
/// derived from its number).
struct Run {
    b: ChatSessionBuilder,
    n: u32,
}

impl Run {
    /// A turn that runs `cmd` (saying `say` first, if given) and gets `out` back, as a
    /// tool error when `error`.
    fn shell(mut self, say: Option<&str>, cmd: &str, out: &str, error: bool) -> Self {
        self.n += 1;
        let n = self.n;
        let id = format!("call_L{n:03}x{:08x}", n.wrapping_mul(2_654_435_761));
        let args = serde_json::to_string(&json!({"cmd": cmd})).unwrap_or_default();
        let turn = match say {
            Some(s) => T::says(s),
            None => T::silent(),
        }
        .call(&id, "shell", &args);
        let turn = if error {
            turn.error(&id, out)
        } else {
            turn.result(&id, out)
        };
        self.push(turn)
    }

    fn push(mut self, turn: T) -> Self {
        self.b = self.b.push(turn);
        self
    }
}

/// The session, told in the phases of the incident.
pub(super) fn long_run() -> ChatSessionBuilder {
    let b = ChatSessionBuilder::new(
        "The nightly ETL job has failed every night since 2024-03-10. Find the cause, fix it, and re-run the missed nights (10 to 24 March).",
    )
    .id("long-run")
    .system("You are an on-call data engineer agent. You can run shell commands on the ETL host. Never delete data; re-runs must be idempotent.")
    .tool(
        "shell",
        "Run a shell command on the ETL host and return stdout and stderr.",
        schema(json!({"cmd": string_param("The command.")}), &["cmd"]),
    )
    .meta("source", json!("handwritten"))
    .meta("scenario", json!("long run: over 40 turns, long logs (LF and CRLF), repeated re-runs"))
    .meta("model", json!("gpt-4.1"));
    wrap_up(rerun(fix(find_cause(look_at_failures(Run { b, n: 0 })))))
}

/// The timer, the log directory, and the logs of the last good night and the first bad one.
fn look_at_failures(mut run: Run) -> Run {
    run = run.shell(
        Some("Let me see the failing runs."),
        "systemctl list-timers etl-nightly --all; journalctl -u etl-nightly --since 2024-03-09 | tail -n 20",
        &{
            let mut s = String::from(
                "NEXT                        LEFT     LAST                        PASSED  UNIT              ACTIVATES\nMon 2024-03-25 01:00:00 UTC 9h left  Sun 2024-03-24 01:00:00 UTC 14h ago etl-nightly.timer etl-nightly.service\n\n",
            );
            for d in 9..=24 {
                let status = if d < 10 { "Finished" } else { "Failed" };
                let _ = writeln!(
                    s,
                    "Mar {d:02} 01:00:00 etl-host systemd[1]: Started etl-nightly.service."
                );
                let _ = writeln!(
                    s,
                    "Mar {d:02} 01:{:02}:41 etl-host systemd[1]: etl-nightly.service: {status}.",
                    12 + d % 7
                );
            }
            s
        },
        false,
    );
    run = run.shell(
        None,
        "ls -la /opt/etl /opt/etl/logs | head -n 40",
        "/opt/etl:\ntotal 40\ndrwxr-xr-x 5 etl etl 4096 Mar  1 09:12 .\n-rw-r--r-- 1 etl etl 2211 Mar  1 09:12 config.yaml\n-rwxr-xr-x 1 etl etl 9873 Feb 28 17:40 etl.py\ndrwxr-xr-x 2 etl etl 4096 Mar 24 01:17 logs\ndrwxr-xr-x 2 etl etl 4096 Mar  1 09:12 sql\n\n/opt/etl/logs:\ntotal 2048\n-rw-r--r-- 1 etl etl  88120 Mar  9 01:14 2024-03-09.log\n-rw-r--r-- 1 etl etl  31002 Mar 10 01:13 2024-03-10.log\n-rw-r--r-- 1 etl etl  30877 Mar 11 01:14 2024-03-11.log\n",
        false,
    );
    for day in [9u32, 10] {
        let mut log = String::new();
        for i in 0..120 {
            log.push_str(&log_line(day, i, day == 10));
            log.push('\n');
        }
        if day == 10 {
            log.push_str("Traceback (most recent call last):\n  File \"/opt/etl/etl.py\", line 212, in <module>\n    main()\n  File \"/opt/etl/etl.py\", line 188, in load_day\n    window = local_window(day, tz)\n  File \"/opt/etl/etl.py\", line 97, in local_window\n    start = tz.localize(datetime(day.year, day.month, day.day, 2, 30), is_dst=None)\npytz.exceptions.NonExistentTimeError: 2024-03-10 02:30:00\n");
        } else {
            log.push_str("2024-03-09T23:59:00Z INFO  etl.load  day complete: 31 522 rows\n");
        }
        run = run.shell(
            Some(&format!("Reading the log of March {day}.")),
            &format!("cat /opt/etl/logs/2024-03-{day:02}.log"),
            &log,
            false,
        );
    }
    run
}

/// The window code, the time zone, the user's hint about resuming, and the resumed log.
fn find_cause(mut run: Run) -> Run {
    run = run.shell(
        Some(
            "The job starts each day's window at 02:30 local time, which does not exist on the DST night.",
        ),
        "sed -n 85,110p /opt/etl/etl.py",
        "    85\tdef local_window(day, tz):\n    86\t    \"\"\"The day's load window in local time.\n    87\t\n    88\t    Starts at 02:30 so that late files from the 02:00 export are included.\n    89\t    \"\"\"\n    90\t    # TODO: the export moved to 01:00 in 2023; keep 02:30 for now\n    91\t    start = tz.localize(datetime(day.year, day.month, day.day, 2, 30), is_dst=None)\n    92\t    end = start + timedelta(days=1)\n    93\t    return start, end\n",
        false,
    );
    run = run.shell(
        None,
        "grep -n \"timezone\" /opt/etl/config.yaml",
        "14:timezone: America/New_York   # stores report in local time\r\n",
        false,
    );
    run = run.push(
        T::says("On 2024-03-10 clocks in America/New_York jump from 02:00 to 03:00, so 02:30 does not exist and `is_dst=None` raises. But why does every night after the 10th fail too?")
            .reasoning("The later nights shouldn't hit the DST gap. Maybe the job resumes from the failed day's checkpoint first. Check the 11th's log head.")
            .user("FYI: the job always resumes the oldest unfinished day first — that's by design."),
    );
    run = run.shell(
        Some("That explains it: each night retries March 10 first and fails there."),
        "head -n 5 /opt/etl/logs/2024-03-11.log",
        "2024-03-11T01:00:02Z INFO  etl.load  resuming unfinished day 2024-03-10\n2024-03-11T01:00:02Z INFO  etl.load  partition 2024-03-10 shard 0 loaded (1000 rows)\n",
        false,
    );
    run
}

/// The fix, a failing test of it, and the fix of the fix.
fn fix(mut run: Run) -> Run {
    run = run.shell(
        Some(
            "Fix: build the window with `is_dst=False` resolution via zoneinfo, which shifts a nonexistent time forward.",
        ),
        "cd /opt/etl && git diff",
        "diff --git a/etl.py b/etl.py\n--- a/etl.py\n+++ b/etl.py\n@@ -88,6 +88,7 @@ def local_window(day, tz):\n     \"\"\"\n-    start = tz.localize(datetime(day.year, day.month, day.day, 2, 30), is_dst=None)\n+    naive = datetime(day.year, day.month, day.day, 2, 30)\n+    start = tz.normalize(tz.localize(naive, is_dst=True))\n     end = start + timedelta(days=1)\n",
        false,
    );
    run = run.shell(
        None,
        "cd /opt/etl && python -m pytest -q tests/test_window.py",
        "..F\n=================================== FAILURES ===================================\n___________________________ test_dst_gap_is_shifted ____________________________\n\n    def test_dst_gap_is_shifted():\n        start, _ = local_window(date(2024, 3, 10), NY)\n>       assert start.hour == 3\nE       AssertionError: assert 1 == 3\n\ntests/test_window.py:21: AssertionError\n1 failed, 2 passed in 0.18s\n",
        true,
    );
    run = run.shell(
        Some(
            "`is_dst=True` goes back to 01:30; a nonexistent time should move forward. Using `is_dst=False`.",
        ),
        "cd /opt/etl && sed -i 's/is_dst=True/is_dst=False/' etl.py && python -m pytest -q tests/test_window.py",
        "...\n3 passed in 0.16s\n",
        false,
    );
    run
}

/// The missed nights re-run one by one (long CRLF logs), then the loaded rows checked.
fn rerun(mut run: Run) -> Run {
    for day in 10u32..=24 {
        let mut log = String::new();
        for i in 0..(40 + day * 3) {
            log.push_str(&log_line(day, i, false));
            log.push_str("\r\n");
        }
        let _ = write!(
            log,
            "day 2024-03-{day:02} complete: {} rows\r\n",
            30_000 + day * 211
        );
        let say = (day == 10).then_some("Re-running the missed nights one by one, oldest first.");
        run = run.shell(
            say,
            &format!("cd /opt/etl && ./etl.py --day 2024-03-{day:02} --idempotent"),
            &log,
            false,
        );
    }
    run = run.shell(
        Some("All days loaded. Checking the row counts against the source export."),
        "psql -Atc \"SELECT day, count(*) FROM fact_sales WHERE day BETWEEN '2024-03-09' AND '2024-03-24' GROUP BY day ORDER BY day\"",
        &{
            let mut s = String::new();
            for d in 9..=24u32 {
                let _ = writeln!(s, "2024-03-{d:02}|{}", 30_000 + d * 211);
            }
            s
        },
        false,
    );
    run = run.shell(
        None,
        "psql -Atc \"SELECT count(*) FROM (SELECT id FROM fact_sales GROUP BY id HAVING count(*) > 1) d\"",
        "0\n",
        false,
    );
    run
}

/// The user declines a change, the changed files are recorded, routine checks, and the
/// write-up.
fn wrap_up(mut run: Run) -> ChatSessionBuilder {
    run = run.push(T::says("Should I also enable the timer's catch-up (`Persistent=true`) so a missed night runs at boot?").user("No, leave the timer alone. Just write up what happened."));
    for (i, path) in [
        "/opt/etl/etl.py",
        "/opt/etl/tests/test_window.py",
        "/opt/etl/config.yaml",
    ]
    .iter()
    .enumerate()
    {
        let say = (i == 0).then_some("Recording the final state of the changed files.");
        run = run.shell(
            say,
            &format!("cd /opt/etl && git log -1 --format='%h %s' -- {path}"),
            &format!(
                "{:07x} fix: shift nonexistent DST times forward in local_window\n",
                0x3f1a2b0 + i as u32
            ),
            false,
        );
    }
    for check in [
        "df -h /var/lib/postgresql",
        "systemctl status etl-nightly.timer --no-pager",
        "tail -n 3 /opt/etl/logs/2024-03-24.log",
        "cat /opt/etl/VERSION",
        "date -u",
        "uptime",
        "id",
        "python --version",
        "pip show pytz | head -n 2",
        "echo done",
    ] {
        run = run.shell(None, check, &format!("$ {check}\nok\n"), false);
    }
    run = run.push(T::says(
        "Cause: `local_window` built each day's window at 02:30 local time with `is_dst=None`; on 2024-03-10 that time does not exist in America/New_York (DST starts at 02:00), so the load raised `NonExistentTimeError`. Because the job always resumes the oldest unfinished day, every later night failed on March 10 too.\n\n\
         Fix: a nonexistent time now moves forward (`is_dst=False`), with a test for the DST gap.\n\n\
         Re-runs: 10–24 March loaded idempotently; row counts match the export and there are no duplicate ids.",
    ));
    run.b
}
