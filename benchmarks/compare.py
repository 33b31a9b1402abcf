"""Benchmark `tcsexam compare` and the bootstrap on Full-shaped runs: 10 models x 3 attempts on every
task of config/suites/full.yaml, the Solver tasks' instances split like the Full reference's.

    .venv/bin/python benchmarks/compare.py [--instances 99 1900] [--resamples 10000] [--repeat 3]

For each total of Solver instances two run directories are synthesized (index.json from the real
scorer, attempts.csv, a relative.json and records.json per model/task/attempt, manifest.json); the
candidate run is the baseline with per-instance noise. Timed (best of --repeat, imports done first):

1. the point estimates: read both runs' index.json and attempts.csv, and the Index, track and task
   deltas (no intervals);
2. the paired bootstrap of every task of both runs (B resamples, vectorised: one matrix product
   per task) against a plain numpy loop over the resamples computing the same replicates
   (checked equal), and the ratio;
3. the whole compare with B resamples, and index.json's index_ci95/track_ci95 for one run.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from tcsexam.reproduce.compare import compare_runs, model_deltas
from tcsexam.reproduce.compare_run import load_run
from tcsexam.scoring.bootstrap import (
    DEFAULT_SEED,
    add_confidence_intervals,
    collect_scores,
    task_replicates,
    task_rng,
)
from tcsexam.scoring.index import score_files
from tcsexam.suites import load_suite

MODELS = [f"model-{m:02d}" for m in range(10)]
ATTEMPTS = ["1", "2", "3"]
SHARES = {  # the Full reference's instances per task (references/full.json)
    "maxcut-mqlib": 17,
    "sat-satlib": 16,
    "tsp-tsplib": 12,
    "coloring-dimacs": 15,
    "maxsat-wcnf": 11,
    "maxcut-gset-large": 25,
    "tsp-tsplib-large": 3,
}  # tasks not listed (Full's generated families) get a share of 10


def split(total: int, tasks: list[str]) -> dict[str, int]:
    weights = np.array([SHARES.get(t, 10) for t in tasks], dtype=float)
    counts = np.maximum(2, np.floor(total * weights / weights.sum())).astype(int)
    counts[0] += total - counts.sum()
    return dict(zip(tasks, counts.tolist()))


def make_run(folder: Path, suite, n_inst: dict[str, int], rng, base_scores=None, noise=0.0):
    folder.mkdir(parents=True)
    rows = []
    scores = {}
    for model in MODELS:
        for track, items in suite.tracks.items():
            for item in items:
                for attempt in ATTEMPTS:
                    if track == "solver":
                        n = n_inst[item]
                        key = (model, item, attempt)
                        s = base_scores[key] if base_scores else rng.beta(2, 2, n)
                        if noise:
                            s = np.clip(s + rng.normal(0, noise, n), 0, 1)
                        scores[key] = s
                        status = np.where(s < 0.05, "timeout", "ok")
                        s = np.where(status == "ok", s, 0.0)
                        d = folder / "solver" / model / item / attempt
                        d.mkdir(parents=True)
                        rel = {
                            "schema_version": 1,
                            "task": item,
                            "reference_id": "bench-k3",
                            "relative_score": float(s.mean()),
                            "instances": [
                                {"instance": f"{item}-{i:04d}", "status": st, "score": float(v)}
                                for i, (st, v) in enumerate(zip(status.tolist(), s.tolist()))
                            ],
                            "unscored_instances": [],
                        }
                        (d / "relative.json").write_text(json.dumps(rel))
                        recs = [
                            {"instance": f"{item}-{i:04d}", "status": st, "A": round(1000 * v, 3), "wall_s": 1.0}
                            for i, (st, v) in enumerate(zip(status.tolist(), s.tolist()))
                        ]
                        (d / "records.json").write_text(json.dumps(recs))
                        rows.append(
                            [
                                model,
                                track,
                                item,
                                attempt,
                                repr(rel["relative_score"]),
                                "selected",
                                "valid",
                                "fixed_reference_relative",
                                "offline",
                            ]
                        )
                    else:
                        v = float(rng.integers(0, 2)) if track in ("theorem", "open_conjecture") else rng.random()
                        if base_scores:
                            v = base_scores[(model, item, attempt)]
                        scores[(model, item, attempt)] = v
                        rows.append(
                            [model, track, item, attempt, repr(v), "selected", "valid", "original_task_score", ""]
                        )
    with open(folder / "attempts.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow("model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol".split(","))
        w.writerows(rows)
    cohort = {
        "suite": "full",
        "solver_protocol": "offline",
        "solver_reference_id": "bench-k3",
        "models": {m: {"attempts_per_task": len(ATTEMPTS)} for m in MODELS},
    }
    (folder / "cohort.json").write_text(json.dumps(cohort))
    index = score_files(suite, folder / "attempts.csv", folder / "cohort.json", folder / "solver")
    (folder / "index.json").write_text(json.dumps(index))
    manifest = {
        "schema_version": 1,
        "reference": {"id": "bench-k3", "sha256": "0" * 64},
        "tasks": {
            t: {
                "sha256": hashlib.sha256(t.encode()).hexdigest(),
                "limits": {"wall_s": 10},
                "instances": {f"{t}-{i:04d}": "1" * 64 for i in range(n)},
            }
            for t, n in n_inst.items()
        },
        "candidates": {m: {t: {a: {"candidate_hash": "c" * 64} for a in ATTEMPTS} for t in n_inst} for m in MODELS},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return scores


def loop_replicates(runs, seed: int, resamples: int):
    """The same replicates with a plain numpy loop over the resamples (the baseline): each resample
    draws from the same generator stream and averages every model's and run's attempts with numpy."""
    t0 = runs[0]
    rng = task_rng(seed, t0.item)
    n = len(t0.instances)
    idx_all = rng.integers(0, n, size=(resamples, n))
    k = len(ATTEMPTS)
    u = np.column_stack([rng.random(resamples) for _ in range(k)])
    blocks = [(r, m, np.stack([a[x] for x in sorted(a)])) for r, t in enumerate(runs) for m, a in t.attempts.items()]
    mat = np.concatenate([b[2] for b in blocks])  # (rows, n)
    reps = np.empty((resamples, len(blocks)))
    for b in range(resamples):
        inst = mat[:, idx_all[b]].mean(axis=1).reshape(len(blocks), k)
        reps[b] = inst[:, np.floor(u[b] * k).astype(int)].mean(axis=1)
    out = [{} for _ in runs]
    for j, (r, m, _) in enumerate(blocks):
        out[r][m] = reps[:, j]
    return out


def best_of(fn, repeat):
    result = fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, nargs="+", default=[99, 1900], help="Solver instances in total")
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    suite = load_suite("full")
    solver_tasks = list(suite.tracks["solver"])
    print(
        f"Full suite: {len(suite.items)} tasks ({len(solver_tasks)} Solver), {len(MODELS)} models x {len(ATTEMPTS)} attempts"
    )
    for total in args.instances:
        with tempfile.TemporaryDirectory() as tmp:
            bench(Path(tmp), suite, split(total, solver_tasks), args)


def bench(tmp: Path, suite, n_inst: dict[str, int], args) -> None:
    import pandas as pd

    solver_tasks = list(suite.tracks["solver"])
    rng = np.random.default_rng(0)
    base = make_run(tmp / "base", suite, n_inst, rng)
    make_run(tmp / "cand", suite, n_inst, rng, base_scores=base, noise=0.01)
    print(f"\n{sum(n_inst.values())} Solver instances {n_inst}")

    def point_estimates():
        b, c = load_run(tmp / "base", solver_files=False), load_run(tmp / "cand", solver_files=False)
        return model_deltas(b, c, suite, resamples=0)

    t_point, _ = best_of(point_estimates, args.repeat)
    print(
        f"  point estimates (index.json + attempts.csv of both runs; Index, track, task deltas): {t_point * 1000:8.1f} ms"
    )

    def table(run):
        return pd.read_csv(run / "attempts.csv", dtype=str, keep_default_na=False)

    sb = collect_scores(table(tmp / "base"), suite, tmp / "base" / "solver")
    sc = collect_scores(table(tmp / "cand"), suite, tmp / "cand" / "solver")
    t_vec, reps = best_of(
        lambda: {it: task_replicates([sb[it], sc[it]], DEFAULT_SEED, args.resamples) for it in suite.items},
        args.repeat,
    )
    t_vec_solver, _ = best_of(
        lambda: [task_replicates([sb[it], sc[it]], DEFAULT_SEED, args.resamples) for it in solver_tasks],
        args.repeat,
    )
    t0 = time.perf_counter()
    loop = {it: loop_replicates([sb[it], sc[it]], DEFAULT_SEED, args.resamples) for it in solver_tasks}
    t_loop = time.perf_counter() - t0
    for it in solver_tasks:
        for r in range(2):
            for m in MODELS:
                np.testing.assert_allclose(reps[it][r][m], loop[it][r][m], atol=1e-12)
    print(
        f"  bootstrap, {args.resamples} resamples, all {len(suite.items)} tasks of both runs: {t_vec * 1000:8.1f} ms "
        f"(the {len(solver_tasks)} Solver tasks: {t_vec_solver * 1000:.1f} ms)"
    )
    print(
        f"  plain numpy loop over the resamples, Solver tasks:    {t_loop * 1000:8.1f} ms "
        f"-> ratio loop / vectorised {t_loop / t_vec_solver:.1f}x (same replicates)"
    )
    t_full, res = best_of(lambda: compare_runs(tmp / "base", tmp / "cand", resamples=args.resamples), args.repeat)
    print(
        f"  compare with {args.resamples} resamples, end to end:         {t_full * 1000:8.1f} ms (verdict {res['verdict']})"
    )
    index = json.loads((tmp / "base" / "index.json").read_text())
    t_ci, _ = best_of(
        lambda: add_confidence_intervals(
            json.loads(json.dumps(index)),
            suite,
            tmp / "base" / "attempts.csv",
            tmp / "base" / "solver",
            resamples=args.resamples,
        ),
        args.repeat,
    )
    print(f"  index.json index_ci95 + track_ci95, {args.resamples} resamples:  {t_ci * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
