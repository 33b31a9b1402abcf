"""Pipelined runs in one worker (`one_run_at_a_time`): runs are prepared concurrently, their
programs run one after another; under bwrap the sandbox is set up ahead and the program waits for
the harness's `go` (under local the launcher waits for it). No assertion here depends on the machine's speed: a slow machine only makes
the waits below test less, never fail."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tcsexam.errors import InputError
from tcsexam.runner.limiter import Limits, RunPaths
from tcsexam.runner.limiter.process import one_run_at_a_time
from tcsexam.runner.sandboxes import get_sandbox, run_limited

#: logs `start K`, lives a while (with a child of its own), logs `end K`
SCRIPT = 'echo "start $1" >> "$2"; sleep 0.05 & wait; echo "end $1" >> "$2"'


def _box(name: str):
    box = get_sandbox(name)
    try:
        box.check_available()
    except InputError as exc:
        pytest.skip(str(exc))
    return box


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
@pytest.mark.parametrize("limiter", ["auto", "light"])
def test_gated_runs_never_overlap(reachable_tmp, sandbox, limiter):
    tmp_path = reachable_tmp
    box = _box(sandbox)
    work = tmp_path / "w"
    work.mkdir()
    log = work / "log"
    gate = threading.Lock()

    def one(k: int):
        with one_run_at_a_time(gate):
            return run_limited(
                ["sh", "-c", SCRIPT, "x", str(k), str(log)],
                cwd=tmp_path,
                sandbox=box,
                writable_paths=[work],
                limits=Limits(wall_s=60, mem_mb=512),
                limiter=limiter,
            )

    with ThreadPoolExecutor(3) as pool:
        outcomes = list(pool.map(one, range(8)))
    assert all(o.termination == "exit" and o.exit_code == 0 and o.sandbox_error is None for o in outcomes)
    lines = log.read_text().splitlines()
    assert len(lines) == 16
    for first, second in zip(lines[::2], lines[1::2], strict=True):  # start K is followed by end K
        assert first.split()[0] == "start" and second == f"end {first.split()[1]}", lines
    assert sorted(int(line.split()[1]) for line in lines[::2]) == list(range(8))


def test_gate_is_released_after_a_failed_run(tmp_path):
    """A program that crashes, one that cannot start and one over its wall limit each give the
    gate back: the next run still starts."""
    box = _box("local")
    gate = threading.Lock()
    with one_run_at_a_time(gate):
        assert run_limited(["sh", "-c", "exit 3"], cwd=tmp_path, limits=Limits(wall_s=30), sandbox=box).exit_code == 3
        with pytest.raises(Exception, match="cannot start"):
            run_limited([str(tmp_path / "missing")], cwd=tmp_path, limits=Limits(wall_s=30), sandbox=box)
        out = run_limited(["sleep", "30"], cwd=tmp_path, limits=Limits(wall_s=0.2, grace_s=0.1), sandbox=box)
        assert out.termination == "walltime"
    assert gate.acquire(blocking=False)


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_program_waits_for_go(reachable_tmp, sandbox):
    """The launcher (and under bwrap the sandbox) start at once, the program only once the run
    holds the gate; its wall time counts from then."""
    tmp_path = reachable_tmp
    box = _box(sandbox)
    work = tmp_path / "w"
    work.mkdir()
    marker = work / "ran"
    gate = threading.Lock()
    gate.acquire()
    result = {}

    def one():
        with one_run_at_a_time(gate):
            result["out"] = run_limited(
                ["sh", "-c", 'touch "$1"', "x", str(marker)],
                cwd=tmp_path,
                sandbox=box,
                writable_paths=[work],
                limits=Limits(wall_s=60),
            )

    thread = threading.Thread(target=one)
    thread.start()
    try:
        time.sleep(1.0)  # room for the sandbox to come up (not asserted: it may be slower)
        assert not marker.exists() and thread.is_alive()
    finally:
        gate.release()
    thread.join(120)
    out = result["out"]
    assert marker.exists() and out.exit_code == 0 and out.sandbox_error is None


@pytest.mark.parametrize("what", [None, b"stop\n"])
def test_bwrap_without_go_never_runs_the_program(tmp_path, what):
    """The start pipe closed (the harness gave up or died) or anything but `go` on it: the program
    never runs."""
    box = _box("bwrap")
    work = tmp_path / "w"
    work.mkdir()
    marker = work / "ran"
    start_r, start_w = os.pipe()
    ready_r, ready_w = os.pipe()
    cmd = box.command(
        ["sh", "-c", 'touch "$1"', "x", str(marker)],
        cwd=str(tmp_path),
        paths=RunPaths(writable_paths=[str(work)]),
        ready_fd=ready_w,
        start_fd=start_r,
    )
    proc = subprocess.Popen(cmd, pass_fds=(ready_w, start_r), stderr=subprocess.DEVNULL)
    os.close(start_r)
    os.close(ready_w)
    if what:
        os.write(start_w, what)
    os.close(start_w)
    try:
        assert proc.wait(120) != 0
        assert os.read(ready_r, 16) == b"up"  # the sandbox was up: only the program did not run
    finally:
        os.close(ready_r)
    assert not marker.exists()


@pytest.mark.parametrize("what", [None, b"stop\n"])
def test_launcher_without_go_never_runs_the_program(tmp_path, what):
    """The C launcher given a start pipe says `ready` and waits: end of file or anything but `go`
    on the pipe ends it (exit 126) without running the program; `go` runs it."""
    from tcsexam.runner.limiter.launcher import LauncherArgs, launcher, launcher_argv

    shim = launcher()
    if shim is None:
        pytest.skip("no C compiler: the limiter falls back to a preexec_fn")
    marker = tmp_path / "ran"
    for said in (what, b"go\n"):
        err_r, err_w = os.pipe()
        start_r, start_w = os.pipe()
        argv = launcher_argv(shim, LauncherArgs(errfd=err_w, start=start_r), command=["touch", str(marker)])
        proc = subprocess.Popen(argv, pass_fds=(err_w, start_r))
        os.close(err_w)
        os.close(start_r)
        assert os.read(err_r, 16) == b"ready\n"
        if said:
            os.write(start_w, said)
        os.close(start_w)
        code = proc.wait(120)
        os.close(err_r)
        assert (code, marker.exists()) == ((0, True) if said == b"go\n" else (126, False))


def test_bwrap_command_waits_for_go_only_with_a_start_fd():
    box = get_sandbox("bwrap")
    plain = " ".join(box.command(["p"], cwd="/c", ready_fd=6))
    gated = " ".join(box.command(["p"], cwd="/c", ready_fd=6, start_fd=7))
    assert "read" not in plain and "read -r go </proc/self/fd/7" in gated
    assert gated.index("printf up >/proc/self/fd/6") < gated.index("read -r go") < gated.index('exec "$0" "$@"')


def test_runners_without_a_start_ahead_hold_the_gate_for_the_whole_run():
    """docker and BenchExec cannot prepare a run ahead: they hold the gate from start to end."""
    from tcsexam.runner.limiter.process import whole_run_exclusive

    gate = threading.Lock()
    with whole_run_exclusive():  # no gate in this thread: nothing to hold
        assert not gate.locked()
    with one_run_at_a_time(gate):
        with whole_run_exclusive():
            assert gate.locked()
        assert not gate.locked()


def test_benchexec_runs_are_gated_too(tmp_path):
    from tcsexam.runner.limiter import resolve_limiter

    try:
        resolve_limiter("benchexec")
    except InputError as exc:
        pytest.skip(str(exc))
    box = _box("local")
    log = tmp_path / "log"
    gate = threading.Lock()

    def one(k: int):
        with one_run_at_a_time(gate):
            return run_limited(
                ["sh", "-c", SCRIPT, "x", str(k), str(log)],
                cwd=tmp_path,
                sandbox=box,
                limits=Limits(wall_s=60, mem_mb=512),
                limiter="benchexec",
            )

    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(one, range(4)))
    if any(o.limiter != "benchexec" or o.exit_code != 0 for o in outcomes):
        pytest.skip(f"BenchExec cannot run here: {outcomes[0].message or outcomes[0].stderr_tail[-200:]}")
    lines = log.read_text().splitlines()
    for first, second in zip(lines[::2], lines[1::2], strict=True):
        assert first.split()[0] == "start" and second == f"end {first.split()[1]}", lines
