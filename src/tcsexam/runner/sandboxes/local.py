"""`local`: no isolation, only the limits (own session, the limiter's tree control). For trusted
candidates only (`auto` never picks it unless told that candidates are trusted).

When the harness is root the candidate runs as an unprivileged uid (`runas.candidate_ids`) that
owns only its work folder, with PR_SET_NO_NEW_PRIVS, and the harness's Python through a
read-only view it can reach (`runas.python_dir`); what it left in /tmp, /dev/shm and /var/tmp is
removed after the run. As any other user it runs as that user: see docs/runner.md, Security.
"""

from __future__ import annotations

from tcsexam.runner.limiter import Launch
from tcsexam.runner.sandboxes.base import WrappingSandbox
from tcsexam.runner.sandboxes.runas import candidate_ids, python_dir


class LocalSandbox(WrappingSandbox):
    name = "local"
    shares_tmp = True

    def check_available(self) -> None:
        return None

    def python_dir(self) -> str | None:
        return python_dir(candidate_ids())

    def prepare(self, argv, *, cwd, env, limits, readonly_paths, writable_paths, hidden_paths=()) -> Launch:
        # the launcher applies `env` only at the candidate's own execve (after dropping to run_as)
        return Launch(list(argv), cwd, dict(env), run_as=candidate_ids())
