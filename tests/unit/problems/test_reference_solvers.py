"""The reference solvers run as independent programs under the candidate contract: placeholders
substituted in solver.yaml's command, run in their folder with the venv's bin first on PATH, and
their certificates checked by the problem modules."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tcsexam.tasks import load_task

ROOT = Path(__file__).resolve().parents[3]
REF = ROOT / "solvers" / "reference"

RUNS = [  # (solver folder, task, instance)
    ("maxcut", "maxcut-mqlib", "G11"),
    ("maxcut", "maxcut-gset-large", "G43"),
    ("sat", "sat-satlib", "uf100-01"),
    ("sat", "sat-satlib", "uuf75-01"),
    ("sat-satlib-cadical", "sat-satlib", "uf75-02"),
    ("sat-satlib-cadical", "sat-satlib", "uuf50-02"),
    ("tsp", "tsp-tsplib", "gr17"),
    ("tsp", "tsp-tsplib", "eil51"),
    ("tsp", "tsp-tsplib-large", "gr96"),
    ("coloring", "coloring-dimacs", "queen6_6"),
    ("maxsat", "maxsat-wcnf", "gen-old-n40-s102"),
    ("maxsat", "maxsat-wcnf", "wqueens8_6.wcsp.dir"),
]


def run_candidate(folder: str, instance: Path, solution: Path, time_limit: float, seed: int):
    spec = yaml.safe_load((REF / folder / "solver.yaml").read_text())
    values = {
        "instance": str(instance),
        "solution": str(solution),
        "time_limit": str(time_limit),
        "seed": str(seed),
        "threads": "1",
        "workdir": str(solution.parent),
        "proof": str(solution.parent / "proof"),
    }
    argv = [
        part.format(**values) if "{" in part and "}" in part and part.strip("{}") in values else part
        for part in spec["command"]
    ]
    env = dict(
        os.environ,
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        TCSEXAM_TIME_LIMIT=str(time_limit),
        TCSEXAM_PROOF=str(solution.parent / "proof"),
    )
    proc = subprocess.run(argv, cwd=REF / folder, env=env, capture_output=True, timeout=60)
    return spec, proc


@pytest.mark.parametrize("folder,task_id,name", RUNS, ids=[f"{r[0]}:{r[2]}" for r in RUNS])
def test_reference_solver_writes_an_accepted_certificate(folder, task_id, name, tmp_path):
    if folder.endswith("cadical") and shutil.which("cadical") is None:
        pytest.skip("Debian's cadical is not installed")
    task = load_task(task_id)
    ti = task.instance(name)
    solution = tmp_path / "solution.txt"
    spec, proc = run_candidate(folder, ti.path, solution, 1.0, 7)
    assert proc.returncode in spec.get("exit_codes_ok", [0]), proc.stderr[-2000:]
    problem = task.problem_impl
    r = problem.check_certificate(problem.parse_instance(ti.path), solution.read_bytes(), ti.meta)
    assert r.status == "ok", r
    assert r.claimed is not None
    if task.kind == "solve":
        assert r.solved is True
    if r.claimed == "UNSAT":  # the DRAT proof beside it is verified by the harness's checker
        from tcsexam.runner.solver.drat import ProofLimits, check_proof

        verdict = check_proof(
            problem.parse_instance(ti.path), tmp_path / "proof", limits=ProofLimits(), scratch=tmp_path
        )
        assert verdict.verified, verdict
    else:
        # a verified certificate with a positive objective; its quality depends on the CPU the
        # anytime search got, so on the machine's load, and is measured by the reference builds
        assert r.reward > 0
    assert not list(tmp_path.glob("*.tmp*")), "temporary files left beside the solution"


def test_no_reference_program_is_a_copy_of_another():
    """One folder per problem serves all of the problem's tasks (tcsexam.workflow.plan)."""
    digests = [hashlib.sha256(p.read_bytes()).hexdigest() for p in REF.rglob("*.py")]
    assert len(digests) == len(set(digests))


def test_reference_solvers_are_independent_programs():
    for path in REF.rglob("*.py"):
        text = path.read_text()
        assert "import tcsexam" not in text and "from tcsexam" not in text, path
    for spec_path in REF.glob("*/solver.yaml"):
        spec = yaml.safe_load(spec_path.read_text())
        assert isinstance(spec["command"], list) and spec.get("threads") == 1, spec_path
        assert "{solution}" in spec["command"] and "{instance}" in spec["command"], spec_path
        assert "{seed}" in spec["command"], spec_path


def test_seeds_change_heuristic_runs(tmp_path):
    ti = load_task("maxcut-mqlib").instance("G14")
    outs = []
    for seed in (1, 2):
        solution = tmp_path / f"s{seed}.txt"
        _, proc = run_candidate("maxcut", ti.path, solution, 1.0, seed)
        assert proc.returncode == 0
        outs.append(solution.read_bytes())
    assert outs[0] != outs[1]
