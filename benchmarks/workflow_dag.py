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
# Full's extra Solver tasks reuse the demo candidate of the same problem
SOURCE = {"maxcut-gset-large": "maxcut-mqlib", "tsp-tsplib-large": "tsp-tsplib"}


def setup(workdir: Path, models: int, attempts: int) -> Path:
    suite = yaml.safe_load((ROOT / "config" / "suites" / "full.yaml").read_text())
    solvers = workdir / "solvers"
    names = [f"model-{k:02d}" for k in range(models)]
    for name in names:
        for task in suite["tracks"]["solver"]:
            src = ROOT / "solvers" / "demo-strong" / SOURCE.get(task, task) / "1"
            for a in range(1, attempts + 1):
                dest = solvers / name / task / str(a)
                dest.parent.mkdir(parents=True, exist_ok=True)
                if not dest.exists():
                    dest.symlink_to(src)
    (workdir / "verdicts").mkdir(parents=True, exist_ok=True)
    config = {
        "allow_missing": True,
        "suite": "full",
        "protocol": "offline",
        "reference": "full",
        "results_dir": str(workdir / "results"),
        "solvers_dir": str(solvers),
        "verdicts_dir": str(workdir / "verdicts"),
        "models": [{"name": n, "attempts": [str(a) for a in range(1, attempts + 1)]} for n in names],
    }
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--attempts", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="wf-dag-"))
    config = setup(workdir, args.models, args.attempts)
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
        return 1
    text = proc.stdout + proc.stderr
    table = text[text.index("Job stats:") :] if "Job stats:" in text else text
    total = 0
    for line in table.splitlines()[3:]:
        if not line.strip():
            break
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if m:
            print(f"job {m.group(1)} {m.group(2)}")
            if m.group(1) == "total":
                total = int(m.group(2))
    print(
        f"snakemake -n: Full suite, {args.models} models x {args.attempts} attempts: "
        f"{total} jobs, DAG built in {elapsed:.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
