"""`tcsexam orspace audit-references`: every Build reference with its evidence (docs/orspace.md).

Each audited item is re-solved from its workspace's own documents and data by the reference models
the project writes (`references/orspace-models/<workspace_id>/<reading>.py`, one file per reading
of the requirements, `refmodel` says what a model file is), and each model's outcome is compared
with the release's reference and with the alternatives the disputes file lists (another cleaned
copy's answer, the value the disputes file's author decided). Agreement is the scoring rule's:
`abs(value - other) / max(1, abs(other)) <= relative_tolerance` (the oracle row's tolerance).

The item's verdict (`AuditVerdict`) says what the models found; `evidenced_answers` (the reference
plus every reading's proven optimum) is what scoring "accepting any evidenced answer" accepts.
A model's failure (an exception, a timeout, a non-optimal status) is its record, never the run's.
"""

from __future__ import annotations

import ast
import json
import math
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject
from tcsexam.orspace.release import (
    WORKSPACE_ID,
    Mode,
    Release,
    _finite,
    _read_csv,
    find_workspace,
    parse_workspace_id,
)
from tcsexam.records.digest import hash_file

SCHEMA_VERSION = 1
DEFAULT_TIME_LIMIT_S = 300.0
AGREEMENT_RULE = "abs(value - other) / max(1, abs(other)) <= relative_tolerance"
#: the columns of the disputes file (`build_reference_disputes.csv`) the audit reads
DISPUTES_COLUMNS = (
    "workspace_id",
    "instance_number",
    "orspace_reference",
    "alternative_reference",
    "alternative_source",
    "decided_here",
    "decided_status",
)


class AuditVerdict(StrEnum):
    """What the reference models of one item found about its released reference."""

    REPRODUCED = "reproduced"  #: every solved reading agrees with the reference
    READING_DEPENDENT = "reading_dependent"  #: some reading agrees, another solved reading does not
    NOT_REPRODUCED = "not_reproduced"  #: no solved reading agrees with the reference
    NOT_SOLVED = "not_solved"  #: models exist, none reached a proven optimum
    NO_MODEL = "no_model"  #: the project has no reference model for the item


class DecidedStatus(StrEnum):
    """The disputes file's `decided_status`."""

    OPTIMAL = "optimal"
    READING_DEPENDENT = "optimal-reading-dependent"
    NOT_DECIDED = "not-decided"


@dataclass(frozen=True)
class Dispute:
    workspace_id: str
    reference: float
    alternative: float | None
    alternative_source: str
    decided_here: float | None
    decided_status: DecidedStatus


def _optional(path: Path, line: int, wid: str, column: str, text: str | None) -> float | None:
    text = (text or "").strip()
    return None if text == "" else _finite(path, line, wid, column, text)


def load_disputes(path: str | Path) -> dict[str, Dispute]:
    """The disputes file keyed by workspace id; a bad row is an InputError naming its line."""
    path = Path(path)
    header, rows = _read_csv(path, "disputes file")
    missing = [c for c in DISPUTES_COLUMNS if c not in header]
    if missing:
        raise InputError(f"{path}: disputes file lacks column(s) {', '.join(missing)}")
    out: dict[str, Dispute] = {}
    for line, row in enumerate(rows, start=2):
        wid = (row["workspace_id"] or "").strip()
        if not WORKSPACE_ID.match(wid) or parse_workspace_id(wid)[1] != Mode.BUILD:
            raise InputError(f"{path}: line {line}: {wid!r} is not a Build workspace id")
        if wid in out:
            raise InputError(f"{path}: line {line}: duplicate workspace id {wid}")
        status = (row["decided_status"] or "").strip()
        if status not in set(DecidedStatus):
            allowed = ", ".join(DecidedStatus)
            raise InputError(f"{path}: line {line}: {wid}: decided_status {status!r} is not one of {allowed}")
        out[wid] = Dispute(
            workspace_id=wid,
            reference=_finite(path, line, wid, "orspace_reference", row["orspace_reference"]),
            alternative=_optional(path, line, wid, "alternative_reference", row["alternative_reference"]),
            alternative_source=(row["alternative_source"] or "").strip(),
            decided_here=_optional(path, line, wid, "decided_here", row["decided_here"]),
            decided_status=DecidedStatus(status),
        )
    return out


def model_header(path: Path) -> tuple[str, bool]:
    """A model file's module-level `READING` string and `EVIDENCE` flag (default True; False marks
    a probe: a model kept to show where a listed value comes from, whose reading drops or relaxes
    something the requirements state, so its optimum is no evidenced answer), read without running
    the file."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        raise InputError(f"{path}: cannot read reference model: {exc}") from None
    found: JsonObject = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in ("READING", "EVIDENCE"):
                    found[target.id] = node.value.value
    reading, evidence = found.get("READING"), found.get("EVIDENCE", True)
    if not isinstance(reading, str) or not reading.strip():
        raise InputError(f"{path}: reference model has no module-level READING string (the reading it encodes)")
    if not isinstance(evidence, bool):
        raise InputError(f"{path}: EVIDENCE must be True or False, not {evidence!r}")
    return reading, evidence


def discover_models(models_dir: str | Path) -> dict[str, list[Path]]:
    """{workspace id: its model files, sorted}: `<models_dir>/<build id>/<reading>.py`, files whose
    name starts with `_` being shared code, not readings."""
    root = Path(models_dir).resolve()
    if not root.is_dir():
        raise InputError(f"{root}: reference models folder not found")
    out: dict[str, list[Path]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        if not WORKSPACE_ID.match(folder.name) or parse_workspace_id(folder.name)[1] != Mode.BUILD:
            raise InputError(f"{folder}: a reference models folder must be named by a Build workspace id")
        files = sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))
        if files:
            out[folder.name] = files
    return out


def agrees(value: float | None, other: float | None, tolerance: float) -> bool | None:
    """The scoring rule's agreement; None when either side has no value."""
    if value is None or other is None:
        return None
    return abs(value - other) / max(1.0, abs(other)) <= tolerance


def run_model(path: Path, workspace: Path, time_limit_s: float) -> JsonObject:
    """Run one reference model on a workspace (a subprocess: a crash, a hang or a bad line is the
    model's record)."""
    start = time.monotonic()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1"}
    try:
        proc = subprocess.run(
            [sys.executable, str(path), str(Path(workspace).resolve())],
            cwd=path.parent,
            capture_output=True,
            text=True,
            timeout=time_limit_s,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {
            "status": "Timeout",
            "objective": None,
            "solver": None,
            "wall_s": round(time.monotonic() - start, 3),
            "message": f"no answer in {time_limit_s:g} s",
        }
    wall = round(time.monotonic() - start, 3)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = " ".join((proc.stderr or proc.stdout).strip().splitlines()[-1:]) or f"exit code {proc.returncode}"
        return {"status": "Error", "objective": None, "solver": None, "wall_s": wall, "message": tail[:500]}
    try:
        line = json.loads(lines[-1])
    except json.JSONDecodeError as exc:
        return {
            "status": "Error",
            "objective": None,
            "solver": None,
            "wall_s": wall,
            "message": f"bad result line: {exc}",
        }
    objective = line.get("objective")
    finite = isinstance(objective, (int, float)) and not isinstance(objective, bool) and math.isfinite(objective)
    status = str(line.get("status") or "Error")
    return {
        "status": status,
        "objective": float(objective) if finite and status == "Optimal" else None,
        "solver": line.get("solver"),
        "wall_s": wall,
        "message": "" if status != "Optimal" or finite else "optimal without a finite objective",
    }


def verdict(models: list[JsonObject]) -> AuditVerdict:
    """An item's verdict from its model rows."""
    if not any(m["evidence"] for m in models):
        return AuditVerdict.NO_MODEL
    solved = [m for m in models if m["evidence"] and m["status"] == "Optimal" and m["objective"] is not None]
    if not solved:
        return AuditVerdict.NOT_SOLVED
    agreeing = [m["agrees_reference"] for m in solved]
    if all(agreeing):
        return AuditVerdict.REPRODUCED
    return AuditVerdict.READING_DEPENDENT if any(agreeing) else AuditVerdict.NOT_REPRODUCED


def _item(
    release: Release,
    wid: str,
    dispute: Dispute | None,
    files: list[Path],
    outcomes: dict[Path, JsonObject],
    base: Path,
) -> JsonObject:
    oracle = release.oracle[wid]
    ref, tol = oracle.reference_objective, oracle.relative_tolerance
    models = []
    for path in files:
        out = outcomes[path]
        reading, evidence = model_header(path)
        models.append(
            {
                "file": os.path.relpath(path, base),
                "reading": reading,
                "evidence": evidence,
                "sha256": hash_file(path),
                **out,
                "agrees_reference": agrees(out["objective"], ref, tol),
                "agrees_alternative": agrees(out["objective"], dispute.alternative, tol) if dispute else None,
                "agrees_decided_here": agrees(out["objective"], dispute.decided_here, tol) if dispute else None,
            }
        )
    evidenced = sorted(
        {
            ref,
            *(
                m["objective"]
                for m in models
                if m["evidence"] and m["status"] == "Optimal" and m["objective"] is not None
            ),
        }
    )
    return {
        "workspace_id": wid,
        "instance_number": oracle.instance_number,
        "reference": ref,
        "relative_tolerance": tol,
        "disputed": dispute is not None,
        "alternative": (
            {"value": dispute.alternative, "source": dispute.alternative_source}
            if dispute and dispute.alternative is not None
            else None
        ),
        "decided_here": ({"value": dispute.decided_here, "status": dispute.decided_status} if dispute else None),
        "verdict": verdict(models),
        "models": models,
        "evidenced_answers": evidenced,
    }


def audit_references(
    release: Release,
    models_dir: Path,
    disputes: dict[str, Dispute],
    *,
    ids: list[str] | None = None,
    every_build_item: bool = False,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    jobs: int = 1,
    workspaces_root: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> JsonObject:
    """The audit document: one item per disputed item, per item with models (and per Build item of
    the oracle with `every_build_item`), or the `ids` given. Workspaces are looked up under
    `workspaces_root` (release or staged layout), default the release."""
    build_ids = {w for w, o in release.oracle.items() if o.task_type == Mode.BUILD}
    # a models folder may serve several releases: the models of items this oracle lacks are not run
    models = {w: files for w, files in discover_models(models_dir).items() if w in build_ids}
    for wid in [*disputes, *(ids or [])]:
        if wid not in build_ids:
            raise InputError(f"{wid}: not a Build item of the release's oracle ({release.root})")
    for wid, dispute in disputes.items():
        ref = release.oracle[wid].reference_objective
        if not agrees(dispute.reference, ref, 1e-9):
            raise InputError(
                f"{wid}: the disputes file's orspace_reference {dispute.reference} is not the oracle's {ref}"
            )
    chosen = set(ids) if ids else {*disputes, *models, *(build_ids if every_build_item else ())}
    todo: list[tuple[Path, Path]] = []
    for wid in sorted(chosen):
        workspace = find_workspace(workspaces_root, wid) if workspaces_root else release.workspace_dir(wid)
        if workspace is None:
            if wid in models:
                raise InputError(f"{wid}: workspace not found under {workspaces_root or release.root}")
            continue  # no models of its own to run
        todo += [(path, workspace) for path in models.get(wid, [])]

    def one(task: tuple[Path, Path]) -> JsonObject:
        out = run_model(task[0], task[1], time_limit_s)
        if progress is not None:
            progress(f"{task[0].parent.name}/{task[0].name}: {out['status']} {out['objective']}")
        return out

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcomes = dict(zip((t[0] for t in todo), pool.map(one, todo), strict=True))
    base = Path(models_dir).resolve().parent
    items = [_item(release, wid, disputes.get(wid), models.get(wid, []), outcomes, base) for wid in sorted(chosen)]
    counts = Counter(i["verdict"] for i in items)
    return {
        "schema_version": SCHEMA_VERSION,
        "benchmark": "or-space",
        "agreement_rule": AGREEMENT_RULE,
        "time_limit_s": time_limit_s,
        "n": len(items),
        "verdicts": {v.value: counts.get(v, 0) for v in AuditVerdict},
        "models": sum(len(i["models"]) for i in items),
        "items": items,
    }
