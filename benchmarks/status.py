"""`tcsexam status` on a Full-sized results tree: 10 models x 3 attempts x the 13 Full Solver tasks
(390 attempts, about 60,000 instance records), built synthetically on the real task files.

    .venv/bin/python benchmarks/status.py [--models 10] [--attempts 3] [--repeat 5] [--keep DIR]

The tree is what a run in progress leaves: the workflow's plan (.status/plan.json), per attempt
its records/ folder (one file per instance), records.json and heartbeat.json; most attempts are
finished, six are running (fresh heartbeat, half their records), three lost (a stale heartbeat: a
killed job), six not started yet. Printed, each the best of --repeat runs in this process:

1. `tcsexam.status.collect` on the tree (what `tcsexam status` computes), against a baseline in
   the same process: opening and parsing every per-instance record file (the naive way to count
   statuses);
2. the same tree with no heartbeat files (a run of an older version: every records.json parsed);
3. the command itself, `tcsexam status DIR --json`, as a subprocess (Python start and imports
   included).
Not a test: nothing is asserted. The target is under 1 s for (1) and (3).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tcsexam.paths import project_root
from tcsexam.status import collect
from tcsexam.suites import load_suite
from tcsexam.tasks import load_task

STATUSES = ["ok"] * 16 + ["timeout", "timeout", "crash", "certificate_failed"]


def record(task: str, attempt: str, name: str, i: int, infra: bool) -> dict:
    return {
        "instance": name,
        "status": "infrastructure_error" if infra and i == 0 else STATUSES[i % len(STATUSES)],
        "A": 11.0 + i,
        "solved": None,
        "claimed": 11.0 + i,
        "reward": 1.0,
        "message": "synthetic",
        "wall_s": 1.75,
        "cpu_s": 0.57,
        "peak_mem_mb": 4.3,
        "exit_code": 0,
        "signal": None,
        "termination": "exit",
        "sandbox": "bwrap",
        "limiter": "cgroup-v1",
        "key": "sha256:" + "5f" * 32,
        "candidate_hash": "99" * 32,
        "task": task,
        "attempt": attempt,
        "harness_version": "0.1.0",
        "schema_version": 1,
        "digest": "sha256:" + "24" * 32,
    }


def heartbeat(task: str, attempt: str, records: list[dict], planned: int, state: str, age_s: float) -> dict:
    now = time.time() - age_s
    statuses: dict[str, int] = {}
    for r in records:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return {
        "format": 1,
        "task": task,
        "attempt": attempt,
        "state": state,
        "host": "node-17",
        "pid": 4242,
        "slurm_job_id": "123456",
        "started": now - 600,
        "updated": now,
        "interval_s": 5.0,
        "planned": planned,
        "reused": 0,
        "executed": len(records),
        "done": len(records),
        "statuses": dict(sorted(statuses.items())),
        "sandbox": "bwrap",
        "limiter": "auto",
    }


def build_tree(root: Path, models: int, attempts: int) -> int:
    """The synthetic tree under root (= <results>/full/offline); returns the records written."""
    suite = load_suite("full")
    tasks = {t: [i.name for i in load_task(t).instances] for t in suite.tracks["solver"]}
    runs, beats, written, k = [], [], 0, 0
    for m in range(models):
        for task, names in tasks.items():
            for a in range(1, attempts + 1):
                model, attempt = f"model-{m:02d}", str(a)
                runs.append({"model": model, "task": task, "attempt": attempt, "instances": len(names)})
                k += 1
                if k % 65 == 0:
                    continue  # not started yet
                state, age, n = "finished", 30.0, len(names)
                if k % 65 in (1, 2):
                    state, age, n = "running", 2.0, len(names) // 2
                elif k % 130 == 3:
                    state, age, n = "running", 3600.0, len(names) // 3  # lost: killed an hour ago
                d = root / "solver" / model / task / attempt
                (d / "records").mkdir(parents=True)
                recs = [record(task, attempt, name, i, k % 40 == 7) for i, name in enumerate(names[:n])]
                for r in recs:
                    (d / "records" / f"{r['instance']}.json").write_text(json.dumps(r, indent=2))
                written += len(recs)
                if state == "finished":
                    (d / "records.json").write_text(json.dumps(recs))
                beats.append((d / "heartbeat.json", (task, attempt, recs, len(names), state, age)))
    for path, beat in beats:  # last, so that the running ones are fresh when timed
        path.write_text(json.dumps(heartbeat(*beat)))
    (root / ".status").mkdir(parents=True, exist_ok=True)
    (root / ".status" / "plan.json").write_text(json.dumps({"format": 1, "runs": runs}))
    return written


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def parse_every_record(results: Path) -> int:
    n = 0
    for dirpath, _, files in os.walk(results):
        if os.path.basename(dirpath) == "records":
            for f in files:
                with open(os.path.join(dirpath, f), "rb") as fh:
                    json.loads(fh.read())
                n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--attempts", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", default=None, metavar="DIR", help="build the tree here and keep it")
    args = ap.parse_args()
    os.chdir(project_root())
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="tcsexam-status-bench-"))
    results = base / "results"
    try:
        t0 = time.perf_counter()
        n = build_tree(results / "full" / "offline", args.models, args.attempts)
        print(f"tree: {n:,} instance records in {results} (built in {time.perf_counter() - t0:.1f} s)")
        t_status, status = best(lambda: collect(results), args.repeat)
        total = status["trees"][0]["total"]
        print(
            f"1. status (heartbeats): {t_status:.3f} s for {total['attempts']} attempts, "
            f"{total['done']:,} of {total['planned']:,} records, jobs {total['jobs']}"
        )
        t_base, parsed = best(lambda: parse_every_record(results), min(args.repeat, 2))
        print(
            f"   baseline, parsing every record file: {t_base:.3f} s for {parsed:,} files; "
            f"ratio status/baseline {t_status / t_base:.3f}"
        )
        for hb in results.glob("full/offline/solver/*/*/*/heartbeat.json"):
            hb.rename(hb.with_name(".heartbeat.json.old"))
        t_legacy, legacy = best(lambda: collect(results), args.repeat)
        print(
            f"2. status without heartbeats (records.json parsed): {t_legacy:.3f} s, "
            f"{legacy['trees'][0]['total']['done']:,} records; ratio to (1) {t_legacy / t_status:.1f}"
        )
        for hb in results.glob("full/offline/solver/*/*/*/.heartbeat.json.old"):
            hb.rename(hb.with_name("heartbeat.json"))
        cli = Path(sys.executable).with_name("tcsexam")
        t_cli, _ = best(
            lambda: subprocess.run([str(cli), "status", str(results), "--json"], check=True, capture_output=True),
            min(args.repeat, 3),
        )
        print(f"3. `tcsexam status {results} --json` (subprocess): {t_cli:.3f} s")
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
