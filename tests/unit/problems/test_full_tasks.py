"""The Full suite's Solver tasks: task files validate (hashes, limits, unique names across tasks),
generated instances are reproduced byte for byte by `tcsexam generate`, and a file that differs
from its recorded sha256 is refused before anything runs."""

from __future__ import annotations

import hashlib
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tcsexam.cli import main
from tcsexam.problems.generate import generated_name
from tcsexam.records.digest import hash_file
from tcsexam.suites import load_suite
from tcsexam.tasks import load_task, verify_instance_files

FULL = load_suite("full").tracks["solver"]
GENERATED = [t for t in FULL if load_task(t).generated]


def test_full_holds_the_paper_scale_number_of_instances():
    tasks = [load_task(t) for t in FULL]
    assert sum(len(t.instances) for t in tasks) >= 1860 + 32
    assert set(GENERATED) >= {"sat-random3", "maxcut-random", "tsp-random", "coloring-random", "maxsat-random"}


def test_instance_names_are_unique_across_full_tasks_and_limits_are_sane():
    seen: dict[str, str] = {}
    for task_id in FULL:
        task = load_task(task_id)
        assert (task.kind, task.direction) == (task.problem_impl.kind, task.problem_impl.direction)
        assert 0 < task.limits.wall_s <= 10 and 256 <= task.limits.mem_mb <= 4096, task_id
        for inst in task.instances:
            assert inst.name not in seen, f"{inst.name} in {task_id} and {seen.get(inst.name)}"
            seen[inst.name] = task_id


@pytest.mark.parametrize("task_id", FULL)
def test_every_recorded_sha256_matches_and_generated_ones_are_recorded(task_id):
    task = load_task(task_id)
    for inst in task.instances:
        if inst.generate is not None:
            g = inst.generate
            assert inst.sha256 and inst.path.name == generated_name(
                task.problem_impl, g["size"], g["seed"], g["index"], g["format"]
            )
        if inst.sha256 is not None and inst.path.is_file():
            assert hash_file(inst.path) == inst.sha256, inst.name
    if not task.generated:  # committed instances: every file is there
        verify_instance_files(task)


@pytest.mark.parametrize("task_id", GENERATED)
def test_a_sample_regenerates_with_the_plain_generate_command(task_id, tmp_path):
    """The public form a user would type: `tcsexam generate --problem P --size N --seed S`."""
    task = load_task(task_id)
    sample = random.Random(task_id).sample(task.generated, 3)
    for inst in sample:
        g = inst.generate
        args = ["generate", "--problem", task.problem, "--size", str(g["size"]), "--seed", str(g["seed"])]
        args += ["--count", str(g["index"]), "--output-dir", str(tmp_path)]
        if task.problem == "maxsat":
            args += ["--format", g["format"]]
        assert main(args) == 0
        assert hashlib.sha256((tmp_path / inst.path.name).read_bytes()).hexdigest() == inst.sha256


def test_generate_task_writes_checked_files_and_a_stamp(tmp_path, capsys):
    task = load_task("maxsat-random")
    names = [task.generated[0].name, task.generated[-1].name]
    out, stamp = tmp_path / "out", tmp_path / "stamp.json"
    args = ["generate", "--task", "maxsat-random", "--instances", *names, "--output-dir", str(out)]
    assert main([*args, "--stamp", str(stamp)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(task.instance(n).path.name for n in names)
    for n in names:
        assert hash_file(out / task.instance(n).path.name) == task.instance(n).sha256
    assert stamp.is_file()
    assert main(["generate", "--task", "maxsat-random", "--problem", "sat", "--output-dir", str(out)]) == 2
    assert main(["generate", "--task", "maxsat-random", "--instances", "nope", "--output-dir", str(out)]) == 1


def _copy_task(tmp_path: Path, task_id: str, keep: int, edit=None) -> Path:
    doc = yaml.safe_load(Path(load_task(task_id).source).read_text())
    doc["instances"] = doc["instances"][:keep]
    doc["instance_dir"] = str(tmp_path / "inst")
    if edit:
        edit(doc)
    path = tmp_path / f"{task_id}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_a_wrong_recorded_sha256_writes_nothing_and_names_the_instance(tmp_path):
    def corrupt(doc):
        doc["instances"][1]["sha256"] = "0" * 64

    path = _copy_task(tmp_path, "tsp-random", 2, corrupt)
    r = subprocess.run(
        [sys.executable, "-m", "tcsexam", "generate", "--task", str(path)], capture_output=True, text=True
    )
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    assert "tsp-n25-s3025001-1" in r.stderr and "sha256" in r.stderr
    assert not (tmp_path / "inst").exists() or not any((tmp_path / "inst").iterdir())


def test_run_refuses_a_changed_or_missing_generated_file(tmp_path):
    path = _copy_task(tmp_path, "sat-random3", 2)
    cand = Path(load_task("sat-satlib").source).parents[2] / "solvers" / "reference" / "sat"
    run = [sys.executable, "-m", "tcsexam", "run", "--task", str(path), "--candidate", str(cand)]
    run += ["--output", str(tmp_path / "o" / "records.json"), "--no-ray", "--no-progress"]
    r = subprocess.run(run, capture_output=True, text=True)
    assert r.returncode == 1 and "is missing (generate it: tcsexam generate --task" in r.stderr
    assert main(["generate", "--task", str(path)]) == 0
    victim = tmp_path / "inst" / load_task(path).instances[0].path.name
    victim.write_text(victim.read_text().replace("p cnf", "c tampered\np cnf"))
    r = subprocess.run(run, capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "has sha256" in r.stderr
    assert not (tmp_path / "o" / "records.json").exists()


def test_task_file_refuses_a_bad_generate_entry(tmp_path):
    from tcsexam.errors import InputError

    def bad_name(doc):
        doc["instances"][0]["file"] = "other.txt"

    def no_hash(doc):
        del doc["instances"][0]["sha256"]

    def bad_seed(doc):
        doc["instances"][0]["generate"]["seed"] = -1

    for edit, needle in ((bad_name, "generator's name"), (no_hash, "must record its sha256"), (bad_seed, "seed")):
        with pytest.raises(InputError, match=needle):
            load_task(_copy_task(tmp_path, "maxcut-random", 1, edit))


@pytest.mark.skipif(shutil.which("cadical") is None, reason="Debian's cadical is not installed")
def test_generated_sat_labels_agree_with_cadical(tmp_path):
    """A sample of the labels recorded at assembly, re-decided by a different CaDiCaL build."""
    task = load_task("sat-random3")
    for inst in random.Random(3).sample(task.generated, 6):
        assert main(["generate", "--task", "sat-random3", "--instances", inst.name, "--output-dir", str(tmp_path)]) == 0
        r = subprocess.run(["cadical", "-q", str(tmp_path / inst.path.name)], capture_output=True, text=True)
        assert {10: "SAT", 20: "UNSAT"}[r.returncode] == inst.meta["label"], inst.name
