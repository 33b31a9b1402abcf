"""The in-process pool: a batch's names run one after another in this process, with the same
executor as the Ray actors and the same retry rule (`runner.ray.pool.Retry`); what `tcsexam run
--no-ray` and one-program commands (`proof check`) use."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Sequence

from tcsexam.runner.engine.contract import DEFAULT_MAX_RETRIES, BatchContext, DispatchHook, ResultCallback
from tcsexam.runner.ownership.scratch import sweep_dead_scratch
from tcsexam.runner.ray.pool import Retry


class InProcessPool:
    """Runs instances one after another in this process with the same executor as the actors."""

    workers = 1

    def __init__(
        self, ctx: BatchContext, *, max_retries: int = DEFAULT_MAX_RETRIES, on_dispatch: DispatchHook | None = None
    ):
        self.ctx = ctx
        self.max_retries = max_retries
        self.on_dispatch = on_dispatch
        sweep_dead_scratch(ctx.scratch_root)  # what killed jobs left

    def run(self, names: Sequence[str], on_result: ResultCallback) -> None:
        retry = Retry(self.max_retries, on_result)
        queue: deque = deque((n, 1, "") for n in names)
        while queue:
            name, tries, _ = queue.popleft()
            if self.on_dispatch:
                self.on_dispatch(name, os.getpid(), tries)
            retry.finish(name, self.ctx.execute(name), tries, queue)

    def close(self, kill_actors: bool = True) -> None:
        pass

    def reap_orphans(self) -> int:
        return 0
