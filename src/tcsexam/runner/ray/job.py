"""A job's Ray: started lean or joined, and an actor that outlives its raylet.

`start_ray` connects to an existing cluster (`address`, or `RAY_ADDRESS`) or starts a local one
sized to `workers * threads` CPUs with a short temp dir under /tmp, no dashboard, no log forwarding
and no runtime_env, which is the only fixed cost of a run (a few seconds). If Ray is already
initialised in this process it is reused and left running. `cancel_ray_abort_alarm` keeps Ray's
SIGTERM handler from aborting a cancelled job's clean-up, and an actor whose parent (the raylet)
went away kills its runs and exits (`exit_with_parent`).

A run's processes and its scratch folder belong to their harness process's owner token
(`ownership.owner`, `ownership.scratch`): the driver kills a lost actor's runs by that token
(`limiter.orphans.kill_run_orphans`) and removes its scratch folders (`remove_run_scratch`); each job
sweeps those whose owner is dead at its start (`sweep_dead_scratch`). No clean-up ever goes by a
pid: a pid is reused, a token is not.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil

from tcsexam.errors import InputError
from tcsexam.runner.limiter.cgroup import thaw_own_and_stop_freezing
from tcsexam.runner.limiter.orphans import kill_run_orphans
from tcsexam.runner.ownership.owner import owner_token
from tcsexam.runner.ownership.scratch import held_scratch, release_scratch


@dataclass
class RayHandle:
    started_here: bool  #: this process called ray.init (and shuts it down)
    address: str | None
    temp_dir: str | None
    total_cpus: float
    startup_s: float
    connected_here: bool = False  #: this process connected to a running cluster (and disconnects)

    @property
    def ends_job(self) -> bool:
        """shutdown() ends this process's Ray job (and with it the job's actors)."""
        return self.started_here or self.connected_here

    def shutdown(self) -> None:
        if not self.ends_job:
            return
        import ray

        # An explicit disconnect is quick; leaving it to Ray's exit hook costs ~1 s per job.
        ray.shutdown()
        if self.temp_dir:
            shutil.rmtree(self.temp_dir, ignore_errors=True)


def job_cpus() -> int:
    """CPUs this job may use: SLURM_CPUS_PER_TASK, else the affinity mask, else os.cpu_count()."""
    slurm = os.environ.get("SLURM_CPUS_PER_TASK")
    if slurm and slurm.isdigit() and int(slurm) > 0:
        return int(slurm)
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


#: Environment of every Ray process the harness starts (set unless the user set them): no usage
#: statistics, and no task events (they feed only the dashboard and the state API, which the
#: harness does not use; flushing them made a driver's disconnect take ~0.3 s instead of ~0.03 s).
def token_env(state_dir: str | Path) -> dict[str, str]:
    """What a Ray (the shared head, a job's own) and its clients must have in their environment:
    Ray's token authentication, with the token kept in `state_dir` (`ensure_token`)."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(Path(state_dir).resolve() / "auth_token")}


def use_token(state_dir: str | Path) -> None:
    """Switch this process (and the Ray processes it starts) to `token_env(state_dir)`; Ray keeps
    its configuration and token cached per process, both are reloaded."""
    os.environ.update(token_env(state_dir))
    try:
        # compiled (Cython) names that Ray's type stubs leave out: checked by the except below
        from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined, unused-ignore]

        Config.initialize("")
        AuthenticationTokenLoader.instance().reset_cache()
    except (ImportError, AttributeError):  # a Ray without token authentication: nothing cached
        pass


def ensure_token(path: Path) -> None:
    """A fresh random token at `path` (mode 0600) unless one is there."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_hex(32))


RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_task_events_report_interval_ms": "0"}

#: the folder inside a private Ray temp folder that Ray itself gets (`private_ray_temp`)
RAY_INNER = "r"


def private_ray_temp(prefix: str) -> tuple[str, str]:
    """(folder, Ray's temp dir): a fresh 0700 folder under /tmp (short: Unix socket paths are
    limited) and the folder inside it that Ray is given. Ray makes its temp dir and every folder
    in it mode 0777 (its sockets, logs, session files); the 0700 folder around it keeps other
    users out, a root harness's candidates (another uid) among them."""
    folder = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    return folder, os.path.join(folder, RAY_INNER)


def start_ray(*, num_cpus: int | None, address: str | None = None) -> RayHandle:
    """Connect to `address` (or RAY_ADDRESS) or start a minimal local Ray with `num_cpus` CPUs."""
    import ray

    t0 = time.perf_counter()
    if ray.is_initialized():
        return RayHandle(False, None, None, ray.cluster_resources().get("CPU", 0.0), 0.0)
    address = address or os.environ.get("RAY_ADDRESS") or None
    for name, value in RAY_ENV.items():
        os.environ.setdefault(name, value)
    if address:
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
        except Exception as exc:  # a wrong address is the user's input
            raise InputError(f"cannot connect to Ray at {address!r}: {' '.join(str(exc).split())[:300]}") from None
        total = ray.cluster_resources().get("CPU", 0.0)
        return RayHandle(False, address, None, total, time.perf_counter() - t0, connected_here=True)
    tries_left = RAY_START_TRIES - 1
    while True:
        temp_dir, ray_temp = private_ray_temp("ray-")
        before = _children()
        try:
            # token authentication, the token in this job's own 0700 temp folder (not ~/.ray)
            ensure_token(Path(temp_dir) / "auth_token")
            use_token(temp_dir)
            with _agent_port_from_kernel(), _lean_node():
                ray.init(
                    address="local",
                    num_cpus=num_cpus,
                    num_gpus=0,
                    _temp_dir=ray_temp,
                    include_dashboard=False,  # quiet: no dashboard, no worker logs at the driver
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                )
        except BaseException as exc:
            shutil.rmtree(temp_dir, ignore_errors=True)
            # Ray gives its raylet 30 s to register (fixed in Ray); on a loaded node that can be too
            # short: stop what this try started and try again
            if not tries_left or "timed out during startup" not in str(exc):
                raise
            _kill_new_children(before)
            logging.getLogger(__name__).warning("Ray's start timed out (a loaded node); trying again")
            tries_left -= 1
            continue
        return RayHandle(True, None, temp_dir, float(num_cpus or 0), time.perf_counter() - t0)


RAY_START_TRIES = 3


def lean_start() -> bool:
    """Whether a local Ray starts lean (`_lean_node`): yes unless TCSEXAM_RAY_LEAN=0 (the previous
    start, kept for benchmarks/throughput.py's start split)."""
    return os.environ.get("TCSEXAM_RAY_LEAN", "1") != "0"


@contextlib.contextmanager
def _lean_node() -> Iterator[None]:
    """While inside, a new local node starts without Ray's log monitor (a Python process that
    tails every worker's log files to forward them to the driver: with `log_to_driver=False`
    nothing reads what it sends; the logs themselves stay in the temp dir). `ray.init` has no
    option for it; its `RayParams` has (`include_log_monitor`), defaulted here as in
    `_agent_port_from_kernel`. Off with TCSEXAM_RAY_LEAN=0."""
    try:
        from ray._private import parameter
    except ImportError:
        yield
        return
    original = getattr(parameter, "RayParams", None)
    if original is None or not lean_start():
        yield
        return

    class LeanParams(original):  # type: ignore[misc, valid-type, unused-ignore]  # Ray's class, found at run time
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("include_log_monitor", False)
            super().__init__(*args, **kwargs)

    parameter.RayParams = LeanParams  # type: ignore[misc, unused-ignore]  # swapped while inside (Ray declares a class)
    try:
        yield
    finally:
        parameter.RayParams = original  # type: ignore[misc, unused-ignore]


@contextlib.contextmanager
def _agent_port_from_kernel() -> Iterator[None]:
    """While inside, a new local node's dashboard agent listens on a port the kernel assigns
    instead of Ray's fixed 52365 (two job Rays on one node would both want it: the second one's
    agent then runs without its HTTP server). `ray.init` has no option for that port; it builds
    its `RayParams` through `ray._private.parameter.RayParams`, whose default this swaps for 0
    (Ray's own "any free port"). A Ray without that class is left as it is."""
    try:
        from ray._private import parameter
    except ImportError:
        yield
        return
    original = getattr(parameter, "RayParams", None)
    if original is None:
        yield
        return

    class KernelPortParams(original):  # type: ignore[misc, valid-type, unused-ignore]  # Ray's class, found at run time
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("dashboard_agent_listen_port", 0)
            super().__init__(*args, **kwargs)

    parameter.RayParams = KernelPortParams  # type: ignore[misc, unused-ignore]  # swapped while inside (Ray declares a class)
    try:
        yield
    finally:
        parameter.RayParams = original  # type: ignore[misc, unused-ignore]


def _children() -> set[int]:
    try:
        return {c.pid for c in psutil.Process().children(recursive=True)}
    except psutil.Error:
        return set()


def _kill_new_children(before: set[int]) -> None:
    """SIGKILL the processes a failed ray.init started (its GCS, raylet, reaper, ...)."""
    for pid in _children() - before:
        try:
            psutil.Process(pid).kill()
        except psutil.Error:
            pass


def cancel_ray_abort_alarm() -> None:
    """Cancel the abort that Ray's C++ failure handler arms when SIGTERM arrives. Ray installs
    absl's failure signal handler for SIGTERM in the processes it connects: it prints "*** SIGTERM
    received", passes the signal on (to Python, whose handler raises SystemExit) and arms alarm(3),
    whose SIGALRM aborts the process 3 s later whatever it is doing. A cancelled job's cleanup
    (stop Ray, wait for the actors to go, kill what their runs left) can take longer on a busy
    machine, and an abort half-way leaves candidates running. Left alone when Python code of this
    process handles SIGALRM itself (its alarm is its own)."""
    if signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None):
        signal.alarm(0)


def exit_with_parent(interval_s: float = 0.5) -> None:
    """In an actor: when its parent (the raylet) goes away, e.g. the driver and its local Ray were
    SIGKILLed, kill this actor's runs and exit instead of running on as an orphan."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(interval_s)
            if os.getppid() != parent:
                kill_run_orphans(owner_token())
                thaw_own_and_stop_freezing()  # no run thread may leave its cgroup frozen behind us
                for path in held_scratch():
                    release_scratch(path)
                os._exit(1)

    threading.Thread(target=watch, name="tcsexam-exit-with-parent", daemon=True).start()
