"""`tcsexam run --pool auto` (the default): a batch whose worst case in this process costs no
more than Ray's start runs in this process, from its size and limits alone; the choice is logged
and kept in heartbeat.json, and the records are those Ray's actors write (timings aside)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tcsexam.errors import UsageError
from tcsexam.runner.engine.batch import (
    IN_PROCESS_EXTRA_S,
    RAY_JOIN_COST_S,
    RAY_START_COST_S,
    PoolKind,
    PoolOptions,
    in_process_wins,
)

from .test_run_cli import run_args, write_candidate, write_task


def test_one_worker_or_one_run_stays_in_process_while_its_set_up_costs_less_than_ray():
    assert in_process_wins(1, 16, 600.0, joining=True)[0]  # one run: Ray cannot run it sooner
    joined = int(RAY_JOIN_COST_S / IN_PROCESS_EXTRA_S)
    assert in_process_wins(joined, 1, 60.0, joining=True)[0]
    assert not in_process_wins(joined + 1, 1, 60.0, joining=True)[0]
    started = int(RAY_START_COST_S / IN_PROCESS_EXTRA_S)
    assert in_process_wins(started, 1, 60.0, joining=False)[0]
    assert not in_process_wins(started + 1, 1, 60.0, joining=False)[0]


def test_parallel_workers_go_to_ray_unless_every_run_is_short_by_its_limit():
    wins, why = in_process_wins(2, 2, 60.0, joining=False)
    assert not wins and "2 run(s) on 2 worker(s)" in why
    assert in_process_wins(2, 2, 1.0, joining=False)[0]  # at most 1 s lost in the worst case
    assert not in_process_wins(3, 4, None, joining=True)[0]  # no wall limit: no bound


def test_in_process_excludes_more_workers_and_a_ray_address():
    with pytest.raises(UsageError):
        PoolOptions(workers=2, kind=PoolKind.IN_PROCESS).check()
    with pytest.raises(UsageError):
        PoolOptions(ray_address="127.0.0.1:1", kind=PoolKind.IN_PROCESS).check()
    PoolOptions(workers=2, kind=PoolKind.RAY).check()


TIMING = ("wall_s", "cpu_s", "peak_mem_mb", "digest")


def _comparable(record: dict) -> dict:
    out = {k: v for k, v in record.items() if k not in TIMING}
    extra = dict(out.get("extra") or {})
    extra.pop("trace_info", None)
    out["extra"] = extra
    return out


@pytest.mark.slow
def test_auto_runs_a_small_task_in_process_with_the_records_ray_writes(tmp_path):
    task = write_task(tmp_path, wall_s=5)
    cand = write_candidate(tmp_path)
    runs = {}
    for name, pool in (("auto", []), ("ray", ["--pool", "ray"])):
        out = tmp_path / name
        argv = [sys.executable, "-m", "tcsexam", *run_args(task, cand), "--output", str(out / "records.json")]
        argv += ["--workers", "1", "--sandbox", "local", "--no-progress", *pool]
        env = dict(os.environ, TCSEXAM_RAY_HEAD="none", TCSEXAM_CANDIDATE_UID="harness")  # it logs to tmp_path
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
        assert proc.returncode == 0, proc.stderr
        runs[name] = (proc.stderr, json.loads((out / "heartbeat.json").read_text()), out)
    auto_err, auto_beat, auto_out = runs["auto"]
    ray_err, ray_beat, ray_out = runs["ray"]
    assert "in this process, one run at a time, no Ray (3 run(s) on 1 worker(s)" in auto_err
    assert "on local Ray" not in auto_err and "on local Ray" in ray_err
    assert auto_beat["pool"] == PoolKind.IN_PROCESS and ray_beat["pool"] == PoolKind.RAY
    auto_records = json.loads((auto_out / "records.json").read_text())
    ray_records = json.loads((ray_out / "records.json").read_text())
    assert [r["status"] for r in auto_records] == ["ok"] * 3
    assert [_comparable(r) for r in auto_records] == [_comparable(r) for r in ray_records]
