"""`local`: no isolation, only the limits (own session, the limiter's tree control). For trusted
candidates only (`auto` never picks it unless told that candidates are trusted).

When the harness is root the candidate runs as an unprivileged uid (`runas.candidate_ids`) that
owns only its work folder, with PR_SET_NO_NEW_PRIVS, in pid, mount (its own /proc) and IPC
namespaces of its own (the launcher: it can signal or see no other run of that shared uid),
and the harness's Python through a
read-only view it can reach (`runas.python_dir`); what it left in /tmp, /dev/shm and /var/tmp is
removed after the run. As any other user it runs as that user: see docs/runner.md, Security.
"""

from __future__ import annotations

import ctypes
import os
import sys

from tcsexam.containment import SandboxName
from tcsexam.runner.limiter import Launch, RunSpec
from tcsexam.runner.sandboxes.base import WrappingSandbox
from tcsexam.runner.sandboxes.runas import candidate_ids, python_dir


def not_dumpable() -> None:
    """PR_SET_DUMPABLE 0 for this (harness) process: a candidate of the same user can then no
    longer read its /proc/PID/environ, mem or maps (the kernel makes them root's). Its children
    are dumpable again after their exec."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        pass


class LocalSandbox(WrappingSandbox):
    name = SandboxName.LOCAL
    shares_tmp = True
    isolates_files = False  # the candidate writes wherever its uid can

    def check_available(self) -> None:
        return None

    def python_dir(self) -> str | None:
        return python_dir(candidate_ids())

    def prepare(self, spec: RunSpec) -> Launch:
        # the launcher applies `env` only at the candidate's own execve (after dropping to run_as)
        ids, argv, cwd, env = candidate_ids(), list(spec.argv), spec.cwd, spec.env
        if ids is None:
            not_dumpable()
        if ids is not None and argv and argv[0] in (sys.executable, os.path.realpath(sys.executable)):
            argv[0] = os.path.join(python_dir(ids), "python3")  # the harness's interpreter, by a path it can reach
        return Launch(argv, cwd, dict(env), run_as=ids)
