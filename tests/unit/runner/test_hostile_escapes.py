"""No process of a run survives it, under every limiter and sandbox, whatever it does; and a
candidate cannot change the evaluation's inputs. One hostile candidate per escape technique
(tests/unit/runner/escapes/solve.py: setsid, double fork, a new process group, an emptied
environment, a daemonising shell, hopping through forks, answering SIGTERM with a new process,
killing its launcher), each followed by a search of the process table (/proc) for the unique
marker every process it starts carries in its argv; the same candidate tries to overwrite the
task's real instance file. (Other process techniques, a setsid grandchild of a hostile/ candidate
among them: test_hostile_processes.py.)

Run as root and as an unprivileged user (`.ci/run` does both):
``pytest -m hostile tests/unit/runner``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
import uuid
from pathlib import Path

import pytest

from tcsexam.runner.limiter import cgroup_support
from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.solver.execute import InstanceOptions, run_instance

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_support import alive_with, sandbox_or_skip  # noqa: E402

pytestmark = pytest.mark.hostile


ESCAPES = Path(__file__).resolve().parent / "escapes"
TECHNIQUES = {
    "setsid_env": "ok",
    "setsid_fork": "ok",
    "double_fork": "ok",
    "new_pgrp": "ok",
    "daemon_shell": "ok",
    "fork_hop": "ok",
    "respawn_on_term": "timeout",
    "kill_launcher": None,  # any status: what matters is that nothing survives
}


CONFIGS = [
    pytest.param("local", "light", id="local-light"),
    pytest.param("local", "cgroup", id="local-cgroup"),
    pytest.param("bwrap", "light", id="bwrap-light"),
    pytest.param("bwrap", "cgroup", id="bwrap-cgroup"),
    pytest.param("docker", "auto", id="docker"),
]


def hostile(tmp_path: Path, how: str, victim: Path | None = None) -> Path:
    folder = tmp_path / f"cand-{how}"
    folder.mkdir()
    shutil.copy(ESCAPES / "solve.py", folder / "solve.py")
    marker = f"tcsexam-escape-{uuid.uuid4().hex}"
    extra = f', "{victim}"' if victim else ""
    (folder / "solver.yaml").write_text(
        f'command: ["python3", "solve.py", "{{instance}}", "{{solution}}", "{marker}", "{how}"{extra}]\n'
    )
    (folder / "marker").write_text(marker)
    return folder


def run(task, folder: Path, tmp_path: Path, sandbox: str, limiter: str):
    if limiter == "cgroup" and cgroup_support() is None:
        pytest.skip("cannot create cgroups here")
    box = sandbox_or_skip(sandbox)
    candidate = load_candidate(folder)
    limits = task.limits.for_threads(candidate.threads, grace_s=0.3)
    return run_instance(
        task,
        task.instances[0],
        candidate,
        sandbox=box,
        limits=limits,
        seed=1,
        scratch_dir=tmp_path / "scratch",
        options=InstanceOptions(limiter=limiter),
    )


@pytest.mark.parametrize("sandbox,limiter", CONFIGS)
@pytest.mark.parametrize("how", sorted(TECHNIQUES))
def test_no_process_survives(task, tmp_path, sandbox, limiter, how):
    folder = hostile(tmp_path, how)
    record = run(task, folder, tmp_path, sandbox, limiter)
    left = alive_with((folder / "marker").read_text())  # at once: nothing may be left to die later
    assert not left, f"{how} under {sandbox}/{limiter}: left alive: {left}"
    if TECHNIQUES[how] is not None:
        assert record.status == TECHNIQUES[how], (record.status, record.message)
    if TECHNIQUES[how] == "timeout":
        assert record.termination == "walltime"


@pytest.mark.parametrize("sandbox,limiter", CONFIGS)
def test_inputs_cannot_be_changed(task, tmp_path, sandbox, limiter):
    """The candidate tries to overwrite the task's real instance file (not the path it was given)."""
    instance = Path(task.instances[0].path)
    before = hashlib.sha256(instance.read_bytes()).hexdigest()
    folder = hostile(tmp_path, "new_pgrp", victim=instance)
    record = run(task, folder, tmp_path, sandbox, limiter)
    assert hashlib.sha256(instance.read_bytes()).hexdigest() == before, "the corpus was left altered"
    if sandbox == "local" and os.geteuid() != 0:  # nothing can be mounted: the change is found, undone, refused
        assert (record.status, record.termination) == ("invalid", "input")
        assert "restored" in record.message and str(instance) in record.message
    else:  # mounted read-only (or, as root, the candidate's uid cannot write it): the write fails
        assert record.status == "ok", record.message
        assert "could not write" in (Path(tmp_path / "scratch" / "stderr.log").read_text())
    assert not alive_with((folder / "marker").read_text())


def test_escape_checker_sees_a_live_process(tmp_path):
    """The process-table check itself can fail: a marked process is found while it lives."""
    import subprocess
    import sys

    marker = f"tcsexam-escape-{uuid.uuid4().hex}"
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", marker])
    try:
        deadline = time.monotonic() + 120  # a busy machine starts python late
        while not alive_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert alive_with(marker)
    finally:
        proc.kill()
        proc.wait()
    assert not alive_with(marker)
