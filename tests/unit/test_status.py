"""`tcsexam status`: real `tcsexam run` jobs in a results tree, inspected while they run, after
they finish and after a kill; read-only, tolerant of half-written files, and the job's heartbeat
and log lines (time stamp, level, what it will do, progress, the status summary)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tcsexam.cli import main
from tcsexam.runner.observers.heartbeat import Heartbeat
from tcsexam.status import collect, render

SOLVE = """\
import sys, time
inst, sol, sleep = sys.argv[1], sys.argv[2], float(sys.argv[3])
n = int(open(inst).readline().split()[0])
time.sleep(sleep)
with open(sol, "w") as fh:
    fh.write(" ".join(str(v % 2) for v in range(n)) + "\\n")
"""
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (INFO|WARNING|ERROR|DEBUG) +\S")


def write_task(root: Path, n: int) -> Path:
    inst_dir = root / "inst"
    inst_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for k in range(n):
        (inst_dir / f"i{k}.txt").write_text("4 3\n1 2 1\n2 3 1\n3 4 1\n")
        rows.append(f"- {{name: i{k}, file: i{k}.txt, best_known: 3}}")
    task = root / "task.yaml"
    task.write_text(
        "id: tiny-maxcut\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        f"limits: {{wall_s: 30, mem_mb: 512}}\ninstance_dir: {inst_dir}\ninstances:\n" + "\n".join(rows) + "\n"
    )
    return task


def write_candidate(root: Path, sleep: float) -> Path:
    cand = root / f"cand-{sleep:g}"
    cand.mkdir(parents=True, exist_ok=True)
    (cand / "solve.py").write_text(SOLVE)
    cmd = [sys.executable, "solve.py", "{instance}", "{solution}", str(sleep)]
    (cand / "solver.yaml").write_text(f"command: {json.dumps(cmd)}\nthreads: 1\n")
    return cand


def _run_cmd(tree, task, cand, model, attempt, *extra) -> list[str]:
    out = tree / "solver" / model / "tiny-maxcut" / attempt / "records.json"
    return [
        "run",
        "--task",
        str(task),
        "--candidate",
        str(cand),
        "--attempt",
        attempt,
        "--output",
        str(out),
        "--no-ray",
        "--workers",
        "1",
        "--no-progress",
        *extra,
    ]


def _snapshot(root: Path) -> dict[str, str]:
    """Every file's path -> sha256 and mtime: what `status` must leave exactly as it was."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest() + f"@{p.stat().st_mtime_ns}"
    return out


def _attempt(status: dict, model: str, attempt: str) -> dict:
    for tree in status["trees"]:
        for a in tree["attempts"]:
            if a["model"] == model and a["attempt"] == attempt:
                return a
    raise AssertionError(f"no attempt {model}/{attempt} in {status}")


def _wait(cond, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.2)
    return cond()


@pytest.mark.slow
def test_status_of_finished_running_killed_and_planned_attempts(tmp_path, capsys):
    tree = tmp_path / "results" / "lite" / "offline"
    task = write_task(tmp_path, 8)
    fast, slow = write_candidate(tmp_path, 0.0), write_candidate(tmp_path, 1.0)
    (tree / ".status").mkdir(parents=True)
    plan = [
        {"model": m, "task": "tiny-maxcut", "attempt": a, "instances": 8}
        for m in ("fast", "slow", "later")
        for a in "12"
    ]
    (tree / ".status" / "plan.json").write_text(json.dumps({"format": 1, "runs": plan}))

    # a finished job: its log lines carry time and level, say what it will do, and end with the summary
    assert main(_run_cmd(tree, task, fast, "fast", "1", "--progress-every", "0.1")) == 0
    err = capsys.readouterr().err.splitlines()
    assert err and all(LOG_LINE.match(line) for line in err), err
    assert any("8 of 8 instances; limits wall_s 30" in line and "sandbox " in line and "uid " in line for line in err)
    assert "8 instances (0 reused, 8 run) ok=8" in err[-1]

    # a running job, then killed (SIGKILL: nothing closes its heartbeat) and one SIGTERMed
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    jobs = {
        a: subprocess.Popen(
            [sys.executable, "-m", "tcsexam", *_run_cmd(tree, task, slow, "slow", a)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for a in "12"
    }
    try:
        records = [tree / "solver" / "slow" / "tiny-maxcut" / a / "records" for a in "12"]
        assert _wait(lambda: all(any(r.glob("*.json")) for r in records), 120)  # a record each, 7 to go
        running = collect(tmp_path / "results")
        for a in "12":
            assert _attempt(running, "slow", a)["state"] == "running"
        assert running["trees"][0]["total"]["jobs"]["running"] == 2
        before = _snapshot(tmp_path / "results")
        text = render(running, every_attempt=True)
        assert "slow/tiny-maxcut/1" in text and "running" in text
        assert _snapshot(tmp_path / "results") == before  # read-only
        jobs["1"].kill()
        jobs["2"].send_signal(signal.SIGTERM)
        assert jobs["2"].wait(timeout=60) != 0 and jobs["1"].wait(timeout=60) != 0
    finally:
        for p in jobs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
    # a half-written temp file beside a heartbeat is never read
    (tree / "solver" / "slow" / "tiny-maxcut" / "1" / ".heartbeat.json.x.tmp").write_text('{"format": 1, "sta')
    after = collect(tmp_path / "results")
    lost, stopped = _attempt(after, "slow", "1"), _attempt(after, "slow", "2")
    assert lost["state"] == "lost" and stopped["state"] == "interrupted", (lost, stopped)
    on_disk = len(list((tree / "solver" / "slow" / "tiny-maxcut" / "1" / "records").glob("*.json")))
    assert lost["done"] == on_disk >= 1
    finished = _attempt(after, "fast", "1")
    assert finished["state"] == "finished" and finished["done"] == 8 and finished["statuses"] == {"ok": 8}
    waiting = _attempt(after, "later", "2")
    assert waiting["state"] == "waiting" and waiting["planned"] == 8 and waiting["done"] == 0
    total = after["trees"][0]["total"]
    assert total["planned"] == 48 and total["jobs"]["waiting"] == 3  # fast/2, later/1, later/2

    # the command: text and JSON, no traceback
    assert main(["status", str(tmp_path / "results")]) == 0
    out = capsys.readouterr().out
    assert "lite/offline" in out and "slow/tiny-maxcut/1" in out and "lost" in out
    assert main(["status", str(tree), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["trees"][0]["total"]["planned"] == 48


def test_a_damaged_heartbeat_falls_back_to_what_is_on_disk(tmp_path):
    attempt = tmp_path / "lite" / "offline" / "solver" / "m" / "t" / "1"
    (attempt / "records").mkdir(parents=True)
    for k in range(3):
        (attempt / "records" / f"i{k}.json").write_text("{}")
    (attempt / "records" / ".i3.json.abc.tmp").write_text("{")
    (attempt / "heartbeat.json").write_text('{"format": 1, "state": "runn')  # torn (no atomic rename)
    a = _attempt(collect(tmp_path), "m", "1")
    assert a["state"] == "started" and a["done"] == 3 and a["source"] == "records/"
    (attempt / "records.json").write_text(json.dumps([{"status": "ok"}, {"status": "infrastructure_error"}]))
    a = _attempt(collect(tmp_path), "m", "1")
    assert a["state"] == "finished" and a["infrastructure_errors"] == 1


def test_a_heartbeat_knows_running_from_finished(tmp_path):
    from collections import Counter

    path = tmp_path / "lite" / "offline" / "solver" / "m" / "t" / "1" / "heartbeat.json"
    path.parent.mkdir(parents=True)
    lines = []
    beat = Heartbeat(path, interval_s=0.05, progress_every_s=0.05, log=lines.append)
    beat.begin(task="t", attempt="1", planned=3, reused=Counter(ok=1), sandbox="bwrap", limiter="auto")
    beat.record("timeout")
    assert _wait(lambda: lines, 10)
    assert "t: progress 2/3" in lines[-1] and "ETA" in lines[-1]
    a = _attempt(collect(tmp_path), "m", "1")
    assert a["state"] == "running" and a["done"] == 2 and a["statuses"] == {"ok": 1, "timeout": 1}
    with pytest.raises(SystemExit), beat.closing():
        raise SystemExit(143)
    assert json.loads(path.read_text())["state"] == "interrupted"
    assert _attempt(collect(tmp_path), "m", "1")["state"] == "interrupted"


def test_status_refuses_a_missing_folder_in_one_line(tmp_path, capsys):
    assert main(["status", str(tmp_path / "nope")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such results folder" in err[0] and "Traceback" not in err[0]


def test_watch_redraws_until_interrupted(tmp_path):
    (tmp_path / "lite" / "offline" / "solver").mkdir(parents=True)
    # SIGINT at its default in the child (Python then turns it into KeyboardInterrupt): a suite
    # started in the background by a non-interactive shell inherits it ignored
    proc = subprocess.Popen(
        [sys.executable, "-m", "tcsexam", "status", str(tmp_path), "--watch", "0.5", "--json"],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        first = proc.stdout.readline()
        second = proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert json.loads(first)["trees"][0]["suite"] == "lite" and json.loads(second)["trees"]


def _heartbeat(attempt: Path, state: str, planned: int, done: int) -> None:
    now = time.time()
    (attempt / "heartbeat.json").write_text(
        json.dumps(
            {
                "format": 1,
                "task": "t",
                "attempt": "1",
                "state": state,
                "planned": planned,
                "done": done,
                "statuses": {"ok": done},
                "executed": done,
                "started": now - 30,
                "updated": now,
                "interval_s": 5,
                "host": "elsewhere",
                "pid": 1,
            }
        )
    )


def test_a_finished_tree_shows_no_throughput_and_no_eta(tmp_path):
    attempt = tmp_path / "lite" / "offline" / "solver" / "m" / "t" / "1"
    (attempt / "records").mkdir(parents=True)
    for k in range(3):
        (attempt / "records" / f"i{k}.json").write_text("{}")
    (attempt / "records.json").write_text(json.dumps([{"status": "ok"}] * 3))
    _heartbeat(attempt, "finished", 3, 3)
    status = collect(tmp_path)
    text = render(status)
    assert "finished: every planned record is done" in text
    assert "throughput" not in text and "ETA" not in text
    assert status["trees"][0]["total"]["throughput_per_s"] is None


def test_a_job_that_failed_at_start_is_failed_with_its_reason(tmp_path):
    solver = tmp_path / "lite" / "offline" / "solver"
    attempt = solver / "m" / "t" / "1"
    attempt.mkdir(parents=True)
    (attempt / "run.log").write_text(
        "2026-12-03T08:00:00Z INFO    tcsexam run: t: 3 of 3 instances\n"
        "2026-12-03T08:00:01Z ERROR   tcsexam run: error: sandbox auto: no sandbox for untrusted candidates works\n"
    )
    (solver / "m" / "t" / "2").mkdir()  # a job not begun yet: waiting, its folder made by Snakemake
    (solver / "m" / "t" / "2" / "run.log").write_text("2026-12-03T08:00:00Z INFO    tcsexam run: t: starting\n")
    status = collect(tmp_path)
    failed, begun = _attempt(status, "m", "1"), _attempt(status, "m", "2")
    assert failed["state"] == "failed" and failed["source"] == "run.log"
    assert failed["note"] == "tcsexam run: error: sandbox auto: no sandbox for untrusted candidates works"
    assert begun["state"] == "waiting"
    text = render(status)
    assert "m/t/1" in text and "failed" in text and "no sandbox for untrusted" in text
    assert "no job running" in text and "1 job(s) stopped" in text and "ETA" not in text


def test_a_finished_job_whose_records_were_removed_counts_what_is_on_disk(tmp_path):
    attempt = tmp_path / "lite" / "offline" / "solver" / "m" / "t" / "1"
    (attempt / "records").mkdir(parents=True)
    for k in range(4):  # 3 of the 7 record files and records.json removed afterwards
        (attempt / "records" / f"i{k}.json").write_text("{}")
    _heartbeat(attempt, "finished", 7, 7)
    status = collect(tmp_path)
    a = _attempt(status, "m", "1")
    assert a["state"] == "damaged" and a["done"] == 4 and a["planned"] == 7
    assert "tcsexam repair --records-dir" in a["note"] and "4 of 7 record files" in a["note"]
    text = render(status)
    assert "4 / 7" in text and "NEEDS REPAIR" in text and "tcsexam repair" in text
    assert "finished: every" not in text and "ETA" not in text
