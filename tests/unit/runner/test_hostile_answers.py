"""Hostile candidates that answer badly or not at all: a crash (a segfault, a signal to itself, a
non-zero exit), a garbage or a wrong certificate, an answer written only once the time is up, a
program that cannot be started; and a good solver, the control. Each gets the documented status,
the harness survives, and no process of the run is left in the process table
(`hostile_support.run`, `alive_with`); every candidate of hostile/ gets the same status under
docker too.

Run as root and as an unprivileged user (`.ci/run` does both):
``pytest -m hostile tests/unit/runner``.
"""

from __future__ import annotations

import shutil
import sys
import uuid
from pathlib import Path

import pytest

from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.solver.execute import run_instance

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_support import HOSTILE, LIMITERS, alive_with, run, sandbox_or_skip  # noqa: E402

pytestmark = pytest.mark.hostile


@pytest.mark.parametrize("limiter", LIMITERS)
def test_good_solver_is_ok(task, tmp_path, limiter):
    record, _, _ = run(task, "good", tmp_path, limiter=limiter)
    assert record.status == "ok", record.message
    assert record.A == 4.0 and record.claimed == 4.0 and record.reward == pytest.approx(0.8)
    assert record.termination == "exit" and record.exit_code == 0
    assert record.limiter.startswith(limiter)
    assert record.wall_s > 0 and record.cpu_s > 0 and record.peak_mem_mb > 0


@pytest.mark.parametrize(
    "name, status, check",
    [
        ("segfault", "crash", lambda r: r.signal == 11 and r.termination == "signal"),
        ("self_signal", "crash", lambda r: r.signal == 6 and r.termination == "signal"),
        ("exit_nonzero", "crash", lambda r: r.exit_code == 3 and "exit code 3" in r.message),
        ("garbage_certificate", "invalid", lambda r: r.A is None),
        ("wrong_value", "certificate_failed", lambda r: r.claimed == 1000000 and r.A is None),
        ("late_answer", "timeout", lambda r: r.termination == "walltime"),
    ],
)
def test_misbehaving_answers(task, tmp_path, name, status, check):
    record, _, _ = run(task, name, tmp_path)
    assert record.status == status, (record.termination, record.message)
    assert check(record), record.to_dict()


# -- under docker ------------------------------------------------------------------------------


DOCKER_CASES = {
    "segfault": ("crash", lambda r: (r.termination, r.signal, r.exit_code) == ("signal", 11, None)),
    "self_signal": ("crash", lambda r: (r.termination, r.signal, r.exit_code) == ("signal", 6, None)),
    "memory_bomb": ("memout", lambda r: r.termination == "memory"),
    "output_bomb": ("crash", lambda r: r.termination == "output" and "output limit" in r.message),
    "sleeper": ("timeout", lambda r: r.termination == "walltime"),
    "ignore_sigterm": ("timeout", lambda r: r.termination == "walltime"),
    "exit_nonzero": ("crash", lambda r: r.exit_code == 3 and r.termination == "exit"),
    "good": ("ok", lambda r: r.A == 4.0),
    "setsid_child": ("ok", lambda r: True),
}


@pytest.mark.parametrize("name", sorted(DOCKER_CASES))
def test_hostile_suite_under_docker(task, tmp_path, name):
    """The candidates of hostile/ (`hostile_support.run`) get the documented status under docker too."""
    box = sandbox_or_skip("docker")
    folder = tmp_path / name
    shutil.copytree(HOSTILE / name, folder)
    marker = f"hostile-{uuid.uuid4().int % 10**9}"
    text = (folder / "solver.yaml").read_text().replace("hostile-{seed}", marker)
    (folder / "solver.yaml").write_text(text)
    candidate = load_candidate(folder)
    limits = task.limits.for_threads(candidate.threads, grace_s=0.3)
    record = run_instance(
        task, task.instances[0], candidate, sandbox=box, limits=limits, seed=0, scratch_dir=tmp_path / "s"
    )
    status, check = DOCKER_CASES[name]
    assert record.status == status, (record.termination, record.message)
    assert check(record), record.to_dict()
    assert record.sandbox == "docker" and not alive_with(marker)


def test_docker_missing_program_is_invalid(task, tmp_path):
    box = sandbox_or_skip("docker")
    folder = tmp_path / "missing"
    folder.mkdir()
    (folder / "solver.yaml").write_text('command: ["no-such-program-xyz", "{instance}"]\n')
    record = run_instance(
        task,
        task.instances[0],
        load_candidate(folder),
        sandbox=box,
        limits=task.limits.for_threads(1),
        seed=0,
        scratch_dir=tmp_path / "s",
    )
    assert record.status == "invalid" and "could not be started" in record.message, record.message
