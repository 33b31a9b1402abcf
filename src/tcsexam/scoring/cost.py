"""Cost as an axis beside the Index: index.json's `cost` sections (`tcsexam score --generation`).

Read from the attempt table's companion generation.csv (`tcsexam.scoring.generation`), over each
model's **adopted** attempts (selected, selected_provisional: those the Index is computed from):

- per model and per track: tokens in, out and in all, cost in USD, wall and working time, turns,
  tool calls, feedback calls (the judge's checker tools) and model calls, with their coverage
  (`attempts`, `recorded`: with a generation record, `priced`: with a cost);
- a total is a number only when every adopted attempt it sums has it: cost with every attempt
  priced, tokens, times and calls with every attempt recorded. Otherwise it is null, `cost_missing`
  counts the attempts without a record (`no_generation`) and without a price (`unpriced`), and
  `cost_usd_known` is what the priced attempts cost (a lower bound): a model with missing data is
  never reported as free;
- **solved items**: an item is solved when its task mean (index.json's `task_means`, the mean of
  its adopted attempts' scores) reaches its track's bar (`SOLVED_AT`): 1 for theorem and open
  conjecture (every adopted attempt a complete accepted proof), the fixed reference's mean (0.5)
  for Solver, the task's reference reward (1) for construction. `cost_per_solved_item` is the
  model's cost over its solved items (null without a cost or without a solved item);
- the **Pareto front** over models (top-level `cost.pareto_front`): the models with an Index and a
  cost that no other model beats on both (an Index at least as high for a cost at most as high,
  one of them strictly).

Nothing here reads or changes a score: the other fields of index.json are the same with or
without `--generation`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, read_csv
from tcsexam.scoring.generation import (
    IDENTITY,
    AttemptGeneration,
    CostMissing,
    Identity,
    identity_of,
    read_generation_table,
)
from tcsexam.scoring.vocabulary import ADOPTED
from tcsexam.suites import TRACKS, Suite, Track

#: the task mean at which an item counts as solved, per track (module docstring)
SOLVED_AT: dict[str, float] = {
    Track.THEOREM: 1.0,
    Track.SOLVER: 0.5,
    Track.CONSTRUCTION: 1.0,
    Track.OPEN_CONJECTURE: 1.0,
}
#: the sums a cost section holds, and whether a record always has them (else: when every record does)
SUMMED = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "wall_time_s",
    "working_time_s",
    "turns",
    "tool_calls",
    "feedback_calls",
    "model_calls",
)


def _total(values: list[Any]) -> Any:
    """The sum when every value is known, else None."""
    if any(v is None for v in values):
        return None
    return math.fsum(values) if any(isinstance(v, float) for v in values) else sum(values)


def cost_summary(entries: list[AttemptGeneration], items: list[str], solved: set[str]) -> JsonObject:
    """The cost section of a set of adopted attempts (`entries`) of the planned `items`."""
    missing = {reason: 0 for reason in CostMissing}
    for e in entries:
        if e.cost_missing is not None:
            missing[e.cost_missing] += 1
    recorded = [e for e in entries if e.recorded]
    priced = [e.cost_usd for e in entries if e.cost_usd is not None]
    cost = math.fsum(priced) if len(priced) == len(entries) else None
    out: JsonObject = {
        "attempts": len(entries),
        "recorded": len(recorded),
        "priced": len(priced),
        "cost_usd": cost,
        "cost_missing": None if cost is not None else {str(k): v for k, v in missing.items()},
        "cost_usd_known": math.fsum(priced),
    }
    for key in SUMMED:
        out[key] = _total([getattr(e, key) for e in entries]) if len(recorded) == len(entries) else None
    n_solved = len(solved & set(items))
    out["items"] = len(items)
    out["solved_items"] = n_solved
    out["cost_per_solved_item"] = cost / n_solved if cost is not None and n_solved else None
    return out


def solved_items(task_means: dict[str, float | None], suite: Suite) -> set[str]:
    """The items whose task mean reaches their track's bar (`SOLVED_AT`)."""
    return {item for item, mean in task_means.items() if mean is not None and mean >= SOLVED_AT[suite.track_of[item]]}


def pareto_front(points: dict[str, tuple[float | None, float | None]]) -> list[str]:
    """The models (name -> (index, cost)) with both, not dominated by another: an Index at least
    as high for a cost at most as high, one strictly. Sorted by cost, then name."""
    known = {m: (i, c) for m, (i, c) in points.items() if i is not None and c is not None}
    front = []
    for m, (i, c) in known.items():
        dominated = any((i2 >= i and c2 <= c) and (i2 > i or c2 < c) for m2, (i2, c2) in known.items() if m2 != m)
        if not dominated:
            front.append(m)
    return sorted(front, key=lambda m: (known[m][1], m))


def _adopted_identities(attempts_path: str | Path) -> list[Identity]:
    header, body = read_csv(attempts_path, "attempt table")
    header = header or []  # an empty file: every column missing
    if "adoption_status" not in header or any(c not in header for c in IDENTITY):
        raise InputError(f"{attempts_path}: attempt table lacks its identity or adoption_status columns")
    cols = [header.index(c) for c in IDENTITY]
    adoption = header.index("adoption_status")
    return [identity_of(cells, cols) for cells in body if cells[adoption] in ADOPTED]


def _by_identity(
    entries: Iterable[AttemptGeneration], source: str, attempts_path: str | Path
) -> dict[Identity, AttemptGeneration]:
    out: dict[Identity, AttemptGeneration] = {}
    for number, e in enumerate(entries, start=1):
        if e.identity in out:
            raise InputError(f"{source}: row {number}: duplicate attempt {','.join(e.identity)}")
        out[e.identity] = e
    header, body = read_csv(attempts_path, "attempt table")
    cols = [(header or []).index(c) for c in IDENTITY]  # None: an empty file
    planned = {tuple(cells[k] for k in cols) for cells in body}
    extra = sorted(set(out) - planned)
    if extra:
        raise InputError(
            f"{source}: attempt {','.join(extra[0])} is not in {attempts_path}: the generation table is "
            "stale (rebuild it with tcsexam attempts generation)"
        )
    return out


def add_cost(result: JsonObject, suite: Suite, attempts_path: str | Path, generation_path: str | Path) -> None:
    """Add `cost` to every model of `result` (index.json) and the top-level `cost` (solved bars,
    Pareto front, source), from the generation table at `generation_path`."""
    table = _by_identity(read_generation_table(generation_path), str(generation_path), attempts_path)
    adopted = _adopted_identities(attempts_path)
    missing = [ident for ident in adopted if ident not in table]
    if missing:
        raise InputError(
            f"{generation_path}: no line for adopted attempt {','.join(missing[0])} of {attempts_path}: the "
            "generation table is stale (rebuild it with tcsexam attempts generation)"
        )
    points: dict[str, tuple[float | None, float | None]] = {}
    for name, model in result["models"].items():
        entries = [table[ident] for ident in adopted if ident[0] == name]
        solved = solved_items(model["task_means"], suite)
        section = cost_summary(entries, list(suite.items), solved)
        section["tracks"] = {
            track: cost_summary(
                [e for e in entries if e.track == track], list(suite.tracks[track]), solved & set(suite.tracks[track])
            )
            for track in TRACKS
        }
        model["cost"] = section
        points[name] = (model["index"], section["cost_usd"])
    result["cost"] = {
        "source": str(generation_path),
        "attempts": "adopted",
        "solved_at": {str(k): v for k, v in SOLVED_AT.items()},
        "pareto_front": pareto_front(points),
        "note": "cost never enters a score; a null total means some adopted attempt lacks the data (cost_missing)",
    }
