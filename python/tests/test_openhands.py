"""OpenHands SDK condensers as strategies, on the real OpenHands sessions of ../shared.

The SDK needs CPython >= 3.12: .ci/run runs this file in a second environment
(python/requirements/openhands.txt). Where the SDK is not installed it is skipped with
a logged reason (a failure under RECAP_REQUIRE_SHARED=1)."""

from __future__ import annotations

import os

import pytest

import recap_replay as rr
from recap_replay.strategy import checked_prompt

from conftest import required, skip

# The SDK's LiteLLM otherwise tries to download its model price list at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")

try:
    from openhands.sdk.context.condenser import (
        CondenserBase,
        NoOpCondenser,
        PipelineCondenser,
        RollingCondenser,
    )
    from openhands.sdk.context.condenser.base import CondensationRequirement
    from openhands.sdk.context.view import View
    from openhands.sdk.event import (
        Condensation,
        CondensationRequest,
        LLMConvertibleEvent,
        ObservationEvent,
    )
except ImportError as e:  # pragma: no cover - depends on the environment
    if required():
        pytest.fail(f"the OpenHands SDK is not installed ({e}); RECAP_REQUIRE_SHARED=1 requires it", pytrace=False)
    skip(f"the OpenHands SDK is not installed ({e}); it needs CPython >= 3.12", module=True)

from recap_replay.adapters.openhands import (  # noqa: E402
    MAX_CONDENSATIONS_PER_CALL,
    Condenser,
    prompt_tokens,
    summarizing,
)
from recap_replay.adapters._openhands_events import (  # noqa: E402
    EventLog,
    RecordedObservation,
    to_openai,
)

# Two real sessions: the longest (49 calls; 48 tool calls) and one whose agent calls no
# tool (21 responses, its observations user messages).
SESSIONS = ("ponylang__ponyc-4588", "output:2")


@pytest.fixture(scope="module")
def sessions(openhands_events):
    found = {s.id: s for s in rr.read_sessions(openhands_events) if s.id in SESSIONS}
    assert sorted(found) == sorted(SESSIONS)
    return [found[i] for i in SESSIONS]


def _replay(strategy, session):
    """Every call of ``session`` through one replay, each prompt through recap's
    checks (roles, tool-call pairing, shapes): [(prompt, replay view)]."""
    replay = strategy.open(session)
    out = []
    for k in range(session.calls):
        prompt = replay.next(k)
        checked_prompt(strategy.name, session.id, k, prompt)
        out.append((prompt, list(replay.view.events)))
    return replay, out


def _sdk_messages(events):
    """What the SDK itself sends for ``events``: its own events_to_messages."""
    return [to_openai(m) for m in LLMConvertibleEvent.events_to_messages(list(events))]


def _text(content):
    if isinstance(content, list):
        return "".join(p["text"] for p in content)
    return content or ""


def _same_as_sdk(prompt, events):
    """The prompt is what the SDK makes of the view, message by message (the text,
    the tool calls, the ids) — recap only keeps the recorded bytes where the SDK's
    message is one recorded message."""
    sdk = _sdk_messages(events)
    assert [m["role"] for m in prompt] == [m["role"] for m in sdk]
    for ours, theirs in zip(prompt, sdk):
        assert _text(ours.get("content")) == _text(theirs.get("content"))
        assert ours.get("tool_calls") == theirs.get("tool_calls")
        assert ours.get("tool_call_id") == theirs.get("tool_call_id")


def test_no_op_condenser_sends_the_full_history_byte_for_byte(sessions, openhands_events):
    strategy = Condenser(NoOpCondenser())
    assert strategy.name == "openhands-no-op-condenser"
    for s in sessions:
        _, prompts = _replay(strategy, s)
        for k, (prompt, events) in enumerate(prompts):
            assert prompt == s.messages(k), (s.id, k)
            _same_as_sdk(prompt, events)
    s = sessions[0]
    assert rr.render(openhands_events, s.id, 7, strategy) == s.messages(7)


def test_llm_summarizing_condenser_at_an_endpoint(sessions, endpoint):
    """LLMSummarizingCondenser with its LLM at a stand-in endpoint: each Condensation
    is applied to that call and every later one, as OpenHands rebuilds its view from
    the log."""
    s = sessions[0]
    strategy = Condenser(summarizing("stand-in", base_url=endpoint.url, max_size=40, keep_first=2))
    assert strategy.name == (
        "openhands-llm-summarizing-condenser:llm=openai/stand-in,max_size=40,keep_first=2"
    )
    replay, prompts = _replay(strategy, s)
    condensations = replay.condensations
    assert len(condensations) >= 2, "a 49-call session passes 40 events more than once"
    assert len(endpoint.requests) == len(condensations)
    for body, condensation in zip(endpoint.requests, condensations):
        assert body["model"] == "stand-in"
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        events = _text(body["messages"][1]["content"]).count("<EVENT>")
        assert events == len(condensation.forgotten_event_ids)
    # The log is OpenHands' own: rebuilt from it by the SDK, the view is the one the
    # last prompt came from.
    assert [e.id for e in View.from_events(replay.log.events).events] == [
        e.id for e in prompts[-1][1]
    ]
    mission = s.opening()[1]["content"]
    summaries = 0
    for k, (prompt, events) in enumerate(prompts):
        _same_as_sdk(prompt, events)
        full = s.messages(k)
        assert len(events) <= 40
        assert prompt[0] == full[0]
        if prompt == full:
            assert summaries == 0, f"call {k}: the history came back after a condensation"
            continue
        # keep_first=2 keeps the system prompt and the mission; the summary sits right
        # after them, and OpenHands sends the two user texts as one message.
        parts = prompt[1]["content"]
        assert [p["text"] for p in parts][0] == mission
        summary = int(parts[1]["text"].removeprefix("SUMMARY "))
        assert summary >= summaries, f"call {k}: an older summary came back"
        summaries = summary
        tail = prompt[2:]
        assert tail == full[len(full) - len(tail) :], f"call {k}: the kept events verbatim"
        assert prompt_tokens(prompt, "o200k_base") < prompt_tokens(full, "o200k_base")
    assert summaries == len(condensations)


def test_max_tokens_is_counted_as_recap_counts(sessions, endpoint):
    s = sessions[0]
    strategy = Condenser(
        summarizing("stand-in", base_url=endpoint.url, max_tokens=8000, keep_first=2)
    )
    replay, prompts = _replay(strategy, s)
    assert replay.condensations, "the session passes 8000 tokens"
    for k, (prompt, events) in enumerate(prompts):
        assert prompt_tokens(prompt, "o200k_base") <= 8000, k
        _same_as_sdk(prompt, events)
    # A second replay of the same session is the same, prompt by prompt.
    endpoint.requests.clear()
    _, again = _replay(strategy, s)
    assert [p for p, _ in again] == [p for p, _ in prompts]


class ForgetOldest(RollingCondenser):
    """A condenser of one's own: on a condensation request (only), forget the older
    half of the events after the first two, with no summary."""

    def handles_condensation_requests(self) -> bool:
        return True

    def condensation_requirement(self, view, agent_llm=None):
        return CondensationRequirement.HARD if view.unhandled_condensation_request else None

    def get_condensation(self, view, agent_llm=None):
        indices = view.manipulation_indices
        start = indices.find_next(2)
        end = indices.find_next(2 + (len(view) - 2) // 2)
        forgotten = view[start:end]
        return Condensation(
            forgotten_event_ids={e.id for e in forgotten}, llm_response_id="forget-oldest"
        )


def test_a_context_window_over_the_prompt_requests_a_condensation(sessions):
    s = sessions[0]
    # OpenHands refuses windows under 16,384 tokens (ALLOW_SHORT_CONTEXT_WINDOWS);
    # the session reaches 23,000.
    strategy = Condenser(ForgetOldest(), context_window=16384)
    assert strategy.name == "openhands-forget-oldest:context_window=16384"
    replay, prompts = _replay(strategy, s)
    requests = [e for e in replay.log.events if isinstance(e, CondensationRequest)]
    assert requests and len(requests) == len(replay.condensations)
    for k, (prompt, _) in enumerate(prompts):
        assert prompt_tokens(prompt, "o200k_base") <= 16384, k
        full = s.messages(k)
        kept = prompt[2:]
        assert kept == full[len(full) - len(kept) :], k


def test_pipelines_and_the_agent_s_llm_are_the_sdk_s(sessions):
    s = sessions[1]
    strategy = Condenser(PipelineCondenser(condensers=[NoOpCondenser()]), agent_llm=None)
    assert strategy.name == "openhands-pipeline-condenser:condensers=no-op-condenser"
    _, prompts = _replay(strategy, s)
    assert [p for p, _ in prompts] == [s.messages(k) for k in range(s.calls)]


class MaskOld(CondenserBase):
    """A condenser that returns a view of its own: tool results but the newest two
    replaced by edited copies of their events (same ids)."""

    def condense(self, view, agent_llm=None):
        observations = [i for i, e in enumerate(view.events) if isinstance(e, ObservationEvent)]
        old = set(observations[:-2])
        events = [
            e.model_copy(update={"observation": RecordedObservation.from_text("<MASKED>")})
            if i in old
            else e
            for i, e in enumerate(view.events)
        ]
        return View(events=events)


def test_a_view_of_edited_events_is_sent_as_the_sdk_renders_it(sessions):
    s = sessions[0]
    _, prompts = _replay(Condenser(MaskOld()), s)
    for k, (prompt, events) in enumerate(prompts):
        expected = s.messages(k)
        results = [i for i, m in enumerate(expected) if m["role"] == "tool"]
        for i in results[:-2]:
            expected[i] = {**expected[i], "content": "<MASKED>"}
        assert prompt == expected, k
        _same_as_sdk(prompt, events)
    assert any("<MASKED>" in str(p) for p, _ in prompts)


def test_a_response_whose_calls_are_partly_forgotten_keeps_the_rest():
    """One response with two calls is two ActionEvents; a view without the first call
    sends the second alone, without the text (which the first call carried)."""
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "ls", "arguments": f'{{"n": {i}}}'}}
        for i in range(2)
    ]
    log = EventLog([{"role": "system", "content": "S"}, {"role": "user", "content": "M"}])
    log.add(
        "turn 0",
        [
            {"role": "assistant", "content": "two at once", "tool_calls": calls},
            {"role": "tool", "tool_call_id": "c0", "name": "ls", "content": "a"},
            {"role": "tool", "tool_call_id": "c1", "name": "ls", "content": "b"},
        ],
    )
    events = list(log.view.events)
    assert [type(e).__name__ for e in events[2:4]] == ["ActionEvent", "ActionEvent"]
    assert log.render(events)[2]["tool_calls"] == calls
    second = [e for i, e in enumerate(events) if i not in (2, 4)]
    prompt = log.render(second)
    assert prompt[2] == {"role": "assistant", "content": None, "tool_calls": calls[1:]}
    _same_as_sdk(prompt, second)


class Failing(CondenserBase):
    def condense(self, view, agent_llm=None):
        if len(view) > 6:
            raise KeyError("budget")
        return view


class Endless(CondenserBase):
    def condense(self, view, agent_llm=None):
        return Condensation(forgotten_event_ids=set(), llm_response_id="endless")


def test_what_goes_wrong_is_a_render_error_of_that_call(sessions, openhands_events):
    s = sessions[0]
    with pytest.raises(rr.RenderError, match=r"call 3: KeyError: 'budget'") as e:
        rr.render(openhands_events, s.id, 5, Condenser(Failing()))
    assert e.value.strategy == "openhands-failing" and e.value.call == 3
    with pytest.raises(rr.RenderError, match=f"condensed {MAX_CONDENSATIONS_PER_CALL} times in a row"):
        rr.render(openhands_events, s.id, 0, Condenser(Endless()))
    with pytest.raises(rr.RenderError, match="does not handle condensation requests"):
        rr.render(openhands_events, s.id, 30, Condenser(NoOpCondenser(), context_window=16384))
    with pytest.raises(Exception, match="below the minimum of 16,384 tokens"):
        Condenser(NoOpCondenser(), context_window=3000)
    with pytest.raises(TypeError, match="expected an OpenHands CondenserBase"):
        Condenser(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="context_window must be a positive"):
        Condenser(NoOpCondenser(), context_window=0)
