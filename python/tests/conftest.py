"""Shared fixtures: the repository's bench-data, ../shared (required under CI=true,
skipped with a visible reason elsewhere, as crates/recap-gen/src/shared.rs does for the
Rust tests) and the `recap` binary the API is compared with."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench-data"
SHARED = REPO.parent / "shared"


def required() -> bool:
    return os.environ.get("CI") == "true"


def skip(reason: str) -> None:
    """Skips the test, and logs why where .ci/run's summary reads skips."""
    log = os.environ.get("RECAP_SKIP_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"python: {reason}\n")
    pytest.skip(reason)


def shared(rel: str, what: str) -> Path:
    path = SHARED / rel
    if path.exists():
        return path
    if required():
        pytest.fail(f"{path} is missing ({what}); CI=true requires it")
    skip(f"{what}: {path} is missing (set CI=true to make this a failure)")
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def recap_bin() -> Path:
    """The `recap` binary of this checkout ($RECAP_BIN, else target/release/recap)."""
    path = Path(os.environ.get("RECAP_BIN", REPO / "target" / "release" / "recap"))
    if not path.exists():
        if required():
            pytest.fail(f"{path} is missing; .ci/run builds it before the Python tests")
        skip(f"the recap binary {path} is missing (cargo build --release)")
    return path


@pytest.fixture(scope="session")
def cli(recap_bin: Path):
    """Runs `recap ARGS` from the repository root; returns its stdout."""

    def run(*args: str, ok_codes: tuple[int, ...] = (0,)) -> str:
        done = subprocess.run(
            [str(recap_bin), *args], cwd=REPO, capture_output=True, text=True
        )
        assert done.returncode in ok_codes, done.stderr
        return done.stdout

    return run


def deterministic(report: dict) -> dict:
    """A JSON report without what differs between identical runs: the timings
    (`render_ns*`), the `non_deterministic` block and the command line."""
    report = json.loads(json.dumps(report))
    report.pop("non_deterministic", None)
    if report.get("provenance"):
        report["provenance"].pop("command_line", None)

    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if not k.startswith("render_ns")}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    return strip(report)
