"""Experiment files that name Python strategies: ``python -m recap_replay run FILE``.

The file is the TOML of ``recap run --config`` (docs/experiments.md) with one more key,
``python``: the Python strategies, each ``"module:Class"``, ``"module:Class(key=value,
…)"`` (keyword arguments, Python literals) or a table ``{strategy = "module:Class",
options = {key = value}}``. The keys this command reads are :data:`KEYS`; any other key
of an experiment file is refused, naming it, rather than left out.
"""

from __future__ import annotations

import ast
import glob
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import RecapError
from .strategy import load_strategy

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - CPython 3.10
    import tomli as tomllib

#: The keys ``python -m recap_replay run`` reads, as ``recap run --config`` reads them.
KEYS = (
    "corpora",
    "strategies",
    "python",
    "plugins",
    "plugin_timeout",
    "tokenizers",
    "tokenizer_backend",
    "cache_read_ratio",
    "jobs",
    "session_details",
    "check_determinism",
    "format",
)
#: Keys of ``recap run --config`` this command does not run (use ``recap run``).
CLI_ONLY = (
    "sweeps",
    "compress_history",
    "plugin_dirs",
    "plugin_isolation",
    "out",
    "force",
    "dump_prompts",
)
FORMATS = ("table", "json", "csv", "markdown")


class ExperimentError(RecapError):
    """A bad experiment file: the file, the key, and what was expected."""


class Experiment:
    """A parsed experiment file: the arguments of :func:`recap_replay.run`."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.corpora: list[str] = []
        self.strategies: list[str | object] = []
        self.plugins: list[str] = []
        self.tokenizers: list[str] = ["o200k_base"]
        self.jobs: int | None = None
        self.config: dict[str, Any] = {}
        self.format = "table"


def _fail(file: Path, key: str, message: str) -> ExperimentError:
    return ExperimentError(f"{file}: `{key}`: {message}")


def _strings(file: Path, key: str, value: Any) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
        raise _fail(file, key, f"expected a string or an array of strings, got {value!r}")
    return items


def parse_reference(text: str) -> tuple[str, dict[str, Any]]:
    """``"module:Class(key=value, …)"`` as ``("module:Class", {key: value})``; the
    values are Python literals."""
    reference, paren, rest = text.partition("(")
    if not paren:
        return text.strip(), {}
    try:
        call = ast.parse(f"f({rest}", mode="eval").body
    except SyntaxError as e:
        raise ValueError(f"{text!r}: options are not `key=value, …`: {e.msg}") from None
    if not isinstance(call, ast.Call) or call.args:
        raise ValueError(f"{text!r}: options must be keyword arguments (`key=value`)")
    options: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise ValueError(f"{text!r}: `**` is not an option")
        try:
            options[kw.arg] = ast.literal_eval(kw.value)
        except ValueError:
            raise ValueError(
                f"{text!r}: option {kw.arg}: expected a literal (number, string, list, …)"
            ) from None
    return reference.strip(), options


def _python(file: Path, value: Any) -> list[object]:
    if not isinstance(value, list):
        raise _fail(file, "python", f"expected an array of strategies, got {value!r}")
    out = []
    for i, item in enumerate(value):
        key = f"python[{i}]"
        if isinstance(item, str):
            try:
                reference, options = parse_reference(item)
            except ValueError as e:
                raise _fail(file, key, str(e)) from None
        elif isinstance(item, Mapping):
            unknown = sorted(set(item) - {"strategy", "options"})
            if unknown or not isinstance(item.get("strategy"), str):
                raise _fail(
                    file, key, "expected a table with `strategy` (\"module:Class\") and optional `options`"
                )
            reference, options = item["strategy"], item.get("options", {})
            if not isinstance(options, Mapping):
                raise _fail(file, f"{key}.options", f"expected a table, got {options!r}")
        else:
            raise _fail(file, key, f'expected "module:Class(…)" or a table, got {item!r}')
        try:
            out.append(load_strategy(reference, options))
        except RecapError as e:
            raise _fail(file, key, str(e)) from None
    return out


def _corpora(file: Path, value: Any) -> list[str]:
    found = []
    for pattern in _strings(file, "corpora", value):
        path = os.path.join(file.parent, pattern)
        matches = sorted(glob.glob(path, recursive=True))
        if not matches:
            raise _fail(file, "corpora", f"{pattern!r} matches no file (relative to {file.parent})")
        found.extend(matches)
    return found


def _plugins(file: Path, value: Any) -> list[str]:
    if not isinstance(value, list):
        raise _fail(file, "plugins", f"expected an array of tables, got {value!r}")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping) or set(item) != {"path"} or not isinstance(item["path"], str):
            raise _fail(
                file,
                f"plugins[{i}]",
                "expected a table with `path` alone (plugins with options or isolation run with `recap run --config`)",
            )
        out.append(os.path.join(file.parent, item["path"]))
    return out


def load(file: str | os.PathLike[str]) -> Experiment:
    """Reads and checks an experiment file; paths in it are relative to its directory."""
    path = Path(file)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ExperimentError(f"{path}: cannot read it: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ExperimentError(f"{path}: not TOML: {e}") from None
    exp = Experiment(path)
    for key, value in data.items():
        if key in CLI_ONLY:
            raise _fail(path, key, "run by `recap run --config` only, which runs no Python strategy")
        if key not in KEYS:
            raise _fail(path, key, f"unknown key; valid keys: {', '.join(KEYS)}")
        if key == "corpora":
            exp.corpora = _corpora(path, value)
        elif key == "strategies":
            exp.strategies[:0] = _strings(path, key, value)
        elif key == "python":
            exp.strategies.extend(_python(path, value))
        elif key == "plugins":
            exp.plugins = _plugins(path, value)
        elif key == "tokenizers":
            exp.tokenizers = _strings(path, key, value)
        elif key == "jobs":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise _fail(path, key, f"expected a positive integer, got {value!r}")
            exp.jobs = value
        elif key == "format":
            if value not in FORMATS:
                raise _fail(path, key, f"expected one of {', '.join(FORMATS)}, got {value!r}")
            exp.format = value
        elif key == "plugin_timeout":
            exp.config[key] = 0 if value == "none" else value
        else:
            exp.config[key] = value
    if not exp.corpora:
        raise _fail(path, "corpora", "missing: the file names no corpus")
    return exp
