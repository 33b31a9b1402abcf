"""What Snakemake's submission rate limiter costs a local run, and what dropping it saves
(`tcsexam.workflow.startup.local_scheduling`, called by the workflow's `onstart`).

Snakemake (`--max-jobs-per-timespan`, 100/1s by default) starts a timer after every scheduling
pass that triggers another pass: every pass begets the next, one chain more for each job that ends,
and each pass stat()s the inputs of every waiting job. This builds a workflow of N short jobs,
then one long job (`sleep 8`) on the only core while 50 jobs wait, and runs it twice, each in a fresh
folder: Snakemake as it is, and with the limiter dropped in `onstart`. It prints the scheduling
passes, Snakemake's own CPU over 5 s of the long job, its threads, and the wall time, and the
ratios dropped / as is.

    .venv/bin/python benchmarks/snakemake_rate_limiter.py [--jobs 150]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SNAKEFILE = """
import sys, time
N = int(config["count"])
PASSES = []
rule all:
    input: "final", "waiting_done"
rule small:
    output: "small/{i}"
    shell: "sleep 0.02; touch {output}"
rule final:
    input: expand("small/{i}", i=range(N))
    output: "final"
    shell: "sleep 8; touch {output}"
rule waiting:
    input: expand("small/{i}", i=range(N))
    output: "waiting/{j}"
    priority: -1
    shell: "touch {output}"
rule waiting_all:
    input: expand("waiting/{j}", j=range(50))
    output: "waiting_done"
    shell: "touch {output}"
onstart:
    if config.get("drop"):
        workflow.scheduler.job_rate_limiter = None
    chosen = workflow.scheduler.job_selector
    def counted(jobs):
        PASSES.append(time.monotonic())
        return chosen(jobs)
    workflow.scheduler.job_selector = counted
onsuccess:
    print(f"PASSES {len(PASSES)}", file=sys.stderr)
"""


def own_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(folder: Path, jobs: int, drop: bool) -> dict:
    folder.mkdir()
    (folder / "Snakefile").write_text(SNAKEFILE)
    snakemake = str(Path(sys.executable).parent / "snakemake")
    cmd = [snakemake, "-c", "1", "--config", f"count={jobs}", *(["drop=1"] if drop else [])]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while not (folder / "small").is_dir() or len(os.listdir(folder / "small")) < jobs:
        time.sleep(0.05)
    time.sleep(1.5)  # into the long job
    before = own_cpu(proc.pid)
    time.sleep(5)
    cpu = own_cpu(proc.pid) - before
    threads = len(os.listdir(f"/proc/{proc.pid}/task"))
    _, err = proc.communicate()
    passes = next((int(line.split()[1]) for line in err.splitlines() if line.startswith("PASSES")), -1)
    return {"passes": passes, "cpu": cpu, "threads": threads, "wall": time.monotonic() - start, "rc": proc.returncode}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=150, help="short jobs before the long one")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="smk-rate-"))
    try:
        result = {drop: run(folder / ("dropped" if drop else "as-is"), args.jobs, drop) for drop in (False, True)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for drop, r in result.items():
        print(
            f"{'limiter dropped' if drop else 'as is':16s} passes {r['passes']:6d}  Snakemake CPU over 5 s of the "
            f"long job {r['cpu']:5.2f} s  threads {r['threads']:3d}  wall {r['wall']:5.1f} s  exit {r['rc']}"
        )
    a, b = result[False], result[True]
    print(f"dropped / as is: passes {b['passes'] / a['passes']:.2f}, wall {b['wall'] / a['wall']:.2f}")
    return 0 if a["rc"] == 0 == b["rc"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
