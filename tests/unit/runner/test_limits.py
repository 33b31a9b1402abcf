"""The process limiter: real subprocesses under real limits (cgroup and light limiters)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
import uuid

import psutil
import pytest

from tcsexam.errors import InputError
from tcsexam.runner.limiter import LaunchError, Limits, MiB, RunSpec, cgroup_support, resolve_limiter
from tcsexam.runner.limiter.launcher import launcher
from tcsexam.runner.sandboxes import run_limited
from tcsexam.tasks import parse_limits

LIMITERS = [
    pytest.param("cgroup", marks=pytest.mark.skipif(cgroup_support() is None, reason="cannot create cgroups here")),
    "light",
]
PY = sys.executable


def test_limits_validation_and_for_threads():
    with pytest.raises(InputError, match="wall_s"):
        Limits(wall_s=0)
    with pytest.raises(InputError, match="limiter"):
        RunSpec(["true"], "/", Limits(wall_s=1), limiter="magic")
    with pytest.raises(InputError, match="mem_mb"):
        Limits(wall_s=1, mem_mb=-5)
    task = parse_limits({"wall_s": 3, "mem_mb": 512, "output_mb": 2, "nproc": 16})  # one type: the task's too
    lim = task.for_threads(4)
    assert (lim.wall_s, lim.cpu_s, lim.mem_mb, lim.output_bytes, lim.nproc) == (3.0, 12.0, 512, 2 * MiB, 16)
    assert lim.disk_mb == 4096 and task.disk_mb is None  # the runner's default only for the run
    assert parse_limits({"wall_s": 3, "cpu_s": 5}).for_threads(threads=4).cpu_s == 5.0
    assert task.task_dict() == {"wall_s": 3, "cpu_s": None, "mem_mb": 512, "output_mb": 2, "nproc": 16}
    defaults = parse_limits({"wall_s": 1})
    assert (defaults.mem_mb, defaults.output_bytes, defaults.nproc) == (2048, 64 * MiB, 256)
    assert "limiter" not in lim.as_dict()


def test_auto_resolves_to_a_real_limiter():
    assert resolve_limiter("auto") in ("cgroup", "light")
    assert resolve_limiter("light") == "light"


@pytest.mark.parametrize("limiter", LIMITERS)
def test_exit_code_output_and_measurements(tmp_path, limiter):
    out = run_limited(
        [PY, "-c", "import sys; print('hello'); print('oops', file=sys.stderr); sum(range(10**6)); sys.exit(7)"],
        cwd=tmp_path,
        limits=Limits(wall_s=5, mem_mb=256),
        limiter=limiter,
        stdout_path=tmp_path / "o",
        stderr_path=tmp_path / "e",
    )
    assert (out.exit_code, out.signal, out.termination, out.killed_by_harness) == (7, None, "exit", False)
    assert out.stdout_tail == "hello\n" and out.stderr_tail == "oops\n"
    assert (tmp_path / "o").read_text() == "hello\n"
    assert out.cpu_s > 0 and out.wall_s > 0 and out.peak_mem_mb > 0
    assert out.limiter.startswith(limiter) and out.sandbox == "local"


@pytest.mark.parametrize("limiter", LIMITERS)
def test_wall_limit_kills_the_tree(tmp_path, limiter):
    token = f"limits-wall-{time.monotonic_ns()}"
    out = run_limited(
        ["sh", "-c", f"sleep 30 & sleep 31; echo {token}"],
        cwd=tmp_path,
        limits=Limits(wall_s=0.3, grace_s=0.2),
        limiter=limiter,
    )
    assert out.termination == "walltime" and out.killed_by_harness
    assert 0.3 <= out.wall_s < 25  # killed, not waited for (the sleeps last 30 s), at any machine load
    assert not [p for p in psutil.process_iter(["cmdline"]) if token in " ".join(p.info["cmdline"] or [])]


@pytest.mark.parametrize("limiter", LIMITERS)
def test_cpu_limit_counts_children(tmp_path, limiter):
    busy = "import time\nt=time.time()\nwhile time.time()-t<20: pass\n"
    code = f"import subprocess,sys; ps=[subprocess.Popen([sys.executable,'-c',{busy!r}]) for _ in range(2)]; [p.wait() for p in ps]"
    out = run_limited([PY, "-c", code], cwd=tmp_path, limits=Limits(wall_s=20, cpu_s=0.6), limiter=limiter)
    assert out.termination == "cputime", out
    assert out.cpu_s >= 0.6  # stopped by the CPU limit (a wall-limit stop would say walltime)


@pytest.mark.parametrize("limiter", LIMITERS)
def test_signal_not_sent_by_harness(tmp_path, limiter):
    out = run_limited(["sh", "-c", "kill -ABRT $$"], cwd=tmp_path, limits=Limits(wall_s=5), limiter=limiter)
    assert out.termination == "signal" and out.signal == 6 and not out.killed_by_harness


@pytest.mark.parametrize("limiter", LIMITERS)
def test_certificate_file_is_capped(reachable_tmp, limiter):
    tmp_path = reachable_tmp  # the certificate's folder is the run's writable one (a root harness's candidate uid)
    cert = tmp_path / "cert"
    out = run_limited(
        ["sh", "-c", f"head -c 100000 /dev/zero > {cert}"],
        cwd=tmp_path,
        limits=Limits(wall_s=5, output_bytes=1000),
        limiter=limiter,
        output_paths=[cert],
        writable_paths=[tmp_path],
    )
    assert out.termination == "output"
    assert cert.stat().st_size <= 1001


def test_fast_program_is_reaped_at_once(tmp_path):
    # Reaped through its pidfd when it exits, not found at the wall limit. The bound is the limit
    # itself (a generous 60 s) rather than a small wall time, which a busy machine can exceed.
    out = run_limited(["true"], cwd=tmp_path, limits=Limits(wall_s=60))
    assert out.exit_code == 0 and out.termination == "exit" and out.wall_s < 60


def test_missing_program_is_the_candidates_fault(tmp_path):
    with pytest.raises(LaunchError) as info:
        run_limited(["/nonexistent/solver"], cwd=tmp_path, limits=Limits(wall_s=5))
    assert info.value.candidate_fault


def test_preexec_fallback_without_launcher(tmp_path, monkeypatch):
    import tcsexam.runner.limiter.process as process_mod

    monkeypatch.setattr(process_mod, "launcher_fd", lambda: None)
    out = run_limited(["sh", "-c", "ulimit -f"], cwd=tmp_path, limits=Limits(wall_s=5, output_bytes=512 * 1024))
    assert out.exit_code == 0 and out.stdout_tail.strip() == str((512 * 1024 + 1) // 512)


def _processes_with(token: str) -> list[int]:
    return [p.pid for p in psutil.process_iter(["cmdline"]) if token in " ".join(p.info["cmdline"] or [])]


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_for(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@contextlib.contextmanager
def _harness(argv: list[str], cwd, limiter: str, token: str):
    """A harness process running `argv` under `run_limited` (wall 600 s); afterwards it and every
    process whose command line carries `token` are killed, whatever the test's outcome."""
    code = (
        "from tcsexam.runner.limiter import Limits\n"
        "from tcsexam.runner.sandboxes import run_limited\n"
        f"run_limited({argv!r}, cwd={str(cwd)!r}, limits=Limits(wall_s=600), limiter={limiter!r})\n"
    )
    proc = subprocess.Popen([PY, "-c", code])
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _processes_with(token):
            try:
                psutil.Process(pid).kill()
            except psutil.Error:
                pass


@pytest.mark.parametrize("limiter", LIMITERS)
def test_the_run_dies_with_its_harness(tmp_path, limiter):
    """A harness killed mid-run (SIGKILL: a Ray actor stopped at the end of its job, an OOM kill)
    takes its run with it, a child in a session of its own included, with nobody sweeping for
    orphans: the launcher has the kernel tell it of its harness's death."""
    if launcher() is None:
        pytest.skip("no C compiler: the limiter uses preexec_fn, without a launcher")
    token = f"harness-death-{uuid.uuid4().hex}"
    sleeper = "import time; time.sleep(300)"
    program = (
        "import subprocess, sys, time; "
        f"subprocess.Popen([sys.executable, '-c', {sleeper!r}, {token!r}], start_new_session=True); "
        "time.sleep(300)"
    )
    with _harness([PY, "-c", program, token], tmp_path, limiter, token) as proc:
        started = _wait_for(lambda: len(_processes_with(token)) >= 2, 120)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        assert started, "the program and its child never ran"
        assert _wait_for(lambda: not _processes_with(token), 60), "outlived their harness: " + str(
            [(p, psutil.Process(p).ppid()) for p in _processes_with(token) if psutil.pid_exists(p)]
        )


@pytest.mark.parametrize("limiter", LIMITERS)
def test_the_program_dies_with_its_launcher(tmp_path, limiter):
    """A Ray worker that exits SIGKILLs its children (the launcher) before it goes itself: the
    launcher then cannot kill the program, which has the kernel kill it instead (nobody sweeping)."""
    if launcher() is None:
        pytest.skip("no C compiler: the limiter uses preexec_fn, without a launcher")
    token = f"launcher-death-{uuid.uuid4().hex}"
    with _harness([PY, "-c", "import time; time.sleep(300)", token], tmp_path, limiter, token) as proc:
        assert _wait_for(lambda: len(_processes_with(token)) >= 3, 120), "the program never ran"
        (launcher_pid,) = [p for p in _processes_with(token) if psutil.Process(p).ppid() == proc.pid]
        # the program: the leaf (a root harness's local run has the pid 1 of its namespace between)
        (program,) = [
            p for p in _processes_with(token) if p not in (launcher_pid, proc.pid) and not psutil.Process(p).children()
        ]
        proc.send_signal(signal.SIGSTOP)  # a worker on its way out watches its runs no more
        psutil.Process(launcher_pid).kill()  # it kills its children (as Ray's worker does),
        proc.kill()  # then it exits
        proc.wait(timeout=60)
        assert _wait_for(lambda: _gone(program), 60), "outlived its launcher"


def test_launcher_builds_where_a_compiler_exists():
    import shutil

    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler: the limiter uses preexec_fn")
    assert launcher() is not None


def test_benchexec_limiter(tmp_path):
    pytest.importorskip("benchexec.runexecutor")
    if cgroup_support() is None:
        pytest.skip("BenchExec needs cgroups")
    out = run_limited(
        ["sh", "-c", "echo hi; exit 4"], cwd=tmp_path, limits=Limits(wall_s=5, mem_mb=128), limiter="benchexec"
    )
    assert (out.exit_code, out.termination, out.limiter, out.stdout_tail) == (4, "exit", "benchexec", "hi\n")
