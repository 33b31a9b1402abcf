"""Sandboxes: the command lines / container configuration they build, and real bwrap runs."""

from __future__ import annotations

import os
import pickle
import shutil
import threading

import pytest

from tcsexam.errors import InputError
from tcsexam.runner.limiter import Limits, MiB, RunPaths
from tcsexam.runner.sandboxes import NAMES, get_sandbox, run_limited


def test_registry():
    assert NAMES == ("local", "bwrap", "docker", "apptainer")
    with pytest.raises(InputError, match="unknown sandbox 'vm'"):
        get_sandbox("vm")
    get_sandbox("local").check_available()


def test_bwrap_command_order():
    box = get_sandbox("bwrap")
    cmd = box.command(
        ["python3", "s.py"],
        cwd="/c",
        paths=RunPaths(readonly_paths=["/c", "/i", "/w"], writable_paths=["/w", "/c/s/w"]),
        status_fd=5,
        ready_fd=6,
    )
    assert os.path.isabs(cmd[0]) and cmd[0].endswith("/bwrap")  # resolved once, never through a PATH
    for flag in ("--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session"):
        assert flag in cmd
    joined = " ".join(cmd)
    assert "--ro-bind / /" in joined and "--dev /dev" in joined and "--proc /proc" in joined
    tmpfs, rw, ro = joined.index("--tmpfs /tmp"), joined.index("--bind /w /w"), joined.index("--ro-bind /w /w")
    assert tmpfs < rw < ro  # binds survive the private /tmp; read-only wins for the same path
    assert joined.index("--ro-bind /c /c") < joined.index("--bind /c/s/w /c/s/w")  # parents first
    assert (
        cmd[-2:] == ["python3", "s.py"]
    )  # (as root the setpriv drop comes right before it) and "--json-status-fd" in cmd and "printf up >/proc/self/fd/6" in joined


def test_bwrap_unavailable_fails_once_with_one_line():
    with pytest.raises(InputError, match="sandbox bwrap: 'no-such-bwrap' not found"):
        get_sandbox("bwrap", executable="no-such-bwrap").check_available()


def test_bwrap_real_run_and_pid_namespace(tmp_path):
    box = get_sandbox("bwrap")
    try:
        box.check_available()
    except InputError as exc:
        pytest.skip(str(exc))
    (tmp_path / "w").mkdir()
    tmp_path.chmod(0o755)  # as root the candidate runs unprivileged: its folder must be readable to it
    out = run_limited(
        ["sh", "-c", "echo $$; touch w/ok; touch /etc/nope; exit 5"],
        cwd=tmp_path,
        limits=Limits(wall_s=10),
        sandbox=box,
        writable_paths=[tmp_path / "w"],
        readonly_paths=[tmp_path],
    )
    assert out.exit_code == 5 and out.sandbox == "bwrap" and out.sandbox_error is None
    assert int(out.stdout_tail.split()[0]) <= 3  # its own pid namespace
    assert (tmp_path / "w" / "ok").exists() and "Read-only" in out.stderr_tail


LINKED_VENV_RUN = """
import sys
from tcsexam.runner.limiter import Limits
from tcsexam.runner.sandboxes import get_sandbox, run_limited
box = get_sandbox("bwrap")
box.check_available()
bound = sys.argv[2] == "bound"  # the link's folder bound (the link shows), or only the tmpfs /tmp above it
out = run_limited([sys.executable, "-c", "import numpy, sys; print(sys.prefix)"], cwd=sys.argv[1] if bound else "/",
                  limits=Limits(wall_s=60), sandbox=box, readonly_paths=[sys.argv[1]] if bound else [])
print(out.exit_code, out.sandbox_error, out.stdout_tail.strip(), out.stderr_tail.strip()[-300:], sep="|")
"""


@pytest.mark.parametrize("folder", ["bound", "tmpfs"])
def test_bwrap_runs_the_harness_python_through_a_linked_venv(tmp_path, folder):
    """A venv reached through a symbolic link (`.venv -> elsewhere`): sys.prefix is the link,
    on which nothing can be mounted: a bound folder shows it, over a tmpfs it is made again."""
    import subprocess
    import sys

    try:
        get_sandbox("bwrap").check_available()
    except InputError as exc:
        pytest.skip(str(exc))
    tmp_path.chmod(0o755)
    link = tmp_path / "venv-link"
    link.symlink_to(sys.prefix)
    python = link / "bin" / os.path.basename(sys.executable)
    src = os.path.dirname(os.path.dirname(os.path.abspath(__import__("tcsexam").__file__)))
    env = dict(os.environ, PYTHONPATH=src)
    proc = subprocess.run(
        [str(python), "-c", LINKED_VENV_RUN, str(tmp_path), folder],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    code, error, prefix, stderr = proc.stdout.strip().split("|", 3)
    assert (code, error) == ("0", "None"), stderr
    assert prefix == str(link), prefix  # the candidate's Python is the harness's, through the link


def test_bwrap_setup_failure_is_a_sandbox_error(tmp_path):
    box = get_sandbox("bwrap")
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap not installed")
    out = run_limited(
        ["true"],
        cwd=tmp_path,
        limits=Limits(wall_s=10),
        sandbox=box,
        readonly_paths=[tmp_path / "does-not-exist"],
    )
    assert out.sandbox_error and "bwrap did not start" in out.sandbox_error


def _vanishing_mount_bwrap(failing: int):
    """bwrap whose first `failing` set-ups fail the way a host mount that vanished mid-set-up
    fails them (a remount of a path that is gone); `type(box).setups` counts its set-ups."""
    from tcsexam.runner.sandboxes.bwrap import BwrapSandbox

    class Box(BwrapSandbox):
        setups = 0

        def base_args(self, tmp_mb=512):
            Box.setups += 1
            gone = ["--remount-ro", f"/tcsexam-vanished-{os.getpid()}"] if Box.setups <= failing else []
            return [*super().base_args(tmp_mb), *gone]

    return Box()


@pytest.mark.parametrize("failing, setups, ok", [(1, 2, True), (2, 3, True), (5, 3, False)])
def test_bwrap_set_up_again_after_a_mount_race(tmp_path, failing, setups, ok):
    """A set-up that failed on a mount (the host's mounts changed while bwrap bound them: Docker
    creating a container) is started again, at most 3 times in all; nothing ran before."""
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap not installed")
    box = _vanishing_mount_bwrap(failing)
    tmp_path.chmod(0o755)  # as root the candidate runs unprivileged: its folder must be readable to it
    out = run_limited(
        ["sh", "-c", "echo ran"], cwd=tmp_path, limits=Limits(wall_s=30), sandbox=box, readonly_paths=[tmp_path]
    )
    assert type(box).setups == setups
    if ok:
        assert out.sandbox_error is None and out.exit_code == 0 and out.stdout_tail == "ran\n", out
    else:
        assert "Can't remount" in out.sandbox_error and "ran" not in out.stdout_tail


def test_bwrap_other_set_up_failures_are_not_tried_again(tmp_path):
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap not installed")
    box = _vanishing_mount_bwrap(0)
    out = run_limited(
        ["true"],
        cwd=tmp_path,
        limits=Limits(wall_s=10),
        sandbox=box,
        readonly_paths=[tmp_path / "does-not-exist"],
    )
    assert "Can't find source path" in out.sandbox_error and type(box).setups == 1


def test_docker_config():
    pytest.importorskip("docker")
    box = get_sandbox("docker", image="img:1")
    cfg = box.container_config(
        ["python3", "s.py", "/i"],
        cwd="/c",
        env={"A": "1"},
        limits=Limits(wall_s=2, cpu_s=4, mem_mb=300, nproc=10, output_bytes=MiB),
        readonly_paths=["/c", "/i"],
        writable_paths=["/w"],
    )
    assert cfg["image"] == "img:1" and cfg["command"] == ["python3", "s.py", "/i"]
    assert cfg["network_disabled"] is True and cfg["read_only"] is True and cfg["init"] is True
    assert cfg["mem_limit"] == cfg["memswap_limit"] == 300 * MiB
    assert cfg["nano_cpus"] == 2 * 10**9 and cfg["pids_limit"] == 10
    assert cfg["volumes"] == {
        "/w": {"bind": "/w", "mode": "rw"},
        "/c": {"bind": "/c", "mode": "ro"},
        "/i": {"bind": "/i", "mode": "ro"},
    }
    assert "/tmp" in cfg["tmpfs"] and cfg["working_dir"] == "/c" and cfg["environment"] == {"A": "1"}
    fsize = [u for u in cfg["ulimits"] if u["Name"] == "fsize"][0]
    assert fsize["Soft"] == MiB + 1


class _EngineLikeContainer:
    """A container as the Docker engine couples its calls: the followed log ends only after the
    kill, and the kill returns only once the stream has been read to its end."""

    def __init__(self, chunk: bytes):
        self.chunk = chunk
        self.killed, self.drained, self.kill_returned = threading.Event(), threading.Event(), threading.Event()
        self.kill_saw_drained = None
        self.followed = []

    def logs(self, stdout, stderr, stream, follow):
        self.followed.append((stdout, stderr, stream, follow))
        return self._stream() if stdout else iter(())

    def _stream(self):
        yield self.chunk  # past the cap: the follower asks for the kill
        self.killed.wait(timeout=120)
        yield self.chunk  # what the engine still held when the program died
        self.drained.set()

    def kill(self, signal):
        self.killed.set()
        self.kill_saw_drained = self.drained.wait(timeout=120)
        self.kill_returned.set()


def test_every_sandbox_travels_to_an_actor_as_it_was_chosen():
    """A run context carries its sandbox object to each Ray actor: it pickles as its own state
    (docker without its engine client, which the copy opens itself), never rebuilt by name."""
    for name in NAMES:
        box = get_sandbox(name, **({"image": "img:1"} if name == "docker" else {}))
        if name == "docker":
            box._client = threading.Lock()  # stands for the engine client: it does not pickle
        copy = pickle.loads(pickle.dumps(box))
        assert type(copy) is type(box) and copy.name == name
        expected = {**vars(box), "_client": None} if name == "docker" else vars(box)
        assert vars(copy) == expected


def test_docker_stream_follower_keeps_reading_while_the_kill_waits():
    from tcsexam.runner.sandboxes.docker import _Streams

    container = _EngineLikeContainer(b"x" * 2048)
    streams = _Streams(container, cap=1024, same=False)
    streams.start()
    for thread in streams.threads:
        thread.join(timeout=300)
    assert sorted(container.followed) == [(False, True, True, True), (True, False, True, True)]
    assert container.drained.is_set() and streams.over == "stdout" and streams.seen == [4096, 0]
    assert container.kill_returned.wait(timeout=300)  # once it has seen the stream drained
    assert container.kill_saw_drained is True


def test_docker_without_engine_fails_at_start():
    pytest.importorskip("docker")
    box = get_sandbox("docker")
    try:
        box.check_available()
    except InputError as exc:
        assert str(exc).startswith("sandbox docker:") and "\n" not in str(exc)
    else:
        pytest.skip("a Docker engine is running here")


def test_apptainer_argv_and_unavailable():
    box = get_sandbox("apptainer", image="/img.sif", executable="apptainer")
    cmd = box.command(
        ["python3", "s.py"], cwd="/c", env={"PATH": "/p", "X": "1"}, readonly_paths=["/i"], writable_paths=["/w"]
    )
    joined = " ".join(cmd)
    for part in (
        "exec --containall --no-home --net --network none",
        "--bind /w:/w:rw",
        "--bind /i:/i:ro",
        "--env X=1",
        "--env PATH=/p",
        "--pwd /c /img.sif python3 s.py",
    ):
        assert part in joined
    if shutil.which("apptainer") is None and shutil.which("singularity") is None:
        with pytest.raises(InputError, match="sandbox apptainer"):
            box.check_available()


@pytest.mark.parametrize("sig", [11, 9, 6])
def test_death_by_signal_is_a_signal_under_local_and_bwrap(tmp_path, sig):
    """bwrap reports a death by signal N as exit code 128+N: `classify` turns it back."""
    outcomes = {}
    for name in ("local", "bwrap"):
        box = get_sandbox(name)
        try:
            box.check_available()
        except InputError as exc:
            pytest.skip(str(exc))
        outcomes[name] = run_limited(
            ["sh", "-c", f"kill -{sig} $$"],
            cwd=tmp_path,
            limits=Limits(wall_s=10),
            sandbox=box,
            readonly_paths=[tmp_path],
        )
    for out in outcomes.values():
        assert (out.termination, out.signal, out.exit_code) == ("signal", sig, None)
    assert outcomes["local"].message == outcomes["bwrap"].message


def test_classify_rules():
    from tcsexam.records import Termination
    from tcsexam.runner.limiter import Ended, classify

    lim = Limits(wall_s=2, cpu_s=2, mem_mb=100, output_bytes=10)
    assert classify(lim, Ended(exit_code=137, signal=None, wall_s=0.1, signal_from_exit_code=True)).signal == 9
    assert classify(lim, Ended(exit_code=137, signal=None, wall_s=0.1)).termination == Termination.EXIT
    assert classify(lim, Ended(exit_code=0, signal=None, wall_s=3)).termination == "walltime"
    assert classify(lim, Ended(exit_code=None, signal=24, wall_s=1)).termination == "cputime"
    assert classify(lim, Ended(exit_code=None, signal=25, wall_s=1)).termination == "output"
    assert classify(lim, Ended(exit_code=1, signal=None, wall_s=1, oom_killed=True)).termination == "memory"
    v = classify(
        lim, Ended(exit_code=1, signal=None, wall_s=1, stderr_tail="MemoryError", allocation_failures_mean_memory=True)
    )
    assert v.termination == "memory"
    v = classify(lim, Ended(exit_code=None, signal=9, wall_s=1, enforced="nproc", enforced_detail="x"))
    assert (v.termination, v.message) == ("nproc", "x")
    assert {t.value for t in Termination} >= {"exit", "signal", "launch", "candidate", "build"}


def _exited(sandbox: str, code: int, stderr: str):
    from tcsexam.runner.limiter import ProcessOutcome

    return ProcessOutcome(
        exit_code=code,
        signal=None,
        termination="exit",
        wall_s=0.1,
        cpu_s=None,
        peak_mem_mb=None,
        stdout_tail="",
        stderr_tail=stderr,
        limiter="light",
        sandbox=sandbox,
        killed_by_harness=False,
    )


def test_sandboxes_answer_their_own_questions():
    """What callers used to decide by comparing sandbox names, each sandbox object answers."""
    import sys

    local, bwrap = get_sandbox("local"), get_sandbox("bwrap")
    docker, apptainer = get_sandbox("docker", image="some/image:1"), get_sandbox("apptainer", image="x.sif")
    assert [b.isolates_files for b in (local, bwrap, docker, apptainer)] == [False, True, True, True]
    assert [b.candidate_python for b in (local, bwrap, apptainer)] == [sys.executable] * 3
    assert docker.candidate_python == "python3" and not docker.uses_harness_python  # the image's own
    assert [b.image_name for b in (local, bwrap, apptainer)] == [None] * 3 and docker.image_name == "some/image:1"
    assert local.image_id() is None and bwrap.image_id() is None and apptainer.image_id() is None


@pytest.mark.parametrize(
    ("sandbox", "code", "stderr", "expected"),
    [
        ("bwrap", 127, "/bin/sh: 1: exec: ./nope: not found\n", True),
        ("bwrap", 126, "x\n/bin/sh: 1: exec: ./s.sh: Permission denied", True),
        ("bwrap", 127, "my own message", False),  # the program's own exit code 127
        ("bwrap", 1, "/bin/sh: 1: exec: ./nope: not found", False),
        ("bwrap", 127, "", False),
        ("docker", 127, "/bin/sh: 1: exec: solve: not found", True),
        ("docker", 2, "/bin/sh: 1: exec: solve: not found", False),
        ("apptainer", 255, 'FATAL: "nope": executable file not found in $PATH', True),
        ("apptainer", 1, "executable file not found", False),
        ("local", 127, "/bin/sh: 1: exec: ./nope: not found", False),  # local: a LaunchError instead
    ],
)
def test_not_started_is_each_sandboxs_own(sandbox, code, stderr, expected):
    box = get_sandbox(sandbox, image="x.sif") if sandbox == "apptainer" else get_sandbox(sandbox)
    assert box.not_started(_exited(sandbox, code, stderr)) is expected
