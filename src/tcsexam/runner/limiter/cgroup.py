"""The ``cgroup`` limiter: cgroups v1 (memory, pids, cpuacct, freezer) or v2 where its memory,
pids and cpu controllers are delegated to us. Exact memory limit (the kernel's OOM killer;
`memory.oom_control` counts the kill), exact peak (page cache included), `pids.max` for the process
count (a fork bomb's `fork()` fails), exact CPU of the whole tree, and a whole-tree kill (freeze,
SIGKILL every pid in `cgroup.procs`, thaw; `cgroup.kill` on v2): no process of the run can leave
its cgroup, so nothing survives the run.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import signal as _signal
import threading
import time
from pathlib import Path

from tcsexam.containment import Limiter
from tcsexam.runner.limiter.proctable import live, read_stat
from tcsexam.runner.limiter.types import Limits, MiB

_mounts_cache: tuple[int, dict[str, str]] | None = None
_log = logging.getLogger(__name__)


def _cgroup_mounts() -> dict[str, str]:
    """controller -> mount point of the v1 hierarchies; 'unified' -> the v2 mount (read once per
    process: every run of a worker creates its cgroups under the same mounts)."""
    global _mounts_cache
    cached = _mounts_cache
    if cached is not None and cached[0] == os.getpid():
        return cached[1]
    mounts = _read_cgroup_mounts()
    if mounts:
        _mounts_cache = (os.getpid(), mounts)
    return mounts


def _read_cgroup_mounts() -> dict[str, str]:
    mounts: dict[str, str] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return mounts
    for line in lines:
        left, _, right = line.partition(" - ")
        parts, rparts = left.split(), right.split()
        if len(parts) < 5 or len(rparts) < 3:
            continue
        if rparts[0] == "cgroup":
            for opt in rparts[2].split(","):
                mounts.setdefault(opt, parts[4])
        elif rparts[0] == "cgroup2":
            mounts.setdefault("unified", parts[4])
    return mounts


def _own_cgroups() -> dict[str, str]:
    """controller -> this process's cgroup path (v1); '' -> the v2 path."""
    own: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            own[c] = path
    return own


class _CgroupV1:
    CONTROLLERS = ("memory", "pids", "cpuacct", "freezer")
    _counter = itertools.count()

    def __init__(self, limits: Limits):
        mounts, own = _cgroup_mounts(), _own_cgroups()
        name = cgroup_name(next(self._counter))
        self.dirs: dict[str, Path] = {}
        try:
            for c in self.CONTROLLERS:
                d = Path(mounts[c]) / own[c].lstrip("/") / name
                d.mkdir()
                self.dirs[c] = d
            mem = self.dirs["memory"]
            if limits.mem_mb:
                (mem / "memory.limit_in_bytes").write_text(str(int(limits.mem_mb * MiB)))
                try:  # no swap either, where swap accounting exists
                    (mem / "memory.memsw.limit_in_bytes").write_text(str(int(limits.mem_mb * MiB)))
                except OSError:
                    pass
            if limits.nproc:
                (self.dirs["pids"] / "pids.max").write_text(str(int(limits.nproc)))
        except BaseException:
            self.remove()
            raise
        self.procs_files = [str(d / "cgroup.procs") for d in self.dirs.values()]

    def pids(self) -> list[int]:
        try:
            text = (self.dirs["pids"] / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(x) for x in text.split()]

    def cpu_s(self) -> float:
        return int((self.dirs["cpuacct"] / "cpuacct.usage").read_text()) / 1e9

    def peak_mb(self) -> float:
        return int((self.dirs["memory"] / "memory.max_usage_in_bytes").read_text()) / MiB

    def oom_killed(self) -> bool:
        try:
            for line in (self.dirs["memory"] / "memory.oom_control").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
        except OSError:
            pass
        return False

    def nproc_hit(self) -> bool:
        try:
            events = (self.dirs["pids"] / "pids.events").read_text().split()
            return len(events) >= 2 and int(events[1]) > 0
        except (OSError, ValueError):
            return False

    def kill_all(self, sig: int) -> list[int]:
        """Freeze, signal every process in the cgroup, thaw; returns the pids signalled. The thaw
        is in a `finally`: an exception or a signal handler between the freeze and the kill
        (SIGTERM's SystemExit) must never leave the run's processes frozen for ever."""
        freezer = self.dirs["freezer"] / "freezer.state"
        frozen = False
        with _freeze_lock:  # `thaw_own_and_stop_freezing` waits for it before the process exits
            try:
                if sig == _signal.SIGKILL and not _freezing_stopped:
                    try:
                        freezer.write_text("FROZEN")
                        frozen = True
                    except OSError:
                        pass
                pids = self.pids()
                for pid in pids:
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
            finally:
                if frozen:
                    thaw(self.dirs["freezer"])
        return pids

    def remove(self) -> None:
        for d in self.dirs.values():
            for _ in range(200):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.005)


class _CgroupV2:
    """A child of this process's cgroup in the unified hierarchy; usable only where the memory,
    pids and cpu controllers are already enabled for our subtree (delegation)."""

    _counter = itertools.count()

    def __init__(self, limits: Limits):
        mounts, own = _cgroup_mounts(), _own_cgroups()
        base = Path(mounts["unified"]) / own[""].lstrip("/")
        enabled = (base / "cgroup.subtree_control").read_text().split()
        if not {"memory", "pids", "cpu"} <= set(enabled):
            raise OSError("cgroup v2 controllers memory, pids, cpu are not delegated here")
        self.dir = base / cgroup_name(next(self._counter))
        self.dir.mkdir()
        try:
            if limits.mem_mb:
                (self.dir / "memory.max").write_text(str(int(limits.mem_mb * MiB)))
                (self.dir / "memory.swap.max").write_text("0")
            if limits.nproc:
                (self.dir / "pids.max").write_text(str(int(limits.nproc)))
        except BaseException:
            self.remove()
            raise
        self.procs_files = [str(self.dir / "cgroup.procs")]

    def pids(self) -> list[int]:
        try:
            return [int(x) for x in (self.dir / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def _kv(self, name: str) -> dict[str, int]:
        out = {}
        for line in (self.dir / name).read_text().splitlines():
            k, _, v = line.partition(" ")
            out[k] = int(v)
        return out

    def cpu_s(self) -> float:
        return self._kv("cpu.stat").get("usage_usec", 0) / 1e6

    def peak_mb(self) -> float:
        try:
            return int((self.dir / "memory.peak").read_text()) / MiB
        except OSError:
            return int((self.dir / "memory.current").read_text()) / MiB

    def oom_killed(self) -> bool:
        return self._kv("memory.events").get("oom_kill", 0) > 0

    def nproc_hit(self) -> bool:
        return self._kv("pids.events").get("max", 0) > 0

    def kill_all(self, sig: int) -> list[int]:
        pids = self.pids()
        if sig == _signal.SIGKILL and (self.dir / "cgroup.kill").exists():
            (self.dir / "cgroup.kill").write_text("1")
            return pids
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        return pids

    def remove(self) -> None:
        for _ in range(200):
            try:
                self.dir.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.005)


_cgroup_kind: str | None | bool = False  # False: not probed yet
_cgroup_probe_error = ""
_probe_lock = threading.Lock()  # a worker's concurrent runs must all see the probe's one answer


def cgroup_support() -> str | None:
    """'v1' or 'v2' when this process can create limiting cgroups, else None (probed once)."""
    global _cgroup_kind, _cgroup_probe_error
    if _cgroup_kind is not False:
        return _cgroup_kind  # type: ignore[return-value]
    with _probe_lock:
        if _cgroup_kind is False:
            probe = Limits(wall_s=1, mem_mb=64, nproc=8)
            kind_found, errors = None, ""
            for kind, cls in (("v1", _CgroupV1), ("v2", _CgroupV2)):
                try:
                    cls(probe).remove()
                    kind_found = kind
                    break
                except (OSError, KeyError, ValueError) as exc:
                    errors += f"{kind}: {exc}; "
            _cgroup_probe_error += errors
            _cgroup_kind = kind_found
            if kind_found is not None:
                sweep_stale_cgroups()  # what killed runs left (frozen, empty) goes before ours start
    return _cgroup_kind


def cgroup_probe_error() -> str:
    """Why `cgroup_support()` found no usable cgroups ('' when it did)."""
    cgroup_support()
    return _cgroup_probe_error.strip()


class CgroupTree:
    """The run's processes as the cgroup limiter sees them: the members of one fresh cgroup."""

    allocation_failures_mean_memory = False
    uses_data_rlimit = False

    def __init__(self, limits: Limits):
        self.limits = limits
        self.cgroup = _CgroupV1(limits) if cgroup_support() == "v1" else _CgroupV2(limits)
        self.procs_files = self.cgroup.procs_files
        self.name = Limiter(f"cgroup-{cgroup_support()}")

    def start(self, leader: int) -> None:
        self.leader = leader

    def pids(self) -> list[int]:
        return live(self.cgroup.pids())

    def kill(self, sig: int, *, spare_leader: bool = False) -> list[int]:
        if not self.cgroup.pids():
            return []  # an empty cgroup stays empty (only its members can fork into it)
        return live(self.cgroup.kill_all(sig))  # frozen first: the leader need not be spared

    def sample(self) -> tuple[float, float, int]:
        return self.cgroup.cpu_s(), 0.0, 0

    def oom_killed(self) -> bool:
        return self.cgroup.oom_killed()

    def nproc_hit(self) -> bool:
        return self.cgroup.nproc_hit()

    def pss_mb(self) -> float:
        return 0.0

    def reap_orphans(self) -> None:
        return None

    def leader_reaped(self) -> None:
        return None

    def totals(self, usage, cpu_seen: float, peak_rss: float) -> tuple[float, float]:
        """(CPU seconds, peak memory MB) of the whole run."""
        return self.cgroup.cpu_s(), self.cgroup.peak_mb()

    def close(self) -> None:
        self.cgroup.remove()


# ---- names, thawing and the sweep of what dead runs left -------------------------------------

_freeze_lock = threading.Lock()  #: held from a freeze to its thaw
_freezing_stopped = False  #: set once this process is about to exit: no cgroup is frozen again


def thaw_own_and_stop_freezing(timeout_s: float = 2.0) -> int:
    """Before this process exits on its own terms (an actor whose raylet is gone: `os._exit`):
    wait for any freeze in progress to end, forbid new ones, then kill and thaw whatever is left
    in this process's own cgroups. Without it, a run thread that froze its cgroup just before the
    exit would leave its candidate frozen for ever. The lock stays held: nothing freezes again."""
    global _freezing_stopped
    _freeze_lock.acquire(timeout=timeout_s)
    _freezing_stopped = True
    mine = f"tcsexam-{os.getpid()}-"
    killed: set[int] = set()
    try:
        for name, dirs in _sweep_dirs().items():
            if name.startswith(mine):
                for pid in {pid for d in dirs for pid in _procs(d)}:
                    try:
                        os.kill(pid, _signal.SIGKILL)
                        killed.add(pid)
                    except OSError:
                        pass
                for d in dirs:
                    if (d / "freezer.state").exists():
                        thaw(d)
    except Exception:  # best effort: the process exits next
        pass
    return len(killed)


_NAME = re.compile(r"^tcsexam-(\d+)(?:-s(\d+)-n(\d+))?-")
_V1_SWEEP_WAIT_S = 2.0


def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def cgroup_name(counter: int) -> str:
    """`tcsexam-<pid>-s<start time>-n<pid namespace>-<counter>-<ns>`: the owner (this process) is
    known by its pid, its start time (a reused pid is another process) and its pid namespace (a
    pid means nothing in another one), so a later sweep can tell a dead owner from a live one."""
    me = read_stat(os.getpid())
    start = me.start if me is not None else 0
    return f"tcsexam-{os.getpid()}-s{start}-n{_pid_namespace()}-{counter}-{time.monotonic_ns() % 10**9}"


def owner_alive(name: str) -> bool | None:
    """Whether the process that created cgroup `name` still runs; None when this process cannot
    tell (not a tcsexam name, or created in another pid namespace). Names of older versions
    (`tcsexam-<pid>-<counter>...`) are judged by the pid alone."""
    m = _NAME.match(name)
    if m is None:
        return None
    pid, start, ns = int(m.group(1)), m.group(2), m.group(3)
    if ns is not None and int(ns) != _pid_namespace():
        return None
    proc = read_stat(pid)
    if proc is None or proc.state in ("Z", "X"):
        return False
    return start is None or proc.start == int(start)


def thaw(freezer_dir: Path) -> bool:
    """Write THAWED to a v1 freezer cgroup until it reads so (a few tries); True when thawed or
    gone."""
    state = freezer_dir / "freezer.state"
    for _ in range(50):
        try:
            state.write_text("THAWED")
            if state.read_text().strip() == "THAWED":
                return True
        except FileNotFoundError:
            return True
        except OSError:
            pass
        time.sleep(0.002)
    return False


def thaw_cgroups_of(pids) -> int:
    """Thaw the frozen `tcsexam-*` freezer cgroups (v1) or cgroups (v2) that hold any of `pids`:
    a SIGKILLed process that is frozen never dies until thawed. Returns how many were thawed."""
    mounts = _cgroup_mounts()
    thawed = 0
    for pid in pids:
        try:
            lines = Path(f"/proc/{int(pid)}/cgroup").read_text().splitlines()
        except (OSError, ValueError):
            continue
        for line in lines:
            _, controllers, path = line.split(":", 2)
            if not Path(path).name.startswith("tcsexam-"):
                continue
            if "freezer" in controllers.split(",") and "freezer" in mounts:
                d = Path(mounts["freezer"]) / path.lstrip("/")
                try:
                    if (d / "freezer.state").read_text().strip() != "THAWED":
                        thawed += thaw(d)
                except OSError:
                    pass
            elif controllers == "" and "unified" in mounts:
                try:
                    (Path(mounts["unified"]) / path.lstrip("/") / "cgroup.freeze").write_text("0")
                except OSError:
                    pass
    return thawed


def _procs(d: Path) -> list[int]:
    try:
        return [int(x) for x in (d / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _sweep_dirs() -> dict[str, list[Path]]:
    """name -> the cgroup folders of that name, one per hierarchy: every `tcsexam-*` beside this
    process's own cgroup (in each v1 controller's hierarchy, or in v2's), and anywhere else in the
    hierarchies (a run started from another session leaves its memory cgroup under that session's)
    those whose name says they were made in this pid namespace."""
    mounts, own = _cgroup_mounts(), _own_cgroups()
    parents, roots = [], []
    for c in (*_CgroupV1.CONTROLLERS, ""):
        mount = mounts.get(c or "unified")
        if mount is not None and c in own:
            parents.append(Path(mount) / own[c].lstrip("/"))
            roots.append(Path(mount))
    found: dict[str, list[Path]] = {}
    for parent in dict.fromkeys(parents):
        for path in _tcsexam_children(parent):
            found.setdefault(path.name, []).append(path)
    ns = str(_pid_namespace())
    for root in dict.fromkeys(roots):
        for path in _walk_tcsexam(root, skip=set(parents)):
            m = _NAME.match(path.name)
            if m is not None and m.group(3) == ns and path not in found.get(path.name, []):
                found.setdefault(path.name, []).append(path)
    return found


def _tcsexam_children(parent: Path) -> list[Path]:
    try:
        with os.scandir(parent) as it:
            return [Path(e.path) for e in it if e.name.startswith("tcsexam-") and e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _walk_tcsexam(root: Path, *, skip: set[Path], depth: int = 4, budget: int = 5000) -> list[Path]:
    """The `tcsexam-*` cgroups under `root` (at most `depth` levels down, `budget` folders read)."""
    out: list[Path] = []
    level = [root]
    for _ in range(depth):
        below = []
        for d in level:
            budget -= 1
            if budget < 0:
                return out
            try:
                with os.scandir(d) as it:
                    subdirs = [Path(e.path) for e in it if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            for sub in subdirs:
                if sub.name.startswith("tcsexam-"):
                    if d not in skip:
                        out.append(sub)
                else:
                    below.append(sub)
        level = below
    return out


def _sweep_one(dirs: list[Path]) -> tuple[bool, bool, int]:
    """Kill what is left in one dead run's cgroups, thaw them, remove them:
    (was frozen, removed, processes killed)."""
    frozen = False
    for d in dirs:
        try:
            frozen |= (d / "freezer.state").read_text().strip() != "THAWED"
        except OSError:
            pass
        try:
            frozen |= (d / "cgroup.freeze").read_text().strip() == "1"
        except OSError:
            pass
    pids = sorted({pid for d in dirs for pid in _procs(d)})
    for pid in pids:
        try:
            os.kill(pid, _signal.SIGKILL)
        except OSError:
            pass
    for d in dirs:
        if (d / "freezer.state").exists():
            thaw(d)
        elif (d / "cgroup.freeze").exists():
            try:
                (d / "cgroup.freeze").write_text("0")
            except OSError:
                pass
    deadline = time.monotonic() + (_V1_SWEEP_WAIT_S if pids else 0.0)
    removed = True
    for d in dirs:
        while _procs(d) and time.monotonic() < deadline:
            time.sleep(0.01)
        try:
            d.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            removed = False  # still busy: the next sweep tries again
    return frozen, removed, len(pids)


def sweep_stale_cgroups() -> dict[str, int]:
    """Remove the `tcsexam-*` cgroups whose owner is gone (a run killed before it removed them):
    the frozen ones are thawed and their processes killed first. Cgroups of live runs, and those
    whose owner this process cannot judge, are left alone. Never raises. Returns the counts
    (`removed`, `frozen`, `killed`, `left`)."""
    counts = {"removed": 0, "frozen": 0, "killed": 0, "left": 0}
    try:
        stale = {name: dirs for name, dirs in _sweep_dirs().items() if owner_alive(name) is False}
        for dirs in stale.values():
            frozen, removed, killed = _sweep_one(dirs)
            counts["frozen"] += frozen
            counts["removed" if removed else "left"] += 1
            counts["killed"] += killed
    except Exception as exc:  # a sweep is housekeeping: it must never stop a run
        _log.warning("sweep of stale tcsexam cgroups stopped: %s", exc)
    if any(counts.values()):
        _log.info(
            "stale tcsexam cgroups of dead runs: %(removed)d removed (%(frozen)d were frozen, "
            "%(killed)d processes killed), %(left)d still busy",
            counts,
        )
    return counts
