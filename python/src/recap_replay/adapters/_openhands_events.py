"""A recap chat session as the event log the OpenHands SDK keeps, and a view of that
log back as the OpenAI-shape prompt recap checks and counts.

Each message becomes the event OpenHands logs for it: the system message a
``SystemPromptEvent``, a user message a ``MessageEvent``, an assistant message one
``ActionEvent`` per tool call (sharing the response's ``llm_response_id``, the thought
on the first) or a ``MessageEvent`` when it calls no tool, a tool result an
``ObservationEvent`` answering the nearest earlier call with its id. Event ids are
derived from the message's place in the session, so a replay is deterministic.

A view is rendered as ``LLMConvertibleEvent.events_to_messages`` does (one assistant
message per response, adjacent plain user messages joined as one message of text
parts); a message that is one recap message unchanged goes back as that message, byte
for byte, and what the condenser made (a summary) goes through the SDK's own
``to_llm_message``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openhands.sdk.context.view import View
from openhands.sdk.event import (
    ActionEvent,
    Event,
    LLMConvertibleEvent,
    MessageEvent,
    ObservationEvent,
    SystemPromptEvent,
)
from openhands.sdk.llm import Message, MessageToolCall, TextContent
from openhands.sdk.tool import Observation

Prompt = list[dict[str, Any]]


class RecordedObservation(Observation):
    """A tool result as the session recorded it: its text, sent as it is."""


class EventLog:
    """The append-only event log of one session and its view, maintained as
    ``ConversationState.view`` is: each appended event goes through
    ``View.append_event`` (a ``Condensation`` is applied to the view there)."""

    def __init__(self, opening: Sequence[dict[str, Any]]) -> None:
        self.events: list[Event] = []
        self.view = View()
        # Event id -> the recap message it stands for (an ActionEvent: its response's
        # assistant message, under the response id), and the event logged for it: a
        # condenser may return an event of its own under the same id (an edited copy),
        # and that one is sent as the SDK renders it.
        self._originals: dict[str, dict[str, Any]] = {}
        self._logged: dict[str, Event] = {}
        self._calls: dict[str, ActionEvent] = {}
        self.add("opening", opening)

    def append(self, event: Event) -> None:
        self.events.append(event)
        self._logged[event.id] = event
        self.view.append_event(event)

    def _original(self, event: Event) -> dict[str, Any] | None:
        if self._logged.get(event.id) is not event:
            return None
        return self._originals.get(event.id)

    def add(self, where: str, messages: Sequence[dict[str, Any]]) -> None:
        """Logs the events of ``messages`` (``where`` names them: ``opening`` or
        ``turn N``, for ids and errors)."""
        for j, message in enumerate(messages):
            for event in self._events(f"recap-{where.replace(' ', '-')}-{j}", where, message):
                self.append(event)

    def _events(self, eid: str, where: str, message: dict[str, Any]) -> list[LLMConvertibleEvent]:
        role, text = message["role"], message.get("content") or ""
        if role == "system":
            event: LLMConvertibleEvent = SystemPromptEvent(
                id=eid, system_prompt=TextContent(text=text), tools=[]
            )
        elif role == "user":
            event = MessageEvent(
                id=eid,
                source="user",
                llm_message=Message(role="user", content=[TextContent(text=text)]),
            )
        elif role == "tool":
            call_id = message["tool_call_id"]
            action = self._calls.get(call_id)
            if action is None:
                raise ValueError(f"{where}: tool result {call_id!r} answers no earlier call")
            event = ObservationEvent(
                id=eid,
                observation=RecordedObservation.from_text(text),
                action_id=action.id,
                tool_name=message.get("name") or action.tool_name,
                tool_call_id=call_id,
            )
        elif message.get("tool_calls"):
            self._originals[eid] = message
            return [self._action(eid, i, call, text) for i, call in enumerate(message["tool_calls"])]
        else:
            event = MessageEvent(
                id=eid,
                source="agent",
                llm_message=Message(role="assistant", content=[TextContent(text=text)]),
                llm_response_id=eid,
            )
        self._originals[eid] = message
        return [event]

    def _action(self, response: str, i: int, call: dict[str, Any], text: str) -> ActionEvent:
        fn = call["function"]
        event = ActionEvent(
            id=f"{response}-call-{i}",
            thought=[TextContent(text=text)] if i == 0 and text else [],
            tool_name=fn["name"],
            tool_call_id=call["id"],
            tool_call=MessageToolCall(
                id=call["id"], name=fn["name"], arguments=fn["arguments"], origin="completion"
            ),
            llm_response_id=response,
        )
        self._calls[call["id"]] = event
        return event

    def render(self, events: Sequence[LLMConvertibleEvent]) -> Prompt:
        """``events`` (a view's) as the prompt OpenHands sends for them."""
        prompt: Prompt = []
        joinable = False  # the last message is a plain user message
        i = 0
        while i < len(events):
            event = events[i]
            if isinstance(event, ActionEvent):
                j = i + 1
                while (
                    j < len(events)
                    and isinstance(events[j], ActionEvent)
                    and events[j].llm_response_id == event.llm_response_id  # type: ignore[attr-defined]
                ):
                    j += 1
                prompt.append(self._response(events[i:j]))  # type: ignore[arg-type]
                joinable, i = False, j
                continue
            message = self._original(event) or to_openai(event.to_llm_message())
            plain = _is_plain_user(message)
            if plain and joinable:
                prompt[-1] = _join(prompt[-1], message)
            else:
                prompt.append(message)
            joinable, i = plain, i + 1
        return prompt

    def _response(self, batch: Sequence[ActionEvent]) -> dict[str, Any]:
        """One assistant message for the ActionEvents of one response: the recorded
        message when the view holds all its calls, else that message with the calls
        the view holds (its text only with the first call, which carries it); the
        SDK's own message when a condenser put events of its own there."""
        original = self._originals.get(batch[0].llm_response_id)
        if original is None or any(self._logged.get(e.id) is not e for e in batch):
            return to_openai(LLMConvertibleEvent.events_to_messages(list(batch))[0])
        calls = original["tool_calls"]
        ids = [f"{batch[0].llm_response_id}-call-{i}" for i in range(len(calls))]
        kept = {e.id for e in batch}
        if kept == set(ids):
            return original
        out = {**original, "tool_calls": [c for c, i in zip(calls, ids) if i in kept]}
        if ids[0] not in kept:
            out["content"] = None
        return out


def _is_plain_user(message: dict[str, Any]) -> bool:
    return message["role"] == "user" and not any(
        message.get(k) for k in ("tool_calls", "tool_call_id", "name")
    )


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": content or ""}]


def _join(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": _parts(first["content"]) + _parts(second["content"])}


def to_openai(message: Message) -> dict[str, Any]:
    """An SDK message in the OpenAI chat-completions shape recap reads: one text part
    as a string, several as a list of text parts (images have no text to replay and
    are refused by recap's checks)."""
    texts = [c.text for c in message.content if isinstance(c, TextContent)]
    if len(texts) != len(message.content):
        raise ValueError(f"a {message.role} message with non-text content cannot be replayed")
    content: Any = texts[0] if len(texts) == 1 else [{"type": "text", "text": t} for t in texts]
    out: dict[str, Any] = {"role": message.role, "content": content}
    if message.tool_calls:
        out["tool_calls"] = [c.to_chat_dict() for c in message.tool_calls]
        if not texts:
            out["content"] = None
    elif not texts:
        out["content"] = ""
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
        out["name"] = message.name
    return out
