"""The interpreter view of a root harness (`runas.python_dir`) is checked every time (issue 32.4).

The view (a venv on read-only bind mounts of the harness's prefixes) stays on disk for later jobs,
but its mounts live only in the mount namespace that made them. A first job in a private mount
namespace (`unshare -m`, SLURM's job_container/tmpfs, systemd's PrivateMounts) once left a venv
without mounts behind, and every later `local` run on the machine failed with "No module named
'numpy'". Here each step is a fresh process that asks for the view and runs its `python3` as the
candidate uid (`import numpy, pysat`): first in `unshare -m`, then on the host, then in another
namespace where the view's mounts were detached first. Every step must import; the host's mounts
must show the harness's prefixes afterwards. The view is built in a private folder (never the
machine's /run/tcsexam, which other jobs use)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("mount"),
    reason="the interpreter view is a root harness's (bind mounts; unshare -m)",
)

#: one job: argv[1] the view's root folder, argv[2] "detach" to unmount the view's mounts first
STEP = r"""
import os, subprocess, sys
from pathlib import Path
from tcsexam.runner.sandboxes import runas

runas.RUN_DIR = Path(sys.argv[1])
# where the harness's interpreter is reachable anyway, take the view's path all the same
runas.opaque_ancestors = lambda paths, ids: ["/"]
if sys.argv[2] == "detach":  # a namespace without the view's mounts (as a job container's)
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4]
        if point.startswith(sys.argv[1]):
            subprocess.run(["umount", "-l", point], check=True)
ids = (65534, 65534)
folder = runas.python_dir(ids)
probe = subprocess.run(
    [os.path.join(folder, "python3"), "-c", "import numpy, pysat; print(numpy.__name__)"],
    user=ids[0], group=ids[1], extra_groups=[], capture_output=True, text=True, timeout=120,
)
print(folder, probe.returncode, probe.stdout.strip(), probe.stderr.strip()[-300:].replace("\n", " | "))
"""


def _mounts_under(root: str) -> list[list[str]]:
    return [line.split() for line in Path("/proc/self/mountinfo").read_text().splitlines() if root in line]


def test_view_works_after_a_first_run_in_a_private_mount_namespace():
    root = tempfile.mkdtemp(prefix="tcsexam-view-", dir="/tmp")
    os.chmod(root, 0o755)  # the candidate uid passes through it to the venv
    view = os.path.join(root, "run")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3] / "src"))
    try:
        lines = []
        for prefix, how in ([["unshare", "-m"], "keep"], [[], "keep"], [["unshare", "-m"], "detach"]):
            out = subprocess.run(
                [*prefix, sys.executable, "-c", STEP, view, how], capture_output=True, text=True, timeout=300, env=env
            )
            assert out.returncode == 0, out.stderr[-2000:]
            lines.append(out.stdout.strip().splitlines()[-1])
        for where, line in zip(("unshare -m (first)", "host", "unshare -m, mounts detached"), lines):
            folder, rc, *rest = line.split(" ", 3)
            assert folder.startswith(view) and rc == "0" and rest[0] == "numpy", f"{where}: {line}"
        # the host's view now shows the harness's own prefixes, read-only
        base = os.path.realpath(sys.base_prefix)
        seen = {fields[4]: fields for fields in _mounts_under(view)}
        bound = [p for p in seen if p.endswith("/base")]
        assert len(bound) == 1 and os.stat(bound[0]).st_ino == os.stat(base).st_ino, seen
        assert all(f[5].split(",")[0] == "ro" for f in seen.values()), seen
    finally:
        for _ in range(4):
            for fields in _mounts_under(view):
                subprocess.run(["umount", "-l", fields[4]], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def test_a_stale_mount_of_something_else_is_replaced(tmp_path):
    """A view mount point that shows another folder (or a plain folder left by a dead namespace)
    is not live; `_bind_readonly` detaches what is there and binds the right source."""
    from tcsexam.runner.sandboxes import runas

    source, other, target = tmp_path / "source", tmp_path / "other", tmp_path / "target"
    for folder in (source, other, target):
        folder.mkdir()
    (source / "mark").write_text("source")
    assert not runas.view_live(str(source), target)  # a plain folder: what a dead namespace leaves
    subprocess.run(["mount", "--bind", str(other), str(target)], check=True)
    try:
        assert not runas.view_live(str(source), target)
        runas._bind_readonly(str(source), target)
        assert runas.view_live(str(source), target) and (target / "mark").read_text() == "source"
        with pytest.raises(OSError):
            (target / "new").write_text("x")  # read-only
    finally:
        for _ in range(4):
            subprocess.run(["umount", "-l", str(target)], capture_output=True)
