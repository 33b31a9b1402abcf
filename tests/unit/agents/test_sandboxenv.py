"""The `tcsexam` Inspect sandbox environment on its own: what enters the workspace copy, the
harness's confined reads and writes, and calls through the project's sandbox (limits, stdin,
working folder, timeout, the four solvers)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from inspect_ai.util import SandboxUserUnsupportedError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_support import sandbox_config_or_skip, staged_demo  # noqa: E402

from tcsexam.agents.sandboxenv import NOTE, TcsexamSandbox, _make_environment  # noqa: E402
from tcsexam.agents.workspace import copy_in, copy_out, read_confined, stage_manifest, write_confined  # noqa: E402
from tcsexam.errors import InputError  # noqa: E402

WID = "or_space_101_build"


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    return staged_demo(tmp_path_factory.mktemp("sandboxenv"), [WID])


def test_only_the_manifests_files_enter_and_the_submission_folder_is_made(staged, tmp_path):
    copy_in(staged, stage_manifest(staged), WID, tmp_path / "w")
    listed = sorted(f["path"] for f in stage_manifest(staged)["workspaces"][WID]["files"])
    copied = sorted(p.relative_to(tmp_path / "w").as_posix() for p in (tmp_path / "w").rglob("*") if p.is_file())
    assert copied == listed and (tmp_path / "w" / "src").is_dir()


@pytest.mark.parametrize("change", ["added", "edited"])
def test_a_staged_workspace_that_differs_from_its_manifest_is_refused(staged, tmp_path, change):
    import shutil

    copy = tmp_path / "staged"
    shutil.copytree(staged, copy)
    if change == "added":
        (copy / WID / "data" / "reference_objectives_copy.csv").write_text("or_space_101_build,2862.5\n")
        match = "not in the stage manifest"
    else:
        (copy / WID / "metadata.json").write_text("{}\n")
        match = "changed since it was staged"
    with pytest.raises(InputError, match=match):
        copy_in(copy, stage_manifest(copy), WID, tmp_path / "w")
    assert not (tmp_path / "w").exists()


def test_a_stage_without_a_passed_audit_is_refused(tmp_path):
    (tmp_path / "manifest.json").write_text('{"workspaces": {}, "leakage_audit": {"passed": false}}')
    with pytest.raises(InputError, match="leakage audit"):
        stage_manifest(tmp_path)


def test_confined_reads_and_writes_never_leave_the_workspace(tmp_path):
    root, outside = tmp_path / "w", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret").write_text("2862.5")
    write_confined(root, "src/deep/main.py", b"print(1)\n", None)
    assert read_confined(root, "src/deep/main.py", 100) == b"print(1)\n"
    assert read_confined(root, str(root / "src" / "deep" / "main.py"), 100) == b"print(1)\n"
    (root / "dirlink").symlink_to(outside)
    (root / "filelink").symlink_to(outside / "secret")
    os.link(outside / "secret", root / "hardlink")
    os.mkfifo(root / "fifo")
    for path in ("../outside/secret", str(outside / "secret"), "src/../../outside/secret"):
        with pytest.raises(PermissionError, match="outside the workspace"):
            read_confined(root, path, 100)
        with pytest.raises(PermissionError, match="outside the workspace"):
            write_confined(root, path, b"pwned", None)
    for path, words in (("dirlink/secret", "symbolic link"), ("filelink", "symbolic link"), ("hardlink", "hard link")):
        with pytest.raises(PermissionError, match=words):
            read_confined(root, path, 100)
        with pytest.raises(PermissionError, match=words):
            write_confined(root, path, b"pwned", None)
    with pytest.raises(PermissionError, match="not a regular file"):
        read_confined(root, "fifo", 100)
    with pytest.raises(IsADirectoryError):
        read_confined(root, "src", 100)
    with pytest.raises(FileNotFoundError):
        read_confined(root, "absent", 100)
    with pytest.raises(OverflowError):
        read_confined(root, "src/deep/main.py", 3)
    assert (outside / "secret").read_text() == "2862.5"
    out = tmp_path / "copy"
    assert sorted(copy_out(root, out)) == ["dirlink", "fifo", "filelink"]
    assert (out / "src" / "deep" / "main.py").is_file() and not (out / "dirlink").exists()


@pytest.fixture
def environment(staged, tmp_path):
    config = sandbox_config_or_skip(call_time_s=20, call_nproc=64, call_mem_mb=1024)
    env = _make_environment(
        config, {"staged_dir": str(staged), "workspace_id": WID, "incoming_dir": str(tmp_path / "in")}
    )
    yield env
    env.finish()


def run(coro):
    return anyio.run(lambda: coro)


def test_calls_run_in_the_workspace_with_stdin_and_a_working_folder(environment):
    result = run(environment.exec(["bash", "-c", "pwd; cat; echo err >&2; exit 3"], input="from stdin\n", cwd="src"))
    assert result.returncode == 3 and not result.success
    assert result.stdout.splitlines() == [str(environment.workspace / "src"), "from stdin"]
    assert result.stderr.strip() == "err"


def test_the_four_solvers_solve_inside(environment):
    code = (
        "import pulp, highspy, gurobipy, coptpy\n"
        "p = pulp.LpProblem('t', pulp.LpMaximize); x = pulp.LpVariable('x', 0, 3, cat='Integer'); p += x\n"
        "p.solve(pulp.PULP_CBC_CMD(msg=0)); print('cbc', pulp.value(x))\n"
        "m = gurobipy.Model(); m.Params.OutputFlag = 0; y = m.addVar(ub=3, vtype='I')\n"
        "m.setObjective(y, gurobipy.GRB.MAXIMIZE); m.optimize(); print('gurobi', m.ObjVal)\n"
    )
    result = run(environment.exec(["python3", "-"], input=code))
    assert result.success, result.stderr
    assert "cbc 3.0" in result.stdout and "gurobi 3.0" in result.stdout


def test_a_limit_stops_the_call_and_says_so(environment):
    result = run(environment.exec(["python3", "-c", "b = bytearray(2 * 1024**3); print('allocated')"]))
    assert not result.success and "allocated" not in result.stdout
    assert NOTE in result.stderr or "MemoryError" in result.stderr


def test_the_process_limit_holds_inside_a_call(environment):
    """However the limits are enforced here (cgroups as root, RLIMIT_NPROC in the call's own user
    namespace as an unprivileged user), a call cannot hold more than its process limit (64)."""
    code = (
        "import os, time\n"
        "n = 0\n"
        "for _ in range(200):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(30)\n"
        "            os._exit(0)\n"
        "    except OSError:\n"
        "        break\n"
        "    n += 1\n"
        "print('forked', n)\n"
    )
    result = run(environment.exec(["python3", "-c", code]))
    assert "forked 200" not in result.stdout, (result.stdout, result.stderr)


def test_a_timeout_the_caller_gives_raises_and_another_user_is_refused(environment):
    with pytest.raises(TimeoutError):
        run(environment.exec(["sleep", "30"], timeout=1))
    with pytest.raises(SandboxUserUnsupportedError):
        run(environment.exec(["id"], user="root"))


def test_the_worked_workspace_is_copied_out_when_the_sample_ends(staged, tmp_path):
    config = sandbox_config_or_skip()
    incoming = tmp_path / "in" / WID
    env = _make_environment(config, {"staged_dir": str(staged), "workspace_id": WID, "incoming_dir": str(incoming)})
    assert isinstance(env, TcsexamSandbox)
    run(env.write_file("src/main.py", "print(1)\n"))
    run(env.exec(["bash", "-c", "echo made > src/by_shell.txt; ln -s /etc/passwd src/link"]))
    scratch = env.scratch
    env.finish()
    assert (incoming / "src" / "main.py").read_text() == "print(1)\n"
    assert (incoming / "src" / "by_shell.txt").read_text() == "made\n"
    assert not (incoming / "src" / "link").exists() and not scratch.exists()


def test_calls_run_the_same_under_docker(staged, tmp_path):
    """The docker sandbox (CI has its engine and the OR-Space image): the same workspace, stdin,
    working folder, no network, a read-only system; the four solvers when the image has them."""
    from tcsexam.agents.sandboxenv import AgentSandboxConfig, resolve_sandbox
    from tcsexam.orspace.execute import DEFAULT_ORSPACE_IMAGE

    config = AgentSandboxConfig(sandbox="docker", call_time_s=60)
    try:
        box = resolve_sandbox(config)[0]
    except InputError as exc:
        pytest.skip(str(exc))
    env = _make_environment(
        config, {"staged_dir": str(staged), "workspace_id": WID, "incoming_dir": str(tmp_path / "in")}
    )
    try:
        result = run(
            env.exec(["bash", "-c", "pwd; cat; touch /etc/x 2>&1 || true; ls ../data"], input="in\n", cwd="src")
        )
        assert result.success, result.stderr
        lines = result.stdout.splitlines()
        assert lines[:2] == [str(env.workspace / "src"), "in"] and "table_1.csv" in result.stdout
        assert "Read-only file system" in result.stdout or "Permission denied" in result.stdout
        net = "import socket\ntry:\n socket.create_connection(('1.1.1.1', 80), timeout=3); print('CONNECTED')\nexcept OSError: print('none')"
        assert run(env.exec(["python3", "-"], input=net)).stdout.strip() == "none"
        if box.image_name == DEFAULT_ORSPACE_IMAGE:
            solvers = run(env.exec(["python3", "-c", "import pulp, highspy, gurobipy, coptpy; print('ok')"]))
            assert solvers.stdout.strip() == "ok", solvers.stderr
        run(env.write_file("src/main.py", "print(1)\n"))
    finally:
        env.finish()
    assert (tmp_path / "in" / "src" / "main.py").read_text() == "print(1)\n"
