"""One process tree under fixed limits: wall clock, CPU time, memory, output size, process count.

`execute_limited(launch, spec, sandbox_name=...)` starts what a sandbox prepared (`Launch`) in
its own session and process group, watches it, kills the whole tree at the first limit it exceeds
(SIGTERM, then SIGKILL after `limits.grace_s`) and returns a `ProcessOutcome`. No process of the
run is left behind: the C launcher (`limiter.launcher`) is the run's child subreaper, so descendants that
escaped with setsid, a double fork or an emptied environment are still the run's.
(`tcsexam.runner.sandboxes.run_limited` is the entry point that also picks the sandbox.)

Limiters (`RunSpec.limiter`; the one that ran is `ProcessOutcome.limiter`), one module each:
``cgroup`` (cgroups v1, or v2 where delegated), ``light`` (no cgroups: rlimits plus /proc
tracking), ``benchexec`` (BenchExec's RunExecutor), and ``auto`` (default): ``cgroup`` when this
machine lets us create cgroups, else ``light``.

How a run ended (`tcsexam.records.Termination`) is decided by one function, `classify`, for every limiter and
sandbox: ``exit``, ``walltime``, ``cputime``, ``memory``, ``output``, ``nproc``, ``signal`` (see
`tcsexam.runner.limiter.classify` for the rules and their order).

What a run owns goes by its harness process's owner token, never a pid (`owner`): its processes
carry the token in their run marker (`orphans.kill_run_orphans` finds them after their harness
died) and its scratch folders in their names, locked while their owner lives (`scratch`).
"""

from __future__ import annotations

from tcsexam.containment import SandboxName
from tcsexam.errors import InputError
from tcsexam.runner.limiter.benchexec import run_benchexec
from tcsexam.runner.limiter.cgroup import cgroup_probe_error, cgroup_support
from tcsexam.runner.limiter.classify import Ended, Verdict, classify, signal_message
from tcsexam.runner.limiter.process import LimitedProcess, whole_run_exclusive
from tcsexam.runner.limiter.types import (
    BUILD_LIMITS,
    LIMITERS,
    PROCESS_TERMINATIONS,
    TAIL_BYTES,
    Launch,
    LaunchError,
    Limiter,
    Limits,
    MiB,
    ProcessOutcome,
    RunPaths,
    RunSpec,
    check_limiter,
)


def resolve_limiter(name: Limiter) -> Limiter:
    """The limiter that `name` selects here; InputError when an explicit one cannot run."""
    if name == Limiter.AUTO:
        return Limiter.CGROUP if cgroup_support() else Limiter.LIGHT
    if name == Limiter.CGROUP and not cgroup_support():
        raise InputError(f"limiter cgroup: cannot create cgroups here ({cgroup_probe_error()})")
    if name == Limiter.BENCHEXEC:
        try:
            import benchexec.runexecutor  # noqa: F401
        except ImportError:
            raise InputError("limiter benchexec: BenchExec is not installed (pip install benchexec)") from None
    return name


def execute_limited(launch: Launch, spec: RunSpec, *, sandbox_name: SandboxName) -> ProcessOutcome:
    """Start `launch` (what a sandbox made of `spec`) under `spec.limits` with `spec.limiter` and
    watch it to the end; stdout, stderr and the capped files are `spec.paths`'."""
    limiter = resolve_limiter(spec.limiter)
    if limiter == Limiter.BENCHEXEC:
        with whole_run_exclusive():
            return run_benchexec(launch, spec, sandbox_name)

    return LimitedProcess(launch, spec, limiter, sandbox_name).go()


__all__ = [
    "BUILD_LIMITS",
    "LIMITERS",
    "PROCESS_TERMINATIONS",
    "TAIL_BYTES",
    "Launch",
    "LaunchError",
    "Limits",
    "MiB",
    "ProcessOutcome",
    "RunPaths",
    "RunSpec",
    "Ended",
    "Verdict",
    "check_limiter",
    "cgroup_support",
    "classify",
    "execute_limited",
    "resolve_limiter",
    "signal_message",
]
