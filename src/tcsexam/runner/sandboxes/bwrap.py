"""`bwrap`: bubblewrap isolation around the limiter.

No network, pid, ipc, uts or cgroup namespace sharing (`--unshare-all`), the tree dies with bwrap
(`--die-with-parent`, and the pid namespace's init takes everyone with it), a read-only view of the
host (`--ro-bind / /`), fresh /dev and /proc, a private tmpfs /tmp, the instance and candidate
bound read-only at their own paths, the scratch directory the only writable place, and
`--new-session` (no terminal injection). bwrap reports over `--json-status-fd` once the sandbox is
up; a run without that report is a sandbox failure (`ProcessOutcome.sandbox_error`), which the
instance level records as `infrastructure_error`, never as the candidate's crash. bwrap exits
with 128+N when the program died by signal N: `classify` records that as `termination: signal`,
`signal: N`, as under `local` (an exit code of 129..192 chosen by the program reads the same).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import PurePath

from tcsexam.errors import InputError
from tcsexam.runner.limiter import Launch, ProcessOutcome
from tcsexam.runner.sandboxes.base import WrappingSandbox


def _interpreter_paths() -> list[str]:
    """The harness's Python (first on the candidate's PATH)."""
    return sorted({os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix), os.path.abspath(sys.prefix)})


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class BwrapSandbox(WrappingSandbox):
    name = "bwrap"

    def __init__(self, executable: str = "bwrap"):
        self.executable = executable

    def check_available(self) -> None:
        exe = shutil.which(self.executable)
        if exe is None:
            raise InputError(f"sandbox bwrap: {self.executable!r} not found on PATH (install bubblewrap)")
        try:
            probe = subprocess.run([exe, *self.base_args(), "--", "true"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError) as exc:
            raise InputError(f"sandbox bwrap: cannot run {exe}: {exc}") from None
        if probe.returncode != 0:
            line = " ".join(probe.stderr.split()) or f"exit code {probe.returncode}"
            raise InputError(f"sandbox bwrap: a test sandbox failed to start: {line}")

    @staticmethod
    def base_args() -> list[str]:
        return [
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--tmpfs", "/tmp",
        ]  # fmt: skip

    def command(
        self,
        argv,
        *,
        cwd: str,
        readonly_paths=(),
        writable_paths=(),
        hidden_paths=(),
        status_fd: int | None = None,
        ready_fd: int | None = None,
        start_fd: int | None = None,
    ) -> list[str]:
        """The bwrap command line. Binds come after the /tmp tmpfs (paths under /tmp survive),
        parents before children (a writable scratch inside a read-only folder stays writable),
        and a read-only bind wins over a writable one of the same path. A hidden folder gets an
        empty tmpfs over it before the binds inside it, so only what is named inside stays
        visible (the harness's Python too, when a hidden folder holds it)."""
        args = [self.executable, *self.base_args()]
        hidden = [os.path.abspath(p) for p in hidden_paths]
        keep = [p for p in _interpreter_paths() if any(_inside(p, h) for h in hidden)]
        binds = [(p, 0) for p in hidden] + [(p, 1) for p in writable_paths]
        binds += [(p, 2) for p in [*readonly_paths, *keep]]
        binds.sort(key=lambda b: (len(PurePath(b[0]).parts), b[1]))  # parents first; ro wins a tie
        flags = {0: "--tmpfs", 1: "--bind", 2: "--ro-bind"}
        for path, kind in binds:
            args += [flags[kind], path] if kind == 0 else [flags[kind], path, path]
        if status_fd is not None:
            args += ["--json-status-fd", str(status_fd)]
        args += ["--chdir", cwd, "--"]
        if ready_fd is not None:  # reports from inside that the sandbox is up, then execs argv
            wait = ""
            if start_fd is not None:  # ... once the harness says `go` (end of file: never)
                wait = f'read -r go </proc/self/fd/{start_fd} && [ "$go" = go ] && '
            args += ["/bin/sh", "-c", f'printf up >/proc/self/fd/{ready_fd} && {wait}exec "$0" "$@"']
        return args + list(argv)

    def prepare(self, argv, *, cwd, env, limits, readonly_paths, writable_paths, hidden_paths=()) -> Launch:
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
                argv,
                cwd=cwd,
                readonly_paths=readonly_paths,
                writable_paths=writable_paths,
                hidden_paths=hidden_paths,
                status_fd=status_w,
                ready_fd=ready_w,
                start_fd=start_r,
            ),
            cwd,
            dict(env),
            pass_fds=(status_w, ready_w, start_r),
            after=after,
            signal_from_exit_code=True,
            start_fd=start_w,
        )
        launch.close_after.extend([status_w, ready_w, start_r, status_r, ready_r, start_w])
        return launch
