"""Small strategies written in Python: the examples of docs/python.md, and twins of
recap's built-ins that tests hold to the Rust ones."""

from __future__ import annotations

from typing import Any


class FullHistory:
    """Every message of every turn: recap's ``full-history`` in Python."""

    forms = ("ptc", "chat")

    def __init__(self, name: str = "py-full-history") -> None:
        self.name = name

    def render(self, session: Any, k: int) -> list[dict]:
        return session.messages(k)

    def open(self, session: Any) -> "_Growing":
        return _Growing(session)


class _Growing:
    """full-history, incrementally: each call converts only the turns it adds."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.prompt = session.opening()
        self.turns = 0

    def next(self, k: int) -> list[dict]:
        while self.turns < k:
            self.prompt.extend(self.session.turn(self.turns))
            self.turns += 1
        return list(self.prompt)


class KeepLast:
    """The system prompt, the mission and the last ``turns`` turns whole."""

    forms = ("ptc", "chat")

    def __init__(self, turns: int = 3) -> None:
        if turns < 1:
            raise ValueError(f"turns must be at least 1, got {turns}")
        self.turns = turns
        self.name = f"keep-last:turns={turns}"

    def render(self, session: Any, k: int) -> list[dict]:
        prompt = session.opening()
        for i in range(max(0, k - self.turns), k):
            prompt += session.turn(i)
        return prompt
