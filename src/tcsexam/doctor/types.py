"""What one check of `tcsexam doctor` found: a `Check` (the piece, a `Health`, what was seen, and
for a piece that does not work here what follows from it and how to fix it), and the `Need`s a
run can have, each naming the checks it depends on."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from enum import StrEnum

from tcsexam.fileio import JsonObject


class Health(StrEnum):
    """How a piece stands on this machine."""

    OK = "ok"  #: present and working (its version and path in `detail`)
    MISSING = "missing"  #: not installed, not on PATH, not configured
    BROKEN = "broken"  #: installed but does not work here (refused, wrong version, does not answer)
    SKIPPED = "skipped"  #: not judged on its own: a piece it depends on is missing or broken (`detail` names it)


#: the states in which a piece does not work (a needed one in them fails the doctor and a run)
FAILED = frozenset({Health.MISSING, Health.BROKEN})


class Need(StrEnum):
    """What a run needs besides Python and the package (which every run needs)."""

    CANDIDATES = "candidates"  #: a sandbox for untrusted candidates (Solver and construction programs)
    PROOFS = "proofs"  #: coqc and coqchk of the tasks' Coq release, runnable in the proof sandbox
    DRAT = "drat"  #: the DRAT checker of UNSAT answers (SAT tasks with `unsat_proof: required`)
    SLURM = "slurm"  #: a reachable SLURM controller (the slurm profiles)
    BROWSER = "browser"  #: headless chromium and chromedriver (the explorer's browser tests)


#: what the bundled default (`config/config.yaml`: suite lite, offline, `run.sandbox: auto`) needs
DEFAULT_NEEDS = frozenset({Need.CANDIDATES, Need.PROOFS, Need.DRAT})

#: the name of each check, in the order `tcsexam doctor` prints them
PYTHON = "python"
PACKAGE = "tcsexam"
BWRAP = "bwrap"
USERNS = "user namespaces"
DOCKER = "docker"
APPTAINER = "apptainer"
SANDBOX = "sandbox"
CGROUPS = "cgroups"
LIMITER = "limiter"
BENCHEXEC = "benchexec"
COQC = "coqc"
COQ_SANDBOX = "coqc in sandbox"
DRAT_CHECKER = "drat checker"
SLURM = "slurm"
BROWSER = "browser"
ORDER = (
    PYTHON,
    PACKAGE,
    BWRAP,
    USERNS,
    DOCKER,
    APPTAINER,
    SANDBOX,
    CGROUPS,
    LIMITER,
    BENCHEXEC,
    COQC,
    COQ_SANDBOX,
    DRAT_CHECKER,
    SLURM,
    BROWSER,
)
#: the checks each need depends on (python and the package: every run)
NEEDED_BY: dict[Need, tuple[str, ...]] = {
    Need.CANDIDATES: (SANDBOX,),
    Need.PROOFS: (COQC, COQ_SANDBOX),
    Need.DRAT: (DRAT_CHECKER,),
    Need.SLURM: (SLURM,),
    Need.BROWSER: (BROWSER,),
}
ALWAYS_NEEDED = (PYTHON, PACKAGE)
#: the width of the status column
STATUS_WIDTH = max(len(h.value) for h in Health) + 1


@dataclass(frozen=True)
class Check:
    """One piece as found here. `detail`: for a working piece its version and path, else the
    cause in a few words ("not installed"); `consequence`: what cannot be done without it;
    `fix`: the command or setting that provides it; `needed`: whether the run asked about (or the
    bundled default) needs it, so that its failure fails the doctor."""

    name: str
    health: Health
    detail: str
    consequence: str = ""
    fix: str = ""
    needed: bool = False

    @property
    def failed(self) -> bool:
        """A piece that does not work here (missing or broken; skipped is not a cause itself)."""
        return self.health in FAILED

    def line(self) -> str:
        """One line: `ok      coqc 8.16.1 (/usr/bin/coqc)`, or `missing coqc: not installed ->
        <consequence>; fix: <fix>`."""
        head = f"{self.health.value:<{STATUS_WIDTH}}{self.name}"
        if self.health == Health.OK:
            return f"{head} {self.detail}".rstrip()
        text = f"{head}: {self.detail}"
        if self.consequence:
            text += f" -> {self.consequence}"
        if self.fix:
            text += f"; fix: {self.fix}"
        return text

    def as_needed(self, needed: bool = True) -> Check:
        return replace(self, needed=needed)

    def to_json(self) -> JsonObject:
        return {**asdict(self), "health": self.health.value, "line": self.line()}


def ok(name: str, detail: str) -> Check:
    return Check(name, Health.OK, detail)


def missing(name: str, detail: str, consequence: str, fix: str) -> Check:
    return Check(name, Health.MISSING, detail, consequence, fix)


def broken(name: str, detail: str, consequence: str, fix: str) -> Check:
    return Check(name, Health.BROKEN, detail, consequence, fix)


def skipped(name: str, detail: str) -> Check:
    return Check(name, Health.SKIPPED, detail)


def one_line(text: object, limit: int = 300) -> str:
    """`text` on one line, at most `limit` characters (the end kept: where the cause usually is)."""
    words = " ".join(str(text).split())
    return words if len(words) <= limit else "..." + words[-(limit - 3) :]
