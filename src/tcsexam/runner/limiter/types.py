"""The limiter's vocabulary: the limits of one run, the run itself (`RunSpec`: argv, cwd, limits,
environment, paths, limiter), what a sandbox hands the limiter (`Launch`), what comes back
(`ProcessOutcome`); how a run ended is `tcsexam.records.Termination`."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from tcsexam.errors import InputError
from tcsexam.records import Termination

MiB = 1 << 20
LIMITERS = ("auto", "light", "cgroup", "benchexec")
TAIL_BYTES = 4096


#: the values a process outcome can carry (the others are set by the runner)
PROCESS_TERMINATIONS = tuple(t for t in Termination if t not in ("launch", "candidate", "build", "input"))
#: what a run may write in its work folder when the task does not say (`TaskLimits.disk_mb`)
DEFAULT_DISK_MB = 4096


@dataclass(frozen=True)
class Limits:
    """Per-run limits. `cpu_s` counts children; `output_bytes` caps stdout, stderr and each
    watched file (the certificate); `nproc` caps the processes/threads alive at once. Which
    limiter enforces them is a run option (`RunSpec.limiter`), not a limit."""

    wall_s: float
    cpu_s: float | None = None
    mem_mb: int | None = None
    output_bytes: int = 64 * MiB
    nproc: int | None = None
    grace_s: float = 0.5
    #: bytes the run may have in its writable folders (work folder), checked with the other limits
    disk_mb: int | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.wall_s, (int, float)) and self.wall_s > 0):
            raise InputError(f"limits: wall_s must be a positive number, not {self.wall_s!r}")
        for name in ("cpu_s", "mem_mb", "nproc", "disk_mb"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and value > 0):
                raise InputError(f"limits: {name} must be a positive number or None, not {value!r}")
        if not (isinstance(self.output_bytes, int) and self.output_bytes > 0):
            raise InputError("limits: output_bytes must be a positive integer")
        if self.grace_s < 0:
            raise InputError("limits: grace_s must not be negative")

    @classmethod
    def from_task(cls, task_limits: Any, threads: int = 1, *, grace_s: float = 0.5) -> Limits:
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
            disk_mb=int(getattr(task_limits, "disk_mb", None) or DEFAULT_DISK_MB),
        )

    def as_dict(self) -> dict[str, Any]:
        """The limits that define a run (for record keys)."""
        return {
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s,
            "mem_mb": self.mem_mb,
            "output_bytes": self.output_bytes,
            "nproc": self.nproc,
            **({"disk_mb": self.disk_mb} if self.disk_mb is not None else {}),
        }


#: limits for a candidate's optional build step (compilers need more than an instance's limits)
BUILD_LIMITS = Limits(wall_s=600.0, cpu_s=1200.0, mem_mb=4096, output_bytes=64 * MiB, nproc=512)


def check_limiter(name: str) -> str:
    """`name` when it is one of `LIMITERS`, else InputError."""
    if name not in LIMITERS:
        raise InputError(f"limits: limiter must be one of {LIMITERS}, not {name!r}")
    return name


def _paths(paths: Iterable[str | os.PathLike]) -> tuple[str, ...]:
    return tuple(os.path.abspath(p) for p in paths)


@dataclass(frozen=True)
class RunPaths:
    """The paths of one run, absolute: `readonly_paths` the sandbox shows read-only (the candidate,
    the instance), `writable_paths` the only ones it may write (the work folder), `output_paths`
    files capped at `Limits.output_bytes` (the certificate), `hidden_paths` folders it hides
    (bwrap: an empty tmpfs; the containers mount only the named paths anyway; local cannot hide
    anything); stdout and stderr go to `stdout_path` / `stderr_path` (None: discarded)."""

    readonly_paths: tuple[str, ...] = ()
    writable_paths: tuple[str, ...] = ()
    output_paths: tuple[str, ...] = ()
    hidden_paths: tuple[str, ...] = ()
    stdout_path: str | None = None
    stderr_path: str | None = None

    def __post_init__(self) -> None:
        for name in ("readonly_paths", "writable_paths", "output_paths", "hidden_paths"):
            object.__setattr__(self, name, _paths(getattr(self, name)))
        for name in ("stdout_path", "stderr_path"):
            value = getattr(self, name)
            object.__setattr__(self, name, None if value is None else os.fspath(value))


@dataclass(frozen=True)
class RunSpec:
    """One run of one program: what a sandbox's `run` takes. `env` is the program's whole
    environment; `limiter` the limiter that enforces `limits` (`LIMITERS`)."""

    argv: tuple[str, ...]
    cwd: str
    limits: Limits
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    paths: RunPaths = RunPaths()
    limiter: str = "auto"

    def __post_init__(self) -> None:
        object.__setattr__(self, "argv", tuple(self.argv))
        object.__setattr__(self, "cwd", os.fspath(self.cwd))
        object.__setattr__(self, "env", dict(self.env))
        check_limiter(self.limiter)


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
    inspects the finished run (e.g. bwrap's status fd) and may set `sandbox_error`.

    `start_fd` (optional) is the write end of a start pipe: the wrapper sets itself up (bwrap:
    namespaces and mounts) and then waits for the line ``go`` on the pipe's other end before it
    execs the program; end of file instead (the harness gave up or died) ends it without running
    the program. The limiter writes ``go`` when the run may start (see
    `tcsexam.runner.limiter.process.one_run_at_a_time`) and counts the wall time from then."""

    argv: list[str]
    cwd: str
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    after: Callable[[ProcessOutcome], None] | None = None
    close_after: list[int] = field(default_factory=list)
    #: the wrapper reports a death by signal N as exit code 128+N (bwrap): `classify` turns it back
    signal_from_exit_code: bool = False
    start_fd: int | None = None
    #: (uid, gid) the program runs as (the launcher drops to it right before the exec; None: unchanged)
    run_as: tuple[int, int] | None = None
    #: PR_SET_NO_NEW_PRIVS for the program (not for a setuid runtime such as Apptainer's starter)
    no_new_privs: bool = True
    #: the run's writable folders: what is in them counts against `Limits.disk_mb`
    disk_paths: tuple[str, ...] = ()
