"""run(): the report against the CLI's, its tables, its errors, the GIL and Ctrl-C."""

from __future__ import annotations

import io
import json
import os
import signal
import threading
import time

import pandas as pd
import pyarrow as pa
import pytest

import recap_replay as rr

from conftest import BENCH, REPO, deterministic

CHAT = BENCH / "chat-handwritten.jsonl"
PTC = BENCH / "handwritten.jsonl"
STRATEGIES = ["full-history", "rolling-window:window=2", "observation-masking:window=3"]


@pytest.fixture(scope="module")
def report() -> rr.Report:
    return rr.run([CHAT, PTC], STRATEGIES, tokenizers=["o200k_base", "cl100k_base"], jobs=2)


@pytest.fixture(scope="module")
def cli_out(cli, tmp_path_factory) -> tuple[dict, object]:
    out = tmp_path_factory.mktemp("cli") / "report"
    args = ["run", str(CHAT), str(PTC), "--tokenizer", "o200k_base", "--tokenizer", "cl100k_base"]
    for s in STRATEGIES:
        args += ["--strategy", s]
    cli(*args, "--format", "json", "--out", str(out))
    return json.loads((out / "report.json").read_text()), out


def test_to_json_is_the_cli_report_in_its_deterministic_part(report, cli_out):
    ours = json.loads(report.to_json())
    theirs, _ = cli_out
    assert ours["provenance"]["git_commit"] == theirs["provenance"]["git_commit"], (
        f"the installed recap_replay was built from {rr.GIT_COMMIT}, the recap binary "
        f"from {theirs['provenance']['git_commit']}: rebuild the wheel (docs/python.md)"
    )
    assert deterministic(ours) == deterministic(theirs)
    assert ours["provenance"]["command_line"], "the Python process's command line"
    assert set(ours["non_deterministic"]) == {"started_at", "finished_at", "elapsed_seconds"}


def test_summary_has_the_columns_and_values_of_the_json_runs(report):
    runs = report.to_dict()["runs"]
    for r in runs:
        r.pop("session_details")
        r.pop("prompt_tokens_by_call")
    expected = pd.json_normalize(runs)
    # pandas leaves lists of records (the examples) as columns; recap's summary does not.
    listed = [c for c in expected.columns if c.endswith(".examples")]
    expected = expected.drop(columns=listed)
    summary = report.summary
    assert list(summary.columns) == list(expected.columns)
    # Rows per form: chat runs the three strategies, PTC-Lisp the two that render it
    # (observation-masking is chat-only), on each tokenizer (full-history asked, so no
    # implicit row).
    assert list(zip(summary.form, summary.strategy, summary.tokenizer)) == [
        (form, s, tok)
        for form, strategies in (("ptc", STRATEGIES[:2]), ("chat", STRATEGIES))
        for tok in ("o200k_base", "cl100k_base")
        for s in strategies
    ]
    for col in expected.columns:
        if col.startswith("render_ns"):
            continue
        for ours, theirs in zip(summary[col], expected[col]):
            if isinstance(theirs, list):
                assert list(ours) == theirs, col
            elif theirs is None or (isinstance(theirs, float) and pd.isna(theirs)):
                assert ours is None or pd.isna(ours), col
            else:
                assert ours == theirs, col


def _compare_csv(frame: pd.DataFrame, csv_path, key_cols):
    theirs = pd.read_csv(csv_path, keep_default_na=True)
    assert list(frame.columns) == list(theirs.columns)
    assert len(frame) == len(theirs)
    for col in theirs.columns:
        if col.startswith("render_ns"):
            continue
        a, b = frame[col], theirs[col]
        if pd.api.types.is_numeric_dtype(b) and not pd.api.types.is_bool_dtype(b):
            pd.testing.assert_series_equal(
                a.astype("float64"), b.astype("float64"), check_names=False, rtol=1e-12
            )
        else:
            assert [None if pd.isna(x) else str(x) for x in a] == [
                None if pd.isna(x) else str(x) for x in b
            ], col


def test_sessions_and_calls_are_the_cli_csvs(report, cli_out):
    _, out = cli_out
    _compare_csv(report.sessions, out / "sessions.csv", ["corpus", "line", "strategy"])
    _compare_csv(report.calls, out / "calls.csv", ["corpus", "line", "strategy", "call"])


def test_arrow_and_polars_read_the_tables_in_place(report):
    table = pa.table(report.to_arrow("calls"))
    assert table.num_rows == len(report.calls)
    assert table.schema.field("prompt_tokens").type == pa.uint64()
    assert table.schema.field("render_error").type == pa.string()
    # Asked twice, the same table.
    assert pa.table(report.to_arrow("calls")).equals(table)
    polars = pytest.importorskip("polars")
    frame = report.to_polars("sessions")
    assert isinstance(frame, polars.DataFrame)
    assert frame.columns == list(report.sessions.columns)
    assert frame["prompt_tokens_total"].sum() == report.sessions["prompt_tokens_total"].sum()
    with pytest.raises(ValueError, match="expected 'summary'"):
        report.to_arrow("nope")  # type: ignore[arg-type]


def test_notebook_and_text_views(report):
    html = report._repr_html_()
    assert html.startswith("<table") and "rolling-window:window=2" in html
    assert html.count("<tr>") == 1 + len(report.summary)
    assert "prompt tokens" in repr(report)
    assert "| strategy" in report.to_markdown()


def test_default_strategies_are_recap_runs(cli):
    ours = rr.run(CHAT, config={"calls": False})
    theirs = json.loads(cli("run", str(CHAT), "--format", "json"))
    assert [r["strategy"] for r in ours.to_dict()["runs"]] == [
        r["strategy"] for r in theirs["runs"]
    ]
    with pytest.raises(rr.RecapError, match="kept no calls"):
        ours.calls


def test_settings_reach_the_engine():
    a = rr.run(CHAT, ["rolling-window"], config={"cache_read_ratio": 0.5, "session_details": False})
    d = a.to_dict()
    assert d["settings"]["cache_read_ratio"] == 0.5
    assert all(r["session_details"] == [] for r in d["runs"])
    assert len(a.sessions) == 0


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"corpora": REPO / "missing.jsonl"}, rr.CorpusError, "missing.jsonl"),
        ({"strategies": ["rolling-windw"]}, rr.RecapError, "rolling-windw"),
        ({"tokenizers": ["p50k"]}, rr.RecapError, "p50k"),
        ({"config": {"cache_read_ratio": 2}}, ValueError, "cache_read_ratio"),
        ({"config": {"cache_ratio": 0.2}}, ValueError, "valid keys: cache_read_ratio"),
        ({"config": "experiment.toml"}, TypeError, "recap run --config"),
        ({"jobs": 0}, ValueError, "jobs"),
        ({"strategies": []}, rr.StrategyError, "empty"),
        ({"plugins": [REPO / "no-such-plugin.so"]}, rr.RecapError, "no-such-plugin.so"),
    ],
)
def test_bad_arguments_are_clear_errors(kwargs, error, match):
    args = {"corpora": CHAT, "strategies": ["full-history"], **kwargs}
    with pytest.raises(error, match=match):
        rr.run(**args)


def test_a_missing_corpus_names_file_line_and_field():
    with pytest.raises(rr.CorpusError) as e:
        rr.run([CHAT, REPO / "missing.jsonl"], ["full-history"])
    assert e.value.file.endswith("missing.jsonl")
    assert (e.value.line, e.value.field) == (0, "file")


def test_a_corpus_without_sessions_is_refused(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(rr.NoSessionsError, match="empty"):
        rr.run(empty, ["full-history"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    with pytest.raises(rr.NoSessionsError, match="rejected.*mission"):
        rr.run(bad, ["full-history"])


def test_rejected_lines_are_reported_and_the_rest_runs(tmp_path):
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"id": "x"}\n' + CHAT.read_text())
    d = rr.run(mixed, ["full-history"]).to_dict()
    assert d["rejected"][0]["line"] == 1
    assert d["settings"]["corpora"][0]["sessions"] == len(list(rr.read_sessions(CHAT)))


def _all_corpora():
    return sorted(BENCH.glob("*.jsonl"))


def test_the_engine_releases_the_gil():
    """A Python thread keeps running while a run works on another."""
    ticks = 0
    done = threading.Event()

    def engine():
        rr.run(_all_corpora(), jobs=1, config={"calls": False})
        done.set()

    t = threading.Thread(target=engine)
    t.start()
    start = time.perf_counter()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    elapsed = time.perf_counter() - start
    t.join()
    # Held GIL: the loop would not get a turn until the run ended (a handful of ticks).
    assert ticks > 0.3 * elapsed / 0.001, (ticks, elapsed)


def test_ctrl_c_stops_a_run_and_returns_nothing():
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        # Long enough that it is still running when Ctrl-C comes (several seconds).
        for _ in range(20):
            rr.run(_all_corpora(), jobs=1, config={"calls": False, "progress": False})
    timer.cancel()
    assert time.perf_counter() - started < 15


def test_no_progress_bar_when_stderr_is_not_a_terminal(capfd):
    rr.run(CHAT, ["full-history"])
    assert capfd.readouterr().err == ""


def test_report_printable_to_a_stream():
    buf = io.StringIO()
    print(rr.run(CHAT, ["full-history"]), file=buf)
    assert "full-history" in buf.getvalue()
