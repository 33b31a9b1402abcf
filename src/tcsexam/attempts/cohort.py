"""cohort.json for a workflow run: suite, protocol, the reference's id, planned repetitions."""

from __future__ import annotations

import contextlib

from tcsexam.errors import InputError, UsageError
from tcsexam.fileio import JsonObject
from tcsexam.scoring.index import cohort_from_dict
from tcsexam.scoring.reference import load_reference
from tcsexam.suites import load_suite


def parse_model_plans(specs: list[str]) -> dict[str, int]:
    """`NAME=N` (N adopted repetitions planned per task) -> {NAME: N}."""
    plans: dict[str, int] = {}
    for spec in specs:
        name, sep, count = spec.rpartition("=")
        if not sep or not name:
            raise UsageError(f"--model {spec!r}: expected NAME=ATTEMPTS_PER_TASK")
        n = None
        with contextlib.suppress(ValueError):
            n = int(count)
        if n is None:
            raise UsageError(f"--model {spec!r}: {count!r} is not an integer")
        if n < 1:
            raise UsageError(f"--model {spec!r}: attempts per task must be >= 1")
        if name in plans:
            raise UsageError(f"--model {name!r} is given twice")
        plans[name] = n
    return plans


def build_cohort(
    suite: str, protocol: str, reference: str, plans: dict[str, int], adoption_policy: str | None = None
) -> JsonObject:
    """The cohort dict, validated with the scorer's own schema; the reference id is read from
    the reference file the Solver rows were scored against."""
    suite_obj = load_suite(suite)
    ref = load_reference(reference)
    missing = [t for t in suite_obj.tracks["solver"] if t not in ref.tasks]
    if missing:
        raise InputError(
            f"{ref.source}: reference {ref.reference_id!r} lacks suite {suite_obj.id!r} "
            f"Solver task(s) {', '.join(missing)}"
        )
    data: JsonObject = {
        "suite": suite_obj.id,
        "solver_protocol": protocol,
        "solver_reference_id": ref.reference_id,
        "models": {name: {"attempts_per_task": n} for name, n in plans.items()},
    }
    if adoption_policy:
        data["adoption_policy"] = adoption_policy
    cohort_from_dict(data, suite_obj, "cohort")  # same checks as `tcsexam score`
    return data
