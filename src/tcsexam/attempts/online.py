"""The online Solver protocol: the final judge's instance records of a model's own session, taken in
as they are (`tcsexam attempts ingest-online`), and where any attempt's records came from.

Input: `<online_records_dir>/<model>/<task>/<attempt>/records.json`, the spec's record list
(`instance`, `status`, `A` or `solved`; any other field is kept), optionally `provenance.json`
beside it (who judged it, judge version, date: free-form, recorded in the manifest).

Each file is checked entry by entry; one line names the file and the entry on:
malformed JSON, not a list, an entry that is not an object, no instance name, an instance the task
does not define, a repeated instance, a status outside the closed vocabulary, `ok` without a usable
value, a `reward` that is not a number. A missing eligible instance or an `infrastructure_error` is
not malformed: the records are stored as they are and the scorer refuses them, so the attempt's
row is `judge_failed` (the Index incomplete, the issue naming model, task, attempt and instance).

Output, in the results tree like the harness's: `records.json` (one `InstanceRecord` per entry in
the task's instance order, with the task, the attempt and `extra.online_input_sha256`, the sha256 of
the input file, each with the same `digest` as a harness record) and `online-input.json` beside it
(the input's path and sha256, the provenance file and its content), sealed with records.json's sha256.

Where records came from (`records_source`, written into every relative.json): harness records carry
the harness version and the record key `tcsexam run` made them under; ingested ones carry
`online_input_sha256` (a judge's own `key`, `harness_version`, `digest`, `task`, `attempt` or
`schema_version` field, and a field whose value the record's type cannot hold, e.g. a non-object
`extra`, a `wall_s` that is no number or a malformed `trace`, are kept as `judge_<name>`). Records
that carry neither, or mix both, have no protocol and are never scored.
"""

from __future__ import annotations

from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, atomic_write_json, is_finite_number, read_json
from tcsexam.records import STATUSES, InstanceRecord, Status, Termination
from tcsexam.records.integrity import file_sha256, seal
from tcsexam.records.key import ensure_key
from tcsexam.scoring.outcomes import _solve_value
from tcsexam.tasks import Kind

#: extra field of an ingested record: the sha256 of the online input file it came from
ONLINE_MARK = "online_input_sha256"
SIDECAR = "online-input.json"
PROVENANCE = "provenance.json"
_KNOWN = ", ".join(sorted(str(s) for s in STATUSES))
_TERMINATIONS = {str(t) for t in Termination}


def check_online_records(
    data: Json, instances: list[str], kind: str, source: str, task_id: str = "the task"
) -> list[JsonObject]:
    """The entries of an online records file, checked (see the module docstring); InputError
    naming `source` and the entry otherwise."""
    if not isinstance(data, list):
        raise InputError(f"{source}: online records must be a JSON list of objects, not {type(data).__name__}")
    known = set(instances)
    seen: dict[str, int] = {}
    for i, rec in enumerate(data, start=1):
        if type(rec) is not dict:
            raise InputError(f"{source}: entry {i} is not a JSON object")
        name = rec.get("instance")
        if type(name) is not str or not name:
            raise InputError(f"{source}: entry {i} has no instance name (got {name!r})")
        where = f"{source}: entry {i} (instance {name!r})"
        if name in seen:
            raise InputError(f"{where}: duplicate record of the instance (also entry {seen[name]})")
        seen[name] = i
        if name not in known:
            raise InputError(f"{where}: not an instance of {task_id} (its task file defines {len(known)})")
        status = rec.get("status")
        if status not in STATUSES:
            raise InputError(f"{where}: status {status!r} is not one of {_KNOWN}")
        if status == Status.OK:
            if kind == Kind.OBJECTIVE:
                if not is_finite_number(rec.get("A")):
                    raise InputError(f"{where}: status ok but A={rec.get('A')!r} is not a finite number")
            else:
                _solve_value(rec, where)
        reward = rec.get("reward")
        if reward is not None and not is_finite_number(reward):
            raise InputError(f"{where}: reward={reward!r} is not a finite number or null")
    return data


def check_online_file(path: str | Path, task) -> list[JsonObject]:
    """Read and check one online records file against a loaded task."""
    data = read_json(path, "online records file")
    names = [inst.name for inst in task.instances]
    return check_online_records(data, names, task.kind, str(path), f"task {task.id!r}")


#: fields the results tree sets itself (identity, seal, the harness's marks): a judge's own are kept
#: as judge_<name>, so an ingested record is never taken for a harness one and nothing is lost
_HARNESS_OWNED = ("key", "harness_version", "digest", "task", "attempt", "schema_version")


def _is_int(v: Json) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_trace(v: Json) -> bool:
    """The harness's anytime trace: [[t, status, value], ...], t a finite number, value one or null."""
    return isinstance(v, list) and all(
        isinstance(row, list)
        and len(row) == 3
        and is_finite_number(row[0])
        and row[1] in STATUSES
        and (row[2] is None or is_finite_number(row[2]))
        for row in v
    )


#: the record fields with a type the harness's own readers rely on (the anytime profiles read
#: wall_s and trace as numbers), and the test a judge's value must pass to be kept under that name
_TYPED = {
    "extra": lambda v: isinstance(v, dict),
    "message": lambda v: isinstance(v, str),
    "termination": lambda v: v is None or v in _TERMINATIONS,
    "trace": lambda v: v is None or _is_trace(v),
    "claimed": lambda v: v is None or isinstance(v, str) or is_finite_number(v),
    **{n: (lambda v: v is None or is_finite_number(v)) for n in ("wall_s", "cpu_s", "peak_mem_mb")},
    **{n: (lambda v: v is None or _is_int(v)) for n in ("exit_code", "signal")},
    **{
        n: (lambda v: v is None or isinstance(v, str))
        for n in ("sandbox", "limiter", "sandbox_image", "candidate_hash")
    },
}


def _judge_fields(rec: JsonObject) -> JsonObject:
    """A judged entry's fields for an `InstanceRecord`: the harness-owned ones, and any field whose
    value the record's type cannot hold (a non-object `extra`, a `termination` outside the
    vocabulary, a `wall_s` that is no number, a malformed `trace`, ...), renamed judge_<name>."""
    rec = dict(rec)
    for name in list(rec):
        if name in _HARNESS_OWNED or (name in _TYPED and not _TYPED[name](rec[name])):
            rec[f"judge_{name}"] = rec.pop(name)
    return rec


def ingest_online(
    input_path: str | Path, task, model: str, attempt: str, output: str | Path, provenance: str | Path | None = None
) -> JsonObject:
    """Check an online records file and store it as the attempt's records.json plus
    online-input.json; returns the sidecar's content (with the incomplete observations)."""
    input_path, output = Path(input_path), Path(output)
    entries = check_online_file(input_path, task)
    key = ensure_key(output.parent)  # the tree's key (the workflow's, made at start), else one here
    sha = file_sha256(input_path)
    order = {inst.name: k for k, inst in enumerate(task.instances)}
    records = []
    for rec in sorted(entries, key=lambda r: order[r["instance"]]):
        record = InstanceRecord.from_dict(_judge_fields(rec))
        record.task, record.attempt = task.id, str(attempt)
        record.extra = {**record.extra, ONLINE_MARK: sha}
        records.append(record.to_dict(key))
    prov_data = None
    if provenance is not None and Path(provenance).is_file():
        prov_data = read_json(provenance, "provenance file")
    judged = {r["instance"] for r in entries}
    sidecar = {
        "origin": "online_input",
        "model": model,
        "task": task.id,
        "attempt": str(attempt),
        "input": str(input_path),
        "input_sha256": sha,
        "provenance_file": str(provenance) if prov_data is not None else None,
        "provenance_sha256": file_sha256(provenance) if provenance is not None and prov_data is not None else None,
        "provenance": prov_data,
        "records": len(records),
        "infrastructure_errors": [r["instance"] for r in records if r["status"] == Status.INFRASTRUCTURE_ERROR],
        "not_judged": [inst.name for inst in task.instances if inst.name not in judged],
    }
    atomic_write_json(output, records)
    sidecar = seal(sidecar, {"records": output}, at=output.parent / SIDECAR)
    atomic_write_json(output.parent / SIDECAR, sidecar)
    return sidecar


def _sidecar(records_path: str | Path) -> JsonObject:
    """The online-input.json beside a records file ({} where there is none or it is unreadable)."""
    path = Path(records_path).parent / SIDECAR
    if not path.is_file():
        return {}
    try:
        side = read_json(path, "online input file")
    except InputError:
        return {}
    return side if isinstance(side, dict) else {}


def _online_source(sha: object, records_path: str | Path) -> JsonObject:
    source: JsonObject = {"protocol": "online", "origin": "online_input", "input_sha256": sha}
    side = _sidecar(records_path)
    if side.get("input_sha256") == sha:
        source["input"] = side.get("input")
        source["provenance_sha256"] = side.get("provenance_sha256")
    return source


def records_source(data: Json, records_path: str | Path) -> JsonObject | None:
    """Where a records list came from: the harness (`protocol` offline, the record keys) or an
    online input (`protocol` online, the input file's sha256); None when it cannot be told (records
    without either mark, or a mix). An empty list carries no mark: it is online when the sidecar
    beside it says it ingested an empty judged file (the harness never writes an empty list)."""
    if data == []:
        side = _sidecar(records_path)
        sha = side.get("input_sha256")
        if side.get("origin") == "online_input" and side.get("records") == 0 and isinstance(sha, str):
            return _online_source(sha, records_path)
        return None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        return None
    marks = {(r.get("extra") or {}).get(ONLINE_MARK) if isinstance(r.get("extra"), dict) else None for r in data}
    harness = [isinstance(r.get("harness_version"), str) for r in data]
    if None not in marks and len(marks) == 1 and not any(harness):
        return _online_source(marks.pop(), records_path)
    if marks == {None} and all(harness):
        return {
            "protocol": "offline",
            "origin": "harness",
            "record_keys": {str(r.get("instance")): r.get("key") for r in data},
        }
    return None
