"""What the subcommand modules' `register`/handlers share: declaring a command or a group of
actions, required options, `KEY=VALUE` option values, bounded numbers, handing parsed options on,
writing an output (an unwritable path is bad input: one line, exit 1), and SIGTERM as an exit
for the commands that run programs (`sigterm_as_exit`).

It imports only the standard library, `tcsexam.errors` and `tcsexam.fileio`, so any `cli` module
may use it without an import cycle.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from tcsexam.errors import InputError, UsageError
from tcsexam.fileio import atomic_write_json

Handler = Callable[[argparse.Namespace], int]


def command(sub, name: str, handler: Handler | None, help: str | None = None, description: str | None = None, **kwargs):
    """`sub.add_parser(name, ...)` whose parsed arguments go to `handler` (None: a group of actions).

    By default the handler's docstring says what the command does: its first paragraph is the
    one-line help in `tcsexam --help`, the rest (white space folded) the command's description."""
    if help is None and handler is not None and handler.__doc__:
        help, description = _help_of(handler.__doc__)
    parser = sub.add_parser(name, help=help, description=description, **kwargs)
    if handler is not None:
        parser.set_defaults(handler=handler)
    return parser


def _help_of(doc: str) -> tuple[str, str | None]:
    first, _, rest = doc.strip().partition("\n\n")
    return " ".join(first.split()), (" ".join(rest.split()) or None)


def actions(sub, name: str, dest: str, help: str, description: str | None = None):
    """A command made of ACTIONs (`tcsexam NAME ACTION ...`): the subparsers to add the actions to."""
    top = command(sub, name, None, help, description)
    return top.add_subparsers(dest=dest, metavar="ACTION", required=True)


def required(parser: argparse.ArgumentParser, *flags: str, **metavars: str) -> None:
    """Required string options without a help line of their own (`--model`, `--attempt`, ...);
    `metavars` by option name without dashes (`output="ROW.json"`)."""
    for flag in flags:
        parser.add_argument(flag, required=True, metavar=metavars.get(flag.lstrip("-").replace("-", "_")))


def key_value(spec: str, option: str, expected: str) -> tuple[str, str]:
    """`KEY=VALUE` of an option -> (KEY, VALUE); both must be non-empty (else a usage error naming `expected`)."""
    key, sep, value = spec.partition("=")
    if not sep or not key or not value:
        raise UsageError(f"{option} {spec!r}: expected {expected}")
    return key, value


def at_least(value, minimum: int, option: str, default=None):
    """`value` (or `default` when it is None) after checking it is `minimum` or more (usage error)."""
    value = default if value is None else value
    if value is not None and value < minimum:
        raise UsageError(f"{option} must be {'0 or more' if minimum == 0 else f'at least {minimum}'}")
    return value


def pick(args: argparse.Namespace, *names: str, **renamed: str) -> dict[str, Any]:
    """Keyword arguments from parsed options: `names` as they are, `renamed` as keyword=option name."""
    out = {name: getattr(args, name) for name in names}
    out.update({key: getattr(args, name) for key, name in renamed.items()})
    return out


def count_text(values: Iterable[str]) -> str:
    """`a 2, b 1`: how often each value occurs, in sorted order (the summary line of a written table)."""
    return ", ".join(f"{k} {v}" for k, v in sorted(Counter(values).items()))


def write_json(path: str, data) -> None:
    """Write an output atomically; an unwritable path is bad input (one line, exit 1)."""
    try:
        atomic_write_json(path, data)
    except OSError as exc:
        raise InputError(f"{path}: cannot write the output: {exc.strerror or exc}") from None


@contextlib.contextmanager
def sigterm_as_exit() -> Iterator[None]:
    """While inside (in the main thread), SIGTERM (a cancelled Snakemake or SLURM job) raises
    SystemExit(143), so the pool's `finally` blocks stop Ray and the actors; the records already
    written stay."""

    def to_exit(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, to_exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
