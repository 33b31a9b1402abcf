"""Time `snakemake -n` (parsing, config validation, DAG building) on a large evaluation, and
Snakemake's schedulers on a DAG of 10,000 ready jobs.

A synthetic cohort: the Full suite, M models x A attempts, every Solver task submitted (links to the
demo-strong candidates), no verdicts (missing rows: `allow_missing: true`). Prints the DAG's job counts and the seconds
`snakemake -n` took (`--models 125 --attempts 3` makes about 10,000 jobs). Not a test of speed:
nothing is asserted here.

`--scheduler-jobs N` (e.g. 10000) measures instead what a dry run never does (`snakemake -n` skips
job selection): a Snakefile of N independent one-core jobs with the Solver rule's resources
(runtime, mem_mb, cpus_per_task) and priorities, all ready at once as a campaign's Solver jobs
are, each job only a `touch`, and one aggregation job over all. For each scheduler (`--scheduler
ilp`, Snakemake's default, and `greedy`; rounds alternating) it runs `snakemake --cores 2` until
`--first` jobs have finished, then stops it, and prints the seconds to the first job's end (DAG
and the first selection) and the jobs per second after it (each job's end starts a new selection
over every ready job).

    .venv/bin/python benchmarks/workflow_dag.py [--models 10] [--attempts 3] [--workdir DIR]
    .venv/bin/python benchmarks/workflow_dag.py --scheduler-jobs 10000 [--first 40] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
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
    ap.add_argument("--scheduler-jobs", type=int, default=0, metavar="N", help="time the schedulers on N ready jobs")
    ap.add_argument("--first", type=int, default=40, help="with --scheduler-jobs: stop after this many jobs")
    ap.add_argument("--rounds", type=int, default=2, help="with --scheduler-jobs: alternating rounds")
    ap.add_argument("--schedulers", nargs="+", default=["ilp", "greedy"])
    args = ap.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="wf-dag-"))
    if args.scheduler_jobs:
        return schedulers(workdir, args.scheduler_jobs, args.first, args.rounds, args.schedulers)
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


SYNTHETIC = """
N = int(config["njobs"])
localrules: all, agg
rule all:
    input: "done.txt"
rule agg:
    input: expand("out/{i}.txt", i=range(N))
    output: "done.txt"
    shell: "touch {output}"
rule job:
    output: "out/{i}.txt"
    threads: 1
    resources: runtime=30, mem_mb=2048, cpus_per_task=1
    priority: lambda w: int(w.i) % 13
    shell: "touch {output}"
"""


def schedulers(workdir: Path, n: int, first: int, rounds: int, names: list[str]) -> int:
    """Seconds to the first job's end and jobs/s after it, per scheduler (see the module doc)."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "Snakefile").write_text(SYNTHETIC)
    snakemake = Path(sys.executable).parent / "snakemake"
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            out = workdir / "out"
            if out.exists():
                for f in out.iterdir():
                    f.unlink()
            load = os.getloadavg()[0]
            cmd = [str(snakemake), "all", "--cores", "2", "--scheduler", name, "--config", f"njobs={n}"]
            start = time.time()
            proc = subprocess.Popen(
                cmd, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
            )
            ends: list[float] = []
            deadline = start + 900
            while time.time() < deadline and proc.poll() is None:
                ends = sorted(p.stat().st_mtime for p in out.iterdir()) if out.is_dir() else []
                if len(ends) >= first:
                    break
                time.sleep(0.2)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:  # Snakemake may sit in a selection round for long
                    os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            ends = sorted(p.stat().st_mtime for p in out.iterdir())[:first] if out.is_dir() else []
            subprocess.run([str(snakemake), "--unlock", "--config", f"njobs={n}"], cwd=workdir, capture_output=True)
            if len(ends) < 2:
                print(f"{name}: fewer than 2 jobs ended in 900 s")
                continue
            rate = (len(ends) - 1) / (ends[-1] - ends[0]) if ends[-1] > ends[0] else float("nan")
            results[name].append((ends[0] - start, rate))
            print(
                f"round {r + 1} scheduler {name}: first job ended after {ends[0] - start:.1f} s, then "
                f"{rate:.2f} jobs/s over {len(ends)} jobs; load {load:.2f} -> {os.getloadavg()[0]:.2f}"
            )
    for name, values in results.items():
        if values:
            print(
                f"{name}: {n} ready jobs, medians: first job after {statistics.median(v[0] for v in values):.1f} s, "
                f"{statistics.median(v[1] for v in values):.2f} jobs/s"
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
