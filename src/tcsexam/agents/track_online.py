"""The online protocol from a Solver-track session (`agents.tracks`): the candidate a session
ended with, judged once on the task's evaluation instances by the same harness as `tcsexam run`
(`runner.solver.orchestrate.run_job`: the build step, the project's sandbox, the task's limits, every
certificate checked), its records published as the model's online records in the layout the
workflow's `protocol: online` path reads (`attempts.online`, config `online_records_dir`):

```
<online_dir>/<model>/<item>/<attempt>/records.json     the judge's records (what ingest-online takes)
<online_dir>/<model>/<item>/<attempt>/provenance.json  who judged what: the harness, the task, the
                                                       candidate's sha256, the session's record
```

The offline protocol re-judges the same candidate folder (`solvers/<model>/<item>/<attempt>/`) in
the workflow's own results tree: the two never share a file, and both come from one generation.

The judge's working records are kept in the run folder (`online/<item>/records.json` and
`records/`, the harness's resume point). Only a judgment without an `infrastructure_error` is
published; one with an infrastructure failure stays in the run folder (`online/<item>/
online.json` says which instances) and the run is incomplete until a rerun judges those instances
again (the harness reuses the records it already has, never an infrastructure_error). A published
judgment whose provenance names the attempt folder's current candidate is judged: a rerun leaves it.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from tcsexam import HARNESS_VERSION
from tcsexam.agents.accounting import GenerationRecord
from tcsexam.attempts.online import PROVENANCE
from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, atomic_write_json, read_json
from tcsexam.limits import DEFAULT_SEED
from tcsexam.records import Status
from tcsexam.records.digest import hash_candidate, hash_file
from tcsexam.runner.construction import PROGRAM_NAME
from tcsexam.runner.engine.batch import RunOptions
from tcsexam.runner.solver.orchestrate import TaskJob, run_job

RECORDS = "records.json"
#: the judge's note in the run folder (`online/<item>/online.json`)
NOTE = "online.json"
JUDGE = "tcsexam agents solve (online protocol)"


class OnlineJudgment(StrEnum):
    """What the online judge did with an item (its note's `status`)."""

    JUDGED = "judged"  #: judged now and published
    ALREADY_JUDGED = "already_judged"  #: published before for this very candidate: left alone
    NO_CANDIDATE = "no_candidate"  #: the session left no solver.yaml: no online records
    INFRASTRUCTURE_ERROR = Status.INFRASTRUCTURE_ERROR.value  #: not published; a rerun judges again


@dataclass(frozen=True)
class OnlineJudge:
    """Where and how the sessions' candidates are judged: the published layout's root, the run
    folder's working area, the harness options, the seed, and what the candidate must not see."""

    online_dir: Path
    work_dir: Path
    run: RunOptions
    seed: int = DEFAULT_SEED
    hidden: tuple[str, ...] = ()

    def published(self, model: str, item: str, attempt: str) -> Path:
        return Path(self.online_dir) / model / item / attempt

    def work(self, item: str) -> Path:
        return Path(self.work_dir) / item


def judged(folder: Path, candidate_hash: str, instances: list[str] | None = None) -> bool:
    """Published online records of exactly this candidate on these instances (provenance.json is
    written last)."""
    prov = folder / PROVENANCE
    if not (folder / RECORDS).is_file() or not prov.is_file():
        return False
    try:
        data = read_json(prov, "online provenance file")
    except InputError:
        return False
    chosen = list(instances) if instances else "all"
    return isinstance(data, dict) and data.get("candidate_sha256") == candidate_hash and data.get("instances") == chosen


def judge_online(
    judge: OnlineJudge,
    *,
    model: str,
    item: str,
    attempt: str,
    task_file: Path,
    candidate: Path,
    record: GenerationRecord,
    instances: list[str] | None = None,
) -> JsonObject:
    """Judge the session's candidate (`candidate`, the attempt folder) on the task's evaluation
    instances (`instances`: these only, a workflow's `run.instances`) once and publish its records;
    returns the note (`status`: judged, already_judged,
    no_candidate, infrastructure_error)."""
    dest = judge.published(model, item, attempt)
    work = judge.work(item)
    if not (candidate / PROGRAM_NAME).is_file():
        return {"status": OnlineJudgment.NO_CANDIDATE.value, "item": item}
    digest = hash_candidate(candidate)
    if judged(dest, digest, instances):
        return {"status": OnlineJudgment.ALREADY_JUDGED.value, "item": item, "records": str(dest / RECORDS)}
    output = work / RECORDS
    job = TaskJob(
        task=task_file,
        candidate_dir=candidate,
        output=output,
        records_dir=work / "records",
        attempt=attempt,
        seed=judge.seed,
        hidden=judge.hidden,
        instances=list(instances) if instances else None,
    )
    summary = run_job(job, judge.run)
    records = read_json(output, "online judge records")
    infra = [str(r.get("instance")) for r in records if r.get("status") == Status.INFRASTRUCTURE_ERROR]
    note: JsonObject = {
        "item": item,
        "candidate_sha256": digest,
        "instances": len(records),
        "statuses": dict(sorted(summary.statuses.items())),
    }
    if infra:  # never the model's: not published, the run stays incomplete until a rerun
        note.update(status=OnlineJudgment.INFRASTRUCTURE_ERROR.value, infrastructure_errors=infra)
        atomic_write_json(work / NOTE, note)
        return note
    (dest / PROVENANCE).unlink(missing_ok=True)
    dest.mkdir(parents=True, exist_ok=True)
    atomic_write_json(dest / RECORDS, records)
    provenance = {
        "judge": JUDGE,
        "protocol": "online",
        "harness_version": HARNESS_VERSION,
        "judged_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "model": model,
        "item": item,
        "attempt": attempt,
        "task_file": str(task_file),
        "task_sha256": hash_file(task_file),
        "candidate": str(candidate),
        "candidate_sha256": digest,
        "seed": judge.seed,
        "instances": list(instances) if instances else "all",
        "sandbox": judge.run.sandbox,
        "limiter": judge.run.limiter,
        "records_sha256": hash_file(dest / RECORDS),
        "session": {
            "sample_uuid": record.sample_uuid,
            "log_file": record.log_file,
            "stop_reason": str(record.stop_reason),
        },
    }
    atomic_write_json(dest / PROVENANCE, provenance)  # last: the judgment is published
    note.update(status=OnlineJudgment.JUDGED.value, records=str(dest / RECORDS))
    atomic_write_json(work / NOTE, note)
    return note
