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
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import PurePath

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


class BwrapSandbox(WrappingSandbox):
    name = "bwrap"

    def __init__(self, executable: str = "bwrap"):
        self.executable = executable
        # resolved once, from the harness's own PATH: never the candidate's
        self.exe = executable if os.path.isabs(executable) else shutil.which(executable)
        self.setpriv = shutil.which("setpriv", path=SAFE_PATH)
        self.env_exe = shutil.which("env", path=SAFE_PATH)
        self._help: str | None = None

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
        if self._help is None:
            try:
                done = subprocess.run([self.exe or self.executable, "--help"], capture_output=True, text=True,
                                      timeout=30, env=harness_env())  # fmt: skip
                self._help = done.stdout + done.stderr
            except (OSError, subprocess.SubprocessError):
                self._help = ""
        return flag in self._help

    def check_available(self) -> None:
        exe = self.exe
        if exe is None:
            raise InputError(f"sandbox bwrap: {self.executable!r} not found on PATH (install bubblewrap)")
        if candidate_ids() is not None and self.setpriv is None:
            raise InputError("sandbox bwrap: the harness is root and setpriv (util-linux) is not installed")
        if candidate_ids() is not None and not self._supports("--perms"):
            raise InputError("sandbox bwrap: the harness is root and this bubblewrap lacks --perms (need >= 0.8)")
        try:
            probe = subprocess.run(
                self.command(["true"], cwd="/", env={"PATH": SAFE_PATH}), capture_output=True, text=True, timeout=30,
                env=harness_env(),
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError) as exc:
            raise InputError(f"sandbox bwrap: cannot run {exe}: {exc}") from None
        if probe.returncode != 0:
            line = " ".join(probe.stderr.split()) or f"exit code {probe.returncode}"
            raise InputError(f"sandbox bwrap: a test sandbox failed to start: {line}")

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
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            *perms, *sized, "--tmpfs", "/tmp",
            *perms, *sized, "--tmpfs", "/dev/shm",
        ]  # fmt: skip

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
        args = [self.exe or self.executable, *self.base_args(tmp_mb)]
        interpreter = interpreter_paths()
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
            else:
                args += ["--bind" if kind == 1 else "--ro-bind", path, path]
        inner = env if ids is None else {"PATH": SAFE_PATH}  # as root: sh and setpriv get no candidate variable
        if env is not None:
            args.append("--clearenv")
            for key, value in inner.items():
                args += ["--setenv", key, value]
        if status_fd is not None:
            args += ["--json-status-fd", str(status_fd)]
        args += ["--chdir", cwd, "--"]
        drop = []
        if ids is not None:
            uid, gid = ids
            drop = [self.setpriv or "setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups",
                    "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"]  # fmt: skip
            if env is not None:  # the candidate's environment applies only at its own exec, after the drop
                drop += [self.env_exe or "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items() if "=" not in k)]
        if ready_fd is not None:  # reports from inside that the sandbox is up, then execs argv
            wait = ""
            if start_fd is not None:  # ... once the harness says `go` (end of file: never)
                wait = f'read -r go </proc/self/fd/{start_fd} && [ "$go" = go ] && '
            return args + ["/bin/sh", "-c", f'printf up >/proc/self/fd/{ready_fd} && {wait}exec "$0" "$@"', *drop,
                           *argv]  # fmt: skip
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
