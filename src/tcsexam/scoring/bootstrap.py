"""Seeded bootstrap of the Index, the track means and the task means (index.json's `index_ci95` and
`track_ci95`, and the paired intervals of `tcsexam compare`).

The resampling follows the averaging order of the spec:

- a Solver task's score per attempt is the mean of its per-instance scores: the task's *instances*
  are resampled (with replacement, the same draw for every model, attempt and run: paired);
- a task's mean is the mean of its adopted attempts: the *attempts* are resampled within the task
  (the same draw, by position in the sorted attempt ids, for every model and run);
- track means and the Index are then computed from the resampled task means exactly as the scorer
  does (equal task weights within a track, 30/30/30/10).

Random numbers (documented so that anyone can recompute the intervals): for every task a generator
`numpy.random.default_rng([seed, task_code])`, where `task_code` is the first 8 hex digits of the
sha256 of the task id as an integer. A Solver task with per-instance scores first draws
`integers(0, n, size=(B, n))` (the resampled instance positions, n = number of instances in the
reference order of the solver-score output), then every task draws `random(B)` once per attempt
position j = 0 .. R_max - 1 (the columns of u; R_max: the most attempts any model has on the task);
model m's resampled attempt positions are `floor(u[:, :R_m] * R_m)` over its attempts sorted by id,
so they do not depend on the other models. The interval is the percentile interval
(numpy's default linear interpolation) at 2.5% and 97.5%. The default seed is `DEFAULT_SEED`.

Everything is vectorised: per task one (B x n) @ (n x rows) product gives every resampled attempt
score of every model and run; there is no Python loop over resamples.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, read_json
from tcsexam.scoring.index import read_attempts
from tcsexam.scoring.vocabulary import ADOPTED, ScoreStatus
from tcsexam.suites import TRACKS, WEIGHTS, Track, normalize_track

DEFAULT_SEED = 20260925
DEFAULT_RESAMPLES = 10_000
CONFIDENCE = 0.95
QUANTILES = (0.025, 0.975)
MODELS_PER_GROUP = 64
METHOD = (
    "percentile bootstrap: instances resampled within Solver tasks, attempts within tasks, "
    "paired across models and runs"
)


@dataclass
class TaskScores:
    """The adopted valid attempts of one task in one run, per model.

    `instances` is the task's instance list when per-instance scores are known (Solver tasks with
    solver-score outputs), else None. `attempts[model]` maps an attempt id to its per-instance
    scores (len(instances) values) or, without instance data, to a 1-element array (the score).
    """

    item: str
    track: str
    instances: tuple[str, ...] | None = None
    attempts: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)


def task_code(item: str) -> int:
    return int(hashlib.sha256(item.encode("utf-8")).hexdigest()[:8], 16)


def task_rng(seed: int, item: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), task_code(item)])


def interval(reps: np.ndarray) -> list[float] | None:
    """The 95% percentile interval of 1-D replicates (None when there are none)."""
    if reps.size == 0 or np.isnan(reps).any():
        return None
    lo, hi = np.quantile(reps, QUANTILES)
    return [float(lo), float(hi)]


def intervals(reps: np.ndarray) -> np.ndarray:
    """Percentile intervals along axis 0: shape (2, ...)."""
    bounds: np.ndarray = np.quantile(reps, QUANTILES, axis=0)
    return bounds


def _common_instances(tasks: Sequence[TaskScores | None]) -> tuple[str, ...] | None:
    lists = {t.instances for t in tasks if t is not None and t.attempts}
    if len(lists) == 1:
        (only,) = lists
        return only
    return None


def task_replicates(
    runs: Sequence[TaskScores | None], seed: int = DEFAULT_SEED, resamples: int = DEFAULT_RESAMPLES
) -> list[dict[str, np.ndarray]]:
    """Bootstrap replicates (shape (B,)) of one task's mean, per run and model.

    `runs` holds the same task in one or more runs (None: the run lacks it); the draws are shared
    by all runs and models (paired). A run whose instance list differs from the others' is
    resampled by attempts only (its per-instance scores are averaged first).
    """
    present = [t for t in runs if t is not None and t.attempts]
    out: list[dict[str, np.ndarray]] = [{} for _ in runs]
    if not present:
        return out
    item = present[0].item
    B = int(resamples)
    instances = _common_instances(runs)
    rng = task_rng(seed, item)
    # rows: every (run, model, attempt) score vector, attempts sorted by id
    blocks: list[tuple[int, str, int]] = []  # (run, model, number of attempts)
    rows: list[np.ndarray] = []
    for r, t in enumerate(runs):
        if t is None:
            continue
        for model, attempts in t.attempts.items():
            ids = sorted(attempts)
            if not ids:
                continue
            blocks.append((r, model, len(ids)))
            for a in ids:
                v = np.asarray(attempts[a], dtype=np.float64)
                rows.append(v if instances is not None else np.array([v.mean()]))
    n = len(instances) if instances is not None else 0
    attempt_scores = np.concatenate(rows)  # (rows,): one score per attempt, used when n == 0
    if n > 0:
        idx = rng.integers(0, n, size=(B, n))
        # how often each instance is drawn in each resample: one bincount over (resample, instance)
        flat = idx + (np.arange(B, dtype=np.int64) * n)[:, None]
        counts = np.bincount(flat.ravel(), minlength=B * n).reshape(B, n)
        attempt_reps = (counts / n) @ np.stack(rows, axis=1)  # (B, rows): resampled attempt scores
    else:
        attempt_reps = None
    r_max = max(k for _, _, k in blocks)
    # one column of B uniforms per attempt position, drawn in order: u[:, :k] does not depend on
    # how many attempts other models have, so a model's interval does not depend on the cohort
    u = np.column_stack([rng.random(B) for _ in range(r_max)])
    # blocks with the same number of attempts k share the draws floor(u[:, :k] * k): their
    # resampled means are attempt-draw counts (B, k) / k against the attempts' scores
    starts = np.cumsum([0] + [k for _, _, k in blocks])
    for k in sorted({k for _, _, k in blocks}):
        members = [j for j, (_, _, kk) in enumerate(blocks) if kk == k]
        pos = np.floor(u[:, :k] * k).astype(np.int64)
        weights = np.zeros((B, k))
        for j in range(k):
            weights[:, j] = (pos == j).sum(axis=1)
        weights /= k
        cols = np.concatenate([np.arange(starts[j], starts[j] + k) for j in members])
        if attempt_reps is None:
            means = weights @ attempt_scores[cols].reshape(len(members), k).T  # (B, members)
        else:
            means = np.einsum("bk,bmk->bm", weights, attempt_reps[:, cols].reshape(B, len(members), k))
        for c, j in enumerate(members):
            r, model, _ = blocks[j]
            out[r][model] = means[:, c]
    return out


def aggregate(
    suite_tracks: Mapping[str, Sequence[str]],
    task_reps: Mapping[str, np.ndarray],
    complete: Mapping[str, bool],
) -> tuple[dict[str, np.ndarray | None], np.ndarray | None]:
    """Track and Index replicates of one model from its task replicates (None where a task of the
    track is incomplete, as in index.json)."""
    tracks: dict[str, np.ndarray | None] = {}
    for track in TRACKS:
        items = suite_tracks[track]
        if all(complete.get(it, False) and it in task_reps for it in items):
            tracks[track] = np.mean(np.stack([task_reps[it] for it in items], axis=0), axis=0)
        else:
            tracks[track] = None
    present = [(WEIGHTS[t], rep) for t in TRACKS if (rep := tracks[t]) is not None]
    index: np.ndarray | None = None
    if len(present) == len(TRACKS):
        index = np.asarray(sum(weight * rep for weight, rep in present))
    return tracks, index


# ---------------------------------------------------------------------------------------------
# reading one run's scores


def collect_scores(
    df, suite, solver_dir: str | Path | None = None, relative: Mapping[tuple[str, str, str], Any] | None = None
) -> dict[str, TaskScores]:
    """The adopted valid attempts of an attempt table, per task and model, with the per-instance
    scores of DIR/<model>/<task>/<attempt>/relative.json for Solver tasks when present (an output
    whose relative_score is not the row's score is not used: that attempt is resampled as a whole).
    `relative` holds those outputs already read, keyed (model, task, attempt), instead of DIR.
    """
    tasks: dict[str, TaskScores] = {}
    if df is None or len(df) == 0:
        return tasks
    adopted = df["adoption_status"].isin(ADOPTED) & (df["score_status"] == ScoreStatus.VALID)
    sub = df[adopted]
    solver_dir = Path(solver_dir) if solver_dir else None
    per_instance: dict[tuple[str, str, str], tuple[tuple[str, ...], np.ndarray]] = {}
    for model, track, item, attempt, score in zip(
        sub["model"], sub["track"], sub["item"], sub["attempt"], sub["score"]
    ):
        track = normalize_track(str(track)) or str(track)
        if item not in suite.track_of:
            continue
        try:
            value = float(score)
        except ValueError:
            continue
        t = tasks.setdefault(item, TaskScores(item, suite.track_of[item]))
        t.attempts.setdefault(model, {})[str(attempt)] = np.array([value])
        if track == Track.SOLVER and (solver_dir is not None or relative is not None):
            if relative is not None:
                data = relative.get((model, item, str(attempt)))
            else:
                path = solver_dir / model / item / str(attempt) / "relative.json"
                try:
                    data = read_json(path, "solver-score output") if path.is_file() else None
                except InputError:  # an unreadable output only loses instance resolution
                    data = None
            if data is not None:
                inst = data.get("instances") if isinstance(data, dict) else None
                if not isinstance(inst, list) or data.get("relative_score") != value:
                    continue
                try:
                    names = tuple(str(i["instance"]) for i in inst)
                    vals = np.array([float(i["score"]) for i in inst], dtype=np.float64)
                except (KeyError, TypeError, ValueError):
                    continue
                if names:
                    per_instance[(model, item, str(attempt))] = (names, vals)
    # a Solver task gets instance resolution when every attempt of every model has the same list
    for item, t in tasks.items():
        if t.track != Track.SOLVER:
            continue
        keys = [(m, item, a) for m, atts in t.attempts.items() for a in atts]
        found = [f for k in keys if (f := per_instance.get(k)) is not None]
        if found and len(found) == len(keys) and len({f[0] for f in found}) == 1:
            t.instances = found[0][0]
            for (m, _, a), f in zip(keys, found):
                t.attempts[m][a] = f[1]
    return tasks


def add_confidence_intervals(
    result: JsonObject,
    suite,
    attempts_path: str | Path,
    solver_scores: str | Path | None = None,
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> JsonObject:
    """Add `index_ci95` and `track_ci95` to every model of an index.json result (in place), and a
    top-level `bootstrap` describing how they were drawn. Existing fields are left untouched."""
    df = read_attempts(attempts_path)
    tasks = collect_scores(df, suite, solver_scores)
    names = list(result["models"])
    # models in groups, so a large cohort never holds every model's replicates at once (a model's
    # draws do not depend on the group it is in)
    for start in range(0, len(names), MODELS_PER_GROUP):
        group = names[start : start + MODELS_PER_GROUP]
        reps: dict[str, dict[str, np.ndarray]] = {m: {} for m in group}
        for item in suite.items if resamples > 0 else ():
            t = tasks.get(item)
            if t is None:
                continue
            sub = TaskScores(t.item, t.track, t.instances, {m: a for m, a in t.attempts.items() if m in reps})
            (per_model,) = task_replicates([sub], seed, resamples)
            for m, r in per_model.items():
                reps[m][item] = r
        for name in group:
            model = result["models"][name]
            complete = {it: v is not None for it, v in model.get("task_means", {}).items()}
            tracks, index = aggregate(suite.tracks, reps[name], complete)
            model["index_ci95"] = interval(index) if index is not None and resamples > 0 else None
            model["track_ci95"] = {
                t: (interval(rep) if (rep := tracks[t]) is not None and resamples > 0 else None) for t in TRACKS
            }
    result["bootstrap"] = {
        "method": METHOD,
        "confidence": CONFIDENCE,
        "resamples": int(resamples),
        "seed": int(seed),
        "instance_resolution": sorted(it for it, t in tasks.items() if t.instances is not None),
    }
    return result


def reference_task_replicates(
    runs: Sequence[TaskScores | None], seed: int = DEFAULT_SEED, resamples: int = DEFAULT_RESAMPLES
) -> list[dict[str, list[float]]]:
    """Plain-Python version of `task_replicates` (the tests' reference): the same draws from the
    same generator, then loops over resamples, attempts and instances."""
    present = [t for t in runs if t is not None and t.attempts]
    out: list[dict[str, list[float]]] = [{} for _ in runs]
    if not present:
        return out
    item = present[0].item
    instances = _common_instances(runs)
    rng = task_rng(seed, item)
    idx = None
    if instances is not None and len(instances) > 0:
        idx = rng.integers(0, len(instances), size=(resamples, len(instances))).tolist()
    r_max = max(len(a) for t in present for a in t.attempts.values() if a)
    columns = [rng.random(resamples).tolist() for _ in range(r_max)]
    u = [[columns[j][b] for j in range(r_max)] for b in range(resamples)]
    for r, t in enumerate(runs):
        if t is None:
            continue
        for model, attempts in t.attempts.items():
            ids = sorted(attempts)
            vecs = [[float(x) for x in attempts[a]] for a in ids]
            k = len(ids)
            reps = []
            for b in range(resamples):
                total = 0.0
                for j in range(k):
                    vec = vecs[math.floor(u[b][j] * k)]
                    if idx is None:
                        total += sum(vec) / len(vec)
                    else:
                        total += sum(vec[i] for i in idx[b]) / len(idx[b])
                reps.append(total / k)
            out[r][model] = reps
    return out


def reference_interval(values: Sequence[float]) -> list[float]:
    """Plain-Python percentile interval (numpy's linear interpolation)."""
    xs = sorted(values)
    out = []
    for q in QUANTILES:
        h = (len(xs) - 1) * q
        lo = math.floor(h)
        hi = min(lo + 1, len(xs) - 1)
        out.append(xs[lo] + (h - lo) * (xs[hi] - xs[lo]))
    return out
