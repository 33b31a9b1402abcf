"""`bwrap`: bubblewrap isolation around the limiter.

No network, pid, ipc, uts or cgroup namespace sharing (`--unshare-all`), the tree dies with bwrap
(`--die-with-parent`, and the pid namespace's init takes everyone with it), a read-only view of the
host (`--ro-bind / /`), fresh /dev and /proc, a private tmpfs /tmp, the instance and candidate
bound read-only at their own paths, the scratch directory the only writable place, and
`--new-session` (no terminal injection). bwrap reports over `--json-status-fd` once the sandbox is
up; a run without that report is a sandbox failure (`ProcessOutcome.sandbox_error`), which the
instance level records as `infrastructure_error`, never as the candidate's crash.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from tcsexam.errors import InputError
from tcsexam.runner.limits import Launch, ProcessOutcome
from tcsexam.runner.sandboxes.base import Sandbox


class BwrapSandbox(Sandbox):
    name = "bwrap"

    def __init__(self, executable: str = "bwrap"):
        self.executable = executable

    def check_available(self) -> None:
        exe = shutil.which(self.executable)
        if exe is None:
            raise InputError(f"sandbox bwrap: {self.executable!r} not found on PATH (install bubblewrap)")
        try:
            probe = subprocess.run(
                [exe, *self.base_args(), "--", "true"], capture_output=True, text=True, timeout=30
            )
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
        self, argv, *, cwd: str, readonly_paths=(), writable_paths=(), status_fd: int | None = None
    ) -> list[str]:
        """The bwrap command line (binds come after the /tmp tmpfs so paths under /tmp survive;
        read-only binds come last so they win over a writable parent)."""
        args = [self.executable, *self.base_args()]
        for path in writable_paths:
            args += ["--bind", path, path]
        for path in readonly_paths:
            args += ["--ro-bind", path, path]
        if status_fd is not None:
            args += ["--json-status-fd", str(status_fd)]
        args += ["--chdir", cwd, "--", *argv]
        return args

    def prepare(self, argv, *, cwd, env, limits, readonly_paths, writable_paths) -> Launch:
        read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
        os.set_blocking(read_fd, False)
        chunks: list[bytes] = []

        def after(outcome: ProcessOutcome) -> None:
            try:
                while True:
                    try:
                        chunk = os.read(read_fd, 65536)
                    except BlockingIOError:
                        break
                    if not chunk:
                        break
                    chunks.append(chunk)
            except OSError:
                pass
            started = b'"child-pid"' in b"".join(chunks)
            if not started:
                line = " ".join(outcome.stderr_tail.split())[-300:]
                outcome.sandbox_error = f"bwrap did not start the sandbox: {line or 'no message'}"
            else:
                for doc in b"".join(chunks).decode("utf-8", "replace").splitlines():
                    try:
                        data = json.loads(doc)
                    except ValueError:
                        continue
                    if isinstance(data, dict) and "exit-code" in data and outcome.signal is None:
                        outcome.exit_code = int(data["exit-code"])

        launch = Launch(
            self.command(
                argv,
                cwd=cwd,
                readonly_paths=readonly_paths,
                writable_paths=writable_paths,
                status_fd=write_fd,
            ),
            cwd,
            dict(env),
            pass_fds=(write_fd,),
            after=after,
        )
        launch.close_after.extend([write_fd, read_fd])
        return launch
