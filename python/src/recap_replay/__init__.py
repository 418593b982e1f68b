"""recap from Python.

Replays recorded LLM-agent sessions through message-history compression strategies
with recap's Rust engine, and returns what it measured as pandas DataFrames, Arrow
tables or the JSON report of ``recap run``::

    import recap_replay as rr
    report = rr.run("bench-data/chat-generated.jsonl", ["full-history", "rolling-window:window=2"])
    report.summary[["strategy", "prompt_tokens_total", "savings_vs_full_history"]]

Strategies can be written in Python (:class:`Strategy`); the peers' own condensers
run as strategies through :mod:`recap_replay.adapters`. :func:`run_shard` and
:func:`merge` split a run into shards and merge their parts, as ``recap run --shard``
and ``recap merge`` do; :mod:`recap_replay.ray` runs the shards as Ray tasks.
"""

from ._native import GIT_COMMIT, Session, __version__
from .api import SETTINGS, import_logs, merge, read_sessions, render, run, run_shard, strategies
from .errors import CorpusError, NoSessionsError, RecapError, RenderError, StrategyError
from .report import Report
from .strategy import Replay, Strategy, check_strategy, load_strategy

__all__ = [
    "GIT_COMMIT",
    "SETTINGS",
    "CorpusError",
    "NoSessionsError",
    "RecapError",
    "RenderError",
    "Replay",
    "Report",
    "Session",
    "Strategy",
    "StrategyError",
    "__version__",
    "check_strategy",
    "import_logs",
    "load_strategy",
    "merge",
    "read_sessions",
    "render",
    "run",
    "run_shard",
    "strategies",
]
