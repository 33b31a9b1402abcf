"""Hostile candidates that exhaust a run's limits: time (a sleeper, a candidate that ignores
SIGTERM), memory (a memory bomb; files in the host's /dev/shm, which are memory), output (an
output bomb), processes (a fork bomb; a bounded one past the process limit) and the work folder's
disk (files written past `disk_mb`, a flood of empty files).

Each run ends with the documented status and termination, the harness survives, and no process
of the run is left in the process table (`hostile_support.run`: the candidates of hostile/, under
`HOSTILE_LIMITS`).

Run as root and as an unprivileged user (`.ci/run` does both):
``pytest -m hostile tests/unit/runner``.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

from tcsexam.errors import InputError
from tcsexam.runner.limiter import Limits, cgroup_support
from tcsexam.runner.sandboxes import run_limited

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_support import LIMITERS, ROOT, box_or_skip, run, sandbox_or_skip, trusted_local  # noqa: E402

pytestmark = pytest.mark.hostile


# -- time: the run is stopped at wall_s, SIGKILLed after the grace -----------------------------


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


# -- memory: the memory limit, files in /dev/shm included --------------------------------------


@pytest.mark.parametrize("limiter", LIMITERS)
def test_memory_bomb_is_memout(task, tmp_path, limiter):
    record, _, _ = run(task, "memory_bomb", tmp_path, limiter=limiter)
    assert record.status == "memout", (record.termination, record.message)
    assert record.termination == "memory"


@pytest.mark.skipif(not ROOT, reason="only a root harness runs local candidates as a uid of their own")
@pytest.mark.parametrize("limiter", ["light", "cgroup"])
def test_files_in_shared_memory_count_against_the_memory_limit(reachable_tmp, limiter):
    """Under local the candidate shares the host's /dev/shm (a tmpfs: its files are RAM). The
    cgroup limiter charges them to the run; the light one adds the candidate uid's files there to
    the tree's memory: a run writing 1 MB files past `mem_mb` is stopped for memory either way
    (it wrote 1 MB at a time under RLIMIT_FSIZE), and nothing of it stays in /dev/shm."""
    from tcsexam.runner.limiter import resolve_limiter
    from tcsexam.runner.limiter.process import _tmpfs_folders

    if "/dev/shm" not in _tmpfs_folders():
        pytest.skip("/dev/shm is not a tmpfs here")
    try:
        resolve_limiter(limiter)
    except InputError as exc:
        pytest.skip(str(exc))
    box = sandbox_or_skip("local")
    token = f"tcsexam-shm-{uuid.uuid4().hex}"
    work = reachable_tmp / "work"
    work.mkdir()
    script = f"i=0; while [ $i -lt 400 ]; do head -c 1000000 /dev/zero > /dev/shm/{token}-$i; i=$((i+1)); done"
    out = run_limited(
        ["/bin/sh", "-c", script],
        cwd=work,
        sandbox=box,
        limiter=limiter,
        writable_paths=[work],
        env={"PATH": "/usr/bin:/bin", "HOME": str(work)},
        limits=Limits(wall_s=120, mem_mb=96, output_bytes=1 << 20),
    )
    assert out.termination == "memory", (out.termination, out.message)
    assert not [name for name in os.listdir("/dev/shm") if name.startswith(token)]


# -- output: capped at output_mb ---------------------------------------------------------------


@pytest.mark.parametrize("limiter", LIMITERS)
def test_output_bomb_is_capped_crash(task, tmp_path, limiter):
    record, scratch, _ = run(task, "output_bomb", tmp_path, limiter=limiter)
    assert record.status == "crash" and record.termination == "output", record.message
    assert "output limit" in record.message
    assert (scratch / "stdout.log").stat().st_size <= (1 << 20) + 1


# -- processes: the process limit --------------------------------------------------------------


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


# -- disk: the work folder's quota, in bytes and in files --------------------------------------


@pytest.mark.parametrize("sandbox", ["local", "bwrap", "docker"])
def test_disk_quota_stops_a_filling_run(reachable_tmp, sandbox):
    """Files of 4 MB written one after another past `disk_mb` (each under the output cap): the run
    is killed for `disk` (status memout) long before the 200 MB it wanted."""
    from tcsexam.runner.limiter.process import disk_usage
    from tcsexam.runner.solver.verdict import solver_status

    box = box_or_skip(sandbox)
    work = reachable_tmp / "work"
    work.mkdir()
    pause = 0.2 if sandbox == "docker" else 0.02  # docker measures the volume every 0.5 s
    script = f'i=0; while [ $i -lt 50 ]; do head -c 4000000 /dev/zero > "f$i"; i=$((i+1)); sleep {pause}; done'
    out = run_limited(
        ["/bin/sh", "-c", script],
        cwd=work,
        sandbox=box,
        env={"PATH": "/usr/bin:/bin"},
        writable_paths=[work],
        limits=Limits(wall_s=120, disk_mb=20, output_bytes=8 << 20),
    )
    assert out.termination == "disk" and "over 20 MB" in out.message, (out.termination, out.message)
    assert disk_usage([work]) < 100 << 20  # stopped long before 200 MB
    decision = solver_status(out)
    assert decision.status == "memout" and "disk limit" in decision.message


def test_disk_mb_is_a_task_limit(tmp_path):
    from tcsexam.tasks import load_task

    (tmp_path / "g.txt").write_text("2 1\n1 2 1\n")
    base = "id: t\nproblem: maxcut\nkind: objective\ndirection: maximize\ninstance_dir: {d}\n"
    base += "instances: [{{name: g, file: g.txt}}]\nlimits: {{wall_s: 1{extra}}}\n"
    (tmp_path / "a.yaml").write_text(base.format(d=tmp_path, extra=", disk_mb: 64"))
    (tmp_path / "b.yaml").write_text(base.format(d=tmp_path, extra=""))
    (tmp_path / "c.yaml").write_text(base.format(d=tmp_path, extra=", disk_mb: 1.5"))
    a, b = load_task(tmp_path / "a.yaml"), load_task(tmp_path / "b.yaml")
    assert a.limits.disk_mb == 64 and a.limits.for_threads().disk_mb == 64
    assert "disk_mb" not in b.limits.task_dict()  # unset: record keys of older tasks stay the same
    assert b.limits.for_threads().disk_mb > 0  # the runner's default quota still applies
    with pytest.raises(InputError, match="disk_mb must be a whole number"):
        load_task(tmp_path / "c.yaml")


INODES = "import sys\nfor i in range(500_000):\n    open(sys.argv[1] + '/f%07d' % i, 'w').close()\n"


@pytest.mark.parametrize("sandbox", ["local", "bwrap", "docker"])
def test_a_flood_of_empty_files_is_over_the_disk_limit(reachable_tmp, sandbox, monkeypatch):
    """Empty files take no blocks but an inode each (a host's file system runs out of them): past
    `DISK_ENTRIES` the run is over `disk_mb` (memout, termination disk), told so in words. (The
    entry limit lowered to 5000 here: the real 200000 files take minutes on a busy machine.)"""
    import tcsexam.runner.limiter.process as process
    from tcsexam.runner.solver.verdict import solver_status

    monkeypatch.setattr(process, "DISK_ENTRIES", 5000)
    DISK_ENTRIES = process.DISK_ENTRIES

    box = sandbox_or_skip(sandbox)
    trusted_local(sandbox)
    work = reachable_tmp / "work"
    work.mkdir()
    path = os.pathsep.join(p for p in (box.python_dir(), "/usr/local/bin", "/usr/bin", "/bin") if p)
    out = run_limited(
        ["python3", "-c", INODES, str(work)],
        cwd=work,
        sandbox=box,
        writable_paths=[work],
        env={"PATH": path, "HOME": str(work), "TMPDIR": str(work)},
        limits=Limits(wall_s=600, disk_mb=64),
    )
    assert out.termination == "disk", (out.termination, out.message, out.stderr_tail[-300:])
    assert f"over {DISK_ENTRIES} files" in out.message, out.message
    assert len(os.listdir(work)) < 500_000  # stopped long before it was done
    assert solver_status(out).status == "memout"
