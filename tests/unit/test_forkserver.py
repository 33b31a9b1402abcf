"""The fork server (tcsexam.forkserver) and the console script that uses it (tcsexam.launch), with
real processes: a real server, real `tcsexam` commands through it, real signals."""

from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tcsexam import forkserver, launch
from tcsexam.cli import exit_status

TCSEXAM = [sys.executable, "-c", "import sys; from tcsexam.launch import run_command; sys.exit(run_command())"]


def _wait_for(predicate, timeout=30.0, what="the condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def server(tmp_path):
    """A server for this test process's descendants; its log's text through `.log()`."""
    log = tmp_path / "server.log"
    started = forkserver.start(log)
    _wait_for(lambda: os.path.exists(started.socket), what="the server to listen")
    yield started, log
    forkserver.stop(started)


def _served_lines(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if " exit " in line]


def _run(args, env_extra=None, cwd=None, **kwargs):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([*TCSEXAM, *args], env=env, cwd=cwd, capture_output=True, text=True, **kwargs)


def test_a_served_command_runs_in_the_server_as_it_would_here(server, tmp_path):
    started, log = server
    (tmp_path / "job.log").write_text("tcsexam run: error: the task file is bad\n")
    here = _run(["job-failed", "job.log", "3"], cwd=tmp_path)
    served = _run(["job-failed", "job.log", "3"], {launch.ENV: started.address}, cwd=tmp_path)
    # the same exit code, output and error stream, from the client's folder (a relative path)
    assert (served.returncode, served.stdout, served.stderr) == (here.returncode, here.stdout, here.stderr)
    assert served.returncode == 3 and "the task file is bad" in served.stdout + served.stderr
    assert len(_served_lines(log)) == 1 and "tcsexam job-failed job.log" in _served_lines(log)[0]


def test_the_command_gets_the_clients_umask(server, tmp_path):
    started, log = server
    args = ["attempts", "missing-row", "--model", "m", "--track", "theorem", "--item", "i", "--attempt", "1"]
    args += ["--reason", "no submission", "--protocol", "", "--output", "row.json"]
    done = subprocess.run(
        ["sh", "-c", 'umask 077 && exec "$@"', "sh", *TCSEXAM, *args],
        env={**os.environ, launch.ENV: started.address},
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "row.json").read_text())["model"] == "m"
    assert (tmp_path / "row.json").stat().st_mode & 0o777 == 0o600  # the server's umask is 022
    assert "tcsexam attempts missing-row" in _served_lines(log)[0]


def test_entering_a_command_takes_the_clients_process_state(tmp_path):
    """`Command.enter` in a forked child: streams, folder, whole environment, umask, argv,
    ignored signals, its own process group."""
    out = tmp_path / "stdout"
    with open(out, "wb") as stream:
        command = forkserver.Command(
            argv=["tcsexam", "x"],
            cwd=str(tmp_path),
            env={"ONLY_HERE": "1", "PATH": os.environ["PATH"]},
            umask=0o027,
            streams={1: os.dup(stream.fileno())},
            ignored=[int(signal.SIGHUP)],
        )
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child reports through its stdout)
            try:
                command.enter()
                mask = os.umask(0)
                state = {
                    "cwd": os.getcwd(),
                    "env": dict(os.environ),
                    "umask": mask,
                    "argv": sys.argv,
                    "hup_ignored": signal.getsignal(signal.SIGHUP) is signal.SIG_IGN,
                    "own_group": os.getpgid(0) == os.getpid(),
                    "stdin": os.path.realpath("/proc/self/fd/0"),
                }
                os.write(1, json.dumps(state).encode())
            finally:
                os._exit(0)
        os.close(command.streams[1])
        assert os.waitpid(pid, 0)[1] == 0
    state = json.loads(out.read_text())
    assert state == {
        "cwd": str(tmp_path),
        "env": {"ONLY_HERE": "1", "PATH": os.environ["PATH"]},
        "umask": 0o027,
        "argv": ["tcsexam", "x"],
        "hup_ignored": True,
        "own_group": True,
        "stdin": os.devnull,  # a stream the client did not have
    }


def test_without_a_server_or_for_an_unserved_command_it_runs_here(server, tmp_path):
    started, log = server
    (tmp_path / "job.log").write_text("x\n")
    gone = _run(["job-failed", "job.log", "4"], {launch.ENV: "0" * 32 + f":{tmp_path}/no-such-socket"}, cwd=tmp_path)
    assert gone.returncode == 4
    malformed = _run(["job-failed", "job.log", "4"], {launch.ENV: started.socket}, cwd=tmp_path)  # no token
    assert malformed.returncode == 4
    version = _run(["--version"], {launch.ENV: started.address})
    assert version.returncode == 0 and "tcsexam" in version.stdout
    assert _served_lines(log) == []


def test_a_client_without_the_token_is_refused_and_runs_its_command_itself(server, tmp_path):
    """What a process that found the socket but not the harness's environment gets: nothing run
    by the server (its request is not even decoded)."""
    started, log = server
    (tmp_path / "job.log").write_text("x\n")
    wrong = "f" * 32 + ":" + started.socket
    done = _run(["job-failed", "job.log", "7"], {launch.ENV: wrong}, cwd=tmp_path)
    assert done.returncode == 7
    assert "a wrong token" in log.read_text() and _served_lines(log) == []


def test_a_client_of_another_tcsexam_is_refused_and_runs_its_command_itself(server, tmp_path):
    """A job whose tcsexam is another one (here a copy of the package first on its PYTHONPATH; a
    conda environment of its own under `--sdm conda`) runs its own, not the server's."""
    started, log = server
    copy = tmp_path / "other"
    shutil.copytree(Path(launch.__file__).parent, copy / "tcsexam", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "job.log").write_text("x\n")
    env = {launch.ENV: started.address, "PYTHONPATH": f"{copy}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = _run(["job-failed", "job.log", "8"], env, cwd=tmp_path)
    assert done.returncode == 8
    assert "another Python or tcsexam" in log.read_text() and _served_lines(log) == []


def test_served_words():
    assert launch.served(["attempts", "verdict-row", "--verdict", "v.json"])
    assert launch.served(["-v", "proof", "check"])
    assert launch.served(["run", "--task", "t.yaml"])  # the Solver job: its usage in heartbeat.json
    assert not launch.served(["batch", "run"])  # a batch's members run in its one process
    assert not launch.served(["runner", "ray-head", "start"])  # a Ray head outlives its command
    assert not launch.served(["--version"]) and not launch.served([])


def _fifo_log(tmp_path) -> Path:
    """A job log that blocks whoever reads it (a FIFO nobody writes): a served command that waits."""
    fifo = tmp_path / "blocking.log"
    os.mkfifo(fifo)
    return fifo


def _served_pid(log: Path) -> int:
    return int(_served_lines(log)[0].split("(pid ")[1].split(")")[0])


def _running_pids(log: Path, tmp_path) -> list[int]:
    """The served commands still running (those whose argv names this test's folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if str(tmp_path).encode() in cmdline and b"forkserver" in cmdline:
                found.append(int(entry.name))
    return found


def test_a_signal_to_the_client_reaches_the_command_and_the_client_ends_the_same_way(server, tmp_path):
    started, log = server
    fifo = _fifo_log(tmp_path)
    client = subprocess.Popen([*TCSEXAM, "job-failed", str(fifo), "3"], env={**os.environ, launch.ENV: started.address})
    _wait_for(lambda: "listening" in log.read_text() and _count_handlers(started) >= 1, what="the command to start")
    time.sleep(0.3)
    client.send_signal(signal.SIGTERM)
    assert client.wait(timeout=30) == -signal.SIGTERM
    _wait_for(lambda: _served_lines(log), what="the server's line")
    assert " exit -15 " in _served_lines(log)[0]


def _count_handlers(server) -> int:
    """The server's children (handlers, one per running command)."""
    children = Path(f"/proc/{server.process.pid}/task/{server.process.pid}/children")
    return len(children.read_text().split())


def test_a_client_killed_outright_leaves_no_command_running(server, tmp_path):
    started, log = server
    fifo = _fifo_log(tmp_path)
    client = subprocess.Popen([*TCSEXAM, "job-failed", str(fifo), "3"], env={**os.environ, launch.ENV: started.address})
    _wait_for(lambda: _count_handlers(started) >= 1, what="the command to start")
    time.sleep(0.3)
    client.kill()
    client.wait()
    _wait_for(lambda: _served_lines(log), what="the command to be ended", timeout=forkserver.GRACE_S + 30)
    assert " exit -15 " in _served_lines(log)[0]  # SIGTERM first (its grace was not needed)
    assert not Path(f"/proc/{_served_pid(log)}").exists()


def test_a_process_of_another_run_is_refused_and_runs_its_command_itself(tmp_path):
    """The server serves its owner's descendants only: here its owner is a helper process, and
    this test process (the helper's parent, not its descendant) is refused."""
    log = tmp_path / "server.log"
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys
                from tcsexam import forkserver
                s = forkserver.start({str(log)!r})
                print(s.address, flush=True)
                sys.stdin.read()
                forkserver.stop(s)
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert owner.stdout is not None
        address = owner.stdout.readline().strip()
        _wait_for(lambda: os.path.exists(address.partition(":")[2]), what="the server to listen")
        (tmp_path / "job.log").write_text("x\n")
        done = _run(["job-failed", "job.log", "5"], {launch.ENV: address}, cwd=tmp_path)
        assert done.returncode == 5
        assert "refused pid" in log.read_text() and _served_lines(log) == []
    finally:
        assert owner.stdin is not None
        owner.stdin.close()
        owner.wait(timeout=30)


def test_the_server_ends_with_its_owner(tmp_path):
    log = tmp_path / "server.log"
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import time\nfrom tcsexam import forkserver\ns = forkserver.start({str(log)!r})\n"
            "print(s.socket, s.process.pid, flush=True)\ntime.sleep(600)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert owner.stdout is not None
    socket_path, pid = owner.stdout.readline().split()
    _wait_for(lambda: os.path.exists(socket_path), what="the server to listen")
    owner.kill()
    owner.wait()
    _wait_for(lambda: not os.path.exists(socket_path), timeout=10 + forkserver.OWNER_CHECK_S, what="the socket to go")
    _wait_for(lambda: not os.path.exists(os.path.dirname(socket_path)), what="its folder to go")
    _wait_for(lambda: not _alive(int(pid)), what="the server to end")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_stop_removes_the_socket_folder(tmp_path):
    started = forkserver.start(tmp_path / "server.log")
    forkserver.stop(started)
    assert not os.path.exists(started.folder) and started.process.poll() is not None


def test_descends_from():
    assert forkserver.descends_from(os.getpid(), os.getpid())
    assert forkserver.descends_from(os.getpid(), os.getppid())
    assert forkserver.descends_from(os.getpid(), 1)
    assert not forkserver.descends_from(os.getppid(), os.getpid())
    assert not forkserver.descends_from(2**22 + 7, os.getpid())  # no such process


def _module_level_environ_reads(path: Path) -> list[int]:
    """The lines of `path` that read the environment when the module is imported (outside any
    function body: module statements, class bodies, default values, decorators)."""
    found: list[int] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for part in [*node.args.defaults, *node.args.kw_defaults, *getattr(node, "decorator_list", [])]:
                if part is not None:
                    visit(part, in_function)
            return  # the body runs when called
        if not in_function:
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb", "umask", "getcwd"):
                found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, in_function)

    visit(ast.parse(path.read_text()), False)
    return found


def test_no_preloaded_module_reads_the_environment_when_imported():
    """The server imports PRELOAD before any command's environment, folder and umask exist: a
    module that read $X (or the umask, or the folder) at import would give every served command
    the server's."""
    probe = "import importlib, json, sys\nfrom tcsexam import forkserver\n"
    probe += "[importlib.import_module(m) for m in forkserver.PRELOAD]\n"
    probe += "print(json.dumps([m.__file__ for n, m in sys.modules.items() if n.startswith('tcsexam') and getattr(m, '__file__', None)]))"
    files = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout)
    offenders = {f: lines for f in files if (lines := _module_level_environ_reads(Path(f)))}
    assert offenders == {}


def test_the_environment_check_finds_a_module_level_read(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "import os\nA = os.environ.get('X')\ndef f(b=os.getenv('Y')):\n    return os.environ['Z']\nM = os.umask(0)\n"
    )
    assert _module_level_environ_reads(module) == [2, 3, 5]


def test_start_names_the_server_to_the_jobs_and_stop_forgets_it(tmp_path, monkeypatch):
    from tcsexam.workflow import startup

    monkeypatch.delenv(launch.ENV, raising=False)
    startup.start_fork_server(str(tmp_path / "logs" / "fork-server.log"))
    try:
        path = os.environ[launch.ENV].partition(":")[2]
        _wait_for(lambda: os.path.exists(path), what="the server to listen")
        done = _run(["job-failed", str(tmp_path / "job.log"), "6"])
        assert done.returncode == 6
        assert _served_lines(tmp_path / "logs" / "fork-server.log")
    finally:
        startup.stop_fork_server()
    assert launch.ENV not in os.environ and not os.path.exists(path)


def test_warm_keeps_what_passed_for_the_commands_forked_later(monkeypatch):
    """`warm` (in the server, before it listens) checks the run's sandbox once: a sandbox made
    later in the process (a served command's) starts without its test sandbox and Python probe;
    what failed is not kept (a command finds it out itself, with its own line)."""
    from tcsexam.containment import Limiter
    from tcsexam.proofs import check
    from tcsexam.runner import sandboxes
    from tcsexam.runner.sandboxes import bwrap

    box = sandboxes.get_sandbox("bwrap")
    try:
        box.check_available()
    except Exception as exc:
        pytest.skip(str(exc))
    monkeypatch.setattr(bwrap, "_WORKING", {})
    monkeypatch.setattr(bwrap, "_HELP", {})
    monkeypatch.setattr(sandboxes, "_PYTHON_OK", set())
    monkeypatch.setattr(check, "_PROBED", {"docker": ("sandbox docker: coqc does not run inside: no", "")})
    said = forkserver.warm(forkserver.Warm("bwrap", "auto", proofs=shutil.which("coqc") is not None))
    assert said.startswith("checked sandbox bwrap, python3 inside") and "stopped" not in said, said
    assert "docker" not in check._PROBED  # a failure is never handed down
    if shutil.which("coqc"):
        assert check._PROBED["bwrap"][0] is None and check._PROBED["bwrap"][1]

    def no_probe(*args, **kwargs):
        raise AssertionError("probed again")

    monkeypatch.setattr(bwrap.BwrapSandbox, "_probe", no_probe)
    monkeypatch.setattr(bwrap.subprocess, "run", no_probe)  # neither `bwrap --help` nor a test sandbox
    later = sandboxes.get_sandbox("bwrap")
    later.check_available()
    assert (later.exe, later.origin) == (box.exe, box.origin)
    monkeypatch.setattr(later, "run", no_probe)
    assert sandboxes.probe_python(later, limiter=Limiter.AUTO) is None


def test_warm_says_where_it_stopped_and_keeps_nothing_failed(monkeypatch):
    from tcsexam.runner.sandboxes import bwrap

    monkeypatch.setattr(bwrap, "_WORKING", {})
    monkeypatch.setattr(bwrap.shutil, "which", lambda *a, **k: None)  # no bwrap at all now
    monkeypatch.setattr(bwrap, "bundled_bwrap", lambda: None)
    said = forkserver.warm(forkserver.Warm("bwrap", "auto"))
    assert "stopped: sandbox bwrap:" in said and "not found" in said and "\n" not in said
    assert not bwrap._WORKING


def test_a_served_solver_job_reports_its_own_usage(server, tmp_path, project_root):
    """`tcsexam run` runs in the server (no Python start per Solver job); Snakemake's `benchmark:`
    would see only the client, so the job's heartbeat.json carries its own usage: this process's
    CPU and memory with those of what it waited for, the candidates included."""
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap not installed")
    started, log = server
    out = tmp_path / "out" / "records.json"
    args = ["run", "--task", "sat-satlib", "--candidate", str(project_root / "solvers/demo-fast/sat-satlib/1")]
    args += ["--output", str(out), "--no-progress", "--instances", "uf50-01", "uf75-01"]
    done = _run(args, {launch.ENV: started.address}, cwd=project_root)
    assert done.returncode == 0, done.stderr[-2000:]
    assert any(" tcsexam run " in line for line in _served_lines(log)), log.read_text()
    records = json.loads(out.read_text())
    assert [r["status"] for r in records] == ["ok", "ok"]
    beat = json.loads((out.parent / "heartbeat.json").read_text())
    assert beat["state"] == "finished" and beat["pid"] != os.getpid()
    usage = beat["usage"]
    assert usage["max_rss_mb"] > 10 and usage["cpu_s"] >= 0.9 * sum(r["cpu_s"] for r in records), (usage, records)


def test_a_served_usage_error_ends_as_it_would_here(server, tmp_path):
    # argparse's exit inside the command: the forked command ends by `end_process`, same status
    started, log = server
    here = _run(["attempts", "missing-row", "--model", "m"], cwd=tmp_path)
    served = _run(["attempts", "missing-row", "--model", "m"], {launch.ENV: started.address}, cwd=tmp_path)
    assert (served.returncode, served.stdout, served.stderr) == (here.returncode, here.stdout, here.stderr)
    assert served.returncode == 2 and "required" in served.stderr
    assert "exit 2" in _served_lines(log)[0]


def test_end_process_joins_threads_and_runs_atexit_hooks_before_it_ends(tmp_path):
    # the forked command's end: what the interpreter's exit does before its teardown, then os._exit
    script = textwrap.dedent(
        f"""
        import atexit, sys, threading, time
        from tcsexam.cli import end_process
        out = open({str(tmp_path / "buffered.txt")!r}, "w")
        atexit.register(out.close)  # a buffered file flushed by an atexit hook
        out.write("flushed at exit")
        def late():
            time.sleep(0.3)
            open({str(tmp_path / "thread.txt")!r}, "w").write("joined")
        threading.Thread(target=late).start()
        print("said", end="")  # stdout is a pipe: buffered until the end
        end_process(7, hooks=True)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 7 and done.stdout == "said", done.stderr
    assert (tmp_path / "buffered.txt").read_text() == "flushed at exit"
    assert (tmp_path / "thread.txt").read_text() == "joined"


def test_exit_status_is_the_interpreters(capsys):
    assert exit_status(SystemExit()) == 0
    assert exit_status(SystemExit(3)) == 3
    assert exit_status(SystemExit(256 + 4)) == 4
    assert exit_status(SystemExit("tcsexam: stopped")) == 1
    assert capsys.readouterr().err == "tcsexam: stopped\n"


def test_a_run_of_candidates_has_the_machine_measured_once_for_its_served_jobs(tmp_path, project_root):
    """With `candidates`, a child of the server measures the machine (`measure_machine`) beside the
    socket; a Solver job served afterwards records that measurement (scope "run") instead of its
    own, and the same job run on its own measures itself (scope "job")."""
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap not installed")
    log = tmp_path / "server.log"
    started = forkserver.start(log, forkserver.Warm("auto", "auto", candidates=True))
    try:
        measured = Path(started.folder) / "calibration.json"
        _wait_for(measured.is_file, what="the run's calibration")
        run = json.loads(measured.read_text())
        assert run["scope"] == "run" and run["measurements"] == 3 and run["repeats"] == 5 and run["speed"] > 0
        assert "measured the machine for the run's jobs" in log.read_text()
        args = ["run", "--task", "sat-satlib", "--candidate", str(project_root / "solvers/demo-fast/sat-satlib/1")]
        args += ["--no-progress", "--instances", "uf50-01"]
        out = tmp_path / "served" / "records.json"
        done = _run([*args, "--output", str(out)], {launch.ENV: started.address}, cwd=project_root)
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads((out.parent / "calibration.json").read_text()) == run
        assert "machine calibration (the run's on this machine)" in done.stderr
        alone = tmp_path / "alone" / "records.json"
        done = _run([*args, "--output", str(alone)], cwd=project_root)
        assert done.returncode == 0, done.stderr[-2000:]
        own = json.loads((alone.parent / "calibration.json").read_text())
        assert own["scope"] == "job" and "measurements" not in own and own["checksums"] == run["checksums"]
    finally:
        forkserver.stop(started)
    assert not os.path.exists(started.folder)
