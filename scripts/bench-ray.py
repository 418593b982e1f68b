#!/usr/bin/env python3
"""A Ray run of 8 shards against one process (docs/performance.md, "Ray").

    target/python-venv/bin/python scripts/bench-ray.py [ROUNDS [SEEDS]]
    default: 3 rounds, 5 seeds (500 sessions, 30 MB); 20 seeds: 2,000 sessions, 120 MB

Needs the recap_replay wheel and ray installed in the interpreter that runs it (.ci/run's
environment, target/python-venv) and recap-gen's gen-corpus example built in release
(`cargo build --release -p recap-gen --example gen-corpus`).

The corpus is scripts/bench-shards.sh's, with SEEDS chunks: 100 sessions of recap-gen's
generator per seed (`gen-corpus --sessions 100 --turns 1..=30`, seeds 1..=SEEDS,
concatenated); the default strategies. Measured, as wall time in this process, alternating every round:

- one process: ``recap_replay.run(corpus, jobs=1)``, the engine on one thread;
- one process, all CPUs: ``recap_replay.run(corpus)``, the engine's own threads;
- Ray: ``recap_replay.ray.run(corpus, shards=8)`` on a local Ray started once with
  ``ray.init(num_cpus=2)`` (its start is timed apart): 8 tasks of 1 CPU, each with one
  engine thread, two at a time, the merge in this process; once with the parts returned
  through Ray's object store (no ``parts_dir``), once written to a directory this
  process reads (``parts_dir``, as on a shared filesystem).

The target is Ray ≥ 1.6x one process (jobs=1). Medians are printed, and every
round; the merged report is checked against the unsharded one (timings aside).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def corpus(tmp: Path, seeds: int) -> Path:
    target = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )["target_directory"]
    gen = Path(target) / "release" / "examples" / "gen-corpus"
    if not gen.exists():
        sys.exit(f"error: {gen} is missing: cargo build --release -p recap-gen --example gen-corpus")
    out = tmp / "corpus.jsonl"
    with out.open("wb") as f:
        for seed in range(1, seeds + 1):
            chunk = tmp / "chunk.jsonl"
            subprocess.run(
                [str(gen), "--seed", str(seed), "--sessions", "100", "--turns", "1..=30", "--out", str(chunk)],
                check=True,
                stderr=subprocess.DEVNULL,
            )
            f.write(chunk.read_bytes())
    return out


def deterministic(report: dict) -> dict:
    report = json.loads(json.dumps(report))
    report.pop("non_deterministic", None)
    report["provenance"].pop("command_line", None)
    report["provenance"].pop("shards", None)

    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if not k.startswith("render_ns")}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    return strip(report)


def timed(f):
    t = time.perf_counter()
    result = f()
    return time.perf_counter() - t, result


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    if rounds < 1 or seeds < 1:
        sys.exit("usage: bench-ray.py [ROUNDS [SEEDS]]")
    import ray

    import recap_replay as rr
    import recap_replay.ray as rr_ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with tempfile.TemporaryDirectory() as tmp:
        path = corpus(Path(tmp), seeds)
        print(f"corpus: {path.stat().st_size} bytes, {100 * seeds} sessions; load average {os.getloadavg()[0]:.1f}")
        start, _ = timed(lambda: ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False))
        print(f"ray.init(num_cpus=2): {start:.2f} s (not in the figures below)")
        one, whole, ray_s, shared_s = [], [], [], []
        for r in range(1, rounds + 1):
            t1, single = timed(lambda: rr.run(path, jobs=1, config={"progress": False}))
            t2, _ = timed(lambda: rr.run(path, config={"progress": False}))
            t3, merged = timed(lambda: rr_ray.run(path, shards=8, config={"progress": False}))
            parts = Path(tmp) / f"parts-{r}"
            t4, on_dir = timed(
                lambda: rr_ray.run(path, shards=8, config={"progress": False}, parts_dir=parts)
            )
            for m in (merged, on_dir):
                if deterministic(m.to_dict()) != deterministic(single.to_dict()):
                    sys.exit("error: the merged report differs from the unsharded one")
            one.append(t1)
            whole.append(t2)
            ray_s.append(t3)
            shared_s.append(t4)
            print(
                f"round {r}: one process jobs=1 {t1:.2f} s, jobs=2 {t2:.2f} s; Ray 8 shards "
                f"{t3:.2f} s through the object store ({t1 / t3:.2f}x jobs=1), "
                f"{t4:.2f} s with parts_dir ({t1 / t4:.2f}x jobs=1)"
            )
        m1, m2, m3, m4 = (statistics.median(v) for v in (one, whole, ray_s, shared_s))
        print(
            f"median: one process jobs=1 {m1:.2f} s, jobs=2 {m2:.2f} s; Ray 8 shards "
            f"{m3:.2f} s through the object store, {m4:.2f} s with parts_dir: "
            f"{m1 / m3:.2f}x and {m1 / m4:.2f}x one process jobs=1 (target >= 1.6x), "
            f"{m2 / m3:.2f}x and {m2 / m4:.2f}x jobs=2; load average {os.getloadavg()[0]:.1f}"
        )
        print("merged report identical to the unsharded one (timings and provenance aside)")
        ray.shutdown()


if __name__ == "__main__":
    main()
