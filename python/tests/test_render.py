"""render(), Python strategies (good and every bad kind), load_strategy."""

from __future__ import annotations

import json

import pytest

import recap_replay as rr
from recap_replay.examples import FullHistory, KeepLast

from conftest import BENCH

CHAT = BENCH / "chat-handwritten.jsonl"
PTC = BENCH / "handwritten.jsonl"


def _sessions(path):
    return list(rr.read_sessions(path))


def test_render_is_recap_render(cli):
    s = _sessions(CHAT)[0]
    for spec in ["full-history", "rolling-window:window=1", "token-budget-trim:max_tokens=500"]:
        for k in (0, len(s) // 2, len(s)):
            ours = rr.render(CHAT, s.id, k, spec)
            theirs = json.loads(
                cli("render", str(CHAT), "--session", s.id, "--turn", str(k + 1),
                    "--strategy", spec, "--format", "json")
            )
            assert ours == theirs, (spec, k)


@pytest.mark.parametrize("corpus", [CHAT, PTC])
def test_python_full_history_equals_the_built_in_at_every_call(corpus):
    for s in _sessions(corpus):
        for k in range(s.calls):
            built_in = rr.render(corpus, s.id, k, "full-history")
            assert rr.render(corpus, s.id, k, FullHistory()) == built_in, (s.id, k)
            assert s.messages(k) == built_in


def test_a_strategy_in_twenty_lines():
    s = _sessions(CHAT)[1]
    prompt = rr.render(CHAT, s.id, len(s), KeepLast(turns=1))
    last = s.turn(-1)
    assert prompt == s.opening() + last


def test_the_session_is_read_only_and_lazy():
    s = _sessions(CHAT)[0]
    with pytest.raises(AttributeError):
        s.id = "other"  # type: ignore[misc]
    assert s.form == "chat" and len(s) > 0
    assert s.turn(0) == s.turn(-len(s))
    with pytest.raises(IndexError, match="out of range"):
        s.turn(len(s))
    with pytest.raises(IndexError):
        s.messages(len(s) + 1)
    assert isinstance(s.meta, dict)
    s.meta["x"] = 1  # a copy: the session does not change
    assert "x" not in s.meta


class Good:
    name = "good"
    forms = ("chat",)

    def render(self, session, k):
        return session.messages(k)


def _bad(render, name="bad"):
    return type("Bad", (), {"name": name, "forms": ("chat",), "render": render})()


@pytest.mark.parametrize(
    "render, path, match",
    [
        (lambda self, s, k: {"role": "user"}, "", "expected a list of messages, got dict"),
        (lambda self, s, k: ["hi"], "[0]", "expected a message"),
        (lambda self, s, k: [{"content": "x"}], "[0].role", "missing"),
        (lambda self, s, k: [{"role": "bot", "content": "x"}], "[0].role", 'unknown role "bot"'),
        (lambda self, s, k: [{"role": "user", "content": 3}], "[0].content", "got int"),
        (lambda self, s, k: [{"role": "user", "content": "x", "contnet": 1}], "[0].contnet", "unknown key"),
        (
            lambda self, s, k: [{"role": "tool", "tool_call_id": "c1", "content": "r"}],
            "[0].tool_call_id",
            "answers no tool call",
        ),
        (lambda self, s, k: [{"role": "tool", "content": "r"}], "[0].tool_call_id", "missing"),
        (
            lambda self, s, k: [
                {"role": "assistant", "content": None,
                 "tool_calls": [{"id": "c1", "type": "function", "function": {"name": 1, "arguments": "{}"}}]},
            ],
            "[0].tool_calls[0].function.name",
            "expected a string",
        ),
        (
            lambda self, s, k: [
                {"role": "assistant", "content": None,
                 "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "r"},
                {"role": "tool", "tool_call_id": "c1", "content": "again"},
            ],
            "[2].tool_call_id",
            "answers no tool call",
        ),
    ],
)
def test_a_malformed_prompt_is_a_render_error_with_the_path(render, path, match):
    s = _sessions(CHAT)[0]
    with pytest.raises(rr.RenderError, match=match) as e:
        rr.render(CHAT, s.id, 1, _bad(render))
    assert (e.value.strategy, e.value.session, e.value.call, e.value.path) == ("bad", s.id, 1, path)
    assert f"session {s.id!r}, call 1" in str(e.value)


def test_an_exception_is_a_render_error_with_its_last_line():
    def render(self, s, k):
        raise KeyError("no such turn")

    s = _sessions(CHAT)[0]
    with pytest.raises(rr.RenderError, match=r"bad: session .*, call 2: KeyError: 'no such turn'") as e:
        rr.render(CHAT, s.id, 2, _bad(render))
    assert isinstance(e.value.__cause__, KeyError)


def test_open_is_asked_for_the_calls_in_order():
    asked = []

    class Replay:
        def __init__(self, session):
            self.session = session

        def next(self, k):
            asked.append(k)
            return self.session.messages(k)

    class Incremental(Good):
        def open(self, session):
            return Replay(session)

    s = _sessions(CHAT)[0]
    assert rr.render(CHAT, s.id, 3, Incremental()) == s.messages(3)
    assert asked == [0, 1, 2, 3]


def test_valid_messages_come_back_as_recap_sends_them():
    s = _sessions(CHAT)[0]
    prompt = [
        {"role": "system", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "r"},
    ]
    out = rr.render(CHAT, s.id, 0, _bad(lambda self, s_, k: prompt, name="shape"))
    assert out[0] == {"role": "system", "content": "ab"}
    assert out[1]["content"] is None  # a call-only assistant message, as the API writes it
    assert out[2] == {"role": "tool", "content": "r", "tool_call_id": "c1", "name": "f"}


@pytest.mark.parametrize(
    "obj, match",
    [
        (type("N", (), {"forms": ("chat",), "render": lambda s, x, k: []})(), "no `name`"),
        (type("F", (), {"name": "f", "render": lambda s, x, k: []})(), "no `forms`"),
        (type("R", (), {"name": "r", "forms": ("chat",)})(), "no `render`"),
        (type("U", (), {"name": "u", "forms": ("lisp",), "render": lambda s, x, k: []})(), "'lisp'"),
        (type("S", (), {"name": "s", "forms": "chat", "render": lambda s, x, k: []})(), "must be a list"),
        (type("E", (), {"name": "", "forms": ("chat",), "render": lambda s, x, k: []})(), "non-empty"),
    ],
)
def test_a_malformed_strategy_is_refused_before_anything_runs(obj, match):
    with pytest.raises(rr.StrategyError, match=match):
        rr.run(CHAT, [obj])
    with pytest.raises(rr.StrategyError, match=match):
        rr.render(CHAT, "x", 0, obj)


def test_everything_missing_is_said_at_once():
    with pytest.raises(rr.StrategyError, match="no `name`.*no `forms`.*no `render`"):
        rr.check_strategy(object())


def test_two_strategies_with_one_name_are_refused():
    with pytest.raises(rr.StrategyError, match="two strategies are named 'good'"):
        rr.run(CHAT, [Good(), Good()])
    with pytest.raises(rr.StrategyError, match="two strategies are named 'full-history'"):
        rr.run(CHAT, ["full-history", FullHistory(name="full-history")])


def test_a_strategy_of_another_form_is_not_applicable():
    s = _sessions(PTC)[0]
    with pytest.raises(rr.RenderError, match="renders chat sessions"):
        rr.render(PTC, s.id, 0, Good())


def test_load_strategy_names_module_and_class():
    s = rr.load_strategy("recap_replay.examples:KeepLast", {"turns": 2})
    assert s.name == "keep-last:turns=2"
    for ref, match in [
        ("recap_replay.examples", "expected `module:Class`"),
        ("no_such_module_x:Foo", "cannot import no_such_module_x"),
        ("recap_replay.examples:Nope", "has no Nope"),
        ("recap_replay.examples:FORMS_X", "has no FORMS_X"),
    ]:
        with pytest.raises(rr.StrategyError, match=match):
            rr.load_strategy(ref)
    with pytest.raises(rr.StrategyError, match="turns must be at least 1"):
        rr.load_strategy("recap_replay.examples:KeepLast", {"turns": 0})
    with pytest.raises(rr.StrategyError, match="unexpected keyword"):
        rr.load_strategy("recap_replay.examples:KeepLast", {"window": 2})


def test_render_errors_of_spec_strings():
    s = _sessions(CHAT)[0]
    with pytest.raises(rr.RecapError, match='no session "nope"; available'):
        rr.render(CHAT, "nope", 0, "full-history")
    with pytest.raises(rr.RecapError, match="k = 999"):
        rr.render(CHAT, s.id, 999, "full-history")
    with pytest.raises(rr.RecapError, match="ptc"):
        rr.render(CHAT, s.id, 0, "ptc-runner")
    with pytest.raises(ValueError, match="k:"):
        rr.render(CHAT, s.id, -1, "full-history")
