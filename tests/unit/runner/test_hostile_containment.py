"""Hostile candidates against the sandboxes' own set-up (docs/runner.md, Security): environment
injection into the runtimes, root and capabilities, mounts and cgroup moves, harness secrets in
the environment and /proc, files left in shared temporary folders, the launcher cache, the sized
/tmp, and the candidate's interpreter wherever the harness's venv lives.

Each test asserts what the candidate achieved (the file it tried to write does not exist, the
secret it tried to read is not in its output), not only the status. Run them as root and as an
unprivileged user (`.ci/run` does both): ``pytest -m hostile tests/unit/runner``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tcsexam.errors import InputError
from tcsexam.runner.execute import load_candidate
from tcsexam.runner.limiter import Limits
from tcsexam.runner.sandboxes import choose_sandbox, get_sandbox, probe_python, run_limited

pytestmark = pytest.mark.hostile

ROOT = os.geteuid() == 0
SANDBOXES = ["local", "bwrap", "docker"]


def box_or_skip(name: str):
    box = get_sandbox(name)
    try:
        box.check_available()
    except InputError as exc:
        required = os.environ.get("TCSEXAM_REQUIRE_DOCKER") == "1" and ROOT
        if name == "docker" and required:
            pytest.fail(f"the Docker engine must run here (TCSEXAM_REQUIRE_DOCKER=1): {exc}")
        pytest.skip(str(exc))
    return box


def sh(box, script: str, folder: Path, *, env=None, hidden=(), readonly=()) -> tuple[str, str]:
    """Run `sh -c script` in `box` with `folder/work` writable; (stdout, stderr)."""
    work = folder / "work"
    work.mkdir(exist_ok=True)
    base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(work), "TMPDIR": str(work)}
    out = run_limited(
        ["/bin/sh", "-c", script], cwd=work, limits=Limits(wall_s=60, mem_mb=1024), sandbox=box,
        env={**base, **(env or {})}, writable_paths=[work], readonly_paths=list(readonly), hidden_paths=list(hidden),
    )  # fmt: skip
    assert out.sandbox_error is None, out.sandbox_error
    return out.stdout_tail, out.stderr_tail


# -- 19.1: the candidate's environment never reaches the sandbox's own set-up ------------------


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


# -- 19.2: never root, never a capability; mounts, remounts and cgroup moves fail -------------


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_candidate_is_never_root_and_has_no_capability(reachable_tmp, sandbox):
    box = box_or_skip(sandbox)
    out, _ = sh(box, "id -u; id -g; id -G; grep -E '^Cap(Eff|Prm|Amb)' /proc/self/status", reachable_tmp)
    uid, gid, groups, *caps = out.splitlines()
    assert uid != "0" and gid != "0" and "0" not in groups.split()
    assert caps and all(line.split()[1] == "0000000000000000" for line in caps), caps


HOSTILE_MOUNTS = r"""
for m in /proc/self/mountinfo; do :; done
umount "$H" 2>/dev/null && echo UNMOUNTED
umount -l "$H" 2>/dev/null && echo UNMOUNTED
mount -o remount,rw / 2>/dev/null && echo REMOUNTED
mount -t tmpfs none "$W" 2>/dev/null && echo MOUNTED
if command -v unshare >/dev/null; then
  unshare -Urm sh -c 'umount "$H" 2>/dev/null && echo NESTED-UNMOUNTED; cat "$H/secret" 2>/dev/null;
                      mount -o remount,rw / 2>/dev/null && touch /etc/$T && echo NESTED-REMOUNTED' 2>/dev/null
fi
for f in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs /sys/fs/cgroup/*/tasks; do
  [ -e "$f" ] && (echo $$ > "$f") 2>/dev/null && echo "MOVED $f"
done
touch "/etc/$T" 2>/dev/null && echo WROTE-ETC
touch "$HOSTFILE" 2>/dev/null && echo WROTE-HOST
cat "$H/secret" 2>/dev/null
echo done
"""


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_mounts_remounts_and_cgroup_moves_fail(reachable_tmp, sandbox):
    box = box_or_skip(sandbox)
    hidden = reachable_tmp / "hidden"
    hidden.mkdir()
    secret = f"hidden-{uuid.uuid4().hex}"
    (hidden / "secret").write_text(secret)
    (hidden / "secret").chmod(0o600)
    token = f"tcsexam-hx-{uuid.uuid4().hex}"
    hostfile = reachable_tmp / "hostfile"
    env = {"H": str(hidden), "T": token, "W": str(reachable_tmp / "work"), "HOSTFILE": str(hostfile)}
    out, err = sh(box, HOSTILE_MOUNTS, reachable_tmp, env=env, hidden=[hidden])
    assert out.strip().endswith("done"), (out, err)
    for achieved in ("UNMOUNTED", "REMOUNTED", "MOUNTED", "MOVED", "WROTE-ETC"):
        assert achieved not in out, out
    assert not Path("/etc", token).exists()
    if sandbox == "bwrap" or ROOT:  # local as the harness's own user is trusted: it reads and writes as it
        assert secret not in out + err
        assert not hostfile.exists()  # (under bwrap a write into its own private /tmp is allowed)


# -- 19.4: no harness secret in the environment or /proc; nothing left in shared folders -------

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


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_harness_home_is_out_of_reach(reachable_tmp, sandbox):
    """A secret in the harness user's home (as Ray keeps ~/.ray/auth_token), mode 0600."""
    box = box_or_skip(sandbox)
    if sandbox == "local" and not ROOT:
        pytest.skip("a non-root harness under local runs candidates as itself: local is for trusted candidates only")
    secret = f"token-{uuid.uuid4().hex}"
    path = Path(os.path.expanduser("~")) / f".tcsexam-test-{uuid.uuid4().hex}"
    path.write_text(secret)
    path.chmod(0o600)
    try:
        out, err = sh(box, f'cat "{path}"; ls -a "{path.parent}"; grep -r "{secret[:12]}" "{path.parent}" 2>/dev/null; true',
                      reachable_tmp)  # fmt: skip
    finally:
        path.unlink()
    assert secret not in out + err and path.name not in out


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
    second, _ = sh(box, 'cat /tmp/"$T" /dev/shm/"$T" /var/tmp/"$T" 2>/dev/null; echo end', reachable_tmp / "work",
                   env={"T": token})  # fmt: skip
    assert second.strip() == "end"
    assert home.exists()


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_launcher_cache_cannot_be_replaced(reachable_tmp, sandbox):
    from tcsexam.runner.limiter.launcher import launcher

    box = box_or_skip(sandbox)
    path = launcher()
    if path is None:
        pytest.skip("no C compiler: no launcher")
    if sandbox == "local" and not ROOT:
        pytest.skip("a non-root harness under local runs candidates as itself: local is for trusted candidates only")
    before = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    script = f'chmod u+w "{path}" 2>/dev/null; cp /bin/true "{path}" 2>/dev/null; rm -f "{path}" 2>/dev/null; true'
    sh(box, script, reachable_tmp)
    assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == before


# -- 19.5: bwrap's own /tmp and /dev/shm are sized ----------------------------------------------


def test_bwrap_tmp_and_shm_are_sized(reachable_tmp):
    from tcsexam.runner.sandboxes.bwrap import TMP_MB

    box = box_or_skip("bwrap")
    out, _ = sh(box, "df -m /tmp /dev/shm | tail -n 2", reachable_tmp)
    sizes = [int(line.split()[1]) for line in out.splitlines()]
    assert len(sizes) == 2 and all(0 < s <= TMP_MB for s in sizes), out


@pytest.mark.parametrize("sandbox", ["local", "bwrap", "docker"])
def test_disk_quota_stops_a_filling_run(reachable_tmp, sandbox):
    """Files of 4 MB written one after another past `disk_mb` (each under the output cap): the run
    is killed for `disk` (status memout) long before the 200 MB it wanted."""
    from tcsexam.runner.limiter.process import disk_usage
    from tcsexam.runner.verdict import solver_status

    box = box_or_skip(sandbox)
    work = reachable_tmp / "work"
    work.mkdir()
    pause = 0.2 if sandbox == "docker" else 0.02  # docker measures the volume every 0.5 s
    script = f'i=0; while [ $i -lt 50 ]; do head -c 4000000 /dev/zero > "f$i"; i=$((i+1)); sleep {pause}; done'
    out = run_limited(
        ["/bin/sh", "-c", script], cwd=work, sandbox=box, env={"PATH": "/usr/bin:/bin"}, writable_paths=[work],
        limits=Limits(wall_s=120, disk_mb=20, output_bytes=8 << 20),
    )  # fmt: skip
    assert out.termination == "disk" and "over 20 MB" in out.message, (out.termination, out.message)
    assert disk_usage([work]) < 100 << 20  # stopped long before 200 MB
    decision = solver_status(out)
    assert decision.status == "memout" and "disk limit" in decision.message


def test_disk_mb_is_a_task_limit(tmp_path):
    from tcsexam.tasks import load_task

    (tmp_path / "g.txt").write_text("2 1\n1 2 1\n")
    base = "id: t\nproblem: maxcut\nkind: objective\ndirection: maximize\ninstance_dir: {d}\n"
    base += "instances: [{{name: g, file: g.txt}}]\nlimits: {{wall_s: 1{extra}}}\n"
    (tmp_path / "a.yaml").write_text(base.format(d=tmp_path, extra=", disk_mb: 64"))
    (tmp_path / "b.yaml").write_text(base.format(d=tmp_path, extra=""))
    (tmp_path / "c.yaml").write_text(base.format(d=tmp_path, extra=", disk_mb: 1.5"))
    a, b = load_task(tmp_path / "a.yaml"), load_task(tmp_path / "b.yaml")
    assert a.limits.disk_mb == 64 and a.limits.for_threads().disk_mb == 64
    assert "disk_mb" not in b.limits.task_dict()  # unset: record keys of older tasks stay the same
    assert b.limits.for_threads().disk_mb > 0  # the runner's default quota still applies
    with pytest.raises(InputError, match="disk_mb must be a whole number"):
        load_task(tmp_path / "c.yaml")


# -- 19.4: auto never falls back to local silently -----------------------------------------------


def test_auto_refuses_local_unless_candidates_are_trusted(monkeypatch):
    from tcsexam.runner.sandboxes.apptainer import ApptainerSandbox
    from tcsexam.runner.sandboxes.bwrap import BwrapSandbox
    from tcsexam.runner.sandboxes.docker import DockerSandbox

    for cls in (BwrapSandbox, DockerSandbox, ApptainerSandbox):
        monkeypatch.setattr(cls, "check_available", lambda self, n=cls.name: (_ for _ in ()).throw(
            InputError(f"sandbox {n}: missing here")))  # fmt: skip
    monkeypatch.delenv("TCSEXAM_ALLOW_UNSANDBOXED", raising=False)
    with pytest.raises(InputError) as info:
        choose_sandbox("auto")
    line = str(info.value)
    assert "\n" not in line and "no sandbox for untrusted candidates" in line and "--allow-unsandboxed" in line
    assert all(f"{n}: missing here" in line for n in ("bwrap", "docker", "apptainer"))
    box, why = choose_sandbox("auto", allow_unsandboxed=True)
    assert box.name == "local" and "NOT CONTAINED" in why


# -- 20.1: the harness's Python wherever it lives, and a failed probe is one line ---------------


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
    from tcsexam.runner.batch import PoolOptions
    from tcsexam.runner.orchestrate import RunHooks, RunOptions, TaskJob, run_job

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


def test_a_failed_python_probe_stops_the_job_with_one_line(reachable_tmp, monkeypatch):
    from tcsexam.runner import orchestrate
    from tcsexam.runner.batch import PoolOptions
    from tcsexam.runner.orchestrate import RunHooks, RunOptions, TaskJob, run_job

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


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_candidate_cannot_kill_the_harness(reachable_tmp, sandbox):
    """`kill -9 -1` and a SIGKILL to its parent and to the harness: the harness lives on and
    gets the outcome."""
    box = box_or_skip(sandbox)
    if sandbox == "local" and not ROOT:
        pytest.skip("a non-root harness under local runs candidates as itself: local is for trusted candidates only")
    out, _ = sh(box, f"kill -9 {os.getpid()} 2>/dev/null; kill -9 $PPID 2>/dev/null; kill -9 -1 2>/dev/null; echo alive",
                reachable_tmp)  # fmt: skip
    assert os.getppid() > 0  # this process (the harness) still runs: we got here


@pytest.mark.skipif(not ROOT, reason="only a root harness runs local candidates as another uid")
def test_a_local_candidate_cannot_signal_or_see_other_runs_of_its_uid(reachable_tmp):
    """Every root harness runs its candidates as the same uid by default: a local candidate's
    `kill -9 -1` would kill every other run of that uid on the machine (other jobs' sandboxed
    candidates and proof checks). In a pid namespace of its own it reaches none, nor sees them."""
    from tcsexam.runner.sandboxes.runas import candidate_ids

    uid, gid = candidate_ids()
    bystander = subprocess.Popen(["sleep", "120"], user=uid, group=gid, extra_groups=[])
    try:
        out, _ = sh(get_sandbox("local"), f"ls /proc | grep -qx {bystander.pid} && echo seen; kill -9 -1; echo done",
                    reachable_tmp)  # fmt: skip
        assert out.split() == ["done"]
        assert bystander.poll() is None, "the candidate killed another process of its uid"
    finally:
        bystander.kill()
        bystander.wait()


@pytest.mark.skipif(not ROOT, reason="only a root harness changes users")
def test_a_uid_range_gives_each_harness_process_its_own_uid():
    code = "import sys, time\nfrom tcsexam.runner.sandboxes.runas import candidate_ids\nprint(candidate_ids(), flush=True)\n"
    code += "sys.stdin.read()\n"  # holds its uid until told to end
    env = dict(os.environ, TCSEXAM_CANDIDATE_UID="61100-61103")
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True) for _ in range(2)]  # fmt: skip
    try:
        seen = {p.stdout.readline().strip() for p in procs}
    finally:
        for p in procs:
            p.communicate("")
    assert seen == {"(61100, 61100)", "(61101, 61101)"}
    with pytest.raises(InputError, match="TCSEXAM_CANDIDATE_UID"):
        import tcsexam.runner.sandboxes.runas as runas

        old = runas._ids
        try:
            runas._ids = None
            os.environ["TCSEXAM_CANDIDATE_UID"] = "0"
            runas.candidate_ids()
        finally:
            del os.environ["TCSEXAM_CANDIDATE_UID"]
            runas._ids = old


def test_bwrap_hides_the_home_but_never_its_own_tmp(monkeypatch):
    from tcsexam.runner.sandboxes.bwrap import harness_homes

    monkeypatch.setenv("HOME", "/tmp")
    assert harness_homes() == []  # /tmp is the sandbox's own sized tmpfs already
    monkeypatch.setenv("HOME", "/var/lib")
    assert harness_homes() == ["/var/lib"]
