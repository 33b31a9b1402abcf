"""What a Solver-track agent is given (`agents.track_items`): the task's statement (problem,
instance and certificate formats, the candidate contract, limits) and a development set.

The development set is `count` instances drawn by the problem's own generator
(`problems.generate.generate_text`) at sizes spread over the task's instance sizes (their
`generate.size` or `n`; 100 when the task says none), from seeds of their own (`DEV_SEED` + k,
never a seed of the task's generated instances), in the task's instance format. An instance
identical to an evaluation instance (same sha256) is refused. No evaluation instance, no
reference value (`best_known`) and no reference solution enters the workspace; the development
task (what the feedback tool runs) carries no reference values either.

The development reference: where the project has a reference solver for the task
(`solvers/reference/<task>/`, else `solvers/reference/<problem>/`), it runs once on the
development set through the same harness, sandbox and limits (`dev_reference`, its records kept
and reused in the run folder); the feedback tool then gives each value relative to it (the
candidate's over the reference's when maximizing, the reference's over the candidate's when
minimizing: above 1 is better than the reference).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, atomic_write_json, read_json, read_yaml
from tcsexam.paths import project_root
from tcsexam.problems import CONSTRUCTIONS
from tcsexam.problems.generate import generate_text, generated_name
from tcsexam.records import Status
from tcsexam.runner.engine.batch import RunOptions
from tcsexam.runner.solver.orchestrate import TaskJob, run_job
from tcsexam.tasks import Direction, Task, load_task

DEV_DIR = "dev"  #: the workspace folder of the development instances
DEV_SEED = 7_300_000  #: the development instances' seeds: DEV_SEED + k
DEFAULT_SIZE = 100  #: a development instance's size when the task gives none
#: the task file keys a development task keeps (no instances, no references, no sources)
DEV_TASK_KEYS = ("problem", "kind", "direction", "description", "limits", "anytime", "unsat_proof", "proof_limits")

CONTRACT = (
    "A candidate is a folder with solver.yaml:\n"
    '  command: ["python3", "solve.py", "{instance}", "{solution}"]   # placeholders: {instance} {solution} '
    "{time_limit} {seed} {threads} {workdir}\n"
    '  build: ["make"]   # optional, run once before the instances; its failure makes every instance invalid\n'
    "  threads: 1        # CPUs reserved for each run\n"
    "The instance file is read-only; the program writes its certificate to {solution} (it may rewrite it as it "
    "improves: what is there when it stops is judged). The time limit is also in TCSEXAM_TIME_LIMIT. It runs as "
    "an unprivileged user in a sandbox without network, and sees no reference values and no other candidate."
)


def _size(inst) -> int | None:
    raw = (inst.generate or {}).get("size") if inst.generate else inst.meta.get("n")
    return int(raw) if isinstance(raw, int | float) and raw > 0 else None


def dev_sizes(t: Task, count: int) -> list[int]:
    """`count` sizes spread over the task's instance sizes (smallest to largest)."""
    known = sorted({s for s in (_size(i) for i in t.instances) if s is not None})
    if not known:
        return [DEFAULT_SIZE] * count
    if count == 1:
        return [known[len(known) // 2]]
    return [known[round(k * (len(known) - 1) / (count - 1))] for k in range(count)]


def dev_instances(t: Task, count: int) -> dict[str, bytes]:
    """The development set of task `t`: file name -> bytes."""
    problem = t.problem_impl
    form = next(
        (str(i.generate["format"]) for i in t.instances if i.generate and i.generate.get("format")),
        problem.formats[0],
    )
    seeds = {int(i.generate["seed"]) for i in t.instances if i.generate and "seed" in i.generate}
    digests = {i.sha256 for i in t.instances if i.sha256}
    out: dict[str, bytes] = {}
    seed = DEV_SEED
    for size in dev_sizes(t, count):
        while seed in seeds:
            seed += 1
        data = generate_text(problem, size, seed, 1, form).encode()
        if hashlib.sha256(data).hexdigest() in digests:
            raise InputError(f"{t.source}: development instance (size {size}, seed {seed}) is an evaluation instance")
        out[generated_name(problem, size, seed, 1, form)] = data
        seed += 1
    return out


def dev_task(t: Task, files: dict[str, str]) -> JsonObject:
    """The development task (a task file's mapping without `instance_dir`): the task's problem,
    direction and limits over the development instances (`files`: name -> file), no references."""
    if t.source is None:  # a task loaded from its file (load_task) has one
        raise InputError(f"task {t.id}: no task file to take the development task from")
    data = read_yaml(t.source, "task file")
    task = {k: data[k] for k in DEV_TASK_KEYS if k in data}
    task["id"] = f"{t.id}-dev"
    task["instances"] = [{"name": name, "file": file} for name, file in files.items()]
    return task


def reference_candidate(t: Task) -> Path | None:
    """The project's reference solver of task `t` (`solvers/reference/<task or problem>/`), if any."""
    for name in (t.id, t.problem):
        folder = project_root() / "solvers" / "reference" / name
        if (folder / "solver.yaml").is_file():
            return folder
    return None


def reference_file(dev_task_file: Path) -> Path:
    """Where the development reference's values of a development task are kept."""
    return dev_task_file.with_suffix(".reference.json")


def dev_reference(dev_task_file: Path, candidate: Path, out: Path, run: RunOptions) -> JsonObject:
    """Run the reference solver `candidate` on the development task (records in `out`, reused by a
    rerun) and keep its values beside the task (`reference_file`); returns what is kept."""
    output = out / "records.json"
    run_job(TaskJob(task=dev_task_file, candidate_dir=candidate, output=output, attempt="dev-reference"), run)
    values = {
        str(r["instance"]): float(r["A"])
        for r in read_json(output, "development reference records")
        if r.get("status") == Status.OK and isinstance(r.get("A"), int | float) and not isinstance(r.get("A"), bool)
    }
    kept = {"candidate": str(candidate), "values": values}
    atomic_write_json(reference_file(dev_task_file), kept)
    return kept


def relative_score(direction: str, value: Json, reference: Json) -> float | None:
    """The value against the development reference's (above 1: better), None where undefined."""
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in (value, reference)):
        return None
    if direction == Direction.MAXIMIZE:
        return value / reference if reference > 0 else None  # the Solver reward's ratio (negative cuts too)
    return reference / value if value > 0 and reference >= 0 else None


def solver_material(task_file: Path, *, count: int, tools: str) -> tuple[Task, dict[str, bytes], str]:
    """(the task, its development set under `dev/`, the prompt) of a Solver item."""
    t = load_task(task_file)
    if t.problem in CONSTRUCTIONS:
        raise InputError(f"{task_file}: task {t.id} is a construction task, not a Solver task")
    problem = t.problem_impl
    files = {f"{DEV_DIR}/{name}": data for name, data in dev_instances(t, count).items()}
    if t.source is None:  # load_task sets it
        raise InputError(f"{task_file}: task {t.id} has no source file")
    data = read_yaml(t.source, "task file")
    fmt = (sys.modules[type(problem).__module__].__doc__ or "").strip()
    limits = ", ".join(f"{k} {v:g}" for k, v in t.limits.task_dict().items() if isinstance(v, int | float))
    sizes = sorted({s for s in (_size(i) for i in t.instances) if s is not None})
    scale = "" if not sizes else f" (size {sizes[0]})" if len(sizes) == 1 else f" (sizes {sizes[0]} to {sizes[-1]})"
    prompt = "\n\n".join(
        [
            f"You are writing a solver: task {t.id} ({data.get('description') or t.problem}).",
            f"Problem {t.problem} ({t.direction} the value). {fmt}",
            f"Your candidate is judged on the task's {len(t.instances)} evaluation instances{scale}, which you do not "
            f"see. {DEV_DIR}/ holds {len(files)} development instances of the same problem, drawn by the problem's "
            f"generator: {', '.join(sorted(files))}.",
            CONTRACT,
            f"Limits of every run: {limits}.",
            tools,
        ]
    )
    return t, files, prompt
