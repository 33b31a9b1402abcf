"""Resume for real: SIGKILL a `tcsexam run` (real subprocess, real local Ray) halfway, rerun.

Only the unfinished instances execute on the rerun (the candidate logs every execution), the final
records equal an uninterrupted run's, and no process of the killed run (its Ray included) stays.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
TCSEXAM = [sys.executable, "-m", "tcsexam"]

SOLVE = """\
import sys, time
inst, sol, log, sleep = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
with open(log, "a") as fh:
    fh.write(inst.rsplit("/", 1)[-1].removesuffix(".txt") + "\\n")
time.sleep(sleep)
n = int(open(inst).readline().split()[0])
with open(sol, "w") as fh:
    fh.write(" ".join(str(v % 2) for v in range(n)) + "\\n")
"""

NAMES = [f"g{k:02d}" for k in range(10)]


def _setup(root: Path, sleep: float) -> tuple[Path, Path]:
    inst_dir = root / "inst"
    inst_dir.mkdir()
    rows = []
    for k, name in enumerate(NAMES):
        n = 5 + k
        edges = [(i, i + 1) for i in range(1, n)] + [(1, n)]
        (inst_dir / f"{name}.txt").write_text(f"{n} {len(edges)}\n" + "".join(f"{u} {v} 1\n" for u, v in edges))
        rows.append(f"- {{name: {name}, file: {name}.txt, best_known: {n}}}")
    task = root / "task.yaml"
    task.write_text(
        "id: resume-maxcut\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        f"limits: {{wall_s: 10, mem_mb: 1024}}\ninstance_dir: {inst_dir}\ninstances:\n" + "\n".join(rows) + "\n"
    )
    cand = root / "cand"
    cand.mkdir()
    (cand / "solve.py").write_text(SOLVE)
    cmd = [sys.executable, "solve.py", "{instance}", "{solution}", str(root / "exec.log"), str(sleep)]
    (cand / "solver.yaml").write_text(f"command: {json.dumps(cmd)}\nthreads: 1\n")
    return task, cand


@pytest.fixture(autouse=True)
def trusted_candidates(monkeypatch):
    """The test candidate logs each execution to a file outside its work folder and runs the
    harness's interpreter by its path: trusted, run as the harness's own user even as root."""
    monkeypatch.setenv("TCSEXAM_CANDIDATE_UID", "harness")


def _argv(task, cand, out: Path, *extra) -> list[str]:
    return [
        *TCSEXAM,
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
        "--sandbox",
        "local",  # the test candidate logs each execution to a file outside its work folder
        *extra,
    ]


def _marked(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("TCSEXAM_TEST_MARK") == marker:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return found


def _candidates(root: Path) -> list[psutil.Process]:
    needle = str(root / "exec.log")
    found = []
    for proc in psutil.process_iter():
        try:
            if needle in proc.cmdline():
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return found


def _executed(root: Path) -> list[str]:
    log = root / "exec.log"
    lines = log.read_text().split() if log.exists() else []
    if log.exists():
        log.unlink()
    return lines


@pytest.mark.slow
def test_killed_run_resumes_with_only_the_unfinished_instances(tmp_path):
    task, cand = _setup(tmp_path, sleep=0.6)
    out = tmp_path / "run" / "records.json"
    records_dir = out.parent / "records"
    marker = uuid.uuid4().hex
    env = dict(os.environ, TCSEXAM_TEST_MARK=marker)
    proc = subprocess.Popen(
        _argv(task, cand, out, "--workers", "2", "--pool", "ray"),
        env=env,
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"run ended before it was killed: {proc.stderr.read().decode()[-2000:]}")
        if len(list(records_dir.glob("*.json"))) >= 4:
            break
        time.sleep(0.05)
    else:
        pytest.fail("no records appeared")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    # nothing of the killed run survives: driver, Ray's processes and actors (they inherit the
    # marker) and the candidates (minimal environment: found by their command line)
    t_kill = time.monotonic()
    deadline = t_kill + 30
    while (_marked(marker) or _candidates(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [(p.pid, " ".join(p.cmdline())[:80]) for p in _marked(marker) + _candidates(tmp_path)]
    for p in _marked(marker) + _candidates(tmp_path):
        p.kill()
    assert left == []
    print(f"killed run gone after {time.monotonic() - t_kill:.1f} s")

    done_before = sorted(p.stem for p in records_dir.glob("*.json"))
    assert 4 <= len(done_before) < len(NAMES), done_before
    assert not out.exists()  # records.json only comes at the end
    for path in records_dir.glob("*.json"):  # every record left behind is whole
        assert json.loads(path.read_text())["status"] == "ok"
    first = _executed(tmp_path)
    assert set(done_before) <= set(first)

    res = subprocess.run(
        _argv(task, cand, out, "--workers", "2", "--pool", "ray"), cwd=ROOT, capture_output=True, text=True, timeout=180
    )
    assert res.returncode == 0, res.stderr[-2000:]
    second = _executed(tmp_path)
    assert sorted(second) == sorted(set(NAMES) - set(done_before)), (first, done_before, second, res.stderr[-3000:])
    assert f"({len(done_before)} reused, {len(NAMES) - len(done_before)} run)" in res.stderr

    # an uninterrupted run (in-process) gives the same records
    ref_out = tmp_path / "ref" / "records.json"
    res = subprocess.run(_argv(task, cand, ref_out, "--no-ray"), cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr[-2000:]
    got = json.loads(out.read_text())
    ref = json.loads(ref_out.read_text())
    fields = ("instance", "status", "A", "reward", "key")
    assert [{f: r[f] for f in fields} for r in got] == [{f: r[f] for f in fields} for r in ref]
    assert [r["instance"] for r in got] == NAMES
