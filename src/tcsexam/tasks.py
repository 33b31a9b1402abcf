"""Solver-track task definitions: `config/tasks/<task>.yaml`.

```yaml
id: maxcut-mqlib
problem: maxcut            # a module in tcsexam.problems
kind: objective            # objective | solve
direction: maximize        # maximize | minimize
limits: {wall_s: 5, cpu_s: 10, mem_mb: 1024, output_mb: 64, nproc: 64}
instance_dir: references/instances/maxcut-mqlib   # relative to the project root
instances:
  - {name: G1, file: G1.txt, best_known: 11624}   # any other keys are metadata for the checker
```

An instance may record its file's `sha256` (64 hex digits); a generated instance must, and also
records how `tcsexam generate` makes it: `generate: {size: 200, seed: 7001}` (optional `index`,
default 1, and `format` for maxsat), its `file` being the generator's name for it
(`sat-n200-s7001-1.cnf`). `verify_instance_files` checks every recorded sha256 before a run, so
every user runs the same bytes; `tcsexam generate --task <id>` writes the generated files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from tcsexam.errors import InputError
from tcsexam.fileio import read_yaml
from tcsexam.paths import config_dir, project_root

KINDS = ("objective", "solve")
DIRECTIONS = ("maximize", "minimize")


@dataclass(frozen=True)
class TaskLimits:
    """The fixed per-instance limits of a task (the same for every candidate)."""

    wall_s: float
    cpu_s: float | None = None  #: CPU seconds, children included; None: wall_s * threads
    mem_mb: int = 2048
    output_mb: int = 64  #: cap on stdout, stderr and the certificate file, each
    nproc: int = 256  #: processes/threads the candidate's tree may hold at once

    def as_dict(self) -> dict[str, Any]:
        return {
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s,
            "mem_mb": self.mem_mb,
            "output_mb": self.output_mb,
            "nproc": self.nproc,
        }


@dataclass(frozen=True)
class TaskInstance:
    name: str
    path: Path
    meta: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    sha256: str | None = field(default=None, compare=False)  #: recorded digest of the file
    generate: dict[str, Any] | None = field(default=None, hash=False, compare=False)  #: size, seed, index, format


@dataclass(frozen=True)
class Task:
    id: str
    problem: str
    kind: str
    direction: str
    limits: TaskLimits
    instances: tuple[TaskInstance, ...]
    source: Path | None = None

    @cached_property
    def problem_impl(self):
        from tcsexam.problems import get_problem

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


#: limit -> (what it counts, whether it must be a whole number); every limit is finite and positive.
_LIMIT_FIELDS = {
    "wall_s": ("wall-clock seconds", False),
    "cpu_s": ("CPU seconds", False),
    "mem_mb": ("megabytes", True),
    "output_mb": ("megabytes", True),
    "nproc": ("processes", True),
}


def parse_limits(raw: dict[str, Any], path: Path | str) -> TaskLimits:
    """A task's `limits:` mapping, checked: each a finite positive number (whole where it counts
    megabytes or processes); `cpu_s` may be null. Every error names the file and the limit."""
    unknown = [k for k in raw if k not in _LIMIT_FIELDS]
    if unknown:
        raise InputError(
            f"{path}: limits: unknown limit(s) {', '.join(map(str, unknown))} (known: {', '.join(_LIMIT_FIELDS)})"
        )
    if "wall_s" not in raw:
        raise InputError(f"{path}: limits: wall_s is required")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        what, whole = _LIMIT_FIELDS[key]
        if value is None and key == "cpu_s":
            values[key] = None
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{path}: limits.{key} must be a number of {what}, not {value!r}")
        if not math.isfinite(value) or value <= 0:
            raise InputError(f"{path}: limits.{key} must be a finite positive number of {what}, not {value!r}")
        if whole:
            if value != int(value):
                raise InputError(f"{path}: limits.{key} must be a whole number of {what}, not {value!r}")
            value = int(value)
        values[key] = value
    return TaskLimits(**values)


def task_path(task: str | Path) -> Path:
    """A task id resolves to config/tasks/<id>.yaml; anything with a suffix is a path."""
    p = Path(task)
    if p.suffix in (".yaml", ".yml"):
        return p
    return config_dir() / "tasks" / f"{task}.yaml"


def load_task(task: str | Path) -> Task:
    path = task_path(task)
    data = read_yaml(path, "task file")
    if not isinstance(data, dict):
        raise InputError(f"{path}: task file must be a mapping")

    def need(key: str, kind: type | tuple[type, ...]):
        if key not in data:
            raise InputError(f"{path}: missing key {key!r}")
        if not isinstance(data[key], kind):
            raise InputError(f"{path}: {key!r} has the wrong type")
        return data[key]

    task_id = need("id", str)
    problem = need("problem", str)
    kind = need("kind", str)
    direction = need("direction", str)
    if kind not in KINDS:
        raise InputError(f"{path}: kind must be one of {KINDS}, not {kind!r}")
    if direction not in DIRECTIONS:
        raise InputError(f"{path}: direction must be one of {DIRECTIONS}, not {direction!r}")
    limits = parse_limits(need("limits", dict), path)
    base = project_root() / need("instance_dir", str)
    instances = []
    seen = set()
    for i, row in enumerate(need("instances", list)):
        if not isinstance(row, dict) or "name" not in row or "file" not in row:
            raise InputError(f"{path}: instances[{i}] needs 'name' and 'file'")
        name = str(row["name"])
        if name in seen:
            raise InputError(f"{path}: duplicate instance {name!r}")
        seen.add(name)
        meta = {k: v for k, v in row.items() if k not in _INSTANCE_KEYS}
        where = f"{path}: instance {name!r}"
        digest = row.get("sha256")
        if digest is not None and (not isinstance(digest, str) or not _SHA256.fullmatch(digest)):
            raise InputError(f"{where}: sha256 must be 64 lowercase hex digits")
        gen = row.get("generate")
        if gen is not None:
            gen = _generate_spec(gen, problem, str(row["file"]), digest, where)
        instances.append(TaskInstance(name, base / str(row["file"]), meta, digest, gen))
    return Task(task_id, problem, kind, direction, limits, tuple(instances), path)


_INSTANCE_KEYS = ("name", "file", "sha256", "generate")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _generate_spec(raw: Any, problem: str, file: str, digest: str | None, where: str) -> dict[str, Any]:
    from tcsexam.problems import get_problem
    from tcsexam.problems.generate import FORMATS, generated_name

    if not isinstance(raw, dict):
        raise InputError(f"{where}: generate must be a mapping with size and seed")
    unknown = set(raw) - {"size", "seed", "index", "format"}
    if unknown:
        raise InputError(f"{where}: generate has unknown key {sorted(unknown)[0]!r}")
    spec = {"size": raw.get("size"), "seed": raw.get("seed"), "index": raw.get("index", 1)}
    for key, low in (("size", 1), ("seed", 0), ("index", 1)):
        if type(spec[key]) is not int or spec[key] < low:
            raise InputError(f"{where}: generate.{key} must be an integer >= {low}")
    spec["format"] = raw.get("format", "new")
    if spec["format"] not in FORMATS:
        raise InputError(f"{where}: generate.format must be one of {', '.join(FORMATS)}")
    if digest is None:
        raise InputError(f"{where}: a generated instance must record its sha256")
    impl = get_problem(problem)
    if spec["format"] != "new" and impl.name != "maxsat":
        raise InputError(f"{where}: generate.format applies to maxsat only")
    expected = generated_name(impl, spec["size"], spec["seed"], spec["index"], spec["format"])
    if file != expected:
        raise InputError(f"{where}: file {file!r} is not the generator's name {expected!r}")
    return spec


def verify_instance_files(task: Task, instances: Iterable[TaskInstance] | None = None) -> None:
    """Refuse, naming the task and instance, a missing file or one whose sha256 differs from the
    recorded digest (instances without a recorded digest are only checked to exist)."""
    from tcsexam.problems.generate import sha256_file

    for inst in task.instances if instances is None else instances:
        where = f"{task.source}: instance {inst.name!r}"
        if not inst.path.is_file():
            hint = f" (generate it: tcsexam generate --task {task.id})" if inst.generate is not None else ""
            raise InputError(f"{where}: file {inst.path} is missing{hint}")
        if inst.sha256 is not None:
            digest = sha256_file(inst.path)
            if digest != inst.sha256:
                raise InputError(f"{where}: {inst.path} has sha256 {digest}, the task records {inst.sha256}")
