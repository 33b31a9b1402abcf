"""One process tree under fixed limits: wall clock, CPU time, memory, output size, process count.

`run_limited(argv, cwd=..., limits=..., sandbox=...)` starts `argv` (wrapped by the sandbox) in its
own session and process group, watches it, kills the whole tree at the first limit it exceeds
(SIGTERM, then SIGKILL after `limits.grace_s`) and returns a `ProcessOutcome`. No process of the
run is left behind, including descendants that escaped with `setsid`.

Limiters (`Limits.limiter`; the one that ran is `ProcessOutcome.limiter`):

- ``cgroup`` (cgroups v1 memory/pids/cpuacct/freezer, or v2 when its controllers are delegated):
  exact memory limit (the kernel's OOM killer; `memory.oom_control` counts the kill), exact peak
  (`max_usage_in_bytes`, page cache included), `pids.max` for the process count (a fork bomb's
  `fork()` fails), exact CPU of the whole tree (`cpuacct.usage`), and a whole-tree kill (freeze,
  SIGKILL every pid in `cgroup.procs`, thaw).
- ``light`` (no cgroups, for HPC nodes without delegation): rlimits (RLIMIT_CPU as a per-process
  backstop, RLIMIT_DATA = the memory limit, RLIMIT_FSIZE = the output cap), the harness is a child
  subreaper (orphans re-parent to it), and the tree is tracked through /proc (descendants, same
  session or group, or carrying the run's marker in their environment) while its RSS and CPU are
  sampled to enforce tree-wide memory, CPU and process-count limits.
- ``benchexec``: BenchExec's RunExecutor (cgroups; ~140 ms per run) for users who want its
  guarantees.
- ``auto`` (default): ``cgroup`` when this machine lets us create cgroups, else ``light``.

The leader is watched through a pidfd, so a fast program is reaped at once (no polling tick);
limits other than the wall clock are sampled at growing intervals (10 ms up to 100 ms).

Termination (`ProcessOutcome.termination`): ``exit`` (ended on its own), ``walltime``, ``cputime``,
``memory``, ``output`` (stdout, stderr or a watched file such as the certificate grew past
`output_bytes`), ``nproc`` (the light limiter saw more than `nproc` processes), ``signal`` (killed
by a signal the harness did not send). Memory rule: ``memory`` when the cgroup's OOM killer fired,
when the sampled tree RSS went over the limit, or (light limiter, where RLIMIT_DATA makes
allocations fail instead) when the program ended abnormally with an allocation-failure message in
its stderr (MemoryError, std::bad_alloc, "Cannot allocate memory", "out of memory").
"""

from __future__ import annotations

import ctypes
import itertools
import math
import os
import re
import resource
import select
import signal as _signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tcsexam.errors import InputError

MiB = 1 << 20
TERMINATIONS = ("exit", "walltime", "cputime", "memory", "output", "nproc", "signal")
LIMITERS = ("auto", "light", "cgroup", "benchexec")
TAIL_BYTES = 4096

_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")
_MEM_SIGNS = re.compile(rb"MemoryError|bad_alloc|Cannot allocate memory|[Oo]ut of memory|failed to allocate")


@dataclass(frozen=True)
class Limits:
    """Per-run limits. `cpu_s` counts children; `output_bytes` caps stdout, stderr and each
    watched file (the certificate); `nproc` caps the processes/threads alive at once."""

    wall_s: float
    cpu_s: float | None = None
    mem_mb: int | None = None
    output_bytes: int = 64 * MiB
    nproc: int | None = None
    grace_s: float = 0.5
    limiter: str = "auto"

    def __post_init__(self) -> None:
        if not (isinstance(self.wall_s, (int, float)) and self.wall_s > 0):
            raise InputError(f"limits: wall_s must be a positive number, not {self.wall_s!r}")
        for name in ("cpu_s", "mem_mb", "nproc"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and value > 0):
                raise InputError(f"limits: {name} must be a positive number or None, not {value!r}")
        if not (isinstance(self.output_bytes, int) and self.output_bytes > 0):
            raise InputError("limits: output_bytes must be a positive integer")
        if self.grace_s < 0:
            raise InputError("limits: grace_s must not be negative")
        if self.limiter not in LIMITERS:
            raise InputError(f"limits: limiter must be one of {LIMITERS}, not {self.limiter!r}")

    @classmethod
    def from_task(cls, task_limits: Any, threads: int = 1, *, limiter: str = "auto", grace_s: float = 0.5) -> Limits:
        """The run limits of a task (`tcsexam.tasks.TaskLimits`) for a candidate using `threads`:
        CPU seconds default to wall_s * threads."""
        threads = max(1, int(threads))
        cpu = task_limits.cpu_s if task_limits.cpu_s is not None else task_limits.wall_s * threads
        return cls(
            wall_s=float(task_limits.wall_s),
            cpu_s=float(cpu),
            mem_mb=int(task_limits.mem_mb) if task_limits.mem_mb else None,
            output_bytes=int(task_limits.output_mb * MiB),
            nproc=int(task_limits.nproc) if task_limits.nproc else None,
            grace_s=grace_s,
            limiter=limiter,
        )

    def as_dict(self) -> dict[str, Any]:
        """The limits that define a run (for record keys); the limiter choice is not one."""
        return {
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s,
            "mem_mb": self.mem_mb,
            "output_bytes": self.output_bytes,
            "nproc": self.nproc,
        }


#: limits for a candidate's optional build step (compilers need more than an instance's limits)
BUILD_LIMITS = Limits(wall_s=600.0, cpu_s=1200.0, mem_mb=4096, output_bytes=64 * MiB, nproc=512)


@dataclass
class ProcessOutcome:
    exit_code: int | None
    signal: int | None
    termination: str
    wall_s: float
    cpu_s: float | None
    peak_mem_mb: float | None
    stdout_tail: str
    stderr_tail: str
    limiter: str
    sandbox: str
    killed_by_harness: bool
    message: str = ""
    #: set when the sandbox itself failed to start (an infrastructure failure, not the program's)
    sandbox_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class LaunchError(Exception):
    """The program could not be started. `candidate_fault`: its executable is missing or not
    executable (the submission's fault); otherwise the harness failed."""

    def __init__(self, message: str, candidate_fault: bool):
        super().__init__(message)
        self.candidate_fault = candidate_fault


@dataclass
class Launch:
    """What a sandbox hands the limiter: the final argv/cwd/env, fds to pass, and a hook that
    inspects the finished run (e.g. bwrap's status fd) and may set `sandbox_error`."""

    argv: list[str]
    cwd: str
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    after: Callable[[ProcessOutcome], None] | None = None
    close_after: list[int] = field(default_factory=list)


def run_limited(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike,
    limits: Limits,
    sandbox: Any = "local",
    env: Mapping[str, str] | None = None,
    stdout_path: str | os.PathLike | None = None,
    stderr_path: str | os.PathLike | None = None,
    readonly_paths: Iterable[str | os.PathLike] = (),
    writable_paths: Iterable[str | os.PathLike] = (),
    output_paths: Iterable[str | os.PathLike] = (),
) -> ProcessOutcome:
    """Run `argv` inside `sandbox` (a name or a Sandbox) under `limits`; see the module doc.

    `output_paths` are extra files capped at `limits.output_bytes` (the certificate). Raises
    `LaunchError` when the program cannot be started; never leaves a process behind."""
    from tcsexam.runner.sandboxes import get_sandbox

    box = get_sandbox(sandbox) if isinstance(sandbox, str) else sandbox
    return box.run(
        list(argv),
        cwd=str(cwd),
        limits=limits,
        env=dict(os.environ if env is None else env),
        stdout_path=stdout_path,
        stderr_path=stderr_path,
        readonly_paths=[str(p) for p in readonly_paths],
        writable_paths=[str(p) for p in writable_paths],
        output_paths=[str(p) for p in output_paths],
    )


# ----------------------------------------------------------------------------------------------
# process table helpers (/proc, no psutil on the hot path)


@dataclass
class _Proc:
    pid: int
    ppid: int
    pgrp: int
    sid: int
    state: str
    cpu_ticks: int  # utime + stime + cutime + cstime
    rss_pages: int
    start: int


def _read_stat(pid: int) -> _Proc | None:
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
        return _Proc(
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


def _process_table() -> dict[int, _Proc]:
    table = {}
    for name in os.listdir("/proc"):
        if name[0] in "123456789":
            proc = _read_stat(int(name))
            if proc is not None:
                table[proc.pid] = proc
    return table


def _live(pids: Iterable[int]) -> list[int]:
    """The pids that are still running (not zombies, not gone)."""
    out = []
    for pid in pids:
        p = _read_stat(pid)
        if p is not None and p.state != "Z":
            out.append(pid)
    return out


def _has_marker(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return marker in fh.read()
    except OSError:
        return False


_subreaper_lock = threading.Lock()
_subreaper_done = False


def _become_subreaper() -> bool:
    """PR_SET_CHILD_SUBREAPER: orphans of our runs re-parent to this process, not to init."""
    global _subreaper_done
    with _subreaper_lock:
        if not _subreaper_done:
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper_done = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
            except OSError:
                _subreaper_done = False
        return _subreaper_done


_active_lock = threading.Lock()
_active_leaders: set[int] = set()


def _reap(pid: int) -> tuple[float, int]:
    """Reap a child of ours if it is a zombie: (cpu seconds, maxrss KiB), or (0, 0)."""
    try:
        got, _status, usage = os.wait4(pid, os.WNOHANG)
    except ChildProcessError:
        return 0.0, 0
    if got == 0:
        return 0.0, 0
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


# ----------------------------------------------------------------------------------------------
# cgroups


def _cgroup_mounts() -> dict[str, str]:
    """controller -> mount point of the v1 hierarchies; 'unified' -> the v2 mount."""
    mounts: dict[str, str] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return mounts
    for line in lines:
        left, _, right = line.partition(" - ")
        parts, rparts = left.split(), right.split()
        if len(parts) < 5 or len(rparts) < 3:
            continue
        if rparts[0] == "cgroup":
            for opt in rparts[2].split(","):
                mounts.setdefault(opt, parts[4])
        elif rparts[0] == "cgroup2":
            mounts.setdefault("unified", parts[4])
    return mounts


def _own_cgroups() -> dict[str, str]:
    """controller -> this process's cgroup path (v1); '' -> the v2 path."""
    own: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            own[c] = path
    return own


class _CgroupV1:
    CONTROLLERS = ("memory", "pids", "cpuacct", "freezer")
    _counter = itertools.count()

    def __init__(self, limits: Limits):
        mounts, own = _cgroup_mounts(), _own_cgroups()
        name = f"tcsexam-{os.getpid()}-{next(self._counter)}-{time.monotonic_ns() % 10**9}"
        self.dirs: dict[str, Path] = {}
        try:
            for c in self.CONTROLLERS:
                d = Path(mounts[c]) / own[c].lstrip("/") / name
                d.mkdir()
                self.dirs[c] = d
            mem = self.dirs["memory"]
            if limits.mem_mb:
                (mem / "memory.limit_in_bytes").write_text(str(int(limits.mem_mb * MiB)))
                try:  # no swap either, where swap accounting exists
                    (mem / "memory.memsw.limit_in_bytes").write_text(str(int(limits.mem_mb * MiB)))
                except OSError:
                    pass
            if limits.nproc:
                (self.dirs["pids"] / "pids.max").write_text(str(int(limits.nproc)))
        except BaseException:
            self.remove()
            raise
        self.procs_files = [str(d / "cgroup.procs") for d in self.dirs.values()]

    def pids(self) -> list[int]:
        try:
            text = (self.dirs["pids"] / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(x) for x in text.split()]

    def cpu_s(self) -> float:
        return int((self.dirs["cpuacct"] / "cpuacct.usage").read_text()) / 1e9

    def peak_mb(self) -> float:
        return int((self.dirs["memory"] / "memory.max_usage_in_bytes").read_text()) / MiB

    def oom_killed(self) -> bool:
        try:
            for line in (self.dirs["memory"] / "memory.oom_control").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
        except OSError:
            pass
        return False

    def nproc_hit(self) -> bool:
        try:
            events = (self.dirs["pids"] / "pids.events").read_text().split()
            return len(events) >= 2 and int(events[1]) > 0
        except (OSError, ValueError):
            return False

    def kill_all(self, sig: int) -> list[int]:
        """Freeze, signal every process in the cgroup, thaw; returns the pids signalled."""
        freezer = self.dirs["freezer"] / "freezer.state"
        frozen = sig == _signal.SIGKILL
        if frozen:
            try:
                freezer.write_text("FROZEN")
            except OSError:
                frozen = False
        pids = self.pids()
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if frozen:
            freezer.write_text("THAWED")
        return pids

    def remove(self) -> None:
        for d in self.dirs.values():
            for _ in range(200):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.005)


class _CgroupV2:
    """A child of this process's cgroup in the unified hierarchy; usable only where the memory,
    pids and cpu controllers are already enabled for our subtree (delegation)."""

    _counter = itertools.count()

    def __init__(self, limits: Limits):
        mounts, own = _cgroup_mounts(), _own_cgroups()
        base = Path(mounts["unified"]) / own[""].lstrip("/")
        enabled = (base / "cgroup.subtree_control").read_text().split()
        if not {"memory", "pids", "cpu"} <= set(enabled):
            raise OSError("cgroup v2 controllers memory, pids, cpu are not delegated here")
        self.dir = base / f"tcsexam-{os.getpid()}-{next(self._counter)}"
        self.dir.mkdir()
        try:
            if limits.mem_mb:
                (self.dir / "memory.max").write_text(str(int(limits.mem_mb * MiB)))
                (self.dir / "memory.swap.max").write_text("0")
            if limits.nproc:
                (self.dir / "pids.max").write_text(str(int(limits.nproc)))
        except BaseException:
            self.remove()
            raise
        self.procs_files = [str(self.dir / "cgroup.procs")]

    def pids(self) -> list[int]:
        try:
            return [int(x) for x in (self.dir / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def _kv(self, name: str) -> dict[str, int]:
        out = {}
        for line in (self.dir / name).read_text().splitlines():
            k, _, v = line.partition(" ")
            out[k] = int(v)
        return out

    def cpu_s(self) -> float:
        return self._kv("cpu.stat").get("usage_usec", 0) / 1e6

    def peak_mb(self) -> float:
        try:
            return int((self.dir / "memory.peak").read_text()) / MiB
        except OSError:
            return int((self.dir / "memory.current").read_text()) / MiB

    def oom_killed(self) -> bool:
        return self._kv("memory.events").get("oom_kill", 0) > 0

    def nproc_hit(self) -> bool:
        return self._kv("pids.events").get("max", 0) > 0

    def kill_all(self, sig: int) -> list[int]:
        pids = self.pids()
        if sig == _signal.SIGKILL and (self.dir / "cgroup.kill").exists():
            (self.dir / "cgroup.kill").write_text("1")
            return pids
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        return pids

    def remove(self) -> None:
        for _ in range(200):
            try:
                self.dir.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.005)


_cgroup_kind: str | None | bool = False  # False: not probed yet
_cgroup_probe_error = ""


def cgroup_support() -> str | None:
    """'v1' or 'v2' when this process can create limiting cgroups, else None (probed once)."""
    global _cgroup_kind, _cgroup_probe_error
    if _cgroup_kind is False:
        probe = Limits(wall_s=1, mem_mb=64, nproc=8)
        _cgroup_kind = None
        for kind, cls in (("v1", _CgroupV1), ("v2", _CgroupV2)):
            try:
                cls(probe).remove()
                _cgroup_kind = kind
                break
            except (OSError, KeyError, ValueError) as exc:
                _cgroup_probe_error += f"{kind}: {exc}; "
    return _cgroup_kind  # type: ignore[return-value]


def resolve_limiter(name: str) -> str:
    """The limiter that `name` selects here; InputError when an explicit one cannot run."""
    if name == "auto":
        return "cgroup" if cgroup_support() else "light"
    if name == "cgroup" and not cgroup_support():
        raise InputError(f"limiter cgroup: cannot create cgroups here ({_cgroup_probe_error.strip()})")
    if name == "benchexec":
        try:
            import benchexec.runexecutor  # noqa: F401
        except ImportError:
            raise InputError("limiter benchexec: BenchExec is not installed (pip install benchexec)") from None
    return name


# ----------------------------------------------------------------------------------------------
# the run


def _tail(fh) -> str:
    try:
        size = os.fstat(fh.fileno()).st_size
        fh.seek(max(0, size - TAIL_BYTES))
        return fh.read(TAIL_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def _open_output(path) -> Any:
    if path is None:
        import tempfile

        return tempfile.TemporaryFile()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return open(path, "w+b")


_LAUNCHER_C = r"""
/* tcsexam launcher: join cgroups, set rlimits, reset SIGPIPE, exec. argv:
   launcher ERRFD FSIZE CPU_SOFT CPU_HARD DATA NFILES FILE... -- COMMAND ARGS  (-1: unlimited).
   Failures are written to ERRFD (close-on-exec, so the harness reads EOF once exec succeeded). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
static int errfd = 2;
static void fail(const char *kind, const char *what) {
  dprintf(errfd, "%s:%s: %s", kind, what, strerror(errno));
  _exit(126);
}
static void lim(int which, long long soft, long long hard, const char *name) {
  if (soft < 0) return;
  struct rlimit r = {(rlim_t)soft, (rlim_t)hard};
  if (setrlimit(which, &r) != 0) fail("harness", name);
}
int main(int argc, char **argv) {
  if (argc < 9) { fputs("tcsexam-launch: bad arguments\n", stderr); return 126; }
  errfd = atoi(argv[1]);
  fcntl(errfd, F_SETFD, FD_CLOEXEC);
  long long fsize = atoll(argv[2]), cs = atoll(argv[3]), ch = atoll(argv[4]), data = atoll(argv[5]);
  int n = atoi(argv[6]), i;
  char pid[32];
  int len = snprintf(pid, sizeof pid, "%d", (int)getpid());
  for (i = 0; i < n; i++) {
    int fd = open(argv[7 + i], O_WRONLY);
    if (fd < 0 || write(fd, pid, len) != len) fail("harness", argv[7 + i]);
    close(fd);
  }
  if (7 + n >= argc || strcmp(argv[7 + n], "--") != 0) { errno = EINVAL; fail("harness", "--"); }
  lim(RLIMIT_FSIZE, fsize, fsize, "RLIMIT_FSIZE");
  lim(RLIMIT_CPU, cs, ch, "RLIMIT_CPU");
  lim(RLIMIT_DATA, data, data, "RLIMIT_DATA");
  signal(SIGPIPE, SIG_DFL);
  signal(SIGXFSZ, SIG_DFL);
  execvp(argv[8 + n], argv + 8 + n);
  fail("exec", argv[8 + n]);
  return 126;
}
"""
_launcher_lock = threading.Lock()
_launcher_path: str | None | bool = False


def launcher() -> str | None:
    """A tiny compiled exec shim (cached under $TCSEXAM_CACHE or ~/.cache/tcsexam) that applies
    the rlimits and joins the cgroups before exec: it keeps `subprocess` on its fast vfork path
    (a Python `preexec_fn` forces a full fork, ~2 ms more per run). None where no C compiler is
    found: the limiter then uses a `preexec_fn`. TCSEXAM_LAUNCHER=0 disables it."""
    global _launcher_path
    with _launcher_lock:
        if _launcher_path is not False:
            return _launcher_path  # type: ignore[return-value]
        _launcher_path = None
        if os.environ.get("TCSEXAM_LAUNCHER", "1") == "0":
            return None
        import hashlib
        import shutil
        import tempfile

        cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
        digest = hashlib.sha256(_LAUNCHER_C.encode()).hexdigest()[:16]
        cache = Path(os.environ.get("TCSEXAM_CACHE") or Path.home() / ".cache" / "tcsexam")
        target = cache / f"launch-{digest}"
        if os.access(target, os.X_OK):
            _launcher_path = str(target)
            return _launcher_path
        if cc is None:
            return None
        try:
            cache.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=cache) as tmp:
                src = Path(tmp) / "launch.c"
                src.write_text(_LAUNCHER_C)
                out = Path(tmp) / "launch"
                for extra in (["-static"], []):
                    done = subprocess.run(
                        [cc, "-O2", *extra, "-o", str(out), str(src)],
                        capture_output=True,
                        timeout=120,
                    )
                    if done.returncode == 0:
                        os.replace(out, target)
                        _launcher_path = str(target)
                        break
        except (OSError, subprocess.SubprocessError):
            _launcher_path = None
        return _launcher_path  # type: ignore[return-value]


def _make_preexec(rlimits: list[tuple[int, int, int]], procs_files: list[str]):
    def preexec() -> None:  # runs in the child between fork and exec: no locks, no allocation
        pid = str(os.getpid()).encode()
        for path in procs_files:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)
        for which, soft, hard in rlimits:
            resource.setrlimit(which, (soft, hard))
        _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)

    return preexec


def execute_limited(
    launch: Launch,
    limits: Limits,
    *,
    sandbox_name: str,
    stdout_path=None,
    stderr_path=None,
    output_paths: Sequence[str] = (),
) -> ProcessOutcome:
    """Start `launch` under `limits` with the chosen limiter and watch it to the end."""
    limiter = resolve_limiter(limits.limiter)
    if limiter == "benchexec":
        return _run_benchexec(launch, limits, sandbox_name, stdout_path, stderr_path, output_paths)
    return _Run(launch, limits, limiter, sandbox_name, stdout_path, stderr_path, output_paths).go()


class _Run:
    def __init__(self, launch, limits, limiter, sandbox_name, stdout_path, stderr_path, output_paths):
        self.launch, self.limits, self.limiter, self.sandbox_name = launch, limits, limiter, sandbox_name
        self.stdout_path, self.stderr_path = stdout_path, stderr_path
        self.output_paths = list(output_paths)
        self.marker = f"TCSEXAM_RUN_MARKER={os.getpid()}-{time.monotonic_ns()}-{id(self)}"
        self.me = os.getpid()
        self.known: dict[int, int] = {}  # pid -> start time, every process seen in the tree
        self.extra_cpu = 0.0  # CPU of orphans we reaped ourselves
        self.extra_maxrss_kb = 0
        self.peak_rss = 0.0
        self.peak_pss = 0.0
        self.cgroup = None
        self.leader_reaped = False

    # -- membership (light limiter)
    def members(self, table: dict[int, _Proc]) -> list[_Proc]:
        children: dict[int, list[int]] = {}
        for p in table.values():
            children.setdefault(p.ppid, []).append(p.pid)
        with _active_lock:
            others = _active_leaders - {self.pid}
        marker = self.marker.encode()
        seeds = []
        for p in table.values():
            if p.pid == self.me or p.pid in others:
                continue
            ours = not self.leader_reaped and (p.pid == self.pid or p.sid == self.pid or p.pgrp == self.pid)
            if ours or self.known.get(p.pid) == p.start or (p.ppid == self.me and _has_marker(p.pid, marker)):
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

    def tree_pids(self) -> list[int]:
        if self.cgroup is not None:
            return _live(self.cgroup.pids())
        return [p.pid for p in self.members(_process_table()) if p.state != "Z"]

    def signal_tree(self, sig: int) -> list[int]:
        if self.cgroup is not None:
            pids = _live(self.cgroup.kill_all(sig))
            for pid in pids:
                self.known.setdefault(pid, -1)
        else:
            pids = self.tree_pids()
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
        if not self.leader_reaped:
            try:
                os.killpg(self.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        return pids

    def reap_orphans(self) -> None:
        """Reap zombies of the run that re-parented to us (subreaper), adding their CPU."""
        with _active_lock:
            others = set(_active_leaders)
        for pid in list(self.known):
            if pid == self.pid or pid in others:
                continue
            p = _read_stat(pid)
            if p is None or p.state != "Z" or p.ppid != self.me:
                continue
            cpu, rss = _reap(pid)
            self.extra_cpu += cpu
            self.extra_maxrss_kb = max(self.extra_maxrss_kb, rss)

    def sample(self) -> tuple[float, float, int]:
        """(tree cpu seconds so far, tree rss MiB, processes) of the live tree."""
        if self.cgroup is not None:
            return self.cgroup.cpu_s(), 0.0, 0
        procs = self.members(_process_table())
        cpu = sum(p.cpu_ticks for p in procs) / _CLK_TCK + self.extra_cpu
        rss = sum(p.rss_pages for p in procs if p.state != "Z") * _PAGE / MiB
        nthreads = 0
        for p in procs:
            try:
                nthreads += len(os.listdir(f"/proc/{p.pid}/task"))
            except OSError:
                pass
        return cpu, rss, nthreads

    def tree_pss_mb(self) -> float:
        total_kb = 0
        for pid in self.tree_pids():
            try:
                with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
                    for line in fh:
                        if line.startswith(b"Pss:"):
                            total_kb += int(line.split()[1])
                            break
            except (OSError, ValueError, IndexError):
                pass
        return total_kb / 1024.0

    def output_over(self, files) -> str | None:
        cap = self.limits.output_bytes
        for name, fh in files:
            try:
                if os.fstat(fh.fileno()).st_size > cap:
                    return name
            except OSError:
                pass
        for path in self.output_paths:
            try:
                if os.stat(path).st_size > cap:
                    return Path(path).name
            except OSError:
                pass
        return None

    def go(self) -> ProcessOutcome:
        limits = self.limits
        _become_subreaper()
        rlimits = [(resource.RLIMIT_FSIZE, limits.output_bytes + 1, limits.output_bytes + 1)]
        if limits.cpu_s:
            soft = int(math.ceil(limits.cpu_s)) + 1
            rlimits.append((resource.RLIMIT_CPU, soft, soft + 1))
        if self.limiter == "light" and limits.mem_mb:
            mem = int(limits.mem_mb * MiB)
            rlimits.append((resource.RLIMIT_DATA, mem, mem))
        env = dict(self.launch.env)
        key, _, value = self.marker.partition("=")
        env[key] = value
        if self.limiter == "cgroup":
            try:
                self.cgroup = _CgroupV1(limits) if cgroup_support() == "v1" else _CgroupV2(limits)
            except OSError as exc:
                raise LaunchError(f"cannot create the run's cgroup: {exc}", False) from None
        out = _open_output(self.stdout_path)
        same = self.stderr_path is not None and self.stderr_path == self.stdout_path
        err = out if same else _open_output(self.stderr_path)
        files = [("stdout", out)] + ([] if same else [("stderr", err)])
        try:
            return self._go(env, rlimits, out, err, files)
        finally:
            out.close()
            if not same:
                err.close()
            for fd in self.launch.close_after:
                try:
                    os.close(fd)
                except OSError:
                    pass
            if self.cgroup is not None:
                self.cgroup.remove()

    def _go(self, env, rlimits, out, err, files) -> ProcessOutcome:
        procs_files = self.cgroup.procs_files if self.cgroup else []
        shim = launcher()
        argv = list(self.launch.argv)
        preexec = None
        errpipe = None
        pass_fds = tuple(self.launch.pass_fds)
        if shim is not None:
            want = {which: (soft, hard) for which, soft, hard in rlimits}
            fsize = want.get(resource.RLIMIT_FSIZE, (-1, -1))[0]
            cpu_soft, cpu_hard = want.get(resource.RLIMIT_CPU, (-1, -1))
            data = want.get(resource.RLIMIT_DATA, (-1, -1))[0]
            errpipe = os.pipe2(os.O_CLOEXEC)
            pass_fds += (errpipe[1],)
            argv = [shim, str(errpipe[1]), str(fsize), str(cpu_soft), str(cpu_hard), str(data)]
            argv += [str(len(procs_files)), *procs_files, "--", *self.launch.argv]
        else:
            preexec = _make_preexec(rlimits, procs_files)
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                cwd=self.launch.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                preexec_fn=preexec,
                close_fds=True,
                pass_fds=pass_fds,
            )
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
        if errpipe is not None:
            failure = b""
            while chunk := os.read(errpipe[0], 4096):
                failure += chunk
            os.close(errpipe[0])
            if failure:
                proc.wait()
                kind, _, what = failure.decode("utf-8", "replace").partition(":")
                raise LaunchError(f"cannot start: {what}", kind == "exec")
        self.pid = proc.pid
        self.known[proc.pid] = -1
        with _active_lock:
            _active_leaders.add(proc.pid)
        try:
            return self._watch(proc, t0, out, err, files)
        finally:
            with _active_lock:
                _active_leaders.discard(proc.pid)

    def _watch(self, proc, t0, out, err, files) -> ProcessOutcome:
        limits = self.limits
        pidfd = os.pidfd_open(proc.pid)
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        deadline = t0 + limits.wall_s
        interval = 0.01
        next_sample = t0 + interval
        termination: str | None = None
        detail = ""
        cpu_seen = 0.0
        try:
            while True:
                now = time.monotonic()
                wait = max(0.0, min(deadline, next_sample) - now)
                if poller.poll(wait * 1000.0):
                    break  # the leader exited
                now = time.monotonic()
                if now >= deadline:
                    termination = "walltime"
                    break
                if now < next_sample:
                    continue
                interval = min(interval * 2, 0.1)
                next_sample = now + interval
                cpu, rss, nthreads = self.sample()
                cpu_seen = max(cpu_seen, cpu)
                if not self.peak_pss:
                    self.peak_rss = max(self.peak_rss, rss)
                if limits.cpu_s and cpu > limits.cpu_s:
                    termination, detail = "cputime", f"CPU time {cpu:.2f} s over {limits.cpu_s:g} s"
                    break
                if self.cgroup is not None and self.cgroup.oom_killed():
                    termination, detail = "memory", f"memory limit {limits.mem_mb} MB (OOM kill)"
                    break
                if limits.nproc and nthreads > limits.nproc:
                    termination, detail = "nproc", f"{nthreads} processes/threads over {limits.nproc}"
                    break
                if limits.mem_mb and rss > limits.mem_mb:
                    # RSS counts pages shared after fork() once per process: decide on PSS
                    pss = self.tree_pss_mb()
                    self.peak_rss = max(self.peak_pss, pss)
                    self.peak_pss = self.peak_rss
                    if pss > limits.mem_mb:
                        termination, detail = "memory", f"tree memory {pss:.0f} MB over {limits.mem_mb} MB"
                        break
                over = self.output_over(files)
                if over:
                    termination, detail = "output", f"{over} over {limits.output_bytes} bytes"
                    break
            end = time.monotonic()
            killed = termination is not None
            if killed:
                self.signal_tree(_signal.SIGTERM)
                grace_end = time.monotonic() + limits.grace_s
                while time.monotonic() < grace_end:
                    if not self.tree_pids():
                        break
                    poller.poll(10)
            # whatever is left (after the grace, or background children after a normal exit),
            # killed while the leader is still unreaped so its session and group stay ours
            leftovers = False
            for _ in range(2000):
                if not self.signal_tree(_signal.SIGKILL):
                    break
                leftovers = True
                self.reap_orphans()
                time.sleep(0.002)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            self.leader_reaped = True
            self.reap_orphans()
            if self.cgroup is None and (leftovers or len(self.known) > 1):
                # a last sweep (orphans re-parented while we killed): nothing may survive
                for _ in range(200):
                    if not self.signal_tree(_signal.SIGKILL):
                        break
                    time.sleep(0.002)
                    self.reap_orphans()
        finally:
            os.close(pidfd)
        wall = end - t0
        if self.cgroup is not None:
            cpu_total = self.cgroup.cpu_s()
            peak = self.cgroup.peak_mb()
            oom = self.cgroup.oom_killed()
        else:
            cpu_total = max(usage.ru_utime + usage.ru_stime + self.extra_cpu, cpu_seen)
            peak = max(self.peak_rss, max(usage.ru_maxrss, self.extra_maxrss_kb) / 1024.0)
            oom = False
        exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        stdout_tail, stderr_tail = _tail(out), _tail(err) if err is not out else ""
        if termination is None:
            over = self.output_over(files)
            if oom:
                termination, detail = "memory", f"memory limit {self.limits.mem_mb} MB (OOM kill)"
            elif wall > limits.wall_s:
                termination, detail = "walltime", f"ended after the wall limit {limits.wall_s:g} s"
            elif limits.cpu_s and cpu_total > limits.cpu_s:
                termination, detail = "cputime", f"CPU time {cpu_total:.2f} s over {limits.cpu_s:g} s"
            elif sig == _signal.SIGXCPU:
                termination, detail = "cputime", "CPU time limit (SIGXCPU)"
            elif over or sig == _signal.SIGXFSZ:
                termination = "output"
                detail = f"{over or 'a file'} over the output limit of {limits.output_bytes} bytes"
            elif (
                self.limiter == "light"
                and limits.mem_mb
                and (sig is not None or exit_code)
                and _MEM_SIGNS.search(stderr_tail.encode("utf-8", "replace"))
            ):
                termination, detail = "memory", "allocation failed under the memory limit"
            elif sig is not None:
                termination, detail = "signal", f"killed by signal {sig} ({_signal.Signals(sig).name})"
            else:
                termination = "exit"
        if self.cgroup is not None and termination == "exit" and exit_code and self.cgroup.nproc_hit():
            detail = f"process limit {limits.nproc} reached (fork failed)"
        outcome = ProcessOutcome(
            exit_code=exit_code,
            signal=sig,
            termination=termination,
            wall_s=round(wall, 6),
            cpu_s=round(cpu_total, 6),
            peak_mem_mb=round(peak, 3),
            stdout_tail=stdout_tail,
            stderr_tail=stderr_tail,
            limiter=self.limiter if self.cgroup is None else f"cgroup-{cgroup_support()}",
            sandbox=self.sandbox_name,
            killed_by_harness=killed,
            message=detail,
        )
        if self.launch.after is not None:
            self.launch.after(outcome)
        return outcome


_benchexec_local = threading.local()


def _run_benchexec(launch, limits, sandbox_name, stdout_path, stderr_path, output_paths) -> ProcessOutcome:
    """BenchExec's RunExecutor (cgroups, no container mode): its limits, its measurements.
    `nproc` is not applied here (BenchExec 3.x exposes no pids limit through this API)."""
    import logging
    import tempfile

    from benchexec.runexecutor import RunExecutor

    logging.getLogger("benchexec").setLevel(logging.WARNING)
    executor = getattr(_benchexec_local, "executor", None)
    if executor is None:
        executor = _benchexec_local.executor = RunExecutor(use_namespaces=False)
    with tempfile.TemporaryDirectory(prefix="tcsexam-bx-") as tmp:
        out_file = str(stdout_path) if stdout_path else os.path.join(tmp, "stdout")
        err_file = str(stderr_path) if stderr_path else os.path.join(tmp, "stderr")
        if stdout_path is not None and stdout_path == stderr_path:
            err_file = os.path.join(tmp, "stderr")
        for path in (out_file, err_file):
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        run = executor.execute_run(
            args=list(launch.argv),
            output_filename=out_file,
            error_filename=err_file,
            hardtimelimit=int(math.ceil(limits.cpu_s)) if limits.cpu_s else None,
            walltimelimit=int(math.ceil(limits.wall_s)),
            memlimit=int(limits.mem_mb * MiB) if limits.mem_mb else None,
            environments={"keepEnv": {}, "newEnv": dict(launch.env)},
            workingDir=launch.cwd,
            maxLogfileSize=limits.output_bytes,
            files_size_limit=limits.output_bytes,
            write_header=False,
        )
        tails = []
        for path in (out_file, err_file):
            try:
                with open(path, "rb") as fh:
                    tails.append(_tail(fh))
            except OSError:
                tails.append("")
        if stdout_path is not None and stdout_path == stderr_path:
            with open(stdout_path, "ab") as fh, open(err_file, "rb") as src:
                fh.write(src.read(limits.output_bytes + 1))
    code = run.get("exitcode")
    exit_code = getattr(code, "value", None)
    sig = getattr(code, "signal", None)
    reason = run.get("terminationreason")
    wall, cpu = float(run.get("walltime", 0.0)), float(run.get("cputime", 0.0))
    mapping = {"cputime": "cputime", "cputime-soft": "cputime", "walltime": "walltime",
               "memory": "memory", "files-size": "output", "files-count": "output"}  # fmt: skip
    termination = mapping.get(reason or "", None)
    detail = f"BenchExec: {reason}" if reason else ""
    if termination is None:
        over = [p for p in output_paths if os.path.exists(p) and os.path.getsize(p) > limits.output_bytes]
        if wall > limits.wall_s:
            termination = "walltime"
        elif limits.cpu_s and cpu > limits.cpu_s:
            termination = "cputime"
        elif over or sig == _signal.SIGXFSZ:
            termination = "output"
        elif sig is not None:
            termination, detail = "signal", f"killed by signal {sig}"
        else:
            termination = "exit"
    return ProcessOutcome(
        exit_code=exit_code,
        signal=sig,
        termination=termination,
        wall_s=round(wall, 6),
        cpu_s=round(cpu, 6),
        peak_mem_mb=round(run["memory"] / MiB, 3) if run.get("memory") is not None else None,
        stdout_tail=tails[0],
        stderr_tail=tails[1],
        limiter="benchexec",
        sandbox=sandbox_name,
        killed_by_harness=reason is not None,
        message=detail,
    )
