"""Fixtures shared by the workflow tests: one finished run of the tiny config for the whole test
run, made by whichever xdist worker asks first (the others wait for it and read the same one)."""

from __future__ import annotations

import fcntl
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _tiny_run(ws: Path) -> Path:
    from test_workflow import CONFIG, make_workspace, snakemake, stop_ray_head

    make_workspace(ws)
    try:
        snakemake(ws, "--cores", "2", "--configfile", CONFIG)
    finally:
        stop_ray_head(ws)
    return ws


@pytest.fixture(scope="session")
def finished_tiny_run(tmp_path_factory, worker_id) -> Path:
    """A workspace in which config/test/config.yaml ran to completion, made once per test run (a
    workflow run of a few minutes on 2 cores: every worker making its own would cost that much
    per worker). Never change it: take a copy (test_workflow.copy_of_finished_run)."""
    if worker_id == "master":  # no xdist
        return _tiny_run(tmp_path_factory.mktemp("tiny-finished") / "ws")
    shared = tmp_path_factory.getbasetemp().parent / "tiny-finished"  # common to the run's workers
    shared.mkdir(exist_ok=True)
    done = shared / "done"
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker makes it, the others wait here
        if not done.exists():  # a worker whose attempt failed left no `done`: this one tries
            ws = shared / f"ws-{worker_id}"
            _tiny_run(ws)
            done.write_text(ws.name)
        return shared / done.read_text()
