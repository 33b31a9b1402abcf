"""`tcsexam orspace score-objectives`: Build/Revise predictions against the release's oracle.

The release's rule, exactly: a workspace passes when its prediction has status Optimal and
`abs(objective - reference) / max(1, abs(reference)) <= relative_tolerance` (the oracle row's
tolerance, 0.01 in the release). A workspace of the oracle without a prediction fails. A prediction
for a workspace the oracle does not know, or two predictions for one workspace, is an error.
Status comparison ignores case and surrounding white space (`Optimal`, `optimal`).

Each scored workspace gets exactly one mode of `FailureMode` (`none` when it passed, else one of
`FAILURE_MODES`); `execute` already records one for the
failures it sees (execution error, timeout, infeasible, unbounded, not optimal, missing output),
`wrong_objective` is only known here.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from enum import StrEnum
from pathlib import Path

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject
from tcsexam.orspace.release import (
    OBJECTIVE_MODES,
    Mode,
    Release,
    find_workspace,
    read_jsonl_numbered,
    revise_type,
)

SCHEMA_VERSION = 1


class FailureMode(StrEnum):
    """The closed vocabulary of OR-Space failure modes: exactly one per scored Build/Revise result
    (`none` when it passed), and what a workspace record's `failure_mode` holds when its program
    failed (`infrastructure_error`: the harness failed, not the program; never scored)."""

    NONE = "none"
    EXECUTION_ERROR = "execution_error"
    TIMEOUT = "timeout"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    NOT_OPTIMAL = "not_optimal"
    WRONG_OBJECTIVE = "wrong_objective"  #: only known when scored against the oracle
    MISSING_OUTPUT = "missing_output"
    INFRASTRUCTURE_ERROR = "infrastructure_error"  #: a workspace record's only, never a scored result's


#: the modes of a scored result, `none` first (the failure table's rows, in order)
RESULT_MODES = tuple(m for m in FailureMode if m != FailureMode.INFRASTRUCTURE_ERROR)
#: the modes of a scored result that failed
FAILURE_MODES = tuple(m for m in RESULT_MODES if m != FailureMode.NONE)
RULE = "status == Optimal and abs(objective - reference) / max(1, abs(reference)) <= relative_tolerance"


#: a solver's "infeasible or unbounded" (Gurobi `INF_OR_UNBD`, COPT `INF_OR_UNB`, HiGHS `Primal
#: infeasible or unbounded`): presolve found no bounded optimum without saying which. Attributed by
#: what each solver means by it in practice (measured on small infeasible and unbounded LPs and
#: MIPs): Gurobi's presolve says it for most infeasible models (a demand no capacity can meet) and
#: for some unbounded LPs, COPT and HiGHS only for unbounded MIPs (they report a proven
#: infeasibility as Infeasible). A program tells them apart by re-solving (Gurobi
#: `DualReductions=0`) and reporting `Infeasible` or `Unbounded`.
_INFEASIBLE_OR_UNBOUNDED = re.compile(r"infeasible\W+or\W+unbounded|unbounded\W+or\W+infeasible|inf_or_unbd?\b")
AMBIGUOUS_MODE = {"gurobi": "infeasible"}


def status_failure_mode(status: str, solver: str | None = None) -> FailureMode:
    """The failure mode a non-Optimal status string stands for (`solver`: the one that reported
    it, which decides an "infeasible or unbounded"; a solver's time limit is `timeout` here,
    `record.outcome_verdict` makes it `not_optimal` for a program that ended inside the harness's
    limit)."""
    s = status.strip().lower()
    if _INFEASIBLE_OR_UNBOUNDED.search(s):
        return FailureMode(AMBIGUOUS_MODE.get(solver or "", FailureMode.UNBOUNDED))
    if "infeasible" in s:
        return FailureMode.INFEASIBLE
    if "unbounded" in s:
        return FailureMode.UNBOUNDED
    if "time" in s and "limit" in s or s == "timeout":
        return FailureMode.TIMEOUT
    if s in ("error", "crash", "execution_error"):
        return FailureMode.EXECUTION_ERROR
    if s in ("", "missing", "none", "missing_output"):
        return FailureMode.MISSING_OUTPUT
    return FailureMode.NOT_OPTIMAL


def _objective(value: Json) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def load_predictions(path: str | Path, oracle_ids: set[str]) -> dict[str, JsonObject]:
    """Predictions JSONL keyed by workspace id; unknown or duplicate ids are errors."""
    path = Path(path)
    out: dict[str, JsonObject] = {}
    for line, row in read_jsonl_numbered(path, "predictions file"):
        if not isinstance(row, dict) or "workspace_id" not in row:
            raise InputError(f"{path}: line {line}: a prediction must be an object with workspace_id")
        wid = row["workspace_id"]
        if not isinstance(wid, str):
            raise InputError(f"{path}: line {line}: workspace_id {wid!r} is not a string")
        if wid not in oracle_ids:
            raise InputError(f"{path}: line {line}: unknown workspace id {wid} (not in the oracle)")
        if wid in out:
            raise InputError(f"{path}: line {line}: duplicate workspace id {wid}")
        first = next(iter(out.values()), None)
        if first is not None and first.get("condition") != row.get("condition"):
            raise InputError(
                f"{path}: line {line}: {wid}: condition {row.get('condition')!r} differs from "
                f"{first.get('condition')!r} of {first['workspace_id']} (score each condition on its own)"
            )
        status = row.get("status")
        if status is not None and not isinstance(status, str):
            raise InputError(f"{path}: line {line}: {wid}: status {status!r} is not a string")
        out[wid] = row
    return out


def _rate(passed: int, n: int) -> float | None:
    return passed / n if n else None


def _group(rows: list[JsonObject], key: str) -> dict[str, JsonObject]:
    groups: dict[str, list[JsonObject]] = {}
    for row in rows:
        groups.setdefault(str(row[key]), []).append(row)
    out = {}
    for name in sorted(groups):
        members = groups[name]
        passed = sum(r["passed"] for r in members)
        out[name] = {"n": len(members), "passed": passed, "pass_at_1": _rate(passed, len(members))}
    return out


def failure_table(rows: list[JsonObject]) -> list[JsonObject]:
    """Counts and shares of every result mode (`none` included) over `rows`."""
    counts = Counter(r["failure_mode"] for r in rows)
    n = len(rows)
    return [
        {"failure_mode": m, "count": counts.get(m, 0), "share": counts.get(m, 0) / n if n else None}
        for m in RESULT_MODES
    ]


def score_objectives(
    release: Release,
    predictions: dict[str, JsonObject],
    modes: tuple[Mode, ...] = OBJECTIVE_MODES,
    workspaces_root: Path | None = None,
) -> JsonObject:
    """Score every oracle row of `modes`; returns the summary document (rows included)."""
    ids = sorted(w for w, o in release.oracle.items() if o.task_type in modes)
    for wid in predictions:
        if wid not in ids:
            raise InputError(f"prediction for {wid}: its mode is not scored in this run (modes {', '.join(modes)})")
    n = len(ids)
    ref = np.array([release.oracle[w].reference_objective for w in ids], dtype=float)
    tol = np.array([release.oracle[w].relative_tolerance for w in ids], dtype=float)
    obj = np.full(n, np.nan)
    optimal = np.zeros(n, dtype=bool)
    has_pred = np.zeros(n, dtype=bool)
    for i, wid in enumerate(ids):
        pred = predictions.get(wid)
        if pred is None:
            continue
        has_pred[i] = True
        value = _objective(pred.get("objective"))
        if value is not None:
            obj[i] = value
        optimal[i] = str(pred.get("status") or "").strip().lower() == "optimal"
    with np.errstate(invalid="ignore"):
        rel_err = np.abs(obj - ref) / np.maximum(1.0, np.abs(ref))
        within = rel_err <= tol  # NaN (no objective) compares False
    passed = has_pred & optimal & within

    rows = []
    for i, wid in enumerate(ids):
        pred = predictions.get(wid) or {}
        mode = release.oracle[wid].task_type
        if passed[i]:
            failure = FailureMode.NONE
        elif not has_pred[i]:
            failure = FailureMode.MISSING_OUTPUT
        elif pred.get("failure_mode") in FAILURE_MODES and pred["failure_mode"] != FailureMode.WRONG_OBJECTIVE:
            failure = FailureMode(pred["failure_mode"])
        elif not optimal[i]:
            failure = status_failure_mode(str(pred.get("status") or ""), pred.get("solver"))
        elif np.isnan(obj[i]):
            failure = FailureMode.MISSING_OUTPUT
        else:
            failure = FailureMode.WRONG_OBJECTIVE
        workspace = None
        if mode == Mode.REVISE:
            workspace = find_workspace(workspaces_root, wid) if workspaces_root else release.workspace_dir(wid)
        rows.append(
            {
                "workspace_id": wid,
                "mode": mode,
                "difficulty": release.difficulty.get(wid, "unknown"),
                "revise_type": revise_type(wid, release.index, workspace) if mode == Mode.REVISE else None,
                "status": pred.get("status"),
                "objective": None if np.isnan(obj[i]) else float(obj[i]),
                "reference_objective": float(ref[i]),
                "relative_tolerance": float(tol[i]),
                "relative_error": None if np.isnan(rel_err[i]) else float(rel_err[i]),
                "passed": bool(passed[i]),
                "failure_mode": failure,
                "solver": pred.get("solver") or "unknown",
            }
        )

    failures = Counter(r["failure_mode"] for r in rows)
    by_mode_failures = {
        mode: {fm: sum(1 for r in rows if r["mode"] == mode and r["failure_mode"] == fm) for fm in FAILURE_MODES}
        for mode in modes
    }
    total_passed = int(passed.sum())
    return {
        "schema_version": SCHEMA_VERSION,
        "benchmark": "or-space",
        "rule": RULE,
        "modes": list(modes),
        "n": n,
        "passed": total_passed,
        "pass_at_1": _rate(total_passed, n),
        "by_mode": _group(rows, "mode"),
        "by_difficulty": _group(rows, "difficulty"),
        "by_revise_type": _group([r for r in rows if r["mode"] == Mode.REVISE], "revise_type"),
        "failure_modes": {fm: failures.get(fm, 0) for fm in FAILURE_MODES},
        "failure_modes_by_mode": by_mode_failures,
        "failure_table": failure_table(rows),
        "by_solver": _group(rows, "solver"),
        "condition": next((p.get("condition") for p in predictions.values()), None),
        "rows": rows,
    }
