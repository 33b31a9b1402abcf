"""`tcsexam twins make`: a twin of every instance of a Solver task, by value-preserving
transformations (each problem module's `twin`), with the task's reference carried over exactly.

Output folder DIR:

    DIR/task.yaml        the twin task: the original's id, problem, kind, direction, limits and
                         metadata per instance; instance_dir DIR/instances; each file's sha256
    DIR/reference.json   the reference of the twin set: the same outcome lists under the twin
                         names, reference_id `<original id>-twin-s<seed>`, the same floors
    DIR/map.json         twin name -> original name and the problem's map (certificates on a twin
                         translate to the original with `Problem.translate_certificate`)
    DIR/instances/       the twin files, named `twin-<10 hex digits>` + the format's suffix

A twin's name is a hash of (task, seed, original name): it says nothing about the original (no
name, no size); instance k's twin does not depend on the other instances (its generator is seeded
from the seed and both names), so a subset of a task has the same twins. The folder is written
beside itself and renamed into place: a failure leaves no partial output.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, atomic_write_json, read_json, read_yaml
from tcsexam.paths import config_file, project_root
from tcsexam.scoring.reference import SCHEMA_VERSION as REFERENCE_SCHEMA_VERSION
from tcsexam.scoring.reference import load_reference
from tcsexam.tasks import load_task, verify_instance_files

#: the task keys copied into the twin task file (everything but instance_dir and instances)
_TASK_KEYS = ("id", "problem", "kind", "direction", "limits", "anytime")


def twin_name(task: str, seed: int, name: str) -> str:
    digest = hashlib.sha256(f"{task}\0{int(seed)}\0{name}".encode()).hexdigest()
    return f"twin-{digest[:10]}"


def twin_rng(task: str, seed: int, name: str) -> np.random.Generator:
    def code(text: str) -> int:
        return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)

    return np.random.default_rng([int(seed), code(task), code(name)])


def twin_reference_id(reference_id: str, seed: int) -> str:
    return f"{reference_id}-twin-s{int(seed)}"


def twin_reference(ref, task: str, names: dict[str, str], seed: int) -> JsonObject:
    """The one-task reference of the twin set: every outcome list of `task` (eligible and unscored)
    under its twin's name, unchanged; InputError for a reference instance the task lacks."""
    if task not in ref.tasks:
        raise InputError(
            f"{ref.source}: reference {ref.reference_id!r} has no task {task!r}: pass --reference with one that "
            "has it, or --reference none for twins without a reference"
        )
    rt = ref.task(task)
    for kind, table in (("eligible", rt.instances), ("unscored", rt.unscored)):
        missing = [n for n in table if n not in names]
        if missing:
            raise InputError(
                f"{ref.source}: {kind} reference instance {missing[0]!r} of task {task!r} is not an instance of the task"
            )
    out: JsonObject = {
        "schema_version": REFERENCE_SCHEMA_VERSION,
        "reference_id": twin_reference_id(ref.reference_id, seed),
        "description": f"twins (seed {int(seed)}) of task {task}: the outcomes of {ref.reference_id}, carried over",
        "scale_floors": dict(ref.scale_floors),
        "tasks": {task: rt.to_dict(dict(ref.scale_floors))},
        "unscored_reference_instances": {},
        "metadata": {"twin_of": ref.reference_id, "twin_seed": int(seed), "twin_task": task},
    }
    out["tasks"][task]["instances"] = {names[n]: list(v) for n, v in rt.instances.items()}
    if rt.unscored:
        out["unscored_reference_instances"][task] = {names[n]: list(v) for n, v in rt.unscored.items()}
    return out


def make_twins(task_spec: str | Path, seed: int, output: str | Path, reference: Any = "full") -> JsonObject:
    """Write DIR (module doc) for the task file `task_spec` and `seed`; returns a summary. `reference`
    is lite, full, a path, a loaded `Reference` or None (no reference.json)."""
    if int(seed) < 0:
        raise InputError(f"--seed must be a non-negative integer, not {seed}")
    task = load_task(task_spec)
    verify_instance_files(task)
    raw = read_yaml(config_file(task_spec, "tasks"), "task file")
    problem = task.problem_impl
    if not hasattr(problem, "make_twin"):
        raise InputError(f"{task.source}: problem {task.problem!r} has no twins (only the Solver problems do)")
    ref = load_reference(reference) if isinstance(reference, (str, Path)) and reference else reference or None
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{output.name}.", dir=output.parent))
    try:
        (work / "instances").mkdir()
        names: dict[str, str] = {}
        maps: JsonObject = {}
        rows = []
        for inst in task.instances:
            name = twin_name(task.id, seed, inst.name)
            if name in maps:  # 40 bits: never in practice, but a collision must not pass silently
                raise InputError(f"{task.source}: twin names of {inst.name!r} and {maps[name]['original']!r} collide")
            parsed = problem.parse_instance(inst.path)
            twin = problem.make_twin(parsed, twin_rng(task.id, seed, inst.name), name)
            data = twin.text.encode()
            original = inst.path.read_bytes()
            if data == original:  # a one-vertex graph, an empty formula: nothing to relabel, so the
                data += b"\n"  # bytes differ by a blank line, which every format's parser skips
            file = name + problem.instance_suffix
            (work / "instances" / file).write_bytes(data)
            names[inst.name] = name
            maps[name] = {"original": inst.name, "map": twin.mapping}
            rows.append({"name": name, "file": file, "sha256": hashlib.sha256(data).hexdigest(), **inst.meta})
        rows.sort(key=lambda r: r["name"])  # the task file's order says nothing about the original's
        final_instances = output.resolve() / "instances"
        root = project_root()
        try:
            instance_dir = str(final_instances.relative_to(root))
        except ValueError:
            instance_dir = str(final_instances)
        data = {k: raw[k] for k in _TASK_KEYS if k in raw}
        data["description"] = f"twins (seed {int(seed)}) of task {task.id}: value-preserving relabellings"
        data["instance_dir"] = instance_dir
        data["instances"] = rows
        header = f"# Twins of task {task.id}, seed {int(seed)}: written by `tcsexam twins make` (docs/twins.md).\n"
        (work / "task.yaml").write_text(header + yaml.safe_dump(data, sort_keys=False, width=120))
        summary: JsonObject = {"task": task.id, "seed": int(seed), "instances": len(rows), "output": str(output)}
        if ref is not None:
            twin_ref = twin_reference(ref, task.id, names, seed)
            atomic_write_json(work / "reference.json", twin_ref, durable=False)
            summary["reference_id"] = twin_ref["reference_id"]
        map_doc = {
            "task": task.id,
            "problem": task.problem,
            "seed": int(seed),
            "reference_id": summary.get("reference_id"),
            "original_task_file": str(task.source),
            "instances": maps,
        }
        atomic_write_json(work / "map.json", map_doc, durable=False)
        _replace_dir(work, output)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return summary


def _replace_dir(new: Path, target: Path) -> None:
    """Move the finished folder `new` to `target`, replacing an older one."""
    new.chmod(0o755)
    if target.exists() or target.is_symlink():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, old)
        os.replace(new, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(new, target)


def load_map(path: str | Path) -> JsonObject:
    data = read_json(path, "twin map")
    if not isinstance(data, dict) or not isinstance(data.get("instances"), dict):
        raise InputError(f"{path}: not a twin map (no 'instances' object)")
    return data
