"""Hostile candidates against the machine's other processes and its privileges: a grandchild in
a session of its own, `kill -9` of the harness, of the candidate's parent and of every process
it may signal (`kill -9 -1`: other runs of the candidate uid), one uid per harness process of a
uid range, root and capabilities, mounts, remounts and cgroup moves, and System V IPC objects
left for the next candidate. (The escape candidates, one per way to outlive a run:
test_hostile_escapes.py.)

Each test asserts what the candidate achieved (the process it tried to kill lives, the file it
tried to write does not exist, the secret it tried to read is not in its output), not only the
status.

Run as root and as an unprivileged user (`.ci/run` does both):
``pytest -m hostile tests/unit/runner``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tcsexam.errors import InputError
from tcsexam.runner.sandboxes import get_sandbox

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_support import LIMITERS, ROOT, SANDBOXES, box_or_skip, run, run_sh, sandbox_or_skip, sh, trusted_local  # noqa: E402

pytestmark = pytest.mark.hostile


# -- processes outside the run's: a setsid grandchild, the harness, other runs -----------------


@pytest.mark.parametrize("limiter", LIMITERS)
def test_setsid_grandchild_is_killed(task, tmp_path, limiter):
    record, _, _ = run(task, "setsid_child", tmp_path, limiter=limiter)
    assert record.status == "ok", record.message  # the answer counts; the escapee does not survive


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_candidate_cannot_kill_the_harness(reachable_tmp, sandbox):
    """`kill -9 -1` and a SIGKILL to its parent and to the harness: the harness lives on and
    gets the outcome."""
    box = box_or_skip(sandbox)
    trusted_local(sandbox)
    out, _ = sh(
        box,
        f"kill -9 {os.getpid()} 2>/dev/null; kill -9 $PPID 2>/dev/null; kill -9 -1 2>/dev/null; echo alive",
        reachable_tmp,
    )
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
        out, _ = sh(
            get_sandbox("local"),
            f"ls /proc | grep -qx {bystander.pid} && echo seen; kill -9 -1; echo done",
            reachable_tmp,
        )
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
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
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


# -- 19.2: never root, never a capability; mounts, remounts and cgroup moves fail --------------


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


# -- System V IPC dies with the run ------------------------------------------------------------


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
