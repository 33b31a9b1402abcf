"""The bundled task files and the `tcsexam check` / `tcsexam generate` commands."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tcsexam.cli import main
from tcsexam.tasks import load_task

LITE = ["maxcut-mqlib", "sat-satlib", "tsp-tsplib", "coloring-dimacs", "maxsat-wcnf"]
FULL_EXTRA = ["maxcut-gset-large", "tsp-tsplib-large"]
REWARD_KEY = {"maxcut": "best_known", "tsp": "optimal", "coloring": "chromatic", "maxsat": "optimum", "sat": "label"}


@pytest.mark.parametrize("task_id", LITE + FULL_EXTRA)
def test_task_files_load_and_every_instance_parses(task_id):
    task = load_task(task_id)
    assert task.id == task_id
    problem = task.problem_impl
    assert (task.kind, task.direction) == (problem.kind, problem.direction)
    assert 256 <= task.limits.mem_mb <= 4096
    if task_id in LITE:
        assert 10 <= len(task.instances) <= 20 and task.limits.wall_s <= 5  # Lite: minutes on a laptop
    for ti in task.instances:
        assert ti.path.is_file(), ti.path
        assert REWARD_KEY[task.problem] in ti.meta, ti.name
        problem.parse_instance(ti.path)


def test_sat_task_mixes_sat_and_unsat_and_maxsat_both_forms():
    labels = [ti.meta["label"] for ti in load_task("sat-satlib").instances]
    assert labels.count("SAT") >= 5 and labels.count("UNSAT") >= 5
    forms = [ti.meta["format"] for ti in load_task("maxsat-wcnf").instances]
    assert forms.count("old") >= 3 and forms.count("new") >= 3
    maxsat = load_task("maxsat-wcnf")
    assert {maxsat.problem_impl.parse_instance(ti.path).form for ti in maxsat.instances} == {"old", "new"}


def test_check_prints_the_verdict(tmp_path, capsys):
    cert = tmp_path / "cut.txt"
    cert.write_text("value 5\n" + "0 1 " * 400)
    assert main(["check", "--task", "maxcut-mqlib", "--instance", "G1", "--certificate", str(cert)]) == 0
    out = capsys.readouterr().out
    assert "status: certificate_failed" in out and "claimed: 5.0" in out
    assert "differs from the recomputed value 9602" in out


def test_check_json_by_instance_path(tmp_path, capsys, project_root):
    cert = tmp_path / "tour.txt"
    cert.write_text(" ".join(map(str, range(1, 15))))
    inst = project_root / "references/instances/tsp-tsplib/burma14.tsp"
    assert main(["check", "--task", "tsp-tsplib", "--instance", str(inst), "--certificate", str(cert), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["instance"] == "burma14" and out["status"] == "ok"
    assert out["reward"] == pytest.approx(3323 / out["value"])


def test_check_bad_input_exits_1_with_one_line(tmp_path):
    def run(*a):
        return subprocess.run(
            [sys.executable, "-m", "tcsexam", *a],  # noqa: E731
            capture_output=True,
            text=True,
        )

    r = run("check", "--task", "maxcut-mqlib", "--instance", "G1", "--certificate", str(tmp_path / "none.txt"))
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "certificate file not found" in r.stderr
    r = run("check", "--task", "maxcut-mqlib", "--instance", "G999", "--certificate", "x")
    assert r.returncode == 1 and "neither an instance of task maxcut-mqlib nor a file" in r.stderr
    bad = tmp_path / "bad.txt"
    bad.write_text("2 1\n1 3 1\n")
    r = run("check", "--problem", "maxcut", "--instance", str(bad), "--certificate", str(bad))
    assert r.returncode == 1 and "line 2: endpoint outside" in r.stderr
    r = run("check", "--instance", "G1", "--certificate", "x")
    assert r.returncode == 2


@pytest.mark.parametrize("problem", ["maxcut", "sat", "tsp", "coloring", "maxsat"])
def test_generate_is_reproducible(problem, tmp_path, capsys):
    args = ["generate", "--problem", problem, "--size", "15", "--count", "2", "--seed", "4"]
    assert main(args + ["--output-dir", str(tmp_path / "a")]) == 0
    assert main(args + ["--output-dir", str(tmp_path / "b")]) == 0
    a = sorted((tmp_path / "a").iterdir())
    b = sorted((tmp_path / "b").iterdir())
    assert len(a) == 2 and [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    assert a[0].read_bytes() != a[1].read_bytes()
    assert (
        main(["check", "--problem", problem, "--instance", str(a[0]), "--certificate", str(a[0])]) == 0
    )  # an instance is no certificate: still exit 0


def test_generate_old_wcnf_and_usage_errors(tmp_path, capsys):
    assert (
        main(["generate", "--problem", "maxsat", "--size", "10", "--format", "old", "--output-dir", str(tmp_path)]) == 0
    )
    (path,) = tmp_path.iterdir()
    assert b"p wcnf 10 " in path.read_bytes()
    assert main(["generate", "--problem", "tsp", "--size", "10", "--format", "old", "--output-dir", str(tmp_path)]) == 2
    assert main(["generate", "--problem", "tsp", "--size", "0", "--output-dir", str(tmp_path)]) == 2
    assert main(["generate", "--problem", "knapsack", "--size", "3", "--output-dir", str(tmp_path)]) == 1
