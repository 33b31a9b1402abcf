"""The task-level run: one candidate on (a subset of) a task's instances, with resume.

`run_job(TaskJob, RunOptions, RunHooks)` goes step by step (`_TaskRun`), through the batch engine
(`tcsexam.runner.engine.batch`) for reuse and runs:

1. prepare: load the task and the candidate, check the sandbox once (an unavailable sandbox is
   one error at start, not a crash per instance);
2. keys: every instance's key (candidate files hashed once, each instance file once);
3. reuse: the stored records whose key matches (never an `infrastructure_error`), `KeyedBatch`;
4. build: if anything is left, build the candidate once (failure: every remaining instance
   `invalid`, the build log kept as `<records-dir>/build.log`);
5. batch: run the rest in the pool (`batch.run_batch`), each record written to the store the
   moment it arrives;
6. summary: write records.json (the JSON list of records, in task order) atomically.

Solver failures are records; only bad input raises (`InputError`, exit 1).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tcsexam.containment import Limiter, SandboxName
from tcsexam.errors import InputError, MisspeltKeyError, UsageError
from tcsexam.fileio import JsonObject, atomic_write_json, exclusive_use, special_files
from tcsexam.limits import DEFAULT_SEED, MiB, ProofLimits
from tcsexam.logs import say_for
from tcsexam.problems.solver_base import SolverProblem
from tcsexam.records import InstanceRecord, Status, Termination
from tcsexam.records.digest import hash_candidate, hash_file, record_key
from tcsexam.records.key import run_key
from tcsexam.records.store import RecordStore
from tcsexam.runner.engine.batch import BatchHooks, KeyedBatch, PoolKind, RunOptions, run_batch
from tcsexam.runner.limiter import BUILD_LIMITS, resolve_limiter
from tcsexam.runner.observers.calibrate import job_calibration, write_job_calibration
from tcsexam.runner.sandboxes import choose_sandbox, probe_python
from tcsexam.runner.solver.anytime import KEY_VERSION as ANYTIME_KEY_VERSION
from tcsexam.runner.solver.attempt import RunContext
from tcsexam.runner.solver.candidate import build_candidate, load_candidate
from tcsexam.runner.solver.run_outputs import CERTIFICATES_DIR, KEEP_MAX_MB, PROOFS_DIR, Keep
from tcsexam.tasks import load_task, verify_instance_files

if TYPE_CHECKING:
    from tcsexam.records import Termination
    from tcsexam.runner.limiter import Limits
    from tcsexam.runner.observers.heartbeat import Heartbeat
    from tcsexam.runner.sandboxes.base import Sandbox
    from tcsexam.runner.solver.candidate import Candidate
    from tcsexam.tasks import Task, TaskInstance


#: part of the record key of an instance given to candidates as a normalised copy
#: (`execute._candidate_copy`): a file without a quirk keeps the key it had
GIVEN_KEY_VERSION = 1


def _key_meta(task_obj: Task, inst: TaskInstance) -> JsonObject:
    """What the record key holds of an instance's metadata: its task-file metadata, and
    `instance_given` when candidates get a normalised copy of it (SATLIB's `%` trailer stripped)."""
    problem = task_obj.problem_impl
    if not isinstance(problem, SolverProblem) or type(problem).candidate_copy is SolverProblem.candidate_copy:
        return inst.meta  # never normalises
    if problem.candidate_copy(Path(inst.path).read_bytes()) is None:
        return inst.meta
    return {**inst.meta, "instance_given": GIVEN_KEY_VERSION}


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
    pool: PoolKind | None = None  #: where the runs went (ray or in-process); None: nothing ran
    wall_s: float = 0.0
    build_message: str | None = None
    set_aside: list[tuple[str, str, str]] = field(default_factory=list)  #: (instance, reason, detail)
    set_aside_dir: Path | None = None
    candidate_error: str | None = None  #: why the submission cannot start (every instance invalid)
    calibration: dict | None = None  #: the machine calibration of this job (tcsexam.runner.observers.calibrate)

    def set_aside_text(self) -> str:
        """'2 set aside (1 digest-mismatch, 1 unreadable)' or ''."""
        if not self.set_aside:
            return ""
        reasons = Counter(reason for _, reason, _ in self.set_aside)
        return f"{len(self.set_aside)} set aside ({', '.join(f'{n} {r}' for r, n in sorted(reasons.items()))})"

    def line(self) -> str:
        counts = " ".join(f"{s}={n}" for s, n in sorted(self.statuses.items()))
        aside = f", {self.set_aside_text()}" if self.set_aside else ""
        cal = self.calibration or {}
        speed = f"; machine speed {cal['speed']:g}" if isinstance(cal.get("speed"), (int, float)) else ""
        return (
            f"{self.task}: {self.total} instances ({self.reused} reused, {self.executed} run{aside}) "
            f"{counts}{speed}; records -> {self.output}"
        )


def _threads(candidate: Candidate) -> int:
    threads = candidate.threads or 1
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


def _plan_line(task_obj, selected, attempt, sandbox: SandboxName, limiter: Limiter, threads: int) -> str:
    """What the job will do, first in its log: task, instances, limits, sandbox, limiter, uid."""
    lim = ", ".join(f"{k} {v:g}" for k, v in task_obj.limits.task_dict().items() if isinstance(v, (int, float)))
    try:
        chosen: str = resolve_limiter(limiter)
    except InputError as exc:
        chosen = f"unavailable ({exc})"
    return (
        f"{task_obj.id}: attempt {attempt}, {len(selected)} of {len(task_obj.instances)} instances; limits {lim}; "
        f"{threads} thread(s) per run; sandbox {sandbox}; limiter {limiter} -> {chosen}; "
        f"uid {os.getuid()} on {socket.gethostname()}"
        + (f" (SLURM job {os.environ['SLURM_JOB_ID']})" if os.environ.get("SLURM_JOB_ID") else "")
    )


@dataclass(frozen=True)
class TaskJob:
    """What one run does: a candidate on (a subset of) a task's instances, its records where."""

    task: str | Path
    candidate_dir: str | Path
    output: str | Path
    attempt: str | None = None
    records_dir: str | Path | None = None  #: default: records/ beside `output`
    instances: Sequence[str] | None = None  #: only these (records.json then lists only them)
    seed: int = DEFAULT_SEED
    #: what is kept beside records.json for re-checking (`run_outputs.Keep`) and the largest file kept
    keep: Keep = Keep.ALL
    keep_max_mb: int = KEEP_MAX_MB
    #: more folders the candidate must not see (an agent's checker: the solvers folder, its run, the checkout)
    hidden: tuple[str, ...] = ()

    def paths(self) -> tuple[Path, Path]:
        """(records.json, the records folder)."""
        output = Path(self.output)
        return output, Path(self.records_dir) if self.records_dir is not None else output.parent / "records"


@dataclass(frozen=True)
class RunHooks:
    """Whom the run tells: its log, the job's heartbeat, each dispatch (tests)."""

    log: Callable[[str], None] | None = None
    heartbeat: Heartbeat | None = None
    on_dispatch: Callable[[str, int, int], None] | None = None


def run_job(job: TaskJob, options: RunOptions | None = None, hooks: RunHooks | None = None) -> RunSummary:
    """Run `job` with resume (see the module doc). It holds an exclusive lock on its records.json
    and its records folder while it runs (`fileio.exclusive_use`): a second run on either stops
    at once with one line (exit 1)."""
    output, records_dir = job.paths()
    with exclusive_use([(output, False), (records_dir, True)]):
        return _TaskRun(job, options or RunOptions(), hooks or RunHooks()).run()


@dataclass
class _Prepared:
    """What `prepare` found: the task and the instances selected, the candidate (or why it
    cannot start), the sandbox chosen, the limits."""

    task: Task
    selected: list[TaskInstance]
    candidate: Candidate | None
    candidate_error: str | None
    sandbox: Sandbox
    threads: int
    limits: Limits


class _TaskRun:
    """One `run_job`, step by step: prepare, keys, reuse, build, batch, summary."""

    def __init__(self, job: TaskJob, options: RunOptions, hooks: RunHooks):
        self.job, self.options, self.hooks = job, options, hooks
        self.say = hooks.log or say_for("run", "runner")
        self.output, self.records_dir = job.paths()

    def run(self) -> RunSummary:
        t_start = time.perf_counter()
        prep = self.prepare()
        keys, instance_hashes, candidate_hash = self.keys(prep)
        seal_key = run_key(self.output, self.records_dir, self.job.candidate_dir)
        summary = RunSummary(
            task=prep.task.id, total=len(prep.selected), output=self.output, records_dir=self.records_dir
        )
        summary.candidate_error = prep.candidate_error
        batch = self.reuse(prep, keys, seal_key, summary)
        ctx = RunContext(
            task=prep.task,
            candidate=prep.candidate,
            sandbox=prep.sandbox,
            limits=prep.limits,
            limiter=self.options.limiter,
            seed=self.job.seed,
            attempt=self.job.attempt,
            keys=keys,
            candidate_hash=candidate_hash,
            sandbox_image=prep.sandbox.image_id(),
            instance_hashes=instance_hashes,
            hidden_paths=tuple(
                sorted({*hidden_paths(self.output, self.records_dir), str(seal_key.path.parent), *self.job.hidden})
            ),
            certificates_dir=str(self.output.parent / CERTIFICATES_DIR) if Keep(self.job.keep).certificates else None,
            proofs_dir=str(self.output.parent / PROOFS_DIR) if Keep(self.job.keep).proofs else None,
            keep_max_bytes=int(self.job.keep_max_mb) * MiB,
        )
        summary.calibration = job_calibration(self.output, rerun=bool(batch.pending), say=self.say, label=prep.task.id)
        if batch.pending:
            self.say(
                f"{prep.task.id}: {len(batch.pending)} of {len(prep.selected)} instances to run "
                f"({summary.reused} reused from {self.records_dir})"
            )
            self.build_and_run(prep, ctx, batch, summary)
            if not prep.sandbox.isolates_files and hash_candidate(self.job.candidate_dir) != candidate_hash:
                self.say(
                    f"{prep.task.id}: WARNING: the candidate folder {self.job.candidate_dir} changed during the run "
                    "(under sandbox local a candidate can write wherever this user can); its records keep the key of "
                    "the folder as it was, a rerun runs the changed folder again; use --sandbox auto/bwrap/docker"
                )
        summary.executed = batch.executed
        self.summarise(summary, batch, seal_key, t_start)
        return summary

    # -- prepare ------------------------------------------------------------------------------

    def prepare(self) -> _Prepared:
        """Check the options, load the task, its instances (their sha256 checked) and the
        candidate, choose the sandbox; log the plan."""
        options = self.options
        options.pool.check()
        if self.output.parent.resolve() == self.records_dir.resolve():
            raise UsageError("--output must not be inside --records-dir (it holds only instance records)")
        task_obj, selected = self.selected_instances()
        verify_instance_files(task_obj, selected)  # every recorded sha256, before anything runs
        candidate, candidate_error = self.load_candidate(task_obj)
        sandbox_obj, why = choose_sandbox(
            options.sandbox, allow_unsandboxed=options.allow_unsandboxed, docker_image=options.docker_image
        )
        self.say(f"{task_obj.id}: {why}")
        threads = _threads(candidate) if candidate is not None else 1
        limits = task_obj.limits.for_threads(threads)
        # `auto` resolved: records and keys name the sandbox that ran
        self.say(_plan_line(task_obj, selected, self.job.attempt, sandbox_obj.name, options.limiter, threads))
        return _Prepared(task_obj, selected, candidate, candidate_error, sandbox_obj, threads, limits)

    def selected_instances(self) -> tuple[Task, list[TaskInstance]]:
        task_obj = load_task(self.job.task)
        if self.job.instances:
            wanted = list(dict.fromkeys(self.job.instances))
            selected = [task_obj.instance(n) for n in wanted]  # InputError names an unknown one
            order = {n: i for i, n in enumerate(inst.name for inst in task_obj.instances)}
            selected.sort(key=lambda inst: order[inst.name])
        else:
            selected = list(task_obj.instances)
        if not selected:
            raise InputError(f"{task_obj.source}: task {task_obj.id} has no instances")
        return task_obj, selected

    def load_candidate(self, task_obj: Task) -> tuple[Candidate | None, str | None]:
        """A submitted solver.yaml that cannot be used is the submission's failure (every
        instance `invalid`), not the operator's; a missing candidate folder or solver.yaml is
        bad input."""
        candidate_dir = Path(self.job.candidate_dir)
        try:
            return load_candidate(candidate_dir, task_obj.id), None
        except MisspeltKeyError:
            raise  # a typo in the file, exit 2: not a submission that fails every instance
        except InputError as exc:
            if not (candidate_dir / "solver.yaml").is_file():
                raise
            return None, str(exc)

    # -- keys and reuse -----------------------------------------------------------------------

    def keys(self, prep: _Prepared) -> tuple[dict[str, str], dict[str, str], str]:
        """(instance -> record key, instance -> sha256 of its file, the candidate's hash): the
        candidate's files hashed once, each instance file once."""
        task_obj, image = prep.task, prep.sandbox.image_id()
        sandbox = prep.sandbox.name
        candidate_hash = hash_candidate(self.job.candidate_dir)
        limits_key = dict(task_obj.limits.task_dict(), threads=prep.threads)
        if task_obj.anytime:  # traced records differ; a non-anytime task's keys stay as they were
            limits_key["anytime"] = ANYTIME_KEY_VERSION
        if task_obj.unsat_proof is not None:  # UNSAT judged with or without a proof: another key
            limits_key["unsat_proof"] = {"mode": task_obj.unsat_proof, **(task_obj.proof_limits or ProofLimits()).key()}
        keys, instance_hashes = {}, {}
        for inst in prep.selected:
            instance_hashes[inst.name] = hash_file(inst.path)
            keys[inst.name] = record_key(
                candidate_hash=candidate_hash,
                instance_hash=instance_hashes[inst.name],
                limits=limits_key,
                sandbox=f"{sandbox}@{image}" if image else sandbox,  # a new image reruns
                seed=self.job.seed,
                meta=_key_meta(task_obj, inst),
                problem=task_obj.problem,
            )
        return keys, instance_hashes, candidate_hash

    def reuse(self, prep: _Prepared, keys: dict[str, str], seal_key, summary: RunSummary) -> KeyedBatch:
        """The stored records under their key, reused; what was set aside, logged."""
        task_id = prep.task.id
        batch = KeyedBatch.open(RecordStore(self.records_dir, key=seal_key), keys)
        summary.reused = batch.reused
        summary.set_aside = batch.set_aside
        if summary.set_aside:
            summary.set_aside_dir = batch.store.set_aside_dir
            self.say(
                f"{task_id}: {summary.set_aside_text()} stored record(s) not reused, kept in "
                f"{summary.set_aside_dir}; their instances run again"
            )
            for name, reason, detail in summary.set_aside:
                self.say(f"{task_id}: set aside {name}: {reason}{': ' + detail if detail else ''}")
        heartbeat = self.hooks.heartbeat
        if heartbeat is not None:
            heartbeat.begin(
                task=task_id,
                attempt=self.job.attempt,
                planned=len(prep.selected),
                reused=Counter(r.status for r in batch.results.values()),
                sandbox=prep.sandbox.name,
                limiter=self.options.limiter,
            )
            batch.on_write = lambda name, record: heartbeat.record(record.status)
        return batch

    # -- build and batch ----------------------------------------------------------------------

    def build_and_run(self, prep: _Prepared, ctx: RunContext, batch: KeyedBatch, summary: RunSummary) -> None:
        """Probe the sandbox's Python, build the candidate (a failure or an unusable
        solver.yaml: every pending instance `invalid`), then run the rest in the pool."""
        task_id = prep.task.id
        if prep.sandbox.uses_harness_python:  # the interpreter the docs promise, as candidates see it
            failed = probe_python(prep.sandbox, limiter=self.options.limiter)
            if failed is not None:
                raise InputError(f"{task_id}: {failed}; nothing was run")
        build_dir = None
        built = prep.candidate
        if prep.candidate_error is not None:
            self.say(
                f"{task_id}: WARNING: the candidate's solver.yaml is unusable ({prep.candidate_error}); "
                "EVERY instance is recorded invalid (scored 0) and the run exits 0"
            )
            self.all_invalid(ctx, batch, f"candidate cannot start: {prep.candidate_error}", Termination.CANDIDATE)
        elif prep.candidate is not None and prep.candidate.build:
            build_dir = self.records_dir / ".build"
            built = self.build(prep, ctx, batch, summary, build_dir)
        private = self.private_copy(prep, built) if batch.pending and built is not None else None
        try:
            if batch.pending:
                run_ctx = dataclasses.replace(ctx, candidate=private or built)
                hooks = BatchHooks(
                    label=task_id,
                    log=self.say,
                    on_dispatch=self.hooks.on_dispatch,
                    progress=self.options.progress,
                    failed=lambda record: record.status != Status.OK,
                )
                report = run_batch(run_ctx, batch, self.options.pool, hooks, threads=prep.threads)
                summary.workers, summary.ray_startup_s = report.workers, report.ray_startup_s
                summary.pool = report.kind
                if self.hooks.heartbeat is not None and report.kind is not None:
                    self.hooks.heartbeat.note(pool=str(report.kind))
        finally:
            if build_dir is not None:
                shutil.rmtree(build_dir, ignore_errors=True)
            if private is not None:
                shutil.rmtree(private.dir.parent, ignore_errors=True)

    def all_invalid(self, ctx: RunContext, batch: KeyedBatch, message: str, termination: Termination) -> None:
        """Record every pending instance `invalid` (the submission cannot run); none is left."""
        batch.settle(lambda name: ctx.blank_record(name, Status.INVALID, message[:1000], termination=termination))

    def build(self, prep: _Prepared, ctx: RunContext, batch: KeyedBatch, summary: RunSummary, build_dir: Path):
        """The candidate's build step, under the build limits; None when it failed (every
        pending instance is then `invalid`, the log kept as `<records-dir>/build.log`)."""
        shutil.rmtree(build_dir, ignore_errors=True)
        if prep.candidate is None:  # run() builds a candidate with a build step only
            return None
        log_path = self.records_dir / "build.log"
        timeout_s = self.options.build_timeout_s
        build_limits = dataclasses.replace(
            BUILD_LIMITS,
            wall_s=float(timeout_s),
            cpu_s=max(BUILD_LIMITS.cpu_s or 0, 2 * timeout_s),
        )
        built, message = build_candidate(
            prep.candidate,
            sandbox=prep.sandbox,
            limits=build_limits,
            build_dir=build_dir,
            log_path=log_path,
            limiter=self.options.limiter,
        )
        summary.build_message = message
        if built is None:
            self.say(f"{prep.task.id}: build failed ({message}); every instance is invalid, log: {log_path}")
            self.all_invalid(ctx, batch, f"build failed: {message} (log: {log_path})", Termination.BUILD)
        return built

    def private_copy(self, prep: _Prepared, built: Candidate) -> Candidate | None:
        """Under a sandbox that cannot mount anything read-only the candidate runs in a private
        copy of its folder (outside the results tree); its real folder is checked afterwards."""
        if prep.sandbox.isolates_files:
            return None
        private = Path(tempfile.mkdtemp(prefix="tcsexam-candidate-"))
        private.chmod(0o755)  # readable (never writable) by a root harness's unprivileged candidate uid
        shutil.copytree(built.dir, private / built.dir.name, symlinks=True, ignore=special_files)
        return dataclasses.replace(built, dir=private / built.dir.name)

    # -- summary ------------------------------------------------------------------------------

    def summarise(self, summary: RunSummary, batch: KeyedBatch, seal_key, t_start: float) -> None:
        """Write records.json (task order) and the job's calibration; log the summary."""
        summary.records = batch.ordered()
        summary.statuses = Counter(r.status for r in summary.records)
        atomic_write_json(self.output, [r.to_dict(seal_key) for r in summary.records])
        summary.wall_s = time.perf_counter() - t_start
        self.say(summary.line())
        write_job_calibration(self.output, summary.calibration)  # after the records (a full disk names them)
        if summary.candidate_error is not None:
            self.say(
                f"{summary.task}: WARNING: all {summary.total} instances are invalid because the candidate cannot "
                f"start: {summary.candidate_error}"
            )
        infra = summary.statuses.get(Status.INFRASTRUCTURE_ERROR, 0)
        if infra:
            self.say(
                f"{summary.task}: {infra} infrastructure_error record(s): the scorer refuses them; "
                f"run `tcsexam repair --records-dir {self.records_dir}` and rerun"
            )
