#!/usr/bin/env python3
"""What running a strategy written in Python inside recap's harness costs, on bench-data.

    target/python-venv/bin/python scripts/bench-python-bridge.py [--rounds N] [--jobs N] [--corpora F...]

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
   strategies' render_ns with and without the Python twin beside them, in alternating
   rounds (target: at most 10 % more). Bench-data's Rust renders take some 3 ms a run,
   so one preempted render moves a round's sum by several per cent: the row gives the
   median of the rounds' sums and the sum of every call's median over the rounds.
   `--corpora` runs every row on other corpora (a larger one steadies the sums).
4. The same like with like: the Rust strategies' render_ns beside the Python twin against
   beside a built-in that keeps every turn, every call of both rendered twice.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import pandas as pd

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
    print(f"1. per call, {len(bridge)} calls (py-full-history, render only):")
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
    print(f"2. whole run, jobs={jobs}, median of {rounds}: full-history {b:.3f} s, "
          f"py-full-history {p:.3f} s ({p / b:.1f}x; its calls rendered twice, the built-in's once)")


def rust_renders(strategies: list, jobs: int, config: dict) -> pd.Series:
    """The Rust strategies' render_ns per (strategy, session, call) of one run."""
    calls = rr.run(CORPORA, strategies, jobs=jobs, config={"progress": False, "session_details": False, **config}).calls
    rust = calls[calls.strategy.isin(RUST)]
    return rust.set_index(["strategy", "corpus", "session", "call"]).render_ns.astype(float)


def compare(label: str, runs: dict, rounds: int, jobs: int, config: dict) -> None:
    """Runs both strategy lists of `runs` in alternating rounds (`base` first in even
    rounds, last in odd ones) and prints the Rust strategies' render time of `with`
    over `base`: the median of the rounds' sums, and the sum of each call's median over
    the rounds (a render preempted in one round does not move it)."""
    times: dict[str, list[pd.Series]] = {"with": [], "base": []}
    for r in range(rounds):
        for name in ("base", "with") if r % 2 == 0 else ("with", "base"):
            times[name].append(rust_renders(runs[name], jobs, config))
    sums = [w.sum() / b.sum() for w, b in zip(times["with"], times["base"])]
    medians = {k: pd.concat(v, axis=1).median(axis=1).sum() for k, v in times.items()}
    print(f"{label}, jobs={jobs}, {rounds} alternating rounds, {len(times['base'][0])} Rust calls per run: "
          f"per-call medians {medians['with'] / medians['base']:.3f}; sums median "
          f"{statistics.median(sums):.3f}, max {max(sums):.3f} (each {', '.join(f'{r:.3f}' for r in sums)})")


def rust_beside_python(rounds: int, jobs: int) -> None:
    compare("3. Rust strategies' render time with the Python twin in the run / without",
            {"base": RUST, "with": [*RUST, FullHistory()]}, rounds, jobs, {})


def rust_beside_python_or_rust(rounds: int, jobs: int) -> None:
    """Like with like: one more strategy in the run takes CPU time from the others
    whatever its language (its renders, counting and checks share the cores and caches),
    so the Python twin is set against a built-in that keeps every turn too
    (`rolling-window` with a window wider than any session), with every call of it
    rendered twice as the Python twin's are (`check_determinism = "all"` for both runs,
    so the Rust strategies are rendered twice in both)."""
    compare("4. Rust strategies' render time beside the Python twin / beside a built-in keeping "
            "every turn, every call rendered twice",
            {"base": [*RUST, "rolling-window:window=100000"], "with": [*RUST, FullHistory()]},
            rounds, jobs, {"check_determinism": "all"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--corpora", nargs="+", type=Path, help="in place of bench-data")
    args = parser.parse_args()
    if args.corpora:
        CORPORA[:] = args.corpora
    bridge_cost(args.jobs)
    whole_runs(args.rounds, args.jobs)
    rust_beside_python(args.rounds, args.jobs)
    rust_beside_python_or_rust(args.rounds, args.jobs)


if __name__ == "__main__":
    main()
