"""Sharded runs: run_shard + merge, and recap_replay.ray on a local Ray instance
(num_cpus=2): the merged report equals the unsharded run's in its deterministic part,
sessions.csv and calls.csv included."""

from __future__ import annotations

import json
import os
import threading

import pandas as pd
import pytest

import recap_replay as rr
from recap_replay.examples import FullHistory, KeepLast

from conftest import BENCH, deterministic

if os.environ.get("RECAP_REQUIRE_SHARED") == "1":
    import ray  # CI installs ray (python/requirements/ci.txt): its absence is a failure
else:
    ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install './python[ray]')")
import recap_replay.ray as rr_ray  # noqa: E402

CHAT = BENCH / "chat-handwritten.jsonl"
PTC = BENCH / "handwritten.jsonl"
STRATEGIES = ["full-history", "rolling-window:window=2", "observation-masking:window=3"]
#: Spec strings and Python strategy objects (importable on Ray's workers: an installed
#: module), with and without ``open``.
MIXED = ["rolling-window:window=2", FullHistory(), KeepLast(turns=2)]
TOKENIZERS = ["o200k_base", "cl100k_base"]


def merged_part(report: rr.Report) -> dict:
    """The deterministic part of a report, less the list of shards a merge adds."""
    d = deterministic(report.to_dict())
    d["provenance"].pop("shards", None)
    return d


def without_timings(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=[c for c in frame.columns if c.startswith("render_ns")])


def assert_same_report(merged: rr.Report, whole: rr.Report) -> None:
    assert merged_part(merged) == merged_part(whole)
    pd.testing.assert_frame_equal(without_timings(merged.sessions), without_timings(whole.sessions))
    pd.testing.assert_frame_equal(without_timings(merged.calls), without_timings(whole.calls))
    pd.testing.assert_frame_equal(without_timings(merged.summary), without_timings(whole.summary))


@pytest.fixture(scope="module")
def whole() -> rr.Report:
    return rr.run([CHAT, PTC], STRATEGIES, tokenizers=TOKENIZERS, jobs=2)


@pytest.fixture(scope="module")
def mixed_whole() -> rr.Report:
    return rr.run([CHAT, PTC], MIXED, tokenizers=TOKENIZERS, jobs=2)


@pytest.fixture(scope="module")
def local_ray():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=100 * 1024 * 1024,
    )
    yield ray
    ray.shutdown()


def test_shards_run_in_this_process_merge_into_the_whole_run(whole, tmp_path):
    parts = []
    for i in range(3):
        done = rr.run_shard([CHAT, PTC], STRATEGIES, shard=f"{i}/3", out=tmp_path / f"p{i}", tokenizers=TOKENIZERS)
        assert done["shard"] == f"{i}/3"
        assert (tmp_path / f"p{i}" / "part.json").is_file()
        parts.append(done)
    assert sum(p["owned"] for p in parts) == parts[0]["entries"] == 20
    merged = rr.merge([tmp_path / "p2", tmp_path / "p0", tmp_path / "p1"])
    assert_same_report(merged, whole)
    assert [s["shard"] for s in merged.to_dict()["provenance"]["shards"]] == ["0/3", "1/3", "2/3"]


def test_the_ray_run_is_the_whole_run_and_writes_what_recap_merge_writes(local_ray, whole, cli, tmp_path):
    out = tmp_path / "merged"
    merged = rr_ray.run([CHAT, PTC], STRATEGIES, shards=3, tokenizers=TOKENIZERS, out=out)
    assert_same_report(merged, whole)
    for name in ("report.json", "report.html", "sessions.csv", "calls.csv", "report.csv"):
        assert (out / name).is_file(), name
    assert json.loads((out / "report.json").read_text()) == merged.to_dict()
    # calls.csv as the CLI writes it for the unsharded run, render times aside.
    cli_out = tmp_path / "cli"
    args = ["run", str(CHAT), str(PTC), "--out", str(cli_out)]
    for s in STRATEGIES:
        args += ["--strategy", s]
    for t in TOKENIZERS:
        args += ["--tokenizer", t]
    cli(*args)
    for name in ("calls.csv", "sessions.csv"):
        ours = pd.read_csv(out / name, keep_default_na=False)
        theirs = pd.read_csv(cli_out / name, keep_default_na=False)
        pd.testing.assert_frame_equal(without_timings(ours), without_timings(theirs))


def test_parts_on_a_shared_directory_and_shards_without_sessions(local_ray, tmp_path):
    # Two sessions over seven shards: five shards or more own none.
    corpus = tmp_path / "two.jsonl"
    corpus.write_text("".join(CHAT.read_text().splitlines(keepends=True)[:2]))
    whole = rr.run(corpus, ["rolling-window:window=2"], jobs=1)
    merged = rr_ray.run(corpus, ["rolling-window:window=2"], shards=7, parts_dir=tmp_path / "parts")
    assert_same_report(merged, whole)
    dirs = sorted(p.name for p in (tmp_path / "parts").iterdir())
    assert dirs == [f"shard-{i}-of-7" for i in range(7)]
    owned = [json.loads((tmp_path / "parts" / d / "part.json").read_text())["entries"]["owned"] for d in dirs]
    assert sum(owned) == 2 and owned.count(0) >= 5
    # The same parts directory again is refused (its parts hold files) unless force.
    with pytest.raises(rr.RecapError, match=r"shard \d/7: .*holds"):
        rr_ray.run(corpus, ["rolling-window:window=2"], shards=7, parts_dir=tmp_path / "parts")
    again = rr_ray.run(corpus, ["rolling-window:window=2"], shards=7, parts_dir=tmp_path / "parts", force=True)
    assert merged_part(again) == merged_part(whole)


def test_a_failing_shard_is_named_with_its_error(local_ray):
    with pytest.raises(rr.RecapError, match=r"shard \d/2: .*no-such-strategy"):
        rr_ray.run(CHAT, ["no-such-strategy"], shards=2)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"shards": 0}, ValueError, "shards: expected a positive integer"),
        ({"shards": 2, "cpus_per_shard": 0}, ValueError, "cpus_per_shard"),
        ({"shards": 2, "jobs": -1}, ValueError, "jobs: expected a positive integer"),
    ],
)
def test_bad_arguments_are_refused_before_any_task(kwargs, error, match):
    with pytest.raises(error, match=match):
        rr_ray.run(CHAT, ["full-history"], **kwargs)


@pytest.mark.parametrize(
    ("shard", "match"),
    [("3/3", r"expected 0 <= I < N"), ("1-3", "expected I/N"), ((1,), r"expected \"I/N\" or \(I, N\)")],
)
def test_a_bad_shard_is_refused(shard, match, tmp_path):
    with pytest.raises((ValueError, TypeError), match=match):
        rr.run_shard(CHAT, ["full-history"], shard=shard, out=tmp_path / "p")
    assert not (tmp_path / "p").exists()


def test_merge_refuses_a_missing_shard_and_writes_nothing(tmp_path):
    rr.run_shard(CHAT, ["full-history"], shard="0/2", out=tmp_path / "p0")
    with pytest.raises(rr.RecapError, match=r"shard 1/2 .*missing"):
        rr.merge([tmp_path / "p0"], out=tmp_path / "merged")
    assert not (tmp_path / "merged").exists() or not any((tmp_path / "merged").iterdir())
    with pytest.raises(rr.RecapError, match="no part.json"):
        rr.merge([tmp_path])


def test_python_strategies_in_shards_of_this_process_merge_into_the_whole_run(mixed_whole, tmp_path):
    parts = [tmp_path / f"p{i}" for i in range(3)]
    for i, out in enumerate(parts):
        rr.run_shard([CHAT, PTC], MIXED, shard=(i, 3), out=out, tokenizers=TOKENIZERS, jobs=2)
    merged = rr.merge(parts)
    assert_same_report(merged, mixed_whole)
    checked = {r["strategy"]: r["determinism_checked"] for r in merged.to_dict()["runs"]}
    assert checked["py-full-history"] and checked["keep-last:turns=2"]
    assert not checked["rolling-window:window=2"]


def test_python_strategies_travel_to_ray_tasks_pickled(local_ray, mixed_whole):
    merged = rr_ray.run([CHAT, PTC], MIXED, shards=3, tokenizers=TOKENIZERS)
    assert_same_report(merged, mixed_whole)
    assert {"py-full-history", "keep-last:turns=2"} <= set(merged.summary.strategy)


class Locked(FullHistory):
    """full-history holding what cannot be pickled."""

    def __init__(self) -> None:
        super().__init__("locked")
        self.lock = threading.Lock()


def test_a_strategy_that_does_not_pickle_is_refused_before_any_task(tmp_path):
    with pytest.raises(rr.StrategyError, match=r"locked: .*must pickle .*Ray worker process.*lock"):
        rr_ray.run(CHAT, ["full-history", Locked()], shards=2, parts_dir=tmp_path / "parts")
    assert not (tmp_path / "parts").exists()
    # In this process it runs: run_shard needs no copy.
    done = rr.run_shard(CHAT, [Locked()], shard="0/1", out=tmp_path / "p0")
    assert done["sessions"] > 0


def test_keyboard_interrupt_in_a_python_strategy_stops_a_shard_with_nothing_written(tmp_path):
    class Interrupts:
        name, forms = "interrupts", ("ptc", "chat")

        def render(self, session, k):
            if k == 1:
                raise KeyboardInterrupt
            return session.messages(k)

    with pytest.raises(KeyboardInterrupt):
        rr.run_shard([CHAT, PTC], ["full-history", Interrupts()], shard="0/1", out=tmp_path / "p")
    assert not (tmp_path / "p").exists() or not any((tmp_path / "p").iterdir())


def test_keyboard_interrupt_in_a_python_strategy_inside_a_ray_task_fails_its_shard_by_name(local_ray, tmp_path):
    # Defined here, so that Ray's workers get the class itself (it is not importable).
    class Interrupts(FullHistory):
        def render(self, session, k):
            if k == 1:
                raise KeyboardInterrupt
            return session.messages(k)

        open = None  # every call through render

    with pytest.raises(rr.RecapError, match=r"shard \d/2: stopped by KeyboardInterrupt \(raised by a Python strategy") as raised:
        rr_ray.run(CHAT, ["full-history", Interrupts("interrupts")], shards=2, parts_dir=tmp_path / "parts")
    # The failed shard's task has ended (the other may still run): it left no part.
    shard = str(raised.value).split("/", 1)[0].removeprefix("shard ")
    left = tmp_path / "parts" / f"shard-{shard}-of-2"
    assert not [p.name for p in left.rglob("*") if p.name != ".recap.lock"], sorted(left.rglob("*"))
