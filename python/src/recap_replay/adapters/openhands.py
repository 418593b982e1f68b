"""The OpenHands SDK's condensers as recap strategies (``pip install
'recap-replay[openhands]'``; the SDK needs CPython 3.12 or newer).

:class:`Condenser` runs any ``CondenserBase`` subclass unmodified — the SDK's
``LLMSummarizingCondenser`` (with its LLM at an OpenAI-compatible endpoint, see
:func:`summarizing`), ``PipelineCondenser``, ``NoOpCondenser`` or one of your own —
on recap's chat sessions, the way an OpenHands agent runs it:

- the session's messages become the events OpenHands logs (an append-only log; its
  view is kept as ``ConversationState.view`` keeps it);
- before each call the condenser gets the view (``condense(view, agent_llm)``); a
  ``Condensation`` it returns is appended to the log, which applies it to the view
  (``Condensation.apply``) for this call and every later one, and the condenser is
  asked again, as the agent's next step asks it;
- the view it finally returns is the prompt, rendered as the SDK renders events.

With ``context_window`` set, a prompt over it is what a provider refuses: as the agent
does on ``LLMContextWindowExceedError``, a ``CondensationRequest`` is logged and the
condenser asked again (a condenser that does not handle requests makes it a render
error, where OpenHands would stop).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from openhands.sdk import LLM
from openhands.sdk.context.condenser import CondenserBase, LLMSummarizingCondenser
from openhands.sdk.context.view import View
from openhands.sdk.event import Condensation, CondensationRequest
from openhands.sdk.llm import Message
from pydantic import PrivateAttr, SecretStr

from .. import _native
from ._openhands_events import EventLog, Prompt, to_openai

#: How many Condensations in a row one call may take before recap calls it a loop
#: (OpenHands would keep stepping; each step is a condensation and no model call).
MAX_CONDENSATIONS_PER_CALL = 20


class RecapTokens(LLM):
    """The ``agent_llm`` a condenser counts tokens with: recap's prompt formula
    (``3 + Σ`` per message, SPEC 11.2) with the adapter's tokenizer over the messages the
    SDK makes of a view, so that ``max_tokens`` means what recap's reports count.
    ``max_input_tokens`` is the context window the condenser sees."""

    _tokenizer: str = PrivateAttr(default="o200k_base")

    @classmethod
    def of(cls, tokenizer: str = "o200k_base", context_window: int | None = None) -> RecapTokens:
        llm = cls(model=f"recap-{tokenizer}", usage_id="recap-tokens", max_input_tokens=context_window)
        llm._tokenizer = tokenizer
        return llm

    def get_token_count(
        self,
        messages: list[Message],
        tools: Any = None,
        add_security_risk_prediction: bool = False,
    ) -> int:
        return prompt_tokens([to_openai(m) for m in messages], self._tokenizer)


def prompt_tokens(prompt: Prompt, tokenizer: str) -> int:
    """A prompt's tokens by recap's formula."""
    return 3 + sum(_native.message_tokens(prompt, tokenizer))


def summarizing(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str = "not-needed",
    **options: Any,
) -> LLMSummarizingCondenser:
    """``LLMSummarizingCondenser(llm=LLM(model, base_url), **options)``.

    ``model`` is a LiteLLM model name; a name without a provider (``"qwen3"``) is
    served by the OpenAI-compatible endpoint at ``base_url`` (``openai/qwen3``).
    ``options`` are the condenser's own (``max_size``, ``max_tokens``, ``keep_first``,
    ``minimum_progress``, …). The LLM has the SDK's defaults; for other settings build
    ``LLMSummarizingCondenser(llm=LLM(...))`` yourself.
    """
    if "/" not in model:
        model = f"openai/{model}"
    llm = LLM(model=model, base_url=base_url, api_key=SecretStr(api_key), usage_id="condenser")
    return LLMSummarizingCondenser(llm=llm, **options)


class Condenser:
    """An OpenHands SDK condenser (any ``CondenserBase``) as a recap strategy.

    Args:
        condenser: the condenser, used as it is (one instance serves every session;
            OpenHands' condensers keep no state of their own between calls).
        agent_llm: what the condenser counts tokens with: ``"recap"`` (recap's
            counts, :class:`RecapTokens`), an SDK ``LLM`` (LiteLLM's counts for its
            model), or ``None`` (no token counting, as ``condense(view)`` alone).
        tokenizer: the tokenizer of recap's counts.
        context_window: the model's input limit, in those counts: the condenser sees
            it as the agent LLM's ``max_input_tokens``, and a prompt over it gets a
            ``CondensationRequest`` as the agent logs on a context-window error.
        name: the name in reports (default: ``openhands-`` and the class name in
            kebab case, with the fields that were given or differ from their
            defaults).
    """

    forms = ("chat",)

    def __init__(
        self,
        condenser: CondenserBase,
        *,
        agent_llm: LLM | str | None = "recap",
        tokenizer: str = "o200k_base",
        context_window: int | None = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(condenser, CondenserBase):
            raise TypeError(
                f"expected an OpenHands CondenserBase, got {type(condenser).__qualname__}"
            )
        if context_window is not None and context_window < 1:
            raise ValueError(f"context_window must be a positive token count, got {context_window}")
        self.condenser = condenser
        self.tokenizer = tokenizer
        self.context_window = context_window
        if agent_llm == "recap":
            self.agent_llm: LLM | None = RecapTokens.of(tokenizer, context_window)
        elif agent_llm is None or isinstance(agent_llm, LLM):
            self.agent_llm = agent_llm
        else:
            raise ValueError(f'agent_llm: expected "recap", an openhands LLM or None, got {agent_llm!r}')
        shown = dict(_settings(condenser))
        if context_window is not None:
            shown["context_window"] = str(context_window)
        self.name = name or spec_name(condenser, shown)

    def render(self, session: Any, k: int) -> Prompt:
        return self.open(session).next(k)

    def open(self, session: Any) -> Replay:
        return Replay(self, session)


class Replay:
    """One session's calls, in order, through the condenser."""

    def __init__(self, owner: Condenser, session: Any) -> None:
        self.owner, self.session = owner, session
        self.log = EventLog(session.opening())
        self.turns = 0
        #: The Condensations logged so far, in order.
        self.condensations: list[Condensation] = []
        #: The view the last prompt was rendered from.
        self.view: View | None = None

    def next(self, k: int) -> Prompt:
        while self.turns < k:
            self.log.add(f"turn {self.turns}", self.session.turn(self.turns))
            self.turns += 1
        owner = self.owner
        for _ in range(MAX_CONDENSATIONS_PER_CALL + 1):
            result = owner.condenser.condense(self.log.view, agent_llm=owner.agent_llm)
            if isinstance(result, Condensation):
                self.log.append(result)
                self.condensations.append(result)
                continue
            prompt = self.log.render(result.events)
            window = owner.context_window
            if window is None or prompt_tokens(prompt, owner.tokenizer) <= window:
                self.view = result
                return prompt
            kind = type(owner.condenser).__name__
            if not owner.condenser.handles_condensation_requests():
                raise RuntimeError(
                    f"the prompt exceeds context_window={window} and {kind} does not "
                    "handle condensation requests"
                )
            if self.log.view.unhandled_condensation_request:
                raise RuntimeError(
                    f"the prompt exceeds context_window={window} and {kind} left the "
                    "condensation request unhandled"
                )
            self.log.append(CondensationRequest(id=f"recap-request-{len(self.log.events)}"))
        raise RuntimeError(
            f"{type(owner.condenser).__name__} condensed {MAX_CONDENSATIONS_PER_CALL} times "
            f"in a row before call {k} without settling on a view"
        )


def _settings(condenser: CondenserBase) -> list[tuple[str, str]]:
    """The condenser's fields that were given or differ from their defaults, for its
    name."""
    out = []
    for key, field in type(condenser).model_fields.items():
        value = getattr(condenser, key)
        default = None if field.is_required() else field.get_default(call_default_factory=True)
        if key not in condenser.model_fields_set and value == default:
            continue
        out.append((key, _shown(value)))
    return out


def _shown(value: Any) -> str:
    if isinstance(value, LLM):
        return value.model
    if isinstance(value, CondenserBase):
        return _kebab(type(value).__name__)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "+".join(_shown(v) for v in value)
    return str(value)


def _kebab(name: str) -> str:
    """``LLMSummarizingCondenser`` -> ``llm-summarizing-condenser``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name).lower()


def spec_name(condenser: CondenserBase, settings: dict[str, str]) -> str:
    name = f"openhands-{_kebab(type(condenser).__name__)}"
    if not settings:
        return name
    return name + ":" + ",".join(f"{k}={v}" for k, v in settings.items())


__all__ = [
    "MAX_CONDENSATIONS_PER_CALL",
    "Condenser",
    "RecapTokens",
    "Replay",
    "prompt_tokens",
    "summarizing",
]
