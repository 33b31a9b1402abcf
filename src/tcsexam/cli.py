"""The `tcsexam` command line.

Each concern registers its own subcommands (`register(subparsers)` in its `cli` module) and keeps
heavy imports inside the handlers, so `tcsexam --help` and light commands start fast.
Handlers return an exit code. `InputError` becomes one line on stderr and exit code 1;
`UsageError` exit code 2 (argparse's own usage errors exit 2 as well).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from tcsexam import __version__
from tcsexam.errors import InputError, UsageError, os_error_text

COMMAND_MODULES = (
    "tcsexam.scoring.cli",  # solver-score, score, reference build|check
    "tcsexam.problems.cli",  # check, generate
    "tcsexam.runner.cli",  # run, repair
    "tcsexam.runner.head_cli",  # runner ray-head
    "tcsexam.runner.construction_cli",  # construction run|row
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


def _input_paths(args: argparse.Namespace) -> set[Path]:
    """Every path-like argument but --output, resolved (files the command reads)."""
    found: set[Path] = set()
    for name, value in vars(args).items():
        if name == "output" or name == "handler":
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, (str, Path)) and v:
                try:
                    found.add(Path(v).resolve())
                except (OSError, RuntimeError, ValueError):
                    pass
    return found


def _set_aside_stale_output(args: argparse.Namespace) -> str:
    """After a refusal: an older --output must not pass for this run's result. Move it aside
    (`<output>.stale`, never deleted) unless it is one of the command's inputs; say what happened."""
    output = getattr(args, "output", None)
    if not isinstance(output, str) or not output:
        return ""
    path = Path(output)
    try:
        if not path.is_file() or path.resolve() in _input_paths(args):
            return ""
        dest = path.with_name(path.name + ".stale")
        n = 1
        while dest.exists():
            n += 1
            dest = path.with_name(f"{path.name}.stale{n}")
        os.replace(path, dest)
    except OSError as exc:
        return f" (an older {path} is left from a previous run and could not be moved aside: {exc.strerror})"
    return f" (an older {path} from a previous run was moved to {dest}: it is not this run's result)"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except InputError as exc:
        print(f"tcsexam {args.command}: error: {exc}{_set_aside_stale_output(args)}", file=sys.stderr)
        return 1
    except UsageError as exc:
        print(f"tcsexam {args.command}: usage error: {exc}{_set_aside_stale_output(args)}", file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk, a read-only folder, ...: one line naming the path
        print(f"tcsexam {args.command}: error: {os_error_text(exc)}{_set_aside_stale_output(args)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"tcsexam {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
