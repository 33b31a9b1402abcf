"""One rule book that turns a finished process into a `Termination`, used by every limiter
(light, cgroup, benchexec) and every sandbox (Docker included).

Order: a limit the harness enforced (it killed the run for that reason) > the kernel's OOM kill >
wall time over the limit > CPU time over the limit or SIGXCPU > output over the cap or SIGXFSZ >
an allocation failure under a memory limit (light limiter, where RLIMIT_DATA makes allocations
fail instead of the OOM killer) > any other signal > exit. Wrappers that report a death by
signal N as exit code 128+N (bwrap's status, Docker's `State.ExitCode`) pass
`Ended(signal_from_exit_code=True)`: such a code is a signal for every rule above, with the same message
as a local run.
"""

from __future__ import annotations

import re
import signal as _signal
from dataclasses import dataclass
from typing import Any

from tcsexam.records import Termination
from tcsexam.runner.limiter.types import Limits, ProcessOutcome

_MEM_SIGNS = re.compile(r"MemoryError|bad_alloc|Cannot allocate memory|[Oo]ut of memory|failed to allocate")
_SIGNALS = {int(s) for s in _signal.Signals}


@dataclass(frozen=True)
class Verdict:
    termination: Termination
    exit_code: int | None
    signal: int | None
    message: str


def signal_message(sig: int) -> str:
    try:
        return f"killed by signal {sig} ({_signal.Signals(sig).name})"
    except ValueError:
        return f"killed by signal {sig}"


def split_wrapped_status(exit_code: int | None, sig: int | None) -> tuple[int | None, int | None]:
    """(exit_code, signal) of a wrapper that reports a death by signal N as exit code 128+N."""
    if sig is None and isinstance(exit_code, int) and exit_code - 128 in _SIGNALS:
        return None, exit_code - 128
    return exit_code, sig


@dataclass(frozen=True)
class Ended:
    """What a limiter or sandbox saw of one finished run: its exit status, times, the limit the
    harness killed it for (`enforced`, None when it ended on its own, with `enforced_detail`),
    the kernel's OOM kill, a stream or file over the output cap (`output_over`: its name), the
    stderr tail, a failed fork under the process limit (`nproc_hit`). `allocation_failures_mean_memory`:
    allocation failures are the memory limit (light limiter: RLIMIT_DATA); `signal_from_exit_code`:
    the wrapper reports a death by signal N as exit code 128+N."""

    exit_code: int | None
    signal: int | None
    wall_s: float
    cpu_s: float | None = None
    enforced: Termination | str | None = None
    enforced_detail: str = ""
    oom_killed: bool = False
    output_over: str | None = None
    stderr_tail: str = ""
    allocation_failures_mean_memory: bool = False
    nproc_hit: bool = False
    signal_from_exit_code: bool = False


def classify(limits: Limits, ended: Ended) -> Verdict:
    """The termination of one finished run (`ended`) under `limits`. See the module doc for the
    order of the rules."""
    exit_code, signal, wall_s, cpu_s = ended.exit_code, ended.signal, ended.wall_s, ended.cpu_s
    if ended.signal_from_exit_code:
        exit_code, signal = split_wrapped_status(exit_code, signal)
    if ended.enforced is not None:
        return Verdict(Termination(ended.enforced), exit_code, signal, ended.enforced_detail)
    output_over, stderr_tail = ended.output_over, ended.stderr_tail
    term, detail = Termination.EXIT, ""
    if ended.oom_killed:
        term, detail = Termination.MEMORY, f"memory limit {limits.mem_mb} MB (OOM kill)"
    elif wall_s > limits.wall_s:
        term, detail = Termination.WALLTIME, f"ended after the wall limit {limits.wall_s:g} s"
    elif limits.cpu_s and cpu_s is not None and cpu_s > limits.cpu_s:
        term, detail = Termination.CPUTIME, f"CPU time {cpu_s:.2f} s over {limits.cpu_s:g} s"
    elif signal == _signal.SIGXCPU:
        term, detail = Termination.CPUTIME, "CPU time limit (SIGXCPU)"
    elif output_over or signal == _signal.SIGXFSZ:
        term = Termination.OUTPUT
        detail = f"{output_over or 'a file'} over the output limit of {limits.output_bytes} bytes"
    elif (
        ended.allocation_failures_mean_memory
        and limits.mem_mb
        and (signal is not None or exit_code)
        and _MEM_SIGNS.search(stderr_tail)
    ):
        term, detail = Termination.MEMORY, "allocation failed under the memory limit"
    elif signal is not None:
        term, detail = Termination.SIGNAL, signal_message(signal)
    elif exit_code and ended.nproc_hit:
        detail = f"process limit {limits.nproc} reached (fork failed)"
    return Verdict(term, exit_code, signal, detail)


def outcome_of(verdict: Verdict, **measured: Any) -> ProcessOutcome:
    """The `ProcessOutcome` of a classified run: the verdict's exit code, signal, termination and
    message, and what the limiter or sandbox `measured` (wall_s, cpu_s, peak_mem_mb, the tails,
    limiter, sandbox, killed_by_harness; a `message` there replaces the verdict's)."""
    return ProcessOutcome(
        exit_code=verdict.exit_code,
        signal=verdict.signal,
        termination=verdict.termination,
        **{"message": verdict.message, **measured},
    )
