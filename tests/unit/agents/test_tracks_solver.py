"""A scripted `mockllm` agent writes a Solver-track candidate with the development-set feedback
tool (`tcsexam agents solve --track solver`): it reads the statement and a development
instance, writes a candidate that prints an invalid certificate, sees every development instance
`certificate_failed` from `run_dev`, fixes it, sees them `ok` with their values and their scores
relative to the reference solver's on the same instances, submits; `tcsexam run`
then judges the candidate folder on the task's evaluation instances. The workspace holds the
development set and no evaluation instance or reference value; feedback calls are bounded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_support import tool_outputs  # noqa: E402
from test_tracks import Scripted, _settings  # noqa: E402

from tcsexam.agents.accounting import read_generation  # noqa: E402
from tcsexam.agents.track_solver import DEV_SEED, dev_instances, relative_score  # noqa: E402
from tcsexam.agents.tracks import solve  # noqa: E402
from tcsexam.cli import main  # noqa: E402
from tcsexam.records.digest import hash_file  # noqa: E402
from tcsexam.tasks import load_task  # noqa: E402

pytestmark = pytest.mark.slow
ITEM = "maxcut-mqlib"
SOLVER_YAML = 'command: ["python3", "solve.py", "{instance}", "{solution}"]\nthreads: 1\n'
BROKEN = "import sys\nopen(sys.argv[2], 'w').write('2 2 2\\n')\n"
ALTERNATE = (
    "import sys\n"
    "n = int(open(sys.argv[1]).readline().split()[0])\n"
    "open(sys.argv[2], 'w').write(' '.join(str(v % 2) for v in range(n)) + '\\n')\n"
)


def solver_steps() -> list[tuple[str, dict]]:
    return [
        ("bash", {"command": "ls -R && head -n 3 dev/*.txt"}),
        ("text_editor", {"command": "create", "path": "submission/solver.yaml", "file_text": SOLVER_YAML}),
        ("text_editor", {"command": "create", "path": "submission/solve.py", "file_text": BROKEN}),
        ("run_dev", {}),
        ("text_editor", {"command": "create", "path": "submission/solve.py", "file_text": ALTERNATE}),
        ("run_dev", {}),
        ("run_dev", {}),  # past the bound: nothing runs
        ("submit", {"answer": "alternating sides"}),
    ]


@pytest.fixture(scope="module")
def solver_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("solver-track")
    agent = Scripted({ITEM: solver_steps()})
    settings = _settings(root, "solver", (ITEM,), max_checks=2)
    return settings, solve(settings, model=agent.model())


def test_the_agent_reads_its_feedback_and_fixes_its_candidate(solver_run):
    settings, summary = solver_run
    assert summary["complete"] and summary["stop_reasons"] == {"submitted": 1}, summary
    outputs = tool_outputs(settings.output, ITEM)
    listing = outputs[0]
    assert "dev/maxcut-n800-s7300000-1.txt" in listing or "maxcut-n800-s7300000-1.txt" in listing
    runs = [o for o in outputs if o.startswith("run ")]
    assert runs[0].startswith("run 1 (1 runs left): 3 development instances")
    assert runs[0].count(": certificate_failed") == 3
    assert runs[1].count(": ok value ") == 3
    # each value against the project's reference solver on the same development instance
    assert runs[1].count("relative score ") == 3
    assert any(o.startswith("No check left") for o in outputs)
    folder = settings.solvers_dir / "scripted" / ITEM / "1"
    assert sorted(p.name for p in folder.iterdir()) == ["generation.json", "solve.py", "solver.yaml"]
    record = read_generation(folder / "generation.json")
    assert record.tool_calls_by_name["run_dev"] == 3 and record.final


def test_the_workspace_holds_no_evaluation_instance(solver_run):
    settings, _ = solver_run
    staged = settings.output / "staged" / ITEM
    files = sorted(p.relative_to(staged).as_posix() for p in staged.rglob("*") if p.is_file())
    assert files == [f"dev/maxcut-n800-s{DEV_SEED + k}-1.txt" for k in range(3)]  # nothing else enters
    task = load_task(ITEM)
    evaluation = {hash_file(i.path) for i in task.instances}
    assert evaluation.isdisjoint({hash_file(staged / f) for f in files})
    dev_task = (settings.output / "staged" / "_dev" / f"{ITEM}.yaml").read_text()
    assert "best_known" not in dev_task and "references/" not in dev_task
    assert len(dev_instances(task, 3)) == 3
    reference = json.loads((settings.output / "staged" / "_dev" / f"{ITEM}.reference.json").read_text())
    assert reference["candidate"].endswith("solvers/reference/maxcut") and len(reference["values"]) == 3


def test_the_harness_judges_the_candidate_on_the_evaluation_instances(solver_run, tmp_path):
    settings, _ = solver_run
    folder = settings.solvers_dir / "scripted" / ITEM / "1"
    out = tmp_path / "records.json"
    args = ["run", "--task", ITEM, "--candidate", str(folder), "--output", str(out), "--no-ray"]
    assert main([*args, "--instances", "G1", "G11"]) == 0
    records = json.loads(out.read_text())
    assert [r["status"] for r in records] == ["ok", "ok"]
    assert all(r["A"] > 0 for r in records)


def test_the_relative_score_is_above_one_when_better_than_the_reference():
    assert relative_score("maximize", 120, 100) == pytest.approx(1.2)
    assert relative_score("minimize", 125, 100) == pytest.approx(0.8)
    assert relative_score("minimize", 0, 100) is None and relative_score("maximize", 5, 0) is None
    assert relative_score("maximize", None, 100) is None and relative_score("maximize", True, 1) is None
