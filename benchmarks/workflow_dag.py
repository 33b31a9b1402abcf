"""Time `snakemake -n` (parsing, config validation, DAG building) on a large evaluation.

A synthetic cohort: the Full suite, M models x A attempts, every Solver task submitted (links to the
demo-strong candidates), no verdicts (missing rows: `allow_missing: true`). Prints the DAG's job counts and the seconds
`snakemake -n` took. Not a test of speed: nothing is asserted here.

    .venv/bin/python benchmarks/workflow_dag.py [--models 10] [--attempts 3] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def setup(workdir: Path, models: int, attempts: int, suite_name: str = "full") -> Path:
    suite = yaml.safe_load((ROOT / "config" / "suites" / f"{suite_name}.yaml").read_text())
    solvers = workdir / "solvers"
    names = [f"model-{k:02d}" for k in range(models)]
    for name in names:
        for task in suite["tracks"]["solver"]:
            src = ROOT / "solvers" / "demo-strong" / task / "1"
            for a in range(1, attempts + 1):
                dest = solvers / name / task / str(a)
                dest.parent.mkdir(parents=True, exist_ok=True)
                if not dest.exists():
                    dest.symlink_to(src)
    (workdir / "verdicts").mkdir(parents=True, exist_ok=True)
    config = {
        "allow_missing": True,
        "suite": suite_name,
        "protocol": "offline",
        "reference": suite_name,
        "results_dir": str(workdir / "results"),
        "solvers_dir": str(solvers),
        "verdicts_dir": str(workdir / "verdicts"),
        "models": [{"name": n, "attempts": [str(a) for a in range(1, attempts + 1)]} for n in names],
    }
    path = workdir / f"config-{suite_name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--attempts", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="wf-dag-"))
    result = {}
    for suite_name in ("lite", "full"):  # the Lite dry run is the baseline
        config = setup(workdir / suite_name, args.models, args.attempts, suite_name)
        result[suite_name] = dry_run(config)
        if result[suite_name] is None:
            return 1
    (lite_s, lite_jobs), (full_s, full_jobs) = result["lite"], result["full"]
    for name, count in full_jobs.items():
        print(f"job {name} {count}")
    print(
        f"snakemake -n: Full suite, {args.models} models x {args.attempts} attempts: "
        f"{full_jobs.get('total', 0)} jobs ({full_jobs.get('run', 0)} Solver jobs = sbatch "
        f"submissions on SLURM), DAG built in {full_s:.2f} s"
    )
    print(
        f"baseline, Lite suite with the same cohort: {lite_jobs.get('total', 0)} jobs in {lite_s:.2f} s; "
        f"Full / Lite: {full_s / lite_s:.2f}x the time for {full_jobs.get('total', 0) / lite_jobs.get('total', 1):.2f}x "
        "the jobs"
    )
    return 0


def dry_run(config: Path) -> tuple[float, dict[str, int]] | None:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    start = time.perf_counter()
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "snakemake"), "-n", "--quiet", "rules", "--configfile", str(config)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        return None
    text = proc.stdout + proc.stderr
    table = text[text.index("Job stats:") :] if "Job stats:" in text else text
    jobs: dict[str, int] = {}
    for line in table.splitlines()[3:]:
        if not line.strip():
            break
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if m:
            jobs[m.group(1)] = int(m.group(2))
    return elapsed, jobs


if __name__ == "__main__":
    raise SystemExit(main())
