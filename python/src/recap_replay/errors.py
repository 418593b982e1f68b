"""recap's exceptions. Every one is a :class:`RecapError`."""

from __future__ import annotations


class RecapError(Exception):
    """Something recap could not do: a bad argument, a file it cannot read, a run
    with nothing to replay."""


class CorpusError(RecapError, ValueError):
    """A corpus line (or a whole file, at line 0) that did not validate.

    Attributes:
        file: the corpus file.
        line: the 1-based line (0 when the file itself could not be read).
        field: the path of the bad field in the session (``turns[2].error``).
        session: the session's id when the line got that far, else ``None``.
    """

    def __init__(
        self,
        message: str,
        file: str,
        line: int,
        field: str,
        session: str | None = None,
    ) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.field = field
        self.session = session

    def __reduce__(self):  # keeps the attributes through pickling
        return (type(self), (str(self), self.file, self.line, self.field, self.session))


class NoSessionsError(RecapError, ValueError):
    """The corpora held no session to replay (empty, or every line rejected)."""


class StrategyError(RecapError, ValueError):
    """A Python strategy refused before the run: a missing or malformed ``name``,
    ``forms`` or ``render``, two strategies with one name, or a ``module:Class``
    reference that does not load."""


class RenderError(RecapError):
    """A call a strategy could not render: its exception, a wrong return type or a
    malformed message.

    Attributes:
        strategy: the strategy's name (its spec string in reports).
        session: the session's id.
        call: the call index (turns completed before the call).
        path: the path of the bad field in the returned prompt (``[3].role``), or
            ``""`` when the strategy raised or returned something that is not a list.
    """

    def __init__(
        self, message: str, strategy: str, session: str, call: int, path: str = ""
    ) -> None:
        super().__init__(message)
        self.strategy = strategy
        self.session = session
        self.call = call
        self.path = path

    def __reduce__(self):
        return (
            type(self),
            (str(self), self.strategy, self.session, self.call, self.path),
        )
