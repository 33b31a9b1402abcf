"""The execution record of one OR-Space Build/Revise workspace, and how a run's end becomes its
OR-Space status.

A workspace is a kind of candidate: its records live in the runner's `RecordStore` (one file per
workspace, `<out>/records/<workspace_id>.json`, with a digest of its own content and the runner's
key scheme) and run through the runner's pool (same retries, same `infrastructure_error` policy).
What differs from a Solver instance record is the vocabulary: `status` is the program's own
status string ("Optimal", "Not Optimal", "Infeasible", ..., or the harness's "Timeout", "Error",
"Missing"), `failure_mode` an `objectives.FailureMode` (None when nothing failed; never `none` nor
`wrong_objective`, which only scoring knows), `infrastructure_error` when the harness failed, not
the program (never reused, never scored).

`outcome_verdict` is the one place where a finished process (its `Termination`, exit code and
signal) and what the program reported become (status, objective, failure_mode, message).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from tcsexam.containment import Limiter, SandboxName
from tcsexam.fileio import Json, JsonObject
from tcsexam.orspace.objectives import FailureMode, status_failure_mode
from tcsexam.orspace.release import Mode
from tcsexam.records import StoredRecord, Termination, VocabularyField
from tcsexam.records.key import RecordKey

#: the version of the written record (2 dropped `time_limit_s`, which repeated
#: `limits.wall_s`; `from_dict` still reads version 1)
SCHEMA_VERSION = 2
#: the attribution evidence a program left (`capture`), written only when present
EVIDENCE_FIELDS = ("files_read", "model_lp")
#: the fields of a record that make its line of predictions.jsonl, in order
PREDICTION_FIELDS = ("workspace_id", "status", "objective", "failure_mode", "solver", "condition")
#: every value a workspace record's `failure_mode` may hold besides None
RECORD_FAILURE_MODES = frozenset(FailureMode) - {FailureMode.NONE, FailureMode.WRONG_OBJECTIVE}

#: why a program that did not exit 0 is an execution error (the rest say their exit code)
_ERROR_MESSAGES = {
    Termination.MEMORY: "memory limit exceeded",
    Termination.OUTPUT: "output limit exceeded",
    Termination.NPROC: "process limit exceeded",
}


@dataclass
class WorkspaceRecord(StoredRecord):
    """The outcome of one Build/Revise workspace's program (fields in the order they are written)."""

    workspace_id: str
    mode: VocabularyField[Mode | None] = VocabularyField(Mode)
    workspace: str | None = None
    limits: JsonObject | None = None  #: `Limits.as_dict()`: the time limit is its `wall_s`
    sandbox: VocabularyField[SandboxName | None] = VocabularyField(SandboxName)
    harness_version: str | None = None
    key: str | None = None
    entry_point: str | None = None
    exit_code: int | None = None
    signal: int | None = None
    termination: VocabularyField[Termination | None] = VocabularyField(Termination)
    wall_s: float | None = None
    cpu_s: float | None = None
    peak_mem_mb: float | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    limiter: VocabularyField[Limiter | None] = VocabularyField(Limiter)
    status_source: str = "none"
    solver: str | None = None  #: `solvers.detect_solver`: gurobi, copt, highs, cbc, ... or unknown
    condition: str | None = None  #: the stage condition's slug (from the staged manifest), if any
    message: str = ""
    status: str | None = None
    objective: float | None = None
    failure_mode: VocabularyField[FailureMode | None] = VocabularyField(FailureMode)
    files_read: list[str] | None = None  #: files under the task root the program opened (`capture`)
    model_lp: str | None = None  #: its last PuLP/highspy model as LP text (`capture`), if captured
    tries: int | None = None  #: how many runs it took, when more than one (written only then)
    schema_version: int = SCHEMA_VERSION
    digest: str | None = None  #: sha256 of the record's other fields, set by to_dict

    NAME_FIELD = "workspace_id"
    NOUN = "workspace"
    KIND = "workspace record"
    HARNESS_FAILURE = ("failure_mode", FailureMode.INFRASTRUCTURE_ERROR)

    def prediction(self) -> JsonObject:
        """The record's line of predictions.jsonl."""
        return {name: getattr(self, name) for name in PREDICTION_FIELDS}

    def to_dict(self, key: RecordKey | None = None) -> JsonObject:
        """The record as written: `schema_version` first, `limiter` only when a program ran, the
        evidence fields only when captured,
        `tries` only when set, `digest` (the HMAC under `key`; none without one) last."""
        data = {"schema_version": self.schema_version}
        data.update((name, getattr(self, name)) for name in self.field_names() if name not in _NOT_IN_BODY)
        for name in ("limiter", *EVIDENCE_FIELDS):  # written only when a program ran / left evidence
            if data[name] is None:
                del data[name]
        if self.tries is not None:
            data["tries"] = self.tries
        return self._written(data, key)

    @classmethod
    def from_dict(cls, data: JsonObject) -> Self:
        """The record `data` holds, of this version or an earlier one (read as this version: its
        `schema_version` is then this one's); TypeError naming what is wrong otherwise."""
        version = data.get("schema_version", SCHEMA_VERSION)
        if version == 1:
            data = _from_version_1(data)
        elif version != SCHEMA_VERSION:
            raise TypeError(f"schema_version {version!r} is not one this harness reads (1 to {SCHEMA_VERSION})")
        unknown = sorted(set(data) - cls._field_set())
        if unknown:
            raise TypeError(f"unknown field {unknown[0]!r}")
        return cls(**data)

    @classmethod
    def shape_problem(cls, data: Json) -> str | None:
        """Why decoded JSON is not a workspace record (None when it is one)."""
        if not isinstance(data, dict) or not isinstance(data.get("workspace_id"), str):
            return "not a workspace record (no 'workspace_id')"
        if data.get("failure_mode") is not None and data["failure_mode"] not in RECORD_FAILURE_MODES:
            return f"not a workspace record (unknown failure_mode {data['failure_mode']!r})"
        return None


#: what version 1 records held beside `limits`: its `wall_s` again (read, then dropped)
LEGACY_TIME_LIMIT = "time_limit_s"
_NOT_IN_BODY = frozenset({"schema_version", "tries", "digest"})


def _from_version_1(data: JsonObject) -> JsonObject:
    """A version 1 record's fields as version 2's: `time_limit_s` dropped, which the harness always
    wrote equal to `limits.wall_s` (a record where they differ is refused, not silently changed)."""
    if LEGACY_TIME_LIMIT in data:
        wall_s = (data.get("limits") or {}).get("wall_s")
        if data[LEGACY_TIME_LIMIT] != wall_s:
            raise TypeError(
                f"version 1 field {LEGACY_TIME_LIMIT!r} is {data[LEGACY_TIME_LIMIT]!r}, not its limits' wall_s {wall_s!r}"
            )
    return {**{k: v for k, v in data.items() if k != LEGACY_TIME_LIMIT}, "schema_version": SCHEMA_VERSION}


def outcome_verdict(
    termination: str,
    exit_code: int | None,
    signal: int | None,
    derived: JsonObject,
    time_limit_s: float,
    solver: str | None = None,
) -> JsonObject:
    """status, objective, failure_mode and message of a program that ran to its end (the only
    mapping from a runner `Termination` to OR-Space's vocabulary). `derived` is `result.derive`'s,
    `solver` the one the submission used (`objectives.status_failure_mode`)."""
    term = Termination(termination)
    if term in (Termination.WALLTIME, Termination.CPUTIME):
        return {
            "status": "Timeout",
            "objective": None,
            "failure_mode": FailureMode.TIMEOUT,
            "message": f"{term} limit exceeded ({time_limit_s:g} s wall); any answer after the limit is ignored",
        }
    if not (term == Termination.EXIT and exit_code == 0):
        if term == Termination.SIGNAL:
            why = f"killed by signal {signal}"
        else:
            why = _ERROR_MESSAGES.get(term, f"exit code {exit_code}")
        return {"status": "Error", "objective": None, "failure_mode": FailureMode.EXECUTION_ERROR, "message": why}
    if derived["status"] is None:
        return {
            "status": "Missing",
            "objective": derived["objective"],
            "failure_mode": FailureMode.MISSING_OUTPUT,
            "message": derived["note"] or "no result file, no OBJECTIVE_VALUE/status line",
        }
    status, message = derived["status"], derived["note"]
    failure = None
    if status.lower() != "optimal":
        failure = status_failure_mode(status, solver)
        if failure == FailureMode.TIMEOUT:  # the solver's own limit: the program ended inside the harness's
            failure = FailureMode.NOT_OPTIMAL
            message = "; ".join(m for m in (message, f"the solver stopped on its own limit ({status})") if m)
    elif derived["objective"] is None:
        failure = FailureMode.MISSING_OUTPUT
    return {"status": status, "objective": derived["objective"], "failure_mode": failure, "message": message}
