"""The seed a candidate gets ({seed}, TCSEXAM_SEED): positive by default, 1..2^31-1 (issue 46:
minisat refuses `-rnd-seed=0`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tcsexam.cli import build_parser, main
from tcsexam.limits import DEFAULT_SEED, SEED_MAX, SEED_MIN
from tcsexam.runner.solver.attempt import RunContext
from tcsexam.runner.solver.orchestrate import TaskJob
from tcsexam.workflow.configfix import load_config_schema


def _run_args(*extra: str):
    return build_parser().parse_args(["run", "--task", "t", "--candidate", "c", "--output", "o", *extra])


def test_the_default_seed_is_positive_everywhere():
    assert SEED_MIN <= DEFAULT_SEED <= SEED_MAX
    assert _run_args().seed == DEFAULT_SEED
    assert TaskJob(task="t", candidate_dir="c", output="o").seed == DEFAULT_SEED
    assert RunContext.__dataclass_fields__["seed"].default == DEFAULT_SEED


@pytest.mark.parametrize("seed", [str(SEED_MIN), "12345", str(SEED_MAX)])
def test_seeds_in_range_are_taken(seed):
    assert _run_args("--seed", seed).seed == int(seed)


@pytest.mark.parametrize("seed", ["0", "-1", str(SEED_MAX + 1), "x"])
def test_seeds_outside_the_range_are_a_usage_error(seed, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "--task", "t", "--candidate", "c", "--output", "o", "--seed", seed])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--seed" in err and "a seed must be" in err


def test_the_workflow_config_default_seed_is_the_runner_default():
    root = Path(__file__).resolve().parents[3]
    seed = load_config_schema(root)["properties"]["run"]["properties"]["seed"]
    assert seed["default"] == DEFAULT_SEED and seed["minimum"] == SEED_MIN and seed["maximum"] == SEED_MAX


@pytest.mark.skipif(shutil.which("minisat") is None, reason="minisat not installed (apt-get install minisat)")
def test_minisat_takes_the_default_seed_and_refuses_zero(tmp_path):
    """What the range is for: Debian's minisat accepts -rnd-seed=1 and refuses 0."""
    cnf = tmp_path / "f.cnf"
    cnf.write_text("p cnf 2 2\n1 2 0\n-1 0\n")
    ok = subprocess.run(["minisat", f"-rnd-seed={DEFAULT_SEED}", str(cnf)], capture_output=True, text=True)
    assert ok.returncode == 10, ok.stdout + ok.stderr
    zero = subprocess.run(["minisat", "-rnd-seed=0", str(cnf)], capture_output=True, text=True)
    assert zero.returncode not in (10, 20)
