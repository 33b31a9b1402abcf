"""Judge one construction submission: `tcsexam construction run`.

A construction submission is a folder `solvers/<model>/<item>/<attempt>/` holding either

* `solver.yaml`: a program that writes the object to `{solution}` (its `{instance}` is the task's
  parameter file). It runs exactly like a Solver candidate, through `tcsexam run`'s runner:
  the task's limits, the sandbox, the per-instance record with its key and digest, resume; or
* `construction.txt`: the object itself, checked here in-process (no program runs). Its record
  has the same form (`sandbox` and `limiter` null, `extra.submission` "construction.txt"); its key
  covers the folder's files, the parameter file, the task's baseline/reference and the checker,
  so a rerun reuses it until one of them changes.

Either way the result is records.json (one record: status, `A` the verified value, `reward`
the task's original construction reward, message) that `tcsexam attempts construction-row`
turns into the attempt row. A folder with both files is refused (bad input).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from tcsexam.errors import InputError

STATIC_NAME = "construction.txt"
PROGRAM_NAME = "solver.yaml"


def submission_kind(folder: str | Path) -> str | None:
    """'program' (solver.yaml), 'object' (construction.txt) or None (neither file)."""
    folder = Path(folder)
    has_program = (folder / PROGRAM_NAME).is_file()
    has_object = (folder / STATIC_NAME).is_file()
    if has_program and has_object:
        raise InputError(f"{folder}: holds both {PROGRAM_NAME} and {STATIC_NAME}; keep one")
    return "program" if has_program else "object" if has_object else None


def load_construction_task(task: str | Path):
    from tcsexam.problems import CONSTRUCTIONS
    from tcsexam.tasks import load_task

    t = load_task(task)
    if t.problem not in CONSTRUCTIONS:
        raise InputError(f"{t.source}: task {t.id} is not a construction task (problem {t.problem!r})")
    if len(t.instances) != 1:
        raise InputError(f"{t.source}: a construction task has exactly one instance, not {len(t.instances)}")
    return t


def judge_submission(
    *,
    task: str | Path,
    submission: str | Path,
    output: str | Path,
    attempt: str | None,
    records_dir: str | Path | None = None,
    **run_options: Any,
) -> dict[str, Any]:
    """Run or check the submission; write records.json (`output`); return its one record."""
    from tcsexam.fileio import read_json

    t = load_construction_task(task)
    folder = Path(submission)
    if not folder.is_dir():
        raise InputError(f"{folder}: construction submission folder not found")
    kind = submission_kind(folder)
    if kind is None:
        raise InputError(f"{folder}: neither {PROGRAM_NAME} (a program writing {{solution}}) nor {STATIC_NAME}")
    records_dir = Path(records_dir) if records_dir is not None else Path(output).parent / "records"
    if kind == "program":
        from tcsexam.runner.orchestrate import run_task

        run_task(
            task=t.source, candidate_dir=folder, output=output, attempt=attempt, records_dir=records_dir, **run_options
        )
    else:
        _check_object(t, folder, Path(output), attempt, records_dir)
    (record,) = read_json(output, "records file")
    return record


def _check_object(t, folder: Path, output: Path, attempt: str | None, records_dir: Path) -> None:
    from tcsexam import HARNESS_VERSION
    from tcsexam.digest import hash_candidate, hash_file, record_key
    from tcsexam.fileio import atomic_write_json
    from tcsexam.problems.constructions._base import checker_id
    from tcsexam.recordkey import run_key
    from tcsexam.records import InstanceRecord, Status
    from tcsexam.runner.store import RecordStore

    (inst,) = t.instances
    problem = t.problem_impl
    candidate_hash = hash_candidate(folder)
    key = record_key(
        candidate_hash=candidate_hash,
        instance_hash=hash_file(inst.path),
        limits={},
        sandbox="none",
        seed=0,
        meta={**inst.meta, "checker": checker_id(problem)},
        problem=t.problem,
    )
    seal_key = run_key(output, records_dir, folder)
    store = RecordStore(records_dir, key=seal_key)
    store.prepare()
    found = store.lookup(inst.name, key)
    record = found.reused
    if record is None:
        started = time.perf_counter()
        try:
            result = problem.check_certificate(
                problem.parse_instance(inst.path), (folder / STATIC_NAME).read_bytes(), inst.meta
            )
            fields = {
                "status": result.status,
                "A": result.value,
                "claimed": result.claimed,
                "reward": result.reward,
                "message": result.message,
            }
        except OSError as exc:
            fields = {"status": Status.INFRASTRUCTURE_ERROR.value, "message": f"cannot read {STATIC_NAME}: {exc}"}
        record = InstanceRecord(
            instance=inst.name,
            wall_s=round(time.perf_counter() - started, 6),
            key=key,
            candidate_hash=candidate_hash,
            task=t.id,
            attempt=attempt,
            harness_version=HARNESS_VERSION,
            extra={"submission": STATIC_NAME, "checker": checker_id(problem)},
            **fields,
        )
        store.write(record)
    atomic_write_json(output, [record.to_dict(seal_key)])
    print(f"tcsexam construction run: {t.id}: {record.status} {record.message}".rstrip(), file=sys.stderr)
