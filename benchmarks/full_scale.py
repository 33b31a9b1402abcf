"""The pipeline's bookkeeping at Full scale, on the real Full reference and task files: 10 models x
3 attempts x the 13 Full Solver tasks (390 records files, about 60,000 instance records).

    .venv/bin/python benchmarks/full_scale.py [--models 10] [--attempts 3] [--reference-results DIR]

No solver runs: every (model, task, attempt) gets a synthetic records.json over the task's real
instances (values drawn around the reference mean, about 10% failures, the unscored instances
memout), with the digest `tcsexam run` writes. Then, each time printed with a ratio against a
baseline computed in the same process:

1. `solver-score` (load + validate reference and records, score) for all 390 records files,
   against a numpy baseline (json.load, mu/scale/z/Phi/mean, no validation);
2. `tcsexam score` (read + validate the Full attempt table and cohort, Index), against pandas
   groupby means;
3. the report's plots (`tcsexam attempts plots`: reads every relative.json and records.json),
   against reading the same files with json alone;
4. the records' size on disk: the synthetic records.json files, and per-instance record files
   measured on a real reference build (results/reference/ or --reference-results).
Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

from tcsexam.attempts.plots import make_plots
from tcsexam.paths import project_root
from tcsexam.records.digest import DIGEST_FIELD, record_digest
from tcsexam.records.key import ensure_key
from tcsexam.scoring.index import score_files
from tcsexam.scoring.reference import load_reference
from tcsexam.scoring.solver_score import solver_score_files
from tcsexam.suites import load_suite
from tcsexam.tasks import load_task

COLUMNS = "model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol".split(",")


def synth_records(task, ref_task, rng, key) -> list[dict]:
    mu = dict(zip(ref_task.names, ref_task.mu.tolist()))
    out = []
    for inst in task.instances:
        rec = {"instance": inst.name, "status": "ok", "A": None, "solved": None, "claimed": None, "reward": None}
        rec.update({"message": "", "wall_s": 1.0, "cpu_s": 0.9, "peak_mem_mb": 50.0, "exit_code": 0})
        rec.update({"signal": None, "termination": "exit", "sandbox": "local", "limiter": "light"})
        rec.update({"key": "sha256:" + "0" * 64, "task": task.id, "attempt": "1", "harness_version": "0.1.0"})
        rec["schema_version"] = 1
        if inst.name not in mu:
            rec.update(status="memout", termination="memory")
        elif rng.random() < 0.1:
            rec.update(status="timeout", termination="walltime")
        elif task.kind == "solve":
            rec["solved"] = bool(rng.random() < 0.8)
        else:
            rec["A"] = float(round(mu[inst.name] * (1 + rng.normal(0, 0.02))))
            rec["claimed"] = rec["A"]
        rec[DIGEST_FIELD] = record_digest(rec, key)
        out.append(rec)
    return out


def baseline_score(ref_values: dict, records: list[dict], kind: str, sign: float) -> float:
    values = np.array([[np.nan if v is None else float(v) for v in vs] for vs in ref_values.values()])
    mu = np.nanmean(values, axis=1)
    scale = np.maximum(np.maximum(np.nanstd(values, axis=1, ddof=1), 0.02 * np.abs(mu)), 1e-9)
    key = "solved" if kind == "solve" else "A"
    got = {r["instance"]: r[key] for r in records if r["status"] == "ok"}
    a = np.array([np.nan if got.get(n) is None else float(got[n]) for n in ref_values])
    score = np.where(np.isnan(a), 0.0, norm.cdf(sign * (a - mu) / scale))
    return float(score.mean())


def timed(fn):
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--attempts", type=int, default=3)
    ap.add_argument(
        "--reference-results",
        type=Path,
        default=project_root() / "results" / "reference",
        help="a reference build's results (its per-instance records are measured)",
    )
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tcsexam-full-scale-"))
    rng = np.random.default_rng(0)
    suite = load_suite("full")
    ref_path = project_root() / "references" / "full.json"
    reference = load_reference(ref_path)
    tasks = {t: load_task(t) for t in suite.tracks["solver"]}
    models = [f"model-{m:02d}" for m in range(args.models)]
    attempts = [str(a) for a in range(1, args.attempts + 1)]
    solver_dir = root / "solver"
    key = ensure_key(root)  # the tree's record key, as the workflow makes it
    jobs = []
    try:
        for task_id, task in tasks.items():
            for model in models:
                for attempt in attempts:
                    path = solver_dir / model / task_id / attempt / "records.json"
                    path.parent.mkdir(parents=True)
                    path.write_text(json.dumps(synth_records(task, reference.tasks[task_id], rng, key), indent=2))
                    jobs.append((model, task_id, attempt, path))
        n_records = sum(len(tasks[t].instances) for _, t, _, _ in jobs)
        print(f"{len(jobs)} records files, {n_records} instance records ({len(tasks)} Full Solver tasks)")

        # 1. solver-score over every records file
        def ours():
            out = {}
            for model, task_id, attempt, path in jobs:
                res = solver_score_files(task_id, path, ref_path)
                (path.parent / "relative.json").write_text(json.dumps(res))
                out[(model, task_id, attempt)] = res["relative_score"]
            return out

        def base():
            raw = json.loads(ref_path.read_text())
            out = {}
            for model, task_id, attempt, path in jobs:
                t = raw["tasks"][task_id]
                sign = 1.0 if t["direction"] == "maximize" else -1.0
                out[(model, task_id, attempt)] = baseline_score(
                    t["instances"], json.loads(path.read_text()), t["kind"], sign
                )
            return out

        t_ours, scores = timed(ours)
        t_base, base_scores = timed(base)
        worst = max(abs(scores[k] - base_scores[k]) for k in scores)
        print(
            f"solver-score, all {len(jobs)}: {t_ours:6.2f} s  numpy baseline {t_base:6.2f} s  "
            f"ratio {t_ours / t_base:.2f}  (max |diff| {worst:.1e})"
        )

        # 2. tcsexam score on the Full attempt table
        table = root / "attempts.csv"
        with open(table, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(COLUMNS)
            for model in models:
                for track, items in suite.tracks.items():
                    for item in items:
                        for attempt in attempts:
                            if track == "solver":
                                score, kind, proto = (
                                    scores[(model, item, attempt)],
                                    "fixed_reference_relative",
                                    "offline",
                                )
                            elif track == "construction":
                                score, kind, proto = float(rng.uniform(0, 1.5)), "original_task_score", ""
                            else:  # theorem and open-conjecture scores are 0 or 1
                                score, kind, proto = float(rng.integers(0, 2)), "original_task_score", ""
                            w.writerow([model, track, item, attempt, repr(score), "selected", "valid", kind, proto])
        cohort = root / "cohort.json"
        cohort.write_text(
            json.dumps(
                {
                    "suite": "full",
                    "solver_protocol": "offline",
                    "solver_reference_id": reference.reference_id,
                    "models": {m: {"attempts_per_task": args.attempts} for m in models},
                }
            )
        )
        t_index, index = timed(lambda: score_files(suite, table, cohort))
        (root / "index.json").write_text(json.dumps(index))

        def pandas_index():
            import pandas as pd

            df = pd.read_csv(table)
            task = df.groupby(["model", "track", "item"], sort=False)["score"].mean()
            track = task.groupby(level=["model", "track"], sort=False).mean().unstack("track")
            return (
                30 * track["theorem"]
                + 30 * track["solver"]
                + 30 * track["construction"]
                + 10 * track["open_conjecture"]
            )

        t_pd, pd_index = timed(pandas_index)
        worst = max(abs(index["models"][m]["index"] - float(pd_index[m])) for m in models)
        print(
            f"tcsexam score ({sum(1 for _ in open(table)) - 1} rows): {t_index:6.3f} s  pandas baseline {t_pd:6.3f} s  "
            f"ratio {t_index / t_pd:.2f}  (max |Index diff| {worst:.1e})"
        )

        # 3. the report's plots
        t_plots, written = timed(lambda: make_plots(root / "index.json", table, solver_dir, root / "plots"))

        def read_all():
            for _, _, _, path in jobs:
                json.loads(path.read_text())
                json.loads((path.parent / "relative.json").read_text())

        t_read, _ = timed(read_all)
        print(
            f"report plots ({len(written)} PNG): {t_plots:6.2f} s  reading the same files {t_read:6.2f} s  "
            f"ratio {t_plots / t_read:.1f}"
        )

        # 4. records on disk
        size = sum(p.stat().st_size for _, _, _, p in jobs)
        print(f"records.json files: {size / 1e6:.1f} MB ({size / n_records:.0f} bytes per instance record)")
        built = sorted(args.reference_results.glob("*/*/seed*/records/*.json"))
        if built:
            per = sum(p.stat().st_size for p in built) / len(built)
            blocks = sum(p.stat().st_blocks * 512 for p in built) / len(built)
            print(
                f"per-instance record files (measured on {len(built)} reference records): {per:.0f} bytes each, "
                f"{blocks:.0f} bytes on disk (file system blocks) -> {n_records * blocks / 1e6:.0f} MB on disk for "
                f"this run's {n_records} records, plus the records.json files"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
