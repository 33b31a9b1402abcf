"""Loading an OR-Space release: oracles, rubrics, the workspace index, difficulty, workspaces.

A *release root* is a folder in the public release's layout (every part optional except what a
command needs):

```
<root>/evaluation/build_evaluation/reference_objectives.csv
<root>/evaluation/revise_evaluation/reference_objectives.csv
<root>/evaluation/explain_evaluation/rubrics.jsonl        (+ rubric_schema.json)
<root>/supporting_files/metadata/workspace_index.csv
<root>/supporting_files/metadata/empirical_difficulty.csv
<root>/supporting_files/splits/<split>.json
<root>/Workspace_OR/{build,revise,explain}_workspaces/instance_<N>/
```

Everything that is wrong raises `InputError` naming the file, the line and the workspace id.
"""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, read_json, read_text


class Mode(StrEnum):
    """An OR-Space workspace's task: build a model, revise one, or explain one."""

    BUILD = "build"
    REVISE = "revise"
    EXPLAIN = "explain"


MODES: tuple[Mode, ...] = tuple(Mode)
#: the modes judged by solver status and objective against the oracle (Explain is judged by rubric)
OBJECTIVE_MODES: tuple[Mode, ...] = (Mode.BUILD, Mode.REVISE)
WORKSPACE_ID = re.compile(r"^or_space_(\d{3})_(build|revise|explain)$")
ORACLE_COLUMNS = (
    "workspace_id",
    "task_type",
    "instance_number",
    "instance_id",
    "reference_objective",
    "relative_tolerance",
)

#: Used when a release ships no rubric_schema.json (the release's schema without the 1..100 bound
#: on instance numbers, so bundled samples may use their own numbers).
DEFAULT_RUBRIC_SCHEMA: JsonObject = {
    "type": "object",
    "required": ["workspace_id", "question", "checklist", "expected_short_answer"],
    "properties": {
        "workspace_id": {"type": "string", "pattern": r"^or_space_[0-9]{3}_explain$"},
        "instance_id": {"type": "string"},
        "instance_number": {"type": "integer", "minimum": 1},
        "question": {"type": "string"},
        "expected_short_answer": {"type": "string"},
        "checklist": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["criterion_id", "checklist_type", "criterion"],
                "properties": {
                    "criterion_id": {"type": "string", "pattern": r"^c[0-9]+$"},
                    "checklist_type": {"enum": ["exact_match", "llm_boolean_judgment"]},
                    "criterion": {"type": "string"},
                    "target_entities": {"type": "array", "items": {"type": "string"}},
                    "instruction_for_judge": {"type": "string"},
                },
            },
        },
    },
}


def parse_workspace_id(workspace_id: Json) -> tuple[int, Mode]:
    """(instance number, mode) of `or_space_<NNN>_<mode>`; ValueError otherwise."""
    match = WORKSPACE_ID.match(workspace_id) if isinstance(workspace_id, str) else None
    if not match:
        raise ValueError(f"workspace id {workspace_id!r} is not of the form or_space_<NNN>_<build|revise|explain>")
    return int(match.group(1)), Mode(match.group(2))


def workspace_id(number: int, mode: Mode) -> str:
    return f"or_space_{number:03d}_{mode}"


@dataclass(frozen=True)
class OracleRow:
    workspace_id: str
    task_type: str
    instance_number: int
    instance_id: str
    reference_objective: float
    relative_tolerance: float


@dataclass
class Release:
    root: Path
    oracle: dict[str, OracleRow] = field(default_factory=dict)
    index: dict[str, dict[str, str]] = field(default_factory=dict)
    difficulty: dict[str, str] = field(default_factory=dict)

    def workspace_dir(self, wid: str) -> Path | None:
        return find_workspace(self.root, wid)


def _read_csv(path: Path, what: str) -> tuple[list[str], list[dict[str, str | None]]]:
    """The columns and rows of a CSV file with a header: a short row's missing fields are None, a
    long row's extra fields (csv's None key) are left out."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            rows = [{k: v for k, v in row.items() if k is not None} for row in reader]
            return list(reader.fieldnames or []), rows
    except FileNotFoundError:
        raise InputError(f"{path}: {what} not found") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{path}: cannot read {what}: {exc}") from None


def _finite(path: Path, line: int, wid: str, column: str, text: str | None) -> float:
    try:
        value = float(text or "")  # an empty or missing field: not a number
    except ValueError:
        raise InputError(f"{path}: line {line}: {wid}: {column} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(f"{path}: line {line}: {wid}: {column} {text!r} is not finite")
    return value


def load_oracle_csv(path: str | Path, mode: Mode | None = None) -> dict[str, OracleRow]:
    """One reference_objectives.csv; every row checked (ids, mode, numbers, duplicates)."""
    path = Path(path)
    columns, rows = _read_csv(path, "oracle CSV")
    missing = [c for c in ORACLE_COLUMNS if c not in columns]
    if missing:
        raise InputError(f"{path}: oracle CSV lacks column(s) {', '.join(missing)}")
    out: dict[str, OracleRow] = {}
    for line, row in enumerate(rows, start=2):
        wid = (row["workspace_id"] or "").strip()
        try:
            number, id_mode = parse_workspace_id(wid)
        except ValueError as exc:
            raise InputError(f"{path}: line {line}: {exc}") from None
        task_type = (row["task_type"] or "").strip()
        if task_type != id_mode or (mode is not None and task_type != mode):
            raise InputError(f"{path}: line {line}: {wid}: task_type {task_type!r} does not match")
        if wid in out:
            raise InputError(f"{path}: line {line}: duplicate workspace id {wid}")
        ref = _finite(path, line, wid, "reference_objective", row["reference_objective"])
        tol = _finite(path, line, wid, "relative_tolerance", row["relative_tolerance"])
        if tol < 0:
            raise InputError(f"{path}: line {line}: {wid}: relative_tolerance {tol} is negative")
        try:
            instance_number = int(row["instance_number"] or "")
        except ValueError:
            raise InputError(
                f"{path}: line {line}: {wid}: instance_number {row['instance_number']!r} is not an integer"
            ) from None
        if instance_number != number:
            raise InputError(f"{path}: line {line}: {wid}: instance_number {instance_number} disagrees with the id")
        out[wid] = OracleRow(wid, task_type, instance_number, (row["instance_id"] or "").strip(), ref, tol)
    return out


def oracle_path(root: Path, mode: Mode) -> Path:
    return root / "evaluation" / f"{mode}_evaluation" / "reference_objectives.csv"


def load_oracles(root: str | Path, modes: tuple[Mode, ...] = OBJECTIVE_MODES) -> dict[str, OracleRow]:
    root = Path(root)
    oracle: dict[str, OracleRow] = {}
    for mode in modes:
        path = oracle_path(root, mode)
        rows = load_oracle_csv(path, mode)
        for wid in rows:
            if wid in oracle:
                raise InputError(f"{path}: workspace id {wid} appears in two oracle files")
        oracle.update(rows)
    return oracle


def load_index(root: str | Path) -> dict[str, dict[str, str]]:
    """workspace_index.csv keyed by workspace id ({} when the release has none)."""
    path = Path(root) / "supporting_files" / "metadata" / "workspace_index.csv"
    if not path.exists():
        return {}
    columns, rows = _read_csv(path, "workspace index")
    if "workspace_id" not in columns:
        raise InputError(f"{path}: workspace index lacks column workspace_id")
    out: dict[str, dict[str, str]] = {}
    for line, row in enumerate(rows, start=2):
        wid = (row.get("workspace_id") or "").strip()
        try:
            parse_workspace_id(wid)
        except ValueError as exc:
            raise InputError(f"{path}: line {line}: {exc}") from None
        if wid in out:
            raise InputError(f"{path}: line {line}: duplicate workspace id {wid}")
        out[wid] = {k: (v or "").strip() for k, v in row.items()}
    return out


def load_difficulty(root: str | Path, index: dict[str, dict[str, str]] | None = None) -> dict[str, str]:
    """Difficulty label per workspace: empirical_difficulty.csv `difficulty`, else the index's
    `difficulty` (Build/Revise) or `difficulty_level` (Explain)."""
    root = Path(root)
    out: dict[str, str] = {}
    for wid, row in (index or {}).items():
        label = row.get("difficulty") or row.get("difficulty_level") or ""
        if label:
            out[wid] = label
    path = root / "supporting_files" / "metadata" / "empirical_difficulty.csv"
    if path.exists():
        columns, rows = _read_csv(path, "difficulty table")
        if "workspace_id" not in columns or "difficulty" not in columns:
            raise InputError(f"{path}: difficulty table needs columns workspace_id and difficulty")
        for entry in rows:
            difficulty = entry.get("difficulty")
            if difficulty:
                out[(entry["workspace_id"] or "").strip()] = difficulty.strip()
    return out


def load_release(root: str | Path, modes: tuple[Mode, ...] = OBJECTIVE_MODES) -> Release:
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"{root}: release folder not found")
    index = load_index(root)
    return Release(root=root, oracle=load_oracles(root, modes), index=index, difficulty=load_difficulty(root, index))


def rubric_schema(rubrics_file: str | Path) -> JsonObject:
    """The release's rubric_schema.json beside the rubrics file, else DEFAULT_RUBRIC_SCHEMA."""
    path = Path(rubrics_file).parent / "rubric_schema.json"
    if path.exists():
        schema: JsonObject = read_json(path, "rubric schema")  # (jsonschema checks it is one where used)
        return schema
    return DEFAULT_RUBRIC_SCHEMA


def load_rubrics(path: str | Path, schema: JsonObject | None = None) -> dict[str, JsonObject]:
    """rubrics.jsonl keyed by workspace id; every row validated against the rubric schema and
    checked for duplicate ids, duplicate criterion ids and exact-match items without entities."""
    import jsonschema

    path = Path(path)
    if schema is None:
        schema = rubric_schema(path)
    validator = jsonschema.Draft202012Validator(schema)
    out: dict[str, JsonObject] = {}
    for line, row in _numbered_jsonl(path, "rubrics file"):
        wid = row.get("workspace_id") if isinstance(row, dict) else None
        errors = sorted(validator.iter_errors(row), key=lambda e: list(e.absolute_path))
        if errors:
            err = errors[0]
            where = "/".join(str(p) for p in err.absolute_path) or "row"
            raise InputError(f"{path}: line {line}: {wid or '?'}: {where}: {err.message}")
        if wid in out:
            raise InputError(f"{path}: line {line}: duplicate workspace id {wid}")
        seen: set[str] = set()
        for item in row["checklist"]:
            cid = item["criterion_id"]
            if cid in seen:
                raise InputError(f"{path}: line {line}: {wid}: duplicate criterion id {cid}")
            seen.add(cid)
            if item["checklist_type"] == "exact_match" and not item.get("target_entities"):
                raise InputError(f"{path}: line {line}: {wid}: exact-match criterion {cid} has no target_entities")
        out[str(wid)] = row  # the schema has made it a string
    return out


def _numbered_jsonl(path: Path, what: str):
    lines = read_text(path, what).splitlines()
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            yield number, json.loads(text)
        except ValueError as exc:
            raise InputError(f"{path}: line {number}: malformed JSON: {exc}") from None


def read_jsonl_numbered(path: str | Path, what: str):
    """(line number, row) pairs of a JSONL file; malformed lines raise InputError."""
    return list(_numbered_jsonl(Path(path), what))


# ----------------------------------------------------------------------------- workspaces


def find_workspace(root: str | Path, wid: str) -> Path | None:
    """The folder of workspace `wid` under `root`: a staged layout (`root/<wid>/`), the release
    layout (`root/Workspace_OR/<mode>_workspaces/instance_<N>/`) or `root/<mode>_workspaces/...`."""
    root = Path(root)
    number, mode = parse_workspace_id(wid)
    for candidate in (
        root / wid,
        root / "Workspace_OR" / f"{mode}_workspaces" / f"instance_{number}",
        root / f"{mode}_workspaces" / f"instance_{number}",
    ):
        if candidate.is_dir():
            return candidate
    return None


def discover_workspaces(root: str | Path, modes: tuple[Mode, ...] = MODES) -> dict[str, Path]:
    """Every workspace under `root` (staged or release layout), keyed by workspace id, sorted."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"{root}: workspaces folder not found")
    found: dict[str, Path] = {}
    for child in root.iterdir():
        if child.is_dir() and WORKSPACE_ID.match(child.name):
            if parse_workspace_id(child.name)[1] in modes:
                found[child.name] = child
    for base in (root / "Workspace_OR", root):
        for mode in modes:
            folder = base / f"{mode}_workspaces"
            if not folder.is_dir():
                continue
            for child in folder.iterdir():
                match = re.fullmatch(r"instance_(\d+)", child.name)
                if child.is_dir() and match:
                    wid = workspace_id(int(match.group(1)), mode)
                    if wid in found and found[wid] != child:
                        raise InputError(f"{root}: workspace {wid} found twice ({found[wid]} and {child})")
                    found[wid] = child
    return dict(sorted(found.items()))


def revise_type(wid: str, index: dict[str, dict[str, str]], workspace: Path | None = None) -> str:
    """R1-R5 of a Revise workspace: the index's `revise_type`, else its metadata.json."""
    label = (index.get(wid) or {}).get("revise_type", "")
    if not label and workspace is not None and (workspace / "metadata.json").exists():
        meta = read_json(workspace / "metadata.json", "workspace metadata")
        if isinstance(meta, dict):
            label = str(meta.get("revise_type") or "")
    return label or "unknown"
