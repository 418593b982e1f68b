"""The report of a run: DataFrames, Arrow, the JSON document, notebook display."""

from __future__ import annotations

import html
import json
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from . import _native
from .errors import RecapError

if TYPE_CHECKING:  # pragma: no cover
    import pandas
    import polars
    import pyarrow

TableName = Literal["summary", "sessions", "calls"]

#: The summary columns the notebook view shows, with their headers.
_SHOWN = (
    ("form", "form"),
    ("strategy", "strategy"),
    ("tokenizer", "tokenizer"),
    ("sessions", "sessions"),
    ("not_applicable", "n/a"),
    ("calls", "calls"),
    ("prompt_tokens_total", "prompt tokens"),
    ("savings_vs_full_history", "savings"),
    ("cache_hit_rate", "cached"),
    ("retention", "retention"),
    ("invariant_violations.count", "violations"),
    ("render_errors.count", "errors"),
)


class Report:
    """What :func:`recap_replay.run` measured.

    ``summary``, ``sessions`` and ``calls`` are pandas DataFrames: one row per run
    (strategy × tokenizer; the columns of the JSON report's ``runs``, nested objects
    by dotted path such as ``invariant_violations.count``), one per session × run
    (the columns of ``sessions.csv``) and one per call × strategy × tokenizer (those
    of ``calls.csv``). :meth:`to_arrow` hands the same tables over as Arrow without a
    copy through Python objects; :meth:`to_json` is the document ``recap run
    --format json`` writes.
    """

    def __init__(self, native: _native.NativeReport, calls: Any = None) -> None:
        # A merged report's calls come from the merged calls.csv (``calls``), a run's
        # from the engine.
        self._native = native
        self._calls = calls

    def _table(self, name: TableName) -> _native.ArrowTable | pyarrow.Table:
        if name == "summary":
            return self._native.summary_table()
        if name == "sessions":
            return self._native.sessions_table()
        if name == "calls":
            calls = self._calls if self._calls is not None else self._native.calls_table()
            if calls is None:
                raise RecapError("this run kept no calls (config={'calls': False})")
            return calls
        raise ValueError(f"table {name!r}: expected 'summary', 'sessions' or 'calls'")

    def to_arrow(self, table: TableName = "summary") -> _native.ArrowTable | pyarrow.Table:
        """One table as an Arrow stream (``__arrow_c_stream__``): pass it to
        ``pyarrow.table``, ``polars.DataFrame`` or any reader of the Arrow PyCapsule
        interface; the columns are read where Rust built them (a merged report's
        calls, where Arrow's CSV reader read the merged ``calls.csv``)."""
        return self._table(table)

    def to_pandas(self, table: TableName = "summary") -> "pandas.DataFrame":
        """One table as a pandas DataFrame (through Arrow)."""
        import pyarrow

        return pyarrow.table(self._table(table)).to_pandas()

    def to_polars(self, table: TableName = "summary") -> "polars.DataFrame":
        """One table as a polars DataFrame (through the Arrow PyCapsule interface)."""
        import polars

        return polars.DataFrame(self._table(table))

    @cached_property
    def summary(self) -> "pandas.DataFrame":
        """One row per strategy × tokenizer."""
        return self.to_pandas("summary")

    @cached_property
    def sessions(self) -> "pandas.DataFrame":
        """One row per session × strategy × tokenizer."""
        return self.to_pandas("sessions")

    @cached_property
    def calls(self) -> "pandas.DataFrame":
        """One row per call × strategy × tokenizer."""
        return self.to_pandas("calls")

    def to_json(self) -> str:
        """The report as ``recap run --format json`` writes it (docs/report-schema.md)."""
        return self._native.to_json()

    def to_dict(self) -> dict[str, Any]:
        """:meth:`to_json`, parsed."""
        return json.loads(self.to_json())

    def to_table(self) -> str:
        """The terminal table ``recap run`` prints."""
        return self._native.to_table()

    def to_csv(self) -> str:
        """The summary as CSV, as ``recap run --format csv`` prints it."""
        return self._native.to_csv()

    def to_markdown(self) -> str:
        """The summary as a markdown table with its notes."""
        return self._native.to_markdown()

    @property
    def has_problems(self) -> bool:
        """Whether any call broke an invariant or failed to render."""
        return self._native.has_problems()

    def __repr__(self) -> str:
        return self.to_table()

    def _repr_html_(self) -> str:
        runs = self.to_dict()["runs"]
        head = "".join(f"<th>{html.escape(h)}</th>" for _, h in _SHOWN)
        rows = []
        for run in runs:
            cells = []
            for key, _ in _SHOWN:
                value: Any = run
                for part in key.split("."):
                    value = value.get(part) if isinstance(value, dict) else None
                cells.append(f"<td>{html.escape(_cell(key, value, run))}</td>")
            rows.append("<tr>" + "".join(cells) + "</tr>")
        return (
            '<table class="recap-report"><thead><tr>'
            + head
            + "</tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table>"
        )


def _cell(key: str, value: Any, run: dict[str, Any]) -> str:
    if value is None:
        return "-"
    if key == "strategy" and run.get("implicit"):
        return f"{value}*"
    if key in ("savings_vs_full_history", "cache_hit_rate", "retention"):
        return f"{value * 100:.1f}%"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)
