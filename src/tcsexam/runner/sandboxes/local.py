"""`local`: no isolation, only the limits (own session, the limiter's tree control)."""

from __future__ import annotations

from tcsexam.runner.limiter import Launch
from tcsexam.runner.sandboxes.base import WrappingSandbox


class LocalSandbox(WrappingSandbox):
    name = "local"

    def check_available(self) -> None:
        return None

    def prepare(self, argv, *, cwd, env, limits, readonly_paths, writable_paths, hidden_paths=()) -> Launch:
        return Launch(list(argv), cwd, dict(env))
