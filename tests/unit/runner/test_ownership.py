"""A run's processes and scratch folders are removed only by their owner or after its death (issue 32.3).

- Forced pid reuse (as root, in a private pid namespace): job A's actor runs a candidate and is
  SIGKILLed; job B is started on A's very pid (`/proc/sys/kernel/ns_last_pid`) and runs a
  candidate; then A's clean-up runs as the driver does it for a lost actor (`kill_run_orphans`,
  `remove_run_scratch` by A's owner token) and as a job's start does it (`sweep_dead_scratch`).
  A's folder goes, B's run is untouched: its scratch is still there while its candidate waits,
  and the candidate then finishes `ok` with the right objective.
- A scratch folder removed, or a work folder removed or replaced, under a running candidate is
  `infrastructure_error` (the machine's fault), never `crash`/`invalid`, under local (as root: the
  candidate uid cannot touch them) and bwrap; the pool retries it like any infrastructure failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from tcsexam.runner.ownership.scratch import make_scratch, release_scratch
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.solver.execute import run_instance
from tcsexam.tasks import load_task

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_support import sandbox_or_skip  # noqa: E402

SRC = str(Path(__file__).resolve().parents[3] / "src")
GRAPH = "5 6\n1 2 1\n2 3 1\n3 4 1\n4 5 1\n5 1 1\n1 3 1\n"
HANG_S = 240  #: only a run that never comes back misses this


def _task(folder: Path) -> Path:
    (folder / "g.txt").write_text(GRAPH)
    (folder / "task.yaml").write_text(
        "id: own-maxcut\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        "limits: {wall_s: 120, mem_mb: 300}\n"
        f"instance_dir: {folder}\ninstances:\n  - {{name: g, file: g.txt, best_known: 5}}\n"
    )
    return folder / "task.yaml"


def _candidate(folder: Path, tag: str) -> Path:
    """A candidate that says it runs (`{workdir}/ready-TAG`), waits for GO in its own folder (bound
    under every sandbox) and writes a cut of value 4."""
    folder.mkdir(parents=True)
    script = (
        f"touch {{workdir}}/ready-{tag}; i=0; "
        f"while [ ! -e {folder}/GO ] && [ $i -lt 2000 ]; do sleep 0.05; i=$((i+1)); done; "
        "printf '0 1 0 1 0\\n' > {solution}"
    )
    (folder / "solver.yaml").write_text(f"command: {json.dumps(['sh', '-c', script])}\n")
    folder.chmod(0o755)
    return folder


def _ready(roots: list[Path], tag: str, timeout_s: float = HANG_S) -> Path:
    """The work folder whose candidate said it runs."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for root in roots:
            found = list(root.glob(f"*/work/ready-{tag}"))
            if found:
                return found[0].parent
        time.sleep(0.02)
    raise AssertionError(f"no candidate {tag} started")


# ---- forced pid reuse ------------------------------------------------------------------------

#: one job's actor: runs the instance the way a pool's actor does (`execute_instance`)
JOB = r"""
import json, sys
from pathlib import Path
from tcsexam.runner.sandboxes import runas
runas.RUN_DIR = Path(sys.argv[4])  # a private interpreter view: its mounts die with this namespace
from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.ownership.owner import owner_token
from tcsexam.runner.solver.attempt import execute_instance, RunContext
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.tasks import load_task
task = load_task(sys.argv[1])
ctx = RunContext(task=task, candidate=load_candidate(sys.argv[2]), sandbox=get_sandbox("local"),
                 limits=task.limits.for_threads(1), scratch_root=sys.argv[3])
print(owner_token(), flush=True)
record = execute_instance(ctx, "g")
print(json.dumps({"status": str(record.status), "message": record.message, "A": record.A}), flush=True)
"""

#: runs as pid 1 of a private pid namespace: argv = task, candidate A, candidate B, scratch root, run dir
DRIVER = r"""
import json, os, signal, subprocess, sys, time
from pathlib import Path
from tcsexam.runner.limiter.orphans import kill_run_orphans
from tcsexam.runner.ownership.scratch import remove_run_scratch, sweep_dead_scratch
from tcsexam.runner.ownership.owner import owner_needle

task, cand_a, cand_b, root, run_dir = sys.argv[1:6]

def job(cand):
    proc = subprocess.Popen([sys.executable, "-c", sys.argv[6], task, cand, root, run_dir],
                            stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()

def ready(tag):
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        found = list(Path(root).glob(f"*/work/ready-{tag}"))
        if found:
            return found[0].parent
        time.sleep(0.02)
    raise SystemExit(f"candidate {tag} never started")

def marked(token):
    needle, found = owner_needle(token), []
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and needle in open(f"/proc/{entry.name}/environ", "rb").read():
                found.append(int(entry.name))
        except OSError:
            pass
    return found

a, token_a = job(cand_a)
work_a = ready("a")
a.kill()  # the actor dies: nothing of its own clean-up runs
a.wait()
for _ in range(50):  # job B's actor on A's pid
    with open("/proc/sys/kernel/ns_last_pid", "w") as fh:
        fh.write(str(a.pid - 1))
    b, token_b = job(cand_b)
    if b.pid == a.pid:
        break
    b.kill(); b.wait()
else:
    raise SystemExit("could not start job B on the pid of A's actor")
work_b = ready("b")
deadline = time.monotonic() + 30
while marked(token_a) and time.monotonic() < deadline:  # A's candidate dies with its launcher
    time.sleep(0.05)
# A's clean-up: the driver's for a lost actor, then the next job's start
killed = kill_run_orphans(token_a)
removed = remove_run_scratch(token_a, root)
swept = sweep_dead_scratch(root)
state = {"pid_a": a.pid, "pid_b": b.pid, "tokens_differ": token_a != token_b, "killed": killed,
         "removed": removed, "swept": swept, "a_scratch_left": work_a.parent.exists(),
         "b_work_intact": (work_b / "ready-b").exists(), "b_running": bool(marked(token_b)),
         "a_marked_left": marked(token_a)}
(Path(cand_b) / "GO").write_text("")
out, _ = b.communicate(timeout=240)
state["b_record"] = json.loads(out.strip().splitlines()[-1])
print(json.dumps(state), flush=True)
"""


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="ns_last_pid needs root")
def test_a_reused_pid_never_makes_a_live_run_look_dead(tmp_path, reachable_tmp):
    task = _task(tmp_path)
    cand_a, cand_b = _candidate(reachable_tmp / "cand-a", "a"), _candidate(reachable_tmp / "cand-b", "b")
    root = reachable_tmp / "scratch"
    root.mkdir()
    run_dir = reachable_tmp / "run"
    env = dict(os.environ, PYTHONPATH=SRC)
    env.pop("TCSEXAM_CANDIDATE_UID", None)  # as root: the candidates run as 65534, as in production
    argv = ["unshare", "-p", "-f", "--mount-proc", sys.executable, "-c", DRIVER]
    out = subprocess.run(
        [*argv, str(task), str(cand_a), str(cand_b), str(root), str(run_dir), JOB],
        capture_output=True,
        text=True,
        timeout=2 * HANG_S,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    state = json.loads(out.stdout.strip().splitlines()[-1])
    assert state["pid_b"] == state["pid_a"] and state["tokens_differ"], state  # the pid was reused
    assert not state["a_scratch_left"] and state["removed"] + state["swept"] == 1, state  # A's went
    assert state["a_marked_left"] == [], state
    assert state["b_work_intact"] and state["b_running"], state  # B's run untouched by A's clean-up
    assert state["b_record"]["status"] == "ok" and state["b_record"]["A"] == 4.0, state
    assert list(root.iterdir()) == [], "B's scratch was not released"


# ---- folders that vanish or are replaced under a running candidate ----------------------------


def _remove_scratch(work: Path) -> None:
    shutil.rmtree(work.parent)


def _remove_work(work: Path) -> None:
    shutil.rmtree(work)


def _replace_work(work: Path) -> None:
    os.rename(work, work.with_name("work.old"))
    work.mkdir()


INTERFERENCES = {"scratch-removed": _remove_scratch, "work-removed": _remove_work, "work-replaced": _replace_work}


def _interfered_run(tmp_path: Path, root: Path, sandbox: str, interfere, cand_root: Path | None = None) -> object:
    """One run of the waiting candidate (in `cand_root`, default `root`) in a scratch folder under
    `root` (as a pool makes it); `interfere(work)` once the candidate runs, then GO."""
    box = sandbox_or_skip(sandbox)
    task = load_task(_task(tmp_path))
    tag = uuid.uuid4().hex[:12]
    cand_dir = _candidate((cand_root or root) / f"cand-{tag}", tag)
    cand = load_candidate(cand_dir)
    scratch = make_scratch(str(root))
    out: list = []

    def run() -> None:
        limits = task.limits.for_threads(1)
        out.append(run_instance(task, "g", cand, sandbox=box, limits=limits, seed=1, scratch_dir=scratch))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    try:
        work = _ready([root, Path("/tmp")], tag)
        interfere(work)
    finally:
        (cand_dir / "GO").write_text("")
        worker.join(HANG_S)
        release_scratch(scratch)
    assert out, "the run never came back"
    return out[0]


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
@pytest.mark.parametrize("how", list(INTERFERENCES))
def test_a_folder_lost_under_a_running_candidate_is_infrastructure_error(tmp_path, reachable_tmp, sandbox, how):
    if sandbox == "local" and how != "scratch-removed" and os.geteuid() != 0:
        pytest.skip("under local as the harness's own user the candidate could do this itself: its own doing")
    record = _interfered_run(tmp_path, reachable_tmp, sandbox, INTERFERENCES[how])
    assert record.status == "infrastructure_error", (record.status, record.message)
    assert "vanished or was replaced" in record.message, record.message


def test_a_relocated_work_folder_removed_is_infrastructure_error(tmp_path, reachable_tmp):
    """As root under local, with a scratch root the candidate uid cannot reach, the run goes on in a
    folder under /tmp (`relocated`): its removal is the machine's fault too."""
    if os.geteuid() != 0:
        pytest.skip("only a root harness relocates the work folder")
    root = tmp_path / "private"
    root.mkdir(mode=0o700)
    record = _interfered_run(tmp_path, root, "local", _remove_scratch, cand_root=reachable_tmp)
    assert "relocated" in record.message, record.message  # the folder removed was the one under /tmp
    assert record.status == "infrastructure_error", (record.status, record.message)


def test_the_pool_retries_a_run_whose_scratch_vanished(tmp_path, reachable_tmp):
    """The first try's scratch folder is removed under its candidate; the pool retries it like any
    infrastructure failure and the second try is the candidate's own result."""
    from tcsexam.runner.engine.pool import InProcessPool
    from tcsexam.runner.solver.attempt import RunContext

    task = load_task(_task(tmp_path))
    tag = uuid.uuid4().hex[:12]
    cand_dir = _candidate(reachable_tmp / "cand", tag)
    root = reachable_tmp / "scratch"
    root.mkdir()
    ctx = RunContext(
        task=task,
        candidate=load_candidate(cand_dir),
        sandbox=get_sandbox("local"),
        limits=task.limits.for_threads(1),
        scratch_root=str(root),
    )

    def interfere() -> None:
        try:
            _remove_scratch(_ready([root, Path("/tmp")], tag))
        finally:
            (cand_dir / "GO").write_text("")

    helper = threading.Thread(target=interfere, daemon=True)
    helper.start()
    got: dict = {}
    InProcessPool(ctx, max_retries=1).run(["g"], lambda name, record, tries: got.update({name: (record, tries)}))
    helper.join(HANG_S)
    record, tries = got["g"]
    assert tries == 2 and record.status == "ok" and record.A == 4.0, (tries, record.status, record.message)
    assert list(root.iterdir()) == []


# ---- the scratch lock itself ------------------------------------------------------------------


def _no_directory_locks(monkeypatch) -> None:
    """This file system refuses flock on directories (as some NFS set-ups do)."""
    import errno
    import stat

    from tcsexam.runner.ownership import scratch

    real = scratch.fcntl.flock

    class Fcntl:
        LOCK_EX, LOCK_NB = scratch.fcntl.LOCK_EX, scratch.fcntl.LOCK_NB

        @staticmethod
        def flock(fd, how):
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                raise OSError(errno.EBADF, "no directory locks here")
            return real(fd, how)

    monkeypatch.setattr(scratch, "fcntl", Fcntl)


def _drop_lock(path: str) -> None:
    """What the owner's death does to its folder: the kernel closes its descriptors."""
    from tcsexam.runner.ownership import scratch

    with scratch._held_lock:
        fds = scratch._held.pop(os.path.realpath(path))
    for fd in fds:
        os.close(fd)


@pytest.mark.parametrize("directory_locks", [True, False], ids=["flock-folder", "flock-lock-file"])
def test_a_folder_is_swept_only_once_its_lock_is_free(tmp_path, monkeypatch, directory_locks):
    from tcsexam.runner.ownership import scratch

    monkeypatch.setattr(scratch, "RELOCATED_ROOT", str(tmp_path / "relocated"))
    if not directory_locks:
        _no_directory_locks(monkeypatch)
    path = make_scratch(str(tmp_path), kind="x-")
    assert os.path.exists(os.path.join(path, scratch.LOCK_FILE)) is not directory_locks
    assert scratch._try_take(path) is None  # held: even this process's other descriptor cannot take it
    _drop_lock(path)
    assert scratch.sweep_dead_scratch(str(tmp_path)) == 1 and not os.path.exists(path)


def test_staging_folders_are_swept_only_when_old_and_unlocked(tmp_path, monkeypatch):
    from tcsexam.runner.ownership import scratch
    from tcsexam.runner.ownership.owner import owner_token

    monkeypatch.setattr(scratch, "RELOCATED_ROOT", str(tmp_path / "relocated"))
    staging = tmp_path / f"{scratch.STAGING_PREFIX}{scratch._machine()}-{owner_token()}-abcdefgh"
    staging.mkdir()  # an owner between mkdtemp and its lock, or one that died there
    assert scratch.sweep_dead_scratch(str(tmp_path)) == 0 and staging.is_dir()
    old = time.time() - scratch.STAGING_MAX_AGE_S - 60
    os.utime(staging, (old, old))
    assert scratch.sweep_dead_scratch(str(tmp_path)) == 1 and not staging.exists()


def test_a_token_not_a_pid_says_whose_processes_die():
    from tcsexam.runner.limiter.orphans import kill_run_orphans
    from tcsexam.runner.ownership.owner import owner_needle, owner_token, run_marker

    assert run_marker(7).startswith(f"TCSEXAM_RUN_MARKER={owner_token()}-")
    for bad in (str(os.getpid()), "", "1-", owner_token()[:-1]):
        with pytest.raises(ValueError):
            owner_needle(bad)
    key, _, value = run_marker("mine").partition("=")
    other = "0" * 32  # another owner's token: its processes are never this owner's
    proc = subprocess.Popen(["sleep", "60"], env={key: value, "PATH": os.environ["PATH"]})
    try:
        assert kill_run_orphans(other) == 0 and proc.poll() is None
        assert kill_run_orphans(owner_token()) == 1
        assert proc.wait(timeout=30) == -9
    finally:
        proc.kill()
        proc.wait()


def test_a_forked_child_has_its_own_token():
    from tcsexam.runner.ownership.owner import owner_token

    mine = owner_token()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.write(write, owner_token().encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 64).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert child != mine and len(child) == 32 and owner_token() == mine


def test_a_released_scratch_is_gone_at_once_and_its_lock_descriptors_close_soon_after(tmp_path):
    """release_scratch hands the folder's descriptors to fileio.close_later (the last one frees the
    removed folder's inode, milliseconds the next run need not wait for): closed shortly after."""
    import time

    from tcsexam.runner.ownership import scratch as scratch_module

    path = make_scratch(str(tmp_path))
    with scratch_module._held_lock:
        held = {fd: _identity(fd) for fd in scratch_module._held[os.path.realpath(path)]}
    assert held and None not in held.values()
    release_scratch(path)
    assert not os.path.exists(path) and path not in scratch_module.held_scratch()
    deadline = time.monotonic() + 10
    while any(_identity(fd) == was for fd, was in held.items()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert all(_identity(fd) != was for fd, was in held.items())  # closed (or the number reused)


def _identity(fd: int) -> tuple[int, int] | None:
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino
