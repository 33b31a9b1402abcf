"""What a candidate injects through its solver.yaml or its environment: loader variables
(`LD_PRELOAD`, `LD_*`, `GLIBC_TUNABLES`), relative PATH entries or ones inside the candidate
folder, and NUL bytes, refused at load; `LD_PRELOAD` given to a run anyway reaching only the
candidate's own processes; fake runtimes (`bwrap`, `setpriv`, `env`, `sh`) first on its PATH;
the harness's secrets in the environment and /proc; a solver.yaml that injects (every instance
`invalid`, nothing of the candidate runs); the candidate's interpreter wherever the harness's venv
lives, and a failed Python probe in one line; `auto` never falling back to local silently.

Each test asserts what the candidate achieved (the library it preloaded was not loaded by the
set-up, the secret it tried to read is not in its output), not only the status.

Run as root and as an unprivileged user (`.ci/run` does both):
``pytest -m hostile tests/unit/runner``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tcsexam import forkserver, launch
from tcsexam.errors import InputError
from tcsexam.runner.sandboxes import choose_sandbox, probe_python
from tcsexam.runner.solver.candidate import load_candidate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_support import ROOT, SANDBOXES, box_or_skip, sh  # noqa: E402

pytestmark = pytest.mark.hostile


# -- refused at load: loader variables, the candidate's PATH, NUL bytes ------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"PATH": ".:/usr/bin"}, "PATH entry '.' is relative"),
        ({"PATH": "/usr/bin:bin"}, "PATH entry 'bin' is relative"),
        ({"PATH": "{dir}/bin:/usr/bin"}, "inside the candidate folder"),
        ({"LD_PRELOAD": "./hx.so"}, "may not set LD_PRELOAD"),
        ({"LD_LIBRARY_PATH": "."}, "may not set LD_LIBRARY_PATH"),
        ({"GLIBC_TUNABLES": "glibc.malloc.check=3"}, "may not set GLIBC_TUNABLES"),
        ({"TCSEXAM_SEED": "1"}, "may not set TCSEXAM_SEED"),
    ],
)
def test_loader_variables_and_candidate_path_are_refused_at_load(tmp_path, env, expected):
    folder = tmp_path / "c"
    folder.mkdir()
    env = {k: v.format(dir=folder.resolve()) for k, v in env.items()}
    (folder / "solver.yaml").write_text(json.dumps({"command": ["sh", "x"], "env": env}))
    with pytest.raises(InputError) as info:
        load_candidate(folder)
    assert expected in str(info.value) and "\n" not in str(info.value) and "solver.yaml" in str(info.value)


@pytest.mark.parametrize(
    "doc",
    [
        {"command": ["sh", "-c", "true"], "env": {"V": "a\0b"}},
        {"command": ["sh", "-c", "true\0false"]},
        {"command": ["sh", "x"], "build": ["make\0"]},
        {"command": ["sh", "x"], "tasks": {"t": {"command": ["sh", "\0"]}}},
    ],
)
def test_nul_byte_in_command_or_environment_is_refused_at_load(tmp_path, doc):
    (tmp_path / "solver.yaml").write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        load_candidate(tmp_path)
    line = str(info.value)
    assert "NUL byte" in line and "solver.yaml" in line and "\n" not in line


# -- 19.1: the candidate's environment never reaches the sandbox's own set-up ------------------


def _preload_library(folder: Path) -> Path:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    src = folder / "hx.c"
    src.write_text(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n"
        "__attribute__((constructor)) static void hx(void) {\n"
        '  const char *log = getenv("HX_LOG"); char comm[64] = {0}; FILE *c = fopen("/proc/self/comm", "r");\n'
        "  if (c) { if (!fgets(comm, sizeof comm, c)) comm[0] = 0; fclose(c); }\n"
        '  FILE *f = log ? fopen(log, "a") : NULL; if (f) { fprintf(f, "%d %s", (int)getuid(), comm); fclose(f); }\n'
        "}\n"
    )
    lib = folder / "hx.so"
    subprocess.run([shutil.which("cc") or "gcc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    lib.chmod(0o755)
    return lib


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_loader_variables_reach_only_the_candidate(reachable_tmp, sandbox):
    """LD_PRELOAD given to a run (as solver.yaml can no longer do) is loaded by the candidate's
    own processes only: never by the launcher, bwrap, setpriv or env, and never as root."""
    box = box_or_skip(sandbox)
    lib = _preload_library(reachable_tmp)
    log = reachable_tmp / "work" / "loaded"
    sh(box, "true", reachable_tmp, env={"LD_PRELOAD": str(lib), "HX_LOG": str(log)}, readonly=[reachable_tmp])
    loaded = log.read_text().splitlines() if log.exists() else []
    comms = {line.split(" ", 1)[1] for line in loaded}
    assert comms and comms <= {"sh", "true"}, loaded  # the candidate's sh (and nothing of the set-up)
    assert all(not line.startswith("0 ") for line in loaded) or not ROOT, loaded


def test_fake_runtime_on_the_candidate_path_never_runs(reachable_tmp):
    """A `bwrap` (and `setpriv`, `env`, `sh`) first on the candidate's PATH: the harness's own
    run, found by absolute path, and the candidate is still inside its pid namespace."""
    box = box_or_skip("bwrap")
    fake = reachable_tmp / "fake"
    fake.mkdir()
    marker = reachable_tmp / "fake-ran"
    for name in ("bwrap", "setpriv", "env", "sh"):
        (fake / name).write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        (fake / name).chmod(0o755)
    out, _ = sh(box, "echo $$", reachable_tmp, env={"PATH": f"{fake}:/usr/bin:/bin"}, readonly=[fake])
    assert not marker.exists()
    assert int(out.split()[0]) <= 3  # its own pid namespace: the real bwrap ran it


# -- 19.4: no harness secret in the environment or /proc ---------------------------------------


HARNESS = """
import json, sys
from tcsexam.runner.sandboxes import get_sandbox, run_limited
from tcsexam.runner.limiter import Limits
work = sys.argv[2]
script = "env; for f in /proc/[0-9]*/environ; do cat $f 2>/dev/null; echo; done; cat /proc/$PPID/environ 2>/dev/null"
out = run_limited(["/bin/sh", "-c", script], cwd=work, limits=Limits(wall_s=60), sandbox=get_sandbox(sys.argv[1]),
                  env={"PATH": "/usr/bin:/bin", "HOME": work, "TMPDIR": work}, writable_paths=[work])
print(json.dumps([out.stdout_tail, out.stderr_tail, out.sandbox_error]))
"""


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_harness_secret_in_the_environment_or_proc(reachable_tmp, sandbox):
    """The harness (here a subprocess started with the secret in its environment, as a Ray actor
    is) runs a candidate that dumps its environment and every /proc/*/environ it can read."""
    box_or_skip(sandbox)
    secret = f"sk-test-{uuid.uuid4().hex}"
    work = reachable_tmp / "work"
    work.mkdir()
    env = dict(os.environ, OPENAI_API_KEY=secret, TCSEXAM_JUDGE_API_KEY=secret)
    done = subprocess.run([sys.executable, "-c", HARNESS, sandbox, str(work)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out, err, sandbox_error = json.loads(done.stdout.splitlines()[-1])
    assert sandbox_error is None and out.strip(), (out, err)
    assert secret not in out + err


@pytest.mark.parametrize("sandbox", [s for s in SANDBOXES if s != "local"])
def test_a_candidate_cannot_reach_the_runs_fork_server(reachable_tmp, sandbox, tmp_path):
    """A local run's fork server (tcsexam.forkserver) runs tcsexam commands for the run's jobs,
    and a candidate is a descendant of one: its socket must be out of a candidate's sight (in
    /tmp, which every sandbox replaces) and its token out of a candidate's knowledge (the harness's
    environment). Given even the whole address, the candidate neither sees nor connects to it."""
    box = box_or_skip(sandbox)
    server = forkserver.start(tmp_path / "server.log")
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(server.socket) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.path.exists(server.socket)
        script = f'ls -la {server.folder} 2>&1; [ -S {server.socket} ] && echo "REACHABLE $(id -u)" || echo unseen'
        out, err = sh(box, script, reachable_tmp, env={launch.ENV: server.address})
        assert "unseen" in out and "REACHABLE" not in out, (out, err)
        assert "socket" not in out  # not even listed
    finally:
        forkserver.stop(server)
    assert " exit " not in (tmp_path / "server.log").read_text()  # nothing was run by the server


# -- 20.1: a solver.yaml that injects; the harness's Python wherever it lives ------------------


def _tiny_task(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "g.txt").write_text("2 1\n1 2 1\n")
    (folder / "task.yaml").write_text(
        "id: tiny\nproblem: maxcut\nkind: objective\ndirection: maximize\nlimits: {wall_s: 5}\n"
        f"instance_dir: {folder}\ninstances: [{{name: g, file: g.txt}}, {{name: h, file: g.txt}}]\n"
    )
    return folder / "task.yaml"


def test_an_injecting_solver_yaml_makes_every_instance_invalid(reachable_tmp):
    """The documented contract for an unusable solver.yaml: every instance `invalid` with the one
    line, nothing of the candidate ever runs (its `./bwrap` would leave a marker)."""
    from tcsexam.runner.engine.batch import PoolOptions, RunOptions
    from tcsexam.runner.solver.orchestrate import RunHooks, TaskJob, run_job

    task = _tiny_task(reachable_tmp / "task")
    cand = reachable_tmp / "cand"
    cand.mkdir()
    marker = reachable_tmp / "ran"
    (cand / "bwrap").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (cand / "bwrap").chmod(0o755)
    (cand / "solver.yaml").write_text(
        'command: [sh, -c, "touch ' + str(marker) + '"]\nenv: {PATH: ".:/usr/bin:/bin"}\n'
    )
    summary = run_job(
        TaskJob(task=task, candidate_dir=cand, output=reachable_tmp / "out" / "records.json"),
        RunOptions(sandbox="bwrap", progress=False, pool=PoolOptions(use_ray=False)),
        RunHooks(log=lambda m: None),
    )
    assert [r.status for r in summary.records] == ["invalid", "invalid"]
    assert all("PATH entry '.' is relative" in r.message and r.termination == "candidate" for r in summary.records)
    assert not marker.exists()


def _venv_under_tmp() -> Path:
    """A real venv under /tmp whose site-packages reach the harness's own (numpy, pysat)."""
    import site
    import sysconfig

    folder = Path(__import__("tempfile").mkdtemp(prefix="tcsexam-venv-", dir="/tmp"))
    folder.chmod(0o755)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder / "v")], check=True)
    purelib = sysconfig.get_path("purelib", vars={"base": str(folder / "v"), "platbase": str(folder / "v")})
    dirs = [*site.getsitepackages(), sysconfig.get_path("purelib")]
    Path(purelib, "harness.pth").write_text("".join(f"import site; site.addsitedir({d!r})\n" for d in dirs))
    return folder


PROBE = """
import sys
from tcsexam.runner.sandboxes import get_sandbox, probe_python
box = get_sandbox(sys.argv[1]); box.check_available()
print(sys.prefix); print(probe_python(box))
"""


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_python_probe_passes_for_a_venv_under_tmp(sandbox):
    box_or_skip(sandbox)
    folder = _venv_under_tmp()
    try:
        python = folder / "v" / "bin" / "python"
        done = subprocess.run([str(python), "-c", PROBE, sandbox], capture_output=True, text=True, cwd="/")
        assert done.returncode == 0, done.stderr
        prefix, verdict = done.stdout.splitlines()[-2:]
        assert prefix.startswith("/tmp/") and verdict == "None", done.stdout
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if ROOT:  # the read-only view of that venv (local, as root) goes with it
            from tcsexam.runner.sandboxes.runas import sweep_python_views

            sweep_python_views()


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_a_failed_probe_is_one_line(sandbox):
    box = box_or_skip(sandbox)
    line = probe_python(box, modules=("numpy", "tcsexam_no_such_module"))
    assert line is not None and "\n" not in line and "tcsexam_no_such_module" in line
    assert probe_python(box) is None


def test_a_failed_python_probe_stops_the_job_with_one_line(reachable_tmp, monkeypatch):
    from tcsexam.runner.engine.batch import PoolOptions, RunOptions
    from tcsexam.runner.solver import orchestrate
    from tcsexam.runner.solver.orchestrate import RunHooks, TaskJob, run_job

    task = _tiny_task(reachable_tmp / "task")
    cand = reachable_tmp / "cand"
    cand.mkdir()
    (cand / "solver.yaml").write_text("command: [python3, -c, 'import numpy']\n")
    monkeypatch.setattr(
        orchestrate, "probe_python", lambda box, **kw: probe_python(box, modules=("tcsexam_missing_mod",), **kw)
    )
    output = reachable_tmp / "out" / "records.json"
    with pytest.raises(InputError) as info:
        run_job(
            TaskJob(task=task, candidate_dir=cand, output=output),
            RunOptions(sandbox="bwrap", progress=False, pool=PoolOptions(use_ray=False)),
            RunHooks(log=lambda m: None),
        )
    line = str(info.value)
    assert "\n" not in line and "tcsexam_missing_mod" in line and "nothing was run" in line
    assert not output.exists() and not list((reachable_tmp / "out" / "records").glob("*.json"))


# -- 19.4: auto never falls back to local silently ---------------------------------------------


def test_auto_refuses_local_unless_candidates_are_trusted(monkeypatch):
    from tcsexam.runner.sandboxes.apptainer import ApptainerSandbox
    from tcsexam.runner.sandboxes.bwrap import BwrapSandbox
    from tcsexam.runner.sandboxes.docker import DockerSandbox

    for cls in (BwrapSandbox, DockerSandbox, ApptainerSandbox):
        monkeypatch.setattr(
            cls,
            "check_available",
            lambda self, n=cls.name: (_ for _ in ()).throw(InputError(f"sandbox {n}: missing here")),
        )
    monkeypatch.delenv("TCSEXAM_ALLOW_UNSANDBOXED", raising=False)
    with pytest.raises(InputError) as info:
        choose_sandbox("auto")
    line = str(info.value)
    assert "\n" not in line and "no sandbox for untrusted candidates" in line and "--allow-unsandboxed" in line
    assert all(f"{n}: missing here" in line for n in ("bwrap", "docker", "apptainer"))
    box, why = choose_sandbox("auto", allow_unsandboxed=True)
    assert box.name == "local" and "NOT CONTAINED" in why
