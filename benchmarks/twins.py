"""`tcsexam twins make` on a suite, and the calibration of the memorisation threshold (docs/twins.md).

usage:
  .venv/bin/python benchmarks/twins.py [--suite full] [--seed 1]
      time `twins make` for every Solver task of the suite (the generated families are generated
      first when missing, not timed) against a baseline that only parses every instance and writes
      its bytes to a new file; prints seconds per task, the total and the ratio. Asserts nothing.
  .venv/bin/python benchmarks/twins.py --merge A.json B.json ... --output benchmarks/twins-calibration.json
      combine calibration outputs into the file tests/unit/twins/test_calibration.py reads
      (per model, seed and task: original, twin, difference, ci95, flagged).
  .venv/bin/python benchmarks/twins.py --calibrate --models demo-strong demo-fast demo-weak \\
      --seeds 1 2 3 [--tasks T ...] [--workdir DIR]
      run each model on the originals and on the twins of each seed (tcsexam run --no-ray, the
      task's own limits) and print every model's and task's difference original - twin with its
      paired bootstrap interval, per seed, and the largest difference seen (the threshold must lie
      above it for every honest model).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tcsexam(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "tcsexam", *args], check=True, cwd=ROOT, capture_output=True)


def bench(suite: str, seed: int) -> None:
    from tcsexam.problems import get_problem
    from tcsexam.scoring.reference import load_reference
    from tcsexam.suites import load_suite
    from tcsexam.tasks import load_task
    from tcsexam.twins.make import make_twins

    tasks = load_suite(suite).tracks["solver"]
    reference = load_reference("full")  # loaded once: the timing is of the twins, not of the reference
    total_twin = total_base = 0.0
    n_total = 0
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'task':22s} {'instances':>9s} {'twins make':>11s} {'parse+write':>12s} {'ratio':>6s}")
        for task in tasks:
            t = load_task(task)
            if t.generated and not all(i.path.is_file() for i in t.generated):
                _tcsexam("generate", "--task", task)
            p = get_problem(t.problem)
            start = time.perf_counter()
            for inst in t.instances:  # the baseline: parse, write the same bytes elsewhere
                p.parse_instance(inst.path)
                (Path(tmp) / "copy").write_bytes(inst.path.read_bytes())
            base = time.perf_counter() - start
            start = time.perf_counter()
            make_twins(task, seed, Path(tmp) / task, reference)
            twin = time.perf_counter() - start
            total_twin, total_base, n_total = total_twin + twin, total_base + base, n_total + len(t.instances)
            print(f"{task:22s} {len(t.instances):9d} {twin:10.2f}s {base:11.2f}s {twin / base:6.1f}")
            shutil.rmtree(Path(tmp) / task)
    print(f"{'total':22s} {n_total:9d} {total_twin:10.2f}s {total_base:11.2f}s {total_twin / total_base:6.1f}")


def _run(task_file: Path, task: str, ref: Path, model: str, att: Path) -> None:
    att.mkdir(parents=True, exist_ok=True)
    _tcsexam(
        "run",
        "--task",
        str(task_file),
        "--candidate",
        str(ROOT / "solvers" / model / task / "1"),
        "--output",
        str(att / "records.json"),
        "--records-dir",
        str(att / "records"),
        "--no-ray",
        "--sandbox",
        "auto",
        "--allow-unsandboxed",
        "--no-progress",
    )
    _tcsexam(
        "solver-score",
        "--task",
        task,
        "--records",
        str(att / "records.json"),
        "--reference",
        str(ref),
        "--output",
        str(att / "relative.json"),
    )


def calibrate(models: list[str], seeds: list[int], tasks: list[str], workdir: Path) -> dict:
    from tcsexam.scoring.reference import resolve_reference_path
    from tcsexam.scoring.twins import twin_differences

    ref = resolve_reference_path("lite")
    originals = workdir / "solver"
    per_seed = {}
    for seed in seeds:
        twins = workdir / f"twins-{seed}"
        for task in tasks:
            folder = twins / f"s{seed}" / "tasks" / task
            if not (folder / "map.json").is_file():
                _tcsexam(
                    "twins", "make", "--task", task, "--seed", str(seed), "--output", str(folder), "--reference", "lite"
                )
            for model in models:
                if not (originals / model / task / "1" / "relative.json").is_file():
                    _run(ROOT / "config" / "tasks" / f"{task}.yaml", task, ref, model, originals / model / task / "1")
                att = twins / f"s{seed}" / "solver" / model / task / "1"
                if not (att / "relative.json").is_file():
                    _run(folder / "task.yaml", task, folder / "reference.json", model, att)
        per_seed[seed] = twin_differences(originals, twins, models, tasks, seed=20260925, resamples=10000)["models"]
        for model in models:
            for task, d in per_seed[seed][model].items():
                print(
                    f"seed {seed} {model:12s} {task:16s} orig {d['original']:.3f} twin {d['twin']:.3f} "
                    f"diff {d['difference']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}] flagged {d['flagged']}",
                    flush=True,
                )
    worst = max(
        (abs(d["difference"]), s, m, t) for s, per in per_seed.items() for m, pt in per.items() for t, d in pt.items()
    )
    print(f"largest |difference|: {worst[0]:.3f} ({worst[2]}, {worst[3]}, seed {worst[1]})")
    return {"seeds": seeds, "models": models, "tasks": tasks, "per_seed": per_seed}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", default="full")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--models", nargs="+", default=["demo-strong", "demo-fast", "demo-weak"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument(
        "--tasks", nargs="+", default=["maxcut-mqlib", "sat-satlib", "tsp-tsplib", "coloring-dimacs", "maxsat-wcnf"]
    )
    ap.add_argument("--workdir", help="keep the runs here (reused by a rerun)")
    ap.add_argument("--output", help="write the calibration's differences (JSON) here")
    ap.add_argument("--merge", nargs="+", metavar="JSON", help="combine calibration outputs into --output")
    args = ap.parse_args()
    if args.merge:
        merged: dict = {"written_by": "benchmarks/twins.py --calibrate, then --merge", "models": {}}
        for path in args.merge:
            data = json.loads(Path(path).read_text())
            for seed, per_model in data["per_seed"].items():
                for model, per_task in per_model.items():
                    merged["models"].setdefault(model, {})[str(seed)] = per_task
        Path(args.output).write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n")
        return 0
    if not args.calibrate:
        bench(args.suite, args.seed)
        return 0
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="twins-calibrate-"))
    result = calibrate(args.models, args.seeds, args.tasks, workdir)
    if args.output:
        Path(args.output).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
