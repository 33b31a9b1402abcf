"""`tcsexam compare`'s `machine_speed` section: how fast the two runs' machines were, and, for
anytime tasks, the comparison at speed-equivalent limits.

The speed of a run is its manifest's `calibration.summary.speed` (median over its Solver jobs of
`tcsexam.runner.observers.calibrate`); `ratio` = candidate speed / baseline speed (above 1: the candidate's
machine was faster). For each model and Solver task whose records (in both runs) carry anytime
traces, the baseline limit L is scaled by the ratio: the faster machine is scored at L / ratio
(or L * ratio for the baseline when the candidate is slower, since no run went past L), the other
at L (`solver-score --at`). The task delta there gets a paired bootstrap 95% interval over
instances (attempts averaged per instance); `differs` when it excludes 0. `disappears` is true
when the task `differs` at the plain limit (compare's `differs_on`) but not at the
speed-equivalent one: the difference is explained by the machines' speed.
"""

from __future__ import annotations

import numpy as np

from tcsexam.fileio import JsonObject, read_json
from tcsexam.layout import ResultsLayout
from tcsexam.paths import project_root
from tcsexam.runner.observers.calibrate import speed_ratio
from tcsexam.scoring.anytime_score import score_at
from tcsexam.scoring.reference import load_reference, resolve_reference_path


def _calibration(run) -> JsonObject | None:
    section = (run.manifest or {}).get("calibration") or {}
    return section.get("summary") if isinstance(section, dict) else None


def _traced_records(run) -> dict[tuple[str, str, str], tuple[str, list[JsonObject]]]:
    """(model, task, attempt) -> (records.json's path, its records) for the attempts with a trace
    (the path: messages, and where the sealed records' key is found)."""
    out = {}
    for model, task, attempt, path in ResultsLayout(run.path).solver_files("records.json"):
        data = read_json(path, "records file")
        if isinstance(data, list) and any(isinstance(r, dict) and r.get("trace") for r in data):
            out[(model, task, attempt)] = (str(path), data)
    return out


def _limit(run, task: str) -> float | None:
    tasks = (run.manifest or {}).get("tasks") or {}
    limits = (tasks.get(task) or {}).get("limits") or {}
    value = limits.get("wall_s")
    return float(value) if isinstance(value, (int, float)) else None


def _reference(run):
    spec = ((run.manifest or {}).get("sources") or {}).get("reference") or run.suite
    path = resolve_reference_path(spec)
    if not path.is_absolute() and not path.exists():
        path = project_root() / path
    return load_reference(path)


def _instance_scores(records_by_attempt, task, reference, at) -> dict[str, float]:
    sums: dict[str, list[float]] = {}
    for source, records in records_by_attempt:
        # both runs by what they had by their limits approached from below: the slower machine's run
        # is compared at its own limit, where a killed run would otherwise count nothing while the
        # faster one, still going at its equivalent limit, counts its trace
        for inst in score_at(task, records, reference, at, source, below=True)["instances"]:
            sums.setdefault(inst["instance"], []).append(inst["score"])
    return {name: float(np.mean(v)) for name, v in sums.items()}


def _paired_ci(diff: np.ndarray, seed: int, resamples: int) -> list[float] | None:
    if diff.size == 0 or resamples <= 0:
        return None
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, diff.size, size=(resamples, diff.size))].mean(axis=1)
    return [float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))]


def machine_speed(base, cand, flagged: list[JsonObject], seed: int, resamples: int) -> JsonObject:
    """The `machine_speed` section (module doc)."""
    cb, cc = _calibration(base), _calibration(cand)
    ratio = speed_ratio(cb, cc)
    out: JsonObject = {
        "baseline": cb,
        "candidate": cc,
        "ratio": None if ratio is None else round(ratio, 4),
        "parts": None,
        "anytime_tasks": [],
    }
    if ratio is None or cb is None or cc is None:  # (a ratio only of two calibrations)
        out["note"] = "no comparable machine calibration in both manifests (tcsexam manifest writes it)"
        return out
    out["parts"] = {p: round(cc[f"{p}_speed"] / cb[f"{p}_speed"], 4) for p in ("python", "numpy")}
    traced_b, traced_c = _traced_records(base), _traced_records(cand)
    pairs = sorted({(m, t) for m, t, _ in traced_b} & {(m, t) for m, t, _ in traced_c})
    if not pairs:
        return out
    ref = _reference(base)
    differs_plain = {(f["model"], f["name"]) for f in flagged if f.get("level") == "task"}
    for model, task in pairs:
        limit = _limit(base, task)
        if limit is None:
            continue
        at_b, at_c = (limit, limit / ratio) if ratio >= 1 else (limit * ratio, limit)
        rb = [r for (m, t, _), r in sorted(traced_b.items()) if (m, t) == (model, task)]
        rc = [r for (m, t, _), r in sorted(traced_c.items()) if (m, t) == (model, task)]
        sb, sc = _instance_scores(rb, task, ref, at_b), _instance_scores(rc, task, ref, at_c)
        names = sorted(set(sb) & set(sc))
        diff = np.array([sc[n] - sb[n] for n in names])
        ci = _paired_ci(diff, seed, resamples)
        differs = ci is not None and (ci[0] > 0 or ci[1] < 0)
        was = (model, task) in differs_plain
        out["anytime_tasks"].append(
            {
                "model": model,
                "task": task,
                "baseline_at_s": round(at_b, 6),
                "candidate_at_s": round(at_c, 6),
                "delta": float(diff.mean()) if diff.size else None,
                "ci95": ci,
                "differs": differs,
                "differs_at_plain_limit": was,
                "disappears": was and not differs,
            }
        )
    return out


def speed_lines(section: JsonObject) -> list[str]:
    """What `tcsexam compare` prints about it."""
    if section.get("ratio") is None:
        return [f"machine speed: {section.get('note', 'unknown')}"]
    parts = section["parts"]
    lines = [
        f"machine speed: candidate/baseline {section['ratio']:.3f} (python {parts['python']:.3f}, "
        f"numpy {parts['numpy']:.3f})"
    ]
    for e in section["anytime_tasks"]:
        verdict = "differs" if e["differs"] else "same"
        gone = "; the plain-limit difference disappears" if e["disappears"] else ""
        lines.append(
            f"  {e['model']} {e['task']} at speed-equivalent limits (baseline {e['baseline_at_s']:g} s, candidate "
            f"{e['candidate_at_s']:g} s): delta {e['delta']:+.4f}: {verdict}{gone}"
        )
    return lines
