"""Helpers of the hostile suite (tests/unit/runner/test_hostile_*.py and the tests that borrow its
sandbox check): the tiny MaxCut task, a sandbox or a skip, a shell script in a sandbox, a
candidate of hostile/ through `run_instance`, and the process-table searches that say nothing of
a run is left. Fixtures are in conftest.py."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import psutil
import pytest

from tcsexam.errors import InputError
from tcsexam.runner.limiter import Limits, cgroup_support
from tcsexam.runner.sandboxes import get_sandbox, run_limited
from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.solver.execute import InstanceOptions, run_instance
from tcsexam.tasks import load_task, parse_limits

ROOT = os.geteuid() == 0
SANDBOXES = ["local", "bwrap", "docker"]
HOSTILE = Path(__file__).resolve().parent / "hostile"  #: one folder per hostile candidate (`run`)
GRAPH = "5 6\n1 2 1\n2 3 1\n3 4 1\n4 5 1\n5 1 1\n1 3 1\n"

#: The limits `run` gives a candidate of hostile/, whatever the task says: a sleeper meets 1.5 s,
#: a memory bomb 200 MB, a fork bomb 32 processes.
HOSTILE_LIMITS = parse_limits({"wall_s": 1.5, "cpu_s": 3, "mem_mb": 200, "output_mb": 1, "nproc": 32})
LIMITERS = [
    pytest.param(
        "cgroup",
        marks=pytest.mark.skipif(cgroup_support() is None, reason="cannot create cgroups here"),
    ),
    "light",
]
_seed = iter(range(int(time.time() * 1000) % 10**9, 10**10))


def tiny_maxcut(root: Path, limits: str):
    """The task `tiny-maxcut` in `root`: one 5-node graph `g` (best known 5) under `limits`, a
    task file's flow mapping."""
    (root / "g.txt").write_text(GRAPH)
    (root / "task.yaml").write_text(
        "id: tiny-maxcut\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        f"limits: {limits}\n"
        f"instance_dir: {root}\ninstances:\n  - {{name: g, file: g.txt, best_known: 5}}\n"
    )
    return load_task(root / "task.yaml")


# -- the sandboxes ------------------------------------------------------------------------------


def docker_required() -> bool:
    """CI and `TCSEXAM_REQUIRE_DOCKER=1`: the Docker tests must run, not skip."""
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("TCSEXAM_REQUIRE_DOCKER") == "1"


def sandbox_or_skip(name: str, *, required: bool | None = None):
    """The sandbox `name`, checked: skips where it does not work here, fails instead for docker
    where it must (`required`; default `docker_required()`)."""
    box = get_sandbox(name)
    try:
        box.check_available()
    except InputError as exc:
        if name == "docker" and (docker_required() if required is None else required):
            pytest.fail(f"the Docker engine must run here (CI / TCSEXAM_REQUIRE_DOCKER=1): {exc}")
        pytest.skip(str(exc))
    return box


def box_or_skip(name: str):
    """`sandbox_or_skip`, failing for docker only as root with `TCSEXAM_REQUIRE_DOCKER=1` (an
    unprivileged user's run of the hostile tests may not reach the engine)."""
    return sandbox_or_skip(name, required=os.environ.get("TCSEXAM_REQUIRE_DOCKER") == "1" and ROOT)


def trusted_local(sandbox: str) -> None:
    if sandbox == "local" and not ROOT:
        pytest.skip("a non-root harness under local runs candidates as itself: local is for trusted candidates only")


def sh(box, script: str, folder: Path, *, env=None, hidden=(), readonly=()) -> tuple[str, str]:
    """Run `sh -c script` in `box` with `folder/work` writable (its HOME and TMPDIR); (stdout, stderr)."""
    work = folder / "work"
    work.mkdir(exist_ok=True)
    base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(work), "TMPDIR": str(work)}
    out = run_limited(
        ["/bin/sh", "-c", script],
        cwd=work,
        limits=Limits(wall_s=60, mem_mb=1024),
        sandbox=box,
        env={**base, **(env or {})},
        writable_paths=[work],
        readonly_paths=list(readonly),
        hidden_paths=list(hidden),
    )
    assert out.sandbox_error is None, out.sandbox_error
    return out.stdout_tail, out.stderr_tail


def run_sh(box, script: str, folder: Path, *, env=None) -> tuple[str, str]:
    """`sh`, with the harness's Python (`python3`) first on the PATH."""
    path = os.pathsep.join(p for p in (box.python_dir(), "/usr/local/bin", "/usr/bin", "/bin") if p)
    return sh(box, script, folder, env={"PATH": path, **(env or {})})


# -- a candidate of hostile/ through run_instance -------------------------------------------------


def leftovers(token: str) -> list[str]:
    """Processes whose command line holds `token` (zombies too), through psutil."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline", "status"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if token in cmd:
            found.append(f"{proc.info['pid']} {proc.info['status']} {cmd}")
    return found


def run(task, name, tmp_path, *, limiter="auto", sandbox="local", grace_s=0.3, prepare=None):
    """The candidate hostile/`name` (a copy, `prepare`d) on the task's instance under
    HOSTILE_LIMITS; asserts that no process of it is left (each carries `hostile-SEED` in its
    argv). (record, scratch folder, seconds it took)."""
    cand_dir = tmp_path / name
    shutil.copytree(HOSTILE / name, cand_dir)
    if prepare is not None:
        prepare(cand_dir)
    candidate = load_candidate(cand_dir)
    limits = HOSTILE_LIMITS.for_threads(candidate.threads, grace_s=grace_s)
    seed = next(_seed)
    scratch = tmp_path / f"scratch-{name}"
    box = get_sandbox(sandbox)
    started = time.monotonic()
    record = run_instance(
        task,
        task.instances[0],
        candidate,
        sandbox=box,
        limits=limits,
        seed=seed,
        scratch_dir=scratch,
        options=InstanceOptions(limiter=limiter),
    )
    elapsed = time.monotonic() - started
    left = leftovers(f"hostile-{seed}")
    assert not left, f"processes left behind: {left}"
    return record, scratch, elapsed


def alive_with(marker: str) -> list[str]:
    """Processes (not zombies) whose argv holds `marker`, straight from /proc."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read()
            with open(f"/proc/{name}/stat", "rb") as fh:
                state = fh.read().rpartition(b")")[2].split()[0]
        except OSError:
            continue
        if marker.encode() in cmd and state != b"Z":
            found.append(name + " " + cmd.replace(b"\0", b" ").decode(errors="replace"))
    return found
