"""Why a Build/Revise result failed (docs/orspace.md "Failure attribution"): one `Attribution` per
failed result, decided by deterministic evidence in this order, with the evidence kept on the row.

1. `execution`: the program did not produce a proven optimum (its failure mode is an execution
   error, a timeout, a missing output, or a solver stopped short of optimality).
2. `grounding`: the program did not read a data file the requirements name (the files it opened
   in the sandbox, `capture`; without them, the file names its source mentions or a listing of the
   data folder), or its source assigns a parameter of `general_parameters.csv` by name a value that
   differs from the file's. Data values hard-coded in the source are listed as evidence too.
3. `modelling`: grounded, and its objective is the optimum of another reading the reference audit
   evidences (`audit-references`), or its captured model cannot reach the reference by dropping any
   one constraint nor integrality, or it is unbounded (a required bound is missing).
4. `invented_constraint`: grounded, and re-solving its captured model (the LP file of its PuLP,
   highspy, gurobipy or coptpy model) with
   one constraint removed (a row, or a variable's bounds widened to [min(lower, 0), inf)), or with
   integrality relaxed, gives the reference: that constraint changes the optimum and is named.
5. `unknown`: what the evidence cannot decide (a wrong objective or an infeasible model whose model
   was not captured).

With a judge (`attribute_rows(judge=...)`, `attribution_judge.AttributionJudge`), every row the
evidence leaves `unknown` whose program is at hand is put before it; what it names is kept with
`attributed_by: judge`, its model, reason and raw reply (`attribution_judge`). A judge failure
leaves the row `unknown` (`attributed_by: evidence`) with the error named.
"""

from __future__ import annotations

import ast
import csv
import json
import math
import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from tcsexam.fileio import Json, JsonObject
from tcsexam.orspace.audit import agrees
from tcsexam.orspace.judge import BudgetExceeded
from tcsexam.orspace.objectives import FailureMode
from tcsexam.orspace.release import find_workspace, parse_workspace_id
from tcsexam.orspace.scoring_views import ReferenceEvidence


class Attribution(StrEnum):
    """Why a failed Build/Revise result failed (exactly one per failed result)."""

    EXECUTION = "execution"
    GROUNDING = "grounding"
    MODELLING = "modelling"
    INVENTED_CONSTRAINT = "invented_constraint"
    UNKNOWN = "unknown"


class AttributedBy(StrEnum):
    """What decided a row's attribution."""

    EVIDENCE = "evidence"
    JUDGE = "judge"


#: a judge of the rows the evidence leaves unknown: (row, task root, record, evidence, the audit's
#: evidenced answers) -> (attribution, the judge's entry: model, reason, raw reply, or error)
RowJudge = Callable[
    [JsonObject, Path, JsonObject | None, JsonObject, list[tuple[float, str]] | None],
    tuple["Attribution", JsonObject],
]

#: failure modes that are the program's execution, not its model
EXECUTION_MODES = frozenset(
    {FailureMode.EXECUTION_ERROR, FailureMode.TIMEOUT, FailureMode.MISSING_OUTPUT, FailureMode.NOT_OPTIMAL}
)
#: literals too common in any program to say anything about the data
TRIVIAL = frozenset({0.0, 1.0, -1.0})
DATA_SUFFIXES = (".csv", ".json", ".txt", ".xlsx")
SOURCE_SUFFIXES = (".py",)
_LISTING = re.compile(r"\b(glob|rglob|listdir|iterdir|scandir|walk)\s*\(")
#: seconds of constraint-removal re-solves per result
REMOVAL_BUDGET_S = 60.0
MAX_ROWS = 2000
#: the column an LP file carries the objective's constant in (fixed at 1: gurobipy `Constant`,
#: coptpy `ObjConstant`): never widened nor freed by the removal test
CONSTANT_COLUMNS = frozenset({"Constant", "ObjConstant"})


def _name(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", text.strip().lower()).strip("_")


def _number(text: Json) -> float | None:
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text) if math.isfinite(text) else None
    if not isinstance(text, str):
        return None
    try:
        value = float(text.strip().replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@dataclass
class DataFacts:
    """The data a task names: its files (relative to the task root) with their numeric values, and
    the parameters of `general_parameters.csv` by normalised name."""

    files: dict[str, set[float]] = field(default_factory=dict)
    parameters: dict[str, float] = field(default_factory=dict)


def data_facts(root: Path) -> DataFacts:
    facts = DataFacts()
    folder = root / "data"
    if not folder.is_dir():
        return facts
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in DATA_SUFFIXES):
        rel = path.relative_to(root).as_posix()
        values: set[float] = set()
        try:
            text = path.read_text(encoding="utf-8-sig", errors="replace")
        except OSError:
            continue
        if path.suffix.lower() == ".json":
            try:
                _json_numbers(json.loads(text), values)
            except json.JSONDecodeError:
                pass
        else:
            rows = list(csv.reader(text.splitlines()))
            if len(rows) < 2:
                continue  # a header alone: nothing to read (e.g. an empty table_1.csv)
            for row in rows[1:]:
                values.update(v for v in map(_number, row) if v is not None)
            if path.name == "general_parameters.csv":
                for row in rows[1:]:
                    if len(row) >= 2 and (number := _number(row[1])) is not None:
                        facts.parameters[_name(row[0])] = number
        facts.files[rel] = values
    return facts


def _json_numbers(value: Json, out: set[float]) -> None:
    if isinstance(value, dict):
        for v in value.values():
            _json_numbers(v, out)
    elif isinstance(value, list):
        for v in value:
            _json_numbers(v, out)
    elif (number := _number(value) if not isinstance(value, str) else None) is not None:
        out.add(number)


@dataclass
class SourceFacts:
    """What a program's source says without running it."""

    text: str = ""
    literals: list[tuple[float, str]] = field(default_factory=list)  #: (value, "file:line")
    assigned: list[tuple[str, float, str]] = field(default_factory=list)  #: (name, value, "file:line")


def source_facts(src: Path) -> SourceFacts:
    facts = SourceFacts()
    if not src.is_dir():
        return facts
    texts = []
    for path in sorted(p for p in src.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        texts.append(text)
        rel = path.relative_to(src).as_posix()
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and (value := _number(node.value)) is not None:
                if not isinstance(node.value, str):
                    facts.literals.append((value, f"{rel}:{node.lineno}"))
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = _literal(node.value)
                for target in targets:
                    if isinstance(target, ast.Name) and value is not None:
                        facts.assigned.append((_name(target.id), value, f"{rel}:{node.lineno}"))
            elif isinstance(node, ast.Dict):
                for key, item in zip(node.keys, node.values, strict=True):
                    if (
                        isinstance(key, ast.Constant)
                        and isinstance(key.value, str)
                        and (v := _literal(item)) is not None
                    ):
                        facts.assigned.append((_name(key.value), v, f"{rel}:{key.lineno}"))
    facts.text = "\n".join(texts)
    return facts


def _literal(node: ast.AST) -> float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and not isinstance(node.value, (str, bool)):
        return _number(node.value)
    return None


def grounding_evidence(data: DataFacts, source: SourceFacts, files_read: list[str] | None) -> JsonObject:
    """Which data files the program read (and how that is known), which it did not, the data values
    its source hard-codes, and the parameters it assigns another value than the data's."""
    if files_read is not None:
        read = sorted(f for f in data.files if f in files_read)
        how = "opened in the sandbox"
    elif _LISTING.search(source.text) and "data" in source.text:
        read, how = sorted(data.files), "lists the data folder (source)"
    else:
        read = sorted(f for f in data.files if Path(f).name in source.text or Path(f).stem in source.text)
        how = "named in the source"
    all_values = {v: f for f, values in data.files.items() for v in values}
    hardcoded = sorted(
        {
            (where, value, all_values[value])
            for value, where in source.literals
            if value not in TRIVIAL and value in all_values
        }
    )
    changed = [
        {"name": name, "source_value": value, "data_value": data.parameters[name], "where": where}
        for name, value, where in source.assigned
        if name in data.parameters and not math.isclose(value, data.parameters[name], rel_tol=1e-9, abs_tol=1e-12)
    ]
    return {
        "data_files": sorted(data.files),
        "read": read,
        "read_known_by": how,
        "unread": sorted(set(data.files) - set(read)),
        "hardcoded_data_values": [{"where": w, "value": v, "file": f} for w, v, f in hardcoded[:50]],
        "changed_values": changed,
    }


def _constant_rows(lp: Any, constant: set[int]) -> set[int]:
    """The rows that only fix an objective-constant column (COPT writes `ObjConstant = 1` as a
    row): part of how the file encodes the constant, not a constraint of the model."""
    if not constant:
        return set()
    matrix = lp.a_matrix_
    if len(matrix.start_) != lp.num_col_ + 1:  # not column-wise (a file read is)
        return set()
    start, index = list(matrix.start_), list(matrix.index_)
    counts = Counter(index)
    return {
        index[k]
        for j in constant
        for k in range(start[j], start[j + 1])
        if counts[index[k]] == 1 and lp.row_lower_[index[k]] == lp.row_upper_[index[k]]
    }


def constraint_removal(
    model_lp: str, objective: float | None, reference: float, tolerance: float, budget_s: float = REMOVAL_BUDGET_S
) -> JsonObject:
    """Re-solve a captured LP model with HiGHS: as it is, with integrality relaxed, and with each
    constraint removed in turn; which of these give the reference (the objective's constant, which
    an LP file may drop, is carried over from the program's own objective)."""
    import highspy

    with tempfile.TemporaryDirectory(prefix="tcsexam-attr-") as tmp:
        path = os.path.join(tmp, "model.lp")
        Path(path).write_text(model_lp)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("time_limit", 10.0)
        if h.readModel(path) == highspy.HighsStatus.kError:
            return {"solved": False, "message": "the captured model does not read as an LP file"}

        def solve() -> float | None:
            h.run()
            if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                return None
            return float(h.getInfo().objective_function_value)

        base = solve()
        sign, offset = 1.0, 0.0
        if objective is not None and base is not None:
            # a solver backend may have written the model minimising the negated objective
            flipped = agrees(-base, objective, tolerance) and not agrees(base, objective, tolerance)
            sign = -1.0 if flipped else 1.0
            offset = objective - sign * base

        def value_of(raw: float | None) -> float | None:
            return None if raw is None else sign * raw + offset

        out: JsonObject = {
            "solved": True,
            "model_objective": base,
            "sense_flipped": sign < 0,
            "offset": offset,
            "removed": [],
            "tried": 0,
        }
        lp = h.getLp()
        rows = lp.num_row_
        names = list(lp.row_names_) if len(lp.row_names_) == rows else [f"row {i}" for i in range(rows)]
        integrality = list(lp.integrality_)
        if any(int(k) != 0 for k in integrality):
            # highspy's stub asks for arrays; its binding takes these lists as well
            columns, continuous = list(range(len(integrality))), [highspy.HighsVarType.kContinuous] * len(integrality)
            h.changeColsIntegrality(len(integrality), columns, continuous)  # type: ignore[arg-type, unused-ignore]
            relaxed = value_of(solve())
            out["integrality_relaxed"] = relaxed
            out["integrality_gives_reference"] = relaxed is not None and agrees(relaxed, reference, tolerance)
            h.changeColsIntegrality(len(integrality), list(range(len(integrality))), integrality)  # type: ignore[arg-type, unused-ignore]
        start = time.monotonic()
        lower, upper = list(lp.row_lower_), list(lp.row_upper_)
        cols = lp.num_col_
        col_names = list(lp.col_names_) if len(lp.col_names_) == cols else [f"column {j}" for j in range(cols)]
        constant = {j for j, name in enumerate(col_names) if name in CONSTANT_COLUMNS}
        fixing = _constant_rows(lp, constant)
        for i in range(min(rows, MAX_ROWS)):
            if time.monotonic() - start > budget_s:
                break
            if i in fixing:
                continue
            h.changeRowBounds(i, -highspy.kHighsInf, highspy.kHighsInf)
            value = value_of(solve())
            h.changeRowBounds(i, lower[i], upper[i])
            out["tried"] += 1
            if value is not None and agrees(value, reference, tolerance):
                out["removed"].append({"constraint": names[i], "objective": value})
        col_lower, col_upper = list(lp.col_lower_), list(lp.col_upper_)
        for j in range(min(cols, MAX_ROWS)):
            binary = integrality and int(integrality[j]) != 0 and col_lower[j] == 0 and col_upper[j] == 1
            natural = (min(col_lower[j], 0.0), highspy.kHighsInf)
            if j in constant or binary or (col_lower[j], col_upper[j]) == natural:
                continue
            if time.monotonic() - start > budget_s:
                continue
            h.changeColBounds(j, *natural)
            value = value_of(solve())
            h.changeColBounds(j, col_lower[j], col_upper[j])
            out["tried"] += 1
            if value is not None and agrees(value, reference, tolerance):
                out["removed"].append({"constraint": f"bounds of {col_names[j]}", "objective": value})
        out["rows"] = rows
        return out


def attribute(
    row: JsonObject, root: Path | None, record: JsonObject | None, answers: list[tuple[float, str]] | None
) -> tuple[Attribution, JsonObject]:
    """The attribution of one failed scored row and its evidence (`root`: the submission's task
    root, `record`: its execution record, `answers`: the audit's evidenced answers of the item)."""
    mode = FailureMode(row["failure_mode"])
    evidence: JsonObject = {"failure_mode": mode}
    if mode in EXECUTION_MODES:
        evidence["message"] = (record or {}).get("message") or None
        return Attribution.EXECUTION, evidence
    if root is None:
        evidence["note"] = "submission not found: no evidence"
        return Attribution.UNKNOWN, evidence
    record = record or {}
    ground = grounding_evidence(data_facts(root), source_facts(root / "src"), record.get("files_read"))
    evidence["grounding"] = ground
    if ground["unread"] or ground["changed_values"]:
        return Attribution.GROUNDING, evidence
    objective, reference, tol = row.get("objective"), row["reference_objective"], row["relative_tolerance"]
    if answers and objective is not None and mode == FailureMode.WRONG_OBJECTIVE:
        match = next((src for value, src in answers if src != "reference" and agrees(objective, value, tol)), None)
        if match is not None:
            evidence["matches_reading"] = match
            return Attribution.MODELLING, evidence
    model = record.get("model_lp")
    if model:
        removal = constraint_removal(model, objective if mode == FailureMode.WRONG_OBJECTIVE else None, reference, tol)
        evidence["constraint_removal"] = removal
        if removal.get("solved"):
            if removal["removed"] or removal.get("integrality_gives_reference"):
                return Attribution.INVENTED_CONSTRAINT, evidence
            return Attribution.MODELLING, evidence
    if mode == FailureMode.UNBOUNDED:
        evidence["note"] = "unbounded: a bound or constraint the requirements imply is missing"
        return Attribution.MODELLING, evidence
    evidence["note"] = "no captured model: the evidence cannot tell a modelling error from an invented constraint"
    return Attribution.UNKNOWN, evidence


def _task_root(workspace: Path, wid: str) -> Path:
    return workspace / "revised" if parse_workspace_id(wid)[1] == "revise" else workspace


def attribute_rows(
    summary: JsonObject,
    workspaces_root: Path | None,
    records_dir: Path | None,
    evidence: ReferenceEvidence | None = None,
    judge: RowJudge | None = None,
) -> JsonObject:
    """Add `attribution` (None for a passed result), `attributed_by` and `attribution_evidence` to
    every row of a `score_objectives` summary, and the counts `attributions` /
    `attributions_by_mode`, in place. With `judge`, the rows the evidence leaves unknown (with a
    program at hand) are judged: the row's `attribution_judge` holds the judge's entry, and the
    summary's `attribution_judge` what was asked, decided and failed."""
    answers = (evidence.answers if evidence else None) or {}
    asked, errors, stopped = [], [], None
    for row in summary["rows"]:
        if row["passed"]:
            row["attribution"], row["attribution_evidence"], row["attributed_by"] = None, None, None
            continue
        wid = row["workspace_id"]
        workspace = find_workspace(workspaces_root, wid) if workspaces_root else None
        record = None
        if records_dir is not None and (records_dir / f"{wid}.json").is_file():
            try:
                record = json.loads((records_dir / f"{wid}.json").read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                record = None
        root = _task_root(workspace, wid) if workspace else None
        row["attribution"], row["attribution_evidence"] = attribute(row, root, record, answers.get(wid))
        row["attributed_by"] = AttributedBy.EVIDENCE
        if judge is None or root is None or row["attribution"] != Attribution.UNKNOWN:
            continue
        asked.append(wid)
        if stopped is not None:
            row["attribution_judge"] = {"error": f"not asked: {stopped}"}
            errors.append(wid)
            continue
        try:
            verdict, entry = judge(row, root, record, row["attribution_evidence"], answers.get(wid))
        except BudgetExceeded as exc:
            stopped = f"judge budget reached at {wid}: {exc}"
            verdict, entry = Attribution.UNKNOWN, {"error": stopped}
        row["attribution_judge"] = entry
        if "error" in entry:
            errors.append(wid)
        else:
            row["attribution"], row["attributed_by"] = verdict, AttributedBy.JUDGE
    failed = [r for r in summary["rows"] if not r["passed"]]
    counts = Counter(r["attribution"] for r in failed)
    summary["attributions"] = {a.value: counts.get(a, 0) for a in Attribution}
    summary["attributions_by_mode"] = {
        mode: {a.value: sum(1 for r in failed if r["mode"] == mode and r["attribution"] == a) for a in Attribution}
        for mode in summary.get("modes", [])
    }
    by = Counter(r["attributed_by"] for r in failed)
    summary["attributed_by"] = {b.value: by.get(b, 0) for b in AttributedBy}
    if judge is not None:
        judged = [r for r in failed if r["attributed_by"] == AttributedBy.JUDGE]
        decided = Counter(r["attribution"] for r in judged)
        summary["attribution_judge"] = {
            "asked": asked,
            "decided": {a.value: decided.get(a, 0) for a in Attribution if a != Attribution.EXECUTION},
            "errors": errors,
            "budget_stop": stopped,
        }
    return summary
