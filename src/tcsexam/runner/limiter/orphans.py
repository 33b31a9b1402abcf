"""What a dead owner left running: its runs' processes, found by the owner's token
(`runner.ownership.owner`), never by pid, and killed; and a process told from a later one that got
its pid (`process_start`, `alive`), for waiting only."""

from __future__ import annotations

import os
import signal

from tcsexam.runner.limiter.cgroup import thaw_cgroups_of
from tcsexam.runner.limiter.proctable import read_stat
from tcsexam.runner.ownership.owner import owner_needle


def kill_run_orphans(token: str) -> int:
    """SIGKILL every process carrying the run marker of owner `token` (a harness process's
    `ownership.owner.owner_token`, never a pid) in its environment (`TCSEXAM_RUN_MARKER=<token>-...`,
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
