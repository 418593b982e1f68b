#!/usr/bin/env python3
"""What running a strategy written in Python inside recap's harness costs, on bench-data.

    target/python-venv/bin/python scripts/bench-python-bridge.py [--rounds N] [--jobs N]

(after `pip install ./python` into that environment; docs/python.md). Prints:

1. The bridge's own cost per call — everything `recap run` times as the call's render
   (its `render_ns`) except the Python function's body: taking the GIL, the session
   object, the call, reading and checking the returned messages. The body is timed
   inside Python around the strategy's own work; bridge = render_ns - body, per call,
   median and p95 over every call of bench-data, beside the body's own median and p95
   (target: bridge < body of the Python full-history twin).
2. Whole runs: `run(bench-data, ["full-history"])` against the same run of the Python
   twin (rendered twice per call: recap checks the determinism of what it cannot see
   into), wall time, median of the rounds.
3. Whether a Python strategy slows the Rust strategies of the same run: the Rust
   strategies' summed render_ns with and without the Python twin beside them, in
   alternating rounds (target: at most 10 % more).
4. The same like with like: the Rust strategies' render_ns beside the Python twin against
   beside a built-in that keeps every turn, every call of both rendered twice.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import recap_replay as rr
from recap_replay.examples import FullHistory

BENCH = Path(__file__).resolve().parents[1] / "bench-data"
CORPORA = [BENCH / n for n in ("handwritten.jsonl", "generated.jsonl", "chat-handwritten.jsonl", "chat-generated.jsonl")]
RUST = ["rolling-window:window=2", "observation-masking:window=3", "token-budget-trim:max_tokens=2000", "ptc-trim"]


class TimedFullHistory:
    """full-history in Python (session.messages(k)), its body timed per call."""

    forms = ("ptc", "chat")
    name = "py-full-history"

    def __init__(self) -> None:
        self.body: dict[tuple[str, int], int] = {}

    def render(self, session, k):
        start = time.perf_counter_ns()
        prompt = session.messages(k)
        took = time.perf_counter_ns() - start
        # The first render of a call is the one run() times; the second is the check's.
        self.body.setdefault((session.id, k), took)
        return prompt


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bridge_cost(jobs: int) -> None:
    bridge: list[int] = []
    body: list[int] = []
    for corpus in CORPORA:
        strategy = TimedFullHistory()
        calls = rr.run(corpus, [strategy], jobs=jobs, config={"progress": False}).calls
        # The run has the built-in full-history beside it (every run has its baseline).
        for row in calls[calls.strategy == strategy.name].itertuples():
            if row.render_ns is None or (row.session, row.call) not in strategy.body:
                continue
            b = strategy.body[(row.session, row.call)]
            body.append(b)
            bridge.append(int(row.render_ns) - b)
    print(f"1. per call, {len(bridge)} calls of bench-data (py-full-history, render only):")
    print(f"   bridge  median {statistics.median(bridge) / 1e3:8.1f} µs   p95 {pct(bridge, 0.95) / 1e3:8.1f} µs")
    print(f"   body    median {statistics.median(body) / 1e3:8.1f} µs   p95 {pct(body, 0.95) / 1e3:8.1f} µs")
    print(f"   bridge / body (medians) {statistics.median(bridge) / statistics.median(body):.2f}")


def wall(strategies: list, jobs: int) -> float:
    start = time.perf_counter()
    rr.run(CORPORA, strategies, jobs=jobs, config={"progress": False, "calls": False})
    return time.perf_counter() - start


def whole_runs(rounds: int, jobs: int) -> None:
    built_in, python = [], []
    for _ in range(rounds):
        built_in.append(wall(["full-history"], jobs))
        python.append(wall([FullHistory()], jobs))
    b, p = statistics.median(built_in), statistics.median(python)
    print(f"2. whole run, bench-data, jobs={jobs}, median of {rounds}: full-history {b:.3f} s, "
          f"py-full-history {p:.3f} s ({p / b:.1f}x; its calls rendered twice, the built-in's once)")


def rust_render_ns(strategies: list, jobs: int) -> int:
    report = rr.run(CORPORA, strategies, jobs=jobs, config={"progress": False, "session_details": False})
    calls = report.calls
    rust = calls[calls.strategy.isin(RUST)]
    return int(rust.render_ns.fillna(0).sum())


def rust_beside_python(rounds: int, jobs: int) -> None:
    ratios = []
    for _ in range(rounds):
        alone = rust_render_ns(RUST, jobs)
        beside = rust_render_ns([*RUST, FullHistory()], jobs)
        ratios.append(beside / alone)
    print(f"3. Rust strategies' render time with the Python twin in the run / without, jobs={jobs}, "
          f"{rounds} alternating rounds: median {statistics.median(ratios):.3f}, max {max(ratios):.3f} "
          f"(each {', '.join(f'{r:.3f}' for r in ratios)})")


def rust_beside_python_or_rust(rounds: int, jobs: int) -> None:
    """Like with like: one more strategy in the run takes CPU time from the others
    whatever its language (its renders, counting and checks share the cores and caches),
    so the Python twin is set against a built-in that keeps every turn too
    (`rolling-window` with a window wider than any session), with every call of it
    rendered twice as the Python twin's are (`check_determinism = "all"` for both runs,
    so the Rust strategies are rendered twice in both)."""
    ratios = []
    config = {"progress": False, "session_details": False, "check_determinism": "all"}
    for _ in range(rounds):
        runs = {}
        for name, extra in (("rust", "rolling-window:window=100000"), ("python", FullHistory())):
            calls = rr.run(CORPORA, [*RUST, extra], jobs=jobs, config=config).calls
            runs[name] = int(calls[calls.strategy.isin(RUST)].render_ns.fillna(0).sum())
        ratios.append(runs["python"] / runs["rust"])
    print(f"4. Rust strategies' render time beside the Python twin / beside a built-in keeping every "
          f"turn, every call rendered twice, jobs={jobs}, {rounds} alternating rounds: median "
          f"{statistics.median(ratios):.3f}, max {max(ratios):.3f} "
          f"(each {', '.join(f'{r:.3f}' for r in ratios)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    bridge_cost(args.jobs)
    whole_runs(args.rounds, args.jobs)
    rust_beside_python(args.rounds, args.jobs)
    rust_beside_python_or_rust(args.rounds, args.jobs)


if __name__ == "__main__":
    main()
