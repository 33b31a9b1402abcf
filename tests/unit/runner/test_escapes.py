"""No process of a run survives it, under every limiter and sandbox, whatever it does; and a
candidate cannot change the evaluation's inputs. One hostile candidate per escape technique
(tests/unit/runner/escapes/solve.py), each followed by a search of the process table (/proc) for
the unique marker every process it starts carries in its argv."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
import uuid
from pathlib import Path

import pytest

from tcsexam.errors import InputError
from tcsexam.runner.execute import InstanceOptions, load_candidate, run_instance
from tcsexam.runner.limiter import cgroup_support
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.tasks import load_task

HERE = Path(__file__).resolve().parent / "escapes"
GRAPH = "5 6\n1 2 1\n2 3 1\n3 4 1\n4 5 1\n5 1 1\n1 3 1\n"
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


def docker_required() -> bool:
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("TCSEXAM_REQUIRE_DOCKER") == "1"


def sandbox_or_skip(name: str):
    box = get_sandbox(name)
    try:
        box.check_available()
    except InputError as exc:
        if name == "docker" and docker_required():
            pytest.fail(f"the Docker engine must run here (CI / TCSEXAM_REQUIRE_DOCKER=1): {exc}")
        pytest.skip(str(exc))
    return box


CONFIGS = [
    pytest.param("local", "light", id="local-light"),
    pytest.param("local", "cgroup", id="local-cgroup"),
    pytest.param("bwrap", "light", id="bwrap-light"),
    pytest.param("bwrap", "cgroup", id="bwrap-cgroup"),
    pytest.param("docker", "auto", id="docker"),
]


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    root = tmp_path_factory.mktemp("escape-task")
    (root / "g.txt").write_text(GRAPH)
    (root / "task.yaml").write_text(
        "id: tiny-maxcut\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        "limits: {wall_s: 2, cpu_s: 4, mem_mb: 300, output_mb: 1, nproc: 64}\n"
        f"instance_dir: {root}\ninstances:\n  - {{name: g, file: g.txt, best_known: 5}}\n"
    )
    return load_task(root / "task.yaml")


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


def hostile(tmp_path: Path, how: str, victim: Path | None = None) -> Path:
    folder = tmp_path / f"cand-{how}"
    folder.mkdir()
    shutil.copy(HERE / "solve.py", folder / "solve.py")
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
        task, task.instances[0], candidate, sandbox=box, limits=limits, seed=1, scratch_dir=tmp_path / "scratch",
        options=InstanceOptions(limiter=limiter),
    )  # fmt: skip


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


def test_local_candidate_gets_a_private_copy(task, tmp_path):
    folder = tmp_path / "peek"
    folder.mkdir()
    (folder / "solver.yaml").write_text('command: ["sh", "-c", "echo {instance} > {workdir}/seen; exit 3"]\n')
    candidate = load_candidate(folder)
    limits = task.limits.for_threads(1)
    run_instance(task, task.instances[0], candidate, sandbox=get_sandbox("local"), limits=limits, seed=0,
                 scratch_dir=tmp_path / "s", options=InstanceOptions(limiter="light"))  # fmt: skip
    seen = (tmp_path / "s" / "work" / "seen").read_text().strip()
    assert seen != str(Path(task.instances[0].path).resolve()) and Path(seen).name == "g.txt"


@pytest.mark.parametrize("sandbox", ["bwrap", "docker"])
def test_candidate_folder_and_hidden_paths_are_out_of_reach(task, tmp_path, sandbox):
    box = sandbox_or_skip(sandbox)
    secret = tmp_path / "results"
    secret.mkdir()
    (secret / "records.json").write_text("[]")
    folder = tmp_path / "writer"
    folder.mkdir()
    script = (
        f"echo x > solver.yaml.bak; echo $? > {{workdir}}/own; cat {secret}/records.json > {{workdir}}/peek; "
        "echo $? >> {workdir}/own; exit 5"
    )
    (folder / "solver.yaml").write_text(f'command: ["sh", "-c", "{script}"]\n')
    candidate = load_candidate(folder)
    limits = task.limits.for_threads(1)
    from tcsexam.runner import execute

    scratch = tmp_path / "s"
    seen = {}
    real = execute._execute

    def spy(record, job, work, *rest):
        seen["work"] = work
        real(record, job, work, *rest)
        seen["own"] = (work / "own").read_text().split()

    execute._execute = spy
    try:
        record = run_instance(task, task.instances[0], candidate, sandbox=box, limits=limits, seed=0,
                              scratch_dir=scratch, options=InstanceOptions(hidden_paths=(str(secret),)))  # fmt: skip
    finally:
        execute._execute = real
    assert record.exit_code == 5, record.message
    assert not (folder / "solver.yaml.bak").exists()
    assert seen["own"][0] != "0" and seen["own"][1] != "0"  # both failed inside the sandbox


def test_escape_checker_sees_a_live_process(tmp_path):
    """The process-table check itself can fail: a marked process is found while it lives."""
    import subprocess
    import sys

    marker = f"tcsexam-escape-{uuid.uuid4().hex}"
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", marker])
    try:
        deadline = time.monotonic() + 10
        while not alive_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert alive_with(marker)
    finally:
        proc.kill()
        proc.wait()
    assert not alive_with(marker)


HOSTILE = Path(__file__).resolve().parent / "hostile"
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
    """The hostile candidates of test_execute_hostile get the documented status under docker too."""
    box = sandbox_or_skip("docker")
    folder = tmp_path / name
    shutil.copytree(HOSTILE / name, folder)
    marker = f"hostile-{uuid.uuid4().int % 10**9}"
    text = (folder / "solver.yaml").read_text().replace("hostile-{seed}", marker)
    (folder / "solver.yaml").write_text(text)
    candidate = load_candidate(folder)
    limits = task.limits.for_threads(candidate.threads, grace_s=0.3)
    record = run_instance(task, task.instances[0], candidate, sandbox=box, limits=limits, seed=0,
                          scratch_dir=tmp_path / "s")  # fmt: skip
    status, check = DOCKER_CASES[name]
    assert record.status == status, (record.termination, record.message)
    assert check(record), record.to_dict()
    assert record.sandbox == "docker" and not alive_with(marker)


def test_docker_missing_program_is_invalid(task, tmp_path):
    box = sandbox_or_skip("docker")
    folder = tmp_path / "missing"
    folder.mkdir()
    (folder / "solver.yaml").write_text('command: ["no-such-program-xyz", "{instance}"]\n')
    record = run_instance(task, task.instances[0], load_candidate(folder), sandbox=box,
                          limits=task.limits.for_threads(1), seed=0, scratch_dir=tmp_path / "s")  # fmt: skip
    assert record.status == "invalid" and "could not be started" in record.message, record.message


def test_docker_network_is_off(task, tmp_path):
    import socket

    box = sandbox_or_skip("docker")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    try:
        folder = tmp_path / "network"
        shutil.copytree(HOSTILE / "network", folder)
        (folder / "port.txt").write_text(str(server.getsockname()[1]))
        record = run_instance(task, task.instances[0], load_candidate(folder), sandbox=box,
                              limits=task.limits.for_threads(1), seed=0, scratch_dir=tmp_path / "s")  # fmt: skip
    finally:
        server.close()
    assert record.status == "ok", record.message
    stderr = (tmp_path / "s" / "stderr.log").read_text()
    assert "NETWORK: failed" in stderr and "connected" not in stderr
