"""Python strategies inside run(): beside built-ins and equal to their twins, opaque
(every call rendered twice), and every bad kind a render error of its call while the
run goes on; KeyboardInterrupt, the time limit, and experiment files."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

import recap_replay as rr
from recap_replay.examples import FullHistory

from conftest import BENCH, REPO

CHAT = BENCH / "chat-handwritten.jsonl"
PTC = BENCH / "handwritten.jsonl"


class RenderOnly:
    """full-history through ``render`` alone (no ``open``)."""

    forms = ("ptc", "chat")

    def __init__(self, name: str = "py-render-only") -> None:
        self.name = name

    def render(self, session, k):
        return session.messages(k)


def _rows(report: rr.Report) -> dict[tuple[str, str], dict]:
    return {(r["strategy"], r["tokenizer"]): r for r in report.to_dict()["runs"]}


def _measured(row: dict) -> dict:
    """A run row without what names the strategy, says it was checked or times it, how
    the engine's token cache served it (the built-in ran first and filled it), and
    what a report says of the baseline alone (the recorded provider's counts)."""
    skip = {"strategy", "determinism_checked", "token_counting", "replay_fidelity", "provider_cache"}

    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in skip and not k.startswith("render_ns")}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    return strip(row)


@pytest.fixture(scope="module")
def twins() -> rr.Report:
    return rr.run(
        [CHAT, PTC],
        ["full-history", FullHistory(), RenderOnly(), "rolling-window:window=2"],
        tokenizers=["o200k_base", "cl100k_base"],
        jobs=2,
    )


def test_a_python_full_history_reports_what_the_built_in_does(twins):
    rows = _rows(twins)
    for tok in ("o200k_base", "cl100k_base"):
        built_in = _measured(rows[("full-history", tok)])
        for name in ("py-full-history", "py-render-only"):
            assert _measured(rows[(name, tok)]) == built_in, (name, tok)
    sessions = twins.sessions
    for name in ("py-full-history", "py-render-only"):
        ours = sessions[sessions.strategy == name].drop(columns=["strategy"]).reset_index(drop=True)
        theirs = sessions[sessions.strategy == "full-history"].drop(columns=["strategy"]).reset_index(drop=True)
        timing = [c for c in ours.columns if c.startswith("render_ns")]
        assert ours.drop(columns=timing).equals(theirs.drop(columns=timing)), name


def test_python_strategies_are_checked_for_determinism_and_built_ins_are_not(twins):
    checked = {r["strategy"]: r["determinism_checked"] for r in twins.to_dict()["runs"]}
    assert checked["py-full-history"] and checked["py-render-only"]
    assert not checked["full-history"] and not checked["rolling-window:window=2"]
    assert "py-full-history" in twins.to_table()


def test_check_determinism_all_checks_the_built_ins_too():
    report = rr.run(CHAT, ["rolling-window:window=2"], config={"progress": False, "check_determinism": "all"})
    checked = {r["strategy"]: r["determinism_checked"] for r in report.to_dict()["runs"]}
    assert checked == {"full-history": True, "rolling-window:window=2": True}
    with pytest.raises(rr.RecapError, match='check_determinism: expected "opaque" .* got "every"'):
        rr.run(CHAT, ["full-history"], config={"progress": False, "check_determinism": "every"})


class Bad:
    """Renders full-history, but at call ``at`` of session ``session`` returns what
    ``answer(k)`` returns (or raises what it raises)."""

    forms = ("ptc", "chat")

    def __init__(self, name, answer, session="retail-return", at=2):
        self.name, self.answer, self.session, self.at = name, answer, session, at

    def render(self, session, k):
        if session.id == self.session and k == self.at:
            return self.answer(k)
        return session.messages(k)


def _raise(e):
    def f(_k):
        raise e

    return f


BAD = [
    (Bad("raises", _raise(KeyError("x"))), "exception", "KeyError: 'x'"),
    (Bad("not-a-list", lambda k: {"role": "user"}), "invalid_response", "expected a list of messages, got dict"),
    (Bad("no-role", lambda k: [{"content": "x"}]), "invalid_response", "[0].role: missing"),
    (Bad("unknown-role", lambda k: [{"role": "bot", "content": "x"}]), "invalid_response", '[0].role: unknown role "bot"'),
    (
        Bad("tool-without-call", lambda k: [{"role": "system", "content": "s"}, {"role": "tool", "tool_call_id": "c1", "content": "x"}]),
        "invalid_response",
        '[1].tool_call_id: "c1" answers no tool call',
    ),
    (Bad("bad-content", lambda k: [{"role": "user", "content": 3}]), "invalid_response", "[0].content: expected a string"),
]


@pytest.fixture(scope="module")
def bad_report() -> rr.Report:
    return rr.run(CHAT, ["full-history", *[b for b, _, _ in BAD]], jobs=2)


@pytest.mark.parametrize("bad,kind,message", BAD, ids=[b.name for b, _, _ in BAD])
def test_every_bad_answer_is_a_render_error_of_its_call(bad_report, bad, kind, message):
    row = _rows(bad_report)[(bad.name, "o200k_base")]
    errors = row["render_errors"]
    assert errors["count"] == 1 and errors["sessions"] == 1, errors
    assert errors["by_kind"] == {kind: 1}
    (example,) = errors["examples"]
    assert (example["session"], example["call"], example["kind"]) == ("retail-return", 2, kind)
    assert message in example["message"], example["message"]
    # The run went on: every other call of the strategy rendered (one error in all, the
    # other sessions complete); the other strategies had none.
    built_in = _rows(bad_report)[("full-history", "o200k_base")]
    assert row["sessions"] == built_in["sessions"] - 1
    assert built_in["render_errors"]["count"] == 0
    assert f"render error: {bad.name}" in bad_report.to_table()


class Appends(Bad):
    """full-history, with ``extra(prompt)`` appended at call ``at`` of ``session``: a bad
    message after messages the bridge read at the call before."""

    def __init__(self, name, extra):
        super().__init__(name, None)
        self.extra = extra

    def render(self, session, k):
        prompt = session.messages(k)
        if session.id == self.session and k == self.at:
            prompt.append(self.extra(prompt))
        return prompt


def _last_result_again(prompt):
    return dict(next(m for m in reversed(prompt) if m["role"] == "tool"))


@pytest.mark.parametrize(
    "extra,message",
    [(lambda prompt: {"content": "x"}, "role: missing"), (_last_result_again, "answers no tool call")],
    ids=["no-role", "result-answered-in-the-kept-part"],
)
def test_a_bad_message_after_the_part_kept_from_the_last_call_is_named_by_its_place(extra, message):
    report = rr.run(CHAT, [Appends("appends", extra)], jobs=1)
    (example,) = _rows(report)[("appends", "o200k_base")]["render_errors"]["examples"]
    session = next(s for s in rr.read_sessions(CHAT) if s.id == "retail-return")
    at = len(session.messages(2))
    assert (example["session"], example["call"]) == ("retail-return", 2)
    assert example["message"].startswith(f"[{at}].") and message in example["message"], example["message"]


class _Stamped:
    """full-history whose first message says which call it is: written into one dict
    kept across calls (``in_place``), or into a new dict at every call."""

    forms = ("chat",)

    def __init__(self, name, in_place):
        self.name, self.in_place = name, in_place

    def render(self, session, k):
        return self.open(session).next(k)

    def open(self, session):
        strategy, head = self, {"role": "system", "content": ""}

        class Replay:
            def next(self, k):
                stamp = "call " * (k + 1)
                if strategy.in_place:
                    head["content"] = stamp
                    first = head
                else:
                    first = {"role": "system", "content": stamp}
                return [first, *session.messages(k)[1:]]

        return Replay()


def test_a_message_changed_in_place_since_the_last_call_is_read_again():
    """The bridge reads only what differs from a replay's last prompt: a dict the
    strategy changed in place after returning it differs."""
    calls = rr.run(CHAT, [_Stamped("in-place", True), _Stamped("new-dicts", False)], jobs=1).calls
    tokens = {name: list(calls[calls.strategy == name].prompt_tokens) for name in ("in-place", "new-dicts")}
    assert tokens["in-place"] == tokens["new-dicts"]
    assert len(set(tokens["in-place"])) > 1


def test_a_failing_open_fails_the_calls_of_its_session_only():
    class OpenFails(FullHistory):
        def open(self, session):
            if session.id == "retail-return":
                raise RuntimeError("no replay for you")
            return super().open(session)

    report = rr.run(CHAT, ["full-history", OpenFails("open-fails")], jobs=1)
    rows = _rows(report)
    errors = rows[("open-fails", "o200k_base")]["render_errors"]
    assert errors["sessions"] == 1 and errors["by_kind"] == {"exception": errors["count"]}
    assert errors["examples"][0]["message"] == "RuntimeError: no replay for you"
    assert rows[("open-fails", "o200k_base")]["calls"] > 0


def test_a_strategy_that_changes_its_mind_breaks_determinism():
    class Fickle:
        name, forms = "fickle", ("chat",)

        def __init__(self):
            self.n = 0

        def render(self, session, k):
            self.n += 1
            prompt = session.messages(k)
            prompt[-1] = {**prompt[-1], "content": f"{prompt[-1]['content']} #{self.n}"}
            return prompt

    row = _rows(rr.run(CHAT, [Fickle()], jobs=1))[("fickle", "o200k_base")]
    assert row["determinism_checked"]
    assert row["invariant_violations"]["by_invariant"].get("deterministic", 0) == row["calls"]


def test_keyboard_interrupt_in_a_strategy_stops_the_run_and_returns_nothing():
    class Interrupts(RenderOnly):
        def render(self, session, k):
            if k == 1:
                raise KeyboardInterrupt
            return super().render(session, k)

    with pytest.raises(KeyboardInterrupt):
        rr.run([CHAT, PTC], ["full-history", Interrupts("interrupts")], jobs=2)
    # The package still runs afterwards.
    assert "py-render-only" in set(rr.run(CHAT, [RenderOnly()], jobs=1).summary.strategy)


def test_a_call_past_the_time_limit_is_a_timeout_and_the_run_ends():
    class Sleeps(Bad):
        pass

    slow = Sleeps("sleeps", lambda k: time.sleep(2.0) or [], session="retail-return", at=1)
    report = rr.run(CHAT, ["full-history", slow], jobs=2, config={"plugin_timeout": 0.3})
    errors = _rows(report)[("sleeps", "o200k_base")]["render_errors"]
    assert errors["by_kind"].get("timeout", 0) >= 1, errors
    first = errors["examples"][0]
    assert (first["session"], first["call"]) == ("retail-return", 1)
    assert "time limit" in first["message"]
    assert _rows(report)[("full-history", "o200k_base")]["render_errors"]["count"] == 0


def test_unsupported_strategies_are_refused_before_the_run():
    class NoForms:
        name = "no-forms"

        def render(self, session, k):
            return []

    with pytest.raises(rr.StrategyError, match="no `forms`"):
        rr.run(CHAT, [NoForms()])


EXPERIMENT = """
corpora = ["{corpus}"]
strategies = ["full-history"]
python = [
  "recap_replay.examples:KeepLast(turns=2)",
  {{ strategy = "recap_replay.examples:FullHistory", options = {{ name = "py-fh" }} }},
]
tokenizers = ["o200k_base"]
jobs = 2
format = "json"
"""


def _main(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "recap_replay", *args], capture_output=True, text=True, cwd=REPO)


def test_an_experiment_file_runs_python_strategies(tmp_path):
    file = tmp_path / "experiment.toml"
    file.write_text(EXPERIMENT.format(corpus=CHAT))
    done = _main("run", str(file))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    names = [r["strategy"] for r in report["runs"]]
    assert names == ["full-history", "keep-last:turns=2", "py-fh"]
    rows = {r["strategy"]: r for r in report["runs"]}
    assert _measured(rows["py-fh"]) == _measured(rows["full-history"])
    assert rows["keep-last:turns=2"]["prompt_tokens_total"] < rows["full-history"]["prompt_tokens_total"]


@pytest.mark.parametrize(
    "body,message",
    [
        ('python = ["recap_replay.examples:KeepLast(turns=0)"]', "`python[0]`: 'recap_replay.examples:KeepLast'"),
        ('python = ["recap_replay.examples:KeepLast(3)"]', "`python[0]`: 'recap_replay.examples:KeepLast(3)': options must be keyword"),
        ('python = ["no_such_module_q:X"]', "`python[0]`: 'no_such_module_q:X': cannot import"),
        ("python = [{ strategy = 3 }]", "`python[0]`: expected a table with `strategy`"),
        ('sweeps = ["rolling-window:window=1..3"]', "`sweeps`: run by `recap run --config` only"),
        ("strategy = []", "`strategy`: unknown key"),
    ],
)
def test_a_bad_experiment_file_names_the_key(tmp_path, body, message):
    file = tmp_path / "experiment.toml"
    file.write_text(f'corpora = ["{CHAT}"]\n{body}\n')
    done = _main("run", str(file))
    assert done.returncode == 2
    assert str(file) in done.stderr and message in done.stderr, done.stderr


def test_an_experiment_file_sets_the_determinism_check(tmp_path):
    file = tmp_path / "experiment.toml"
    file.write_text(f'corpora = ["{CHAT}"]\nstrategies = ["full-history"]\ncheck_determinism = "all"\nformat = "json"\n')
    done = _main("run", str(file))
    assert done.returncode == 0, done.stderr
    assert [r["determinism_checked"] for r in json.loads(done.stdout)["runs"]] == [True]


def test_the_recap_binary_sends_python_experiments_to_the_package(cli, tmp_path):
    file = tmp_path / "experiment.toml"
    file.write_text(EXPERIMENT.format(corpus=CHAT))
    cli("run", "--config", str(file), ok_codes=(2,))
