"""Fixtures shared by the workflow tests: one finished run of the tiny config for the whole test
run. Under xdist it is made in the background from the moment the first worker has collected a
test that needs it, so no worker sits idle for the minutes it takes while another one makes it
(measured at load 4 on 2 cores: one worker waited 168 s); without xdist, or when the background
build failed (its log: tiny-finished/builder.log), the first test that asks makes it."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

FIXTURE = "finished_tiny_run"
BACKGROUND = "ws-background"
#: the background build: the tiny config to completion in argv[1]; `built` says how it ended
_BUILD = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from conftest import _tiny_run
ws = Path(sys.argv[1])
ok = False
try:
    _tiny_run(ws)
    ok = True
finally:
    (ws.parent / "built").write_text("ok" if ok else "failed")
"""
_BUILDER = pytest.StashKey[subprocess.Popen]()


def _tiny_run(ws: Path) -> Path:
    from test_workflow import CONFIG, make_workspace, snakemake, stop_ray_head

    make_workspace(ws)
    try:
        snakemake(ws, "--cores", "2", "--configfile", CONFIG)
    finally:
        stop_ray_head(ws)
    return ws


def _shared(config: pytest.Config) -> Path | None:
    """The folder common to one xdist run's workers, beside their basetemps (None without xdist)."""
    basetemp = config.getoption("basetemp")
    if not os.environ.get("PYTEST_XDIST_WORKER") or not basetemp:
        return None
    shared = Path(basetemp).resolve().parent / "tiny-finished"
    shared.mkdir(exist_ok=True)
    return shared


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the background build once per xdist run, as soon as a collected test needs it."""
    shared = _shared(session.config)
    if shared is None or not any(FIXTURE in getattr(item, "fixturenames", ()) for item in session.items):
        return
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (shared / "builder").exists() or (shared / "done").exists():
            return  # another worker started it
        # the build holds `building` locked for as long as it lives (the lock is taken here and
        # inherited, so no waiter can take it first); a waiter's lock returns when it has ended
        with open(shared / "building", "w") as building, open(shared / "builder.log", "wb") as log:
            fcntl.flock(building, fcntl.LOCK_EX)
            proc = subprocess.Popen(
                [sys.executable, "-c", _BUILD, str(shared / BACKGROUND), str(HERE)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                pass_fds=(building.fileno(),),
            )
        (shared / "builder").write_text(f"{proc.pid}\n")
        session.config.stash[_BUILDER] = proc


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The worker that started the build lets it finish (another worker may still wait for it),
    or stops it and its Ray head when the session was interrupted."""
    proc = session.config.stash.get(_BUILDER, None)
    if proc is None or proc.poll() is not None:
        return
    if exitstatus != pytest.ExitCode.INTERRUPTED:
        proc.wait()
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    from test_workflow import stop_ray_head

    stop_ray_head(_shared(session.config) / BACKGROUND)


def _background_result(shared: Path) -> Path | None:
    """The background build's workspace once it has ended (waiting on its lock); None when there
    is none or it failed."""
    if not (shared / "builder").exists():
        return None
    with open(shared / "building") as building:
        fcntl.flock(building, fcntl.LOCK_SH)  # held by the build until it ends, however it ends
    ok = (shared / "built").exists() and (shared / "built").read_text() == "ok"
    return shared / BACKGROUND if ok else None


@pytest.fixture(scope="session")
def finished_tiny_run(tmp_path_factory, worker_id, pytestconfig) -> Path:
    """A workspace in which config/test/config.yaml ran to completion, made once per test run (a
    workflow run of a few minutes on 2 cores: every worker making its own would cost that much
    per worker). Never change it: take a copy (test_workflow.copy_of_finished_run)."""
    shared = _shared(pytestconfig) if worker_id != "master" else None
    if shared is None:  # no xdist
        return _tiny_run(tmp_path_factory.mktemp("tiny-finished") / "ws")
    done = shared / "done"
    built = None if done.exists() else _background_result(shared)  # waits outside the lock
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker here records the build or makes one
        if not done.exists():
            if built is None:
                built = _tiny_run(shared / f"ws-{worker_id}")
            done.write_text(built.name)
        return shared / done.read_text()
