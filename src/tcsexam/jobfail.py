"""`tcsexam job-failed LOG CODE`: what every workflow rule runs when its command failed
(`cmd > LOG 2>&1 || tcsexam job-failed LOG $?`). The command's whole output is in its log;
this prints the log's one-line reason on stderr, so that it shows on the terminal of `make run`
and `snakemake` beside Snakemake's own "check log file(s)", and exits with the command's code.

The reason is the log's last ERROR line (the CLI's one line, its time stamp and level left out),
else its last non-empty line (a traceback's exception), else "no output".

It also leaves a failure note beside the log (`<log>.failed`: the reason and the code), from which
the workflow's `onerror` writes the incomplete Index with each failed attempt's reason
(`tcsexam.workflow.salvage`). A note that cannot be written is only said: the job's own exit is
what counts.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from tcsexam.fileio import atomic_write_json

#: how much of the log's end is read (the reason is its last lines)
TAIL_BYTES = 65536
#: the failure note beside a failed job's log
FAILED_SUFFIX = ".failed"
_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+(ERROR|CRITICAL)\s+")


def reason(log: str | Path) -> str:
    """The one-line reason in `log` (see the module docstring)."""
    try:
        with open(log, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - TAIL_BYTES))
            text = fh.read().decode("utf-8", "replace")
    except OSError as exc:
        return f"(its log cannot be read: {exc.strerror or exc})"
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if _STAMP.match(line)]
    if errors:
        return _STAMP.sub("", errors[-1])
    return lines[-1] if lines else "no output"


def _handler(args: argparse.Namespace) -> int:
    why = reason(args.log)
    print(f"job failed (exit code {args.code}): {why} (log: {args.log})", file=sys.stderr, flush=True)
    try:
        atomic_write_json(f"{args.log}{FAILED_SUFFIX}", {"reason": why, "code": args.code}, durable=False)
    except OSError as exc:
        print(f"job-failed: cannot write the failure note beside {args.log}: {exc}", file=sys.stderr, flush=True)
    return args.code if 0 < args.code < 256 else 1


def register(sub) -> None:
    p = sub.add_parser(
        "job-failed",
        help="(the workflow's rules) print a failed job's one-line reason from its log on stderr, exit with its code",
    )
    p.add_argument("log", help="the job's log file")
    p.add_argument("code", type=int, help="the failed command's exit code")
    p.set_defaults(handler=_handler)
