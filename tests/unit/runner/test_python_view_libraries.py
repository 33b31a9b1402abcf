"""The interpreter view's `python3` loads the interpreter's own shared libraries (issue 32).

A pyenv Python under /root (mode 0700) has RUNPATH /root/.pyenv/versions/X/lib. Through the view
(`runas.python_dir`) the candidate uid ran the binary, but the loader could not enter that RUNPATH
and silently took Debian's libpython of the same soname (3.11.2 for a 3.11.7 binary): `import
ssl` failed with "undefined symbol: _PyModule_Add", and Ray could not start. Here the view is built
in a private folder (never the machine's /run/tcsexam) and its `python3` run as an unprivileged
uid with an empty environment: `import ssl, ctypes, sqlite3, numpy` must work, every shared
library it maps under a name the harness also maps must be the harness's very file (same device
and inode), and a child that re-runs sys.executable with an empty environment must work too.
Through the loader (``--argv0``) and through the LD_LIBRARY_PATH fallback (old loaders); a hidden
library folder outside the prefixes is mounted in the view's venv and checked live like the rest.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("mount"),
    reason="the interpreter view is a root harness's (bind mounts, a run as another uid)",
)

#: argv[1] the view's root folder; argv[2] "loader", "fallback" or "extra" (argv[3]: a hidden library)
STEP = r"""
import json, os, subprocess, sys
from pathlib import Path
from tcsexam.runner.sandboxes import runas

runas.RUN_DIR = Path(sys.argv[1])
runas.opaque_ancestors = lambda paths, ids: ["/"]  # take the view's path even where reachable
if sys.argv[2] == "fallback":
    runas._loader_takes_argv0 = lambda loader: False
if sys.argv[2] == "extra":
    real = runas.interpreter_libraries()
    runas.interpreter_libraries = lambda: [*real, sys.argv[3]]
ids = (65534, 65534)
folder = runas.python_dir(ids)
PROBE = '''
import ctypes, json, os, sqlite3, ssl, subprocess, sys
import numpy
maps = {}
for line in open("/proc/self/maps"):
    fields = line.split()
    if len(fields) >= 6 and ".so" in fields[5]:
        maps[os.path.basename(fields[5])] = [fields[3], fields[4], fields[5]]
child = subprocess.run([sys.executable, "-c", "import ssl, numpy; print('child ok')"], env={},
                       capture_output=True, text=True)
print(json.dumps({"maps": maps, "executable": sys.executable, "ssl": ssl.OPENSSL_VERSION,
                  "child": child.stdout.strip() or child.stderr[-300:]}))
'''
probe = subprocess.run([os.path.join(folder, "python3"), "-c", PROBE], user=ids[0], group=ids[1],
                       extra_groups=[], capture_output=True, text=True, timeout=300, env={})
import ctypes, sqlite3, ssl, numpy  # the harness maps the same libraries
own = {}
for line in open("/proc/self/maps"):
    fields = line.split()
    if len(fields) >= 6 and ".so" in fields[5]:
        own[os.path.basename(os.path.realpath(fields[5]))] = [fields[3], fields[4], fields[5]]
mounts = [point for point in runas._mount_points() if point.startswith(sys.argv[1])]
listing = {point: sorted(os.listdir(point)) for point in mounts}
print(json.dumps({"folder": folder, "rc": probe.returncode, "out": probe.stdout, "err": probe.stderr[-2000:],
                  "own": own, "launcher": Path(folder, "python3").read_text() if not os.path.islink(
                      os.path.join(folder, "python3")) else None, "mounts": listing}))
"""


def _mounts_under(root: str) -> list[str]:
    return [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines() if root in line]


@pytest.fixture
def view_root():
    root = tempfile.mkdtemp(prefix="tcsexam-viewlib-", dir="/tmp")
    os.chmod(root, 0o755)  # the candidate uid passes through it to the venv
    yield root
    for _ in range(4):
        for point in sorted(_mounts_under(root), key=len, reverse=True):
            subprocess.run(["umount", "-l", point], capture_output=True)
    shutil.rmtree(root, ignore_errors=True)


def _step(view: str, *args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3] / "src"))
    out = subprocess.run(
        [sys.executable, "-c", STEP, view, *args], capture_output=True, text=True, timeout=600, env=env
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@needs_root
@pytest.mark.parametrize("how", ["loader", "fallback"])
def test_view_python_loads_the_interpreters_own_libraries(view_root, how):
    step = _step(os.path.join(view_root, "run"), how)
    assert step["rc"] == 0, step["err"]
    seen = json.loads(step["out"].strip().splitlines()[-1])
    # the same file for every library both map under one name (libpython above all)
    for name, (dev, inode, path) in seen["maps"].items():
        mine = step["own"].get(os.path.basename(os.path.realpath(path))) or step["own"].get(name)
        if mine is not None:
            assert (dev, inode) == (mine[0], mine[1]), f"{name}: the candidate maps {path}, the harness {mine[2]}"
    libpython = [name for name in step["own"] if name.startswith("libpython")]
    assert all(any(n.startswith("libpython") for n in seen["maps"]) for _ in libpython), seen["maps"].keys()
    assert os.path.dirname(seen["executable"]) == step["folder"], seen["executable"]  # the view's venv
    if how == "loader":  # sys.executable is the launcher: a child with no environment works too
        assert seen["child"] == "child ok", seen["child"]
    if step["launcher"] is not None:  # a launcher only where some library folder is hidden
        assert ("--library-path" in step["launcher"]) == (how == "loader"), step["launcher"]


@needs_root
def test_a_hidden_library_folder_outside_the_prefixes_is_mounted_and_kept_live(view_root, tmp_path):
    hidden = Path(tempfile.mkdtemp(prefix="tcsexam-hiddenlib-", dir="/tmp"))
    try:
        os.chmod(hidden, 0o700)  # the candidate uid cannot enter it
        (hidden / "libtcsexamfake.so.1").write_bytes(b"\x7fELF fake")
        view = os.path.join(view_root, "run")
        step = _step(view, "extra", str(hidden / "libtcsexamfake.so.1"))
        assert step["rc"] == 0, step["err"]  # the real libraries still load
        shown = [point for point, names in step["mounts"].items() if "libtcsexamfake.so.1" in names]
        assert len(shown) == 1 and "/venv/libs/" in shown[0], step["mounts"]
        assert shown[0] in step["launcher"], step["launcher"]
        # a later job in a namespace where that mount died mounts it again
        for point in sorted(_mounts_under(view), key=len, reverse=True):
            subprocess.run(["umount", "-l", point], check=True)
        again = _step(view, "extra", str(hidden / "libtcsexamfake.so.1"))
        assert again["rc"] == 0 and shown[0] in again["mounts"], again["mounts"]
        assert "libtcsexamfake.so.1" in again["mounts"][shown[0]]
    finally:
        shutil.rmtree(hidden, ignore_errors=True)


@pytest.mark.skipif(not shutil.which("readelf"), reason="readelf (binutils) says what the loader is")
def test_elf_interpreter_is_the_loader_readelf_names(tmp_path):
    from tcsexam.runner.sandboxes import runas

    for path in {os.path.realpath(sys.executable), os.path.realpath(shutil.which("sh") or "/bin/sh")}:
        out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True, check=True).stdout
        named = [line.split(":", 1)[1].strip(" ]") for line in out.splitlines() if "program interpreter:" in line]
        assert runas.elf_interpreter(path) == (named[0] if named else None), (path, out[-500:])
    (tmp_path / "text").write_text("#!/bin/sh\n")
    (tmp_path / "short").write_bytes(b"\x7fELF\x02\x01")
    assert runas.elf_interpreter(str(tmp_path / "text")) is None
    assert runas.elf_interpreter(str(tmp_path / "short")) is None
    assert runas.elf_interpreter(str(tmp_path / "missing")) is None
