"""Solver-track task definitions: `config/tasks/<task>.yaml`.

```yaml
id: maxcut-mqlib
problem: maxcut            # a module in tcsexam.problems
kind: objective            # objective | solve
direction: maximize        # maximize | minimize
limits: {wall_s: 5, cpu_s: 10, mem_mb: 1024, output_mb: 64, nproc: 64}
anytime: false             # optional: trace every certificate written during the run
instance_dir: references/instances/maxcut-mqlib   # relative to the project root
instances:
  - {name: G1, file: G1.txt, best_known: 11624}   # any other keys are metadata for the checker
```

An instance's `file` is a path inside `instance_dir` (sub-folders allowed): one that leads out of
it (`../../etc/passwd`, an absolute path) is refused naming the task file and instance, unless the
task file says `instances_outside_dir: true`. The check is on the path as written (symbolic links
inside `instance_dir`, e.g. to a shared corpus, are the task author's and are followed).

An instance may record its file's `sha256` (64 hex digits); a generated instance must, and also
records how `tcsexam generate` makes it: `generate: {size: 200, seed: 7001}` (optional `index`,
default 1, and `format` for maxsat), its `file` being the generator's name for it
(`sat-n200-s7001-1.cnf`). `verify_instance_files` checks every recorded sha256 before a run, so
every user runs the same bytes; `tcsexam generate --task <id>` writes the generated files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, read_yaml
from tcsexam.limits import DEFAULT_UNSAT_PROOF, TASK_DEFAULTS, Limits, MiB, ProofLimits, UnsatProof
from tcsexam.paths import config_file, project_root
from tcsexam.problems import get_problem
from tcsexam.problems.base import Direction, Kind
from tcsexam.problems.generate import generated_name
from tcsexam.records.digest import hash_file
from tcsexam.schemas import check
from tcsexam.suites import BINARY_TRACKS

KINDS = tuple(k.value for k in Kind)
DIRECTIONS = tuple(d.value for d in Direction)


@dataclass(frozen=True)
class TaskInstance:
    name: str
    path: Path
    meta: JsonObject = field(default_factory=dict, hash=False, compare=False)
    sha256: str | None = field(default=None, compare=False)  #: recorded digest of the file
    generate: JsonObject | None = field(default=None, hash=False, compare=False)  #: size, seed, index, format


@dataclass(frozen=True)
class Task:
    id: str
    problem: str
    kind: str
    direction: str
    limits: Limits  #: as the task file says them (`Limits.for_threads` gives a candidate's)
    instances: tuple[TaskInstance, ...]
    source: Path | None = None
    anytime: bool = False  #: certificates written during the run are traced (tcsexam.runner.solver.anytime)
    #: SAT tasks: what an UNSAT answer needs, `required` (a verified DRAT proof) or `trusted`; None elsewhere
    unsat_proof: UnsatProof | None = None
    proof_limits: ProofLimits | None = None  #: the DRAT checker's limits, SAT tasks only

    @cached_property
    def problem_impl(self):
        return get_problem(self.problem)

    @property
    def generated(self) -> list[TaskInstance]:
        """The instances `tcsexam generate --task` writes (those with a `generate` entry)."""
        return [inst for inst in self.instances if inst.generate is not None]

    def instance(self, name: str) -> TaskInstance:
        for inst in self.instances:
            if inst.name == name:
                return inst
        raise InputError(f"task {self.id}: no instance named {name!r}")


#: limits counted in whole units (the schema checks each is a finite positive number, whole here)
_WHOLE_LIMITS = ("mem_mb", "output_mb", "nproc", "disk_mb")


def parse_limits(raw: JsonObject) -> Limits:
    """A task's `limits:` mapping, already checked by the task schema (`tcsexam/schemas`): `wall_s`,
    `cpu_s` (None: wall_s per thread), `mem_mb`, `output_mb`, `nproc` (defaults `TASK_DEFAULTS`),
    `disk_mb` (None: the runner's default)."""
    given = {**TASK_DEFAULTS, **{k: int(v) if k in _WHOLE_LIMITS else v for k, v in raw.items()}}
    return Limits(
        wall_s=given["wall_s"],
        cpu_s=given.get("cpu_s"),
        mem_mb=given["mem_mb"],
        output_bytes=given["output_mb"] * MiB,
        nproc=given["nproc"],
        disk_mb=given.get("disk_mb"),
    )


def load_task(task: str | Path) -> Task:
    """Read a task file, checked against the task schema (one line naming the file and field),
    then for what a schema cannot say: unique instance names, generated files' names."""
    path = config_file(task, "tasks")
    data = read_yaml(path, "task file")
    check(data, "task", path)
    if data.get("track") in BINARY_TRACKS:
        raise InputError(
            f"{path}: task {data['id']!r} is a proof task (tcsexam proof check, docs/proofs.md), not a Solver task"
        )
    problem = data["problem"]
    base = project_root() / data["instance_dir"]
    outside_ok = data.get("instances_outside_dir", False) is True
    instances = []
    seen = set()
    for row in data["instances"]:
        name = str(row["name"])
        if name in seen:
            raise InputError(f"{path}: duplicate instance {name!r}")
        seen.add(name)
        meta = {k: v for k, v in row.items() if k not in _INSTANCE_KEYS}
        gen = row.get("generate")
        if gen is not None:
            gen = _generate_spec(gen, problem, str(row["file"]), f"{path}: instance {name!r}")
        file = base / str(row["file"])
        if not outside_ok and not _inside(file, base):
            raise InputError(
                f"{path}: instance {name!r}: file {row['file']!r} is outside instance_dir {data['instance_dir']!r} "
                "(say instances_outside_dir: true in the task file if that is meant)"
            )
        instances.append(TaskInstance(name, file, meta, row.get("sha256"), gen))
    limits = parse_limits(data["limits"])
    anytime = bool(data.get("anytime", False))
    unsat_proof, proof_limits = _unsat_proof(data, problem, path)
    return Task(
        data["id"],
        problem,
        data["kind"],
        data["direction"],
        limits,
        tuple(instances),
        path,
        anytime,
        unsat_proof,
        proof_limits,
    )


#: the problems whose UNSAT answers a DRAT proof backs (`unsat_proof`, docs/proofs.md#unsat-answers-drat-proofs)
UNSAT_PROOF_PROBLEMS = ("sat",)


def _unsat_proof(data: JsonObject, problem: str, path: Path) -> tuple[UnsatProof | None, ProofLimits | None]:
    """(unsat_proof, proof_limits) of a task: `required` (default) or `trusted` for a SAT task and
    its checker's limits; (None, None) for other problems, where either key is refused."""
    if problem not in UNSAT_PROOF_PROBLEMS:
        for key in ("unsat_proof", "proof_limits"):
            if key in data:
                raise InputError(f"{path}: {key!r} applies to SAT tasks only (problem {problem!r})")
        return None, None
    given = data.get("proof_limits") or {}
    default = ProofLimits()  # the schema has refused any other key
    limits = ProofLimits(
        wall_s=float(given.get("wall_s", default.wall_s)),
        mem_mb=int(given.get("mem_mb", default.mem_mb)),
        proof_mb=int(given.get("proof_mb", default.proof_mb)),
    )
    return UnsatProof(data.get("unsat_proof", DEFAULT_UNSAT_PROOF)), limits


_INSTANCE_KEYS = ("name", "file", "sha256", "generate")


def _inside(file: Path, base: Path) -> bool:
    """Whether `file`, as written (`..` resolved, links not followed), lies inside `base`."""
    return os.path.normpath(file).startswith(os.path.normpath(base).rstrip(os.sep) + os.sep)


def _generate_spec(raw: JsonObject, problem: str, file: str, where: str) -> JsonObject:
    """The generator's arguments of a generated instance; its file must carry the generator's name."""
    spec = {"size": raw["size"], "seed": raw["seed"], "index": raw.get("index", 1), "format": raw.get("format", "new")}
    impl = get_problem(problem)
    if spec["format"] not in impl.formats:
        raise InputError(f"{where}: generate.format {spec['format']!r} is no format of {impl.name} ({impl.formats})")
    expected = generated_name(impl, spec["size"], spec["seed"], spec["index"], spec["format"])
    if file != expected:
        raise InputError(f"{where}: file {file!r} is not the generator's name {expected!r}")
    return spec


def verify_instance_files(task: Task, instances: Iterable[TaskInstance] | None = None) -> None:
    """Refuse, naming the task and instance, a missing file or one whose sha256 differs from the
    recorded digest (instances without a recorded digest are only checked to exist)."""
    for inst in task.instances if instances is None else instances:
        where = f"{task.source}: instance {inst.name!r}"
        if not inst.path.is_file():
            hint = f" (generate it: tcsexam generate --task {task.id})" if inst.generate is not None else ""
            raise InputError(f"{where}: file {inst.path} is missing{hint}")
        if inst.sha256 is not None:
            digest = hash_file(inst.path)
            if digest != inst.sha256:
                raise InputError(f"{where}: {inst.path} has sha256 {digest}, the task records {inst.sha256}")
