"""The pools' contract: what a batch's pool runs (`BatchContext`), what it gets back
(`BatchRecord`), its callbacks and the one retry policy's bound. Ray sits below the engine: the Ray pool defines
what it runs (`runner.ray.pool.PoolContext`, `PoolRecord`, the callbacks, the `Retry` rule), and
this contract extends it.

`runner.solver.attempt.RunContext` (a Solver attempt), `orspace.execute.WorkspaceContext` (OR-Space
workspaces) and `construction.ObjectCheck` (a construction.txt) satisfy it; the pools
(`runner.engine.pool`, `runner.ray.pool`) and the engine (`runner.engine.batch`) ask nothing else of them.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from tcsexam.runner.ray.pool import DispatchHook, PoolContext, PoolRecord, ResultCallback

#: resubmissions after an infrastructure failure: the one retry policy (CLI, run_job, pools)
DEFAULT_MAX_RETRIES = 2

#: what the engine and the pools need of a record (`records.InstanceRecord`,
#: `orspace.record.WorkspaceRecord`): its message, whether it is an infrastructure error, and
#: the same record after `tries` tries
BatchRecord = PoolRecord


@runtime_checkable
class BatchContext(PoolContext, Protocol):
    """What every run of one batch shares (a pool's `PoolContext`: `limits`, `scratch_root`,
    `execute`, `infrastructure_record`), sent once to each actor (it pickles: its sandbox travels
    as its own small state). The engine asks nothing more of it: each context makes its records
    without a run (`blank_record`) in its own terms (a Solver attempt's status, a workspace's
    failure mode), so that is no part of the contract."""

    def __getstate__(self) -> object: ...


__all__ = ["DEFAULT_MAX_RETRIES", "BatchContext", "BatchRecord", "DispatchHook", "ResultCallback"]
