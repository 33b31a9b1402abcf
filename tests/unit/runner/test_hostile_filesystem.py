"""Hostile candidates that write, leave or look for files where they must not: outside the work
folder (the host, the task's instance: under local a private copy), in shared temporary folders
(/tmp, /dev/shm, /var/tmp, /run/lock, someone else's world-writable folders below them, a folder
of the work folder moved out into /tmp), the launcher cache, the job's Ray temp folder (Ray makes
it and its sockets folder 0777), bwrap's own sized /tmp and /dev/shm, the harness user's home,
hidden folders (the results tree, the references) and the candidate folder itself. (An escape
candidate overwriting the task's instance file: test_hostile_escapes.py.)

Each test asserts what the candidate achieved (the file it tried to write does not exist, the
secret it tried to read is not in its output), not only the status.

Run as root and as an unprivileged user (`.ci/run` does both):
``pytest -m hostile tests/unit/runner``.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import uuid
from pathlib import Path

import pytest

from tcsexam.runner.limiter import Limits
from tcsexam.runner.sandboxes import get_sandbox, run_limited
from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.solver.execute import InstanceOptions, run_instance

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_support import ROOT, SANDBOXES, box_or_skip, run, run_sh, sandbox_or_skip, sh, trusted_local  # noqa: E402

pytestmark = pytest.mark.hostile


# -- writes outside the work folder; the instance is a private copy under local ----------------


def test_bwrap_write_outside_scratch_fails(task, tmp_path):
    try:
        get_sandbox("bwrap").check_available()
    except Exception as exc:
        pytest.skip(str(exc))
    outside = tmp_path / "outside"
    outside.mkdir()
    instance_before = Path(task.instances[0].path).read_bytes()
    record, scratch, _ = run(
        task,
        "write_outside",
        tmp_path,
        sandbox="bwrap",
        prepare=lambda d: (d / "target.txt").write_text(str(outside)),
    )
    assert record.status == "ok", record.message
    stderr = (scratch / "stderr.log").read_text()
    assert stderr.count("WRITE: failed") == 3 and "WRITE: ok" not in stderr, stderr
    assert not (tmp_path / "write_outside" / "planted.txt").exists()
    assert Path(task.instances[0].path).read_bytes() == instance_before
    assert not (outside / "planted.txt").exists()  # hidden by the private /tmp
    assert record.sandbox == "bwrap"


def test_local_candidate_gets_a_private_copy(task, tmp_path):
    folder = tmp_path / "peek"
    folder.mkdir()
    (folder / "solver.yaml").write_text('command: ["sh", "-c", "echo {instance} > {workdir}/seen; exit 3"]\n')
    candidate = load_candidate(folder)
    limits = task.limits.for_threads(1)
    run_instance(
        task,
        task.instances[0],
        candidate,
        sandbox=get_sandbox("local"),
        limits=limits,
        seed=0,
        scratch_dir=tmp_path / "s",
        options=InstanceOptions(limiter="light"),
    )
    seen = (tmp_path / "s" / "work" / "seen").read_text().strip()
    assert seen != str(Path(task.instances[0].path).resolve()) and Path(seen).name == "g.txt"


# -- 19.4: files left in shared folders, the launcher cache, the job's Ray temp folder ---------


LITTER = 'for d in /tmp /dev/shm /var/tmp "$HOME"; do echo x > "$d/$T" 2>/dev/null && echo "wrote $d"; done; true'


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_nothing_left_in_shared_temporary_folders(reachable_tmp, sandbox):
    box = box_or_skip(sandbox)
    if sandbox == "local" and not ROOT:
        pytest.skip("a non-root harness under local shares this user's /tmp: local is for trusted candidates only")
    token = f"tcsexam-litter-{uuid.uuid4().hex}"
    out, _ = sh(box, LITTER, reachable_tmp, env={"T": token})
    home = reachable_tmp / "work"  # the run's HOME is its work folder, removed with its scratch
    left = [p for p in (Path("/tmp", token), Path("/dev/shm", token), Path("/var/tmp", token)) if p.exists()]
    assert not left, (left, out)
    second, _ = sh(
        box, 'cat /tmp/"$T" /dev/shm/"$T" /var/tmp/"$T" 2>/dev/null; echo end', reachable_tmp / "work", env={"T": token}
    )
    assert second.strip() == "end"
    assert home.exists()


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
            for p in (
                shared / "litter",
                shared / "deep" / "litter",
                Path("/run/lock", token),
                Path("/run/lock", f"{token}.d"),
                Path("/tmp", f"{token}.moved"),
            )
            if os.path.lexists(p)
        ]
        assert not left, (left, out)
    finally:
        import shutil

        shutil.rmtree(shared, ignore_errors=True)
        shutil.rmtree(Path("/tmp", f"{token}.moved"), ignore_errors=True)
        for leftover in (Path("/run/lock", token), Path("/run/lock", f"{token}.d")):
            shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_launcher_cache_cannot_be_replaced(reachable_tmp, sandbox):
    from tcsexam.runner.limiter.launcher import launcher

    box = box_or_skip(sandbox)
    path = launcher()
    if path is None:
        pytest.skip("no C compiler: no launcher")
    trusted_local(sandbox)
    before = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    script = f'chmod u+w "{path}" 2>/dev/null; cp /bin/true "{path}" 2>/dev/null; rm -f "{path}" 2>/dev/null; true'
    sh(box, script, reachable_tmp)
    assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == before


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_ray_temp_folder_is_out_of_a_candidates_reach(reachable_tmp, sandbox):
    """Ray makes its temp dir and every folder in it mode 0777 (`try_make_directory_shared`): the
    folder around it (`private_ray_temp`) is this user's alone, so a candidate can neither plant
    nor replace anything there (the raylet's socket, the token)."""
    import shutil

    from tcsexam.runner.ray.job import private_ray_temp

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
        out, _ = run_sh(
            box, f'rm -f "{sockets}/raylet"; echo x > "{sockets}/planted"; ls "{sockets}"; true', reachable_tmp
        )
        assert (sockets / "raylet").exists() and not (sockets / "planted").exists()
        assert "raylet" not in out
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(not ROOT, reason="Ray's node start as an unprivileged user times out here (test_hostile_reads)")
def test_a_jobs_own_ray_lives_in_a_private_folder():
    from tcsexam.runner.ray.job import start_ray

    handle = start_ray(num_cpus=1)
    try:
        assert handle.temp_dir and stat.S_IMODE(os.stat(handle.temp_dir).st_mode) == 0o700
        sessions = list(Path(handle.temp_dir).glob("*/session_*/sockets"))
        assert sessions, list(Path(handle.temp_dir).rglob("*"))[:20]  # Ray's own folders are inside it
    finally:
        handle.shutdown()
    assert not os.path.exists(handle.temp_dir)


# -- 19.5: bwrap's own /tmp and /dev/shm are sized ---------------------------------------------


def test_bwrap_tmp_and_shm_are_sized(reachable_tmp):
    from tcsexam.runner.sandboxes.bwrap import TMP_MB

    box = box_or_skip("bwrap")
    out, _ = sh(box, "df -m /tmp /dev/shm | tail -n 2", reachable_tmp)
    sizes = [int(line.split()[1]) for line in out.splitlines()]
    assert len(sizes) == 2 and all(0 < s <= TMP_MB for s in sizes), out


# -- out of reach: the harness's home, hidden folders, the candidate folder --------------------


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_harness_home_is_out_of_reach(reachable_tmp, sandbox):
    """A secret in the harness user's home (as Ray keeps ~/.ray/auth_token), mode 0600."""
    box = box_or_skip(sandbox)
    trusted_local(sandbox)
    secret = f"token-{uuid.uuid4().hex}"
    path = Path(os.path.expanduser("~")) / f".tcsexam-test-{uuid.uuid4().hex}"
    path.write_text(secret)
    path.chmod(0o600)
    try:
        out, err = sh(
            box,
            f'cat "{path}"; ls -a "{path.parent}"; grep -r "{secret[:12]}" "{path.parent}" 2>/dev/null; true',
            reachable_tmp,
        )
    finally:
        path.unlink()
    assert secret not in out + err and path.name not in out


def test_bwrap_hides_the_home_but_never_its_own_tmp(monkeypatch):
    from tcsexam.runner.sandboxes.bwrap import harness_homes

    monkeypatch.setenv("HOME", "/tmp")
    assert harness_homes() == []  # /tmp is the sandbox's own sized tmpfs already
    monkeypatch.setenv("HOME", "/var/lib")
    assert harness_homes() == ["/var/lib"]


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
        ["/bin/sh", "-c", script],
        cwd=work,
        limits=Limits(wall_s=60, mem_mb=512),
        sandbox=box,
        env={"PATH": "/usr/bin:/bin", "HOME": str(work), "H": str(hidden)},
        writable_paths=[work],
        hidden_paths=[str(hidden)],
    )
    shutil.rmtree(outside)
    assert out.sandbox_error is None, out.sandbox_error
    assert token not in out.stdout_tail + out.stderr_tail and "answers.txt" not in out.stdout_tail


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
    from tcsexam.runner.solver import execute

    scratch = tmp_path / "s"
    seen = {}
    real = execute._execute

    def spy(record, job, work, *rest):
        seen["work"] = work
        real(record, job, work, *rest)
        seen["own"] = (work / "own").read_text().split()

    execute._execute = spy
    try:
        record = run_instance(
            task,
            task.instances[0],
            candidate,
            sandbox=box,
            limits=limits,
            seed=0,
            scratch_dir=scratch,
            options=InstanceOptions(hidden_paths=(str(secret),)),
        )
    finally:
        execute._execute = real
    assert record.exit_code == 5, record.message
    assert not (folder / "solver.yaml.bak").exists()
    assert seen["own"][0] != "0" and seen["own"][1] != "0"  # both failed inside the sandbox
