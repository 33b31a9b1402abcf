"""Who owns a run: a random token per harness process, never its pid.

Every harness process (a Ray actor, a job's driver, a test) gets a fresh `owner_token()` (128
random bits, hex) the first time it asks, and a forked child gets its own. A run's processes
carry it in their environment (`run_marker`: ``TCSEXAM_RUN_MARKER=<token>-<run>``, inherited by
every descendant), and its scratch folders carry it in their names
(`tcsexam.runner.ownership.scratch`). Clean-up after a dead owner goes by that token
(`runner.limiter.orphans.kill_run_orphans`): a pid is reused once the counter wraps (another job's
actor may get the pid of one that just died), a token never is, so one job's clean-up can never
touch another job's live run.
"""

from __future__ import annotations

import os
import re
import threading
import time
import uuid

MARKER_KEY = "TCSEXAM_RUN_MARKER"
_TOKEN = re.compile(r"[0-9a-f]{32}")

_lock = threading.Lock()
_token: str | None = None


def _forget() -> None:
    global _token
    _token = None


os.register_at_fork(after_in_child=_forget)


def new_owner_token() -> str:
    """A fresh owner token (32 random hex digits)."""
    return uuid.uuid4().hex


def owner_token() -> str:
    """This process's owner token (32 hex digits), made once per process."""
    global _token
    with _lock:
        if _token is None:
            _token = new_owner_token()
        return _token


def adopt_owner_token(token: str) -> None:
    """Make `token` this process's owner token: a Ray actor takes the one its driver chose, so the
    driver can kill and remove what the actor leaves without ever having heard from it. Raises
    RuntimeError when this process already owns runs under another token."""
    global _token
    if not is_token(token):
        raise ValueError(f"not an owner token: {token!r}")
    with _lock:
        if _token not in (None, token):
            raise RuntimeError("this process already owns runs under another owner token")
        _token = token


def is_token(text: object) -> bool:
    """`text` is an owner token (what a clean-up may kill or remove by)."""
    return isinstance(text, str) and _TOKEN.fullmatch(text) is not None


def run_marker(run_id: object) -> str:
    """``TCSEXAM_RUN_MARKER=<owner token>-<monotonic ns>-<run_id>``: the environment entry of one
    run of this process (unique per run; its prefix up to the token is the owner's)."""
    return f"{MARKER_KEY}={owner_token()}-{time.monotonic_ns()}-{run_id}"


def owner_needle(token: str) -> bytes:
    """What every marked process of owner `token` has in its /proc/PID/environ."""
    if not is_token(token):
        raise ValueError(f"not an owner token: {token!r}")
    return f"{MARKER_KEY}={token}-".encode()
