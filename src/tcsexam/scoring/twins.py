"""The paired difference original - twin of the relative score, per model and Solver task, and
the `memorisation_suspected` issue (docs/twins.md).

For every model, task and attempt with a solver-score output on the originals
(`SOLVER/<model>/<task>/<attempt>/relative.json`) and on each twin set
(`TWINS/s<seed>/solver/<model>/<task>/<attempt>/relative.json`, twin names mapped back to the
originals with `TWINS/s<seed>/tasks/<task>/map.json`), instance i's twin score is the mean over
the twin sets (`copies`) of its twin's score. The difference of an attempt is
mean_i(original_i - twin_i); the task's difference is the mean over its attempts. Its interval is
the project's paired bootstrap (`tcsexam.scoring.bootstrap.task_replicates` with the originals and
the twins as two runs of the same task: the same instance and attempt draws for both).

A task is flagged when its difference exceeds `THRESHOLD` and its interval lies above 0; a model
with a flagged task gets one `memorisation_suspected` issue naming the tasks. The Index is not
changed. Why 0.35 (calibration on the bundled demos, honest order-sensitive heuristics included):
docs/twins.md.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import numpy as np

from tcsexam.fileio import JsonObject, read_json
from tcsexam.scoring.bootstrap import TaskScores, interval, task_replicates

#: a task's original - twin difference above this, with its 95% interval above 0, is flagged
THRESHOLD = 0.35
METHOD = (
    "paired percentile bootstrap of mean(original - twin) over instances and attempts "
    "(tcsexam.scoring.bootstrap.task_replicates, originals and twins as two paired runs)"
)


def _instance_scores(path: Path) -> dict[str, tuple[float, str]] | None:
    """instance -> (score, status) of a solver-score output; None when it cannot be read."""
    try:
        data = read_json(path, "solver-score output")
    except Exception:  # noqa: BLE001 - an unreadable output only leaves the attempt out
        return None
    inst = data.get("instances") if isinstance(data, dict) else None
    if not isinstance(inst, list) or "relative_score" not in data:
        return None
    try:
        return {str(i["instance"]): (float(i["score"]), str(i.get("status"))) for i in inst}
    except (KeyError, TypeError, ValueError):
        return None


def twin_seeds(twins_dir: Path) -> list[int]:
    return sorted(int(p.name[1:]) for p in twins_dir.glob("s*") if p.is_dir() and p.name[1:].isdigit())


def twin_differences(
    solver_dir: str | Path,
    twins_dir: str | Path,
    models: list[str],
    tasks: list[str],
    *,
    seed: int,
    resamples: int,
    threshold: float = THRESHOLD,
) -> JsonObject:
    """The `twins` object of index.json (module doc) and, per model, its issue (or None)."""
    solver_dir, twins_dir = Path(solver_dir), Path(twins_dir)
    seeds = twin_seeds(twins_dir)
    maps: dict[tuple[int, str], dict[str, str]] = {}
    for s in seeds:
        for task in tasks:
            path = twins_dir / f"s{s}" / "tasks" / task / "map.json"
            if path.is_file():
                data = read_json(path, "twin map")
                maps[(s, task)] = {t: v["original"] for t, v in data.get("instances", {}).items()}
    out: JsonObject = {
        "seeds": seeds,
        "threshold": threshold,
        "method": METHOD,
        "resamples": int(resamples),
        "seed": int(seed),
        "models": {m: {} for m in models},
    }
    for task in tasks:
        task_seeds = [s for s in seeds if (s, task) in maps]
        if not task_seeds:
            continue
        orig = TaskScores(task, "solver")
        twin = TaskScores(task, "solver")
        names: tuple[str, ...] | None = None
        statuses: dict[str, dict[str, dict[str, int]]] = {}
        for model in models:
            folder = solver_dir / model / task
            for att_dir in sorted(folder.glob("*")) if folder.is_dir() else []:
                o = _instance_scores(att_dir / "relative.json")
                if o is None:
                    continue
                copies = []
                for s in task_seeds:
                    t = _instance_scores(twins_dir / f"s{s}" / "solver" / model / task / att_dir.name / "relative.json")
                    if t is None:
                        break
                    copies.append({maps[(s, task)].get(k, k): v for k, v in t.items()})
                if len(copies) != len(task_seeds):
                    continue
                here = tuple(o)
                if names is None:
                    names = here
                if here != names or any(set(c) != set(names) for c in copies):
                    continue  # another instance set (a subset run): not paired
                orig.attempts.setdefault(model, {})[att_dir.name] = np.array([o[n][0] for n in names])
                twin_vec = np.mean([[c[n][0] for n in names] for c in copies], axis=0)
                twin.attempts.setdefault(model, {})[att_dir.name] = twin_vec
                counts = statuses.setdefault(model, {"original": {}, "twin": {}})
                for side, tables in (("original", [o]), ("twin", copies)):
                    for table in tables:
                        for _, status in table.values():
                            counts[side][status] = counts[side].get(status, 0) + 1
        if names is None or not orig.attempts:
            continue
        orig.instances = twin.instances = names
        reps = task_replicates([orig, twin], seed, resamples) if resamples > 0 else [{}, {}]
        for model in orig.attempts:
            o_mean = float(np.mean([v.mean() for v in orig.attempts[model].values()]))
            t_mean = float(np.mean([v.mean() for v in twin.attempts[model].values()]))
            diff = o_mean - t_mean
            ci = interval(reps[0][model] - reps[1][model]) if resamples > 0 else None
            flagged = bool(diff > threshold and ci is not None and ci[0] > 0)
            out["models"][model][task] = {
                "original": o_mean,
                "twin": t_mean,
                "difference": diff,
                "ci95": ci,
                "attempts": len(orig.attempts[model]),
                "copies": len(task_seeds),
                "instances": len(names),
                "statuses": {k: dict(sorted(v.items())) for k, v in statuses[model].items()},
                "flagged": flagged,
            }
    return out


def memorisation_issue(model: str, per_task: JsonObject, threshold: float) -> JsonObject | None:
    flagged = [t for t, v in per_task.items() if v["flagged"]]
    if not flagged:
        return None
    shown = ", ".join(
        f"{t} {per_task[t]['difference']:+.3f} [{per_task[t]['ci95'][0]:.3f}, {per_task[t]['ci95'][1]:.3f}]"
        for t in flagged
    )
    return {
        "model": model,
        "track": "solver",
        "item": flagged[0],
        "attempt": None,
        "reason": "memorisation_suspected",
        "tasks": flagged,
        "message": f"relative score on the originals exceeds that on value-preserving twins by more than "
        f"{threshold} with the 95% interval above 0: {shown} (docs/twins.md)",
    }


def add_twin_differences(
    result: JsonObject, suite, solver_dir, twins_dir, *, seed: int, resamples: int, threshold: float = THRESHOLD
) -> None:
    """index.json's top-level `twins` and the models' `memorisation_suspected` issues (in place)."""
    models = list(result.get("models", {}))
    tasks = list(suite.tracks["solver"])
    twins = twin_differences(solver_dir, twins_dir, models, tasks, seed=seed, resamples=resamples, threshold=threshold)
    result["twins"] = twins
    for model, per_task in twins["models"].items():
        issue = memorisation_issue(model, per_task, threshold)
        if issue is not None:
            result["models"][model]["issues"].append(issue)


class FindingKind(StrEnum):
    """What `tcsexam scan-candidate` (tcsexam.twins.scan) reports in a candidate's files."""

    INSTANCE_NAME = "instance_name"
    CONTENT_HASH = "content_hash"
    HASH_TABLE = "hash_table"
    BEST_VALUE_LITERAL = "best_value_literal"
    SIZE_KEY = "size_key"
    EMBEDDED_CERTIFICATE = "embedded_certificate"
    ENCODED_BLOB = "encoded_blob"
    OPAQUE_FILE = "opaque_file"  #: a file the scan cannot read (binary): noted, not evidence


#: scan findings that are evidence of memorised answers (an opaque file alone is not)
EVIDENCE_KINDS = tuple(k.value for k in FindingKind if k is not FindingKind.OPAQUE_FILE)


def add_scan_findings(result: JsonObject, solver_dir: str | Path) -> None:
    """Every model's `candidate_scan` (the findings of DIR/<model>/<task>/<attempt>/scan.json, each
    with its task, attempt, file and line) and a `hardcoded_answers_suspected` issue naming the tasks
    whose candidate holds evidence (in place). The status and the Index are not changed."""
    root = Path(solver_dir)
    for model, entry in result.get("models", {}).items():
        findings: list[JsonObject] = []
        for path in sorted((root / model).glob("*/*/scan.json")) if (root / model).is_dir() else []:
            try:
                report = read_json(path, "scan report")
            except Exception:  # noqa: BLE001 - an unreadable report is left out
                continue
            task, attempt = path.parent.parent.name, path.parent.name
            for f in report.get("findings", []) if isinstance(report, dict) else []:
                if isinstance(f, dict):
                    findings.append({"task": task, "attempt": attempt, **f})
        if not findings and not (root / model).is_dir():
            continue
        summary: dict[str, int] = {}
        for f in findings:
            summary[f["kind"]] = summary.get(f["kind"], 0) + int(f.get("count", 1))
        entry["candidate_scan"] = {"summary": dict(sorted(summary.items())), "findings": findings}
        tasks = sorted({f["task"] for f in findings if f.get("kind") in EVIDENCE_KINDS})
        if tasks:
            kinds = sorted({f["kind"] for f in findings if f.get("kind") in EVIDENCE_KINDS})
            entry["issues"].append(
                {
                    "model": model,
                    "track": "solver",
                    "item": tasks[0],
                    "attempt": None,
                    "reason": "hardcoded_answers_suspected",
                    "tasks": tasks,
                    "message": f"the candidate scan found {', '.join(kinds)} in the files of {', '.join(tasks)} "
                    "(evidence, not a verdict: candidate_scan lists each finding with its file and line)",
                }
            )
