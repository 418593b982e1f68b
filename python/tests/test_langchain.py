"""LangChain's own code as strategies, prompt by prompt against recap's built-ins."""

from __future__ import annotations

import pytest

import recap_replay as rr

from conftest import BENCH

pytest.importorskip("langchain")
from recap_replay.adapters.langchain import ClearToolUses, Summarization, TrimMessages  # noqa: E402

CHAT = BENCH / "chat-handwritten.jsonl"


def _calls(corpus, limit=None):
    for s in list(rr.read_sessions(corpus))[:limit]:
        for k in range(s.calls):
            yield s, k


def test_clear_tool_uses_is_tool_result_clearing_but_for_the_system_prompt(openhands_events):
    """ContextEditingMiddleware counts its trigger without the system prompt; recap
    counts the whole prompt. Every call that differs is one where only recap's count
    passes the trigger, and LangChain then sends the full history."""
    differing = 0
    for corpus, limit in ((CHAT, None), (openhands_events, 2)):
        for trigger in (300, 3000):
            for s, k in _calls(corpus, limit):
                ours = rr.render(corpus, s.id, k, f"tool-result-clearing:trigger={trigger}")
                theirs = rr.render(corpus, s.id, k, ClearToolUses(trigger))
                if theirs == ours:
                    continue
                differing += 1
                full = s.messages(k)
                counts = rr._native.message_tokens(full, "o200k_base")
                assert 3 + sum(counts[1:]) <= trigger < 3 + sum(counts), (s.id, k, trigger)
                assert theirs == full
    assert differing > 0, "the real sessions have calls between the two counts"


def test_trim_messages_is_token_budget_trim_but_for_the_prompt_constant():
    """recap's budget counts the whole prompt (3 + Σ messages); LangChain's per-message
    counter leaves the 3 out, so it keeps a message more when Σ lands within 3 tokens
    of the budget. Every call that differs is that case."""
    differing = 0
    for s, k in _calls(CHAT):
        for budget in (500, 2000):
            ours = rr.render(CHAT, s.id, k, f"token-budget-trim:max_tokens={budget},keep_mission=false")
            theirs = rr.render(CHAT, s.id, k, TrimMessages(budget))
            if theirs == ours:
                continue
            differing += 1
            counts = rr._native.message_tokens(theirs, "o200k_base")
            assert budget - 3 < sum(counts) <= budget, (s.id, k, budget, sum(counts))
            assert theirs[-len(ours) + 2 :] == ours[2:] or len(ours) == 2
    assert differing <= 2


def test_trim_messages_with_langchain_s_estimate_runs():
    s = next(iter(rr.read_sessions(CHAT)))
    prompt = rr.render(CHAT, s.id, s.calls - 1, TrimMessages(300, token_counter="approximate"))
    assert prompt[0]["role"] == "system"


def test_summarization_replaces_the_state_as_an_agent_does(endpoint, openhands_events):
    s = max(rr.read_sessions(openhands_events), key=len)
    strategy = Summarization(
        "stand-in", base_url=endpoint.url, trigger=("tokens", 4000), keep=("messages", 6)
    )
    assert strategy.name == "langchain-summarization:model=stand-in,trigger=tokens=4000,keep=messages=6"
    last = s.calls - 1
    prompt = rr.render(openhands_events, s.id, last, strategy)
    assert endpoint.requests, "the endpoint wrote a summary"
    summaries = [m for m in prompt if m["role"] == "user" and "SUMMARY" in (m["content"] or "")]
    assert len(summaries) == 1
    assert prompt[0] == s.opening()[0]
    # The preserved tail is the session's last messages, verbatim.
    tail = s.messages(last)[-len(prompt) + 2 :]
    assert prompt[2:] == tail
    full = 3 + sum(rr._native.message_tokens(s.messages(last), "o200k_base"))
    assert 3 + sum(rr._native.message_tokens(prompt, "o200k_base")) < full
