"""The Ray pool: a batch's names fanned out over Ray actors (`runner.engine.pool` runs them in this
process instead).

Each actor reserves the candidate's `threads` CPUs and runs `ctx.execute(name)` (the same call
the in-process pool makes) for each name. The context is a `PoolContext` (the engine's `contract.BatchContext`): a `RunContext`
(a Solver attempt: `runner.solver.attempt`), an OR-Space `WorkspaceContext`, a construction's
`ObjectCheck`, so one retry and `infrastructure_error` policy serves the whole project. The batch
engine (`tcsexam.runner.engine.batch`) starts, feeds and closes the pools.

An actor runs its instances on a few threads (`pipeline`, default 4) and pipelines them: the
next runs prepare their scratch folder, cgroup, launcher and sandbox while the current one's
program runs, and the current one's post-run work (cgroup removal, certificate check, record)
happens while the next one's program runs. The programs themselves never overlap: one lock per
actor lets a program start only when the previous run's last process is gone
(`tcsexam.runner.limiter.process.one_run_at_a_time`), so each is limited and measured alone. The
driver keeps two calls in flight per actor, each a batch of names sized to about `batch_s` seconds
of the actor's measured time per instance (one name per call until it is measured; retries alone),
and passes every finished record to `on_result` at once (the caller writes it to the store).

Infrastructure failures are retried a bounded number of times (`max_retries`): a lost actor or
worker (the actor process killed, a node died, an object lost), an exception escaping the
executor, an `infrastructure_error` record, or an instance that outlives its watchdog deadline
(the actor is then killed). A lost actor is replaced by a fresh one. What still fails after the
retries is recorded as `infrastructure_error` with the reason.

How a job gets its Ray (`start_ray`): `runner.ray.job`. The driver cleans up after a killed actor
by the actor's owner token, never its pid: `limiter.orphans.kill_run_orphans` and
`ownership.scratch.remove_run_scratch`.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, Self, runtime_checkable

from tcsexam.runner.limiter import Limits
from tcsexam.runner.limiter.orphans import alive, kill_run_orphans, process_start
from tcsexam.runner.limiter.process import one_run_at_a_time
from tcsexam.runner.ownership.owner import adopt_owner_token, new_owner_token
from tcsexam.runner.ownership.scratch import remove_run_scratch, sweep_dead_scratch
from tcsexam.runner.ray.job import exit_with_parent

# --------------------------------------------------------------------------------------------
# What a pool runs, and the dispatch rule both pools share (the engine's contract,
# `runner.engine.contract`, extends these; Ray sits below the engine and imports nothing of it).

#: on_result(name, record, tries): called once per name, in completion order, with the
#: complete record (key, task, attempt, candidate_hash, sandbox... filled in).
ResultCallback = Callable[[str, Any, int], None]
#: on_dispatch(name, actor_pid, try_number): called when a name is handed to an actor.
DispatchHook = Callable[[str, int, int], None]


@runtime_checkable
class PoolRecord(Protocol):
    """What a pool needs of a record (`records.PoolRecord`, `orspace.record.WorkspaceRecord`)."""

    message: str

    @property
    def infrastructure_error(self) -> bool: ...

    def retried(self, tries: int) -> Self: ...  #: the same record after `tries` tries


@runtime_checkable
class PoolContext(Protocol):
    """What a pool runs: every run of one batch shares it; sent once to each actor (it pickles).
    `execute(name)` never raises: a harness failure is a record."""

    # read-only here: a context may hold them as fields or derive them (properties)
    @property
    def limits(self) -> Limits | None: ...

    @property
    def scratch_root(self) -> str | None:
        """The parent of the per-run scratch folders (None: $TMPDIR)."""

    def execute(self, name: str) -> PoolRecord: ...

    def infrastructure_record(self, name: str, message: str) -> PoolRecord:
        """The record of a name whose run the harness lost."""


class Retry:
    """The one retry rule of both pools: an infrastructure failure is queued again while it has
    retries left; a result after retries says how many tries it took."""

    def __init__(self, max_retries: int, on_result: ResultCallback):
        self.max_retries = max_retries
        self.on_result = on_result

    def finish(self, name: str, record: PoolRecord, tries: int, queue: deque) -> None:
        """Pass a result on, or queue the instance again if it is a retryable infra failure."""
        if record.infrastructure_error and tries <= self.max_retries:
            queue.append((name, tries + 1, record.message))
            return
        if tries > 1:
            record = record.retried(tries)
        self.on_result(name, record, tries)


# --------------------------------------------------------------------------------------------
# Ray.

_ACTOR_CLASS = None

#: how long the driver waits for a lost actor's process to be gone before its clean-up
LOST_WAIT_S = 5.0


def _actor_class():
    """The Ray actor class, defined lazily so importing this module does not import Ray."""
    global _ACTOR_CLASS
    if _ACTOR_CLASS is None:
        import ray

        class InstanceActor:
            def __init__(self, ctx: PoolContext, pipeline: int, token: str):
                adopt_owner_token(token)  # the driver's: it cleans up by it, heard from or not
                self.ctx = ctx
                self.gate = threading.Lock()  # one program at a time (see the module doc)
                # `pipeline` runs in progress at once, in the order the calls handed them over
                self.runs = ThreadPoolExecutor(max_workers=max(1, pipeline), thread_name_prefix="tcsexam-run")
                # the thread whose program just ended gets the interpreter back within 1 ms, not
                # after the default 5 ms, while another thread checks its certificate
                sys.setswitchinterval(0.001)
                exit_with_parent()

            def pid(self) -> int:
                return os.getpid()

            def where(self) -> tuple[str, int, int | None]:
                """(host, pid, start time): what the driver waits on once it is lost."""
                return socket.gethostname(), os.getpid(), process_start(os.getpid())

            def run(self, names: list[str]) -> list[PoolRecord]:
                """The records of `names` (a batch), in order; each is run by the actor's run
                threads, so this call's runs pipeline with those of the actor's other call."""
                futures = [self.runs.submit(self._one, name) for name in names]
                return [future.result() for future in futures]

            def _one(self, name: str) -> PoolRecord:
                try:
                    with one_run_at_a_time(self.gate):
                        return self.ctx.execute(name)
                except Exception as exc:  # the executor itself raised: a harness failure
                    return self.ctx.infrastructure_record(name, _one_line("harness error", exc))

        _ACTOR_CLASS = ray.remote(InstanceActor)
    return _ACTOR_CLASS


@dataclass
class _Call:
    """One call in flight: a batch of (name, tries) on one actor."""

    actor: Any
    batch: list[tuple[str, int]]
    dispatched: float
    ahead: int  #: instances in flight on the actor when this call was dispatched
    deadline: float  #: the watchdog's (inf without one)


@dataclass(frozen=True)
class RayTuning:
    """How a `RayPool` paces its actors (see its doc); the defaults serve every run."""

    poll_s: float = 1.0  #: how often the driver checks the watchdog while nothing comes back
    pipeline: int = 4  #: run threads per actor (1: one instance at a time, nothing prepared ahead)
    batch_s: float = 0.25  #: a call's batch lasts about this long on its actor
    max_batch: int = 64  #: at most this many instances per call


class RayPool:
    """`workers` actors of `threads` CPUs each; lost actors are replaced, instances retried.

    Each actor has `pipeline` run threads (default 4): while one run's program runs, the next
    ones prepare their scratch folder, cgroup, launcher and sandbox, so a program starts as soon
    as the previous one's tree is gone, even when programs last only milliseconds (see the module
    doc; `pipeline=1` runs one instance at a time, nothing prepared ahead). The driver keeps two
    calls in flight per actor (one with `pipeline=1`), each a batch of instances: one instance
    per call at first, then as many as the actor finishes in about `batch_s` seconds (at most
    `max_batch`), so instances of a few milliseconds do not each pay a Ray round trip, while a
    killed job loses at most about 2 x `batch_s` of work per actor. Retried instances go alone.
    A lost actor loses all its calls; each of their instances is retried like the running one.
    `watchdog_s` is per instance: a call is overdue `watchdog_s` times the number of instances
    queued on its actor when it was dispatched, its own included (the engine uses
    `batch.watchdog_s`: 3 x wall + 120 s).
    """

    def __init__(
        self,
        ctx: PoolContext,
        *,
        workers: int,
        threads: int = 1,
        max_retries: int,
        watchdog_s: float | None = None,
        on_dispatch: DispatchHook | None = None,
        tuning: RayTuning | None = None,
    ):
        import ray

        tuning = tuning or RayTuning()
        self.ray = ray
        self.ctx = ctx
        self.workers = max(1, int(workers))
        self.threads = max(1, int(threads))
        self.max_retries = max_retries
        self.watchdog_s = watchdog_s
        self.on_dispatch = on_dispatch
        self.poll_s = tuning.poll_s
        self.pipeline = max(1, int(tuning.pipeline))
        self.calls_per_actor = min(2, self.pipeline)
        self.batch_s = tuning.batch_s
        self.max_batch = max(1, int(tuning.max_batch))
        self._ctx_ref = ray.put(ctx)
        self._scratch_root = ctx.scratch_root
        sweep_dead_scratch(self._scratch_root)  # what killed jobs and actors left
        self.actors: list = []
        self._where: dict = {}  # actor -> ref of (hostname, pid, start time)
        self._tokens: dict = {}  # actor -> the owner token it was given (`adopt_owner_token`)
        self.lost_actors = 0
        self.orphans_killed = 0
        self.calls = 0  #: calls made (batches), for benchmarks
        self._per_instance_s: float | None = None  #: an actor's time per instance, as measured
        self._closed: list[tuple[str, int | None, int | None]] = []  #: this machine's actors at close()
        self._interrupted = False  #: a run() ended with calls in flight (an exception, SIGTERM)

    def _new_actor(self):
        options = dict(num_cpus=self.threads, max_restarts=0, max_task_retries=0, max_concurrency=self.calls_per_actor)
        token = new_owner_token()
        actor = _actor_class().options(**options).remote(self._ctx_ref, self.pipeline, token)
        self.actors.append(actor)
        self._tokens[actor] = token
        self._where[actor] = actor.where.remote()
        return actor

    def _drop(self, actor) -> None:
        try:
            self.ray.kill(actor, no_restart=True)
        except Exception:
            pass
        if actor in self.actors:
            self.actors.remove(actor)
        self._where.pop(actor, None)
        self._tokens.pop(actor, None)

    def _lost(self, actor) -> None:
        """An actor died: drop it and kill what its runs left on this machine (a candidate
        whose harness died with the actor is an orphan nobody would stop). By the owner token
        the driver gave it, never its pid, and whether or not it ever answered `where`: an actor
        killed at once may have started runs before its answer was on its way."""
        ref, token = self._where.get(actor), self._tokens.get(actor)
        self.lost_actors += 1
        self._drop(actor)
        try:
            host, pid, start = self.ray.get(ref, timeout=2) if ref is not None else (None,) * 3
        except Exception:  # never answered: it may still have runs here
            host, pid, start = None, None, None
        if token is None or host not in (None, socket.gethostname()):
            return  # on another node: what it left there is that node's
        self.orphans_killed += kill_run_orphans(token)
        deadline = time.monotonic() + LOST_WAIT_S
        while pid is not None and alive(pid, start) and time.monotonic() < deadline:
            time.sleep(0.02)
        # its folders' locks go with its process; its own cleanup died with it
        remove_run_scratch(token, self._scratch_root, wait_s=max(0.0, deadline - time.monotonic()))

    def _batch(self, queue: deque, actors: int) -> list[tuple[str, int]]:
        """The next call's instances: a retried one alone; else as many as an actor runs in
        about `batch_s`, and no more than an even share of what is left (the last calls stay
        balanced over the actors)."""
        name, tries, _ = queue.popleft()
        batch = [(name, tries)]
        if tries > 1 or self._per_instance_s is None:
            return batch
        share = -(-(len(queue) + 1) // (actors * self.calls_per_actor))
        size = min(self.max_batch, share, max(1, int(self.batch_s / max(self._per_instance_s, 1e-6))))
        while queue and len(batch) < size and queue[0][1] == 1:
            name, tries, _ = queue.popleft()
            batch.append((name, tries))
        return batch

    def _measured(self, call: _Call, now: float) -> None:
        """Update the time per instance from a finished call: it waited for the instances
        queued on its actor before it, then ran its own."""
        per = (now - call.dispatched) / (call.ahead + len(call.batch))
        old = self._per_instance_s
        self._per_instance_s = per if old is None else 0.7 * old + 0.3 * per

    def run(self, names: Sequence[str], on_result: ResultCallback) -> None:
        ray = self.ray
        from ray.exceptions import RayError, RayTaskError

        retry = Retry(self.max_retries, on_result)
        queue: deque = deque((n, 1, "") for n in names)
        # actors survive between run() calls (a warm pool); top up to the number needed.
        actors = list(self.actors)[: self.workers]
        while len(actors) < min(self.workers, len(names)):
            actors.append(self._new_actor())
        slots = [a for _ in range(self.calls_per_actor) for a in actors]
        self._interrupted = True  # until every call has come back
        inflight: dict = {}  # ref -> _Call
        overdue: set = set()
        while queue or inflight:
            while queue and slots:
                actor = slots.pop(0)
                batch = self._batch(queue, len(actors))
                if self.on_dispatch:
                    try:
                        pid = ray.get(actor.pid.remote())
                    except RayError:  # already dead: the run call below reports it
                        pid = None
                    if pid is not None:
                        for name, tries in batch:
                            self.on_dispatch(name, pid, tries)
                now = time.monotonic()
                ahead = sum(len(c.batch) for c in inflight.values() if c.actor is actor)  # queued on it
                deadline = now + self.watchdog_s * (ahead + len(batch)) if self.watchdog_s else float("inf")
                ref = actor.run.remote([name for name, _ in batch])
                inflight[ref] = _Call(actor, batch, now, ahead, deadline)
                self.calls += 1
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=self.poll_s)
            for ref in ready:
                call = inflight.pop(ref)
                try:
                    records = ray.get(ref)
                    self._measured(call, time.monotonic())
                    slots.append(call.actor)
                except RayTaskError as exc:  # the actor's call itself raised: a harness failure
                    records = [
                        self.ctx.infrastructure_record(n, _one_line("harness error", exc)) for n, _ in call.batch
                    ]
                    slots.append(call.actor)
                except RayError as exc:  # the actor, its worker or its node was lost
                    why = "watchdog deadline passed" if ref in overdue else _one_line("lost actor", exc)
                    overdue.discard(ref)
                    records = [self.ctx.infrastructure_record(name, why) for name, _ in call.batch]
                    if call.actor in self.actors:  # the first call to report this actor's loss
                        self._lost(call.actor)
                        slots = [a for a in slots if a is not call.actor]
                        fresh = self._new_actor()
                        actors = [fresh if a is call.actor else a for a in actors]
                        slots.extend([fresh] * self.calls_per_actor)
                for (name, tries), record in zip(call.batch, records, strict=True):
                    retry.finish(name, record, tries, queue)
            if self.watchdog_s is not None:
                now = time.monotonic()
                for ref, call in inflight.items():
                    if ref not in overdue and now > call.deadline:
                        overdue.add(ref)
                        try:
                            ray.kill(call.actor, no_restart=True)
                        except Exception:
                            pass
        self._interrupted = False

    def close(self, kill_actors: bool = True) -> None:
        """Forget the actors; kill them unless the caller ends the Ray job right after (which
        stops them anyway, sooner than killing them one by one). Call `reap_orphans` once they
        are stopped."""
        self._closed = self._local_actors()
        if kill_actors:
            for actor in list(self.actors):
                self._drop(actor)
        self.actors.clear()
        self._where.clear()
        self._tokens.clear()

    def _local_actors(self) -> list[tuple[str, int | None, int | None]]:
        """(owner token, pid, start time) of the actors on this machine, and of those never
        heard from (pid None: they may have runs here all the same)."""
        found = []
        for actor, token in self._tokens.items():
            try:
                host, pid, start = self.ray.get(self._where[actor], timeout=2)
            except Exception:
                host, pid, start = None, None, None
            if host in (None, socket.gethostname()):
                found.append((token, pid, start))
        return found

    def reap_orphans(self, wait_s: float = 5.0) -> int:
        """After close() and the end of the Ray job (e.g. on SIGTERM): kill the runs that this
        machine's actors left behind. An actor stopped by Ray (SIGKILL) cannot stop its running
        candidate, which would run on as an orphan. Waits up to `wait_s` for the actors to be gone
        first, so none starts another run after the sweep. Returns how many were killed. Nothing
        to do when every run() came back whole (no call was in flight; a lost actor's runs were
        killed when it was lost)."""
        if not self._interrupted:
            self._closed = []
            return 0
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and any(pid and alive(pid, start) for _, pid, start in self._closed):
            time.sleep(0.05)
        killed = sum(kill_run_orphans(token) for token, _, _ in self._closed)
        for token, _, _ in self._closed:
            remove_run_scratch(token, self._scratch_root, wait_s=max(0.0, deadline - time.monotonic()))
        self._closed = []
        self.orphans_killed += killed
        return killed


def _one_line(prefix: str, exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{prefix}: {type(exc).__name__}: {text}"[:500]
