"""The harness reads what a candidate controls without following, waiting or leaking (issue 19.3).

Each hostile candidate puts something else where its certificate should be (a link to a secret
host file, a chain of links, a relative link, a link to /proc/PPID/environ, a FIFO, a Unix socket,
a link to a device or a huge file, a sparse file far over the output cap, a folder, a hard link,
its work folder swapped for a link), under every sandbox that runs here (local, bwrap, docker).
What is asserted is what the candidate achieved: the secret's text appears nowhere in the record,
the harness came back (a generous deadline that only a real stall misses; no timing is asserted),
and the record is the candidate's own failure (`invalid`; over the output cap a `crash`). The same
for the candidate hash (a FIFO planted in the candidate folder under `local`), for a work folder
relocated to another file system (a FIFO left in it), and for a killed actor's scratch folder
(removed by the driver; a dead run's leftovers are swept at the next start, and `remove_tree`
never follows a link). Run as root and as an unprivileged user (`.ci/run` does both):
``pytest -m hostile tests/unit/runner``; the few tests that need root skip as a user.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from tcsexam.fileio import UntrustedFileError, read_untrusted, remove_tree
from tcsexam.records.digest import hash_candidate
from tcsexam.runner.limiter import Limits
from tcsexam.runner.ownership.scratch import (
    SCRATCH_PREFIX,
    make_scratch,
    remove_run_scratch,
    scratch_prefix,
    sweep_dead_scratch,
)
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.solver.execute import run_instance

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_support import ROOT, SANDBOXES, sandbox_or_skip, tiny_maxcut  # noqa: E402

pytestmark = pytest.mark.hostile


STALL_S = 300  #: only a harness that never comes back misses this


#: The hostile candidate: `solve.py INSTANCE SOLUTION HOW TARGET` puts something at SOLUTION.
SOLVE = r"""
import os, socket, sys

instance, solution, how, target = sys.argv[1:5]
work = os.path.dirname(solution)
if how == "symlink":            # a link to a host file the candidate must not read
    os.symlink(target, solution)
elif how == "fifo":             # the harness would block forever opening it
    os.mkfifo(solution)
elif how == "device":           # endless bytes
    os.symlink("/dev/zero", solution)
elif how == "folder":
    os.mkdir(solution)
elif how == "hardlink":         # the secret's own inode under the certificate's name
    os.link(target, solution)
elif how == "swap_work":        # the work folder itself replaced by a link to a folder of secrets
    os.rename(work, work + ".old")
    os.symlink(target, work)
elif how == "chain":            # a link to a link to a link to the secret
    os.symlink(target, work + "/l1"); os.symlink(work + "/l1", work + "/l2"); os.symlink("l2", solution)
elif how == "relative":         # a relative link climbing out of the work folder
    os.symlink(os.path.relpath(target, work), solution)
elif how == "socket":           # a Unix socket nobody answers
    s = socket.socket(socket.AF_UNIX); s.bind(solution)
elif how == "sparse":           # 1 TiB if RLIMIT_FSIZE lets it, else one byte over the cap (target)
    with open(solution, "wb") as fh:
        fh.write(b"0 1 0 1 0\n")
        try:
            fh.truncate(1 << 40)
        except OSError:
            fh.truncate(int(target))
elif how == "proc":             # a link to the harness's environment as the candidate sees it
    os.symlink("/proc/%d/environ" % os.getppid(), solution)
elif how == "good":
    open(solution, "w").write("0 1 0 1 0\nvalue 4\n")
"""


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    """The tiny MaxCut task with time to spare (wall_s 5): only a stall misses it, under docker too."""
    limits = "{wall_s: 5, cpu_s: 10, mem_mb: 300, output_mb: 1, nproc: 64}"
    return tiny_maxcut(tmp_path_factory.mktemp("reads-task"), limits)


@pytest.fixture
def secret(tmp_path):
    """A host file (mode 0600) whose text must never reach a record; its folder holds a file
    named like the certificate too (for the swapped work folder)."""
    folder = tmp_path / "secrets"
    folder.mkdir()
    token = f"SECRET-{uuid.uuid4().hex}"
    text = ("0 1 0 1 0\nvalue 4\n# " + token + "\n") * 20
    for name in ("secret.txt", "solution"):
        (folder / name).write_text(text)
        (folder / name).chmod(0o600)
    return folder / "secret.txt", token


def candidate(tmp_path: Path, how: str, target: str = "-") -> Path:
    folder = tmp_path / f"cand-{how}"
    folder.mkdir()
    (folder / "solve.py").write_text(SOLVE)
    (folder / "solver.yaml").write_text(
        f'command: ["python3", "solve.py", "{{instance}}", "{{solution}}", "{how}", "{target}"]\n'
    )
    return folder


def run_or_stall(task, folder: Path, tmp_path: Path, sandbox: str):
    """run_instance in a thread; fails (instead of hanging the suite) when it never returns."""
    box = sandbox_or_skip(sandbox)
    cand = load_candidate(folder)
    limits = task.limits.for_threads(cand.threads, grace_s=0.3)
    out: list = []
    worker = threading.Thread(
        target=lambda: out.append(
            run_instance(
                task, task.instances[0], cand, sandbox=box, limits=limits, seed=1, scratch_dir=tmp_path / "scratch"
            )
        ),
        daemon=True,
    )
    worker.start()
    worker.join(STALL_S)
    assert out, f"the harness stalled on the candidate's certificate under {sandbox}"
    return out[0]


def record_text(record) -> str:
    return json.dumps(dataclasses.asdict(record), default=str)


# -- certificates that are not the candidate's own regular file --------------------------------


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("how", ["symlink", "fifo", "device", "folder"])
def test_certificate_that_is_not_a_regular_file_is_the_candidates_failure(task, tmp_path, secret, sandbox, how):
    path, token = secret
    record = run_or_stall(task, candidate(tmp_path, how, str(path)), tmp_path, sandbox)
    assert record.status == "invalid", (record.status, record.message)
    assert record.A is None and record.claimed is None
    assert token not in record_text(record) and str(path) not in record.message
    assert "not a regular file" in record.message or "not a file the program wrote" in record.message


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_good_certificate_still_reads(task, tmp_path, sandbox):
    record = run_or_stall(task, candidate(tmp_path, "good"), tmp_path, sandbox)
    assert record.status == "ok" and record.A == 4.0, record.message


@pytest.mark.parametrize("sandbox", ["local", "bwrap", "docker"])
@pytest.mark.parametrize("how", ["chain", "relative", "socket", "sparse", "proc"])
def test_more_certificates_that_are_not_the_candidates_file(task, tmp_path, sandbox, how):
    box = sandbox_or_skip(sandbox)
    token = f"SECRET-{uuid.uuid4().hex}"
    secret = tmp_path / "secret.txt"
    secret.write_text(("0 1 0 1 0\n# " + token + "\n") * 20)
    secret.chmod(0o600)
    folder = tmp_path / "cand"
    folder.mkdir()
    (folder / "solve.py").write_text(SOLVE)
    limits = task.limits.for_threads(1, grace_s=0.3)
    target = limits.output_bytes + 1 if how == "sparse" else secret
    (folder / "solver.yaml").write_text(
        f'command: ["python3", "solve.py", "{{instance}}", "{{solution}}", "{how}", "{target}"]\n'
    )
    cand = load_candidate(folder)
    out: list = []

    def go():
        out.append(
            run_instance(
                task, task.instances[0], cand, sandbox=box, limits=limits, seed=1, scratch_dir=tmp_path / "scratch"
            )
        )

    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    worker.join(STALL_S)
    assert out, f"the harness stalled on a {how} certificate under {sandbox}"
    record = out[0]
    text = json.dumps(dataclasses.asdict(record), default=str)
    if how == "sparse":  # the cap holds: never read past it, the run is over the output limit
        assert (record.status, record.termination) == ("crash", "output"), (record.status, record.message)
    else:
        assert record.status == "invalid", (record.status, record.message)
    assert token not in text and str(secret) not in record.message and record.A is None


def test_hard_link_to_a_host_file_is_refused(task, tmp_path, secret):
    """Under local a candidate can hard-link a file it may not read into its work folder (root
    can; an unprivileged user with protected_hardlinks only its own files): never read."""
    path, token = secret
    record = run_or_stall(task, candidate(tmp_path, "hardlink", str(path)), tmp_path, "local")
    assert token not in record_text(record)
    if record.status != "crash":  # os.link refused here (protected_hardlinks): nothing to read anyway
        assert record.status == "invalid" and "hard link" in record.message, record.message


def test_work_folder_swapped_for_a_link_is_refused(task, tmp_path, secret, harness_uid):
    """Under local the scratch folder is the user's: the candidate replaces its work folder with a
    link to a folder holding a file named like the certificate."""
    path, token = secret
    record = run_or_stall(task, candidate(tmp_path, "swap_work", str(path.parent)), tmp_path, "local")
    assert record.status == "invalid", (record.status, record.message)
    assert token not in record_text(record)
    assert path.read_text().count(token) == 20  # the secrets were not touched either


@pytest.mark.skipif(not ROOT, reason="only a root harness relocates the work folder for the candidate's uid")
def test_relocated_work_folder_with_a_fifo_is_read_in_place(task, tmp_path):
    """Under local as root a scratch folder out of the candidate uid's reach runs in a folder
    under /tmp; on another file system than /tmp (here /dev/shm) the work folder used to be
    copied back, and a FIFO the candidate left there made the record `infrastructure_error`."""
    import glob
    import shutil
    import tempfile

    if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == os.stat("/tmp").st_dev:
        pytest.skip("needs /dev/shm on another file system than /tmp")
    box = sandbox_or_skip("local")
    token = f"fifo-{uuid.uuid4().hex}"
    root = Path(tempfile.mkdtemp(prefix="tcsexam-test-", dir="/dev/shm"))  # 0700: out of the uid's reach
    try:
        folder = tmp_path / "cand"
        folder.mkdir()
        folder.chmod(0o755)
        (folder / "solver.yaml").write_text(
            f"command: [sh, -c, 'mkfifo {{workdir}}/{token}; ln -s /etc/shadow {{workdir}}/link; "
            'printf "0 1 0 1 0\\\\n" > {solution}\']\n'
        )
        cand = load_candidate(folder)
        limits = task.limits.for_threads(1, grace_s=0.3)
        record = run_instance(
            task, task.instances[0], cand, sandbox=box, limits=limits, seed=1, scratch_dir=root / "scratch"
        )
        assert (record.status, record.A) == ("ok", 4.0), (record.status, record.message)
        assert not glob.glob(f"/tmp/tcsexam-run-*/work/{token}")  # its run folder went with it
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- the helper itself -------------------------------------------------------------------------


def test_read_untrusted_refuses_every_kind_but_a_regular_file(tmp_path):
    (tmp_path / "ok").write_bytes(b"x" * 100)
    assert read_untrusted(tmp_path / "ok", 10) == b"x" * 11  # the cap + 1: the caller sees it is over
    assert read_untrusted(tmp_path / "ok", 1000) == b"x" * 100
    assert read_untrusted(tmp_path / "missing", 10) is None
    os.mkfifo(tmp_path / "fifo")
    os.symlink(tmp_path / "ok", tmp_path / "link")
    os.symlink("/dev/zero", tmp_path / "zero")
    os.symlink(tmp_path / "fifo", tmp_path / "to-fifo")
    (tmp_path / "dir").mkdir()
    os.link(tmp_path / "ok", tmp_path / "hard")
    os.symlink(tmp_path / "dir", tmp_path / "dirlink")
    (tmp_path / "dir" / "inner").write_text("inner")
    for name, words in [
        ("fifo", "a FIFO"),
        ("link", "a symbolic link"),
        ("zero", "a symbolic link"),
        ("to-fifo", "a symbolic link"),
        ("dir", "a folder"),
        ("hard", "hard link"),
    ]:
        with pytest.raises(UntrustedFileError, match=words) as exc:
            read_untrusted(tmp_path / name, 10)
        assert str(tmp_path) not in str(exc.value)  # nothing of where it points
    with pytest.raises(UntrustedFileError, match="folder is a symbolic link"):
        read_untrusted(tmp_path / "dirlink" / "inner", 10)
    assert read_untrusted(tmp_path / "hard", 1000, one_link=False) == b"x" * 100


# -- the candidate hash under local ------------------------------------------------------------


def test_candidate_hash_never_opens_a_fifo_device_or_link(tmp_path):
    folder = tmp_path / "cand"
    folder.mkdir()
    (folder / "solve.py").write_text("print(1)\n")
    before = hash_candidate(folder)
    huge = tmp_path / "huge"
    with open(huge, "wb") as fh:
        fh.truncate(1 << 40)  # 1 TiB, sparse: hashing its bytes would take hours
    os.mkfifo(folder / "fifo")
    os.symlink(folder / "fifo", folder / "to-fifo")
    os.symlink("/dev/zero", folder / "zero")
    os.symlink(huge, folder / "to-huge")
    (folder / "sub").mkdir()
    os.symlink(tmp_path, folder / "sub" / "up")  # a link to a folder: listed, not followed
    out: list = []
    worker = threading.Thread(target=lambda: out.append(hash_candidate(folder)), daemon=True)
    worker.start()
    worker.join(STALL_S)
    assert out, "hash_candidate stalled on a FIFO or a device"
    assert out[0] != before
    os.unlink(folder / "fifo")
    (folder / "fifo").write_text("")  # a regular file in the FIFO's place: another hash
    assert hash_candidate(folder) != out[0]


def test_local_run_survives_a_fifo_planted_in_the_candidate_folder(task, tmp_path, harness_uid):
    """End to end under local: the candidate plants a FIFO (and a link to it) in its real folder;
    the end-of-run hash warns instead of hanging, and the next run copies the folder without it."""
    from tcsexam.runner.engine.batch import PoolOptions, RunOptions
    from tcsexam.runner.solver.orchestrate import RunHooks, TaskJob, run_job

    folder = tmp_path / "cand"
    folder.mkdir()
    (folder / "solve.py").write_text(
        "import os, sys\n"
        "d = sys.argv[3]\n"
        "if not os.path.exists(os.path.join(d, 'plant')):\n"
        "    os.mkfifo(os.path.join(d, 'plant')); os.symlink(os.path.join(d, 'plant'), os.path.join(d, 'to-plant'))\n"
        "open(sys.argv[2], 'w').write('0 1 0 1 0\\n')\n"
    )
    (folder / "solver.yaml").write_text(
        f'command: ["python3", "solve.py", "{{instance}}", "{{solution}}", "{folder}"]\n'
    )
    said: list[str] = []
    for _ in range(2):
        out: list = []

        def go(out=out):
            out.append(
                run_job(
                    TaskJob(task=task.source, candidate_dir=folder, output=tmp_path / "out" / "records.json"),
                    RunOptions(sandbox="local", progress=False, pool=PoolOptions(use_ray=False)),
                    RunHooks(log=said.append),
                )
            )

        worker = threading.Thread(target=go, daemon=True)
        worker.start()
        worker.join(STALL_S)
        assert out, "tcsexam run stalled on a FIFO in the candidate folder"
        assert [r.status for r in out[0].records] == ["ok"]
    assert stat.S_ISFIFO(os.lstat(folder / "plant").st_mode)
    assert any("changed during the run" in line for line in said)


# -- scratch: removed when an actor is killed, swept at the next start -------------------------


#: a process that makes a scratch folder under argv[1], fills it and dies (or waits: argv[2] == "live")
#: without releasing it: what a SIGKILLed actor leaves, or another job's live run
OWNER = """
import os, sys
from tcsexam.runner.ownership.scratch import make_scratch
path = make_scratch(sys.argv[1])
os.makedirs(os.path.join(path, "work", "locked"))
open(os.path.join(path, "work", "big"), "wb").write(b"\\0" * 4096)
os.mkfifo(os.path.join(path, "work", "fifo"))
os.symlink(sys.argv[3], os.path.join(path, "work", "link"))
open(os.path.join(path, "work", "locked", "f"), "w").write("x")
os.chmod(os.path.join(path, "work", "locked"), 0)
print(path, flush=True)
if sys.argv[2] == "live":
    sys.stdin.read()
os._exit(0)
"""


def test_sweep_removes_dead_runs_scratch_only(tmp_path, monkeypatch):
    # the sweep also looks in RELOCATED_ROOT (/tmp), which holds whatever other runs left there
    from tcsexam.runner.ownership import scratch

    monkeypatch.setattr(scratch, "RELOCATED_ROOT", str(tmp_path / "relocated"))
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")

    def owner(how: str) -> tuple[subprocess.Popen, Path]:
        proc = subprocess.Popen(
            [sys.executable, "-c", OWNER, str(tmp_path), how, str(outside)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        return proc, Path(proc.stdout.readline().strip())

    dead, left = owner("dead")
    dead.wait()
    other, theirs = owner("live")  # another job's live run: its owner holds the lock
    try:
        live = Path(make_scratch(str(tmp_path)))
        assert live.name.startswith(scratch_prefix()) and left.name.startswith(SCRATCH_PREFIX)
        old = tmp_path / f"{SCRATCH_PREFIX}{scratch._machine()}-{dead.pid}-x"  # an older version's pid name
        old.mkdir()
        unrelated = tmp_path / "tcsexam-something-else"
        unrelated.mkdir()
        elsewhere = tmp_path / left.name.replace(scratch._machine(), "0123abcd")  # another machine's (shared /tmp)
        elsewhere.mkdir()
        assert sweep_dead_scratch(str(tmp_path)) == 1
        assert not left.exists() and live.is_dir() and theirs.is_dir()
        assert old.is_dir() and unrelated.is_dir() and elsewhere.is_dir()
        assert outside.read_text() == "keep me"  # a link is removed, never followed
        their_token = theirs.name[len(SCRATCH_PREFIX) :].split("-")[1]
        assert remove_run_scratch(their_token, str(tmp_path)) == 0 and theirs.is_dir()  # alive: kept
    finally:
        other.communicate("")
    assert remove_run_scratch(their_token, str(tmp_path)) == 1 and not theirs.exists()  # dead: removed
    from tcsexam.runner.ownership.owner import owner_token

    assert remove_run_scratch(owner_token(), str(tmp_path)) == 1 and not live.exists()
    remove_tree(tmp_path / "absent")  # nothing to do, no error


def test_removing_a_dying_owners_scratch_waits_for_its_lock(tmp_path):
    """The driver learns of a lost actor before the kernel has dropped the dead process's locks
    (they go when its process is gone): `wait_s` tries again until they are free."""
    proc = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(tmp_path), "live", str(tmp_path / "x")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    folder = Path(proc.stdout.readline().strip())
    token = folder.name[len(SCRATCH_PREFIX) :].split("-")[1]
    try:
        assert remove_run_scratch(token, str(tmp_path)) == 0 and folder.is_dir()  # alive: kept
        threading.Timer(0.5, proc.stdin.close).start()  # the owner dies a moment later
        assert remove_run_scratch(token, str(tmp_path), wait_s=120) == 1 and not folder.exists()
    finally:
        proc.kill()
        proc.wait()


def test_an_actor_adopts_the_owner_token_its_driver_chose():
    from tcsexam.runner.ownership import owner

    code = (
        "from tcsexam.runner.ownership import owner\n"
        "t = owner.new_owner_token()\n"
        "owner.adopt_owner_token(t); owner.adopt_owner_token(t)\n"
        "assert owner.owner_token() == t\n"
        "try:\n    owner.adopt_owner_token(owner.new_owner_token())\nexcept RuntimeError:\n    print('kept')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "kept", out.stderr
    with pytest.raises(ValueError):
        owner.adopt_owner_token("1234")  # a pid is never a token


def _alive_with_arg(token: str) -> list[int]:
    import psutil

    return [p.pid for p in psutil.process_iter(["cmdline"]) if token in (p.info["cmdline"] or [])]


@pytest.fixture(scope="module")
def ray_2cpus():
    from tcsexam.runner.ray.job import start_ray

    handle = start_ray(num_cpus=2)
    yield handle
    handle.shutdown()


@pytest.mark.skipif(
    os.geteuid() != 0,
    reason="as an unprivileged user through the harness's read-only interpreter view, Ray's node "
    "start times out on this machine (not investigated yet); this test runs as root in make test",
)
def test_killed_actor_leaves_no_scratch(task, tmp_path, ray_2cpus):
    """A candidate fills its scratch and plants a FIFO there, then its actor is SIGKILLed: the
    driver kills the orphan and removes the scratch folder the actor could not clean."""
    from tcsexam.runner.ray.pool import RayPool
    from tcsexam.runner.solver.attempt import RunContext

    root = tmp_path / "scratch-root"
    root.mkdir()
    token = f"{time.time_ns() % 10**9}.25"
    cand = tmp_path / "cand"
    cand.mkdir()
    (cand / "solver.yaml").write_text(
        'command: ["sh", "-c", "head -c 5000000 /dev/zero > {workdir}/fill; mkfifo {workdir}/fifo; '
        f'touch {{workdir}}/ready-{token}; exec sleep {token}"]\n'
    )
    ctx = RunContext(
        task=task,
        candidate=load_candidate(cand),
        sandbox=get_sandbox("local"),
        limits=Limits(wall_s=60, mem_mb=512),
        scratch_root=str(root),
    )

    actors: list[int] = []

    def ready() -> list[Path]:  # as root under /tmp when the scratch root is out of the uid's reach
        return [*root.glob(f"*/work/ready-{token}"), *Path("/tmp").glob(f"tcsexam-run-*/work/ready-{token}")]

    def hook(name, pid, tries):
        actors.append(pid)

        def kill():
            deadline = time.monotonic() + 60
            while not ready() and time.monotonic() < deadline:
                time.sleep(0.05)
            os.kill(pid, signal.SIGKILL)

        threading.Thread(target=kill, daemon=True).start()

    got = {}
    pool = RayPool(ctx, workers=1, max_retries=0, on_dispatch=hook)
    try:
        pool.run([task.instances[0].name], lambda n, r, t: got.setdefault(n, r))
    finally:
        pool.close()
    assert got[task.instances[0].name].status == "infrastructure_error"
    assert list(root.iterdir()) == [], "the killed actor's scratch was left behind"
    # as root the run went on in a folder under /tmp the candidate's uid can reach: gone too
    assert actors and not ready(), ready()
    deadline = time.monotonic() + 30
    while _alive_with_arg(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive_with_arg(token) == []


def test_remove_tree_handles_what_a_candidate_leaves(tmp_path):
    root = tmp_path / "scratch"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f").write_text("x")
    os.mkfifo(root / "a" / "fifo")
    (root / "a" / "b").chmod(0)
    (root / "a").chmod(0o500)
    remove_tree(root)
    assert not root.exists()
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_remove_tree_never_changes_the_folder_holding_it(tmp_path):
    """Removing a tree never chmods outside it (a failure on the tree's own top once made the
    folder holding it, /tmp, mode 0700)."""
    holder = tmp_path / "holder"
    holder.mkdir()
    holder.chmod(0o1777)
    (tmp_path / "target").mkdir()
    (holder / "link").symlink_to(tmp_path / "target")  # rmtree refuses a link: the error path
    remove_tree(holder / "link")
    assert not os.path.lexists(holder / "link") and (tmp_path / "target").is_dir()
    tree = holder / "tree"
    (tree / "locked").mkdir(parents=True)
    (tree / "locked" / "f").write_text("x")
    (tree / "locked").chmod(0)
    remove_tree(tree)
    assert not tree.exists()
    assert stat.S_IMODE(holder.stat().st_mode) == 0o1777
