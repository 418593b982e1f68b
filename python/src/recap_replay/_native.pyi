"""Type stubs of the Rust extension module (crates/recap-py). Use the documented
functions of :mod:`recap_replay`; these are their building blocks."""

from collections.abc import Iterator
from typing import Any

__version__: str
GIT_COMMIT: str

class Session:
    """A validated recorded session: read-only, converted lazily (one turn's
    messages at a time)."""

    @property
    def id(self) -> str: ...
    @property
    def mission(self) -> str: ...
    @property
    def system_prompt(self) -> str: ...
    @property
    def max_turns(self) -> int | None:
        """The turn budget; ``None`` when the log recorded none."""
    @property
    def form(self) -> str:
        """``"ptc"`` or ``"chat"``."""
    @property
    def meta(self) -> dict[str, Any]:
        """The session's ``meta`` object (a new dict at each access)."""
    def __len__(self) -> int:
        """The number of recorded turns."""
    @property
    def calls(self) -> int:
        """The calls ``run`` replays, one per recorded turn: call ``k`` (in
        ``range(calls)``) is the request that produced turn ``k + 1``."""
    def opening(self) -> list[dict[str, Any]]:
        """``[system, user(mission)]``: how every full-history prompt starts."""
    def turn(self, i: int) -> list[dict[str, Any]]:
        """The messages turn ``i`` (0-based, negative from the end) adds to the
        history, as full-history sends them."""
    def turn_succeeded(self, i: int) -> bool:
        """Whether turn ``i`` succeeded."""
    def messages(self, k: int) -> list[dict[str, Any]]:
        """The full-history prompt of the call after the first ``k`` turns."""

class SessionReader(Iterator[Session]):
    """The sessions of one corpus file (see :func:`recap_replay.read_sessions`)."""

    def __init__(self, path: str, skip_invalid: bool = False) -> None: ...
    def __iter__(self) -> SessionReader: ...
    def __next__(self) -> Session: ...
    @property
    def rejected(self) -> list[Any]:
        """The lines skipped so far (``skip_invalid``), as ``CorpusError``s."""

class ArrowTable:
    """One table, exported through the Arrow PyCapsule interface."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """An ``arrow_array_stream`` capsule of the table (the schema requested is
        not honoured)."""
    def __len__(self) -> int:
        """The number of rows."""
    @property
    def columns(self) -> list[str]:
        """Column names, in order."""

class NativeReport:
    """A finished run (wrapped by :class:`recap_replay.Report`)."""

    def to_json(self) -> str: ...
    def to_table(self) -> str: ...
    def to_markdown(self) -> str: ...
    def to_csv(self) -> str: ...
    def sessions_csv(self) -> str: ...
    def has_problems(self) -> bool: ...
    def summary_table(self) -> ArrowTable: ...
    def sessions_table(self) -> ArrowTable: ...
    def calls_table(self) -> ArrowTable | None: ...

def run(
    corpora: list[str],
    strategies: list[str | object] | None,
    tokenizers: list[str],
    plugins: list[str],
    jobs: int | None,
    settings: dict[str, Any],
    command_line: list[str],
) -> NativeReport:
    """The harness over ``corpora`` (see :func:`recap_replay.run`)."""

def run_shard(
    corpora: list[str],
    strategies: list[str | object] | None,
    tokenizers: list[str],
    plugins: list[str],
    jobs: int | None,
    settings: dict[str, Any],
    command_line: list[str],
    index: int,
    count: int,
    out: str,
    force: bool,
) -> dict[str, Any]:
    """Shard ``index/count`` written as a part (see :func:`recap_replay.run_shard`)."""

def merge_parts(
    parts: list[str],
    out: str,
    force: bool,
    every_format: bool,
    command_line: list[str],
) -> NativeReport:
    """The parts merged; ``calls.csv`` (with ``every_format``, every file of ``recap
    merge --out``) written into ``out`` (see :func:`recap_replay.merge`)."""

def render(
    corpus: str,
    session_id: str,
    k: int,
    strategy: str,
    tokenizer: str,
    plugins: list[str],
) -> str:
    """The JSON text ``recap render --format json`` prints."""

def find_session(corpus: str, session_id: str) -> Session:
    """The session ``session_id`` of ``corpus``."""

def check_prompt(value: object) -> str:
    """A returned prompt as recap sends it (JSON text); ``ValueError(path, message)``
    when it is malformed."""

def strategies(plugins: list[str]) -> list[dict[str, Any]]:
    """Every registered strategy with its forms and options."""

def import_logs(kind: str, paths: list[str], output: str, force: bool) -> dict[str, Any]:
    """Agent logs into a corpus (see :func:`recap_replay.import_logs`)."""

def message_tokens(messages: object, tokenizer: str) -> list[int]:
    """Each message's tokens by recap's prompt formula with ``tokenizer``; a prompt's
    total is 3 plus their sum."""
