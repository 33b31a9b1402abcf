"""Fixed Solver references: the file format, loading with validation, building, merging, checking.

A reference file (JSON) freezes K repeated reference runs per instance::

    {"schema_version": 1, "reference_id": "tcsexam-bundled-k3-v4", "suite": "lite",
     "scale_floors": {"relative": 0.02, "absolute": 1e-9},
     "tasks": {"maxcut-mqlib": {"kind": "objective", "direction": "maximize",
                                "instances": {"G1": [11500, 11510, 11490]}}},
     "unscored_reference_instances": {"maxcut-mqlib": {"G81": [14000]}}}

- `schema_version` (1), `reference_id` (non-empty string), `scale_floors` (both `relative` >= 0
  and `absolute` > 0) and `tasks` (at least one) are required; `suite` (string),
  `unscored_reference_instances`, `description` (string) and `metadata` (object) are optional;
  other keys are refused (a typo must not silently change a score).
- A task needs `kind` (objective|solve), `direction` (maximize|minimize) and `instances` (at least
  one), and may override the floors with its own `scale_floors` (either key or both).
- Values are numbers for `objective` and true/false or 0/1 for `solve`; `null` marks a failed
  reference run and is not usable. Every eligible instance needs at least two usable values.
- `unscored_reference_instances` keeps the observed outcomes (same value rules, any count) of
  instances that had fewer than two usable outcomes; they are not scored. An instance is either
  eligible or unscored, never both.

`lite` and `full` resolve to `references/lite.json` and `references/full.json` of the project
(the bundled references); anything else is a path.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, read_json
from tcsexam.paths import references_dir
from tcsexam.schemas import check
from tcsexam.scoring.outcomes import parse_outcomes
from tcsexam.tasks import DIRECTIONS, KINDS, Kind

SCHEMA_VERSION = 1
STANDARD_FLOORS = {"relative": 0.02, "absolute": 1e-9}
NAMED_REFERENCES = {"lite": "lite.json", "full": "full.json"}


@dataclass(frozen=True)
class ReferenceTask:
    """One task of a reference: eligible instances with their frozen values and the derived
    per-instance mu (mean of usable values) and scale = max(s, relative*|mu|, absolute)."""

    task: str
    kind: str
    direction: str
    relative_floor: float
    absolute_floor: float
    instances: dict[str, list]  #: eligible instance -> raw values (numbers, booleans, null)
    unscored: dict[str, list]  #: unscored reference instance -> observed outcomes

    @cached_property
    def names(self) -> list[str]:
        return list(self.instances)

    @cached_property
    def index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.instances)}

    @cached_property
    def _stats(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows = list(self.instances.values())
        width = max(map(len, rows))
        if all(len(r) == width for r in rows):
            table = np.array(rows, dtype=np.float64)  # None -> NaN, True/False -> 1.0/0.0
        else:  # ragged: pad with NaN (not usable)
            table = np.full((len(rows), width), np.nan)
            for i, row in enumerate(rows):
                table[i, : len(row)] = np.array(row, dtype=np.float64)
        usable = ~np.isnan(table)
        count = usable.sum(axis=1)
        filled = np.where(usable, table, 0.0)
        mu = filled.sum(axis=1) / count
        dev = np.where(usable, table - mu[:, None], 0.0)
        s = np.sqrt((dev * dev).sum(axis=1) / (count - 1))
        scale = np.maximum(np.maximum(s, self.relative_floor * np.abs(mu)), self.absolute_floor)
        return mu, s, scale

    @property
    def mu(self) -> np.ndarray:
        return self._stats[0]

    @property
    def sd(self) -> np.ndarray:
        return self._stats[1]

    @property
    def scale(self) -> np.ndarray:
        return self._stats[2]

    def to_dict(self, top_floors: dict[str, float]) -> JsonObject:
        out: JsonObject = {"kind": self.kind, "direction": self.direction}
        floors = {"relative": self.relative_floor, "absolute": self.absolute_floor}
        if floors != top_floors:
            out["scale_floors"] = floors
        out["instances"] = self.instances
        return out


@dataclass(frozen=True)
class Reference:
    reference_id: str
    suite: str | None
    scale_floors: dict[str, float]
    tasks: dict[str, ReferenceTask]
    source: str = "<reference>"
    description: str | None = None
    metadata: dict | None = None

    def task(self, task: str) -> ReferenceTask:
        try:
            return self.tasks[task]
        except KeyError:
            known = ", ".join(self.tasks)
            raise InputError(
                f"{self.source}: reference {self.reference_id!r} has no task {task!r} (it has: {known})"
            ) from None

    @property
    def n_eligible(self) -> int:
        return sum(len(t.instances) for t in self.tasks.values())

    @property
    def n_unscored(self) -> int:
        return sum(len(t.unscored) for t in self.tasks.values())

    def to_dict(self) -> JsonObject:
        out: JsonObject = {"schema_version": SCHEMA_VERSION, "reference_id": self.reference_id}
        if self.suite is not None:
            out["suite"] = self.suite
        if self.description is not None:
            out["description"] = self.description
        out["scale_floors"] = dict(self.scale_floors)
        out["tasks"] = {name: t.to_dict(self.scale_floors) for name, t in self.tasks.items()}
        out["unscored_reference_instances"] = {name: t.unscored for name, t in self.tasks.items() if t.unscored}
        if self.metadata is not None:
            out["metadata"] = self.metadata
        return out


# ---------------------------------------------------------------------------------------------
# validation


def _where(source: str, path: list) -> str:
    """A place in a reference file in its own words: `FILE: task 't' instance 'G1'`,
    `FILE: unscored_reference_instances: task 't'`, `FILE: scale_floors.absolute`."""
    head, rest = source, [str(p) for p in path]
    if rest[:1] == ["unscored_reference_instances"] and len(rest) > 1:
        head, rest = f"{source}: unscored_reference_instances: task {rest[1]!r}", rest[2:]
        if rest:
            head, rest = f"{head} instance {rest[0]!r}", rest[1:]
    elif rest[:1] == ["tasks"] and len(rest) > 1:
        head, rest = f"{source}: task {rest[1]!r}", rest[2:]
        if rest[:1] == ["instances"] and len(rest) > 1:
            head, rest = f"{head} instance {rest[1]!r}", rest[2:]
    return f"{head}: {'.'.join(rest)}" if rest else head


def _check_values(values: Json, kind: str, where: str) -> int:
    """Check one instance's values against its task's kind; return the number of usable values."""
    if not isinstance(values, list):
        raise InputError(f"{where}: values must be a list, not {values!r}")
    usable = 0
    for j, v in enumerate(values):
        if v is None:
            continue
        if kind == Kind.OBJECTIVE:
            if type(v) not in (int, float) or not math.isfinite(v):
                raise InputError(f"{where}: value {j + 1} ({v!r}) is not a finite number or null")
        elif not (v is True or v is False or (type(v) in (int, float) and v in (0, 1))):
            raise InputError(f"{where}: value {j + 1} ({v!r}) is not a solved indicator (true/false/0/1) or null")
        usable += 1
    return usable


def _float_floors(raw: JsonObject, inherit: dict[str, float], where: str) -> dict[str, float]:
    """A schema-checked `scale_floors` object as floats, keys it leaves out taken from `inherit`."""
    out = {key: float(raw[key]) if key in raw else inherit[key] for key in ("relative", "absolute")}
    for key, value in out.items():
        if not math.isfinite(value):  # NaN passes every comparison of a schema
            raise InputError(f"{where}.{key}: must be a finite number, not {value!r}")
    return out


def reference_from_dict(data: Json, source: str = "<reference>") -> Reference:
    """Validate a decoded reference file against `schemas/reference.schema.yaml`, then each value
    against its task's kind; every error is one line naming the file, task and instance."""
    check(data, "reference", source, lambda path: _where(source, path))
    floors = _float_floors(data["scale_floors"], {}, f"{source}: scale_floors")
    raw_tasks = data["tasks"]
    raw_unscored = data.get("unscored_reference_instances") or {}
    for name in raw_unscored:
        if name not in raw_tasks:
            raise InputError(f"{source}: unscored_reference_instances: task {name!r} is not in tasks")
    tasks: dict[str, ReferenceTask] = {}
    for name, raw in raw_tasks.items():
        kind, instances = raw["kind"], raw["instances"]
        for inst, values in instances.items():
            iwhere = _where(source, ["tasks", name, "instances", inst])
            if not inst:
                raise InputError(f"{_where(source, ['tasks', name])}: instances: an instance name is empty")
            usable = _check_values(values, kind, iwhere)
            if usable < 2:
                raise InputError(
                    f"{iwhere}: {usable} usable value(s); an eligible instance needs at least two "
                    "(list it under unscored_reference_instances instead)"
                )
        unscored = raw_unscored.get(name, {})
        for inst, values in unscored.items():
            iwhere = _where(source, ["unscored_reference_instances", name, inst])
            if not inst:
                raise InputError(f"{_where(source, ['unscored_reference_instances', name])}: an instance name is empty")
            if inst in instances:
                raise InputError(f"{iwhere}: listed both as eligible and as unscored")
            _check_values(values, kind, iwhere)
        task_floors = _float_floors(
            raw.get("scale_floors", {}), floors, _where(source, ["tasks", name, "scale_floors"])
        )
        tasks[name] = ReferenceTask(
            name, kind, raw["direction"], task_floors["relative"], task_floors["absolute"], instances, unscored
        )
    return Reference(
        data["reference_id"], data.get("suite"), floors, tasks, source, data.get("description"), data.get("metadata")
    )


def resolve_reference_path(spec: str | Path) -> Path:
    """`lite`/`full` -> the bundled files under references/; anything else is a path."""
    if isinstance(spec, str) and spec in NAMED_REFERENCES:
        return references_dir() / NAMED_REFERENCES[spec]
    return Path(spec)


def load_reference(spec: str | Path) -> Reference:
    path = resolve_reference_path(spec)
    return reference_from_dict(read_json(path, "reference file"), str(path))


# ---------------------------------------------------------------------------------------------
# building, merging, checking


def build_reference(
    task: str,
    kind: str,
    direction: str,
    runs: Sequence[tuple[str, Any]],
    reference_id: str,
    *,
    suite: str | None = None,
    floors: dict[str, float] | None = None,
) -> JsonObject:
    """A one-task reference from K repeated runs: `runs` holds (source name, decoded records list).

    Each run must hold the same instances. Per run and instance the usable outcome is the verified
    value of an `ok` record; for `solve` tasks a completed solver failure (timeout, crash, ...)
    counts as unsolved (false), for `objective` tasks it is null (no value). Instances with at
    least two usable outcomes become eligible; the others go to `unscored_reference_instances`
    with their observed outcomes. `infrastructure_error` and unknown statuses are refused.
    """
    if kind not in KINDS:
        raise InputError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if direction not in DIRECTIONS:
        raise InputError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
    if len(runs) < 2:
        raise InputError(f"task {task!r}: a reference needs at least two runs, got {len(runs)}")
    if not reference_id or not reference_id.strip():
        raise InputError("reference id must be a non-empty string")
    floors = dict(floors if floors is not None else STANDARD_FLOORS)  # checked when the result is loaded below
    parsed = [(name, parse_outcomes(records, kind, name)) for name, records in runs]
    first_name, first = parsed[0]
    if len(first) == 0:
        raise InputError(f"{first_name}: no records")
    columns: list[list] = []
    for name, out in parsed:
        missing = [n for n in first.names if n not in out.position]
        if missing:
            raise InputError(f"{name}: instance {missing[0]!r} is missing (present in {first_name})")
        extra = [n for n in out.names if n not in first.position]
        if extra:
            raise InputError(f"{name}: instance {extra[0]!r} is not in {first_name}")
        order = np.fromiter((out.position[n] for n in first.names), dtype=np.int64, count=len(first))
        vals = out.values[order]
        ok = out.ok[order]
        if kind == Kind.OBJECTIVE:
            col = [_plain(v) if good else None for v, good in zip(vals.tolist(), ok.tolist())]
        else:  # solved indicator; a completed failure is unsolved
            col = [bool(v == 1.0) if good else False for v, good in zip(vals.tolist(), ok.tolist())]
        columns.append(col)
    eligible: dict[str, list] = {}
    unscored: dict[str, list] = {}
    for i, inst in enumerate(first.names):
        values = [col[i] for col in columns]
        usable = sum(v is not None for v in values)
        (eligible if usable >= 2 else unscored)[inst] = values
    if not eligible:
        raise InputError(f"task {task!r}: no instance has two usable outcomes; nothing to score against")
    data: JsonObject = {"schema_version": SCHEMA_VERSION, "reference_id": reference_id}
    if suite is not None:
        data["suite"] = suite
    data["scale_floors"] = floors
    data["tasks"] = {task: {"kind": kind, "direction": direction, "instances": eligible}}
    data["unscored_reference_instances"] = {task: unscored} if unscored else {}
    data["metadata"] = {"built_from_runs": [Path(name).name for name, _ in runs]}
    reference_from_dict(data, f"reference for task {task!r}")  # the result must load
    return data


def _plain(v: float) -> int | float:
    """Integral values stay integers in the file (11500, not 11500.0)."""
    return int(v) if v.is_integer() and abs(v) < 2**53 else v


def merge_references(
    refs: Sequence[Reference],
    *,
    suite: str | None = None,
    tasks: Iterable[str] | None = None,
    carry_to: str | None = None,
) -> JsonObject:
    """Combine references that share one reference_id (e.g. per-task files) into one file.

    `tasks` selects and orders a subset (e.g. Lite's tasks out of Full). A task present in two
    inputs is refused. Floors: the first input's top-level floors; a task whose floors differ keeps
    them as its own override. `carry_to` writes the (unchanged) values under a new reference_id,
    recording the old one in metadata `carried_from`: how a new reference version keeps the frozen
    values of tasks it does not rebuild.
    """
    if not refs:
        raise InputError("nothing to merge")
    ref_id = refs[0].reference_id
    for ref in refs[1:]:
        if ref.reference_id != ref_id:
            raise InputError(
                f"{ref.source}: reference_id {ref.reference_id!r} differs from {refs[0].source}'s {ref_id!r}"
            )
    merged: dict[str, ReferenceTask] = {}
    owner: dict[str, str] = {}
    for ref in refs:
        for name, task in ref.tasks.items():
            if name in merged:
                raise InputError(f"{ref.source}: task {name!r} is also in {owner[name]}")
            merged[name] = task
            owner[name] = ref.source
    if tasks is not None:
        chosen = {}
        for name in tasks:
            if name not in merged:
                raise InputError(f"task {name!r} is in none of the inputs ({', '.join(r.source for r in refs)})")
            chosen[name] = merged[name]
        merged = chosen
    metadata: JsonObject = {"merged_from": [Path(r.source).name for r in refs]}
    carried = {
        name: ref.metadata["carried_from"]
        for ref in refs
        if ref.metadata and isinstance(ref.metadata.get("carried_from"), str)
        for name in ref.tasks
        if name in merged
    }
    if carried:
        metadata["carried_tasks"] = carried  #: task -> the reference id its values were frozen under
    if carry_to is not None:
        if not carry_to.strip():
            raise InputError("the new reference id must be a non-empty string")
        metadata["carried_from"] = ref_id
        ref_id = carry_to
    out = Reference(
        ref_id,
        suite if suite is not None else refs[0].suite,
        dict(refs[0].scale_floors),
        merged,
        metadata=metadata,
    )
    data = out.to_dict()
    reference_from_dict(data, "merged reference")
    return data


def check_subset(sub: Reference, full: Reference) -> None:
    """Every task of `sub` (Lite) must be in `full` with identical kind, direction, floors,
    eligible values and unscored outcomes, under the same reference_id."""
    if sub.reference_id != full.reference_id:
        raise InputError(
            f"{sub.source}: reference_id {sub.reference_id!r} differs from {full.source}'s {full.reference_id!r}"
        )
    for name, task in sub.tasks.items():
        where = f"{sub.source}: task {name!r}"
        if name not in full.tasks:
            raise InputError(f"{where} is not in {full.source}")
        other = full.tasks[name]
        for attr in ("kind", "direction", "relative_floor", "absolute_floor"):
            if getattr(task, attr) != getattr(other, attr):
                raise InputError(
                    f"{where}: {attr} {getattr(task, attr)!r} differs from {full.source}'s {getattr(other, attr)!r}"
                )
        for label, mine, theirs in (
            ("eligible", task.instances, other.instances),
            ("unscored", task.unscored, other.unscored),
        ):
            for inst, values in mine.items():
                if inst not in theirs:
                    raise InputError(f"{where} {label} instance {inst!r} is not {label} in {full.source}")
                if not _same_values(values, theirs[inst]):
                    raise InputError(
                        f"{where} instance {inst!r}: values {values} differ from {full.source}'s {theirs[inst]}"
                    )
            for inst in theirs:
                if inst not in mine:
                    raise InputError(f"{where}: {label} instance {inst!r} of {full.source} is missing")


def _same_values(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    return all(
        (x is None and y is None) or (x is not None and y is not None and float(x) == float(y)) for x, y in zip(a, b)
    )
