"""The entry points: run, render, read_sessions, strategies, import_logs."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Union

from . import _native
from .errors import RecapError, StrategyError
from .report import Report
from .strategy import check_strategies, render_python

PathLike = Union[str, "os.PathLike[str]"]

#: The keys of ``run(config=...)`` and their defaults.
SETTINGS: dict[str, Any] = {
    # Price of a cached prompt token relative to an uncached one (0..=1).
    "cache_read_ratio": 0.1,
    # "fast" (tiktoken 4.x) or "reference" (tiktoken-rs); counts are identical.
    "tokenizer_backend": "fast",
    # Per-session records: Report.sessions and the JSON's session_details.
    "session_details": True,
    # Per-call records: Report.calls.
    "calls": True,
    # Seconds per plugin call; 0 or None: no limit.
    "plugin_timeout": None,
    # A progress bar on stderr for runs longer than a second (only on a terminal).
    "progress": True,
    # Which strategies have every call rendered twice and compared (SPEC 7.6):
    # "opaque", those recap cannot see into (plugins, Python strategies); "all", built-ins too.
    "check_determinism": "opaque",
}

def _paths(value: PathLike | Iterable[PathLike], what: str) -> list[str]:
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    try:
        return [os.fspath(p) for p in value]
    except TypeError:
        raise TypeError(f"{what}: expected a path or a list of paths, got {value!r}") from None


def _settings(config: Mapping[str, Any] | None) -> dict[str, Any]:
    settings = dict(SETTINGS)
    if config is None:
        return settings
    if isinstance(config, (str, os.PathLike)):
        raise TypeError(
            "config: expected a mapping of run settings; an experiment file runs with "
            "`recap run --config FILE`"
        )
    unknown = sorted(set(config) - set(SETTINGS))
    if unknown:
        raise ValueError(f"config: unknown key(s) {unknown}; valid keys: {', '.join(SETTINGS)}")
    settings.update(config)
    ratio = settings["cache_read_ratio"]
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 <= ratio <= 1:
        raise ValueError(f"config['cache_read_ratio']: expected a number in [0, 1], got {ratio!r}")
    settings["cache_read_ratio"] = float(ratio)
    for key in ("session_details", "calls", "progress"):
        if not isinstance(settings[key], bool):
            raise TypeError(f"config[{key!r}]: expected True or False, got {settings[key]!r}")
    timeout = settings["plugin_timeout"]
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError(f"config['plugin_timeout']: expected seconds >= 0 or None, got {timeout!r}")
        settings["plugin_timeout"] = float(timeout)
    return settings


def run(
    corpora: PathLike | Iterable[PathLike],
    strategies: Iterable[str | object] | None = None,
    *,
    tokenizers: str | Iterable[str] = ("o200k_base",),
    plugins: PathLike | Iterable[PathLike] = (),
    jobs: int | None = None,
    config: Mapping[str, Any] | None = None,
) -> Report:
    """Replays ``corpora`` through ``strategies`` as ``recap run`` does.

    Args:
        corpora: corpus files (JSON Lines, optionally gzip-compressed).
        strategies: spec strings (``"rolling-window:window=2"``) and Python strategy
            objects; ``None`` runs every registered strategy, as ``recap run``.
        tokenizers: ``o200k_base``, ``cl100k_base``, ``deepseek_v3``.
        plugins: strategy plugin libraries to load (their strategies are then named
            in ``strategies``).
        jobs: worker threads (default: the number of CPUs).
        config: run settings, keys of :data:`SETTINGS`.

    The engine runs with the GIL released. Ctrl-C (KeyboardInterrupt) stops it once
    the sessions in flight are done, and no report is returned.

    Raises:
        CorpusError: a corpus file cannot be read.
        NoSessionsError: the corpora hold no session to replay.
        StrategyError: a Python strategy is malformed, or two strategies share a name.
        RecapError: an unknown strategy, tokenizer or setting.
    """
    args = _run_args(corpora, strategies, tokenizers, plugins, jobs, config)
    return Report(_native.run(*args, _command_line()))


def _command_line() -> list[str]:
    return list(getattr(sys, "orig_argv", sys.argv))


def _run_args(
    corpora: PathLike | Iterable[PathLike],
    strategies: Iterable[str | object] | None,
    tokenizers: str | Iterable[str],
    plugins: PathLike | Iterable[PathLike],
    jobs: int | None,
    config: Mapping[str, Any] | None,
) -> tuple[list[str], list[str | object] | None, list[str], list[str], int | None, dict[str, Any]]:
    """The arguments of :func:`run`, checked, as the native run takes them."""
    files = _paths(corpora, "corpora")
    if not files:
        raise RecapError("no corpus given")
    entries: list[str | object] | None = None
    if strategies is not None:
        if isinstance(strategies, str) or not isinstance(strategies, Iterable):
            strategies = [strategies]  # type: ignore[list-item]
        entries = check_strategies(strategies)
        if not entries:
            raise StrategyError("strategies is empty (None runs every registered strategy)")
    if isinstance(tokenizers, str):
        tokenizers = [tokenizers]
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs: expected a positive integer, got {jobs!r}")
    return (files, entries, list(tokenizers), _paths(plugins, "plugins"), jobs, _settings(config))


def parse_shard(shard: str | tuple[int, int]) -> tuple[int, int]:
    """``"I/N"`` or ``(I, N)`` as ``(I, N)``, checked: ``0 <= I < N``."""
    if isinstance(shard, str):
        index, sep, count = shard.partition("/")
        try:
            if not sep:
                raise ValueError
            pair = (int(index), int(count))
        except ValueError:
            raise ValueError(f"shard {shard!r}: expected I/N, such as 0/8") from None
    elif (
        isinstance(shard, tuple)
        and len(shard) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in shard)
    ):
        pair = shard
    else:
        raise TypeError(f"shard: expected \"I/N\" or (I, N), got {shard!r}")
    if not 0 <= pair[0] < pair[1]:
        raise ValueError(f"shard {pair[0]}/{pair[1]}: expected 0 <= I < N")
    return pair


def run_shard(
    corpora: PathLike | Iterable[PathLike],
    strategies: Iterable[str | object] | None = None,
    *,
    shard: str | tuple[int, int],
    out: PathLike,
    force: bool = False,
    tokenizers: str | Iterable[str] = ("o200k_base",),
    plugins: PathLike | Iterable[PathLike] = (),
    jobs: int | None = None,
    config: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Runs shard ``I/N`` of the run :func:`run` would run and writes its partial
    report into the directory ``out``, as ``recap run --shard I/N --out DIR`` does
    (docs/scale.md): the sessions whose id hashes to shard ``I``. :func:`merge` folds
    the ``N`` parts into the whole run's report.

    ``strategies`` are :func:`run`'s: spec strings and Python strategy objects, which
    run in this process. ``out`` is refused if it holds files, unless ``force``. Ctrl-C,
    or a Python strategy raising ``KeyboardInterrupt``, stops the shard with nothing
    written. Returns what was written: ``shard``, ``dir``, ``entries`` (the
    corpora's), ``owned``, ``sessions`` and ``rejected`` (the shard's), ``files``.
    """
    index, count = parse_shard(shard)
    args = _run_args(corpora, strategies, tokenizers, plugins, jobs, config)
    return _native.run_shard(*args, _command_line(), index, count, os.fspath(out), force)


def merge(
    parts: Iterable[PathLike],
    *,
    out: PathLike | None = None,
    force: bool = False,
) -> Report:
    """Merges the partial reports of every shard of one run (the ``out`` directories
    of :func:`run_shard` or ``recap run --shard``) into the report the whole run
    would have written, as ``recap merge`` does: equal to :func:`run`'s in every
    deterministic field, ``Report.sessions`` and ``Report.calls`` included.

    With ``out``, every file ``recap merge --out`` writes goes there (refused if it
    holds files, unless ``force``). Parts of different runs, a shard missing or given
    twice, or an unfinished part are refused with nothing written (:class:`RecapError`).
    """
    dirs = _paths(parts, "parts")
    if out is not None:
        native = _native.merge_parts(dirs, os.fspath(out), force, True, _command_line())
        return Report(native, calls=_read_calls(os.path.join(os.fspath(out), "calls.csv")))
    with tempfile.TemporaryDirectory(prefix="recap-merge-") as tmp:
        native = _native.merge_parts(dirs, tmp, True, False, _command_line())
        return Report(native, calls=_read_calls(os.path.join(tmp, "calls.csv")))


#: The types of ``calls.csv``'s columns, as :attr:`Report.calls` has them.
_CALL_TYPES = {
    "corpus": "string",
    "line": "uint64",
    "session": "string",
    "form": "string",
    "strategy": "string",
    "tokenizer": "string",
    "call": "uint64",
    "prompt_tokens": "uint64",
    "cached_tokens": "uint64",
    "retention_facts": "uint64",
    "retention_retained": "uint64",
    "retention": "float64",
    "invariant_violations": "uint64",
    "render_error": "string",
    "render_ns": "uint64",
}


def _read_calls(path: str) -> Any:
    """The merged ``calls.csv`` as an Arrow table of :attr:`Report.calls`' columns
    (read by Arrow's CSV reader; ``None`` when the run kept no calls)."""
    if not os.path.exists(path):
        return None
    import pyarrow
    import pyarrow.compute as pc
    from pyarrow import csv

    types = {name: pyarrow.type_for_alias(t) for name, t in _CALL_TYPES.items()}
    table = csv.read_csv(
        path,
        convert_options=csv.ConvertOptions(column_types=types, strings_can_be_null=False),
    )
    if table.column_names != list(_CALL_TYPES):
        raise RecapError(f"{path}: columns {table.column_names}, expected {list(_CALL_TYPES)}")
    # An empty render_error is a call that rendered (the harness writes None as "").
    errors = table.column("render_error")
    no_error = pyarrow.scalar(None, pyarrow.string())
    errors = pc.if_else(pc.equal(errors, ""), no_error, errors)
    return table.set_column(table.column_names.index("render_error"), "render_error", errors)


def render(
    corpus: PathLike,
    session_id: str,
    k: int,
    strategy: str | object,
    *,
    tokenizer: str = "o200k_base",
    plugins: PathLike | Iterable[PathLike] = (),
) -> list[dict[str, Any]]:
    """The prompt ``strategy`` sends at the call after ``k`` turns of the session
    ``session_id``: OpenAI chat-completions messages, as ``recap render --format
    json`` prints them. ``strategy`` is a spec string or a Python strategy (whose
    prompt is checked: a malformed one raises :class:`RenderError` with the path of
    the bad field)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k: expected the number of turns before the call (>= 0), got {k!r}")
    path = os.fspath(corpus)
    if isinstance(strategy, str):
        text = _native.render(path, session_id, k, strategy, tokenizer, _paths(plugins, "plugins"))
        return json.loads(text)
    check_strategies([strategy])
    session = _native.find_session(path, session_id)
    return render_python(strategy, session, k)


def read_sessions(path: PathLike, *, skip_invalid: bool = False) -> Iterator[_native.Session]:
    """The validated sessions of a corpus file, one at a time.

    A rejected line raises :class:`CorpusError` naming the file, line and field; the
    iterator can go on after it (``next()`` again). With ``skip_invalid`` rejected
    lines are kept in the iterator's ``rejected`` list instead.
    """
    return _native.SessionReader(os.fspath(path), skip_invalid)


def strategies(*, plugins: PathLike | Iterable[PathLike] = ()) -> list[dict[str, Any]]:
    """Every registered strategy (built-ins, then ``plugins``): ``name``, ``origin``,
    ``summary``, ``forms`` and ``options`` (key → (default, help))."""
    return _native.strategies(_paths(plugins, "plugins"))


def import_logs(
    kind: str,
    paths: PathLike | Iterable[PathLike],
    output: PathLike,
    *,
    force: bool = False,
) -> dict[str, Any]:
    """Turns agent logs into a corpus, as ``recap import KIND PATHS -o OUTPUT``.

    The corpus is written to a temporary file beside ``output`` and renamed into
    place; an existing ``output`` is replaced only with ``force``, and never by an
    import that found no session. Returns the counts (``sessions``, ``turns``,
    ``failed_turns``, ``tool_calls``, ``files``) and every ``problems`` line.
    """
    return _native.import_logs(kind, _paths(paths, "paths"), os.fspath(output), force)
