"""The batch engine: a resumable, keyed batch of named runs, for every track.

`tcsexam run` (`orchestrate.run_job`, a Solver attempt: one name per instance), `tcsexam
construction run` (a program through `run_job`; a `construction.txt` checked in this process) and
`tcsexam orspace execute` (`orspace.execute`, one name per workspace) all run through here:

1. keys: the caller computes one record key per name (`digest.record_key`), in the output's order;
2. reuse (`KeyedBatch.open`): each stored record whose key matches is reused (never an
   `infrastructure_error`); a damaged or outdated one is set aside by the store; the rest is pending;
3. batch (`run_batch`): the pending names run in a pool (`runner.engine.pool`: in this process, or
   `runner.ray.pool`: Ray actors, a local Ray or a shared head), each record written to the store the moment it arrives
   (`KeyedBatch.write`, the resume point), infrastructure failures retried, the watchdog
   (`watchdog_s`, written here only) killing an actor whose run outlives its deadline; then the
   pool is closed, Ray shut down, and what killed actors left is reaped;
4. summary: `KeyedBatch.ordered()`, the records in key order, for the caller's output.

What a pool runs is a `BatchContext` (`attempt.RunContext`, `orspace.execute.WorkspaceContext`,
`construction.ObjectCheck`): picklable, sent once to each actor.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from tcsexam.containment import Limiter, SandboxName
from tcsexam.errors import InputError, UsageError
from tcsexam.runner.engine.contract import DEFAULT_MAX_RETRIES, BatchContext, BatchRecord, DispatchHook
from tcsexam.runner.engine.pool import InProcessPool
from tcsexam.runner.ray.head import DEFAULT_STATE_ENV, join, local_head, start_on_demand
from tcsexam.runner.ray.job import cancel_ray_abort_alarm, job_cpus, start_ray
from tcsexam.runner.ray.pool import RayPool

if TYPE_CHECKING:
    from tcsexam.records import StoredRecord
    from tcsexam.records.store import RecordStore

#: the wall limit of a candidate's build step (`tcsexam run --build-timeout`)
DEFAULT_BUILD_TIMEOUT_S = 600.0
RAY_HEAD_WAIT_S = 120.0  #: how long a job waits for a shared Ray head that is still starting


def watchdog_s(wall_s: float) -> float:
    """The pool's deadline per run: three times the wall limit plus two minutes (a run that
    outlives it has lost its limiter: its actor is killed and the run retried)."""
    return 3 * float(wall_s) + 120.0


# --------------------------------------------------------------------------------------------
# Reuse: the store side of a batch.

#: on_write(name, record): after a new record is in the store
WriteHook = Callable[[str, Any], None]


#: the record type of a batch's store (`records.store.R`)
R = TypeVar("R", bound="StoredRecord")


@dataclass
class KeyedBatch(Generic[R]):
    """The names of one batch with their keys (in output order), the records reused from the
    store, the names still pending, and each new record written as it arrives."""

    store: RecordStore[R]
    keys: dict[str, str]
    results: dict[str, R] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    reused: int = 0
    executed: int = 0
    on_write: WriteHook | None = None

    @classmethod
    def open(cls, store: RecordStore[R], keys: dict[str, str]) -> KeyedBatch[R]:
        """Prepare the store and look every name up: a stored record under its key is reused."""
        store.prepare()
        batch = cls(store, dict(keys))
        for name, key in batch.keys.items():
            found = store.lookup(name, key).reused
            if found is not None:
                batch.results[name] = found
            else:
                batch.pending.append(name)
        batch.reused = len(batch.results)
        return batch

    @property
    def set_aside(self) -> list[tuple[str, str, str]]:
        return list(self.store.set_aside)

    def write(self, name: str, record: R) -> None:
        """Store a new record now (the resume point), then tell `on_write`."""
        self.store.write(record)
        self.results[name] = record
        self.executed += 1
        if self.on_write is not None:
            self.on_write(name, record)

    def settle(self, decide: Callable[[str], R]) -> None:
        """Record every pending name with `decide(name)` without running it; none is left."""
        for name in self.pending:
            self.write(name, decide(name))
        self.pending = []

    def ordered(self) -> list[R]:
        return [self.results[name] for name in self.keys]


# --------------------------------------------------------------------------------------------
# The batch: the pending names in a pool.


class PoolKind(StrEnum):
    """Where a batch's runs go (`tcsexam run --pool`; the chosen one is logged and kept in the
    run's heartbeat.json)."""

    AUTO = "auto"  #: in this process when Ray would cost more than the work (`in_process_wins`), else Ray
    RAY = "ray"  #: Ray actors (a local Ray, a shared head or a cluster)
    IN_PROCESS = "in-process"  #: this process, one run at a time (`--no-ray`)


#: what Ray costs a batch before its first run, on a quiet 2-core machine (benchmarks/throughput.py's
#: start split, docs/workflow.md#overhead): joining a running head and starting an actor, and
#: starting a Ray of the job's own; loaded machines pay several times more, so these favour Ray
RAY_JOIN_COST_S = 1.0
RAY_START_COST_S = 3.0
#: what one run costs in this process beyond a Ray actor's (whose run threads prepare the next
#: run while the current one runs): measured 0.03-0.04 s at load 5 (10 ms candidates)
IN_PROCESS_EXTRA_S = 0.04


def in_process_wins(pending: int, workers: int, wall_s: float | None, *, joining: bool) -> tuple[bool, str]:
    """(whether this process beats Ray, why), from the batch's size and limits alone: in
    process when even its worst case (every run to its wall limit, one at a time, each paying
    `IN_PROCESS_EXTRA_S`) ends no later than Ray's best (its start, then `workers` runs at once)."""
    ray_s = RAY_JOIN_COST_S if joining else RAY_START_COST_S
    parallel = max(1, min(int(workers), int(pending)))
    lost_s = pending * (wall_s or float("inf")) * (1 - 1 / parallel) if parallel > 1 else 0.0
    worst_s = pending * IN_PROCESS_EXTRA_S + lost_s
    where = "joining Ray" if joining else "starting Ray"
    if worst_s <= ray_s:
        return (
            True,
            f"{pending} run(s) on {parallel} worker(s) cost at most {worst_s:.2f} s more here; {where} {ray_s:g} s",
        )
    return False, f"{pending} run(s) on {parallel} worker(s) could cost {worst_s:.1f} s more here; {where} {ray_s:g} s"


@dataclass(frozen=True)
class PoolOptions:
    """Where the pending runs go: Ray actors (`workers`, default this job's CPUs // threads, or
    the cluster's), on a given cluster or a shared head, or this process (`use_ray` False, or
    `kind` in-process); `kind` auto (the default) runs a small batch in this process
    (`in_process_wins`)."""

    workers: int | None = None
    use_ray: bool = True
    ray_address: str | None = None
    ray_head: str | Path | None = None
    max_retries: int = DEFAULT_MAX_RETRIES
    kind: PoolKind = PoolKind.AUTO

    def check(self) -> None:
        """One usage error line for options that cannot go together."""
        if self.workers is not None and self.workers < 1:
            raise UsageError("--workers must be at least 1")
        if self.max_retries < 0:
            raise UsageError("--max-retries must be 0 or more")
        if self.in_process_only and self.workers not in (None, 1):
            raise UsageError("--no-ray runs one instance at a time: use --workers 1")
        if self.in_process_only and (self.ray_address or self.ray_head):
            raise UsageError("--no-ray and --ray-address/--ray-head exclude each other")
        if self.ray_address and self.ray_head:
            raise UsageError("--ray-address and --ray-head exclude each other")

    @property
    def in_process_only(self) -> bool:
        return not self.use_ray or self.kind == PoolKind.IN_PROCESS


@dataclass(frozen=True)
class RunOptions:
    """How programs run, for every command that runs them (`tcsexam run`, `construction run`,
    `orspace execute`, `proof check`): the sandbox, the docker sandbox's image and whether `auto` may fall back to local, the limiter, the
    pool (workers, Ray, retries), a progress bar, and the candidate's build step."""

    sandbox: SandboxName = SandboxName.AUTO
    limiter: Limiter = Limiter.AUTO
    allow_unsandboxed: bool = False
    #: the docker sandbox's image (None: the command's default: the candidate image, OR-Space's own)
    docker_image: str | None = None
    build_timeout_s: float = DEFAULT_BUILD_TIMEOUT_S
    progress: bool = True
    pool: PoolOptions = field(default_factory=PoolOptions)


#: the options of a command that runs one program at a time in this process (`proof check`):
#: only the sandbox, local's fallback and the limiter apply
RUN_ONE = RunOptions(progress=False, pool=PoolOptions(workers=1, use_ray=False))


@dataclass(frozen=True)
class BatchHooks:
    """What a batch tells its caller: log lines, dispatches, a progress bar on stderr (`progress`,
    counting the records `failed` says failed)."""

    label: str
    log: Callable[[str], None] | None = None
    on_dispatch: DispatchHook | None = None
    progress: bool = False
    failed: Callable[[Any], bool] | None = None


@dataclass
class PoolReport:
    workers: int | None = None
    ray_startup_s: float | None = None
    kind: PoolKind | None = None  #: where the runs went (ray or in-process); None: nothing ran
    why: str = ""  #: why there (`in_process_wins`), for the log


def run_batch(
    ctx: BatchContext, batch: KeyedBatch, options: PoolOptions, hooks: BatchHooks, *, threads: int = 1
) -> PoolReport:
    """Run `batch.pending` in a pool of `threads`-CPU workers, each record written to the batch as
    it arrives; close the pool, end Ray, reap orphans, even on an exception."""
    report = PoolReport()
    if not batch.pending:
        return report
    handle = pool = bar = None
    try:
        pool, handle = _start_pool(ctx, options, hooks, threads, len(batch.pending), report)
        report.workers = pool.workers
        report.ray_startup_s = handle.startup_s if handle is not None else None
        bar = _Progress(hooks, total=len(batch.keys), initial=batch.reused)  # after the one-off Ray start

        def on_result(name: str, record: Any, tries: int) -> None:
            batch.write(name, record)
            bar.update(record)

        pool.run(list(batch.pending), on_result)
    finally:
        if bar is not None:
            bar.close()
        _stop_pool(pool, handle)
    return report


def _start_pool(
    ctx: BatchContext, options: PoolOptions, hooks: BatchHooks, threads: int, pending: int, report: PoolReport
):
    """(the pool, the Ray handle or None); `report` says which and why."""
    wanted = options.workers if options.workers is not None else max(1, job_cpus() // threads)
    if options.in_process_only:
        report.kind, report.why = PoolKind.IN_PROCESS, "asked for"
    elif options.kind == PoolKind.AUTO and _ray_here():
        report.kind, report.why = PoolKind.RAY, "Ray already runs in this process"
    elif options.kind == PoolKind.AUTO:
        limits = ctx.limits
        joining = bool(options.ray_head or options.ray_address or os.environ.get("RAY_ADDRESS") or local_head())
        wins, report.why = in_process_wins(pending, wanted, limits.wall_s if limits else None, joining=joining)
        report.kind = PoolKind.IN_PROCESS if wins else PoolKind.RAY
    else:
        report.kind, report.why = PoolKind.RAY, "asked for"
    if report.kind == PoolKind.IN_PROCESS:
        if hooks.log is not None and options.kind == PoolKind.AUTO and options.use_ray:
            hooks.log(f"{hooks.label}: in this process, one run at a time, no Ray ({report.why})")
        return InProcessPool(ctx, max_retries=options.max_retries, on_dispatch=hooks.on_dispatch), None
    address, waited_s = _ray_address(options, hooks)
    handle = start_ray(num_cpus=wanted * threads, address=address)
    try:
        if not handle.started_here and options.workers is None:
            wanted = max(1, int(handle.total_cpus) // threads)
        if handle.total_cpus and threads > handle.total_cpus:
            raise InputError(f"candidate needs {threads} CPUs per run but the Ray cluster has {handle.total_cpus:g}")
        limits = ctx.limits
        watchdog = watchdog_s(limits.wall_s) if limits is not None and limits.wall_s else None
        pool = RayPool(
            ctx,
            workers=wanted,
            threads=threads,
            max_retries=options.max_retries,
            watchdog_s=watchdog,
            on_dispatch=hooks.on_dispatch,
        )
    except BaseException:
        handle.shutdown()
        raise
    if hooks.log is not None:
        where = (
            f"Ray at {handle.address}"
            if handle.address
            else ("local Ray" if handle.started_here else "this process's Ray")
        )
        note = f"; waited {waited_s:.1f} s for the shared head" if waited_s >= 0.1 else ""
        note += f"; {report.why}" if options.kind == PoolKind.AUTO else ""
        hooks.log(
            f"{hooks.label}: {pool.workers} worker(s) x {threads} CPU(s) on {where} "
            f"(started in {handle.startup_s:.1f} s{note})"
        )
    return pool, handle


def _ray_here() -> bool:
    """This process is connected to Ray already (without importing Ray when it is not loaded)."""
    ray = sys.modules.get("ray")
    return ray is not None and bool(ray.is_initialized())


def _ray_address(options: PoolOptions, hooks: BatchHooks) -> tuple[str | None, float]:
    """(the Ray address to join, seconds waited for a shared head that was starting). With neither
    a cluster nor a head named, this user's default head when one is alive (`head.local_head`)."""
    if options.ray_head is None and options.ray_address is None:
        found = local_head()
        if found is not None and hooks.log is not None:
            hooks.log(
                f"{hooks.label}: joining the local Ray head in {found[0]} ({DEFAULT_STATE_ENV}=none: a Ray of its own)"
            )
        return (found[1] if found else None), 0.0
    if options.ray_head is None:
        return options.ray_address, 0.0

    t_wait = time.perf_counter()
    address = join(options.ray_head, wait_s=RAY_HEAD_WAIT_S)
    if address is None:  # the workflow armed the folder: the first job that wants Ray starts the head
        try:
            address = start_on_demand(options.ray_head, timeout_s=RAY_HEAD_WAIT_S)
            if address is not None and hooks.log is not None:
                hooks.log(f"{hooks.label}: started the shared Ray head in {options.ray_head}")
        except InputError as exc:
            if hooks.log is not None:
                hooks.log(f"{hooks.label}: the shared Ray head did not start ({exc})")
    waited_s = time.perf_counter() - t_wait
    if address is None and hooks.log is not None:
        hooks.log(f"{hooks.label}: no shared Ray head alive in {options.ray_head}; starting Ray in this job")
    return address, waited_s


def _stop_pool(pool, handle) -> None:
    cancel_ray_abort_alarm()  # after a SIGTERM, Ray would abort this cleanup 3 s in
    if pool is not None:
        # Ending this process's Ray connection ends its job, whose actors Ray then stops;
        # killing them one by one first only delays the disconnect (~0.3 s).
        pool.close(kill_actors=handle is None or not handle.ends_job)
    if handle is not None:
        handle.shutdown()
    if pool is not None:
        pool.reap_orphans()  # runs of actors that Ray stopped (SIGKILL) cannot stop themselves


class _Progress:
    """The tqdm bar of a batch (none unless `hooks.progress`: tqdm is not even imported, 0.04 s of a
    workflow job's start), with a failure count."""

    def __init__(self, hooks: BatchHooks, *, total: int, initial: int):
        self.failed = hooks.failed
        self.failures = 0
        self.bar = None
        if hooks.progress:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total,
                initial=initial,
                desc=hooks.label,
                unit="inst",
                file=sys.stderr,
                dynamic_ncols=True,
                smoothing=0.1,
            )
            self.bar.set_postfix(failures=0, refresh=False)

    def update(self, record: Any) -> None:
        if self.failed is not None and self.failed(record):
            self.failures += 1
        if self.bar is not None:
            self.bar.set_postfix(failures=self.failures, refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


__all__ = [
    "RAY_HEAD_WAIT_S",
    "BatchContext",
    "BatchHooks",
    "BatchRecord",
    "KeyedBatch",
    "PoolKind",
    "PoolOptions",
    "PoolReport",
    "run_batch",
    "watchdog_s",
]
