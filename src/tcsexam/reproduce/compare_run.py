"""A finished run directory as `tcsexam compare` reads it: index.json, the attempt table, the
manifest and, per Solver attempt, the solver-score output (or the records where scoring refused)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, read_json
from tcsexam.layout import ResultsLayout
from tcsexam.scoring.index import read_attempts


@dataclass
class Run:
    path: Path
    index: JsonObject
    table: Any  #: the attempt table (pandas, strings)
    manifest: JsonObject | None
    relative: dict[tuple[str, str, str], JsonObject]  #: (model, task, attempt) -> relative.json
    records: dict[tuple[str, str, str], list[JsonObject]]  #: (model, task, attempt) -> records.json

    @property
    def suite(self) -> str:
        return str(self.index.get("suite"))

    @property
    def protocol(self) -> str:
        return str(self.index.get("solver_protocol"))

    @property
    def reference_id(self) -> str:
        return str(self.index.get("solver_reference_id"))

    @property
    def models(self) -> list[str]:
        return list(self.index.get("models", {}))


def load_run(path: str | Path, solver_files: bool = True) -> Run:
    """A run directory; `solver_files=False` leaves the per-instance outputs unread (point deltas)."""
    path = Path(path)
    if not path.is_dir():
        raise InputError(f"{path}: run directory not found (expected results/<suite>/<protocol>)")
    layout = ResultsLayout(path)
    index_path = layout.index
    if not index_path.is_file():
        raise InputError(f"{path}: no index.json: not a finished evaluation")
    index = read_json(index_path, "index file")
    if not isinstance(index, dict) or not isinstance(index.get("models"), dict):
        raise InputError(f"{index_path}: not an index.json (no 'models' object)")
    table = read_attempts(layout.attempts_csv)
    manifest = None
    if layout.manifest.is_file():
        manifest = read_json(layout.manifest, "manifest")
        if not isinstance(manifest, dict):
            raise InputError(f"{layout.manifest}: a manifest must be a JSON object")
    relative: dict[tuple[str, str, str], JsonObject] = {}
    records: dict[tuple[str, str, str], list[JsonObject]] = {}
    if solver_files:
        for model, task, attempt, f in layout.solver_files("relative.json"):
            data = read_json(f, "solver-score output")
            if isinstance(data, dict) and data.get("relative_score") is not None:  # not a refusal
                relative[(model, task, attempt)] = data
        # the solver-score output holds every eligible instance's status and value; the records are
        # read only for attempts that have none (scoring refused or not run)
        for model, task, attempt, f in layout.solver_files("records.json"):
            key = (model, task, attempt)
            if key in relative:
                continue
            data = read_json(f, "records file")
            if isinstance(data, list):
                records[key] = [_outcome(r) for r in data if isinstance(r, dict)]
    return Run(path, index, table, manifest, relative, records)


def _outcome(record: JsonObject) -> JsonObject:
    value = record.get("A")
    if value is None:
        value = record.get("solved")
    return {"instance": str(record.get("instance")), "status": record.get("status"), "value": value}


def outcomes(run: Run, key: tuple[str, str, str]) -> list[JsonObject] | None:
    """Instance outcomes {instance, status, value[, score]} of one attempt (None: none known)."""
    if key in run.relative:
        data = run.relative[key]
        out = [i for i in data.get("instances", []) if isinstance(i, dict)]
        return out
    return run.records.get(key)
