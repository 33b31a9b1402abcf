"""The limiter makes its process a child subreaper (orphans of a run come back to it to be swept);
`stop_being_subreaper` undoes it for a process that goes on starting programs it does not reap
(the workflow's Snakemake after its checks), whose orphans would otherwise pile up as its zombies."""

from __future__ import annotations

import subprocess
import sys

PROBE = r"""
import ctypes, os, subprocess, time
from tcsexam.runner.limiter import proctable

libc = ctypes.CDLL(None, use_errno=True)

def subreaper():
    value = ctypes.c_int(-1)
    libc.prctl(37, ctypes.byref(value), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
    return value.value

def orphan_parent():
    # a shell that leaves a sleeping child behind: whose child does the orphan become?
    out = subprocess.run(["sh", "-c", "sleep 5 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True).stdout
    pid = int(out)
    time.sleep(0.2)
    with open(f"/proc/{pid}/stat") as f:
        parent = int(f.read().rsplit(")", 1)[1].split()[1])
    os.kill(pid, 9)
    if parent == os.getpid():
        os.waitpid(pid, 0)
    return parent

assert proctable.become_subreaper() and subreaper() == 1
assert orphan_parent() == os.getpid()
proctable.stop_being_subreaper()
assert subreaper() == 0 and not proctable._subreaper_done
assert orphan_parent() != os.getpid()
proctable.stop_being_subreaper()  # twice: nothing to undo
assert proctable.become_subreaper() and subreaper() == 1  # and the limiter can take it up again
print("ok")
"""


def test_stop_being_subreaper_gives_the_orphans_back():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
