"""Three `tcsexam run`s at once on one machine give the records of a run alone (issue 32.3).

A soak small enough for a 2-core machine: a task of six tiny MaxCut instances whose candidate
outcomes cover ok (a deterministic greedy cut: A is a function of the instance), crash, invalid and
timeout. It runs once alone (in-process), then three times at once (`--sandbox auto`; the first with a
local Ray of its own and two actors, the others in-process: Ray starts are what a loaded 2-core
machine cannot do three at a time within Ray's fixed 30 s), all three sharing one temp folder for their scratch folders, so every
job's start-up sweep and clean-up sees the others' live folders; one actor of the first
concurrent run is SIGKILLed while its candidate runs (its driver's clean-up of the lost actor then
runs beside the other jobs; the instance is retried). Every record of every concurrent run must
have the status and A of the run alone, no record may be `infrastructure_error`, and no scratch
folder may be left behind.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]

SOLVE = """\
import os, sys, time
inst, sol = sys.argv[1], sys.argv[2]
name = os.path.basename(inst)
if name.startswith("crash"):
    sys.exit(3)
if name.startswith("sleep"):
    time.sleep(600)
if name.startswith("bad"):
    open(sol, "w").write("not a cut\\n")
    sys.exit(0)
tokens = open(inst).read().split()
n, m = int(tokens[0]), int(tokens[1])
adj = [[] for _ in range(n)]
for k in range(m):
    u, v, w = int(tokens[2 + 3 * k]) - 1, int(tokens[3 + 3 * k]) - 1, int(tokens[4 + 3 * k])
    adj[u].append((v, w))
    adj[v].append((u, w))
side = [0] * n
for v in range(n):  # greedy: the side that cuts more of the weight to the vertices placed so far
    gain = sum(w if side[u] == 0 else -w for u, w in adj[v] if u < v)
    side[v] = 1 if gain > 0 else 0
open(sol, "w").write(" ".join(map(str, side)) + "\\n")
"""

NAMES = ["g1", "g2", "g3", "crash", "bad", "sleep"]


def _setup(root: Path) -> tuple[Path, Path]:
    inst_dir = root / "inst"
    inst_dir.mkdir()
    rng = random.Random(32)
    rows = []
    for name in NAMES:
        n = rng.randint(20, 40)
        edges = sorted({tuple(sorted(rng.sample(range(1, n + 1), 2))) for _ in range(3 * n)})
        body = "".join(f"{u} {v} {rng.choice([1, -1])}\n" for u, v in edges)
        (inst_dir / f"{name}.txt").write_text(f"{n} {len(edges)}\n{body}")
        rows.append(f"- {{name: {name}, file: {name}.txt}}")
    task = root / "task.yaml"
    task.write_text(
        "id: soak-maxcut\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        f"limits: {{wall_s: 10, mem_mb: 512}}\ninstance_dir: {inst_dir}\ninstances:\n" + "\n".join(rows) + "\n"
    )
    cand = root / "cand"
    cand.mkdir()
    (cand / "solve.py").write_text(SOLVE)
    (cand / "solver.yaml").write_text('command: ["python3", "solve.py", "{instance}", "{solution}"]\nthreads: 1\n')
    for path in (root, inst_dir, cand):
        path.chmod(0o755)  # a root harness runs the candidate as an unprivileged uid
    return task, cand


def _start(task: Path, cand: Path, out: Path, tmpdir: Path, *pool: str) -> subprocess.Popen:
    argv = [
        sys.executable,
        "-m",
        "tcsexam",
        "run",
        "--task",
        str(task),
        "--candidate",
        str(cand),
        "--attempt",
        "1",
        "--output",
        str(out),
        "--no-progress",
        "--allow-unsandboxed",
        *pool,
    ]
    env = dict(os.environ, TMPDIR=str(tmpdir), PYTHONPATH=str(ROOT / "src"))
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _results(out: Path) -> dict[str, tuple[str, float | None]]:
    return {r["instance"]: (r["status"], r["A"]) for r in json.loads(out.read_text())}


def _kill_a_busy_actor(job: subprocess.Popen, timeout_s: float = 300.0) -> bool:
    """SIGKILL one of `job`'s Ray actors while it runs a candidate (an actor with a child)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and job.poll() is None:
        try:
            for proc in psutil.Process(job.pid).children(recursive=True):
                if "InstanceActor" in " ".join(proc.cmdline()) and proc.children():
                    proc.kill()
                    return True
        except psutil.Error:
            pass
        time.sleep(0.02)
    return False


@pytest.mark.slow
def test_three_concurrent_runs_equal_a_run_alone(tmp_path):
    task, cand = _setup(tmp_path)
    tmpdir = Path(tempfile.mkdtemp(prefix="tcsexam-soak-", dir="/tmp"))
    tmpdir.chmod(0o755)
    try:
        alone = tmp_path / "alone" / "records.json"
        job = _start(task, cand, alone, tmpdir, "--no-ray")
        _, err = job.communicate(timeout=300)
        assert job.returncode == 0, err[-3000:]
        expected = _results(alone)
        assert expected["crash"][0] == "crash" and expected["sleep"][0] == "timeout", expected
        assert all(expected[g][0] == "ok" and expected[g][1] > 0 for g in ("g1", "g2", "g3")), expected

        outs = [tmp_path / f"run{k}" / "records.json" for k in range(3)]
        pools = [["--workers", "2", "--pool", "ray"], ["--no-ray"], ["--no-ray"]]  # one with a Ray of its own
        jobs = [_start(task, cand, out, tmpdir, *pool) for out, pool in zip(outs, pools)]
        killed = _kill_a_busy_actor(jobs[0])
        errors = [j.communicate(timeout=300)[1] for j in jobs]
        for j, err in zip(jobs, errors):
            assert j.returncode == 0, err[-3000:]
        for out in outs:
            got = _results(out)
            assert got == expected, (out, got, expected)
        assert killed, "no actor of the first run was ever seen running a candidate"
        tries = [
            json.loads(p.read_text()).get("extra", {}).get("tries", 1) for p in outs[0].parent.glob("records/*.json")
        ]
        assert max(tries) >= 2, tries  # the killed actor's instance was retried
        left = [p.name for p in tmpdir.iterdir() if p.name.startswith(("tcsexam-run-", ".tcsexam-new-"))]
        assert left == [], left
    finally:
        subprocess.run(["rm", "-rf", str(tmpdir)], check=False)
