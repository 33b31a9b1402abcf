"""The per-run cost of containment: `run_instance` of a trivial candidate under each named sandbox
with the pool's own layout (scratch = a mkdtemp folder in /tmp, candidate folder 0755), 60 runs
each; prints the median. Compare two versions in one session by running each alternately, the
other one on PYTHONPATH (e.g. `git archive main | tar -x -C /tmp/main-src`):

    .venv/bin/python benchmarks/containment.py local bwrap
    PYTHONPATH=/tmp/main-src/src .venv/bin/python benchmarks/containment.py local bwrap
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import tcsexam
from tcsexam.runner.limiter import Limits
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.solver.execute import run_instance
from tcsexam.tasks import load_task

RUNS = 60


def main(names: list[str]) -> None:
    root = Path(tempfile.mkdtemp(dir="/tmp"))
    root.chmod(0o755)
    try:
        (root / "g.txt").write_text("2 1\n1 2 1\n")
        (root / "t.yaml").write_text(
            "id: t\nproblem: maxcut\nkind: objective\ndirection: maximize\nlimits: {wall_s: 5}\n"
            f"instance_dir: {root}\ninstances: [{{name: g, file: g.txt}}]\n"
        )
        cand = root / "c"
        cand.mkdir()
        (cand / "solver.yaml").write_text('command: [sh, -c, "echo 0 1 > $0", "{solution}"]\n')
        task, candidate = load_task(root / "t.yaml"), load_candidate(cand)
        for name in names:
            box, times = get_sandbox(name), []
            for _ in range(RUNS):
                scratch = tempfile.mkdtemp(prefix="tcsexam-", dir="/tmp")
                t0 = time.perf_counter()
                record = run_instance(
                    task,
                    task.instances[0],
                    candidate,
                    sandbox=box,
                    limits=Limits(wall_s=5),
                    seed=0,
                    scratch_dir=scratch,
                )
                times.append(time.perf_counter() - t0)
                assert record.status == "ok", record.message
                shutil.rmtree(scratch)
            where = os.path.dirname(tcsexam.__file__)
            print(f"{where} {name}: median {statistics.median(times) * 1000:.1f} ms over {RUNS} runs")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["local", "bwrap"])
