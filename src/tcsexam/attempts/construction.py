"""The attempt row of a construction judged by the pipeline (`tcsexam construction row`).

records.json (`tcsexam construction run`: one record) -> the row and the checker's full output:

| record | row |
|---|---|
| ok | valid, score = the record's `reward` (the task's original construction reward, may exceed 1) |
| invalid, certificate_failed, timeout, memout, crash | valid, score 0.0, the status in the note |
| infrastructure_error, a record failing its digest or of another task/attempt | judge_failed |
| no records.json | not_finished |

`score_type` is `original_task_score`. The checker output (checker.json beside row.json, and in
the manifest) keeps task, status, value, reward, claimed, message, the checker's identity, how
the object was submitted, the candidate hash and the record's digest.
"""

from __future__ import annotations

from pathlib import Path

from tcsexam.attempts.rows import AttemptRow, failed_row, write_row
from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, atomic_write_json, read_json
from tcsexam.layout import ResultsLayout, attempt_files
from tcsexam.problems.constructions import checker_id
from tcsexam.records import FAILURE_STATUSES, STATUSES, Status
from tcsexam.records.digest import digest_problem
from tcsexam.records.integrity import seal
from tcsexam.records.key import find_key
from tcsexam.runner.construction import load_construction_task
from tcsexam.suites import Track

TRACK = Track.CONSTRUCTION


def construction_row(
    *, task: str | Path, model: str, attempt: str, records: str | Path, checker_output: str | Path, output: str | Path
) -> AttemptRow:
    """Write the row (`output`) and the checker output (`checker_output`) of one construction attempt."""
    t = load_construction_task(task)  # a broken task file is the operator's error: exit 1
    records = Path(records)
    checker = {"task": t.id, "model": model, "attempt": str(attempt), "checker": checker_id(t.problem_impl)}
    try:
        record = _one_record(records, t.id, str(attempt))
    except InputError as exc:
        status = "not_finished" if not records.exists() else "judge_failed"
        row = failed_row(model, TRACK, t.id, str(attempt), status, str(exc))
        checker.update(status=None, score_status=status, refused=str(exc))
    else:
        row = _row_of(record, t, model, str(attempt), checker["checker"])
        checker.update(_checker_fields(record), score=row.score, score_status=row.score_status)
    inputs = {"records": records} if records.exists() else None
    atomic_write_json(checker_output, seal(checker, inputs, at=checker_output))
    write_row(output, row, inputs)
    return row


def _one_record(path: Path, task: str, attempt: str) -> JsonObject:
    if not path.exists():
        raise InputError(f"{path}: no records (the construction run did not finish)")
    data = read_json(path, "records file")
    if not isinstance(data, list) or len(data) != 1 or not isinstance(data[0], dict):
        raise InputError(f"{path}: a construction run has exactly one record")
    rec = data[0]
    problem = digest_problem(rec, find_key(path))
    if problem is not None:
        raise InputError(f"{path}: the record fails its integrity check ({problem})")
    if rec.get("status") not in STATUSES:
        raise InputError(f"{path}: unknown status {rec.get('status')!r}")
    for key, want in (("task", task), ("attempt", attempt)):
        if rec.get(key) is not None and str(rec[key]) != want:
            raise InputError(f"{path}: the record belongs to {key} {rec[key]!r}, not {want!r}")
    return rec


def _checker_fields(rec: JsonObject) -> JsonObject:
    """The record's verdict; a failed run's reward is 0.0, as its row's score, whether the checker
    rejected the object or the run wrote none (timeout, crash: the runner's record has no reward)."""
    extra = rec.get("extra") or {}
    failed = rec.get("status") in FAILURE_STATUSES
    return {
        "status": rec.get("status"),
        "value": rec.get("A"),
        "reward": 0.0 if failed else rec.get("reward"),
        "claimed": rec.get("claimed"),
        "message": rec.get("message", ""),
        "submission": extra.get("submission", "solver.yaml"),
        "candidate_hash": rec.get("candidate_hash"),
        "wall_s": rec.get("wall_s"),
        "record_digest": rec.get("digest"),
    }


def _row_of(rec: JsonObject, t, model: str, attempt: str, checker: str) -> AttemptRow:
    status = rec["status"]
    message = rec.get("message") or ""
    if status == Status.OK:
        reward = rec.get("reward")
        if reward is None:
            note = f"{checker}: verified value {rec.get('A')} but the task has no baseline/reference for a reward"
            return failed_row(model, TRACK, t.id, attempt, "judge_failed", note)
        score, note = float(reward), f"{checker}: ok, value {rec.get('A')}, reward {float(reward):.6g}"
    elif status in FAILURE_STATUSES:
        score, note = 0.0, f"{checker}: {status}" + (f": {message}" if message else "")
    else:
        return failed_row(model, TRACK, t.id, attempt, "judge_failed", f"{checker}: {status}: {message}")
    return AttemptRow(model, TRACK, t.id, attempt, score, "selected", "valid", "original_task_score", "", note)


def checker_outputs(run_dir: str | Path) -> JsonObject:
    """model -> item -> attempt -> the checker output (checker.json) of every construction the
    run judged: what the manifest keeps beside the rows."""
    out: JsonObject = {}
    for model, item, attempt, path in attempt_files(ResultsLayout(Path(run_dir)).construction_dir, "checker.json"):
        data = read_json(path, "construction checker output")
        out.setdefault(model, {}).setdefault(item, {})[attempt] = {k: v for k, v in data.items() if k != "model"}
    return out
