"""The limits of one run (wall clock, CPU time, memory, output, processes, disk): one type for a
task file's limits (`tcsexam.tasks`) and the runner's (`tcsexam.runner.limiter`), outside both
packages so that either may use it."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from tcsexam.errors import InputError

if TYPE_CHECKING:  # the annotations' alias only: this module does not import fileio (or yaml) at run time
    from tcsexam.fileio import JsonObject

MiB = 1 << 20
#: a task file's defaults for what it does not say (`tcsexam.tasks.parse_limits`)
TASK_DEFAULTS = {"mem_mb": 2048, "output_mb": 64, "nproc": 256}


#: the seeds a candidate may be given ({seed}, TCSEXAM_SEED): 1..2^31-1, a positive 32-bit signed
#: integer, what common solvers accept (minisat's -rnd-seed refuses 0; most read an int32)
SEED_MIN, SEED_MAX = 1, 2**31 - 1
#: the seed of a run that names none (`tcsexam run --seed`, the workflow's `run.seed`)
DEFAULT_SEED = 1


def seed_option(text: str) -> int:
    """`--seed`'s argparse type: an integer in SEED_MIN..SEED_MAX (else a usage error, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed must be an integer, not {text!r}") from None
    if not SEED_MIN <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"a seed must be in {SEED_MIN}..{SEED_MAX} (2^31-1), not {value}")
    return value


#: what a run may write in its work folder when the task does not say (`Limits.disk_mb` None)
DEFAULT_DISK_MB = 4096


def _positive(value: object, *, integer: bool = False) -> bool:
    """Whether `value` is a positive number (an int when `integer`): the fields' types are not
    checked where a task file's values reach the constructor, so `Limits` checks them itself."""
    if integer:
        return isinstance(value, int) and value > 0
    return isinstance(value, (int, float)) and value > 0


@dataclass(frozen=True)
class Limits:
    """Per-run limits. `cpu_s` counts children; `output_bytes` caps stdout, stderr and each
    watched file (the certificate); `nproc` caps the processes/threads alive at once; `disk_mb`
    what the run's writable folders may hold. Which limiter enforces them is a run option
    (`RunSpec.limiter`), not a limit.

    A task's limits (`tcsexam.tasks.parse_limits`, `Task.limits`) are of this type too, as the task
    file says them: there `cpu_s` None means `wall_s` per thread and `disk_mb` None the default,
    which `for_threads` fills in for a candidate's run."""

    wall_s: float
    cpu_s: float | None = None
    mem_mb: int | None = None
    output_bytes: int = 64 * MiB
    nproc: int | None = None
    grace_s: float = 0.5
    #: bytes the run may have in its writable folders (work folder), checked with the other limits
    disk_mb: int | None = None

    def __post_init__(self) -> None:
        if not _positive(self.wall_s):
            raise InputError(f"limits: wall_s must be a positive number, not {self.wall_s!r}")
        for name in ("cpu_s", "mem_mb", "nproc", "disk_mb"):
            value = getattr(self, name)
            if value is not None and not _positive(value):
                raise InputError(f"limits: {name} must be a positive number or None, not {value!r}")
        if not _positive(self.output_bytes, integer=True):
            raise InputError("limits: output_bytes must be a positive integer")
        if self.grace_s < 0:
            raise InputError("limits: grace_s must not be negative")

    def for_threads(self, threads: int = 1, *, grace_s: float = 0.5) -> Limits:
        """The run limits of a task's limits for a candidate using `threads`: CPU seconds default
        to wall_s * threads, the work folder to DEFAULT_DISK_MB."""
        threads = max(1, int(threads))
        cpu = self.cpu_s if self.cpu_s is not None else self.wall_s * threads
        return Limits(
            wall_s=float(self.wall_s),
            cpu_s=float(cpu),
            mem_mb=int(self.mem_mb) if self.mem_mb else None,
            output_bytes=int(self.output_bytes),
            nproc=int(self.nproc) if self.nproc else None,
            grace_s=grace_s,
            disk_mb=int(self.disk_mb or DEFAULT_DISK_MB),
        )

    def task_dict(self) -> JsonObject:
        """The limits as a task file says them (`output_mb`; `disk_mb` only when set): what the
        Solver track's record keys and the manifest hold (older keys stay valid)."""
        mb, rest = divmod(self.output_bytes, MiB)
        limits = {
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s,
            "mem_mb": self.mem_mb,
            "output_mb": mb if not rest else self.output_bytes / MiB,
            "nproc": self.nproc,
        }
        if self.disk_mb is not None:
            limits["disk_mb"] = self.disk_mb
        return limits

    def as_dict(self) -> JsonObject:
        """The limits that define a run (`output_bytes`): what OR-Space record keys and records hold."""
        return {
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s,
            "mem_mb": self.mem_mb,
            "output_bytes": self.output_bytes,
            "nproc": self.nproc,
            **({"disk_mb": self.disk_mb} if self.disk_mb is not None else {}),
        }


#: what a SAT task's `unsat_proof` may say (docs/proofs.md#unsat-answers-drat-proofs, `tcsexam.runner.solver.drat`)
class UnsatProof(StrEnum):
    REQUIRED = "required"  #: an UNSAT answer scores only with a verified DRAT proof
    TRUSTED = "trusted"  #: an UNSAT answer is taken on trust (recorded as such)


UNSAT_PROOF_MODES = tuple(m.value for m in UnsatProof)
#: the default of a SAT task without `unsat_proof`
DEFAULT_UNSAT_PROOF = UnsatProof.REQUIRED.value


@dataclass(frozen=True)
class ProofLimits:
    """The DRAT checker's own limits (a SAT task's `proof_limits`): wall-clock and CPU seconds,
    memory, and the largest proof read (`proof_mb`; a larger one is refused unread)."""

    wall_s: float = 60.0
    mem_mb: int = 4096
    proof_mb: int = 512

    def key(self) -> dict[str, float]:
        return {"wall_s": self.wall_s, "mem_mb": self.mem_mb, "proof_mb": self.proof_mb}
