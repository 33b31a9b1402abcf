"""The pools' contract: what a batch's pool runs (`BatchContext`), what it gets back
(`BatchRecord`), its callbacks and the one retry policy's bound.

`runner.attempt.RunContext` (a Solver attempt), `orspace.execute.WorkspaceContext` (OR-Space
workspaces) and `construction.ObjectCheck` (a construction.txt) satisfy it; the pools
(`runner.ray.pool`) and the engine (`runner.batch`) ask nothing else of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tcsexam.runner.limiter import Limits

#: resubmissions after an infrastructure failure: the one retry policy (CLI, run_job, pools)
DEFAULT_MAX_RETRIES = 2

#: on_result(name, record, tries): called once per name, in completion order, with the
#: complete record (key, task, attempt, candidate_hash, sandbox... filled in).
ResultCallback = Callable[[str, Any, int], None]
#: on_dispatch(name, actor_pid, try_number): called when a name is handed to an actor.
DispatchHook = Callable[[str, int, int], None]


@runtime_checkable
class BatchRecord(Protocol):
    """What the engine and the pools need of a record (`records.InstanceRecord`,
    `orspace.record.WorkspaceRecord`)."""

    message: str

    @property
    def infrastructure_error(self) -> bool: ...

    def retried(self, tries: int) -> Any: ...


@runtime_checkable
class BatchContext(Protocol):
    """What every run of one batch shares; sent once to each actor (it pickles: its sandbox
    travels as its own small state). `execute(name)` never raises: a harness failure is a record."""

    limits: Limits | None
    scratch_root: str | None  #: parent of the per-run scratch folders (None: $TMPDIR)

    def execute(self, name: str) -> BatchRecord: ...

    def infrastructure_record(self, name: str, message: str) -> BatchRecord:
        """The record of a name whose run the harness lost."""

    def blank_record(self, name: str, *args: Any, **fields: Any) -> BatchRecord:
        """A record of `name` decided without running it, with the batch's identity fields."""

    def __getstate__(self) -> dict[str, Any]: ...
