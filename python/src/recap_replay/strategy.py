"""Strategies written in Python: the protocol, the checks a strategy passes before a
run, rendering one call, and loading a strategy named ``module:Class``."""

from __future__ import annotations

import importlib
import json
import traceback
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from . import _native
from .errors import RenderError, StrategyError

#: The session forms recap knows.
FORMS = ("ptc", "chat")

Message = dict[str, Any]


@runtime_checkable
class Replay(Protocol):
    """What ``open(session)`` returns: asked for the calls of one session in order."""

    def next(self, k: int) -> list[Message]:
        """The prompt of the call after ``k`` turns (``k`` = 0, 1, 2, … in order)."""
        ...


@runtime_checkable
class Strategy(Protocol):
    """A strategy written in Python.

    ``name`` is its spec string in reports; ``forms`` the session forms it renders
    (``"ptc"``, ``"chat"``); ``render(session, k)`` returns the prompt of the call
    after ``k`` turns as OpenAI chat-completions messages. A strategy may also have
    ``open(session)`` returning a :class:`Replay`, which recap then asks for the
    session's calls in order, for incremental work.
    """

    name: str
    forms: Sequence[str]

    def render(self, session: _native.Session, k: int) -> list[Message]: ...


def check_strategy(obj: object) -> None:
    """Raises :class:`StrategyError` naming everything ``obj`` lacks to be a strategy."""
    what = _describe(obj)
    problems = []
    name = getattr(obj, "name", None)
    if name is None:
        problems.append("no `name` (its spec string in reports)")
    elif not isinstance(name, str) or not name.strip():
        problems.append(f"`name` must be a non-empty string, got {name!r}")
    forms = getattr(obj, "forms", None)
    if forms is None:
        problems.append('no `forms` (a list of "ptc" and/or "chat")')
    elif isinstance(forms, str) or not isinstance(forms, Iterable):
        problems.append(f'`forms` must be a list of "ptc" and/or "chat", got {forms!r}')
    else:
        forms = list(forms)
        unknown = [f for f in forms if f not in FORMS]
        if not forms:
            problems.append("`forms` is empty")
        if unknown:
            problems.append(f'`forms` has {unknown!r}; the forms are "ptc" and "chat"')
    render = getattr(obj, "render", None)
    if render is None:
        problems.append("no `render` (a method render(session, k) -> list[dict])")
    elif not callable(render):
        problems.append("`render` is not callable")
    opener = getattr(obj, "open", None)
    if opener is not None and not callable(opener):
        problems.append("`open` is not callable")
    if problems:
        raise StrategyError(f"{what} is not a strategy: " + "; ".join(problems))


def _describe(obj: object) -> str:
    name = getattr(obj, "name", None)
    kind = type(obj).__qualname__
    return f"{kind} {name!r}" if isinstance(name, str) else f"a {kind} object"


def strategy_name(entry: str | object) -> str:
    """The name a strategy has in reports: a spec string as written, an object's
    ``name``."""
    return entry if isinstance(entry, str) else str(getattr(entry, "name"))


def check_strategies(entries: Iterable[str | object]) -> list[str | object]:
    """Checks every Python strategy and refuses two strategies with one name (spec
    strings included); returns the entries as a list."""
    entries = list(entries)
    seen: dict[str, str | object] = {}
    for e in entries:
        if not isinstance(e, str):
            check_strategy(e)
        name = strategy_name(e)
        if name in seen:
            raise StrategyError(
                f"two strategies are named {name!r} ({_describe(seen[name]) if not isinstance(seen[name], str) else 'a spec string'} "
                f"and {_describe(e) if not isinstance(e, str) else 'a spec string'}); "
                "names are how reports tell strategies apart"
            )
        seen[name] = e
    return entries


def _last_line(e: BaseException) -> str:
    lines = traceback.format_exception_only(type(e), e)
    return lines[-1].strip() if lines else type(e).__name__


def checked_prompt(strategy: str, session: str, k: int, value: object) -> str:
    """``value`` as recap sends it (OpenAI-shape JSON text), or a :class:`RenderError`
    naming the strategy, session, call and the path of the bad field."""
    try:
        return _native.check_prompt(value)
    except ValueError as e:
        path, message = e.args
        where = f"{path}: " if path else ""
        raise RenderError(
            f"{strategy}: session {session!r}, call {k}: {where}{message}",
            strategy,
            session,
            k,
            path,
        ) from None


def render_python(strategy: object, session: _native.Session, k: int) -> list[Message]:
    """The prompt ``strategy`` renders for the call after ``k`` turns of ``session``,
    checked. With ``open``, the replay is asked for calls ``0 … k`` in order."""
    check_strategy(strategy)
    name = strategy_name(strategy)
    if session.form not in list(getattr(strategy, "forms")):
        raise RenderError(
            f"{name} renders {', '.join(getattr(strategy, 'forms'))} sessions; "
            f"session {session.id!r} is of the {session.form} form",
            name,
            session.id,
            k,
        )
    last = len(session) if session.max_turns is None else min(len(session), session.max_turns - 1)
    if not 0 <= k <= last:
        raise RenderError(
            f"{name}: session {session.id!r} has {len(session)} turns and max_turns "
            f"{session.max_turns}, so k must be in 0..={last}",
            name,
            session.id,
            k,
        )

    def call(j: int, fn: Any, *args: Any) -> str:
        try:
            value = fn(*args)
        except Exception as e:
            raise RenderError(
                f"{name}: session {session.id!r}, call {j}: {_last_line(e)}",
                name,
                session.id,
                j,
            ) from e
        return checked_prompt(name, session.id, j, value)

    opener = getattr(strategy, "open", None)
    if opener is None:
        return json.loads(call(k, strategy.render, session, k))  # type: ignore[attr-defined]
    try:
        replay = opener(session)
    except Exception as e:
        raise RenderError(
            f"{name}: session {session.id!r}, open: {_last_line(e)}", name, session.id, 0
        ) from e
    text = ""
    for j in range(k + 1):
        text = call(j, replay.next, j)
    return json.loads(text)


def load_strategy(reference: str, options: Mapping[str, Any] | None = None) -> object:
    """The strategy ``module:Class`` (or ``package.module:factory``) called with
    ``options`` as keyword arguments, checked; what an experiment file names.

    >>> load_strategy("recap_replay.examples:KeepLast", {"turns": 2}).name
    'keep-last:turns=2'
    """
    module_name, sep, attr = reference.partition(":")
    if not sep or not module_name or not attr or ":" in attr:
        raise StrategyError(
            f"{reference!r}: expected `module:Class` (e.g. mypackage.strategies:KeepLast)"
        )
    try:
        module = importlib.import_module(module_name)
    except Exception as e:
        raise StrategyError(f"{reference!r}: cannot import {module_name}: {_last_line(e)}") from e
    target: Any = module
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise StrategyError(f"{reference!r}: {module_name} has no {attr}") from None
    if not callable(target):
        raise StrategyError(f"{reference!r}: {attr} is not a class or function")
    try:
        strategy = target(**dict(options or {}))
    except Exception as e:
        raise StrategyError(f"{reference!r} with options {dict(options or {})!r}: {_last_line(e)}") from e
    check_strategy(strategy)
    return strategy
