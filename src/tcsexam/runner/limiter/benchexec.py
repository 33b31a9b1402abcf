"""The ``benchexec`` limiter: BenchExec's RunExecutor (cgroups, no container mode; ~140 ms per run)
for users who want its guarantees: its limits, its measurements, our `classify`. `nproc` is not
applied here (BenchExec 3.x exposes no pids limit through this API)."""

from __future__ import annotations

import logging
import math
import os
import stat
import tempfile
import threading
from pathlib import Path

from tcsexam.containment import Limiter
from tcsexam.fileio import UntrustedFileError, open_untrusted
from tcsexam.records import Termination
from tcsexam.runner.limiter.classify import Ended, classify, outcome_of
from tcsexam.runner.limiter.process import tail
from tcsexam.runner.limiter.types import Launch, MiB, ProcessOutcome, RunSpec

#: BenchExec's termination reasons -> ours
REASONS = {
    "cputime": Termination.CPUTIME,
    "cputime-soft": Termination.CPUTIME,
    "walltime": Termination.WALLTIME,
    "memory": Termination.MEMORY,
    "files-size": Termination.OUTPUT,
    "files-count": Termination.OUTPUT,
}
_local = threading.local()


def run_benchexec(launch: Launch, spec: RunSpec, sandbox_name: str) -> ProcessOutcome:
    from benchexec.runexecutor import RunExecutor

    limits, stdout_path, stderr_path = spec.limits, spec.paths.stdout_path, spec.paths.stderr_path
    output_paths = spec.paths.output_paths
    if launch.start_fd is not None:  # BenchExec starts the run itself: the wrapper may go at once
        os.write(launch.start_fd, b"go\n")
    logging.getLogger("benchexec").setLevel(logging.WARNING)
    executor = getattr(_local, "executor", None)
    if executor is None:
        executor = _local.executor = RunExecutor(use_namespaces=False)
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
        for path in (out_file, err_file):  # the run's folder is the candidate's: never follow a link
            try:
                fd = open_untrusted(path)
            except (OSError, UntrustedFileError):
                fd = None
            if fd is None:
                tails.append("")
                continue
            with os.fdopen(fd, "rb") as fh:
                tails.append(tail(fh))
        if stdout_path is not None and stdout_path == stderr_path:
            try:
                fd = os.open(stdout_path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError:
                fd = None  # replaced by a link or a FIFO: the candidate's own loss of its output
            if fd is not None:
                with os.fdopen(fd, "ab") as fh, open(err_file, "rb") as src:
                    if stat.S_ISREG(os.fstat(fd).st_mode):
                        fh.write(src.read(limits.output_bytes + 1))
    code = run.get("exitcode")
    reason = run.get("terminationreason")
    wall, cpu = float(run.get("walltime", 0.0)), float(run.get("cputime", 0.0))
    over = [p for p in output_paths if os.path.exists(p) and os.path.getsize(p) > limits.output_bytes]
    ended = Ended(
        exit_code=getattr(code, "value", None),
        signal=getattr(code, "signal", None),
        wall_s=wall,
        cpu_s=cpu,
        enforced=REASONS.get(reason or ""),
        enforced_detail=f"BenchExec: {reason}" if reason else "",
        output_over=Path(over[0]).name if over else None,
        stderr_tail=tails[1],
        signal_from_exit_code=launch.signal_from_exit_code,
    )
    verdict = classify(limits, ended)
    return outcome_of(
        verdict,
        wall_s=round(wall, 6),
        cpu_s=round(cpu, 6),
        peak_mem_mb=round(run["memory"] / MiB, 3) if run.get("memory") is not None else None,
        stdout_tail=tails[0],
        stderr_tail=tails[1],
        limiter=Limiter.BENCHEXEC,
        sandbox=sandbox_name,
        killed_by_harness=reason is not None,
        message=verdict.message or (f"BenchExec: {reason}" if reason else ""),
    )
