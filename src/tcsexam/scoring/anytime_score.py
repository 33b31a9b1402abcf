"""Score a Solver task as if its time limit had been S seconds, from the records' anytime traces.

`record_at(record, S)`: the record as it would have been under limit S.

- The run ended by S (`wall_s <= S`), or the record carries no `wall_s` (the spec's minimal
  records): the record itself, judged as today.
- The run was stopped by a time limit (status `timeout`, termination walltime/cputime) and S is at
  or past that limit: the record itself (a timeout). A run killed at its limit L ends a little
  after L (its `wall_s` is 5.0003-5.003 s on a 5 s limit), so S = L is not "before its end": a run
  that did not finish inside S is not ok at S. The limit is the record's `extra.limits.wall_s`
  (every record the runner writes carries it); an older record without it counts as stopped at
  `wall_s - KILL_MARGIN_S` (the limiter's kill latency, measured well below it).
- Otherwise (the program was still running at S): the best `ok` entry of its `trace` stamped at or
  before S (the largest value when maximising, the smallest when minimising; for solve tasks,
  solved beats unsolved) becomes an ok outcome with that value; with none, `timeout`. A record of
  a task that is not anytime has no trace, so it is a timeout at any S before its end.

So for every S at or past the longest run's `wall_s`, the score equals `tcsexam solver-score`'s.
A stamp is an upper bound of when the certificate was there (`tcsexam.runner.solver.anytime`), so the
score at S never credits a certificate before the harness saw it.

`profile(task, runs, reference)`: the relative score of each run (model) at every limit where
some run's score can change (every trace stamp, every `wall_s` and every timed-out run's limit, thinned to `MAX_POINTS`
geometric points when there are more), and where two runs' curves cross.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import TypeGuard

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, atomic_write_bytes
from tcsexam.records import STATUSES, Status, Termination
from tcsexam.scoring.outcomes import parse_outcomes
from tcsexam.scoring.reference import Reference
from tcsexam.scoring.solver_score import score_outcomes
from tcsexam.tasks import Direction, Kind

MAX_POINTS = 400
#: how long after its limit a killed run may end (the limiters' kill latency: 16-63 ms measured,
#: docs/runner.md), for records that do not carry their limit
KILL_MARGIN_S = 0.1
#: the terminations of a run stopped by a time limit
_TIME_LIMITS = frozenset({Termination.WALLTIME, Termination.CPUTIME})
#: two scores closer than this are a tie (Phi far in a tail differs by 1e-20 and means nothing)
TIE = 1e-6
PROFILE_SCHEMA_VERSION = 1


def _better(direction: str):
    return max if direction == Direction.MAXIMIZE else min


def record_at(rec: JsonObject, at: float, direction: str, kind: str, *, below: bool = False) -> JsonObject:
    """The record as if the limit had been `at` seconds (module doc). `below`: what the run had by
    `at` approached from below, so a run killed at a limit `at` reached still counts its trace
    (two runs compared at limits where only one was killed, `tcsexam compare`'s speed-equivalent
    limits, must be judged alike)."""
    wall = rec.get("wall_s")
    if wall is None or wall <= at or rec.get("status") == Status.INFRASTRUCTURE_ERROR:
        return rec
    limit = stopped_at(rec)
    if limit is not None and at >= limit and not below:
        return rec  # killed at a limit S reached: not finished inside S, so not ok at S
    pick = max if kind == Kind.SOLVE else _better(direction)
    values = [v for t, s, v in (rec.get("trace") or ()) if t <= at and s == Status.OK and v is not None]
    out: JsonObject = {"instance": rec.get("instance")}
    if not values:
        out.update(status=Status.TIMEOUT, message=f"no verified certificate by {at:g} s")
        return out
    best = pick(values)
    out["status"] = Status.OK
    if kind == Kind.SOLVE:
        out["solved"] = bool(best)
    else:
        out["A"] = best
    return out


def stopped_at(rec: JsonObject) -> float | None:
    """The wall limit at which a run stopped by a time limit was killed (None: it was not): its
    recorded limit (`extra.limits.wall_s`), else its end less `KILL_MARGIN_S`."""
    if rec.get("status") != Status.TIMEOUT and rec.get("termination") not in _TIME_LIMITS:
        return None
    extra = rec.get("extra")
    limits = extra.get("limits") if isinstance(extra, dict) else None
    recorded = limits.get("wall_s") if isinstance(limits, dict) else None
    if _number(recorded) and recorded > 0:
        return float(recorded)
    wall = rec.get("wall_s")
    return max(0.0, float(wall) - KILL_MARGIN_S) if _number(wall) else None


def _number(x: object) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _row_problem(row: Json) -> str | None:
    """Why one trace row is not `[t, status, value]` as the runner writes it (None when it is)."""
    if not (isinstance(row, list) and len(row) == 3):
        return "a trace row must be [t, status, value]"
    t, status, value = row
    if not (_number(t) and t >= 0):
        return f"a trace row's stamp must be a finite number of seconds >= 0, not {t!r}"
    if status not in STATUSES:
        return f"a trace row's status must be one of {', '.join(sorted(STATUSES))}, not {status!r}"
    if value is not None and not (_number(value) or isinstance(value, bool)):
        return f"a trace row's value must be a finite number or null, not {value!r}"
    return None


def _checked(records: Json, kind: str, source: str) -> list[JsonObject]:
    parse_outcomes(records, kind, source)  # the records themselves: shape, digests, statuses
    for rec in records:
        trace = rec.get("trace")
        if trace is not None and not isinstance(trace, list):
            raise InputError(f"{source}: instance {rec['instance']!r}: trace must be a list of [t, status, value] rows")
        for i, row in enumerate(trace or ()):
            problem = _row_problem(row)
            if problem is not None:
                raise InputError(f"{source}: instance {rec['instance']!r}: trace row {i + 1}: {problem}")
    checked: list[JsonObject] = records  # (parse_outcomes: a list of record objects)
    return checked


def score_at(
    task: str, records: Json, reference: Reference, at: float, source: str = "records", *, below: bool = False
) -> JsonObject:
    """`solver_score`'s output as if the task's limit had been `at` seconds, plus `at_s`
    (`below`: as `record_at`'s)."""
    if not (math.isfinite(at) and at >= 0):
        raise InputError(f"--at must be a finite number of seconds >= 0, not {at!r}")
    ref = reference.task(task)
    records = _checked(records, ref.kind, source)
    viewed = [record_at(r, at, ref.direction, ref.kind, below=below) for r in records]
    result = score_outcomes(task, parse_outcomes(viewed, ref.kind, source), reference, source)
    result["at_s"] = at
    return result


def limits_grid(runs: dict[str, list[JsonObject]]) -> list[float]:
    """Every limit at which a score can change, thinned to MAX_POINTS geometric points."""
    points = {0.0}
    for records in runs.values():
        for rec in records:
            if rec.get("wall_s") is not None:
                points.add(float(rec["wall_s"]))
            if (limit := stopped_at(rec)) is not None:
                points.add(limit)
            points.update(float(row[0]) for row in rec.get("trace") or ())
    grid = sorted(points)
    if len(grid) > MAX_POINTS:
        positive = [p for p in grid if p > 0]
        lo, hi = positive[0], positive[-1]
        geo = np.geomspace(lo, hi, MAX_POINTS - 1)
        grid = [0.0] + sorted({positive[min(int(np.searchsorted(positive, g)), len(positive) - 1)] for g in geo})
        if grid[-1] != hi:
            grid.append(hi)
    return grid


def crossings(curves: dict[str, list[list[float]]]) -> list[JsonObject]:
    """Where two curves (on the same grid) change which one is ahead: the first limit at which
    the other leads by more than TIE. Ties do not end a lead."""
    names = sorted(curves)
    found = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            lead = None
            for (s, sa), (_, sb) in zip(curves[a], curves[b]):
                now = a if sa > sb + TIE else b if sb > sa + TIE else None
                if now is not None and lead is not None and now != lead:
                    found.append({"models": [a, b], "at_s": s, "leader_before": lead, "leader_after": now})
                lead = now or lead
    return found


def profile(task: str, runs: JsonObject, reference: Reference, sources: dict[str, str] | None = None) -> JsonObject:
    """Relative score against time limit for each run (name -> decoded records list). `sources`
    (name -> the records file) names each run's file in messages and is where its sealed records'
    key is looked up (`tcsexam.records.key.find_key`); a run without one is named by its name."""
    if not runs:
        raise InputError("solver-profile: give at least one --run NAME=RECORDS")
    ref = reference.task(task)
    source = {name: (sources or {}).get(name, name) for name in runs}
    checked = {name: _checked(records, ref.kind, source[name]) for name, records in runs.items()}
    grid = limits_grid(checked)
    curves = {}
    for name, records in checked.items():
        curve = []
        for at in grid:
            viewed = [record_at(r, at, ref.direction, ref.kind) for r in records]
            outcomes = parse_outcomes(viewed, ref.kind, source[name])
            curve.append([at, score_outcomes(task, outcomes, reference, source[name])["relative_score"]])
        curves[name] = curve
    return {
        "schema_version": PROFILE_SCHEMA_VERSION,
        "task": task,
        "reference_id": reference.reference_id,
        "limits_s": grid,
        "curves": curves,
        "crossings": crossings(curves),
        "anytime_records": {n: sum(1 for r in rs if r.get("trace")) for n, rs in checked.items()},
    }


def plot_profile(result: JsonObject, path: str | Path) -> None:
    """One PNG: each run's step curve, crossings marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for name, curve in sorted(result["curves"].items()):
        xs, ys = zip(*curve)
        ax.step(xs, ys, where="post", label=name)
    for c in result["crossings"]:
        ax.axvline(c["at_s"], color="grey", linestyle=":", linewidth=1)
        ax.annotate(f"{c['leader_after']} ahead", (c["at_s"], 0.02), rotation=90, fontsize=7, color="grey")
    ax.set_xlabel("time limit (s)")
    ax.set_ylabel("relative score")
    ax.set_ylim(0, 1)
    ax.set_title(f"{result['task']}: score at every limit ({result['reference_id']})")
    ax.legend(fontsize=8)
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())
