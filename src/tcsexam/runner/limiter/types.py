"""The limiter's vocabulary: the limits of one run, the run itself (`RunSpec`: argv, cwd, limits,
environment, paths, limiter), what a sandbox hands the limiter (`Launch`), what comes back
(`ProcessOutcome`); how a run ended is `tcsexam.records.Termination`."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field

from tcsexam.containment import LIMITER_CHOICES, ChoiceOption, Limiter, SandboxName
from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject
from tcsexam.limits import Limits, MiB
from tcsexam.records import Termination

#: what `--limiter` and a task may choose, as plain strings (argparse, YAML)
LIMITERS = tuple(x.value for x in LIMITER_CHOICES)
#: the `--limiter` option of every command that runs programs, beside `sandboxes.SANDBOX_OPTION`
LIMITER_OPTION: ChoiceOption = {
    "default": "auto",
    "choices": LIMITERS,
    "help": "process limiter (default auto: cgroups where allowed, else light; docs/runner.md#limiters)",
}
TAIL_BYTES = 4096


#: the values a process outcome can carry (the others are set by the runner)
PROCESS_TERMINATIONS = tuple(
    t for t in Termination if t not in (Termination.LAUNCH, Termination.CANDIDATE, Termination.BUILD, Termination.INPUT)
)
#: limits for a candidate's optional build step (compilers need more than an instance's limits)
BUILD_LIMITS = Limits(wall_s=600.0, cpu_s=1200.0, mem_mb=4096, output_bytes=64 * MiB, nproc=512)


def check_limiter(name: str) -> Limiter:
    """`name` as its `Limiter` when it is one of `LIMITERS`, else InputError."""
    if name not in LIMITERS:
        raise InputError(f"limits: limiter must be one of {LIMITERS}, not {name!r}")
    return Limiter(name)


def _paths(paths: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    return tuple(os.path.abspath(p) for p in paths)


#: a path as callers give it (a `RunPaths` or `RunSpec` keeps it as an absolute string)
PathArg = str | os.PathLike[str]


@dataclass(frozen=True, init=False)
class RunPaths:
    """The paths of one run, absolute: `readonly_paths` the sandbox shows read-only (the candidate,
    the instance), `writable_paths` the only ones it may write (the work folder), `output_paths`
    files capped at `Limits.output_bytes` (the certificate), `hidden_paths` folders it hides
    (bwrap: an empty tmpfs; the containers mount only the named paths anyway; local cannot hide
    anything); stdout and stderr go to `stdout_path` / `stderr_path` (None: discarded). Given as
    any paths, kept as absolute strings."""

    readonly_paths: tuple[str, ...] = ()
    writable_paths: tuple[str, ...] = ()
    output_paths: tuple[str, ...] = ()
    hidden_paths: tuple[str, ...] = ()
    stdout_path: str | None = None
    stderr_path: str | None = None

    def __init__(
        self,
        readonly_paths: Iterable[PathArg] = (),
        writable_paths: Iterable[PathArg] = (),
        output_paths: Iterable[PathArg] = (),
        hidden_paths: Iterable[PathArg] = (),
        stdout_path: PathArg | None = None,
        stderr_path: PathArg | None = None,
    ) -> None:
        object.__setattr__(self, "readonly_paths", _paths(readonly_paths))
        object.__setattr__(self, "writable_paths", _paths(writable_paths))
        object.__setattr__(self, "output_paths", _paths(output_paths))
        object.__setattr__(self, "hidden_paths", _paths(hidden_paths))
        object.__setattr__(self, "stdout_path", None if stdout_path is None else os.fspath(stdout_path))
        object.__setattr__(self, "stderr_path", None if stderr_path is None else os.fspath(stderr_path))


@dataclass(frozen=True, init=False)
class RunSpec:
    """One run of one program: what a sandbox's `run` takes. `env` is the program's whole
    environment; `limiter` the limiter that enforces `limits` (`LIMITERS`)."""

    argv: tuple[str, ...]
    cwd: str
    limits: Limits
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    paths: RunPaths = RunPaths()
    limiter: Limiter = Limiter.AUTO

    def __init__(
        self,
        argv: Iterable[str],
        cwd: PathArg,
        limits: Limits,
        env: Mapping[str, str] | None = None,
        paths: RunPaths | None = None,
        limiter: Limiter = Limiter.AUTO,
    ) -> None:
        object.__setattr__(self, "argv", tuple(argv))
        object.__setattr__(self, "cwd", os.fspath(cwd))
        object.__setattr__(self, "limits", limits)
        object.__setattr__(self, "env", dict(env or {}))
        object.__setattr__(self, "paths", paths if paths is not None else RunPaths())
        object.__setattr__(self, "limiter", check_limiter(limiter))


@dataclass
class ProcessOutcome:
    exit_code: int | None
    signal: int | None
    termination: Termination  #: decided by `classify` (one of PROCESS_TERMINATIONS)
    wall_s: float
    cpu_s: float | None
    peak_mem_mb: float | None
    stdout_tail: str
    stderr_tail: str
    limiter: Limiter
    sandbox: SandboxName
    killed_by_harness: bool
    message: str = ""
    #: set when the sandbox itself failed to start (an infrastructure failure, not the program's)
    sandbox_error: str | None = None

    def to_dict(self) -> JsonObject:
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
    #: a uid of its own the program runs as outside any namespace (local, root harness): the files
    #: it owns in the host's shared tmpfs (/dev/shm, a tmpfs /tmp) count as its memory under the
    #: light limiter (the cgroup limiter charges them already); None: not counted
    tmpfs_owner: int | None = None
