"""Nothing of a run stays frozen or behind in the cgroup hierarchy: the kill path thaws what it
froze whatever interrupts it, a killed run's frozen or empty cgroups are swept by the next one, and
the orphan killer thaws the cgroups of the processes it kills. Real cgroups (v1 here, as root)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tcsexam.runner.limiter import Limits
from tcsexam.runner.limiter import cgroup as cg
from tcsexam.runner.limiter.orphans import kill_run_orphans
from tcsexam.runner.limiter.proctable import read_stat

needs_v1 = pytest.mark.skipif(
    cg.cgroup_support() != "v1", reason=f"needs cgroup v1 with a freezer (here: {cg.cgroup_probe_error() or 'v2'})"
)


def _gone(pid: int, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        proc = read_stat(pid)
        if proc is None or proc.state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def _state(freezer_dir: Path) -> str:
    return (freezer_dir / "freezer.state").read_text().strip()


# A dead run: a process makes a cgroup, puts a sleeping child in it (carrying a run marker),
# optionally freezes it, and dies without cleaning up (what a SIGKILLed actor leaves). It dies when
# the test closes its stdin (`_let_die`), right before the sweep under test: until then its owner is
# alive, so a sweep by another tcsexam run on this machine (another xdist worker's) leaves it alone.
DEAD_RUN = textwrap.dedent(
    """
    import os, subprocess, sys
    from tcsexam.runner.limiter import Limits
    from tcsexam.runner.limiter.cgroup import _CgroupV1
    group = _CgroupV1(Limits(wall_s=60, mem_mb=256, nproc=16))
    from tcsexam.runner.ownership.owner import run_marker, owner_token
    key, _, value = run_marker("test").partition("=")
    env = dict(os.environ, **{key: value})
    child = subprocess.Popen(["sleep", "600"], env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for f in group.procs_files:
        open(f, "w").write(str(child.pid))
    if sys.argv[1] == "frozen":
        (group.dirs["freezer"] / "freezer.state").write_text("FROZEN")
    empty = _CgroupV1(Limits(wall_s=60))
    print(group.dirs["freezer"].name, child.pid, empty.dirs["freezer"].name, owner_token(), flush=True)
    sys.stdin.read()
    os._exit(0)
    """
)


def _dead_run(how: str) -> tuple[str, int, str, str, subprocess.Popen]:
    """(cgroup name, child pid, empty cgroup name, owner token, the owner: alive until `_let_die`)."""
    owner = subprocess.Popen(
        [sys.executable, "-c", DEAD_RUN, how], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    line = owner.stdout.readline()
    assert line, f"the dead run's owner exited with {owner.wait(timeout=60)}"
    name, pid, empty, token = line.split()
    return name, int(pid), empty, token, owner


def _let_die(owner: subprocess.Popen) -> None:
    owner.stdin.close()
    assert owner.wait(timeout=60) == 0
    owner.stdout.close()


def _dirs(name: str) -> list[Path]:
    return cg._sweep_dirs().get(name, [])


def test_owner_is_judged_by_pid_start_time_and_namespace():
    me = read_stat(os.getpid())
    ns = cg._pid_namespace()
    assert cg.owner_alive(cg.cgroup_name(0)) is True
    assert cg.owner_alive(f"tcsexam-{os.getpid()}-s{me.start + 1}-n{ns}-0-1") is False  # a reused pid
    assert cg.owner_alive(f"tcsexam-{os.getpid()}-s{me.start}-n{ns + 1}-0-1") is None  # another namespace
    assert cg.owner_alive("something-else") is None
    dead = subprocess.Popen(["true"])
    dead.wait()
    assert cg.owner_alive(f"tcsexam-{dead.pid}-3-12345") is False  # an older version's name
    assert cg.owner_alive(f"tcsexam-{os.getpid()}-3-12345") is True


@needs_v1
def test_kill_all_thaws_even_when_interrupted_between_freeze_and_kill(monkeypatch):
    group = cg._CgroupV1(Limits(wall_s=60))
    child = subprocess.Popen(["sleep", "600"])
    try:
        for f in group.procs_files:
            Path(f).write_text(str(child.pid))

        def interrupted():
            raise SystemExit(143)  # SIGTERM's handler firing right after the freeze

        monkeypatch.setattr(group, "pids", interrupted)
        with pytest.raises(SystemExit):
            group.kill_all(signal.SIGKILL)
        assert _state(group.dirs["freezer"]) == "THAWED"
        monkeypatch.undo()
        assert child.pid in group.kill_all(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        child.kill()
        child.wait()
        group.remove()
    assert not any(d.exists() for d in group.dirs.values())


@needs_v1
def test_the_next_start_sweeps_a_dead_runs_frozen_and_empty_cgroups():
    name, pid, empty, _, owner = _dead_run("frozen")
    assert _dirs(name) and _dirs(empty)
    freezer = next(d for d in _dirs(name) if (d / "freezer.state").exists())
    time.sleep(0.2)
    assert _state(freezer) == "FROZEN" and not _gone(pid, 0.3)  # frozen: nothing would ever end it
    ours = cg._CgroupV1(Limits(wall_s=60))  # a live run's cgroup (empty, as just created) stays
    try:
        _let_die(owner)
        counts = cg.sweep_stale_cgroups()
        assert counts["frozen"] >= 1 and counts["killed"] >= 1 and counts["removed"] >= 2, counts
        assert _gone(pid)
        assert not _dirs(name) and not _dirs(empty)
        assert all(d.is_dir() for d in ours.dirs.values())
    finally:
        ours.remove()


@needs_v1
def test_the_orphan_killer_thaws_the_frozen_cgroup_of_what_it_kills():
    name, pid, _, token, owner = _dead_run("frozen")
    assert not _gone(pid, 0.3)
    _let_die(owner)
    # 1, or 0 when another tcsexam run's sweep (another xdist worker's) killed the dead run's
    # process first: either way it must be gone, frozen as it was
    assert kill_run_orphans(token) in (0, 1)
    assert _gone(pid)
    cg.sweep_stale_cgroups()
    assert not _dirs(name)


@needs_v1
def test_a_sweep_leaves_live_runs_alone():
    group = cg._CgroupV1(Limits(wall_s=60))
    child = subprocess.Popen(["sleep", "600"])
    try:
        for f in group.procs_files:
            Path(f).write_text(str(child.pid))
        (group.dirs["freezer"] / "freezer.state").write_text("FROZEN")  # mid-kill in a live run
        cg.sweep_stale_cgroups()
        # not thawed: on a busy machine the kernel may still be FREEZING it (v1 freezes in steps)
        assert child.poll() is None and _state(group.dirs["freezer"]) in ("FREEZING", "FROZEN")
        group.kill_all(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        cg.thaw(group.dirs["freezer"])
        child.kill()
        child.wait()
        group.remove()


EXITING_ACTOR = textwrap.dedent(
    """
    import os, signal, subprocess, threading, time
    from tcsexam.runner.limiter import Limits
    from tcsexam.runner.limiter import cgroup as cg
    group = cg._CgroupV1(Limits(wall_s=60))
    child = subprocess.Popen(["sleep", "600"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for f in group.procs_files:
        open(f, "w").write(str(child.pid))
    state = group.dirs["freezer"] / "freezer.state"
    cg._freeze_lock.acquire()          # a run thread between its freeze and its thaw ...
    state.write_text("FROZEN")
    def finish_the_kill():
        time.sleep(0.3)
        state.write_text("THAWED")
        cg._freeze_lock.release()
    threading.Thread(target=finish_the_kill).start()
    killed = cg.thaw_own_and_stop_freezing()   # ... while the actor exits: waits for it, kills, thaws
    child.wait(timeout=10)
    print(killed, child.returncode, state.read_text().strip(), cg._freezing_stopped, flush=True)
    group.remove()
    os._exit(0)
    """
)


@needs_v1
def test_an_exiting_actor_waits_for_a_freeze_in_progress_and_leaves_nothing_frozen():
    out = subprocess.run([sys.executable, "-c", EXITING_ACTOR], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    killed, returncode, state, stopped = out.stdout.split()
    assert int(killed) == 1 and int(returncode) == -signal.SIGKILL and state == "THAWED" and stopped == "True"


@needs_v1
def test_a_dead_runs_cgroup_under_another_sessions_cgroup_is_swept_too():
    """A run started from another login session leaves its memory cgroup under that session's
    memory cgroup: the sweep finds it there by its name (this pid namespace, owner gone)."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    mounts = cg._cgroup_mounts()
    session = Path(mounts["memory"]) / f"ops-test-session-{os.getpid()}-{time.monotonic_ns()}"
    session.mkdir()
    ours = f"tcsexam-{dead.pid}-s1-n{cg._pid_namespace()}-0-1"
    legacy = f"tcsexam-{dead.pid}-0-1"  # an older version's name: its namespace is unknown, left alone
    try:
        (session / ours).mkdir()
        (session / legacy).mkdir()
        cg.sweep_stale_cgroups()
        assert not (session / ours).exists()
        assert (session / legacy).exists()
    finally:
        for name in (ours, legacy):
            if (session / name).exists():
                (session / name).rmdir()
        session.rmdir()
