"""read_sessions, strategies(), import_logs."""

from __future__ import annotations

import json

import pytest

import recap_replay as rr

from conftest import BENCH, shared


def test_read_sessions_yields_every_valid_session(cli):
    for corpus in sorted(BENCH.glob("*.jsonl")):
        sessions = list(rr.read_sessions(corpus))
        out = cli("validate", str(corpus))
        assert f"{len(sessions)} sessions ok, 0 rejected" in out
        assert len({s.id for s in sessions}) == len(sessions)


def test_a_bad_line_names_file_line_and_field_and_reading_goes_on(tmp_path):
    good = (BENCH / "chat-handwritten.jsonl").read_text().splitlines()
    bad_line = json.dumps({"id": "b", "mission": "m", "turns": [{"number": 2}]})
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join([good[0], bad_line, good[1]]) + "\n")
    it = rr.read_sessions(path)
    assert next(it).id == json.loads(good[0])["id"]
    with pytest.raises(rr.CorpusError) as e:
        next(it)
    assert (e.value.file, e.value.line, e.value.session) == (str(path), 2, "b")
    assert e.value.field.startswith("turns")
    assert f"{path}:2:" in str(e.value)
    assert next(it).id == json.loads(good[1])["id"]
    with pytest.raises(StopIteration):
        next(it)


def test_skip_invalid_keeps_the_rejections(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": 1}\n' + (BENCH / "chat-handwritten.jsonl").read_text())
    it = rr.read_sessions(path, skip_invalid=True)
    assert len(list(it)) == len(list(rr.read_sessions(BENCH / "chat-handwritten.jsonl")))
    assert [(r.line, r.field) for r in it.rejected] == [(1, "id")]


def test_a_missing_file_is_an_error_at_once(tmp_path):
    with pytest.raises(rr.CorpusError) as e:
        rr.read_sessions(tmp_path / "none.jsonl")
    assert (e.value.line, e.value.field) == (0, "file")


def test_strategies_lists_the_registry(cli):
    listed = rr.strategies()
    names = [s["name"] for s in listed]
    out = cli("strategies")
    for name in names:
        assert f"{name}  (" in out
    by_name = {s["name"]: s for s in listed}
    assert by_name["rolling-window"]["forms"] == ["ptc", "chat"]
    assert by_name["rolling-window"]["options"]["window"][0] == "3"
    assert by_name["tool-result-clearing"]["forms"] == ["chat"]


def test_import_logs_writes_a_corpus_recap_reads(tmp_path, cli):
    logs = shared("corpora/openhands-events", "OpenHands event logs to import")
    out = tmp_path / "oh.jsonl"
    summary = rr.import_logs("openhands", [logs], out)
    assert summary["sessions"] > 0 and summary["files"] > 0
    assert len(list(rr.read_sessions(out))) == summary["sessions"]
    cli_out = tmp_path / "cli.jsonl"
    cli("import", "openhands", str(logs), "-o", str(cli_out), ok_codes=(0, 1))
    assert out.read_bytes() == cli_out.read_bytes()
    with pytest.raises(rr.RecapError, match="already exists"):
        rr.import_logs("openhands", [logs], out)
    assert rr.import_logs("openhands", [logs], out, force=True)["sessions"] == summary["sessions"]
    with pytest.raises(rr.RecapError, match="found no session"):
        rr.import_logs("smolagents", [logs], tmp_path / "none.jsonl")
    assert not (tmp_path / "none.jsonl").exists()
    with pytest.raises(rr.RecapError, match="unknown"):
        rr.import_logs("nope", [logs], tmp_path / "x.jsonl")
