"""`tcsexam orspace stage`: participant workspaces made from a release.

Each selected workspace is copied to `<output>/<workspace_id>/`, leaving out every evaluator-only
file and field:

- files: anything under an `evaluation/` folder, `reference_objectives*.csv`, `rubrics*.jsonl`,
  `rubric_schema.json`, `judge_prompt*`, `normalization.md`, `empirical_difficulty.csv`,
  predictions/answers of earlier runs, VCS/cache clutter (`.git`, `__pycache__`, `.gitkeep`);
- metadata.json keys that carry scoring labels: `reference_objective(s)`, `expected_objective`,
  `oracle`, `checklist`, `rubric`, `expected_short_answer`, `target_entities`, `ground_truth`,
  `solution`/`answer` (at any depth).

The empty submission folders the release ships as `.gitkeep` are recreated: `src/` (Build) and
`revised/src/` (Revise). `<output>/manifest.json` lists every staged workspace with its source and
the sha256 of each file. The output is built in a temporary sibling folder and renamed into place,
so an interrupted stage leaves nothing behind; an existing non-empty output is refused.

A stage is made under one condition (`conditions.Condition`: Revise view, interface, context):
model artifacts the condition hides are left out (listed as `hidden`), the flat interface adds
`<output>/prompts/<workspace_id>.txt` (`flat.py`), and the manifest records the condition. Every
staged file and every flat prompt then passes the leakage audit (`leakage.py`); a hit fails the
stage with one line and leaves no output; the audit is recorded per workspace in the manifest.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import tempfile
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, atomic_write_json, read_json
from tcsexam.orspace import flat, leakage
from tcsexam.orspace.conditions import ARTIFACT_KINDS, DEFAULT_CONDITION, Condition, Interface, artifact_kind
from tcsexam.orspace.release import MODES, Mode, discover_workspaces, parse_workspace_id
from tcsexam.records.digest import hash_file

MANIFEST_VERSION = 2

EXCLUDED_DIRS = {"evaluation", ".git", "__pycache__", ".ipynb_checkpoints"}
EXCLUDED_FILES = (
    "reference_objectives*.csv",
    "rubrics*.jsonl",
    "rubric_schema.json",
    "judge_prompt*",
    "normalization.md",
    "empirical_difficulty.csv",
    "predictions*.jsonl",
    "answers*.jsonl",
    ".gitkeep",
    "*.pyc",
    ".DS_Store",
)
EVALUATOR_KEYS = {
    "reference_objective",
    "reference_objectives",
    "expected_objective",
    "oracle",
    "checklist",
    "rubric",
    "rubrics",
    "expected_short_answer",
    "target_entities",
    "ground_truth",
    "solution",
    "answer",
}


def is_evaluator_only(relative: Path) -> bool:
    if any(part in EXCLUDED_DIRS for part in relative.parts[:-1]):
        return True
    return any(fnmatch.fnmatch(relative.name, pattern) for pattern in EXCLUDED_FILES)


def sanitize_metadata(value: Json) -> Json:
    if isinstance(value, dict):
        return {k: sanitize_metadata(v) for k, v in value.items() if k not in EVALUATOR_KEYS}
    if isinstance(value, list):
        return [sanitize_metadata(v) for v in value]
    return value


def stage_workspace(
    source: Path, target: Path, mode: Mode, condition: Condition = DEFAULT_CONDITION
) -> tuple[JsonObject, dict[str, str]]:
    """Copy one workspace; returns its manifest entry and the audited texts (relative -> text)."""
    files, excluded, hidden, texts = [], [], [], {}
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if path.is_symlink():
            excluded.append(str(relative))
            continue
        if path.is_dir():
            continue
        if is_evaluator_only(relative):
            excluded.append(str(relative))
            continue
        if not condition.visible(relative.as_posix(), mode):
            hidden.append(relative.as_posix())
            continue
        dest = target / relative
        dest.parent.mkdir(parents=True, exist_ok=True)
        if relative.name == "metadata.json":
            meta = sanitize_metadata(read_json(path, "workspace metadata"))
            dest.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            texts[relative.as_posix()] = leakage.metadata_text(meta, mode)
        else:
            shutil.copy2(path, dest)
            texts[relative.as_posix()] = dest.read_bytes().decode("utf-8", "replace")
        files.append({"path": str(relative), "sha256": hash_file(dest)})
    empty = {"build": ["src"], "revise": ["revised/src"], "explain": []}[mode]
    for folder in empty:
        (target / folder).mkdir(parents=True, exist_ok=True)
    kinds = [artifact_kind(f["path"]) for f in files]
    shown = {kind: kinds.count(kind) for kind in ARTIFACT_KINDS}  # 0: the release has none
    entry = {"files": files, "excluded": excluded, "hidden": hidden, "model_artifacts": shown}
    return {**entry, "condition": condition.applied(mode)}, texts


def _flat_prompt(tmp: Path, wid: str, condition: Condition, texts: dict[str, str]) -> tuple[str, dict[str, str]]:
    """Write the flat prompt; returns its relative path and its texts as audited (every file it
    holds, parsed back, and its header)."""
    prompt = flat.render(tmp / wid, wid, condition.slug)
    rel = f"prompts/{wid}.txt"
    (tmp / "prompts").mkdir(exist_ok=True)
    (tmp / rel).write_bytes(prompt)
    return rel, prompt_texts(rel, prompt, texts)


def prompt_texts(rel: str, prompt: bytes, texts: dict[str, str]) -> dict[str, str]:
    """A flat prompt as audited: every file it holds (parsed back; it must hold exactly the staged
    files, audited as they are) and its header."""
    held = flat.parse(prompt)
    if set(held) != set(texts):
        raise InputError(f"{rel}: flat prompt does not hold exactly the staged files")
    audited = {f"{rel}::{p}": texts[p] for p in held}
    audited[f"{rel}::header"] = prompt[: prompt.find(b"<<<FILE ")].decode("utf-8", "replace")
    return audited


def staged_texts(output: Path, wid: str, entry: JsonObject) -> dict[str, str]:
    """The texts of one staged workspace as the audit reads them (to audit a staged folder again)."""
    texts = {}
    for item in entry["files"]:
        path = output / wid / item["path"]
        if Path(item["path"]).name == "metadata.json":
            texts[item["path"]] = leakage.metadata_text(read_json(path, "workspace metadata"), entry["mode"])
        else:
            texts[item["path"]] = path.read_bytes().decode("utf-8", "replace")
    if entry.get("prompt"):
        texts.update(prompt_texts(entry["prompt"], (output / entry["prompt"]).read_bytes(), dict(texts)))
    return texts


def stage(
    release_root: str | Path,
    output: str | Path,
    *,
    modes: tuple[Mode, ...] = MODES,
    workspace_ids: list[str] | None = None,
    split: str | None = None,
    condition: Condition = DEFAULT_CONDITION,
    oracle_root: str | Path | None = None,
) -> JsonObject:
    """Stage the selected workspaces of `release_root` under `condition`; the leakage audit's
    secrets come from `oracle_root`'s evaluation/ (default the release itself)."""
    release_root, output = Path(release_root), Path(output)
    found = discover_workspaces(release_root, modes)
    selected = list(found)
    if split is not None:
        split_path = release_root / "supporting_files" / "splits" / f"{split}.json"
        data = read_json(split_path, "split file")
        try:
            ids = {w for mode in modes for w in data["workspace_ids"].get(mode, [])}
        except (KeyError, TypeError, AttributeError):
            raise InputError(f"{split_path}: split file lacks workspace_ids per mode") from None
        missing = sorted(ids - set(found))
        if missing:
            raise InputError(f"{split_path}: workspace {missing[0]} of the split is not in {release_root}")
        selected = [w for w in selected if w in ids]
    if workspace_ids:
        for wid in workspace_ids:
            try:
                parse_workspace_id(wid)
            except ValueError as exc:
                raise InputError(str(exc)) from None
            if wid not in found:
                raise InputError(f"{release_root}: no workspace {wid}")
        selected = [w for w in selected if w in set(workspace_ids)]
    if not selected:
        raise InputError(f"{release_root}: no workspaces to stage")
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise InputError(f"{output}: output folder exists and is not empty")
    output.parent.mkdir(parents=True, exist_ok=True)
    secrets = leakage.Secrets(Path(oracle_root) if oracle_root is not None else release_root, release_root)
    tmp = Path(tempfile.mkdtemp(prefix=f".{output.name}.", dir=output.parent))
    try:
        manifest: JsonObject = {
            "schema_version": MANIFEST_VERSION,
            "release": str(release_root.resolve()),
            "oracle": str(Path(oracle_root or release_root).resolve()),
            "condition": condition.as_dict(),
            "leakage_audit": {"rule": "docs/orspace.md#leakage-audit", "secret_items": secrets.items(), "leaks": 0},
            "workspaces": {},
        }
        for wid in selected:
            mode = parse_workspace_id(wid)[1]
            info, texts = stage_workspace(found[wid], tmp / wid, mode, condition)
            if condition.interface == Interface.FLAT:
                info["prompt"], audited = _flat_prompt(tmp, wid, condition, texts)
                texts = {**texts, **audited}
            audit = leakage.audit_texts(wid, texts, secrets)
            if audit["leaks"]:
                raise leakage.LeakError(leakage.leak_line(wid, audit["leaks"][0], str(output)))
            manifest["workspaces"][wid] = {"mode": mode, "source": str(found[wid].resolve()), **info, "audit": audit}
        manifest["leakage_audit"]["coincident"] = sum(
            len(w["audit"]["coincident"]) for w in manifest["workspaces"].values()
        )
        manifest["leakage_audit"]["passed"] = True
        atomic_write_json(tmp / "manifest.json", manifest)
        if output.exists():
            output.rmdir()
        os.replace(tmp, output)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest
