"""Instance records -> the outcome arrays that scoring and reference building consume.

A records file is the final judge's JSON list of instance records (`InstanceRecord.to_dict()` or
the spec's minimal `{"instance", "status", "A"}`/`{"instance", "status", "solved"}` objects).
Extra fields (wall_s, claimed, key, ...) are ignored. One pass over the list validates every
record and fills numpy arrays; everything after that is vectorised.

Rules (the spec's "From instance records to a task score"):
- `ok` needs a usable value: objective tasks a finite number `A`; solve tasks a Boolean `solved`
  or `A` in {0, 1, true, false} (when both are given they must agree).
- `timeout`, `memout`, `crash`, `invalid`, `certificate_failed`: a completed solver failure.
- `infrastructure_error`, an unknown status, a missing or repeated instance name: refused.
- `reward` (the checker's original reward) is kept when it is a finite number; null or absent
  means the record carries no reward; anything else is refused.
- a record carrying a `digest` (every record `tcsexam run` writes) must match it under the record
  key of the tree the file is in (`source` is the file's path; `tcsexam.records.key`): an edited
  record is never scored. With `require_digest` (the workflow) a record without one is refused too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import is_finite_number
from tcsexam.records import FAILURE_STATUSES, REFUSED_STATUSES, STATUSES, Status
from tcsexam.records.digest import DIGEST_FIELD, digest_problem
from tcsexam.records.key import RecordKey, find_key
from tcsexam.tasks import Kind

_KNOWN = ", ".join(sorted(STATUSES))


@dataclass(frozen=True)
class Outcomes:
    """Validated outcomes of one run of a task, in record order."""

    names: list[str]
    statuses: list[Status]
    values: np.ndarray  #: float64; the objective or 1.0/0.0 for ok records, NaN otherwise
    ok: np.ndarray  #: bool; status == ok
    rewards: np.ndarray  #: float64; the record's finite reward, NaN when it carries none
    position: dict[str, int]  #: instance name -> index

    def __len__(self) -> int:
        return len(self.names)


def _solve_value(rec: dict, where: str) -> float:
    solved = rec.get("solved")
    a = rec.get("A")
    if a is not None:
        if a is True or a is False or (type(a) in (int, float) and a in (0, 1)):
            a = float(a)
        else:
            raise InputError(f"{where}: status ok but A={a!r} is not a solved indicator (0/1/true/false)")
    if solved is not None:
        if solved is not True and solved is not False:
            raise InputError(f"{where}: 'solved' must be true or false, not {solved!r}")
        if a is not None and a != float(solved):
            raise InputError(f"{where}: 'solved'={solved} disagrees with A={rec.get('A')!r}")
        return float(solved)
    if a is None:
        raise InputError(f"{where}: status ok but no 'solved' (or A) value")
    return a


def parse_outcomes(records, kind: str, source: str, *, require_digest: bool = False) -> Outcomes:
    """Validate a decoded records list; `source` (the file name) prefixes every error message and
    says where the record key that checks the digests is (`find_key(source)`)."""
    if not isinstance(records, list):
        raise InputError(f"{source}: records must be a JSON list of objects, not {type(records).__name__}")
    n = len(records)
    names: list[str] = []
    statuses: list[Status] = []
    position: dict[str, int] = {}
    values = np.full(n, np.nan)
    ok = np.zeros(n, dtype=bool)
    rewards = np.full(n, np.nan)
    objective = kind == Kind.OBJECTIVE
    key: RecordKey | None = None  # looked up at the first record that carries a digest
    key_looked_up = False
    for i, rec in enumerate(records):
        if type(rec) is not dict:
            raise InputError(f"{source}: record {i + 1} is not a JSON object")
        name = rec.get("instance")
        if type(name) is not str or not name:
            raise InputError(f"{source}: record {i + 1} has no instance name (got {name!r})")
        if name in position:
            raise InputError(
                f"{source}: instance {name!r}: duplicate record (records {position[name] + 1} and {i + 1})"
            )
        position[name] = i
        if require_digest or DIGEST_FIELD in rec:
            if not key_looked_up:
                key, key_looked_up = find_key(source), True
            problem = digest_problem(rec, key)
            if problem is not None:
                raise InputError(
                    f"{source}: instance {name!r}: record {i + 1} fails its integrity check ({problem}); "
                    "it is never scored: rerun the task (the damaged record is set aside and redone)"
                )
        status = rec.get("status")
        if status == Status.OK:
            if objective:
                a = rec.get("A")
                if not is_finite_number(a):
                    raise InputError(f"{source}: instance {name!r}: status ok but A={a!r} is not a finite number")
                values[i] = a
            else:
                values[i] = _solve_value(rec, f"{source}: instance {name!r}")
            ok[i] = True
        elif status not in FAILURE_STATUSES:
            if status in REFUSED_STATUSES:
                raise InputError(
                    f"{source}: instance {name!r}: status {status}: the harness failed, not the solver; "
                    "repair the judging input before scoring (offline: tcsexam repair, then rerun; online: "
                    "judge the instance again)"
                )
            raise InputError(f"{source}: instance {name!r}: unknown status {status!r} (expected one of {_KNOWN})")
        reward = rec.get("reward")
        if reward is not None:
            if not is_finite_number(reward):
                raise InputError(f"{source}: instance {name!r}: reward={reward!r} is not a finite number or null")
            rewards[i] = reward
        names.append(name)
        statuses.append(Status(status))
    return Outcomes(names, statuses, values, ok, rewards, position)
