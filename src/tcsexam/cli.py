"""The `tcsexam` command line.

Each concern registers its own subcommands (`register(subparsers)` in its `cli` module) and keeps
heavy imports inside the handlers, so `tcsexam --help` and light commands start fast.
Handlers return an exit code. `InputError` becomes one line on stderr and exit code 1;
`UsageError` exit code 2 (argparse's own usage errors exit 2 as well).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from tcsexam import __version__
from tcsexam.errors import InputError, UsageError

COMMAND_MODULES = (
    "tcsexam.scoring.cli",  # solver-score, score, reference build|check
    "tcsexam.problems.cli",  # check, generate
    "tcsexam.runner.cli",  # run, repair
    "tcsexam.runner.head_cli",  # runner ray-head
    "tcsexam.attempts.cli",  # verdict/attempt-row/attempt-table (the workflow's glue)
    "tcsexam.orspace.cli",  # orspace stage|execute|score-objectives|explain-score
    "tcsexam.provenance.cli",  # manifest, compare
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tcsexam",
        description="Evaluate candidate solvers and agent submissions (TCSExam, OR-Space).",
    )
    parser.add_argument("--version", action="version", version=f"tcsexam {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # a concern not installed in this build
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except InputError as exc:
        print(f"tcsexam {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except UsageError as exc:
        print(f"tcsexam {args.command}: usage error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tcsexam {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
