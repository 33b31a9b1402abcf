"""UNSAT answers checked with a DRAT proof (docs/proofs.md#unsat-answers-drat-proofs).

A SAT task's `unsat_proof` says what an `s UNSATISFIABLE` answer needs: `required` (the default,
and what the bundled tasks say): a DRAT proof the candidate wrote to `{proof}` / `$TCSEXAM_PROOF`
(the file `proof` in its work folder) that a real DRAT checker verifies; `trusted`: the answer is
taken as before (solved on an instance labelled UNSAT), and the record says it was trusted.

`check_proof` runs after the candidate's run ended (its clock stopped): it copies the proof out of
the work folder (opened without following links or blocking, at most `ProofLimits.proof_mb`), writes
the instance the harness parsed as canonical DIMACS beside it, and runs the checker program
(`tcsexam.runner.solver.drat_check`: dratify, with cdclkit-native's Rust engine when installed) as a
limited run of its own (the `local` sandbox: as an unprivileged uid when the harness is root) under
`ProofLimits`' wall clock, CPU time and memory, with the run's limiter. Only the checker's own
`s VERIFIED` line (and a normal exit) verifies a proof; anything else is a `ProofVerdict` that is not
verified, with the reason (the checker's, or its limit). A checker that cannot be started or
imported, or that is killed by a signal its limits did not send, is the harness's failure
(`CheckerMissing`, an infrastructure error: retried, never a refused proof).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

import numpy as np

from tcsexam.containment import Limiter
from tcsexam.fileio import JsonObject, UntrustedFileError, open_untrusted
from tcsexam.limits import DEFAULT_UNSAT_PROOF, UNSAT_PROOF_MODES, MiB, ProofLimits, UnsatProof
from tcsexam.problems.base import CheckResult
from tcsexam.problems.sat import CnfInstance
from tcsexam.records import Status, Termination
from tcsexam.runner.limiter import LaunchError, Limits
from tcsexam.runner.ownership.scratch import RELOCATED_ROOT, make_scratch
from tcsexam.runner.sandboxes import run_limited
from tcsexam.runner.sandboxes.runas import can_read, candidate_ids

#: the proof's file name in the run's work folder (`{proof}`, `TCSEXAM_PROOF`)
PROOF_NAME = "proof"
#: the checker program (run from a copy)
CHECKER_SCRIPT = Path(__file__).with_name("drat_check.py")
CHECKER_MISSING_EXIT = 3
__all__ = [
    "DEFAULT_UNSAT_PROOF",
    "PROOF_NAME",
    "UNSAT_PROOF_MODES",
    "CheckerMissing",
    "ProofLimits",
    "ProofVerdict",
    "check_proof",
    "judge_unsat",
]


class CheckerMissing(RuntimeError):
    """The DRAT checker could not run here (not installed, cannot start, killed from outside): the
    harness's failure."""


@dataclass
class ProofVerdict:
    """What the check found: `verified` only on the checker's explicit `s VERIFIED`; `reason` one
    line; `checker` the checker and engine it reported; `check_s` its wall seconds; `format`
    text/binary; `steps` the proof steps it read; `bytes` the proof's size."""

    verified: bool
    reason: str
    checker: str | None = None
    check_s: float | None = None
    format: str | None = None
    steps: int | None = None
    bytes: int | None = None
    extra: JsonObject = field(default_factory=dict)

    def record_fields(self, mode: UnsatProof) -> JsonObject:
        """What an instance record's `extra.unsat_proof` holds."""
        out = {"mode": mode, "verified": self.verified, "reason": self.reason}
        for name in ("checker", "check_s", "format", "steps", "bytes"):
            value = getattr(self, name)
            if value is not None:
                out[name] = round(value, 4) if name == "check_s" else value
        return out


def canonical_dimacs(instance: CnfInstance) -> bytes:
    """The parsed CNF instance (`tcsexam.problems.sat.CnfInstance`) as plain DIMACS: the formula
    the checker reads is the one the harness judged, whatever the instance file's quirks."""
    lits = np.where(instance.positive, instance.var, -instance.var.astype(np.int64))
    ends = np.cumsum(instance.lengths)
    parts = [f"p cnf {instance.nvars} {instance.nclauses}\n".encode()]
    body = np.split(lits, ends[:-1]) if instance.nclauses else []
    parts.extend((" ".join(map(str, clause.tolist())) + (" 0\n" if clause.size else "0\n")).encode() for clause in body)
    return b"".join(parts)


def _copy_proof(source: Path, target: Path, cap: int) -> int | None:
    """Copy the candidate's proof to the harness's `target` without following links or blocking,
    at most `cap` + 1 bytes; its size copied (cap + 1: over the cap), None when there is none.
    `UntrustedFileError` when it is not a regular file the program wrote."""
    fd = open_untrusted(source)
    if fd is None:
        return None
    copied = 0
    try:
        with open(target, "wb") as out:
            while copied <= cap and (chunk := os.read(fd, min(cap + 1 - copied, 1 << 20))):
                out.write(chunk)
                copied += len(chunk)
    finally:
        os.close(fd)
    return copied


def check_proof(
    instance: CnfInstance,
    proof_path: Path,
    *,
    limits: ProofLimits,
    scratch: Path,
    limiter: Limiter = Limiter.AUTO,
    engine: str = "auto",
) -> ProofVerdict:
    """Check the candidate's DRAT proof at `proof_path` against the parsed CNF `instance` under
    `limits` in a folder of `scratch` (removed afterwards); never raises for a bad proof."""
    folder = Path(scratch) / "drat-check"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    ids = candidate_ids()
    if ids is not None and not can_read(folder, ids, ancestors=True):  # root: the checker's uid must reach it
        shutil.rmtree(folder)
        folder = Path(make_scratch(RELOCATED_ROOT, kind="drat-"))
    try:
        return _check_in(folder, instance, Path(proof_path), limits, limiter, engine)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _check_in(
    folder: Path, instance, proof_path: Path, limits: ProofLimits, limiter: Limiter, engine: str
) -> ProofVerdict:
    os.chmod(folder, 0o755)  # the checker may run as the candidates' uid (root harness): it reads, never writes
    proof = folder / "proof"
    cap = limits.proof_mb * MiB
    try:
        size = _copy_proof(proof_path, proof, cap)
    except UntrustedFileError as exc:
        return ProofVerdict(
            False, f"the proof ({{proof}}: {PROOF_NAME!r} in the work folder) is not a file the program wrote: {exc}"
        )
    if size is None:
        return ProofVerdict(
            False, f"no DRAT proof written (the file {PROOF_NAME} in the work folder: {{proof}}, $TCSEXAM_PROOF)"
        )
    if size > cap:
        return ProofVerdict(False, f"the proof is larger than the {limits.proof_mb} MB the checker reads", bytes=size)
    if size == 0:
        return ProofVerdict(False, "the proof is empty (no step, no empty clause)", bytes=0)
    formula = folder / "formula.cnf"
    formula.write_bytes(canonical_dimacs(instance))
    script = folder / CHECKER_SCRIPT.name
    shutil.copyfile(CHECKER_SCRIPT, script)
    for path in (proof, formula, script):
        path.chmod(0o444)
    run_limits = Limits(
        wall_s=float(limits.wall_s),
        cpu_s=float(limits.wall_s),
        mem_mb=int(limits.mem_mb),
        output_bytes=1 * MiB,
        nproc=64,
    )
    env = {
        "PATH": os.path.dirname(sys.executable) + ":/usr/bin:/bin",
        "HOME": str(folder),
        "TMPDIR": str(folder),
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    argv = [sys.executable, "-I", str(script), str(formula), str(proof), "--engine", engine]
    start = time.monotonic()
    try:
        outcome = run_limited(
            argv,
            cwd=str(folder),
            limits=run_limits,
            env=env,
            limiter=limiter,
            readonly_paths=(folder,),
            stdout_path=folder / "checker.out",
            stderr_path=folder / "checker.err",
        )
    except LaunchError as exc:
        raise CheckerMissing(f"the DRAT checker could not start: {exc}") from None
    elapsed = time.monotonic() - start
    lines = outcome.stdout_tail.splitlines()
    info = _parse_report(lines)
    verdict = ProofVerdict(
        False,
        "",
        checker=info.get("checker"),
        check_s=outcome.wall_s or elapsed,
        format=info.get("format"),
        steps=info.get("steps"),
        bytes=size,
    )
    if outcome.sandbox_error:
        raise CheckerMissing(f"the DRAT checker's sandbox failed: {outcome.sandbox_error}")
    term = outcome.termination
    if term in (Termination.WALLTIME, Termination.CPUTIME):
        verdict.reason = f"the DRAT checker did not finish within its {limits.wall_s:g} s limit ({term})"
    elif term == Termination.MEMORY:
        verdict.reason = f"the DRAT checker ran out of its {limits.mem_mb} MB memory limit (proof too large to check)"
    elif term == Termination.EXIT and outcome.exit_code == CHECKER_MISSING_EXIT and "checker missing" in info:
        raise CheckerMissing(info["checker missing"])
    elif term == Termination.SIGNAL:  # within its limits, killed from outside: the machine's fault, not the proof's
        raise CheckerMissing(f"the DRAT checker was killed by a signal the harness did not send ({outcome.message})")
    elif term != Termination.EXIT or outcome.exit_code != 0:
        tail = " ".join(outcome.stderr_tail.split())[-300:]
        how = f"exit code {outcome.exit_code}" if term == Termination.EXIT else f"{term}: {outcome.message}"
        verdict.reason = f"the DRAT checker failed ({how})" + (f": {tail}" if tail else "")
    elif lines and lines[-1].strip() == "s VERIFIED":
        verdict.verified = True
        verdict.reason = info.get("reason", "verified")
    elif lines and lines[-1].strip() == "s NOT VERIFIED":
        verdict.reason = info.get("reason") or "the DRAT checker did not verify the proof"
    else:
        verdict.reason = "the DRAT checker gave no verdict (no final 's VERIFIED' / 's NOT VERIFIED' line)"
    return verdict


#: what the checker's report says (`_parse_report`), each key only where a line says it
CheckerReport = TypedDict(
    "CheckerReport",
    {"checker missing": str, "checker": str, "format": str | None, "steps": int, "reason": str},
    total=False,
)


def _parse_report(lines: list[str]) -> CheckerReport:
    """The `c ...` lines of the checker's report (`drat_check`): checker, format, steps, reason."""
    info: CheckerReport = {}
    for line in lines:
        if line.startswith("c checker missing: "):
            info["checker missing"] = line[len("c checker missing: ") :]
        elif line.startswith("c checker "):
            info["checker"] = line[len("c checker ") :]
        elif line.startswith("c proof "):
            words = line[len("c proof ") :].replace(",", " ").split()
            info["format"] = words[0] if words else None
            if len(words) > 1 and words[1].isdigit():
                info["steps"] = int(words[1])
        elif line.startswith("c reason "):
            info["reason"] = line[len("c reason ") :]
    return info


def judge_unsat(
    check: CheckResult, mode: UnsatProof | None, run_check: Callable[[], ProofVerdict]
) -> tuple[CheckResult, JsonObject | None]:
    """A SAT certificate's check (`problems.base.CheckResult`) under the task's `unsat_proof` mode:
    (the check, what the record's `extra.unsat_proof` holds or None). Only an accepted UNSAT claim
    is touched: `trusted` keeps the check and labels it; `required` calls `run_check()` (a
    `ProofVerdict`) and makes the claim solved when the proof is verified, `certificate_failed`
    with the checker's reason when it is not (an instance labelled SAT was refused already)."""
    if mode is None or check.status != Status.OK or check.claimed != "UNSAT":
        return check, None
    if mode == UnsatProof.TRUSTED:
        message = f"{check.message}; UNSAT trusted (unsat_proof: trusted): no proof checked"
        return CheckResult(check.status, check.value, check.solved, check.claimed, check.reward, message), {
            "mode": UnsatProof.TRUSTED.value,
            "verified": None,
            "reason": "unsat_proof: trusted: no proof checked",
        }
    verdict = run_check()
    extra = verdict.record_fields(mode)
    if not verdict.verified:
        return CheckResult.failed(f"UNSAT claim without a verified DRAT proof: {verdict.reason}", "UNSAT"), extra
    what = ", ".join(
        x
        for x in (
            verdict.checker,
            verdict.format and f"{verdict.format} proof",
            verdict.steps is not None and f"{verdict.steps} steps",
            verdict.check_s is not None and f"checked in {verdict.check_s:.2f} s",
        )
        if x
    )
    message = f"UNSAT proven: DRAT proof verified ({what})"
    return CheckResult(Status.OK, value=1.0, solved=True, claimed="UNSAT", reward=1.0, message=message), extra
