"""The report's `anytime_profiles.png`: for each anytime Solver task of an evaluation, every model's
relative score against the time limit (`tcsexam.scoring.anytime_score`), and where two models'
curves cross.

Read from the solver results: `<model>/<task>/<attempt>/records.json` (the traces) and the
`relative.json` beside it (each eligible instance's mu and scale, the task's direction), so the
report needs no reference file; a model's curve is the mean over its attempts. Tasks without any
trace are left out; with none at all the figure says so.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tcsexam.fileio import Json, JsonObject, read_json
from tcsexam.layout import attempt_files
from tcsexam.records import Status
from tcsexam.scoring.anytime_score import crossings, limits_grid, record_at
from tcsexam.tasks import Direction, Kind


def _attempt_curve(records: list[Json], relative: JsonObject, grid: list[float]) -> list[float]:
    kind, direction = relative.get("kind", "objective"), relative.get("direction", "maximize")
    by_name = {r.get("instance"): r for r in records if isinstance(r, dict)}
    eligible = [i for i in relative.get("instances", []) if isinstance(i, dict)]
    mu = np.array([i["mu"] for i in eligible], dtype=float)
    scale = np.array([i["scale"] for i in eligible], dtype=float)
    curve = []
    for at in grid:
        values = np.full(len(eligible), np.nan)
        for k, inst in enumerate(eligible):
            rec = by_name.get(inst["instance"])
            if rec is None:
                continue
            seen = record_at(rec, at, direction, kind)
            if seen.get("status") == Status.OK:
                v = seen.get("A") if kind == Kind.OBJECTIVE else seen.get("solved", seen.get("A"))
                values[k] = float(v) if v is not None else np.nan
        diff = values - mu if direction == Direction.MAXIMIZE else mu - values
        from scipy.special import ndtr  # heavy: imported where used (pyproject, banned-module-level-imports)

        scores = np.where(np.isnan(values), 0.0, ndtr(np.nan_to_num(diff / scale)))
        curve.append(float(scores.mean()) if scores.size else 0.0)
    return curve


def anytime_profiles(solver_dir: str | Path) -> dict[str, JsonObject]:
    """task -> {"curves": {model: [[limit, score], ...]}, "crossings": [...]} for traced tasks."""
    found: dict[str, dict[str, list[tuple[list[Json], JsonObject]]]] = {}
    for model, task, _attempt, path in attempt_files(Path(solver_dir), "records.json"):
        relative_path = path.with_name("relative.json")
        if not relative_path.is_file():
            continue
        records = read_json(path, "records file")
        if not isinstance(records, list) or not any(isinstance(r, dict) and r.get("trace") for r in records):
            continue
        relative = read_json(relative_path, "solver-score output")
        if isinstance(relative, dict) and relative.get("relative_score") is not None:
            found.setdefault(task, {}).setdefault(model, []).append((records, relative))
    out = {}
    for task, models in sorted(found.items()):
        grid = limits_grid({f"{m}/{i}": recs for m, runs in models.items() for i, (recs, _) in enumerate(runs)})
        curves = {}
        for model, runs in sorted(models.items()):
            mean = np.mean([_attempt_curve(recs, rel, grid) for recs, rel in runs], axis=0)
            curves[model] = [[at, float(s)] for at, s in zip(grid, mean)]
        out[task] = {"curves": curves, "crossings": crossings(curves)}
    return out


def profile_figure(plt, solver_dir: str | Path, title: str):
    """The figure: one panel per anytime task (step curves, crossings as dotted lines)."""
    profiles = anytime_profiles(solver_dir)
    n = max(1, len(profiles))
    fig, axes = plt.subplots(1, n, figsize=(6 * n, 4), squeeze=False)
    if not profiles:
        ax = axes[0][0]
        ax.text(0.5, 0.5, "no anytime task traced in this evaluation", ha="center", va="center")
        ax.set_axis_off()
    for ax, (task, prof) in zip(axes[0], profiles.items()):
        for model, curve in prof["curves"].items():
            xs, ys = zip(*curve)
            ax.step(xs, ys, where="post", label=model)
        for c in prof["crossings"]:
            ax.axvline(c["at_s"], color="grey", linestyle=":", linewidth=1)
            ax.annotate(
                f"{c['leader_after']} overtakes at {c['at_s']:.2g} s", (c["at_s"], 0.02), rotation=90, fontsize=7
            )
        ax.set_ylim(0, 1)
        ax.set_xlabel("time limit (s)")
        ax.set_ylabel("relative score")
        ax.set_title(f"{task}: score at every limit")
        ax.legend(fontsize=8)
    fig.suptitle(f"Anytime profiles ({title})", fontsize=10)
    return fig
