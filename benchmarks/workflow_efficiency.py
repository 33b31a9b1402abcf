"""Efficiency of a whole workflow run: its wall time against the solver time in its records.

Runs `snakemake --cores C` on a config from scratch (a fresh results folder), then prints

    wall time / (sum of the records' solver wall seconds / C)

(target <= 1.2 for the bundled default), the Ray start or connect time per Solver job (read from
the jobs' run.log) and the number of jobs. With --ray job every job starts its own Ray; with
--ray shared (the local default) one head serves the whole run, so the two can be compared.

    .venv/bin/python benchmarks/workflow_efficiency.py [--configfile config/config.yaml] [--cores 2]
        [--ray auto|shared|job] [--results-dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import base64
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def job_times(metadata: Path, results: Path) -> list[tuple[float, float, str]]:
    """(start, end, rule) of every job whose output lies under `results`, from Snakemake's own
    metadata (.snakemake/metadata: one JSON per output file, named by its urlsafe-base64 path,
    split into "@"-prefixed folders when long). One entry per job (its first output)."""
    jobs = {}
    for path in metadata.rglob("*"):
        if not path.is_file():
            continue
        encoded = "".join(part.lstrip("@") for part in path.relative_to(metadata).parts)
        try:
            name = base64.urlsafe_b64decode(encoded).decode()
            meta = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        if not name.startswith(str(results)) or meta.get("starttime") is None:
            continue
        jobs.setdefault((meta["starttime"], meta["endtime"], meta["rule"]), None)
    return sorted(jobs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configfile", default="config/config.yaml")
    ap.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--ray", choices=("auto", "shared", "job"), default="auto")
    ap.add_argument("--results-dir", default=None, help="default: a fresh temporary folder")
    ap.add_argument("--keep", action="store_true", help="keep the results folder")
    args = ap.parse_args()
    results = Path(args.results_dir or tempfile.mkdtemp(prefix="wf-eff-"))
    bindir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    cmd = [
        str(bindir / "snakemake"),
        "--cores",
        str(args.cores),
        "--configfile",
        args.configfile,
        "--config",
        f"results_dir={results}",
        f"run={{'ray': '{args.ray}'}}",
    ]
    start, start_epoch = time.perf_counter(), time.time()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    end_epoch = start_epoch + wall
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        return 1
    solver_s, n_records = 0.0, 0
    ray_s = []
    for path in glob.glob(str(results / "*" / "*" / "solver" / "*" / "*" / "*" / "records.json")):
        for rec in json.loads(Path(path).read_text()):
            solver_s += rec.get("wall_s") or 0.0
            n_records += 1
        log = Path(path).with_name("run.log").read_text(errors="replace")
        m = re.search(r"on Ray .*\((?:started|connected) in ([0-9.]+) s\)", log) or re.search(
            r"started in ([0-9.]+) s", log
        )
        if m:
            ray_s.append(float(m.group(1)))
    ideal = solver_s / args.cores
    jobs = re.findall(r"^(?:local)?rule (\w+):", proc.stdout + proc.stderr, flags=re.M)
    index = next(iter(glob.glob(str(results / "*" / "*" / "index.json"))), None)
    status = json.loads(Path(index).read_text())["status"] if index else "no index"
    print(
        f"config {args.configfile}, {args.cores} cores, ray {args.ray}: {len(jobs)} jobs, "
        f"{n_records} instance records, index {status}"
    )
    print(f"wall time                 {wall:8.1f} s")
    print(f"solver time (sum wall_s)  {solver_s:8.1f} s  -> / {args.cores} cores = {ideal:.1f} s")
    if ray_s:
        print(
            f"Ray start/connect per job {sum(ray_s) / len(ray_s):8.2f} s mean over {len(ray_s)} Solver jobs "
            f"(sum {sum(ray_s):.1f} s)"
        )
    jobs = job_times(ROOT / ".snakemake" / "metadata", results)
    solver_jobs = [(s, e) for s, e, rule in jobs if rule == "run"]
    if jobs and solver_jobs:
        first_start = min(s for s, _, _ in jobs)
        solver_end = max(e for _, e in solver_jobs)
        slot_s = sum(e - s for s, e in solver_jobs)
        print(f"  Snakemake start to first job     {first_start - start_epoch:6.1f} s")
        print(
            f"  first job to last Solver job end {solver_end - first_start:6.1f} s "
            f"(Solver jobs occupy {slot_s:.1f} core-s: {slot_s - solver_s:.1f} s beyond their "
            f"solver time, {(slot_s - solver_s) / len(solver_jobs):.2f} s per job)"
        )
        print(
            f"  after the last Solver job        {end_epoch - solver_end:6.1f} s "
            f"(scoring, attempt table, Index, plots, exit)"
        )
    print(f"efficiency ratio          {wall / ideal if ideal else float('inf'):8.3f}  (target <= 1.2)")
    if not args.keep and not args.results_dir:
        shutil.rmtree(results, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
