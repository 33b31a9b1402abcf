"""The task-level run: one candidate on (a subset of) a task's instances, with resume.

1. Load the task and the candidate, check the sandbox once (an unavailable sandbox is one error
   at start, not a crash per instance).
2. Compute every instance's key (candidate files hashed once, each instance file once) and reuse
   the stored records whose key matches (never an `infrastructure_error`).
3. If anything is left: build the candidate once (failure: every remaining instance `invalid`,
   the build log kept as `<records-dir>/build.log`), then run the rest in the pool; each record
   is written to the store the moment it arrives.
4. Write records.json (the JSON list of records, in task order) atomically.

Solver failures are records; only bad input raises (`InputError`, exit 1).
"""

from __future__ import annotations

import dataclasses
import functools
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tcsexam.errors import InputError, UsageError
from tcsexam.fileio import atomic_write_json, exclusive_use, special_files
from tcsexam.logs import say_for
from tcsexam.recordkey import run_key
from tcsexam.records import InstanceRecord, Status
from tcsexam.runner.anytime import KEY_VERSION as ANYTIME_KEY_VERSION
from tcsexam.runner.calibrate import job_calibration, write_job_calibration
from tcsexam.runner.pool import DEFAULT_MAX_RETRIES
from tcsexam.runner.store import RecordStore, hash_candidate, hash_file, record_key

if TYPE_CHECKING:
    from tcsexam.runner.heartbeat import Heartbeat
    from tcsexam.runner.pool import RunContext

DEFAULT_BUILD_TIMEOUT_S = 600.0
RAY_HEAD_WAIT_S = 120.0  #: how long a job waits for a shared Ray head that is still starting


@dataclass
class RunSummary:
    task: str
    total: int
    reused: int = 0
    executed: int = 0
    statuses: Counter = field(default_factory=Counter)
    records: list[InstanceRecord] = field(default_factory=list)
    output: Path | None = None
    records_dir: Path | None = None
    ray_startup_s: float | None = None
    workers: int | None = None
    wall_s: float = 0.0
    build_message: str | None = None
    set_aside: list[tuple[str, str, str]] = field(default_factory=list)  #: (instance, reason, detail)
    set_aside_dir: Path | None = None
    candidate_error: str | None = None  #: why the submission cannot start (every instance invalid)
    calibration: dict | None = None  #: the machine calibration of this job (tcsexam.runner.calibrate)

    def set_aside_text(self) -> str:
        """'2 set aside (1 digest-mismatch, 1 unreadable)' or ''."""
        if not self.set_aside:
            return ""
        reasons = Counter(reason for _, reason, _ in self.set_aside)
        return f"{len(self.set_aside)} set aside ({', '.join(f'{n} {r}' for r, n in sorted(reasons.items()))})"

    def line(self) -> str:
        counts = " ".join(f"{s}={n}" for s, n in sorted(self.statuses.items()))
        aside = f", {self.set_aside_text()}" if self.set_aside else ""
        return (
            f"{self.task}: {self.total} instances ({self.reused} reused, {self.executed} run{aside}) "
            f"{counts}; records -> {self.output}"
        )


def _threads(candidate) -> int:
    threads = getattr(candidate, "threads", 1) or 1
    return max(1, int(threads))


def hidden_paths(output: Path, records_dir: Path) -> tuple[str, ...]:
    """What a sandbox hides from candidates (bwrap masks it with an empty tmpfs; docker and
    apptainer mount only what is named): this job's output and records folders, and the folder
    the harness runs in when it is a workflow folder (a Snakefile or a results/ folder there: the
    results tree, the references, the other candidates). The candidate's own folder, its instance
    and its work folder stay visible (read-only but the work folder)."""
    found = {str(output.resolve().parent), str(records_dir.resolve())}
    here = Path.cwd()
    if here != Path(here.anchor) and ((here / "Snakefile").is_file() or (here / "results").is_dir()):
        found.add(str(here))
    return tuple(sorted(found))


def _plan_line(task_obj, selected, attempt, sandbox: str, limiter: str, threads: int) -> str:
    """What the job will do, first in its log: task, instances, limits, sandbox, limiter, uid."""
    import os
    import socket

    from tcsexam.runner.limiter import resolve_limiter

    lim = ", ".join(f"{k} {v:g}" for k, v in task_obj.limits.task_dict().items() if isinstance(v, (int, float)))
    try:
        chosen = resolve_limiter(limiter)
    except InputError as exc:
        chosen = f"unavailable ({exc})"
    return (
        f"{task_obj.id}: attempt {attempt}, {len(selected)} of {len(task_obj.instances)} instances; limits {lim}; "
        f"{threads} thread(s) per run; sandbox {sandbox}; limiter {limiter} -> {chosen}; "
        f"uid {os.getuid()} on {socket.gethostname()}"
        + (f" (SLURM job {os.environ['SLURM_JOB_ID']})" if os.environ.get("SLURM_JOB_ID") else "")
    )


def _one_run_per_output(run):
    """`run_task` holds an exclusive lock on its --output and its records folder while it runs
    (`fileio.exclusive_use`): a second run on either stops at once with one line (exit 1)."""

    @functools.wraps(run)
    def locked(**options):
        output, records_dir = _output_paths(options["output"], options.get("records_dir"))
        with exclusive_use([(output, False), (records_dir, True)]):
            return run(**options)

    return locked


def _output_paths(output, records_dir) -> tuple[Path, Path]:
    output = Path(output)
    return output, Path(records_dir) if records_dir is not None else output.parent / "records"


@_one_run_per_output
def run_task(
    *,
    task: str | Path,
    candidate_dir: str | Path,
    output: str | Path,
    attempt: str | None = None,
    records_dir: str | Path | None = None,
    workers: int | None = None,
    ray_address: str | None = None,
    ray_head: str | Path | None = None,
    sandbox: str = "auto",
    seed: int = 0,
    instances: Sequence[str] | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
    progress: bool = True,
    use_ray: bool = True,
    build_timeout_s: float = DEFAULT_BUILD_TIMEOUT_S,
    limiter: str = "auto",
    allow_unsandboxed: bool = False,
    on_dispatch: Callable[[str, int, int], None] | None = None,
    log: Callable[[str], None] | None = None,
    heartbeat: Heartbeat | None = None,
) -> RunSummary:
    from tcsexam.runner.execute import build_candidate, load_candidate
    from tcsexam.runner.limiter import BUILD_LIMITS, Limits, Termination
    from tcsexam.runner.sandboxes import choose_sandbox, probe_python
    from tcsexam.tasks import load_task, verify_instance_files

    t_start = time.perf_counter()
    say = log or say_for("run", "runner")
    if workers is not None and workers < 1:
        raise UsageError("--workers must be at least 1")
    if max_retries < 0:
        raise UsageError("--max-retries must be 0 or more")
    if not use_ray and workers not in (None, 1):
        raise UsageError("--no-ray runs one instance at a time: use --workers 1")
    if not use_ray and (ray_address or ray_head):
        raise UsageError("--no-ray and --ray-address/--ray-head exclude each other")
    if ray_address and ray_head:
        raise UsageError("--ray-address and --ray-head exclude each other")

    output, records_dir = _output_paths(output, records_dir)
    if output.parent.resolve() == records_dir.resolve():
        raise UsageError("--output must not be inside --records-dir (it holds only instance records)")

    task_obj = load_task(task)
    if instances:
        wanted = list(dict.fromkeys(instances))
        selected = [task_obj.instance(n) for n in wanted]  # InputError names an unknown one
        order = {n: i for i, n in enumerate(inst.name for inst in task_obj.instances)}
        selected.sort(key=lambda inst: order[inst.name])
    else:
        selected = list(task_obj.instances)
    if not selected:
        raise InputError(f"{task_obj.source}: task {task_obj.id} has no instances")
    verify_instance_files(task_obj, selected)  # every recorded sha256, before anything runs

    # A submitted solver.yaml that cannot be used is the submission's failure (every instance
    # `invalid`), not the operator's; a missing candidate folder or solver.yaml is bad input.
    candidate_error = None
    try:
        candidate = load_candidate(Path(candidate_dir), task_obj.id)
    except InputError as exc:
        if not (Path(candidate_dir) / "solver.yaml").is_file():
            raise
        candidate, candidate_error = None, str(exc)
    sandbox_obj, why = choose_sandbox(sandbox, allow_unsandboxed=allow_unsandboxed)
    say(f"{task_obj.id}: {why}")
    sandbox = sandbox_obj.name  # `auto` resolved: records and keys name the sandbox that ran
    image = sandbox_obj.image_id()
    threads = _threads(candidate) if candidate is not None else 1
    limits = Limits.from_task(task_obj.limits, threads)
    say(_plan_line(task_obj, selected, attempt, sandbox, limiter, threads))

    candidate_hash = hash_candidate(candidate_dir)
    limits_key = dict(task_obj.limits.task_dict(), threads=threads)
    if task_obj.anytime:  # traced records differ; a non-anytime task's keys stay as they were
        limits_key["anytime"] = ANYTIME_KEY_VERSION
    keys, instance_hashes = {}, {}
    for inst in selected:
        instance_hashes[inst.name] = hash_file(inst.path)
        keys[inst.name] = record_key(
            candidate_hash=candidate_hash,
            instance_hash=instance_hashes[inst.name],
            limits=limits_key,
            sandbox=f"{sandbox}@{image}" if image else sandbox,  # a new image reruns
            seed=seed,
            meta=inst.meta,
            problem=task_obj.problem,
        )

    seal_key = run_key(output, records_dir, candidate_dir)
    store = RecordStore(records_dir, key=seal_key)
    store.prepare()
    summary = RunSummary(task=task_obj.id, total=len(selected), output=output, records_dir=records_dir)
    summary.candidate_error = candidate_error
    results: dict[str, InstanceRecord] = {}
    pending: list[str] = []
    for inst in selected:
        found = store.lookup(inst.name, keys[inst.name])
        if found.reused is not None:
            results[inst.name] = found.reused
        else:
            pending.append(inst.name)
    summary.reused = len(results)
    summary.set_aside = list(store.set_aside)
    if store.set_aside:
        summary.set_aside_dir = store.set_aside_dir
        say(
            f"{task_obj.id}: {summary.set_aside_text()} stored record(s) not reused, kept in "
            f"{store.set_aside_dir}; their instances run again"
        )
        for name, reason, detail in store.set_aside:
            say(f"{task_obj.id}: set aside {name}: {reason}{': ' + detail if detail else ''}")
    if heartbeat is not None:
        reused = Counter(r.status for r in results.values())
        heartbeat.begin(
            task=task_obj.id, attempt=attempt, planned=len(selected), reused=reused, sandbox=sandbox, limiter=limiter
        )

    from tcsexam.runner.pool import RunContext

    ctx = RunContext(
        task=task_obj,
        candidate=candidate,
        sandbox=sandbox,
        limits=limits,
        limiter=limiter,
        seed=seed,
        attempt=attempt,
        keys=keys,
        candidate_hash=candidate_hash,
        sandbox_image=image,
        instance_hashes=instance_hashes,
        hidden_paths=tuple(sorted({*hidden_paths(output, records_dir), str(seal_key.path.parent)})),
    )

    def finish(name: str, record: InstanceRecord) -> None:
        store.write(record)
        results[name] = record
        summary.executed += 1
        if heartbeat is not None:
            heartbeat.record(record.status)

    def all_invalid(message: str, termination: str) -> list[str]:
        """Record every pending instance `invalid` (the submission cannot run); none is left."""
        for name in pending:
            finish(name, ctx.blank_record(name, Status.INVALID.value, message[:1000], termination=termination))
        return []

    summary.calibration = job_calibration(output, rerun=bool(pending), say=say, label=task_obj.id)
    if pending:
        say(
            f"{task_obj.id}: {len(pending)} of {len(selected)} instances to run "
            f"({summary.reused} reused from {records_dir})"
        )
        built, build_dir = candidate, None
        if sandbox_obj.name != "docker":  # the interpreter the docs promise, as candidates see it
            failed = probe_python(sandbox_obj, limiter=limiter)
            if failed is not None:
                raise InputError(f"{task_obj.id}: {failed}; nothing was run")
        if candidate_error is not None:
            say(
                f"{task_obj.id}: WARNING: the candidate's solver.yaml is unusable ({candidate_error}); "
                "EVERY instance is recorded invalid (scored 0) and the run exits 0"
            )
            pending = all_invalid(f"candidate cannot start: {candidate_error}", Termination.CANDIDATE.value)
        elif getattr(candidate, "build", None):
            build_dir = records_dir / ".build"
            shutil.rmtree(build_dir, ignore_errors=True)
            log_path = records_dir / "build.log"
            build_limits = dataclasses.replace(
                BUILD_LIMITS,
                wall_s=float(build_timeout_s),
                cpu_s=max(BUILD_LIMITS.cpu_s or 0, 2 * build_timeout_s),
            )
            built, message = build_candidate(
                candidate,
                sandbox=sandbox_obj,
                limits=build_limits,
                build_dir=build_dir,
                log_path=log_path,
                limiter=limiter,
            )
            summary.build_message = message
            if built is None:
                say(f"{task_obj.id}: build failed ({message}); every instance is invalid, log: {log_path}")
                pending = all_invalid(f"build failed: {message} (log: {log_path})", Termination.BUILD.value)
        private = None
        if pending and built is not None and sandbox == "local":
            # nothing can be mounted read-only: the candidate runs in a private copy of its folder
            # (outside the results tree), and its real folder is checked afterwards
            private = Path(tempfile.mkdtemp(prefix="tcsexam-candidate-"))
            private.chmod(0o755)  # readable (never writable) by a root harness's unprivileged candidate uid
            shutil.copytree(built.dir, private / built.dir.name, symlinks=True, ignore=special_files)
            built = dataclasses.replace(built, dir=private / built.dir.name)
        try:
            if pending:
                _run_pool(
                    dataclasses.replace(ctx, candidate=built),
                    pending,
                    threads=threads,
                    workers=workers,
                    ray_address=ray_address,
                    ray_head=ray_head,
                    use_ray=use_ray,
                    max_retries=max_retries,
                    progress=progress,
                    initial_done=summary.reused,
                    total=len(selected),
                    finish=finish,
                    on_dispatch=on_dispatch,
                    summary=summary,
                    log=say,
                )
        finally:
            if build_dir is not None:
                shutil.rmtree(build_dir, ignore_errors=True)
            if private is not None:
                shutil.rmtree(private, ignore_errors=True)
        if sandbox == "local" and hash_candidate(candidate_dir) != candidate_hash:
            say(
                f"{task_obj.id}: WARNING: the candidate folder {candidate_dir} changed during the run (under "
                "sandbox local a candidate can write wherever this user can); its records keep the key of the "
                "folder as it was, a rerun runs the changed folder again; use --sandbox auto/bwrap/docker"
            )

    summary.records = [results[inst.name] for inst in selected]
    summary.statuses = Counter(r.status for r in summary.records)
    atomic_write_json(output, [r.to_dict(seal_key) for r in summary.records])
    summary.wall_s = time.perf_counter() - t_start
    say(summary.line())
    write_job_calibration(output, summary.calibration)  # after the records (a full disk names them)
    if summary.candidate_error is not None:
        say(
            f"{task_obj.id}: WARNING: all {summary.total} instances are invalid because the candidate cannot "
            f"start: {summary.candidate_error}"
        )
    infra = summary.statuses.get(Status.INFRASTRUCTURE_ERROR.value, 0)
    if infra:
        say(
            f"{task_obj.id}: {infra} infrastructure_error record(s): the scorer refuses them; "
            f"run `tcsexam repair --records-dir {records_dir}` and rerun"
        )
    return summary


def _run_pool(
    ctx: RunContext,
    pending: list[str],
    *,
    threads,
    workers,
    ray_address,
    ray_head,
    use_ray,
    max_retries,
    progress,
    initial_done,
    total,
    finish,
    on_dispatch,
    summary,
    log,
) -> None:
    from tqdm import tqdm

    from tcsexam.runner.pool import InProcessPool, RayPool
    from tcsexam.runner.ray_job import job_cpus, start_ray

    task_obj, limits = ctx.task, ctx.limits
    failures = 0
    bar = None

    def on_result(name: str, record: InstanceRecord, tries: int) -> None:
        nonlocal failures
        finish(name, record)
        if record.status != Status.OK.value:
            failures += 1
        bar.set_postfix(failures=failures, refresh=False)
        bar.update(1)

    handle = None
    pool = None
    try:
        if use_ray:
            head_wait_s = 0.0
            if ray_head is not None:
                from tcsexam.runner.ray_head import join

                t_wait = time.perf_counter()
                ray_address = join(ray_head, wait_s=RAY_HEAD_WAIT_S)
                head_wait_s = time.perf_counter() - t_wait
                if ray_address is None:
                    log(f"{task_obj.id}: no shared Ray head alive in {ray_head}; starting Ray in this job")
            wanted = workers if workers is not None else max(1, job_cpus() // threads)
            handle = start_ray(num_cpus=wanted * threads, address=ray_address)
            summary.ray_startup_s = handle.startup_s
            if not handle.started_here and workers is None:
                wanted = max(1, int(handle.total_cpus) // threads)
            if handle.total_cpus and threads > handle.total_cpus:
                raise InputError(
                    f"candidate needs {threads} CPUs per run but the Ray cluster has {handle.total_cpus:g}"
                )
            watchdog = 3 * float(limits.wall_s) + 120.0
            pool = RayPool(
                ctx,
                workers=wanted,
                threads=threads,
                max_retries=max_retries,
                watchdog_s=watchdog,
                on_dispatch=on_dispatch,
            )
        else:
            pool = InProcessPool(ctx, max_retries=max_retries, on_dispatch=on_dispatch)
        summary.workers = pool.workers
        if handle is not None:
            where = (
                f"Ray at {handle.address}"
                if handle.address
                else ("local Ray" if handle.started_here else "this process's Ray")
            )
            waited = f"; waited {head_wait_s:.1f} s for the shared head" if head_wait_s >= 0.1 else ""
            log(
                f"{task_obj.id}: {pool.workers} worker(s) x {threads} CPU(s) on {where} "
                f"(started in {handle.startup_s:.1f} s{waited})"
            )
        # the bar starts after the one-off Ray start, so its rate and ETA are the instances'
        bar = tqdm(
            total=total,
            initial=initial_done,
            desc=task_obj.id,
            unit="inst",
            file=sys.stderr,
            disable=not progress,
            dynamic_ncols=True,
            smoothing=0.1,
        )
        bar.set_postfix(failures=0, refresh=False)
        pool.run(pending, on_result)
    finally:
        if bar is not None:
            bar.close()
        if pool is not None:
            # Ending this process's Ray connection ends its job, whose actors Ray then stops;
            # killing them one by one first only delays the disconnect (~0.3 s).
            pool.close(kill_actors=handle is None or not handle.ends_job)
        if handle is not None:
            handle.shutdown()
        if pool is not None:
            pool.reap_orphans()  # runs of actors that Ray stopped (SIGKILL) cannot stop themselves
