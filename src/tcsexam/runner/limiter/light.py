"""The ``light`` limiter (no cgroups, for HPC nodes without delegation): rlimits (RLIMIT_CPU as a
per-process backstop, RLIMIT_DATA = the memory limit, RLIMIT_FSIZE = the output cap, applied by
the launcher), and the run's tree tracked through /proc while its RSS and CPU are sampled to
enforce tree-wide memory, CPU and process-count limits.

Membership does not rely on the environment: the launcher is the run's child subreaper, so every
process of the run, orphans included (setsid, double fork, an emptied environment), stays a
descendant of the run's leader until the launcher has killed it. Also counted: the leader's
session and process group, every process seen in the tree before (pid and start time), and,
where no launcher could be built, orphans re-parented to the harness (itself a subreaper) that
carry the run's environment marker.
"""

from __future__ import annotations

import os
from typing import Any

from tcsexam.containment import Limiter
from tcsexam.runner.limiter.proctable import (
    CLK_TCK,
    PAGE,
    Proc,
    active_leaders,
    active_lock,
    has_marker,
    process_table,
    read_stat,
    reap,
)
from tcsexam.runner.limiter.types import Limits, MiB


class LightTree:
    """The run's processes as the light limiter sees them (see the module doc)."""

    name = Limiter.LIGHT
    allocation_failures_mean_memory = True
    uses_data_rlimit = True
    procs_files: list[str] = []

    def __init__(self, limits: Limits, marker: str):
        self.limits = limits
        self.marker = marker.encode()
        self.me = os.getpid()
        self.pid = -1
        self.known: dict[int, int] = {}  # pid -> start time, every process seen in the tree
        self.extra_cpu = 0.0  # CPU of orphans we reaped ourselves
        self.extra_maxrss_kb = 0
        self._leader_reaped = False
        self.my_sid = os.getsid(0)
        self.leader_start = 0
        #: also count orphans re-parented to the harness itself (see `sweep_orphans`)
        self.orphans_too = False

    def start(self, leader: int) -> None:
        self.pid = leader
        self.known[leader] = -1
        stat = read_stat(leader)
        self.leader_start = stat.start if stat is not None else 0

    def sweep_orphans(self) -> None:
        """From now on, count as the run's every process re-parented to the harness (a child of
        ours that is no run's leader, started after this run's leader, in a session other than
        ours): what is left when a candidate killed its launcher. The harness starts nothing else
        in another session while a run is on."""
        self.orphans_too = True

    def members(self, table: dict[int, Proc]) -> list[Proc]:
        children: dict[int, list[int]] = {}
        for p in table.values():
            children.setdefault(p.ppid, []).append(p.pid)
        with active_lock:
            others = active_leaders - {self.pid}
        seeds = []
        for p in table.values():
            if p.pid == self.me or p.pid in others:
                continue
            ours = not self._leader_reaped and (p.pid == self.pid or p.sid == self.pid or p.pgrp == self.pid)
            orphan = self.orphans_too and p.ppid == self.me and p.sid != self.my_sid and p.start >= self.leader_start
            if (
                ours
                or orphan
                or self.known.get(p.pid) == p.start
                or (p.ppid == self.me and has_marker(p.pid, self.marker))
            ):
                seeds.append(p.pid)
        seen, stack = set(), seeds
        while stack:
            pid = stack.pop()
            if pid in seen or pid == self.me or pid in others:
                continue
            seen.add(pid)
            stack.extend(children.get(pid, ()))
        found = [table[pid] for pid in seen]
        for p in found:
            self.known[p.pid] = p.start
        return found

    def pids(self) -> list[int]:
        return [p.pid for p in self.members(process_table()) if p.state != "Z"]

    def kill(self, sig: int, *, spare_leader: bool = False) -> list[int]:
        """Signal every live process of the run; `spare_leader` leaves the launcher (the run's
        subreaper) alive so that orphans keep re-parenting to it, not to us."""
        pids = [pid for pid in self.pids() if not (spare_leader and pid == self.pid)]
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if not self._leader_reaped and not spare_leader:
            try:
                os.killpg(self.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        return pids

    def reap_orphans(self) -> None:
        """Reap zombies of the run that re-parented to us (subreaper), adding their CPU."""
        with active_lock:
            others = set(active_leaders)
        for pid in list(self.known):
            if pid == self.pid or pid in others:
                continue
            p = read_stat(pid)
            if p is None or p.state != "Z" or p.ppid != self.me:
                continue
            cpu, rss = reap(pid)
            self.extra_cpu += cpu
            self.extra_maxrss_kb = max(self.extra_maxrss_kb, rss)

    def sample(self) -> tuple[float, float, int]:
        """(tree cpu seconds so far, tree rss MiB, processes and threads) of the live tree."""
        procs = self.members(process_table())
        cpu = sum(p.cpu_ticks for p in procs) / CLK_TCK + self.extra_cpu
        rss = sum(p.rss_pages for p in procs if p.state != "Z") * PAGE / MiB
        nthreads = 0
        for p in procs:
            try:
                nthreads += len(os.listdir(f"/proc/{p.pid}/task"))
            except OSError:
                pass
        return cpu, rss, nthreads

    def pss_mb(self) -> float:
        """The tree's proportional set size (pages shared after fork() counted once)."""
        total_kb = 0
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
                    for line in fh:
                        if line.startswith(b"Pss:"):
                            total_kb += int(line.split()[1])
                            break
            except (OSError, ValueError, IndexError):
                pass
        return total_kb / 1024.0

    def oom_killed(self) -> bool:
        return False

    def nproc_hit(self) -> bool:
        return False

    def leader_reaped(self) -> None:
        self._leader_reaped = True

    def totals(self, usage: Any, cpu_seen: float, peak_rss: float) -> tuple[float, float]:
        """(CPU seconds, peak memory MB) of the whole run."""
        cpu = max(usage.ru_utime + usage.ru_stime + self.extra_cpu, cpu_seen)
        peak = max(peak_rss, max(usage.ru_maxrss, self.extra_maxrss_kb) / 1024.0)
        return cpu, peak

    def close(self) -> None:
        return None
