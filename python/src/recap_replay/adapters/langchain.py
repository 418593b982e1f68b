"""LangChain's own context management as recap strategies (``pip install
recap-replay[langchain]``): ``trim_messages``, ``ClearToolUsesEdit`` (context editing)
and ``SummarizationMiddleware``, run unmodified on recap's chat sessions.

Each call's history is the session's full-history prompt converted to LangChain
messages; LangChain's code edits it as it does inside an agent, and the result goes
back in the OpenAI shape recap checks and counts. Token counts default to recap's own
(the run's tokenizer and prompt formula) so thresholds mean what recap's reports say;
``token_counter="approximate"`` is LangChain's default estimate.
"""

# No `from __future__ import annotations`: trim_messages tells a per-message token
# counter by its parameter's annotation being the class BaseMessage itself.

import copy
import json
from collections.abc import Callable, Sequence
from typing import Any, Union

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
    trim_messages,
)
from langchain_core.messages.utils import count_tokens_approximately

from .. import _native

Counter = Union[str, Callable[..., int]]


_ORIGINAL = "recap_original"


def _to_langchain(message: dict) -> BaseMessage:
    """One OpenAI-shape message as LangChain's, carrying the original so that what
    LangChain leaves alone goes back byte for byte (LangChain parses tool arguments as
    JSON, and a model's arguments need not be JSON)."""
    role, content = message["role"], message.get("content") or ""
    meta = {_ORIGINAL: message}
    if role == "system":
        return SystemMessage(content=content, response_metadata=meta)
    if role == "user":
        return HumanMessage(content=content, response_metadata=meta)
    if role == "tool":
        return ToolMessage(
            content=content,
            tool_call_id=message["tool_call_id"],
            name=message.get("name"),
            response_metadata=meta,
        )
    calls = []
    for c in message.get("tool_calls") or []:
        try:
            args = json.loads(c["function"]["arguments"])
        except ValueError:
            args = {}
        calls.append(
            {"id": c["id"], "name": c["function"]["name"], "args": args if isinstance(args, dict) else {}}
        )
    return AIMessage(content=content, tool_calls=calls, response_metadata=meta)


def _from_langchain(message: BaseMessage) -> dict:
    original = message.response_metadata.get(_ORIGINAL)
    if original is None:  # a message LangChain made (a summary)
        return convert_to_openai_messages([message])[0]
    out = dict(original)
    if message.content != (original.get("content") or ""):
        out["content"] = message.content
    cleared = message.response_metadata.get("context_editing", {}).get("cleared_tool_inputs")
    if cleared:
        out["tool_calls"] = [
            {**c, "function": {**c["function"], "arguments": "{}"}} if c["id"] in cleared else c
            for c in original["tool_calls"]
        ]
    return out


def _to_langchain_all(messages: Sequence[dict]) -> list[BaseMessage]:
    return [_to_langchain(m) for m in messages]


def _openai(messages: Sequence[BaseMessage]) -> list[dict]:
    return [_from_langchain(m) for m in messages]


def _per_message_counter(tokenizer: str) -> Callable[[BaseMessage], int]:
    """recap's per-message formula (``3 + tokens(role) + tokens(content) + calls``)."""

    def count(message: BaseMessage) -> int:
        return _native.message_tokens(_openai([message]), tokenizer)[0]

    count.__annotations__ = {"message": BaseMessage, "return": int}
    return count


def _prompt_counter(tokenizer: str) -> Callable[[Sequence[BaseMessage]], int]:
    """recap's prompt formula: ``3 + Σ per-message``."""

    def count(messages: Sequence[BaseMessage]) -> int:
        return 3 + sum(_native.message_tokens(_openai(messages), tokenizer))

    return count


def _options(pairs: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in pairs.items())


class _History:
    """A session's history as LangChain messages, extended turn by turn."""

    def __init__(self, session: Any) -> None:
        self.session = session
        opening = _to_langchain_all(session.opening())
        self.system: BaseMessage = opening[0]
        self.messages: list[BaseMessage] = opening[1:]
        self.turns = 0

    def up_to(self, k: int) -> list[BaseMessage]:
        while self.turns < k:
            self.messages.extend(_to_langchain_all(self.session.turn(self.turns)))
            self.turns += 1
        return self.messages


class TrimMessages:
    """``langchain_core.messages.trim_messages`` over the whole prompt at every call
    (system message included, as an agent hands it over)."""

    forms = ("chat",)

    def __init__(
        self,
        max_tokens: int = 8000,
        *,
        strategy: str = "last",
        include_system: bool = True,
        start_on: Any = "human",
        end_on: Any = None,
        allow_partial: bool = False,
        token_counter: Counter = "recap",
        tokenizer: str = "o200k_base",
        name: str | None = None,
    ) -> None:
        self.kwargs = dict(
            max_tokens=max_tokens,
            strategy=strategy,
            include_system=include_system,
            start_on=start_on,
            end_on=end_on,
            allow_partial=allow_partial,
        )
        if token_counter == "recap":
            self.counter: Any = _per_message_counter(tokenizer)
        elif token_counter == "approximate":
            self.counter = count_tokens_approximately
        else:
            self.counter = token_counter
        self.name = name or f"langchain-trim:{_options({'max_tokens': max_tokens, 'strategy': strategy})}"

    def render(self, session: Any, k: int) -> list[dict]:
        return self.open(session).next(k)

    def open(self, session: Any) -> "_TrimReplay":
        return _TrimReplay(self, _History(session))


class _TrimReplay:
    def __init__(self, owner: TrimMessages, history: _History) -> None:
        self.owner, self.history = owner, history

    def next(self, k: int) -> list[dict]:
        prompt = [self.history.system, *self.history.up_to(k)]
        kept = trim_messages(prompt, token_counter=self.owner.counter, **self.owner.kwargs)
        return _openai(kept)


class ClearToolUses:
    """``langchain.agents.middleware.ClearToolUsesEdit`` applied as
    ``ContextEditingMiddleware`` applies it: to a copy of the history without the
    system message, afresh at every call."""

    forms = ("chat",)

    def __init__(
        self,
        trigger: int = 100_000,
        *,
        keep: int = 3,
        clear_at_least: int = 0,
        clear_tool_inputs: bool = False,
        exclude_tools: Sequence[str] = (),
        placeholder: str = "[cleared]",
        token_counter: Counter = "recap",
        tokenizer: str = "o200k_base",
        name: str | None = None,
    ) -> None:
        from langchain.agents.middleware import ClearToolUsesEdit

        self.edit = ClearToolUsesEdit(
            trigger=trigger,
            keep=keep,
            clear_at_least=clear_at_least,
            clear_tool_inputs=clear_tool_inputs,
            exclude_tools=tuple(exclude_tools),
            placeholder=placeholder,
        )
        if token_counter == "recap":
            self.counter: Any = _prompt_counter(tokenizer)
        elif token_counter == "approximate":
            self.counter = count_tokens_approximately
        else:
            self.counter = token_counter
        shown = {"trigger": trigger, "keep": keep, "clear_at_least": clear_at_least}
        self.name = name or f"langchain-clear-tool-uses:{_options(shown)}"

    def render(self, session: Any, k: int) -> list[dict]:
        return self.open(session).next(k)

    def open(self, session: Any) -> "_ClearReplay":
        return _ClearReplay(self, _History(session))


class _ClearReplay:
    def __init__(self, owner: ClearToolUses, history: _History) -> None:
        self.owner, self.history = owner, history

    def next(self, k: int) -> list[dict]:
        edited: list[AnyMessage] = copy.deepcopy(list(self.history.up_to(k)))
        self.owner.edit.apply(edited, count_tokens=self.owner.counter)
        return _openai([self.history.system, *edited])


class Summarization:
    """``langchain.agents.middleware.SummarizationMiddleware`` as an agent runs it:
    before each call its ``before_model`` sees the agent's state (the messages after
    the system prompt); when it summarizes, the state is replaced for every later call
    and the new turns are appended to it.

    ``model`` is a LangChain chat model, or the name of a model served at
    ``base_url`` (an OpenAI-compatible endpoint; ``langchain-openai``'s ``ChatOpenAI``).
    """

    forms = ("chat",)

    def __init__(
        self,
        model: Any = "gpt-4o-mini",
        *,
        base_url: str | None = None,
        api_key: str = "not-needed",
        trigger: Any = ("tokens", 8000),
        keep: Any = ("messages", 20),
        token_counter: Counter = "recap",
        tokenizer: str = "o200k_base",
        name: str | None = None,
        **middleware_options: Any,
    ) -> None:
        from langchain.agents.middleware import SummarizationMiddleware

        if isinstance(model, str):
            from langchain_openai import ChatOpenAI

            model_name = model
            model = ChatOpenAI(model=model, base_url=base_url, api_key=api_key, temperature=0)
        else:
            model_name = getattr(model, "model_name", type(model).__name__)
        if token_counter == "recap":
            counter: Any = _prompt_counter(tokenizer)
        elif token_counter == "approximate":
            counter = count_tokens_approximately
        else:
            counter = token_counter
        self.middleware = SummarizationMiddleware(
            model, trigger=trigger, keep=keep, token_counter=counter, **middleware_options
        )
        shown = {"model": model_name, "trigger": _size(trigger), "keep": _size(keep)}
        self.name = name or f"langchain-summarization:{_options(shown)}"

    def render(self, session: Any, k: int) -> list[dict]:
        return self.open(session).next(k)

    def open(self, session: Any) -> "_SummaryReplay":
        return _SummaryReplay(self, session)


def _size(spec: Any) -> str:
    if isinstance(spec, tuple) and len(spec) == 2:
        return f"{spec[0]}={spec[1]}"
    return str(spec).replace(",", ";")


class _SummaryReplay:
    def __init__(self, owner: Summarization, session: Any) -> None:
        self.owner, self.session = owner, session
        opening = _to_langchain_all(session.opening())
        self.system = opening[0]
        self.state: list[BaseMessage] = list(opening[1:])
        self.turns = 0

    def next(self, k: int) -> list[dict]:
        while self.turns < k:
            self.state.extend(_to_langchain_all(self.session.turn(self.turns)))
            self.turns += 1
        update = self.owner.middleware.before_model({"messages": self.state}, None)
        if update:
            # [RemoveMessage(REMOVE_ALL), summary, *preserved]: the state starts over.
            self.state = [
                m for m in update["messages"] if type(m).__name__ != "RemoveMessage"
            ]
        return _openai([self.system, *self.state])


__all__ = ["ClearToolUses", "Summarization", "TrimMessages"]
