"""`tcsexam doctor`: what works here, one line per external piece (BenchExec's check_cgroups is
the model): Python and the package, the sandboxes (bwrap, user namespaces, Docker, Apptainer, the
one `auto` takes), the limiters (cgroups, the limiter `auto` takes, BenchExec), Coq (coqc of the
tasks' release, and inside the proof sandbox), the DRAT checker, SLURM and the browser of the
explorer's tests. For each piece that does not work: the cause, what follows from it, the fix.

`run_checks()` runs them all (the command); `checks_for(needs)` only those a run needs
(`needs_of(plan)`; `checks_for_plan(plan)` with the plan's sandbox, limiter and Coq release), so that a run names a missing tool before its first job, with its true cause;
`failures(checks)` are the needed ones that do not work. The checks run in parallel threads and
a check that does not answer within `DEADLINE_S` is reported as such: the doctor never hangs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TypedDict, Unpack

from tcsexam.containment import Limiter, SandboxName
from tcsexam.doctor.system import (
    apptainer_check,
    benchexec_check,
    bwrap_check,
    cgroups_check,
    docker_check,
    limiter_check,
    package_check,
    python_check,
    sandbox_check,
    userns_check,
)
from tcsexam.doctor.tools import (
    browser_status,
    coq_sandbox_status,
    coq_status,
    drat_status,
    slurm_status,
    task_coq_versions,
)
from tcsexam.doctor.types import (
    ALWAYS_NEEDED,
    APPTAINER,
    BENCHEXEC,
    BROWSER,
    BWRAP,
    CGROUPS,
    COQ_SANDBOX,
    COQC,
    DEFAULT_NEEDS,
    DOCKER,
    DRAT_CHECKER,
    LIMITER,
    NEEDED_BY,
    ORDER,
    PACKAGE,
    PYTHON,
    SANDBOX,
    SLURM,
    USERNS,
    Check,
    Health,
    Need,
    broken,
)
from tcsexam.limits import UnsatProof

#: how long the doctor waits for all its checks (a check still running then is reported broken)
DEADLINE_S = 30.0


def _groups(
    sandbox: SandboxName, allow_unsandboxed: bool, limiter: Limiter, coq_versions: Iterable[str] | None
) -> list[tuple[tuple[str, ...], Callable[[], Iterator[Check]]]]:
    """(the checks, a generator giving them in that order): a group's checks run one after the
    other (the in-sandbox coqc check needs the coqc one), the groups in parallel; a check done
    before its group's deadline is kept even when a later one of the group is not."""
    versions = None if coq_versions is None else sorted(set(coq_versions))

    def coq() -> Iterator[Check]:
        yield (host := coq_status(versions))
        yield coq_sandbox_status(
            sandbox, allow_unsandboxed=allow_unsandboxed, limiter=limiter, versions=versions, host=host
        )

    def each(*checks: Callable[[], Check]) -> Callable[[], Iterator[Check]]:
        return lambda: (check() for check in checks)

    return [
        ((PYTHON, PACKAGE), each(python_check, package_check)),
        ((BWRAP, USERNS), each(bwrap_check, userns_check)),
        ((DOCKER,), each(docker_check)),
        ((APPTAINER,), each(apptainer_check)),
        ((SANDBOX,), each(lambda: sandbox_check(sandbox, allow_unsandboxed=allow_unsandboxed))),
        ((CGROUPS, LIMITER, BENCHEXEC), each(cgroups_check, limiter_check, benchexec_check)),
        ((COQC, COQ_SANDBOX), coq),
        ((DRAT_CHECKER,), each(lambda: drat_status(limiter))),
        ((SLURM,), each(slurm_status)),
        ((BROWSER,), each(browser_status)),
    ]


def needed_checks(needs: Iterable[Need]) -> set[str]:
    """The names of the checks that `needs` (and every run) depend on."""
    return set(ALWAYS_NEEDED).union(*(NEEDED_BY[Need(n)] for n in needs))


def _timed_out(names: tuple[str, ...], deadline_s: float) -> list[Check]:
    return [
        broken(
            name,
            f"the check did not answer within {deadline_s:g} s",
            "whatever needs it may hang or fail the same way",
            "run `tcsexam -v doctor` and see what it waits for",
        )
        for name in names
    ]


class CheckOptions(TypedDict, total=False):
    """`run_checks`' options of a run (`checks_for`; a workflow's: `plan_options`)."""

    sandbox: SandboxName
    allow_unsandboxed: bool
    limiter: Limiter
    coq_versions: Iterable[str] | None


def run_checks(
    needs: Iterable[Need] = DEFAULT_NEEDS,
    *,
    everything: bool = True,
    sandbox: SandboxName = SandboxName.AUTO,
    allow_unsandboxed: bool = False,
    limiter: Limiter = Limiter.AUTO,
    coq_versions: Iterable[str] | None = None,
    deadline_s: float = DEADLINE_S,
) -> list[Check]:
    """Every check (`everything`), or only those `needs` imply, in `ORDER`, each marked `needed`
    when `needs` (or every run) depends on it. `sandbox`, `allow_unsandboxed` and `limiter` are the
    run's (its `run.sandbox`, ...); `coq_versions` the Coq releases its proof tasks name (default:
    those of the bundled suites). Never raises; returns within about `deadline_s`."""
    wanted = needed_checks(needs)
    groups = [
        (names, fn)
        for names, fn in _groups(sandbox, allow_unsandboxed, limiter, coq_versions)
        if everything or wanted & set(names)
    ]
    results: dict[int, list[Check]] = {i: [] for i in range(len(groups))}

    def work(index: int, names: tuple[str, ...], fn: Callable[[], Iterator[Check]]) -> None:
        try:
            for check in fn():
                results[index].append(check)
        except Exception as exc:  # a check's own bug must not hide the other lines
            done = {c.name for c in results[index]}
            results[index].extend(
                broken(n, f"the check itself failed: {type(exc).__name__}: {exc}", "unknown", "report it")
                for n in names
                if n not in done
            )

    threads = [threading.Thread(target=work, args=(i, *g), daemon=True) for i, g in enumerate(groups)]
    for thread in threads:
        thread.start()
    end = time.monotonic() + deadline_s
    for thread in threads:
        thread.join(max(0.0, end - time.monotonic()))
    found: dict[str, Check] = {}
    for index, (names, _) in enumerate(groups):
        done = list(results[index])  # a copy: a late check may still be appended
        found.update((c.name, c) for c in done)
        found.update((c.name, c) for c in _timed_out(tuple(n for n in names if n not in found), deadline_s))
    # the machine's coqc is needed only where no sandbox brings its own (an image with Coq)
    inside = found.get(COQ_SANDBOX)
    if inside is not None and inside.health == Health.OK and found[COQC].failed:
        wanted.discard(COQC)
        found[COQC] = replace(found[COQC], consequence=f"none for the proofs: they run with the coqc {inside.detail}")
    return [found[name].as_needed(name in wanted) for name in ORDER if name in found]


def checks_for(needs: Iterable[Need], **options: Unpack[CheckOptions]) -> list[Check]:
    """Only the checks a run with `needs` depends on (Python, the package, and each need's),
    `options` as `run_checks`'s: what a run's start calls before its first job."""
    return run_checks(needs, everything=False, **options)


def failures(checks: Iterable[Check]) -> list[Check]:
    """The needed checks that found their piece missing or broken (a skipped one is never the
    cause: the check it depends on is in the list)."""
    return [c for c in checks if c.needed and c.failed]


def needs_of(plan) -> set[Need]:
    """What a workflow plan (`tcsexam.workflow.plan.Plan`) needs: a candidate sandbox unless the
    protocol is online, Coq when a proof is to be checked, the DRAT checker when a SAT task with
    `unsat_proof: required` is run."""
    needs: set[Need] = set()
    if not plan.online:
        needs.add(Need.CANDIDATES)
        if any(plan.task(t).unsat_proof == UnsatProof.REQUIRED for t in plan.solver_tasks):
            needs.add(Need.DRAT)
    if plan.proof_runs():
        needs.add(Need.PROOFS)
    return needs


def coq_versions_of(plan) -> set[str]:
    """The Coq releases of the proof tasks a plan checks proofs of (empty: none named)."""
    return {v for p in plan.proof_runs() if (v := plan.proof_task(p.item).coq_version)}


def plan_options(plan) -> CheckOptions:
    """`run_checks`' options for a workflow plan: its `run.sandbox`, `run.allow_unsandboxed`,
    `run.limiter` and its proof tasks' Coq releases."""
    return {
        "sandbox": SandboxName(plan.run.get("sandbox", SandboxName.AUTO)),
        "allow_unsandboxed": bool(plan.run.get("allow_unsandboxed")),
        "limiter": Limiter(plan.run.get("limiter", Limiter.AUTO)),
        "coq_versions": coq_versions_of(plan) or None,
    }


def checks_for_plan(plan) -> list[Check]:
    """The checks a workflow plan needs, with its own sandbox, limiter and Coq releases: what a
    run's start (`snakemake`, `snakemake -n`, `make run`) calls; `failures()` of them are what
    cannot work."""
    return checks_for(needs_of(plan), **plan_options(plan))


__all__ = [
    "DEADLINE_S",
    "DEFAULT_NEEDS",
    "Check",
    "Health",
    "Need",
    "checks_for",
    "checks_for_plan",
    "coq_sandbox_status",
    "coq_status",
    "coq_versions_of",
    "drat_status",
    "failures",
    "needed_checks",
    "needs_of",
    "plan_options",
    "run_checks",
    "task_coq_versions",
]
