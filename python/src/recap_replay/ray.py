"""A run split into shards that run as Ray tasks, merged into one report.

Each task runs one shard with recap's engine (the GIL released), writing the partial
report ``recap run --shard I/N`` writes; the driver then merges the parts as ``recap
merge`` does. The merged :class:`~recap_replay.Report` equals the unsharded
:func:`recap_replay.run`'s in every deterministic field. Needs the ``ray`` extra
(``pip install './python[ray]'``)::

    import ray
    import recap_replay.ray

    ray.init()  # a local instance, or ray.init(address="auto") on a cluster
    report = recap_replay.ray.run(["/data/sessions.jsonl"], ["rolling-window:window=4"], shards=16)

The corpora must be readable at the same path on every node (a shared filesystem);
see docs/scale.md.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .api import PathLike, _command_line, _run_args, merge
from .errors import RecapError, StrategyError
from .report import Report
from .strategy import strategy_name


def run(
    corpora: PathLike | Iterable[PathLike],
    strategies: Iterable[str | object] | None = None,
    *,
    shards: int,
    tokenizers: str | Iterable[str] = ("o200k_base",),
    plugins: PathLike | Iterable[PathLike] = (),
    jobs: int | None = None,
    config: Mapping[str, Any] | None = None,
    cpus_per_shard: int = 1,
    parts_dir: PathLike | None = None,
    out: PathLike | None = None,
    force: bool = False,
) -> Report:
    """Runs what :func:`recap_replay.run` runs as ``shards`` Ray tasks, one shard
    each, and merges their partial reports into one :class:`~recap_replay.Report`.

    Args:
        corpora, strategies, tokenizers, plugins, config: as :func:`recap_replay.run`.
            Corpus and plugin paths are made absolute here and must name the same
            files on every node. Each task runs in a Ray worker process, so a Python
            strategy object reaches it pickled (Ray's cloudpickle): one that does not
            pickle is refused before any task starts, and its class must be
            importable on every node (or defined in the driver's ``__main__``).
        shards: how many shards (tasks); a session belongs to the shard its id
            hashes to (docs/scale.md), so shards need not be the same size.
        jobs: the engine's worker threads in each task (default ``cpus_per_shard``).
        cpus_per_shard: the CPUs each task asks Ray for.
        parts_dir: a directory every node and this process reach (a shared
            filesystem): each task writes its part into ``parts_dir/shard-I-of-N``
            and the merge reads it there; refused if a part directory holds files,
            unless ``force``. ``None``: each task writes its part into a temporary
            directory of its node and returns the files through Ray's object store;
            the driver merges them from a temporary directory it removes.
        out: write every file ``recap merge --out`` writes into this directory.

    Ray is started with ``ray.init()`` unless it is already (call ``ray.init``
    first to choose a cluster or resources). Ctrl-C cancels the tasks still running
    and no report is returned; when a shard fails, the others run to their end (their
    results are dropped) and the failure is raised.

    Raises:
        StrategyError: a Python strategy that is malformed or does not pickle.
        RecapError: a bad argument, or a shard that failed (named, with its error).
    """
    import ray

    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
        raise ValueError(f"shards: expected a positive integer, got {shards!r}")
    if isinstance(cpus_per_shard, bool) or not isinstance(cpus_per_shard, int) or cpus_per_shard < 1:
        raise ValueError(f"cpus_per_shard: expected a positive integer, got {cpus_per_shard!r}")
    files, entries, tokenizer_names, plugin_paths, jobs, settings = _run_args(
        corpora, strategies, tokenizers, plugins, jobs, config
    )
    _check_picklable(ray, entries or [])
    args = (
        [os.path.abspath(f) for f in files],
        entries,
        tokenizer_names,
        [os.path.abspath(p) for p in plugin_paths],
        jobs if jobs is not None else cpus_per_shard,
        settings,
        _command_line(),
    )
    shared = None if parts_dir is None else os.path.abspath(os.fspath(parts_dir))
    if not ray.is_initialized():
        ray.init()
    task = ray.remote(num_cpus=cpus_per_shard, max_retries=0)(_shard_task)
    refs = [task.remote(args, i, shards, shared, force) for i in range(shards)]
    try:
        results = _gather(ray, refs)
    except KeyboardInterrupt:
        # Only the tasks still running: force-cancelling one as it completes trips a
        # check in Ray's core worker (2.60: "Tried to complete task that was not
        # pending") that aborts this process.
        _, running = ray.wait(refs, num_returns=len(refs), timeout=0)
        for ref in running:
            ray.cancel(ref, force=True)
        raise
    if shared is not None:
        return merge([r["dir"] for r in results], out=out, force=force)
    with tempfile.TemporaryDirectory(prefix="recap-ray-parts-") as tmp:
        dirs = []
        for r in results:
            dirs.append(_unpack(r, Path(tmp)))
        return merge(dirs, out=out, force=force)


def _check_picklable(ray: Any, entries: list[str | object]) -> None:
    """Refuses a Python strategy that cannot travel to a Ray worker process."""
    for entry in entries:
        if isinstance(entry, str):
            continue
        try:
            ray.cloudpickle.dumps(entry)
        except Exception as e:
            raise StrategyError(
                f"{strategy_name(entry)}: a Python strategy of recap_replay.ray.run must "
                "pickle (each shard runs in a Ray worker process, which gets a copy), "
                f"and this one does not: {type(e).__name__}: {e}; "
                "recap_replay.run_shard runs it in this process"
            ) from e


def _gather(ray: Any, refs: list[Any]) -> list[dict[str, Any]]:
    """The tasks' results in shard order; the first failure raised naming its shard."""
    results: list[dict[str, Any] | None] = [None] * len(refs)
    index = {ref: i for i, ref in enumerate(refs)}
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done:
            i = index[ref]
            try:
                results[i] = ray.get(ref)
            except ray.exceptions.RayTaskError as e:
                cause = e.cause if isinstance(e.cause, BaseException) else e
                raise RecapError(f"shard {i}/{len(refs)}: {cause}") from cause
    return [r for r in results if r is not None]


def _shard_task(*task: Any) -> dict[str, Any]:
    """One Ray task: :func:`_shard_part` of ``task``.

    A ``KeyboardInterrupt`` or ``SystemExit`` in the task (a Python strategy raised it,
    or the task was cancelled) is this shard's failure, named as such: Ray would report
    it as a cancelled task and nothing more."""
    try:
        return _shard_part(*task)
    except (KeyboardInterrupt, SystemExit) as e:
        said = f": {e}" if str(e) else ""
        raise RecapError(
            f"stopped by {type(e).__name__}{said} (raised by a Python strategy, or the task "
            "was cancelled); the shard wrote no part"
        ) from None


def _shard_part(
    args: tuple[Any, ...],
    index: int,
    count: int,
    shared: str | None,
    force: bool,
) -> dict[str, Any]:
    """Shard ``index/count`` written as a part; with no shared directory, its files
    come back in the result (relative path → bytes)."""
    from . import _native

    if shared is not None:
        out = os.path.join(shared, f"shard-{index}-of-{count}")
        return dict(_native.run_shard(*args, index, count, out, force))
    tmp = tempfile.mkdtemp(prefix="recap-ray-shard-")
    try:
        out = os.path.join(tmp, "part")
        summary = dict(_native.run_shard(*args, index, count, out, False))
        summary["part_files"] = {
            str(p.relative_to(out)): p.read_bytes() for p in sorted(Path(out).rglob("*")) if p.is_file()
        }
        return summary
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _unpack(result: dict[str, Any], into: Path) -> str:
    """Writes a part returned through the object store into ``into``; its directory."""
    shard = str(result["shard"]).replace("/", "-of-")
    part = into / f"shard-{shard}"
    for rel, data in result["part_files"].items():
        path = part / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return str(part)


__all__ = ["run"]
