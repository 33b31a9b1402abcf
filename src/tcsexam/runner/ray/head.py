"""One Ray head per local workflow run, shared by every `tcsexam run` job.

Starting Ray costs seconds per job; a workflow with many short Solver jobs on one machine starts it
once and passes the state folder to each job (`tcsexam run --ray-head DIR`). The Snakefile's
`onstart` only arms the folder (`tcsexam runner ray-head start --on-demand`: `arm`); the first job
that chooses Ray starts the head (`start_on_demand`, one starter at a time) and later ones join it,
so a run whose jobs all run in process (a small batch, `PoolKind.AUTO`) never pays for a head: its
start took about 3 core-seconds and its idle processes 2 more a minute on a quiet 2-core machine.
The head runs as `ray start --head --block` in its own session; its state (pid, address, temp dir)
lives in the state folder, so a second `start` reuses a live head (a rerun after a killed workflow)
and `stop` ends exactly this head's process tree, never any other Ray.

The head is one fixed node: no autoscaler monitor and no log monitor (jobs do not forward worker
logs), two Python processes fewer competing with the first jobs while it starts.

A developer running `tcsexam run` by hand starts one head in the default state folder
(`tcsexam runner ray-head start` without `--state-dir`: `default_state_dir()`, one per user and
machine, or `TCSEXAM_RAY_HEAD`); a standalone `tcsexam run` then joins it when it is alive
(`local_head`) instead of starting a Ray of its own, and reaches its first instance in about a
second instead of a few. A folder another user could have made or changed is never joined.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tcsexam.errors import InputError
from tcsexam.fileio import atomic_write_text
from tcsexam.runner.ray.job import RAY_ENV, ensure_token, private_ray_temp, token_env, use_token

#: The head's Ray token (Ray's RAY_AUTH_MODE=token): in its state folder, mode 0600, created by
#: the first `start`; the head and every client use it (`token_env`). No candidate can read it
#: (bwrap and docker do not show the state folder; a root harness runs candidates as another uid).
TOKEN_FILE = "auth_token"


ADDRESS_FILE = "address"
PID_FILE = "pid"
TEMP_FILE = "temp_dir"
LOG_FILE = "ray-head.log"
#: written by `arm`: the head's CPUs; a job that wants Ray and finds no head starts one
ON_DEMAND_FILE = "on-demand"
START_LOCK = "start.lock"
_ADDRESS_RE = re.compile(r"ray start --address='([^']+)'")


#: the default state folder (`default_state_dir`); "" or "none": no default head is ever joined
DEFAULT_STATE_ENV = "TCSEXAM_RAY_HEAD"


def default_state_dir() -> Path | None:
    """The state folder of this user's default head on this machine: `TCSEXAM_RAY_HEAD`, else
    /tmp/tcsexam-ray-head-<uid> (node-local: on a cluster each node has its own); None when
    `TCSEXAM_RAY_HEAD` is "" or "none"."""
    value = os.environ.get(DEFAULT_STATE_ENV)
    if value is None:
        return Path(f"/tmp/tcsexam-ray-head-{os.geteuid()}")
    return None if value.strip().lower() in ("", "none") else Path(value)


def private_to_me(state: Path) -> bool:
    """`state` is a folder (not a link) owned by this user that no one else may write or enter:
    what a head's state must be before its address and token are trusted."""
    try:
        st = os.lstat(state)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o077


def local_head() -> tuple[Path, str] | None:
    """(state folder, address) of this user's default head when it is alive and its folder is
    private to this user, with this process set to reach it (`join`); None otherwise, and always
    inside a SLURM job (which keeps to its allocation) or where `RAY_ADDRESS` names a cluster."""
    state = default_state_dir()
    if state is None or os.environ.get("SLURM_JOB_ID") or os.environ.get("RAY_ADDRESS"):
        return None
    if not private_to_me(state):
        return None
    address = join(state, wait_s=0.0)
    return None if address is None else (state, address)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _alive(pid: int) -> bool:
    try:
        proc = psutil.Process(pid)
        return bool(proc.status() != psutil.STATUS_ZOMBIE)
    except Exception:
        return False


def _reachable(address: str, timeout: float = 2.0) -> bool:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def _address_from_log(state: Path) -> str | None:
    try:
        text = (state / LOG_FILE).read_text(errors="replace")
    except OSError:
        return None
    match = _ADDRESS_RE.search(text)
    return match.group(1) if match and "Ray runtime started" in text else None


def _pid(state: Path) -> int | None:
    try:
        return int((state / PID_FILE).read_text().strip())
    except (OSError, ValueError):
        return None


def current_address(state_dir: str | Path, wait_s: float = 0.0) -> str | None:
    """The address of this state folder's head when it is alive, else None.

    With `wait_s`, a head that is still starting (its process alive, no address yet) is waited
    for up to that many seconds."""
    state = Path(state_dir)
    deadline = time.monotonic() + wait_s
    while True:
        pid = _pid(state)
        if pid is None or not _alive(pid):
            return None
        address: str | None
        try:
            address = (state / ADDRESS_FILE).read_text().strip()
        except OSError:
            address = _address_from_log(state)
            if address:
                atomic_write_text(state / ADDRESS_FILE, f"{address}\n")
        if address:
            return address if _reachable(address) else None
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.2)


def join(state_dir: str | Path, wait_s: float) -> str | None:
    """The address of this state folder's live head (waiting up to `wait_s` while it starts),
    with this process's environment set to reach it (`token_env`); None when no head is alive."""
    address = current_address(state_dir, wait_s=wait_s)
    if address is not None:
        use_token(state_dir)
    return address


def arm(state_dir: str | Path, num_cpus: int) -> str | None:
    """Let the first job that wants Ray start this folder's head with `num_cpus` CPUs
    (`start_on_demand`); a live head (a rerun after a killed workflow) is kept and joined: its
    address is returned (None: no head yet)."""
    if num_cpus < 1:
        raise InputError(f"ray-head: --num-cpus must be >= 1, not {num_cpus}")
    state = Path(state_dir)
    state.mkdir(mode=0o700, parents=True, exist_ok=True)
    _refuse_shared_default(state)
    atomic_write_text(state / ON_DEMAND_FILE, f"{num_cpus}\n")
    return current_address(state)


def armed(state_dir: str | Path) -> bool:
    """`arm`ed: a job that wants Ray starts this folder's head when none is alive."""
    return (Path(state_dir) / ON_DEMAND_FILE).is_file()


def start_on_demand(state_dir: str | Path, timeout_s: float = 120.0) -> str | None:
    """The address of this folder's head, started now when `arm`ed and none is alive, with this
    process set to reach it; None when the folder is not armed. Jobs starting at once queue on a
    lock in the folder: one starts the head, the others join it."""
    state = Path(state_dir)
    try:
        num_cpus = int((state / ON_DEMAND_FILE).read_text().strip())
    except (OSError, ValueError):
        return None
    with open(state / START_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        address = current_address(state, wait_s=timeout_s)
        if address is None:
            address, _ = start(state, num_cpus, timeout_s=timeout_s)
    if address is not None:
        use_token(state)
    return address


def _refuse_shared_default(state: Path) -> None:
    if state == default_state_dir() and not private_to_me(state):
        raise InputError(
            f"ray-head: {state} is not a folder private to this user (mode 0700, owned by uid {os.geteuid()}); "
            f"remove it or set {DEFAULT_STATE_ENV} to another folder"
        )


def start(state_dir: str | Path, num_cpus: int, timeout_s: float = 120.0, wait: bool = True) -> tuple[str | None, bool]:
    """Start (or reuse) the head; returns (address, started_now).

    `wait=False` returns as soon as the head process is launched (address None when new):
    clients then call `current_address(state, wait_s=...)`, so the head's start overlaps other work."""
    state = Path(state_dir)
    state.mkdir(mode=0o700, parents=True, exist_ok=True)
    _refuse_shared_default(state)
    pid = _pid(state)
    if pid is not None and _alive(pid):
        address = current_address(state, wait_s=timeout_s if wait else 0.0)
        if address or not wait:
            return address, False
    stop(state, disarm=False)  # leftovers of a dead head
    if num_cpus < 1:
        raise InputError(f"ray-head: --num-cpus must be >= 1, not {num_cpus}")
    ray_bin = Path(sys.executable).with_name("ray")
    if not ray_bin.exists():
        found = shutil.which("ray")
        if not found:
            raise InputError("ray-head: the `ray` command is not installed beside this Python")
        ray_bin = Path(found)
    temp_dir, ray_temp = private_ray_temp("ray-wf-")  # Ray's 0777 folders inside a 0700 one
    argv = [
        str(ray_bin),
        "start",
        "--head",
        "--block",
        f"--num-cpus={num_cpus}",
        "--port=0",
        "--include-dashboard=false",
        "--no-monitor",
        "--include-log-monitor=false",
        "--disable-usage-stats",
        f"--temp-dir={ray_temp}",
        f"--ray-client-server-port={_free_port()}",
        f"--dashboard-port={_free_port()}",
        "--node-ip-address=127.0.0.1",
    ]
    log_path = state / LOG_FILE
    ensure_token(state / TOKEN_FILE)
    env = {**RAY_ENV, **os.environ, **token_env(state)}  # usage stats: off by --disable-usage-stats
    # the state is written before the head is launched and the launch undone if it cannot be
    # recorded: a full or read-only state folder fails with one line and leaves no head behind
    (state / ADDRESS_FILE).unlink(missing_ok=True)
    try:
        atomic_write_text(state / TEMP_FILE, f"{temp_dir}\n")
        log = open(log_path, "wb")
    except (OSError, InputError):
        shutil.rmtree(temp_dir, ignore_errors=True)
        raise
    with log:
        proc = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env=env
        )
    try:
        atomic_write_text(state / PID_FILE, f"{proc.pid}\n")
    except InputError:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(temp_dir, ignore_errors=True)
        raise
    if not wait:
        return None, True
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        text = log_path.read_text(errors="replace")
        match = _ADDRESS_RE.search(text)
        if match and "Ray runtime started" in text:
            address = match.group(1)
            atomic_write_text(state / ADDRESS_FILE, f"{address}\n")
            return address, True
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    tail = " | ".join(log_path.read_text(errors="replace").strip().splitlines()[-3:])
    stop(state)
    raise InputError(f"ray-head: the Ray head did not start within {timeout_s:.0f}s (log {log_path}: {tail})")


def stop_detached(state_dir: str | Path) -> bool:
    """Hand the head to a detached `stop` and return at once; True when there was a state to stop.

    The state folder is renamed first, so no later `start` or `address` can see the dying head;
    the detached process stops the tree and removes the renamed folder.
    """
    state = Path(state_dir)
    if not (state / PID_FILE).exists():
        (state / ON_DEMAND_FILE).unlink(missing_ok=True)
        return False
    stopping = state.with_name(f"{state.name}.stopping-{os.getpid()}-{time.time_ns()}")
    try:
        state.rename(stopping)
    except OSError:
        return False
    subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tcsexam",
            "runner",
            "ray-head",
            "stop",
            "--state-dir",
            str(stopping),
            "--remove-state",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    return True


def stop(state_dir: str | Path, timeout_s: float = 20.0, remove_state: bool = False, disarm: bool = True) -> bool:
    """Stop this state folder's head and its whole process tree (and, with `disarm`, no job starts
    another on demand); True when one was running."""
    state = Path(state_dir)
    was_running = False
    try:
        pid = int((state / PID_FILE).read_text().strip())
    except (OSError, ValueError):
        pid = None
    if pid is not None and _alive(pid):
        try:
            root = psutil.Process(pid)
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            tree = []
        if tree:
            was_running = True
            try:
                tree[0].send_signal(signal.SIGTERM)  # the root: `ray start --block` tears its processes down
            except psutil.Error:
                pass
            _, alive = psutil.wait_procs(tree, timeout=timeout_s)
            for proc in alive:
                try:
                    proc.kill()
                except psutil.Error:
                    pass
            psutil.wait_procs(alive, timeout=5)
    try:
        temp_dir = (state / TEMP_FILE).read_text().strip()
    except OSError:
        temp_dir = ""
    if temp_dir.startswith("/tmp/ray-wf-"):
        shutil.rmtree(temp_dir, ignore_errors=True)
    for name in (ADDRESS_FILE, PID_FILE, TEMP_FILE, *([ON_DEMAND_FILE] if disarm else [])):
        (state / name).unlink(missing_ok=True)
    if remove_state:
        shutil.rmtree(state, ignore_errors=True)
    return was_running
