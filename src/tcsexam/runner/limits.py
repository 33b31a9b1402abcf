"""Compatibility import path: the limiter lives in `tcsexam.runner.limiter` (one module per
limiter, `classify`), `run_limited` beside the sandboxes in `tcsexam.runner.sandboxes`."""

from __future__ import annotations

from tcsexam.runner.limiter import (  # noqa: F401
    BUILD_LIMITS,
    LIMITERS,
    Launch,
    LaunchError,
    Limits,
    MiB,
    ProcessOutcome,
    Termination,
    cgroup_support,
    classify,
    execute_limited,
    resolve_limiter,
)
from tcsexam.runner.limiter.launcher import launcher  # noqa: F401
from tcsexam.runner.sandboxes import run_limited  # noqa: F401
