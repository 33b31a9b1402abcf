"""Who owns a run: a random token per harness process, never its pid.

Every harness process (a Ray actor, a job's driver, a test) gets a fresh `owner_token()` (128
random bits, hex) the first time it asks, and a forked child gets its own. A run's processes
carry it in their environment (`run_marker`: ``TCSEXAM_RUN_MARKER=<token>-<run>``, inherited by
every descendant), and its scratch folders carry it in their names
(`tcsexam.runner.limiter.scratch`). Clean-up after a dead owner goes by that token
(`kill_run_orphans`): a pid is reused once the counter wraps (another job's
actor may get the pid of one that just died), a token never is, so one job's clean-up can never
touch another job's live run.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
import uuid

from tcsexam.runner.limiter.cgroup import thaw_cgroups_of
from tcsexam.runner.limiter.proctable import read_stat

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


def kill_run_orphans(token: str) -> int:
    """SIGKILL every process carrying the run marker of owner `token` (a harness process's
    `limiter.owner.owner_token`, never a pid) in its environment (`TCSEXAM_RUN_MARKER=<token>-...`,
    set by tcsexam.runner.limiter for every run and inherited by every descendant, those that left
    with setsid included), and thaw the frozen cgroups that hold them (a harness killed between its
    freeze and its thaw leaves its run frozen, and a frozen process does not die of SIGKILL until it
    is thawed). A reused pid cannot make another job's runs match: their marker carries their own
    owner's token. Returns how many."""
    needle = owner_needle(token)
    me = os.getpid()
    killed = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                if needle not in fh.read():
                    continue
            os.kill(int(entry.name), signal.SIGKILL)
            killed.append(int(entry.name))
        except (OSError, ValueError):
            continue
    thaw_cgroups_of(killed)
    return len(killed)


def process_start(pid: int) -> int | None:
    """The start time of process `pid` (clock ticks since boot), None when it is gone: with the pid,
    what tells a process from a later one that got its pid (`alive`)."""
    proc = read_stat(pid)
    return None if proc is None or proc.state == "Z" else proc.start


def alive(pid: int, start: int | None) -> bool:
    """Process `pid` that started at `start` still runs (a later process with its pid does not
    count). Only for waiting: clean-up decisions go by owner token and lock, never by this."""
    return start is not None and process_start(pid) == start
