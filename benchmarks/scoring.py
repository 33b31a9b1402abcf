"""Benchmark the scoring hot paths against plain numpy/pandas computations of the same numbers.

    .venv/bin/python benchmarks/scoring.py [--repeat 7]

1. solver-score on a synthetic Full-size task: 1,860 eligible instances with 3 reference values
   each (+32 unscored), records for all of them (about 10% solver failures). Timed from the files
   (load and validate the reference and the records, score); the baseline loads the same files with
   `json` and computes mu, s, scale, z, Phi and the mean with numpy/scipy, without any validation.
2. The Index on 100,000 attempt rows (1,000 models x 20 Lite tasks x 5 attempts, some excluded).
   Timed from the files (read and validate the CSV and the cohort, aggregate); the baseline reads
   the CSV with pandas and does the groupby means and the 30/30/30/10 sum, without validation.

Imports are done before timing; each time is the best of --repeat runs. Both computations must
agree with the baseline's numbers; the script prints times and ratios (target: within 2x).
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from tcsexam.paths import config_dir
from tcsexam.scoring.index import score_files
from tcsexam.scoring.solver_score import solver_score_files
from tcsexam.suites import load_suite


def best_of(fn, repeat: int) -> tuple[float, object]:
    result = fn()  # warm-up (caches, lazy imports)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def make_solver_task(folder: Path, rng: np.random.Generator) -> tuple[Path, Path]:
    n, n_unscored = 1860, 32
    base = rng.uniform(1e3, 1e5, n)
    values = np.round(base[:, None] * (1 + rng.normal(0, 0.01, (n, 3))))
    instances = {f"inst{i:05d}": values[i].tolist() for i in range(n)}
    unscored = {f"hard{i:03d}": [float(rng.integers(1e3, 1e5)), None, None] for i in range(n_unscored)}
    reference = {
        "schema_version": 1,
        "reference_id": "bench-k3",
        "suite": "full",
        "scale_floors": {"relative": 0.02, "absolute": 1e-9},
        "tasks": {"bench-task": {"kind": "objective", "direction": "maximize", "instances": instances}},
        "unscored_reference_instances": {"bench-task": unscored},
    }
    statuses = rng.choice(["ok"] * 9 + ["timeout"], n + n_unscored)
    names = list(instances) + list(unscored)
    a = np.round(np.concatenate([base, rng.uniform(1e3, 1e5, n_unscored)]) * rng.normal(1, 0.02, n + n_unscored))
    records = []
    for name, status, value in zip(names, statuses.tolist(), a.tolist()):
        rec = {"instance": name, "status": status, "claimed": value, "wall_s": 1.0, "cpu_s": 1.0, "key": "k" * 16}
        if status == "ok":
            rec["A"] = value
            rec["reward"] = 0.98
        records.append(rec)
    order = rng.permutation(len(records))
    ref_path, rec_path = folder / "reference.json", folder / "records.json"
    ref_path.write_text(json.dumps(reference))
    rec_path.write_text(json.dumps([records[i] for i in order]))
    return ref_path, rec_path


def baseline_solver_score(ref_path: Path, rec_path: Path) -> float:
    ref = json.loads(ref_path.read_text())["tasks"]["bench-task"]["instances"]
    records = json.loads(rec_path.read_text())
    a = {r["instance"]: r["A"] for r in records if r["status"] == "ok"}
    values = np.array(list(ref.values()))
    mu = values.mean(axis=1)
    scale = np.maximum(np.maximum(values.std(axis=1, ddof=1), 0.02 * np.abs(mu)), 1e-9)
    got = np.array([a.get(name, np.nan) for name in ref])
    score = np.where(np.isnan(got), 0.0, norm.cdf((got - mu) / scale))
    return float(score.mean())


def make_attempts(folder: Path, rng: np.random.Generator) -> tuple[Path, Path]:
    suite = load_suite("lite")
    n_models, k = 1000, 5
    models = [f"model-{m:04d}" for m in range(n_models)]
    path = folder / "attempts.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "model",
                "track",
                "item",
                "attempt",
                "score",
                "adoption_status",
                "score_status",
                "score_type",
                "solver_protocol",
            ]
        )
        for model in models:
            for track, items in suite.tracks.items():
                for item in items:
                    for a in range(1, k + 1):
                        if track in ("theorem", "open_conjecture"):
                            score = float(rng.integers(0, 2))
                        elif track == "construction":
                            score = float(rng.uniform(0, 1.5))
                        else:
                            score = float(rng.uniform(0, 1))
                        adoption = "excluded" if a == k else "selected"  # 4 adopted + 1 excluded per task
                        w.writerow(
                            [
                                model,
                                track,
                                item,
                                a,
                                repr(score),
                                adoption,
                                "valid",
                                "fixed_reference_relative" if track == "solver" else "original_task_score",
                                "offline" if track == "solver" else "",
                            ]
                        )
    cohort = {
        "suite": "lite",
        "solver_protocol": "offline",
        "solver_reference_id": "bench-k3",
        "models": {m: {"attempts_per_task": k - 1} for m in models},
    }
    cohort_path = folder / "cohort.json"
    cohort_path.write_text(json.dumps(cohort))
    return path, cohort_path


def baseline_index(attempts: Path) -> pd.Series:
    df = pd.read_csv(attempts)
    df = df[df["adoption_status"] != "excluded"]
    task = df.groupby(["model", "track", "item"], sort=False)["score"].mean()
    track = task.groupby(level=["model", "track"], sort=False).mean().unstack("track")
    return 30 * track["theorem"] + 30 * track["solver"] + 30 * track["construction"] + 10 * track["open_conjecture"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(20260925)
    suite = load_suite(config_dir() / "suites" / "lite.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ref_path, rec_path = make_solver_task(folder, rng)
        t_ours, ours = best_of(lambda: solver_score_files("bench-task", rec_path, ref_path), args.repeat)
        t_base, base = best_of(lambda: baseline_solver_score(ref_path, rec_path), args.repeat)
        assert ours["n_eligible"] == 1860 and len(ours["unscored_instances"]) == 32
        assert abs(ours["relative_score"] - base) <= 1e-12, (ours["relative_score"], base)
        print(
            f"solver-score, 1,860 eligible x 3 values (+32 unscored): {t_ours * 1e3:.1f} ms; "
            f"plain numpy baseline {t_base * 1e3:.1f} ms; ratio {t_ours / t_base:.2f}x "
            f"(relative_score {ours['relative_score']:.6f})"
        )

        attempts, cohort = make_attempts(folder, rng)
        t_ours, ours = best_of(lambda: score_files(suite, attempts, cohort), args.repeat)
        t_base, base = best_of(lambda: baseline_index(attempts), args.repeat)
        got = pd.Series({m: v["index"] for m, v in ours["models"].items()})
        diff = float((got - base.reindex(got.index)).abs().max())
        assert diff <= 1e-9, diff
        print(
            f"Index, 100,000 attempt rows (1,000 models x 20 tasks x 5 attempts): {t_ours * 1e3:.1f} ms; "
            f"plain pandas baseline {t_base * 1e3:.1f} ms; ratio {t_ours / t_base:.2f}x "
            f"(max |difference| {diff:.1e})"
        )


if __name__ == "__main__":
    main()
