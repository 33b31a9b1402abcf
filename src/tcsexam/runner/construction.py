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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcsexam import HARNESS_VERSION
from tcsexam.containment import SandboxName
from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, atomic_write_json, read_json
from tcsexam.limits import Limits
from tcsexam.problems import CONSTRUCTIONS
from tcsexam.problems.constructions import checker_id
from tcsexam.records import InstanceRecord, Status
from tcsexam.records.digest import hash_candidate, hash_file, record_key
from tcsexam.records.key import run_key
from tcsexam.records.store import RecordStore
from tcsexam.runner.engine.batch import BatchHooks, KeyedBatch, PoolOptions, RunOptions, run_batch
from tcsexam.runner.solver.orchestrate import TaskJob, run_job
from tcsexam.tasks import load_task

if TYPE_CHECKING:
    from tcsexam.tasks import Task

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
    seed: int = 0,
    options: RunOptions | None = None,
    hidden: tuple[str, ...] = (),
) -> JsonObject:
    """Run or check the submission; write records.json (`output`); return its one record. A
    program runs with `options` (`batch.RunOptions`; None: the defaults), `hidden` folders out of
    its sight besides the usual ones (`orchestrate.TaskJob.hidden`)."""
    t = load_construction_task(task)
    folder = Path(submission)
    if not folder.is_dir():
        raise InputError(f"{folder}: construction submission folder not found")
    kind = submission_kind(folder)
    if kind is None:
        raise InputError(f"{folder}: neither {PROGRAM_NAME} (a program writing {{solution}}) nor {STATIC_NAME}")
    records_dir = Path(records_dir) if records_dir is not None else Path(output).parent / "records"
    job = TaskJob(
        task=t.source,
        candidate_dir=folder,
        output=output,
        attempt=attempt,
        records_dir=records_dir,
        seed=seed,
        hidden=tuple(hidden),
    )
    if kind == "object":
        _check_object(t, job)
    else:
        run_job(job, options or RunOptions())
    records: list[JsonObject] = read_json(output, "records file")  # the one record it wrote
    (record,) = records
    return record


@dataclass
class ObjectCheck:
    """A construction.txt checked in this process: the `batch.BatchContext` of a one-name batch
    (no sandbox, no limits: no program runs)."""

    task: Task
    folder: Path
    key: str
    candidate_hash: str
    attempt: str | None = None
    limits: Limits | None = None  #: always None: no program runs
    scratch_root: str | None = None

    def blank_record(self, name: str, status: Status, message: str = "", **fields: Any) -> InstanceRecord:
        return InstanceRecord(
            instance=name,
            status=status,
            message=message,
            key=self.key,
            candidate_hash=self.candidate_hash,
            task=self.task.id,
            attempt=self.attempt,
            harness_version=HARNESS_VERSION,
            extra={"submission": STATIC_NAME, "checker": checker_id(self.task.problem_impl)},
            **fields,
        )

    def infrastructure_record(self, name: str, message: str) -> InstanceRecord:
        return self.blank_record(name, Status.INFRASTRUCTURE_ERROR, message)

    def execute(self, name: str) -> InstanceRecord:
        """Check the object against the task's instance (an unreadable file: infrastructure_error)."""
        inst = self.task.instance(name)
        problem = self.task.problem_impl
        started = time.perf_counter()
        try:
            result = problem.check_certificate(
                problem.parse_instance(inst.path), (self.folder / STATIC_NAME).read_bytes(), inst.meta
            )
        except OSError as exc:
            wall_s = round(time.perf_counter() - started, 6)
            return self.blank_record(
                name, Status.INFRASTRUCTURE_ERROR, f"cannot read {STATIC_NAME}: {exc}", wall_s=wall_s
            )
        return self.blank_record(
            name,
            result.status,
            result.message,
            wall_s=round(time.perf_counter() - started, 6),
            A=result.value,
            claimed=result.claimed,
            reward=result.reward,
        )

    def __getstate__(self) -> dict[str, object]:
        return dict(self.__dict__)


def _check_object(t: Task, job: TaskJob) -> None:
    """The object's one record, reused while its key holds, through the batch engine (this
    process, no retries: nothing here is lost to an actor)."""
    (inst,) = t.instances
    folder, (output, records_dir) = Path(job.candidate_dir), job.paths()
    candidate_hash = hash_candidate(folder)
    key = record_key(
        candidate_hash=candidate_hash,
        instance_hash=hash_file(inst.path),
        limits={},
        sandbox=SandboxName.NONE,
        seed=0,
        meta={**inst.meta, "checker": checker_id(t.problem_impl)},
        problem=t.problem,
    )
    seal_key = run_key(output, records_dir, folder)
    batch = KeyedBatch.open(RecordStore(records_dir, key=seal_key), {inst.name: key})
    ctx = ObjectCheck(task=t, folder=folder, key=key, candidate_hash=candidate_hash, attempt=job.attempt)
    run_batch(ctx, batch, PoolOptions(use_ray=False, max_retries=0), BatchHooks(label=t.id))
    (record,) = batch.ordered()
    atomic_write_json(output, [record.to_dict(seal_key)])
    print(f"tcsexam construction run: {t.id}: {record.status} {record.message}".rstrip(), file=sys.stderr)
