"""What a campaign costs before it starts: `tcsexam plan` (docs/workflow.md, "Planning a campaign").

For a workflow config (the models, their attempts, the suite) and a cluster (nodes, cores per node,
the queue's delay per submission) it lists the jobs the workflow submits to the cluster (one per
Solver (model, task, attempt), construction run and proof check: the non-local rules) and
estimates:

- **submissions**: one per cluster job;
- **core-hours**: the cores each job holds for its whole length (its work divided by its threads,
  plus the per-job overhead), summed; beside it the ideal (the work alone);
- **wall time**: Snakemake's start, then the jobs placed longest first on the nodes' cores
  (a list schedule: each job on the node whose cores free earliest, after the queue's delay), then
  the local jobs after the last cluster job (scores, table, Index, plots, explorer).

A job's work comes from measured timings where there are any (`timings`: results trees of earlier
runs, e.g. a reference build's or a local run's; the median `wall_s` of each (task, instance) in
their records.json and each proof item in their verdict.json) and from the task's wall limit
otherwise (the budget an anytime solver uses up: an upper bound). Each job's estimate says which.
The per-job overhead, Snakemake's start and the tail are measured values (`Overheads`): the
defaults are the test cluster's (.ci/start-slurm-cluster.sh), the way to measure yours is in
docs/workflow.md.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tcsexam.errors import InputError
from tcsexam.fileio import read_yaml
from tcsexam.suites import BINARY_TRACKS, Track
from tcsexam.workflow.batching import AUTO, JobKind, decide, pack
from tcsexam.workflow.plan import Plan
from tcsexam.workflow.timings import Timings, TimingSource

__all__ = ["JobKind", "Timings", "TimingSource"]  # re-exported: benchmarks/slurm_campaign.py


#: measured on the test cluster (.ci/start-slurm-cluster.sh: 2 nodes x 1 core on a 2-core machine
#: shared with other work, load average 4-7), the tiny config over SLURM at 6bc32f3 (40 jobs one by
#: one, then in 2 batches): see docs/workflow.md, "Planning a campaign", and
#: benchmarks/slurm_campaign.py to measure your own
DEFAULT_JOB_OVERHEAD_S = 12.0  #: a cluster job's length beyond its work: job start, Snakemake in the job (median)
DEFAULT_RAY_S = 1.0  #: what a Solver job takes beyond that (a small one runs without Ray: tcsexam run --pool auto)
DEFAULT_QUEUE_S = 1.0  #: a core coming free to the next job starting on it (idle cluster)
DEFAULT_STARTUP_S = 3.0  #: Snakemake's start and DAG before the first submission
DEFAULT_TAIL_S = 14.0  #: local jobs after the last cluster job (scores, table, Index, plots, explorer)
DEFAULT_MEMBER_S = 2.0  #: a member of a batch (config batch) beyond its work: its process, joining the batch's Ray
DEFAULT_TAKE_S = 0.8  #: batched: each member's take and row jobs (local) after its batch, on the submitting host


@dataclass(frozen=True)
class Cluster:
    nodes: int
    cores_per_node: int
    queue_s: float = DEFAULT_QUEUE_S  #: delay from a slot coming free to the next job starting on it
    max_jobs: int | None = None  #: Snakemake's --jobs (jobs submitted or running at once)

    def __post_init__(self) -> None:
        if self.nodes < 1 or self.cores_per_node < 1:
            raise InputError(f"cluster: nodes ({self.nodes}) and cores per node ({self.cores_per_node}) must be >= 1")
        if self.queue_s < 0:
            raise InputError(f"cluster: queue overhead {self.queue_s} s is negative")
        if self.max_jobs is not None and self.max_jobs < 1:
            raise InputError(f"cluster: --jobs {self.max_jobs} must be >= 1")

    @classmethod
    def from_file(cls, path: str | Path, **override: Any) -> Cluster:
        """A cluster description (JSON or YAML): `nodes` (a number or a list of nodes, as
        .ci/start-slurm-cluster.sh writes), `cores_per_node`, optional `queue_s`, `max_jobs`.
        `override`: values given on the command line (None: not given)."""
        path = Path(path)
        data = read_yaml(path, "cluster description")  # JSON is YAML
        if not isinstance(data, dict):
            raise InputError(f"{path}: a cluster description is a mapping (nodes, cores_per_node, ...)")
        nodes = data.get("nodes")
        values = {
            "nodes": len(nodes) if isinstance(nodes, list) else nodes,
            "cores_per_node": data.get("cores_per_node"),
            "queue_s": data.get("queue_s", DEFAULT_QUEUE_S),
            "max_jobs": data.get("max_jobs"),
        }
        values.update({k: v for k, v in override.items() if v is not None})
        for key in ("nodes", "cores_per_node"):
            if not isinstance(values[key], int) or isinstance(values[key], bool):
                raise InputError(f"{path}: {key} must be a whole number (got {values[key]!r})")
        return cls(**values)


@dataclass(frozen=True)
class Overheads:
    job_s: float = DEFAULT_JOB_OVERHEAD_S
    ray_s: float = DEFAULT_RAY_S  #: added to Solver jobs (each starts its own Ray on a cluster)
    startup_s: float = DEFAULT_STARTUP_S
    tail_s: float = DEFAULT_TAIL_S
    member_s: float = DEFAULT_MEMBER_S  #: per member of a batch job (batched mode)
    take_s: float = DEFAULT_TAKE_S  #: per member of a batch, on the submitting host after it ends (batched mode)

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value < 0:
                raise InputError(f"overhead {name} = {value} s is negative")

    @classmethod
    def given(cls, **values: float | None) -> Overheads:
        """The defaults, with each value that is given (not None) in its place: command-line flags."""
        return cls(**{k: v for k, v in values.items() if v is not None})


@dataclass(frozen=True)
class Job:
    kind: JobKind
    model: str
    item: str
    attempt: str
    instances: int
    work_s: float  #: the job's instances' expected seconds, summed (CPU-seconds of its threads)
    threads: int
    source: TimingSource
    members: int = 0  #: a batch job (config batch): how many jobs it runs; 0: a job of its own

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.model}/{self.item}/{self.attempt}"

    def length_s(self, overheads: Overheads) -> float:
        """Seconds from the job's start to its end: its work spread on its threads, plus the
        per-job overhead (and a Solver job's Ray start; a batch's members' own starts, side by
        side on its threads)."""
        ray = overheads.ray_s if self.kind == JobKind.SOLVER else 0.0
        return self.work_s / self.threads + overheads.job_s + ray + self.members * overheads.member_s / self.threads


@dataclass(frozen=True)
class Batching:
    """Batched mode (config `batch`, tcsexam.workflow.batching): the jobs packed into batch jobs."""

    target_min: float = 30.0
    min_batches: int = 1
    max_members: int = 100
    member_overhead_s: float = 5.0  #: what the workflow sizes its batches with (config batch.member_overhead_s)

    @classmethod
    def from_config(cls, config: dict[str, Any], **override: Any) -> Batching:
        b = config.get("batch") or {}
        values = {k: b[k] for k in ("target_min", "min_batches", "max_members", "member_overhead_s") if k in b}
        values.update({k: v for k, v in override.items() if v is not None})
        if values.get("target_min", 1) <= 0 or values.get("min_batches", 1) < 1 or values.get("max_members", 1) < 1:
            raise InputError(f"batching: target_min > 0, min_batches >= 1, max_members >= 1 (got {values})")
        return cls(**values)


def batched(config: dict[str, Any], flag: bool | None = None) -> bool:
    """Whether the plan is of the batched mode: `flag` (--batch / --no-batch) where given, else the
    config's `batch.enabled` as the workflow decides it for a cluster run (a plan describes one):
    `auto`, its default, and `true` batch; `false` does not."""
    if flag is not None:
        return flag
    return decide((config.get("batch") or {}).get("enabled", AUTO), local_exec=False)


def batch_jobs(jobs: list[Job], threads: int, batching: Batching) -> list[Job]:
    """The batch jobs the workflow would submit for `jobs` (the same packing:
    tcsexam.workflow.batching.pack): one Job per batch, its work the members' work, a Solver job
    (its own Ray) when a Solver run is among its members."""
    cost = {j.key: j.work_s + batching.member_overhead_s * min(j.threads, threads) for j in jobs}
    bins = pack(
        jobs,
        cost,
        threads=threads,
        target_s=batching.target_min * 60,
        min_batches=batching.min_batches,
        max_members=batching.max_members,
    )
    out = []
    for n, members in enumerate(bins, 1):
        kind = JobKind.SOLVER if any(m.kind == JobKind.SOLVER for m in members) else members[0].kind
        sources = {m.source for m in members}
        source = sources.pop() if len(sources) == 1 else TimingSource.PARTLY_MEASURED
        work = sum(m.work_s for m in members)
        out.append(
            Job(kind, "batch", f"b{n:03d}", "", sum(m.instances for m in members), work, threads, source, len(members))
        )
    return out


@dataclass
class Estimate:
    submissions: int
    core_hours: float  #: cores held by the cluster jobs, start to end
    ideal_core_hours: float  #: the jobs' work alone
    wall_s: float  #: startup + the jobs' schedule + the tail
    schedule_s: float  #: first submission to last cluster job's end
    cores: int
    jobs_by_kind: dict[str, int]
    sources: dict[str, int]  #: jobs per timing source
    cluster: dict[str, Any]
    overheads: dict[str, float]
    ideal_wall_s: float  #: work / cores: no overhead, perfect packing
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# ---- the jobs of a config ----------------------------------------------------------------------


def load_config(path: str | Path, root: str | Path = ".") -> dict[str, Any]:
    """The config as the Snakefile sees it with `--configfile PATH`: config/config.yaml first
    (the Snakefile's own configfile), then PATH's values over it (Snakemake's recursive update)."""
    root = Path(root)
    base_path = root / "config" / "config.yaml"
    config = read_yaml(base_path, "workflow config") if base_path.is_file() else {}
    path = Path(path)
    if path.resolve() != base_path.resolve():
        _update(config, read_yaml(path, "workflow config") or {})
    if not isinstance(config, dict) or not config.get("models"):
        raise InputError(f"{path}: a workflow config with models (config/config.yaml's keys)")
    return config


def _update(base: dict, over: dict) -> None:
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _update(base[key], value)
        else:
            base[key] = value


def campaign_jobs(
    config: dict[str, Any],
    *,
    root: str | Path = ".",
    timings: Timings | None = None,
    models: int | None = None,
    attempts: int | None = None,
) -> list[Job]:
    """The cluster jobs of `config`: every (model, item, attempt) of the suite's Solver,
    construction, theorem and open-conjecture tracks (a campaign plans for every attempt to be
    submitted), `models` / `attempts` replacing the config's models and their attempts (a
    hypothetical campaign of N models x K attempts)."""
    config = dict(config)
    if models is not None or attempts is not None:
        given = config["models"]
        count = models if models is not None else len(given)
        names = [m["name"] for m in given][:count] + [f"model-{i + 1}" for i in range(len(given), count)]
        config["models"] = [
            {"name": n, **({"attempts": list(range(1, attempts + 1))} if attempts else {})} for n in names
        ]
        if attempts is None:
            first = dict(given[0]).get("attempts")
            if first is not None:
                config["models"] = [{"name": n, "attempts": first} for n in names]
    plan = Plan(config, root)
    timings = timings or Timings()
    threads = int(plan.run["threads"])
    jobs: list[Job] = []
    tracks = plan.suite.tracks
    for model, model_attempts in plan.models.items():
        for attempt in model_attempts:
            if not plan.online:  # online: judged records are ingested, no candidate runs
                for task in tracks[Track.SOLVER]:
                    names = plan.instances(task)
                    work, source = timings.work(task, names, plan.task(task).limits.wall_s)
                    jobs.append(Job(JobKind.SOLVER, model, task, attempt, len(names), work, threads, source))
            for item in tracks[Track.CONSTRUCTION]:
                construction = plan.task(item)
                names = [i.name for i in construction.instances]
                work, source = timings.work(item, names, construction.limits.wall_s)
                jobs.append(Job(JobKind.CONSTRUCTION, model, item, attempt, len(names), work, 1, source))
            for track in BINARY_TRACKS:
                for item in tracks[track]:
                    work, source = timings.work(item, [""], plan.proof_task(item).limits.wall_s)
                    jobs.append(Job(JobKind.PROOF, model, item, attempt, 1, work, 1, source))
    return jobs


# ---- the estimate -------------------------------------------------------------------------------


def schedule(jobs: list[Job], cluster: Cluster, overheads: Overheads) -> float:
    """Seconds from the first submission to the last job's end: longest first (the workflow's
    priority), each job on the node whose `threads` cores free earliest, starting the queue's
    delay after they do, at most `max_jobs` at once."""
    return max((finish for _, finish, _ in placed(jobs, cluster, overheads)), default=0.0)


def placed(jobs: list[Job], cluster: Cluster, overheads: Overheads) -> list[tuple[float, float, Job]]:
    """(start, finish, job) of each job as `schedule` places them."""
    out = []
    free = [[0.0] * cluster.cores_per_node for _ in range(cluster.nodes)]
    tokens = [0.0] * (cluster.max_jobs or len(jobs) or 1)  # when each submission slot frees
    heapq.heapify(tokens)
    for job in sorted(jobs, key=lambda j: j.length_s(overheads), reverse=True):
        need = min(job.threads, cluster.cores_per_node)
        token = heapq.heappop(tokens)
        best, best_at = 0, math.inf
        for n, cores in enumerate(free):
            cores.sort()
            at = cores[need - 1]
            if at < best_at:
                best, best_at = n, at
        start = max(best_at, token) + cluster.queue_s
        finish = start + job.length_s(overheads)
        cores = free[best]
        for k in range(need):
            cores[k] = finish
        heapq.heappush(tokens, finish)
        out.append((start, finish, job))
    return out


def take_tail(jobs: list[Job], cluster: Cluster, overheads: Overheads) -> float:
    """Batched mode: seconds the submitting host still spends after the last cluster job on the
    batches' take and row jobs (each batch's `take_s` per member, queued on the host as the
    batches end)."""
    busy_until, end = 0.0, 0.0
    for _, finish, j in sorted(placed(jobs, cluster, overheads), key=lambda r: r[1]):
        end = max(end, finish)
        if j.members:
            busy_until = max(busy_until, finish) + j.members * overheads.take_s
    return max(0.0, busy_until - end)


def estimate(jobs: list[Job], cluster: Cluster, overheads: Overheads) -> Estimate:
    cores = cluster.nodes * cluster.cores_per_node
    held = sum(j.length_s(overheads) * min(j.threads, cluster.cores_per_node) for j in jobs)
    work = sum(j.work_s for j in jobs)
    span = schedule(jobs, cluster, overheads)
    # the tail: the local jobs after the last cluster job, and in batched mode what is left of
    # the batches' take and row jobs (all of a batch's members at once, when it ends)
    tail = overheads.tail_s + take_tail(jobs, cluster, overheads) if jobs else 0.0
    kinds: dict[str, int] = defaultdict(int)
    sources: dict[str, int] = defaultdict(int)
    for j in jobs:
        kinds["batch" if j.members else j.kind] += 1
        sources[j.source] += 1
    notes = []
    if sources.get(TimingSource.LIMIT):
        notes.append(
            f"{sources[TimingSource.LIMIT]} job(s) timed at their task's wall limit (no measured timings "
            "for them: an upper bound; pass --timings with an earlier run's results)"
        )
    batches = [j for j in jobs if j.members]
    if batches:
        longest = max(j.length_s(overheads) for j in batches)
        notes.append(
            f"batched (config batch): {sum(j.members for j in batches)} job(s) in {len(batches)} batch job(s), "
            f"the longest {_duration(longest)}"
        )
    too_wide = {j.threads for j in jobs if j.threads > cluster.cores_per_node}
    if too_wide:
        notes.append(
            f"jobs of {max(too_wide)} threads on nodes of {cluster.cores_per_node} cores: counted at the node's cores"
        )
    return Estimate(
        submissions=len(jobs),
        core_hours=held / 3600,
        ideal_core_hours=work / 3600,
        wall_s=overheads.startup_s + span + tail,
        schedule_s=span,
        cores=cores,
        jobs_by_kind=dict(kinds),
        sources=dict(sources),
        cluster=asdict(cluster),
        overheads=asdict(overheads),
        ideal_wall_s=work / cores,
        notes=notes,
    )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def render(est: Estimate, what: str) -> str:
    c, o = est.cluster, est.overheads
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(est.jobs_by_kind.items()))
    lines = [
        f"campaign: {what}",
        f"cluster: {c['nodes']} node(s) x {c['cores_per_node']} core(s) = {est.cores} cores; "
        f"queue {c['queue_s']:g} s per submission"
        + (f"; at most {c['max_jobs']} jobs at once" if c["max_jobs"] else ""),
        f"submissions: {est.submissions} ({kinds or 'none'})",
        f"core-hours: {est.core_hours:.2f} held ({est.ideal_core_hours:.2f} of work; "
        f"{o['job_s']:g} s overhead per job, {o['ray_s']:g} s more per Solver job)",
        f"wall time: {_duration(est.wall_s)} ({est.wall_s:.0f} s: start {o['startup_s']:g} s + jobs "
        f"{est.schedule_s:.0f} s + tail {est.wall_s - o['startup_s'] - est.schedule_s:.0f} s; the work alone on {est.cores} cores: "
        f"{_duration(est.ideal_wall_s)})",
        "timings: " + ", ".join(f"{n} job(s) {s}" for s, n in sorted(est.sources.items())),
    ]
    lines += [f"note: {n}" for n in est.notes]
    return "\n".join(lines)
