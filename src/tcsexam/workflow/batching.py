"""Few, long cluster jobs: the workflow's batches (config `batch`; docs/workflow.md, SLURM).

Without batching every Solver run, construction run and proof check is one cluster job (rules
`run`, `construction_run`, `proof_check`): on a cluster most of them are a minute or two long, and
each pays the job's start, Snakemake inside it and its own Ray. With batching on the plan
packs these jobs into batches whose expected length is about `batch.target_min` (from measured
timings, `batch.timings`, else the tasks' wall limits), longest first; one batch is one cluster
job (rule `run_batch`: `tcsexam batch run`), which runs each member with exactly the command its
own rule would run, under one Ray for the batch, its output and log written beside their final
paths as `<name>.staged` (everything else the command writes, records, certificates, heartbeat,
lands where it always does). A local job per member (rules
`run_take`, `construction_take`, `proof_take`: `tcsexam batch take`) then moves them into place,
or fails with the member's own reason: a member that failed fails alone, and what finished is
kept. Snakemake's group jobs would not do this under the SLURM executor plugin: its jobstep
executor runs a group's members one after another (docs/workflow.md).

A batch's name is its position and a hash of its members' keys: the Snakemake inside a cluster job
plans the batches again and must find the same members under that name (a changed plan is an
error, never a different batch).

Whether a run is batched (`batch.enabled`: `auto`, the default, `true` or `false`) is decided once,
when the workflow's Snakefile is read (`decide`, from tcsexam.workflow.startup.prepare): `auto` is
on where Snakemake submits the jobs to a cluster (its executor is not the local one: the SLURM
profile's) and off for a local run. The Snakemake inside each job reads the Snakefile again, with
the same config but its own executor (SLURM's jobstep executor; another executor's jobs may run
under the local one), so the main process hands its decision down in the environment (`ENV`, which
the SLURM executor exports to its jobs and the Snakefile declares in `envvars:` for executors that
pass only declared variables): a job plans the very batches its main process planned.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol, TypeVar

from tcsexam.errors import InputError
from tcsexam.suites import Track
from tcsexam.workflow.timings import Timings

#: a batch member's output and log are written as <its own rule's output or log><STAGED> in the
#: member's own folder (where its records, certificates and heartbeat go too), and renamed by its take job
STAGED = ".staged"
#: the batches' own files: <out>/batches/<name>.json (the summary: each member's outcome) and .log
BATCHES = "batches"
#: a batch's command line (every member's command) must stay under Linux's 128 KiB for one argument
#: (Snakemake runs it as `bash -c COMMAND`)
MAX_COMMAND_BYTES = 120_000
#: a path no rule makes: the input of a take rule for a job in no batch (Snakemake then uses its own rule)
UNBATCHED = "batches/not-in-a-batch"
#: config batch.enabled's default: batched where the jobs go to a cluster, unbatched for a local run
AUTO = "auto"
#: the main process's decision on `auto` ("1" batched, "0" not), for the Snakemake inside each job
ENV = "TCSEXAM_BATCHED"


def decide(
    enabled: bool | str,
    *,
    local_exec: bool | Callable[[], bool],
    main_process: bool = True,
    environ: Mapping[str, str] | None = None,
) -> bool:
    """Whether this workflow run is batched, from config `batch.enabled`: `true`/`false` as given;
    `auto`: in the main process, when the jobs do not run locally (`local_exec`, asked only then:
    False for a cluster executor); in a job's own Snakemake, what its main process decided (`ENV`),
    else (a job started without that environment) what its own executor is."""
    if isinstance(enabled, bool):
        return enabled
    if enabled != AUTO:
        raise InputError(f"config batch.enabled: {enabled!r} is not one of auto, true, false")
    env = os.environ if environ is None else environ
    handed = env.get(ENV, "")
    if not main_process and handed in ("0", "1"):
        return handed == "1"
    return not (local_exec() if callable(local_exec) else local_exec)


def hand_down(batched: bool, environ: dict[str, str] | None = None) -> None:
    """Put the main process's decision where its jobs' Snakemake finds it (`decide`)."""
    (os.environ if environ is None else environ)[ENV] = "1" if batched else "0"


class JobKind(StrEnum):
    """The workflow's jobs that go to the cluster (the others are localrules); also the results
    tree's folder of each (<out>/<kind>/<model>/<item>/<attempt>/)."""

    SOLVER = "solver"  # rule run: one (model, Solver task, attempt), all its instances
    CONSTRUCTION = "construction"  # rule construction_run
    PROOF = "proof"  # rule proof_check


#: each kind's declared output and log, as named in its own rule
OUTPUT = {JobKind.SOLVER: "records.json", JobKind.CONSTRUCTION: "records.json", JobKind.PROOF: "verdict.json"}
LOG = {JobKind.SOLVER: "run.log", JobKind.CONSTRUCTION: "run.log", JobKind.PROOF: "check.log"}


@dataclass(frozen=True)
class Member:
    kind: JobKind
    model: str
    item: str
    attempt: str
    threads: int
    work_s: float  #: expected CPU-seconds of its instances (timings, else wall limits)
    runtime_min: int  #: what its own rule asks the cluster for
    mem_mb: int

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.model}/{self.item}/{self.attempt}"


@dataclass(frozen=True)
class Batch:
    name: str
    members: tuple[Member, ...]
    threads: int
    expected_s: float  #: expected wall seconds of the batch on its threads

    @property
    def runtime_min(self) -> int:
        """The members' own runtimes (their upper bounds), one-thread members sharing the threads."""
        cpu_min = sum(m.runtime_min * min(m.threads, self.threads) for m in self.members)
        return max(5, math.ceil(cpu_min / self.threads))

    @property
    def mem_mb(self) -> int:
        """The most the members running at once may need: a wide member alone, or threads'
        worth of one-thread members."""
        return max(m.mem_mb * max(1, self.threads // max(1, m.threads)) for m in self.members)


class Keyed(Protocol):
    @property
    def key(self) -> str: ...


K = TypeVar("K", bound=Keyed)


def pack(
    members: list[K], cost: dict[str, float], *, threads: int, target_s: float, min_batches: int, max_members: int
) -> list[list[K]]:
    """Members into batches of about `target_s` seconds on `threads` cores each: as many batches as
    the total cost needs (at least `min_batches`, at most one per member), each member (longest
    first) into the batch with the least cost so far that has room (`max_members`)."""
    if not members:
        return []
    total = sum(cost[m.key] for m in members)
    count = max(min_batches, math.ceil(total / (target_s * threads)), math.ceil(len(members) / max_members))
    count = min(count, len(members))
    heap = [(0.0, i) for i in range(count)]
    bins: list[list[K]] = [[] for _ in range(count)]
    for m in sorted(members, key=lambda m: (-cost[m.key], m.key)):
        full = []
        while True:
            load, i = heapq.heappop(heap)
            if len(bins[i]) < max_members:
                break
            full.append((load, i))
        bins[i].append(m)
        heapq.heappush(heap, (load + cost[m.key], i))
        for entry in full:
            heapq.heappush(heap, entry)
    return [b for b in bins if b]


class Batches:
    """The batches of a plan (`tcsexam.workflow.plan.Plan`) under its config's `batch` settings.
    `enabled: auto` is decided when the workflow starts (`decide`, which sets the plan's own
    config to the outcome); a plan made elsewhere with `auto` left in it is unbatched (a local run)."""

    def __init__(self, plan: Any, settings: dict[str, Any] | None = None):
        self.plan = plan
        s = dict(settings if settings is not None else plan.config.get("batch") or {})
        self.enabled = s.get("enabled", AUTO) is True and not plan.online  # online: no candidate runs
        self.target_s = float(s.get("target_min", 30)) * 60
        self.min_batches = int(s.get("min_batches", 1))
        self.max_members = int(s.get("max_members", 100))
        self.member_overhead_s = float(s.get("member_overhead_s", 5))
        self.kinds = [JobKind(k) for k in s.get("kinds", list(JobKind))]
        self.timing_dirs = [str(d) for d in s.get("timings", [])]
        self.threads = int(plan.run["threads"])
        self.out = plan.out
        own = (plan.root / plan.out).resolve()
        for d in self.timing_dirs:
            path = (plan.root / d).resolve()
            if path == own or own in path.parents or path in own.parents:
                raise InputError(
                    f"config batch.timings: {d} holds this run's own results ({plan.out}), which change while "
                    "it runs (and the batches with them): give an earlier run's results tree copied elsewhere, "
                    "or a reference build's"
                )

    # ---- the plan -------------------------------------------------------------------------------

    def members(self) -> list[Member]:
        """Every cluster job of the plan, of the batched kinds, except those of the tracks the
        agents generate in this run (what is planned for them changes once they have: they run
        under their own rules)."""
        plan, out = self.plan, []
        timings = Timings([plan.root / d for d in self.timing_dirs])
        agents = {(m, str(t)) for m in plan.models for t in Track if plan.generated_by_agents(m, t)}
        planned = [p for p in plan.planned if (p.model, str(p.track)) not in agents]
        if JobKind.SOLVER in self.kinds:
            for p in planned:
                if p.track == Track.SOLVER and p.row == str(plan.layout.solver_row(p.model, p.item, p.attempt)):
                    task = plan.task(p.item)
                    work, _ = timings.work(p.item, plan.instances(p.item), task.limits.wall_s)
                    out.append(
                        Member(
                            JobKind.SOLVER,
                            p.model,
                            p.item,
                            p.attempt,
                            self.threads,
                            work,
                            plan.runtime_min(p.item, self.threads),
                            plan.mem_mb(p.item, self.threads),
                        )
                    )
        if JobKind.CONSTRUCTION in self.kinds:
            for p in plan.construction_runs():
                if (p.model, str(p.track)) in agents:
                    continue
                task = plan.task(p.item)
                work, _ = timings.work(p.item, [i.name for i in task.instances], task.limits.wall_s)
                out.append(
                    Member(
                        JobKind.CONSTRUCTION,
                        p.model,
                        p.item,
                        p.attempt,
                        1,
                        work,
                        plan.construction_runtime_min(p.item),
                        plan.mem_mb(p.item, 1),
                    )
                )
        if JobKind.PROOF in self.kinds:
            for p in plan.proof_runs():
                if (p.model, str(p.track)) in agents:
                    continue
                work, _ = timings.work(p.item, [""], plan.proof_task(p.item).limits.wall_s)
                out.append(
                    Member(
                        JobKind.PROOF,
                        p.model,
                        p.item,
                        p.attempt,
                        1,
                        work,
                        plan.proof_runtime_min(p.item),
                        plan.proof_mem_mb(p.item),
                    )
                )
        return out

    def cost_s(self, m: Member) -> float:
        """A member's expected core-seconds in a batch: its work and its start on each of its threads."""
        return m.work_s + self.member_overhead_s * min(m.threads, self.threads)

    @property
    def batches(self) -> list[Batch]:
        if not hasattr(self, "_batches"):
            self._batches = self._plan() if self.enabled else []
        return self._batches

    def _plan(self) -> list[Batch]:
        members = self.members()
        cost = {m.key: self.cost_s(m) for m in members}
        bins = pack(
            members,
            cost,
            threads=self.threads,
            target_s=self.target_s,
            min_batches=self.min_batches,
            max_members=self.max_members,
        )
        bins.sort(key=lambda b: (-sum(cost[m.key] for m in b), b[0].key))
        out = []
        for i, b in enumerate(bins, 1):
            digest = hashlib.sha256("\n".join(m.key for m in b).encode()).hexdigest()[:10]
            out.append(Batch(f"b{i:03d}-{digest}", tuple(b), self.threads, sum(cost[m.key] for m in b) / self.threads))
        return out

    @property
    def by_name(self) -> dict[str, Batch]:
        return {b.name: b for b in self.batches}

    @property
    def of_member(self) -> dict[str, Batch]:
        if not hasattr(self, "_of_member"):
            self._of_member = {m.key: b for b in self.batches for m in b.members}
        return self._of_member

    def batch(self, name: str) -> Batch:
        try:
            return self.by_name[name]
        except KeyError:
            raise InputError(
                f"batch {name}: not among this plan's batches ({len(self.batches)}): the config, the "
                "candidates or batch.timings changed since the batch was planned; rerun the workflow"
            ) from None

    # ---- paths -----------------------------------------------------------------------------------

    def summary(self, name: str) -> str:
        return f"{self.out}/{BATCHES}/{name}.json"

    def final(self, kind: str, model: str, item: str, attempt: str) -> str:
        return f"{self.out}/{kind}/{model}/{item}/{attempt}"

    # ---- what the rules ask -----------------------------------------------------------------------

    @property
    def targets(self) -> list[str]:
        return [self.summary(b.name) for b in self.batches]

    def summary_of(self, kind: str, wildcards: Any) -> str:
        """The input of a take rule: its batch's summary, or a path no rule makes (no batch holds
        the job: Snakemake then runs it with its own rule)."""
        item = getattr(wildcards, "task", None) or wildcards.item
        batch = self.of_member.get(f"{kind}/{wildcards.model}/{item}/{wildcards.attempt}")
        return self.summary(batch.name) if batch else f"{self.out}/{UNBATCHED}"

    def inputs(self, wildcards: Any) -> list[str]:
        """Every member's own rule's inputs (candidates, task files, generated instances, statements)."""
        plan, files = self.plan, []
        for m in self.batch(wildcards.batch).members:
            w = _Wildcards(model=m.model, task=m.item, item=m.item, attempt=m.attempt)
            if m.kind == JobKind.SOLVER:
                files += plan.run_inputs(w)
            elif m.kind == JobKind.CONSTRUCTION:
                files += plan.construction_run_inputs(w)
            else:
                files += plan.proof_check_inputs(w)
        return list(dict.fromkeys(files))

    def priority(self, name: str) -> int:
        return int(self.batch(name).expected_s)

    def members_arg(self, wildcards: Any) -> str:
        """`--member JSON ...` for `tcsexam batch run`: each member's key, command, threads and its
        staged output and log."""
        args = []
        for m in self.batch(wildcards.batch).members:
            final = self.final(m.kind, m.model, m.item, m.attempt)
            spec = {
                "key": m.key,
                "argv": self.argv(m, f"{final}/{OUTPUT[m.kind]}{STAGED}"),
                "threads": min(m.threads, self.threads),
                "output": f"{final}/{OUTPUT[m.kind]}{STAGED}",
                "log": f"{final}/{LOG[m.kind]}{STAGED}",
                "ray": m.kind == JobKind.SOLVER,
            }
            args.append("--member " + shlex.quote(json.dumps(spec, separators=(",", ":"))))
        text = " ".join(args)
        if len(text) > MAX_COMMAND_BYTES:
            raise InputError(
                f"batch {wildcards.batch}: its command line would be {len(text)} bytes, over the "
                f"{MAX_COMMAND_BYTES} a shell command may have: lower batch.max_members (now {self.max_members})"
            )
        return text

    def argv(self, m: Member, output: str) -> list[str]:
        """The member's command: its own rule's (rules/solver.smk `run`, rules/construction.smk
        `construction_run`, rules/proof.smk `proof_check`), writing `output` (the Solver's
        `--ray-head`: the batch's)."""
        plan, run = self.plan, self.plan.run
        task_file, cand = plan.task_file(m.item), plan.candidate(m.model, m.item, m.attempt)
        trusted = ["--allow-unsandboxed"] if run.get("allow_unsandboxed") else []
        final = self.final(m.kind, m.model, m.item, m.attempt)
        if m.kind == JobKind.SOLVER:
            chosen = run["instances"].get(m.item)
            return [
                "tcsexam", "run", "--task", task_file, "--candidate", cand, "--attempt", m.attempt,
                "--output", output, "--records-dir", f"{final}/records", "--workers", str(self.threads),
                "--sandbox", str(run["sandbox"]), *trusted, "--limiter", str(run["limiter"]),
                "--seed", str(run["seed"]), "--keep", str(run["keep"]), "--keep-max-mb", str(run["keep_max_mb"]),
                "--max-retries", str(run["max_retries"]), "--no-progress",
                *(["--instances", *chosen] if chosen else []),
            ]  # fmt: skip
        if m.kind == JobKind.CONSTRUCTION:
            return [
                "tcsexam", "construction", "run", "--task", task_file, "--submission", cand,
                "--attempt", m.attempt, "--output", output, "--records-dir", f"{final}/records", "--no-ray",
                "--sandbox", str(run["sandbox"]), "--limiter", str(run["limiter"]), "--seed", str(run["seed"]),
                "--max-retries", str(run["max_retries"]), "--no-progress",
            ]  # fmt: skip
        return [
            "tcsexam", "proof", "check", "--task", task_file, "--submission", cand, "--model", m.model,
            "--attempt", m.attempt, "--output", output, "--sandbox", str(run["sandbox"]), *trusted,
            "--limiter", str(run["limiter"]),
        ]  # fmt: skip


class _Wildcards:
    def __init__(self, **values: str):
        self.__dict__.update(values)
