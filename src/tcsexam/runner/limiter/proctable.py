"""The process table through /proc (no psutil on the hot path), the harness as a child subreaper,
and the leaders of the runs in progress in this process."""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Proc:
    pid: int
    ppid: int
    pgrp: int
    sid: int
    state: str
    cpu_ticks: int  # utime + stime + cutime + cstime
    rss_pages: int
    start: int


def read_stat(pid: int) -> Proc | None:
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    rest = data[data.rfind(b")") + 2 :].split()
    try:
        return Proc(
            pid,
            int(rest[1]),
            int(rest[2]),
            int(rest[3]),
            rest[0].decode(),
            int(rest[11]) + int(rest[12]) + int(rest[13]) + int(rest[14]),
            int(rest[21]),
            int(rest[19]),
        )
    except (IndexError, ValueError):
        return None


def process_table() -> dict[int, Proc]:
    table = {}
    for name in os.listdir("/proc"):
        if name[0] in "123456789":
            proc = read_stat(int(name))
            if proc is not None:
                table[proc.pid] = proc
    return table


def live(pids: Iterable[int]) -> list[int]:
    """The pids that are still running (not zombies, not gone)."""
    out = []
    for pid in pids:
        p = read_stat(pid)
        if p is not None and p.state != "Z":
            out.append(pid)
    return out


def has_marker(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return marker in fh.read()
    except OSError:
        return False


_subreaper_lock = threading.Lock()
_subreaper_done = False


def become_subreaper() -> bool:
    """PR_SET_CHILD_SUBREAPER: orphans of our runs re-parent to this process, not to init."""
    global _subreaper_done
    with _subreaper_lock:
        if not _subreaper_done:
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper_done = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
            except OSError:
                _subreaper_done = False
        return _subreaper_done


def stop_being_subreaper() -> None:
    """Undo `become_subreaper` in a process that ran its last limited program but goes on starting
    others it does not reap (the workflow's Snakemake after its checks): their orphans go to init,
    which reaps them, instead of piling up here as zombies (each counts against RLIMIT_NPROC)."""
    global _subreaper_done
    with _subreaper_lock:
        if _subreaper_done:
            try:
                ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
            except OSError:
                pass
            _subreaper_done = False


active_lock = threading.Lock()
active_leaders: set[int] = set()


def reap(pid: int) -> tuple[float, int]:
    """Reap a child of ours if it is a zombie: (cpu seconds, maxrss KiB), or (0, 0)."""
    try:
        got, _status, usage = os.wait4(pid, os.WNOHANG)
    except ChildProcessError:
        return 0.0, 0
    if got == 0:
        return 0.0, 0
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss
