"""Variations of the hostile techniques of issue 19 (the acceptance runs "the techniques above and
variations of them"): what an independent audit tried beyond `test_hostile_containment.py` and
`test_hostile_reads.py`, each asserting what the candidate achieved.

- a NUL byte in solver.yaml's command or environment (it made every run an `infrastructure_error`
  under bwrap and docker: an unscorable attempt at the candidate's will);
- System V shared memory, semaphores and message queues left by a run (under `local` as root they
  outlived it and the next candidate, the same uid, could attach them);
- litter in /run/lock and in world-writable folders below /tmp (someone else's 1777 folder, a Ray
  temp dir Ray made 0777), and a folder given to the run moved out into /tmp;
- the job's own Ray temp folder (Ray makes it and its sockets folder 0777: a root harness's
  candidate could replace the raylet's socket);
- certificates that are a chain of links, a relative link, a Unix socket, a link to /proc/PPID/environ
  or a sparse file far over the output cap.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import sys
import threading
import uuid
from pathlib import Path

import pytest

from tcsexam.errors import InputError
from tcsexam.runner.execute import load_candidate, run_instance
from tcsexam.runner.limiter import Limits
from tcsexam.runner.sandboxes import run_limited

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_hostile_reads  # noqa: E402
from test_escapes import sandbox_or_skip  # noqa: E402

pytestmark = pytest.mark.hostile
task = test_hostile_reads.task  # the same tiny MaxCut task (module fixture)

ROOT = os.geteuid() == 0
STALL_S = 300  #: only a harness that never comes back misses this


def run_sh(box, script: str, folder: Path, *, env=None) -> tuple[str, str]:
    """`sh -c script` in `box`, `folder/work` writable and its HOME/TMPDIR; (stdout, stderr)."""
    work = folder / "work"
    work.mkdir(exist_ok=True)
    path = os.pathsep.join(p for p in (box.python_dir(), "/usr/local/bin", "/usr/bin", "/bin") if p)
    base = {"PATH": path, "HOME": str(work), "TMPDIR": str(work)}
    out = run_limited(
        ["/bin/sh", "-c", script], cwd=work, limits=Limits(wall_s=60, mem_mb=1024), sandbox=box,
        env={**base, **(env or {})}, writable_paths=[work],
    )  # fmt: skip
    assert out.sandbox_error is None, out.sandbox_error
    return out.stdout_tail, out.stderr_tail


def trusted_local(sandbox: str) -> None:
    if sandbox == "local" and not ROOT:
        pytest.skip("a non-root harness under local runs candidates as itself: local is for trusted candidates only")


# -- a NUL byte in solver.yaml --------------------------------------------------------------------


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


# -- System V IPC dies with the run ----------------------------------------------------------------

IPC = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
key = int(sys.argv[1])
print(libc.shmget(key, 1 << 20, 0o1666), libc.semget(key + 1, 1, 0o1666), libc.msgget(key + 2, 0o1666))
"""


def _ipc_keys() -> set[int]:
    keys = set()
    for kind in ("shm", "sem", "msg"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            continue
        keys.update(int(line.split()[0]) for line in lines if line.split())
    return keys


@pytest.mark.parametrize("sandbox", ["local", "bwrap", "docker"])
def test_system_v_ipc_objects_die_with_the_run(reachable_tmp, sandbox):
    box = sandbox_or_skip(sandbox)
    trusted_local(sandbox)
    key = 0x19000000 + uuid.uuid4().int % 0xFFFFFF
    out, err = run_sh(box, 'python3 -c "$CODE" "$KEY"', reachable_tmp, env={"CODE": IPC, "KEY": str(key)})
    assert out.split() and all(int(x) >= 0 for x in out.split()), (out, err)  # it did create them
    assert not {key, key + 1, key + 2} & _ipc_keys(), "a SysV IPC object of the run outlived it"


# -- litter in shared folders, deeper ones and /run/lock ---------------------------------------------


@pytest.mark.parametrize("sandbox", ["local", "bwrap", "docker"])
def test_no_litter_in_world_writable_subfolders_or_run_lock(reachable_tmp, sandbox):
    """Someone else's 1777 folder in /tmp (as /tmp/.X11-unix), its 0777 folder below (as a Ray
    session's sockets), /run/lock, and a folder given to the run (in its work folder) moved out
    into /tmp: nothing the candidate wrote is there after the run."""
    box = sandbox_or_skip(sandbox)
    trusted_local(sandbox)
    token = f"tcsexam-ww-{uuid.uuid4().hex}"
    shared = Path("/tmp", token)
    (shared / "deep").mkdir(parents=True)
    shared.chmod(0o1777)
    (shared / "deep").chmod(0o777)
    (reachable_tmp / "work" / "given").mkdir(parents=True)
    script = (
        'echo x > "$S/litter"; echo x > "$S/deep/litter"; echo x > /run/lock/"$T"; mkdir /run/lock/"$T.d";'
        'mv "$HOME/given" /tmp/"$T.moved"; echo x > /tmp/"$T.moved"/f; ls /tmp/"$T.moved" "$S"; true'
    )
    try:
        out, _ = run_sh(box, script, reachable_tmp, env={"S": str(shared), "T": token})
        left = [
            p
            for p in (shared / "litter", shared / "deep" / "litter", Path("/run/lock", token),
                      Path("/run/lock", f"{token}.d"), Path("/tmp", f"{token}.moved"))
            if os.path.lexists(p)
        ]  # fmt: skip
        assert not left, (left, out)
    finally:
        import shutil

        shutil.rmtree(shared, ignore_errors=True)
        shutil.rmtree(Path("/tmp", f"{token}.moved"), ignore_errors=True)
        for leftover in (Path("/run/lock", token), Path("/run/lock", f"{token}.d")):
            shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)


# -- the job's Ray temp folder ----------------------------------------------------------------------


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_ray_temp_folder_is_out_of_a_candidates_reach(reachable_tmp, sandbox):
    """Ray makes its temp dir and every folder in it mode 0777 (`try_make_directory_shared`): the
    folder around it (`private_ray_temp`) is this user's alone, so a candidate can neither plant
    nor replace anything there (the raylet's socket, the token)."""
    import shutil

    from tcsexam.runner.ray_job import private_ray_temp

    box = sandbox_or_skip(sandbox)
    trusted_local(sandbox)
    folder, ray_temp = private_ray_temp("ray-")
    try:
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700 and os.path.dirname(ray_temp) == folder
        sockets = Path(ray_temp, "session_x", "sockets")
        sockets.mkdir(parents=True)
        for path in (ray_temp, sockets.parent, sockets):
            os.chmod(path, 0o777)  # what Ray does
        (sockets / "raylet").write_text("the raylet's socket")
        out, _ = run_sh(box, f'rm -f "{sockets}/raylet"; echo x > "{sockets}/planted"; ls "{sockets}"; true',
                        reachable_tmp)  # fmt: skip
        assert (sockets / "raylet").exists() and not (sockets / "planted").exists()
        assert "raylet" not in out
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(not ROOT, reason="Ray's node start as an unprivileged user times out here (test_hostile_reads)")
def test_a_jobs_own_ray_lives_in_a_private_folder():
    from tcsexam.runner.ray_job import start_ray

    handle = start_ray(num_cpus=1)
    try:
        assert handle.temp_dir and stat.S_IMODE(os.stat(handle.temp_dir).st_mode) == 0o700
        sessions = list(Path(handle.temp_dir).glob("*/session_*/sockets"))
        assert sessions, list(Path(handle.temp_dir).rglob("*"))[:20]  # Ray's own folders are inside it
    finally:
        handle.shutdown()
    assert not os.path.exists(handle.temp_dir)


# -- certificates: more things that are not the candidate's own regular file ------------------------

SOLVE = r"""
import os, socket, sys

instance, solution, how, target = sys.argv[1:5]
work = os.path.dirname(solution)
if how == "chain":              # a link to a link to a link to the secret
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
"""


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
        out.append(run_instance(task, task.instances[0], cand, sandbox=box, limits=limits, seed=1,
                                scratch_dir=tmp_path / "scratch"))  # fmt: skip

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


# -- a hidden folder's world-readable files (the results tree, the references) -----------------------


@pytest.mark.parametrize("sandbox", ["bwrap", "docker"])
def test_hidden_folders_world_readable_files_stay_unread(reachable_tmp, sandbox):
    """What the docs say is hidden (the output and records folders, the workflow folder) is
    hidden from the candidate, not only unreadable: a 0644 reference there stays unread, also
    through a nested user and mount namespace. (Under local it is readable: trusted code only.)"""
    import shutil
    import tempfile

    box = sandbox_or_skip(sandbox)
    outside = Path(tempfile.mkdtemp(prefix="tcsexam-test-", dir="/var/tmp"))  # not under bwrap's own /tmp
    outside.chmod(0o755)
    hidden = outside / "results"
    (hidden / "ref").mkdir(parents=True)
    token = f"REFERENCE-{uuid.uuid4().hex}"
    (hidden / "ref" / "answers.txt").write_text(token)
    (hidden / "ref" / "answers.txt").chmod(0o644)
    work = reachable_tmp / "work"
    work.mkdir()
    script = (
        'cat "$H/ref/answers.txt"; ls -R "$H"; grep -r REFERENCE- "$H";'
        'unshare -Urm sh -c \'umount -l "$H"; umount -R "$H"; cat "$H/ref/answers.txt"\'; true'
    )
    out = run_limited(
        ["/bin/sh", "-c", script], cwd=work, limits=Limits(wall_s=60, mem_mb=512), sandbox=box,
        env={"PATH": "/usr/bin:/bin", "HOME": str(work), "H": str(hidden)}, writable_paths=[work],
        hidden_paths=[str(hidden)],
    )  # fmt: skip
    shutil.rmtree(outside)
    assert out.sandbox_error is None, out.sandbox_error
    assert token not in out.stdout_tail + out.stderr_tail and "answers.txt" not in out.stdout_tail


# -- files by the hundred thousand: no bytes, every inode ----------------------------------------------

INODES = "import sys\nfor i in range(500_000):\n    open(sys.argv[1] + '/f%07d' % i, 'w').close()\n"


@pytest.mark.parametrize("sandbox", ["local", "bwrap", "docker"])
def test_a_flood_of_empty_files_is_over_the_disk_limit(reachable_tmp, sandbox, monkeypatch):
    """Empty files take no blocks but an inode each (a host's file system runs out of them): past
    `DISK_ENTRIES` the run is over `disk_mb` (memout, termination disk), told so in words. (The
    entry limit lowered to 5000 here: the real 200000 files take minutes on a busy machine.)"""
    import tcsexam.runner.limiter.process as process
    from tcsexam.runner.verdict import solver_status

    monkeypatch.setattr(process, "DISK_ENTRIES", 5000)
    DISK_ENTRIES = process.DISK_ENTRIES

    box = sandbox_or_skip(sandbox)
    trusted_local(sandbox)
    work = reachable_tmp / "work"
    work.mkdir()
    path = os.pathsep.join(p for p in (box.python_dir(), "/usr/local/bin", "/usr/bin", "/bin") if p)
    out = run_limited(
        ["python3", "-c", INODES, str(work)], cwd=work, sandbox=box, writable_paths=[work],
        env={"PATH": path, "HOME": str(work), "TMPDIR": str(work)}, limits=Limits(wall_s=600, disk_mb=64),
    )  # fmt: skip
    assert out.termination == "disk", (out.termination, out.message, out.stderr_tail[-300:])
    assert f"over {DISK_ENTRIES} files" in out.message, out.message
    assert len(os.listdir(work)) < 500_000  # stopped long before it was done
    assert solver_status(out).status == "memout"


# -- a relocated work folder on another file system ----------------------------------------------------


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
        record = run_instance(task, task.instances[0], cand, sandbox=box, limits=limits, seed=1,
                              scratch_dir=root / "scratch")  # fmt: skip
        assert (record.status, record.A) == ("ok", 4.0), (record.status, record.message)
        assert not glob.glob(f"/tmp/tcsexam-run-*/work/{token}")  # its run folder went with it
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- files in the host's /dev/shm are memory ---------------------------------------------------------


@pytest.mark.skipif(not ROOT, reason="only a root harness runs local candidates as a uid of their own")
@pytest.mark.parametrize("limiter", ["light", "cgroup"])
def test_files_in_shared_memory_count_against_the_memory_limit(reachable_tmp, limiter):
    """Under local the candidate shares the host's /dev/shm (a tmpfs: its files are RAM). The
    cgroup limiter charges them to the run; the light one adds the candidate uid's files there to
    the tree's memory: a run writing 1 MB files past `mem_mb` is stopped for memory either way
    (it wrote 1 MB at a time under RLIMIT_FSIZE), and nothing of it stays in /dev/shm."""
    from tcsexam.runner.limiter import resolve_limiter
    from tcsexam.runner.limiter.process import _tmpfs_folders

    if "/dev/shm" not in _tmpfs_folders():
        pytest.skip("/dev/shm is not a tmpfs here")
    try:
        resolve_limiter(limiter)
    except InputError as exc:
        pytest.skip(str(exc))
    box = sandbox_or_skip("local")
    token = f"tcsexam-shm-{uuid.uuid4().hex}"
    work = reachable_tmp / "work"
    work.mkdir()
    script = f"i=0; while [ $i -lt 400 ]; do head -c 1000000 /dev/zero > /dev/shm/{token}-$i; i=$((i+1)); done"
    out = run_limited(
        ["/bin/sh", "-c", script], cwd=work, sandbox=box, limiter=limiter, writable_paths=[work],
        env={"PATH": "/usr/bin:/bin", "HOME": str(work)}, limits=Limits(wall_s=120, mem_mb=96, output_bytes=1 << 20),
    )  # fmt: skip
    assert out.termination == "memory", (out.termination, out.message)
    assert not [name for name in os.listdir("/dev/shm") if name.startswith(token)]
