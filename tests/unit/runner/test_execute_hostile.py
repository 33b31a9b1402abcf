"""Hostile candidates through `run_instance` on a tiny real MaxCut task: each gets the right
status, the harness survives, and no process of the run is left in the process table."""

from __future__ import annotations

import shutil
import socket
import time
from pathlib import Path

import psutil
import pytest

from tcsexam.runner.execute import InstanceOptions, load_candidate, run_instance
from tcsexam.runner.limiter import cgroup_support
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.tasks import load_task

HOSTILE = Path(__file__).resolve().parent / "hostile"
GRAPH = "5 6\n1 2 1\n2 3 1\n3 4 1\n4 5 1\n5 1 1\n1 3 1\n"
LIMITERS = [
    pytest.param(
        "cgroup",
        marks=pytest.mark.skipif(cgroup_support() is None, reason="cannot create cgroups here"),
    ),
    "light",
]
_seed = iter(range(int(time.time() * 1000) % 10**9, 10**10))


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-task")
    (root / "g.txt").write_text(GRAPH)
    (root / "task.yaml").write_text(
        "id: tiny-maxcut\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        "limits: {wall_s: 1.5, cpu_s: 3, mem_mb: 200, output_mb: 1, nproc: 32}\n"
        f"instance_dir: {root}\ninstances:\n  - {{name: g, file: g.txt, best_known: 5}}\n"
    )
    return load_task(root / "task.yaml")


def leftovers(token: str) -> list[str]:
    found = []
    for proc in psutil.process_iter(["pid", "cmdline", "status"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if token in cmd:
            found.append(f"{proc.info['pid']} {proc.info['status']} {cmd}")
    return found


def run(task, name, tmp_path, *, limiter="auto", sandbox="local", grace_s=0.3, prepare=None):
    cand_dir = tmp_path / name
    shutil.copytree(HOSTILE / name, cand_dir)
    if prepare is not None:
        prepare(cand_dir)
    candidate = load_candidate(cand_dir)
    limits = task.limits.for_threads(candidate.threads, grace_s=grace_s)
    seed = next(_seed)
    scratch = tmp_path / f"scratch-{name}"
    box = get_sandbox(sandbox)
    started = time.monotonic()
    record = run_instance(
        task, task.instances[0], candidate, sandbox=box, limits=limits, seed=seed, scratch_dir=scratch,
        options=InstanceOptions(limiter=limiter),
    )  # fmt: skip
    elapsed = time.monotonic() - started
    left = leftovers(f"hostile-{seed}")
    assert not left, f"processes left behind: {left}"
    return record, scratch, elapsed


@pytest.mark.parametrize("limiter", LIMITERS)
def test_good_solver_is_ok(task, tmp_path, limiter):
    record, _, _ = run(task, "good", tmp_path, limiter=limiter)
    assert record.status == "ok", record.message
    assert record.A == 4.0 and record.claimed == 4.0 and record.reward == pytest.approx(0.8)
    assert record.termination == "exit" and record.exit_code == 0
    assert record.limiter.startswith(limiter)
    assert record.wall_s > 0 and record.cpu_s > 0 and record.peak_mem_mb > 0


@pytest.mark.parametrize("limiter", LIMITERS)
def test_sleeper_times_out(task, tmp_path, limiter):
    record, _, elapsed = run(task, "sleeper", tmp_path, limiter=limiter)
    assert record.status == "timeout" and record.termination == "walltime"
    assert 1.5 <= record.wall_s < 60 and elapsed < 60


@pytest.mark.parametrize("limiter", LIMITERS)
def test_sigterm_ignored_dies_after_grace(task, tmp_path, limiter):
    record, _, _ = run(task, "ignore_sigterm", tmp_path, limiter=limiter, grace_s=0.3)
    assert record.status == "timeout" and record.termination == "walltime"
    assert record.signal == 9  # SIGKILL after the grace


@pytest.mark.parametrize("limiter", LIMITERS)
def test_setsid_grandchild_is_killed(task, tmp_path, limiter):
    record, _, _ = run(task, "setsid_child", tmp_path, limiter=limiter)
    assert record.status == "ok", record.message  # the answer counts; the escapee does not survive


@pytest.mark.parametrize("limiter", LIMITERS)
def test_memory_bomb_is_memout(task, tmp_path, limiter):
    record, _, _ = run(task, "memory_bomb", tmp_path, limiter=limiter)
    assert record.status == "memout", (record.termination, record.message)
    assert record.termination == "memory"


@pytest.mark.parametrize("limiter", LIMITERS)
def test_output_bomb_is_capped_crash(task, tmp_path, limiter):
    record, scratch, _ = run(task, "output_bomb", tmp_path, limiter=limiter)
    assert record.status == "crash" and record.termination == "output", record.message
    assert "output limit" in record.message
    assert (scratch / "stdout.log").stat().st_size <= (1 << 20) + 1


@pytest.mark.skipif(cgroup_support() is None, reason="an unbounded fork bomb needs the pids cgroup")
def test_fork_bomb_is_contained(task, tmp_path):
    """Whichever limit strikes first ends it: the process count (a crash), the memory (32 Pythons
    that keep forking can fill 200 MB: a memout) or the clock; nothing of it is left (`run`)."""
    record, _, _ = run(task, "fork_bomb", tmp_path, limiter="cgroup")
    assert record.status in ("crash", "memout", "timeout"), (record.termination, record.message)


@pytest.mark.parametrize("limiter", LIMITERS)
def test_process_limit(task, tmp_path, limiter):
    record, _, _ = run(task, "bounded_fork", tmp_path, limiter=limiter)
    assert record.status == "crash", (record.termination, record.message)
    assert "process limit" in record.message


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


def _listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    return server


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_network(task, tmp_path, sandbox):
    if sandbox == "bwrap":
        try:
            get_sandbox("bwrap").check_available()
        except Exception as exc:
            pytest.skip(str(exc))
    server = _listener()
    try:
        port = server.getsockname()[1]
        record, scratch, _ = run(
            task, "network", tmp_path, sandbox=sandbox,
            prepare=lambda d: (d / "port.txt").write_text(str(port)),
        )  # fmt: skip
    finally:
        server.close()
    assert record.status == "ok", record.message
    stderr = (scratch / "stderr.log").read_text()
    if sandbox == "local":
        assert "NETWORK: connected" in stderr  # the control: the listener was reachable
    else:
        assert "NETWORK: failed" in stderr and "connected" not in stderr


def test_bwrap_write_outside_scratch_fails(task, tmp_path):
    try:
        get_sandbox("bwrap").check_available()
    except Exception as exc:
        pytest.skip(str(exc))
    outside = tmp_path / "outside"
    outside.mkdir()
    instance_before = Path(task.instances[0].path).read_bytes()
    record, scratch, _ = run(
        task, "write_outside", tmp_path, sandbox="bwrap",
        prepare=lambda d: (d / "target.txt").write_text(str(outside)),
    )  # fmt: skip
    assert record.status == "ok", record.message
    stderr = (scratch / "stderr.log").read_text()
    assert stderr.count("WRITE: failed") == 3 and "WRITE: ok" not in stderr, stderr
    assert not (tmp_path / "write_outside" / "planted.txt").exists()
    assert Path(task.instances[0].path).read_bytes() == instance_before
    assert not (outside / "planted.txt").exists()  # hidden by the private /tmp
    assert record.sandbox == "bwrap"
