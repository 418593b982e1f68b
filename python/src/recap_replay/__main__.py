"""``python -m recap_replay run EXPERIMENT.toml``: an experiment file whose strategies
may be written in Python (docs/python.md, "Experiment files")."""

from __future__ import annotations

import argparse
import sys

from . import experiment
from .api import run
from .errors import RecapError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m recap_replay",
        description="Run an experiment file whose strategies may be written in Python.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run_cmd = commands.add_parser("run", help="run an experiment file (its `python` key names Python strategies)")
    run_cmd.add_argument("file", help="the experiment file (TOML, docs/experiments.md)")
    run_cmd.add_argument("--format", choices=experiment.FORMATS, help="what is printed (default: the file's, else table)")
    args = parser.parse_args(argv)
    try:
        exp = experiment.load(args.file)
        report = run(
            exp.corpora,
            exp.strategies or None,
            tokenizers=exp.tokenizers,
            plugins=exp.plugins,
            jobs=exp.jobs,
            config={**exp.config, "progress": sys.stderr.isatty()},
        )
    except (RecapError, ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    fmt = args.format or exp.format
    out = {
        "table": report.to_table,
        "json": report.to_json,
        "csv": report.to_csv,
        "markdown": report.to_markdown,
    }[fmt]()
    sys.stdout.write(out if out.endswith("\n") else out + "\n")
    return 1 if report.has_problems or report.to_dict()["rejected"] else 0


if __name__ == "__main__":
    sys.exit(main())
