"""The leakage audit of `orspace stage`: no staged file (nor the flat prompt) may show the agent the
answers of its problem.

**Secret items of problem N** (from the release's evaluator files, all three modes):

- the oracle's `reference_objective` of `or_space_N_build` and `or_space_N_revise`;
- every exact-match target entity of the rubric of `or_space_N_explain`.

**Matching** (the release's exact-match normalisation, `normalize.py`): each text is normalised
(NFKC, quotes/dashes folded, backticks dropped, white space collapsed, thousands separators dropped,
casefolded). A numeric item matches a number cited in the text (on number boundaries: `2190` does
not contain `219`, digits inside identifiers such as `x_219816` are not numbers) within relative
1e-6; any other item matches on identifier boundaries (`Food II` does not contain `I`).

**What is not a leak, and why** (without these rules the real release fails on hundreds of
natural occurrences; each exclusion is counted in the manifest):

- *trivial items*: integer values of magnitude at most 10 (`1`, `2`, `5.0`) and targets of at most
  two characters (`I`, `II`): they occur in every workspace as counts, indices, small parameters and
  product or set names, so their presence says nothing;
- *public evidence*: the Explain task asks the agent to find its rubric targets in the workspace,
  so a target that the release's Explain workspace of N shows in its evidence (data tables, model
  code and formulation, logs, solver records, the question) is evidence, not a secret (a
  `name=value` target is shown by a parameter row holding both, e.g. `lead_premium,3000`); only
  targets found in none of those (derived answers) are secret;
- *coincident inputs*: an objective value that is also a number of the problem's input tables (the
  data tables of the release's Explain workspace of N; e.g. an objective of 2000 with a capacity of
  2000) cannot be told from the input by value; such hits are recorded as `coincident`;
- *Explain evidence files*: an Explain workspace's logs, solver records, data, code and the question
  carry the solved objectives by design (the task is to explain those solutions), so in Explain
  workspaces only the other files (documents, metadata outside the question, anything extra) are
  scanned.

A hit fails staging with one line naming the workspace, the file and the leaked item.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject
from tcsexam.orspace.normalize import _entity_pattern, cited_numbers, normalize_text, numbers_close, parse_number
from tcsexam.orspace.release import (
    OBJECTIVE_MODES,
    Mode,
    find_workspace,
    load_oracle_csv,
    load_rubrics,
    oracle_path,
    parse_workspace_id,
    workspace_id,
)

TRIVIAL_ABS = 10
TRIVIAL_CHARS = 2  #: identifier targets this short (`I`, `II`, `x`) are trivial
EVIDENCE_DIRS = {"data", "src", "logs", "solver_records"}
MAX_BYTES = 16 * 1024 * 1024
#: how the audit names the scan of a file's own name (`data/10755.csv (file name)`)
FILE_NAME = "(file name)"


class LeakError(InputError):
    """A staged file shows a secret item."""


@dataclass(frozen=True)
class Item:
    kind: str  #: objective:build, objective:revise, explain_target
    source: str  #: the evaluator row it comes from (workspace id, criterion)
    text: str  #: as written in the evaluator file
    number: float | None  #: the value when numeric

    def label(self) -> str:
        return f"{self.kind} {self.text!r} of {self.source}"


@dataclass
class ProblemSecrets:
    secret: list[Item] = field(default_factory=list)
    public_targets: int = 0
    trivial: int = 0
    input_numbers: np.ndarray = field(default_factory=lambda: np.zeros(0))


class Text:
    """A normalised text with its cited numbers (computed once, matched against many items)."""

    def __init__(self, raw: str):
        self.norm = normalize_text(raw)
        self.numbers = cited_numbers(self.norm)

    def has(self, item: Item) -> bool:
        if item.number is not None:
            return bool(self.numbers.size) and bool(numbers_close(self.numbers, item.number).any())
        return _item_pattern(item.text).search(self.norm) is not None


@lru_cache(maxsize=65536)
def _item_pattern(text: str) -> re.Pattern:
    return _entity_pattern(normalize_text(text))


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_BYTES:
            return ""
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


_ASSIGNMENT = re.compile(r"^\s*([A-Za-z_]\w*)\s*[=:]\s*(\S+)\s*$")


def _shows(text: Text, item: Item) -> bool:
    """Does an evidence text show the item (a `name=value` target is shown by a parameter row
    that has both within 40 characters, e.g. the CSV line `lead_premium,3000,...`)."""
    if text.has(item):
        return True
    match = _ASSIGNMENT.match(item.text)
    if not match:
        return False
    name, value = match.groups()
    number = parse_number(normalize_text(value))
    if number is None:
        return False
    pattern = re.compile(r"(?<!\w)" + re.escape(normalize_text(name)) + r"(?!\w).{0,40}")
    return any(numbers_close(cited_numbers(line.group(0)), number).any() for line in pattern.finditer(text.norm))


def _is_trivial(item: Item) -> bool:
    if item.number is not None:
        return float(item.number).is_integer() and abs(item.number) <= TRIVIAL_ABS
    return len(normalize_text(item.text)) <= TRIVIAL_CHARS


def _item(kind: str, source: str, text: str) -> Item:
    return Item(kind, source, text, parse_number(normalize_text(text)))


def _explain_evidence(folder: Path | None) -> tuple[list[Text], np.ndarray]:
    """The evidence of a release Explain workspace (its texts joined into one, separated so that no
    item spans two files) and the numbers of its data tables."""
    if folder is None:
        return [], np.zeros(0)
    texts, numbers = [], []
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        rel = PurePosixPath(path.relative_to(folder).as_posix())
        if rel.name == "metadata.json":
            try:
                meta = json.loads(_read(path))
                texts.append(str(meta.get("explain_task", {}).get("question", "")))
            except (ValueError, AttributeError):
                pass
            continue
        if not EVIDENCE_DIRS & set(rel.parts[:-1]):
            continue
        raw = _read(path)
        texts.append(raw)
        if "data" in rel.parts[:-1]:
            numbers.append(Text(raw).numbers)
    joined = [Text("\n\u2063|\u2063\n".join(texts))] if texts else []
    return joined, np.unique(np.concatenate(numbers)) if numbers else np.zeros(0)


class Secrets:
    """The secret items of every problem of a release (loaded once per stage)."""

    def __init__(self, release_root: Path, workspaces_root: Path | None = None):
        self.root = Path(release_root)
        #: where the Explain workspaces that show public evidence are looked up (then the release)
        self.workspaces_roots = [Path(workspaces_root)] if workspaces_root is not None else []
        self.workspaces_roots.append(self.root)
        self.objectives: dict[int, list[Item]] = {}
        for mode in OBJECTIVE_MODES:
            path = oracle_path(self.root, mode)
            if path.exists():
                for wid, row in load_oracle_csv(path, mode).items():
                    item = Item(f"objective:{mode}", wid, f"{row.reference_objective:.15g}", row.reference_objective)
                    self.objectives.setdefault(row.instance_number, []).append(item)
        self.targets: dict[int, list[Item]] = {}
        rubrics = self.root / "evaluation" / "explain_evaluation" / "rubrics.jsonl"
        if rubrics.exists():
            for wid, rubric in load_rubrics(rubrics).items():
                number = parse_workspace_id(wid)[0]
                for crit in rubric["checklist"]:
                    if crit["checklist_type"] != "exact_match":
                        continue
                    for entity in crit.get("target_entities", []):
                        item = _item("explain_target", f"{wid} {crit['criterion_id']}", entity)
                        self.targets.setdefault(number, []).append(item)
        self._problems: dict[int, ProblemSecrets] = {}

    def items(self) -> int:
        return sum(map(len, self.objectives.values())) + sum(map(len, self.targets.values()))

    def problem(self, number: int) -> ProblemSecrets:
        if number in self._problems:
            return self._problems[number]
        out = ProblemSecrets()
        wid = workspace_id(number, Mode.EXPLAIN)
        folder = next((f for f in (find_workspace(r, wid) for r in self.workspaces_roots) if f is not None), None)
        evidence, out.input_numbers = _explain_evidence(folder)
        for item in self.objectives.get(number, []) + self.targets.get(number, []):
            if _is_trivial(item):
                out.trivial += 1
            elif item.kind == "explain_target" and any(_shows(t, item) for t in evidence):
                out.public_targets += 1
            elif item not in out.secret:
                out.secret.append(item)
        self._problems[number] = out
        return out


def scanned(relative: str, mode: Mode) -> bool:
    """Is this staged file scanned (Explain evidence files are not, see the module docstring)."""
    parts = PurePosixPath(relative).parts
    return mode != Mode.EXPLAIN or not (EVIDENCE_DIRS & set(parts[:-1]))


def audit_texts(wid: str, texts: dict[str, str], secrets: Secrets) -> JsonObject:
    """Scan `texts` (relative name -> content) of staged workspace `wid`; returns the audit entry
    (`leaks` lists every hit: file, kind, item, source). An Explain workspace's metadata.json is
    passed without its question (`metadata_text`)."""
    number, mode = parse_workspace_id(wid)
    problem = secrets.problem(number)
    leaks, coincident, files = [], [], 0
    # a file's name is shown too (the agent lists the folder; the flat prompt names every file)
    names = {f"{rel} {FILE_NAME}": rel for rel in texts if "::" not in rel}
    for rel in sorted({**texts, **names}):
        if not scanned(rel, mode):
            continue
        text = Text(names[rel] if rel in names else texts[rel])
        files += rel not in names
        for item in problem.secret:
            if not text.has(item):
                continue
            hit = {"file": rel, "kind": item.kind, "item": item.text, "source": item.source}
            if (
                item.kind.startswith("objective")
                and problem.input_numbers.size
                and item.number is not None
                and numbers_close(problem.input_numbers, item.number).any()
            ):
                coincident.append(hit)
            else:
                leaks.append(hit)
    return {
        "files_scanned": files,
        "secret_items": len(problem.secret),
        "public_targets": problem.public_targets,
        "trivial_items": problem.trivial,
        "coincident": coincident,
        "leaks": leaks,
    }


def metadata_text(meta: Json, mode: Mode) -> str:
    """The text of a (sanitised) metadata.json as audited: an Explain workspace's question is public."""
    if mode == Mode.EXPLAIN and isinstance(meta, dict) and isinstance(meta.get("explain_task"), dict):
        meta = {**meta, "explain_task": {k: v for k, v in meta["explain_task"].items() if k != "question"}}
    return json.dumps(meta, ensure_ascii=False)


def leak_line(wid: str, leak: JsonObject, where: str) -> str:
    return (
        f"leakage audit: {where}/{wid}/{leak['file']} shows {leak['kind']} {leak['item']!r} "
        f"(from {leak['source']}); staging refused"
    )
