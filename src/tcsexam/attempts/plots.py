"""Report plots (matplotlib, PNG) of one suite/protocol evaluation.

- `track_means.png`: the four track means per model (a missing mean is drawn as an empty, hatched
  bar labelled n/a) with their bootstrap 95% intervals (index.json `track_ci95`) as error bars, and
  the Index with its interval (`index_ci95`), or "incomplete", in the legend;
- `solver_relative.png`: the fixed-reference relative score per Solver task and model (mean of the
  adopted valid attempts);
- `instance_scores.png`: the per-instance score distribution (Phi(z)) per task and model, from the
  solver-score outputs;
- `status_counts.png`: instance record status counts per task (all models and attempts);
- `anytime_profiles.png`: relative score against time limit per model on each anytime task, and
  where the curves cross (`tcsexam.attempts.anytime_plot`).
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np

from tcsexam.attempts.anytime_plot import profile_figure
from tcsexam.errors import InputError
from tcsexam.fileio import atomic_write_bytes, read_json
from tcsexam.layout import attempt_files
from tcsexam.records import Status
from tcsexam.scoring.vocabulary import AdoptionStatus, ScoreStatus
from tcsexam.suites import TRACKS, Track

PLOTS = ("track_means.png", "solver_relative.png", "instance_scores.png", "status_counts.png", "anytime_profiles.png")
STATUS_ORDER = tuple(s.value for s in Status)
STATUS_COLORS = {
    "ok": "#2ca02c",
    "timeout": "#ff7f0e",
    "memout": "#9467bd",
    "crash": "#d62728",
    "invalid": "#7f7f7f",
    "certificate_failed": "#8c564b",
    "infrastructure_error": "#000000",
}


def make_plots(
    index_path: str | Path, attempts_path: str | Path, solver_dir: str | Path, output_dir: str | Path
) -> list[Path]:
    """Write the report's figures (PLOTS, in that order) into `output_dir`; their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    index, table = _read_inputs(index_path, attempts_path)
    solver_dir = Path(solver_dir)
    models = sorted(index["models"])
    title = f"{index.get('suite', '?')} / {index.get('solver_protocol', '?')}"
    warnings = [w for w in index.get("warnings", []) if isinstance(w, str)]
    out = [Path(output_dir) / name for name in PLOTS]
    # the first figure carries the index's warnings below the axes
    _save(plt, _track_means_figure(plt, index, models, title, warnings), out[0], bottom=0.06 * len(warnings[:4]))
    _save(plt, _solver_task_figure(plt, table, models, title), out[1])
    _save(plt, _instance_score_figure(plt, solver_dir, models, title), out[2])
    _save(plt, _status_count_figure(plt, solver_dir, title), out[3])
    _save(plt, profile_figure(plt, solver_dir, title), out[4])
    return out


def _read_inputs(index_path: str | Path, attempts_path: str | Path):
    """(index.json as a dict, attempts.csv as a DataFrame); one line naming the file when either is bad."""
    import pandas as pd

    index = read_json(index_path, "index file")
    if not isinstance(index, dict) or not isinstance(index.get("models"), dict):
        raise InputError(f"{index_path}: not an index.json (no 'models' object)")
    try:
        table = pd.read_csv(attempts_path, dtype={"attempt": str, "model": str, "item": str}, keep_default_na=False)
    except Exception as exc:  # pandas raises many types for bad CSV
        raise InputError(f"{attempts_path}: cannot read the attempt table: {' '.join(str(exc).split())}") from None
    return index, table


def _save(plt, fig, path: Path, bottom: float = 0.0) -> None:
    """The figure as a PNG at `path` (written atomically), then closed; `bottom`: room left for text."""
    buf = io.BytesIO()
    fig.tight_layout(rect=(0, bottom, 1, 1))
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


def _bar_width(models: list[str]) -> float:
    return 0.8 / max(1, len(models))


def _track_means_figure(plt, index: dict, models: list[str], title: str, warnings: list[str]):
    """1. the four track means per model, with their intervals and each model's Index in the legend."""
    fig, ax = plt.subplots(figsize=(max(6, 1.8 * len(TRACKS) * max(1, len(models)) / 2), 4))
    width = _bar_width(models)
    x = np.arange(len(TRACKS))
    for i, model in enumerate(models):
        entry = index["models"][model]
        means = [entry.get("track_means", {}).get(t) for t in TRACKS]
        idx = entry.get("index")
        ci = entry.get("index_ci95")
        if isinstance(idx, (int, float)):
            label = f"{model} (Index {idx:.2f}" + (f", 95% CI {ci[0]:.2f}-{ci[1]:.2f})" if ci else ")")
        else:
            label = f"{model} ({entry.get('status')})"
        vals = [m if isinstance(m, (int, float)) else 0.0 for m in means]
        # error bars: the bootstrap's 95% interval of each track mean (index.json track_ci95)
        cis = [(entry.get("track_ci95") or {}).get(t) for t in TRACKS]
        err = np.array(
            [
                [max(0.0, v - c[0]) if c else 0.0 for v, c in zip(vals, cis)],
                [max(0.0, c[1] - v) if c else 0.0 for v, c in zip(vals, cis)],
            ]
        )
        bars = ax.bar(
            x + (i - (len(models) - 1) / 2) * width,
            vals,
            width,
            label=label,
            yerr=err if any(cis) else None,
            capsize=3,
            error_kw={"elinewidth": 1},
        )
        for bar, m in zip(bars, means):
            if not isinstance(m, (int, float)):
                bar.set_hatch("//")
                bar.set_fill(False)
                ax.annotate("n/a", (bar.get_x() + bar.get_width() / 2, 0), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, [t.replace("_", " ") for t in TRACKS])
    ax.set_ylabel("track mean")
    ax.set_title(f"Track means per model ({title})")
    ax.legend(fontsize=8)
    if warnings:  # e.g. candidates that ran without a sandbox: on the report's first figure
        text = "\n".join(f"WARNING: {w[:160]}" for w in warnings[:4])
        fig.text(0.01, 0.01, text, color="#b00000", fontsize=7, va="bottom", wrap=True)
    return fig


def _solver_task_figure(plt, table, models: list[str], title: str):
    """2. the relative score per Solver task and model (mean of the adopted valid attempts)."""
    import pandas as pd

    solver = table[
        (table["track"] == Track.SOLVER)
        & (table["score_status"] == ScoreStatus.VALID)
        & (table["adoption_status"] != AdoptionStatus.EXCLUDED)
    ].copy()
    solver["score"] = pd.to_numeric(solver["score"], errors="coerce")
    tasks = sorted(set(table.loc[table["track"] == Track.SOLVER, "item"]))
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(tasks) + 2), 4))
    width = _bar_width(models)
    xs = np.arange(len(tasks))
    for i, model in enumerate(models):
        sub = solver[solver["model"] == model].groupby("item")["score"].mean()
        vals = [float(sub.get(t, math.nan)) for t in tasks]
        ax.bar(xs + (i - (len(models) - 1) / 2) * width, np.nan_to_num(vals), width, label=model)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xticks(xs, tasks, rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("relative score (fixed reference)")
    ax.set_title(f"Solver relative score per task ({title}); dashed: reference mean")
    ax.legend(fontsize=8)
    return fig


def _instance_score_figure(plt, solver_dir: Path, models: list[str], title: str):
    """3. the per-instance score distribution per task and model (the solver-score outputs)."""
    rel = attempt_files(solver_dir, "relative.json")
    scores: dict[tuple[str, str], list[float]] = {}
    for model, task, _attempt, path in rel:
        data = read_json(path, "solver-score output")
        for inst in data.get("instances", []):
            if isinstance(inst.get("score"), (int, float)):
                scores.setdefault((task, model), []).append(float(inst["score"]))
    tasks3 = sorted({t for t, _ in scores})
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(tasks3) + 2), 4))
    width = _bar_width(models)
    for i, model in enumerate(models):
        data = [scores.get((t, model), []) for t in tasks3]
        pos = np.arange(len(tasks3)) + (i - (len(models) - 1) / 2) * width
        keep = [(p, d) for p, d in zip(pos, data) if d]
        if keep:
            parts = ax.boxplot(
                [d for _, d in keep],
                positions=[p for p, _ in keep],
                widths=width * 0.8,
                patch_artist=True,
                manage_ticks=False,
            )
            color = f"C{i}"
            for box in parts["boxes"]:
                box.set_facecolor(color)
                box.set_alpha(0.6)
            ax.plot([], [], color=color, lw=6, alpha=0.6, label=model)
    ax.set_xticks(np.arange(len(tasks3)), tasks3, rotation=30, ha="right")
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("instance score Phi(z)")
    ax.set_title(f"Per-instance score distribution ({title})")
    if models:
        ax.legend(fontsize=8)
    return fig


def _status_count_figure(plt, solver_dir: Path, title: str):
    """4. instance record status counts per task (all models and attempts)."""
    counts: dict[str, dict[str, int]] = {}
    for _model, task, _attempt, path in attempt_files(solver_dir, "records.json"):
        records = read_json(path, "records file")
        if not isinstance(records, list):
            raise InputError(f"{path}: records file must be a JSON list")
        for rec in records:
            status = rec.get("status") if isinstance(rec, dict) else None
            counts.setdefault(task, {}).setdefault(str(status), 0)
            counts[task][str(status)] += 1
    tasks4 = sorted(counts)
    statuses = [s for s in STATUS_ORDER if any(s in c for c in counts.values())]
    statuses += sorted({s for c in counts.values() for s in c} - set(statuses))
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(tasks4) + 2), 4))
    bottom = np.zeros(len(tasks4))
    for status in statuses:
        vals = np.array([counts[t].get(status, 0) for t in tasks4], dtype=float)
        ax.bar(tasks4, vals, bottom=bottom, label=status, color=STATUS_COLORS.get(status))
        bottom += vals
    ax.set_ylabel("instance records (all models and attempts)")
    ax.set_title(f"Record status counts per task ({title})")
    ax.tick_params(axis="x", rotation=30)
    if statuses:
        ax.legend(fontsize=8)
    return fig
