"""Shared fixtures: the repository's bench-data, ../shared (required under RECAP_REQUIRE_SHARED=1,
skipped with a visible reason elsewhere, as crates/recap-gen/src/shared.rs does for the
Rust tests), the `recap` binary the API is compared with, the real OpenHands sessions
and a stand-in OpenAI-compatible endpoint for the adapters' summarizers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench-data"
SHARED = REPO.parent / "shared"


def required() -> bool:
    return os.environ.get("RECAP_REQUIRE_SHARED") == "1"


def skip(reason: str, *, module: bool = False) -> None:
    """Skips the test (with ``module``, the whole test module), and logs why where
    .ci/run's summary reads skips."""
    log = os.environ.get("RECAP_SKIP_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"python: {reason}\n")
    pytest.skip(reason, allow_module_level=module)


def shared(rel: str, what: str) -> Path:
    path = SHARED / rel
    if path.exists():
        return path
    if required():
        pytest.fail(f"{path} is missing ({what}); RECAP_REQUIRE_SHARED=1 requires it")
    skip(f"{what}: {path} is missing (set RECAP_REQUIRE_SHARED=1 to make this a failure)")
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def recap_bin() -> Path:
    """The `recap` binary of this checkout as it is now: cargo builds it (nothing to do
    when it is up to date, as after .ci/run's release build) and names the file, so a
    binary left from another commit is never the one compared with."""
    cargo = shutil.which("cargo")
    if cargo is None:
        if required():
            pytest.fail("cargo is not on PATH; the tests compare with the recap binary it builds")
        skip("cargo is not on PATH, so the recap binary cannot be built")
    done = subprocess.run(
        [cargo, "build", "--release", "--bin", "recap", "--message-format=json-render-diagnostics"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.fail(f"cargo build --release --bin recap failed:\n{done.stderr[-4000:]}")
    for line in reversed(done.stdout.splitlines()):
        msg = json.loads(line)
        target = msg.get("target", {})
        if msg.get("reason") == "compiler-artifact" and target.get("name") == "recap" and msg.get("executable"):
            return Path(msg["executable"])
    pytest.fail("cargo build named no recap executable")
    raise AssertionError("unreachable")


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


@pytest.fixture(scope="session")
def openhands_events(tmp_path_factory) -> Path:
    """The real OpenHands sessions of ../shared (V0 event logs), imported."""
    logs = shared("corpora/openhands-events", "OpenHands event logs for the adapters")
    out = tmp_path_factory.mktemp("oh") / "openhands.jsonl"
    import recap_replay as rr

    rr.import_logs("openhands", [logs], out)
    return out


class StandIn:
    """An OpenAI-compatible chat-completions endpoint on 127.0.0.1 that answers every
    request with ``SUMMARY n`` (n counts the requests) and keeps each request body."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stand_in.requests.append(body)
                answer = {
                    "id": f"cmpl-{len(stand_in.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": f"SUMMARY {len(stand_in.requests)}"},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "StandIn":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def endpoint():
    """A running :class:`StandIn`, stopped after the test."""
    with StandIn() as server:
        yield server
