"""One process tree under the light or cgroup limiter: start it through the launcher, watch the
leader through a pidfd (a fast program is reaped at once, no polling tick), sample the other limits
at growing intervals (10 ms up to 100 ms), kill the whole tree at the first limit it exceeds
(SIGTERM, then SIGKILL after `limits.grace_s`), and classify how it ended (`classify`).

One run at a time, prepared ahead (`one_run_at_a_time`): a worker that runs several instances
concurrently (a Ray actor's run threads) passes one lock for all of them. A run then creates its
cgroup, starts its launcher, which joins the cgroup and sets the rlimits, and lets its sandbox set
itself up (bwrap: `Launch.start_fd`; else the launcher itself waits for ``go``) while the previous
run's program still runs, takes the lock, says ``go``, and holds the lock
until its last process is gone; its post-run work (cgroup removal, certificate check, record)
happens after the lock is released, while the next run's program runs. So a worker's programs
never overlap: each is measured alone, from its ``go``, with the CPU time and memory of exactly
its own tree.
"""

from __future__ import annotations

import math
import os
import resource
import select
import signal as _signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any

from tcsexam.containment import Limiter, SandboxName
from tcsexam.records import Termination
from tcsexam.runner.limiter.cgroup import CgroupTree
from tcsexam.runner.limiter.classify import Ended, classify, outcome_of
from tcsexam.runner.limiter.go import note_go
from tcsexam.runner.limiter.launcher import (
    LauncherArgs,
    env_memfd,
    harness_env,
    launcher_argv,
    launcher_fd,
    make_preexec,
)
from tcsexam.runner.limiter.light import LightTree
from tcsexam.runner.limiter.proctable import active_leaders, active_lock, become_subreaper
from tcsexam.runner.limiter.types import TAIL_BYTES, Launch, LaunchError, MiB, ProcessOutcome, RunSpec
from tcsexam.runner.ownership.owner import run_marker

_gate: ContextVar[threading.Lock | None] = ContextVar("tcsexam_run_gate", default=None)


@contextmanager
def one_run_at_a_time(lock: threading.Lock) -> Iterator[None]:
    """Within this block (in this thread), a run's program starts only while it holds `lock`,
    which it keeps until its last process is gone. Give every thread of a worker the same lock:
    their runs are then prepared concurrently but their programs run one after another."""
    token = _gate.set(lock)
    try:
        yield
    finally:
        _gate.reset(token)


@contextmanager
def whole_run_exclusive() -> Iterator[None]:
    """For runners that cannot prepare a run ahead (docker's containers, BenchExec): hold this
    thread's gate (`one_run_at_a_time`), if any, for the whole run."""
    gate = _gate.get()
    if gate is None:
        yield
        return
    with gate:
        yield


DISK_ENTRIES = 200_000  #: `disk_usage` stops counting after this many entries (then: over any quota)
TOO_MANY = 1 << 40


def disk_text(used: int, limit_mb: int) -> str:
    """What a run over its `disk_mb` is told: the size it reached, or that it made too many files."""
    if used >= TOO_MANY:
        return f"work folder holds over {DISK_ENTRIES} files and folders (disk limit {limit_mb} MB)"
    return f"work folder {used / MiB:.0f} MB over {limit_mb} MB"


def disk_usage(paths, limit_entries: int | None = None) -> int:
    """Bytes allocated under `paths` (each inode once, no symlink followed); stops counting after
    `limit_entries` entries (default `DISK_ENTRIES`: a folder of that many files is over any sane
    quota anyway, and empty files take inodes, not blocks: counted as `TOO_MANY`, 1 TiB)."""
    limit_entries = DISK_ENTRIES if limit_entries is None else limit_entries
    seen: set[tuple[int, int]] = set()
    total, entries = 0, 0
    stack = list(paths)
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    entries += 1
                    if entries > limit_entries:
                        return TOO_MANY
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if (st.st_dev, st.st_ino) not in seen:
                        seen.add((st.st_dev, st.st_ino))
                        total += st.st_blocks * 512
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:
            continue
    return total


SHARED_TMPFS = ("/dev/shm", "/tmp", "/run/lock", "/var/tmp")
_tmpfs_cache: list[str] | None = None


def _tmpfs_folders() -> list[str]:
    """Those of SHARED_TMPFS that are a tmpfs mount here (their files are memory)."""
    global _tmpfs_cache
    if _tmpfs_cache is None:
        try:
            lines = Path("/proc/self/mounts").read_text().splitlines()
        except OSError:
            lines = []
        mounts = {fields[1]: fields[2] for fields in (line.split() for line in lines) if len(fields) > 2}
        _tmpfs_cache = [p for p in SHARED_TMPFS if mounts.get(os.path.realpath(p)) == "tmpfs"]
    return _tmpfs_cache


def tmpfs_held(uid: int) -> int:
    """Bytes of the files `uid` owns at the top of the host's shared tmpfs folders (a folder it
    owns counted whole): memory the light limiter does not see in the tree's RSS."""
    total = 0
    for folder in _tmpfs_folders():
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
                if st.st_uid != uid:
                    continue
                total += st.st_blocks * 512
                if entry.is_dir(follow_symlinks=False):
                    total += disk_usage([entry.path])
            except OSError:
                continue
    return total


def tail(fh: IO[bytes]) -> str:
    try:
        size = os.fstat(fh.fileno()).st_size
        fh.seek(max(0, size - TAIL_BYTES))
        return fh.read(TAIL_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def open_output(path: str | os.PathLike[str] | None) -> IO[bytes]:
    if path is None:
        return tempfile.TemporaryFile()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return open(path, "w+b")


class LimitedProcess:
    def __init__(self, launch: Launch, spec: RunSpec, limiter: Limiter, sandbox_name: SandboxName):
        """`launch` is what the sandbox made of `spec`; `limiter` the resolved one (light|cgroup)."""
        self.launch, self.limits, self.limiter, self.sandbox_name = launch, spec.limits, limiter, sandbox_name
        self.stdout_path, self.stderr_path = spec.paths.stdout_path, spec.paths.stderr_path
        self.output_paths = list(spec.paths.output_paths)
        self.marker = run_marker(id(self))  # the owner's token, never its pid (ownership.owner)
        self.peak_rss = 0.0
        self.peak_pss = 0.0
        self.tree: Any = None
        self.reaper = False  # the leader is the launcher (the run's own subreaper)
        self.gate = _gate.get()  # held from the program's start until its tree is gone
        self.holding = False
        #: where `go` is written: the wrapper's start pipe (bwrap), else the launcher's own
        self.start_fd: int | None = launch.start_fd

    def output_over(self, files: Iterable[tuple[str, IO[bytes]]]) -> str | None:
        cap = self.limits.output_bytes
        for name, fh in files:
            try:
                if os.fstat(fh.fileno()).st_size > cap:
                    return name
            except OSError:
                pass
        for path in self.output_paths:
            try:
                if os.lstat(path).st_size > cap:  # a link is not followed (it is not output)
                    return Path(path).name
            except OSError:
                pass
        return None

    def go(self) -> ProcessOutcome:
        limits = self.limits
        become_subreaper()
        if self.limiter == Limiter.CGROUP:
            try:
                self.tree = CgroupTree(limits)
            except OSError as exc:
                raise LaunchError(f"cannot create the run's cgroup: {exc}", False) from None
        else:
            self.tree = LightTree(limits, self.marker)
        rlimits = [(resource.RLIMIT_FSIZE, limits.output_bytes + 1, limits.output_bytes + 1)]
        if limits.cpu_s:
            soft = int(math.ceil(limits.cpu_s)) + 1
            rlimits.append((resource.RLIMIT_CPU, soft, soft + 1))
        if self.tree.uses_data_rlimit and limits.mem_mb:
            mem = int(limits.mem_mb * MiB)
            rlimits.append((resource.RLIMIT_DATA, mem, mem))
        env = dict(self.launch.env)
        key, _, value = self.marker.partition("=")
        env[key] = value
        out = open_output(self.stdout_path)
        same = self.stderr_path is not None and self.stderr_path == self.stdout_path
        err = out if same else open_output(self.stderr_path)
        files = [("stdout", out)] + ([] if same else [("stderr", err)])
        try:
            return self._start(env, rlimits, out, err, files)
        finally:
            self._release()
            out.close()
            if not same:
                err.close()
            while self.launch.close_after:  # emptied: a second close could hit another thread's fd
                try:
                    os.close(self.launch.close_after.pop())
                except OSError:
                    pass
            self.tree.close()

    def _hold(self) -> None:
        if self.gate is not None and not self.holding:
            self.gate.acquire()
            self.holding = True

    def _release(self) -> None:
        if self.holding and self.gate is not None:  # holding: it has the gate
            self.holding = False
            self.gate.release()

    def _go(self) -> float:
        """Let the run's program start (the gate held); the wall clock starts now. The reading is
        taken before the go is written: the program cannot begin before it (a thread descheduled
        after the write would otherwise start the clock, and the anytime stamps, late)."""
        self._hold()
        t = time.monotonic()
        start_fd = self.start_fd
        if start_fd is not None:
            try:
                os.write(start_fd, b"go\n")
            except OSError:  # the wrapper is gone already: its outcome says why
                pass
        note_go(t)  # an anytime trace's clock (tcsexam.runner.solver.anytime)
        return t

    def _start(self, env, rlimits, out, err, files) -> ProcessOutcome:
        procs_files = self.tree.procs_files
        shim_fd = launcher_fd()
        argv = list(self.launch.argv)
        preexec = None
        errpipe = None
        launcher_start = None  # (read end, write end) of the launcher's own start pipe
        pass_fds = tuple(self.launch.pass_fds)
        uid, gid = self.launch.run_as if self.launch.run_as is not None else (-1, -1)
        popen_env = env  # the fallback (no launcher) starts argv[0] itself with its own environment
        if shim_fd is not None:
            want = {which: (soft, hard) for which, soft, hard in rlimits}
            fsize = want.get(resource.RLIMIT_FSIZE, (-1, -1))[0]
            cpu_soft, cpu_hard = want.get(resource.RLIMIT_CPU, (-1, -1))
            data = want.get(resource.RLIMIT_DATA, (-1, -1))[0]
            errpipe = os.pipe2(os.O_CLOEXEC)
            envfd = env_memfd(env)  # applied by the launcher only at the command's own execve
            self.launch.close_after.append(envfd)
            pass_fds += (errpipe[1], shim_fd, envfd)
            if self.launch.start_fd is None:  # the launcher itself waits for go (a wrapper may instead)
                launcher_start = os.pipe2(os.O_CLOEXEC)
                pass_fds += (launcher_start[0],)
                self.start_fd = launcher_start[1]
                self.launch.close_after.append(launcher_start[1])
            start = launcher_start[0] if launcher_start is not None else -1
            fields = LauncherArgs(
                errfd=errpipe[1],
                start=start,
                fsize=fsize,
                cpu_soft=cpu_soft,
                cpu_hard=cpu_hard,
                data=data,
                self_fd=shim_fd,
                envfd=envfd,
                uid=uid,
                gid=gid,
                nnp=self.launch.no_new_privs,
            )
            argv = launcher_argv(f"/proc/self/fd/{shim_fd}", fields, procs_files=procs_files, command=self.launch.argv)
            popen_env = harness_env()  # the launcher never sees the candidate's environment
            self.reaper = True
        else:
            preexec = make_preexec(rlimits, procs_files, uid, gid)
        ahead = self.start_fd is not None  # the launcher or wrapper sets up now, the program waits for go
        t0 = time.monotonic() if ahead else self._go()
        try:
            # registered as a run's leader before any other thread can see it: a concurrent run's
            # orphan sweep (light limiter) must never take this launcher for its own orphan
            with active_lock:
                proc = subprocess.Popen(
                    argv,
                    cwd=self.launch.cwd,
                    env=popen_env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                    preexec_fn=preexec,
                    close_fds=True,
                    pass_fds=pass_fds,
                )
                active_leaders.add(proc.pid)
        except (OSError, subprocess.SubprocessError) as exc:
            if errpipe is not None:
                os.close(errpipe[0])
            fault = isinstance(exc, (FileNotFoundError, PermissionError)) and exc.filename in (
                None,
                self.launch.argv[0],
            )
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise LaunchError(f"cannot start {self.launch.argv[0]!r}: {detail}", fault) from None
        finally:
            if errpipe is not None:
                os.close(errpipe[1])
            if launcher_start is not None:
                os.close(launcher_start[0])
        try:
            if errpipe is not None and launcher_start is not None:
                # the launcher says "ready" (then waits for go) or why it failed (then exits)
                self._launch_failure(proc, errpipe[0], until=b"ready\n")
                t0 = self._go()
            if errpipe is not None:
                self._launch_failure(proc, errpipe[0])  # end of file once the program is exec'd
        finally:
            if errpipe is not None:
                os.close(errpipe[0])
        self.tree.start(proc.pid)
        try:
            if ahead and launcher_start is None:
                t0 = self._go()
            return self._watch(proc, t0, out, err, files)
        finally:
            with active_lock:
                active_leaders.discard(proc.pid)

    def _launch_failure(self, proc, fd: int, until: bytes | None = None) -> None:
        """Read the launcher's error pipe to end of file (or up to `until`); raise `LaunchError`
        with what it says went wrong (nothing: the launcher got that far)."""
        said = b""
        while not (until and said.endswith(until)) and (chunk := os.read(fd, 4096)):
            said += chunk
        if said and not (until and said.endswith(until)):
            proc.wait()
            with active_lock:
                active_leaders.discard(proc.pid)
            kind, _, what = said.decode("utf-8", "replace").partition(":")
            raise LaunchError(f"cannot start: {what}", kind == "exec")

    def _launcher_finished(self, pid: int) -> bool:
        """The launcher exited on its own (not by a signal): it has killed and reaped every
        process of the run already (a process cannot leave its subtree), no /proc scan needed."""
        if not self.reaper:
            return False
        try:
            info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return False
        return info is not None and info.si_code == os.CLD_EXITED

    def _kill_rest(self, poller) -> bool:
        """SIGKILL whatever is left, while the leader is still unreaped (its session and group stay
        ours); True when something was left. The launcher is spared while anything else lives:
        it is the run's subreaper and kills and reaps its remaining children itself before it
        exits (it is killed too when it has not after about 3 s)."""
        leftovers = False
        if self.reaper and isinstance(self.tree, LightTree):
            self.tree.sweep_orphans()  # the launcher may have been killed by the candidate
        for i in range(2000):
            spare = self.reaper and i < 1500
            if self.tree.kill(_signal.SIGKILL, spare_leader=spare):
                leftovers = True
            elif not spare or poller.poll(0):
                break  # nothing left (a spared leader has exited on its own)
            self.tree.reap_orphans()
            time.sleep(0.002)
        return leftovers

    def _over_limit(self, files, cpu_seen: list[float]) -> tuple[Termination, str] | None:
        """One sample of the tree against the limits: (the limit it is over, what it says) or None.
        `cpu_seen` holds the largest CPU time sampled so far (updated)."""
        limits, tree = self.limits, self.tree
        cpu, rss, nthreads = tree.sample()
        cpu_seen[0] = max(cpu_seen[0], cpu)
        if not self.peak_pss:
            self.peak_rss = max(self.peak_rss, rss)
        if limits.cpu_s and cpu > limits.cpu_s:
            return Termination.CPUTIME, f"CPU time {cpu:.2f} s over {limits.cpu_s:g} s"
        if tree.oom_killed():
            return Termination.MEMORY, f"memory limit {limits.mem_mb} MB (OOM kill)"
        if limits.nproc and nthreads > limits.nproc:
            return Termination.NPROC, f"{nthreads} processes/threads over {limits.nproc}"
        if limits.mem_mb and rss > limits.mem_mb:
            # RSS counts pages shared after fork() once per process: decide on PSS
            pss = tree.pss_mb()
            self.peak_rss = max(self.peak_pss, pss)
            self.peak_pss = self.peak_rss
            if pss > limits.mem_mb:
                return Termination.MEMORY, f"tree memory {pss:.0f} MB over {limits.mem_mb} MB"
        if limits.mem_mb and self.launch.tmpfs_owner is not None and self.limiter != Limiter.CGROUP:
            held = tmpfs_held(self.launch.tmpfs_owner) / MiB  # files in /dev/shm are memory too
            if held and rss + held > limits.mem_mb:
                pss = tree.pss_mb()
                if pss + held > limits.mem_mb:
                    return Termination.MEMORY, (
                        f"tree memory {pss:.0f} MB + {held:.0f} MB of files in shared memory (/dev/shm) "
                        f"over {limits.mem_mb} MB"
                    )
        over = self.output_over(files)
        if over:
            return Termination.OUTPUT, f"{over} over {limits.output_bytes} bytes"
        if limits.disk_mb and self.launch.disk_paths:
            used = disk_usage(self.launch.disk_paths)
            if used > limits.disk_mb * MiB:
                return Termination.DISK, disk_text(used, limits.disk_mb)
        return None

    def _wait(self, poller, t0: float, files, cpu_seen: list[float]) -> tuple[Termination | None, str]:
        """Wait for the leader's exit, sampling the tree (every 10 ms, backing off to 100 ms):
        (None, "") when it exited, else the limit it went over first."""
        deadline = t0 + self.limits.wall_s
        interval = 0.01
        next_sample = t0 + interval
        while True:
            now = time.monotonic()
            wait = max(0.0, min(deadline, next_sample) - now)
            if poller.poll(wait * 1000.0):
                return None, ""  # the leader exited
            now = time.monotonic()
            if now >= deadline:
                return Termination.WALLTIME, ""
            if now < next_sample:
                continue
            interval = min(interval * 2, 0.1)
            next_sample = now + interval
            over = self._over_limit(files, cpu_seen)
            if over is not None:
                return over

    def _end(self, proc, poller, killed: bool):
        """Kill what is left of the run (SIGTERM to all and the grace first when `killed`), reap
        the leader; its (wait status, rusage)."""
        tree = self.tree
        if killed:
            tree.kill(_signal.SIGTERM)
            grace_end = time.monotonic() + self.limits.grace_s
            while time.monotonic() < grace_end:
                if not tree.pids():
                    break
                poller.poll(10)
        leftovers = False if (not killed and self._launcher_finished(proc.pid)) else self._kill_rest(poller)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        tree.leader_reaped()
        tree.reap_orphans()
        if isinstance(tree, LightTree) and (leftovers or len(tree.known) > 1):
            for _ in range(200):  # a last sweep (orphans re-parented to us while we killed)
                if not tree.kill(_signal.SIGKILL):
                    break
                time.sleep(0.002)
                tree.reap_orphans()
        self._release()  # nothing of this run is left: the next run's program may start
        return status, usage

    def _watch(self, proc, t0, out, err, files) -> ProcessOutcome:
        limits, tree = self.limits, self.tree
        pidfd = os.pidfd_open(proc.pid)
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        cpu_seen = [0.0]
        try:
            enforced, detail = self._wait(poller, t0, files, cpu_seen)
            end = time.monotonic()
            killed = enforced is not None
            status, usage = self._end(proc, poller, killed)
        finally:
            os.close(pidfd)
        wall = end - t0
        cpu_total, peak = tree.totals(usage, cpu_seen[0], self.peak_rss)
        stdout_tail, stderr_tail = tail(out), tail(err) if err is not out else ""
        ended = Ended(
            exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            wall_s=wall,
            cpu_s=cpu_total,
            enforced=enforced,
            enforced_detail=detail,
            oom_killed=tree.oom_killed(),
            output_over=None if killed else self.output_over(files),
            stderr_tail=stderr_tail,
            allocation_failures_mean_memory=tree.allocation_failures_mean_memory,
            nproc_hit=tree.nproc_hit(),
            signal_from_exit_code=self.launch.signal_from_exit_code,
        )
        verdict = classify(limits, ended)
        outcome = outcome_of(
            verdict,
            wall_s=round(wall, 6),
            cpu_s=round(cpu_total, 6),
            peak_mem_mb=round(peak, 3),
            stdout_tail=stdout_tail,
            stderr_tail=stderr_tail,
            limiter=tree.name,
            sandbox=self.sandbox_name,
            killed_by_harness=killed,
        )
        if self.launch.after is not None:
            self.launch.after(outcome)
        return outcome
