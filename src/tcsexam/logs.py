"""The CLI's log lines: one set-up for every command, so each line on stderr carries a UTC time
stamp and a level, e.g. ``2026-12-01T22:40:01Z INFO    tcsexam run: sat-satlib: 50 of 50 instances
to run``. `setup_logging(verbosity)` is called once by `tcsexam.cli.main` (global ``-v``/``-q``);
code that logs outside the CLI (tests, the API) gets the same format on first use (`logger`).
Only the ``tcsexam`` logger tree is configured: Ray's and Snakemake's loggers are left alone.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

ROOT = "tcsexam"
FORMAT = "%(asctime)s %(levelname)-7s %(message)s"
DATE_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever `sys.stderr` is at the time of the line (pytest's capture swaps it)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def _formatter() -> logging.Formatter:
    formatter = logging.Formatter(FORMAT, DATE_FORMAT)
    formatter.converter = time.gmtime
    return formatter


def level_for(verbosity: int) -> int:
    """0: INFO; 1 (-v): DEBUG; -1 (-q): WARNING; -2 (-qq) or less: ERROR."""
    if verbosity > 0:
        return logging.DEBUG
    return {0: logging.INFO, -1: logging.WARNING}.get(verbosity, logging.ERROR)


def setup_logging(verbosity: int = 0) -> logging.Logger:
    """Configure the ``tcsexam`` logger (idempotent): one stderr handler, time stamp and level."""
    root = logging.getLogger(ROOT)
    handler = next((h for h in root.handlers if isinstance(h, _StderrHandler)), None)
    if handler is None:
        handler = _StderrHandler()
        handler.setFormatter(_formatter())
        root.addHandler(handler)
    root.setLevel(level_for(verbosity))
    root.propagate = False
    return root


def logger(name: str) -> logging.Logger:
    """`tcsexam.<name>`, set up with the default level if nothing set it up yet."""
    if not logging.getLogger(ROOT).handlers:
        setup_logging(0)
    return logging.getLogger(f"{ROOT}.{name}")


def say_for(command: str, name: str) -> Callable[[str], None]:
    """A one-argument log function for `command`'s messages (``tcsexam <command>: <message>``): a
    message that starts with ``WARNING:`` (after an optional ``<task>: ``) is logged at WARNING,
    every other one at INFO."""
    log = logger(name)

    def say(message: str) -> None:
        message = str(message)
        level = logging.WARNING if "WARNING:" in message.split(" ", 2)[:2] else logging.INFO
        log.log(level, "tcsexam %s: %s", command, message)

    return say
