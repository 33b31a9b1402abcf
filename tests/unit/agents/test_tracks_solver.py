"""A scripted `mockllm` agent writes a Solver-track candidate with the development-set feedback
tool (`tcsexam agents solve --track solver`): it reads the statement and a development
instance, writes a candidate that prints an invalid certificate, sees every development instance
`certificate_failed` from `run_dev`, fixes it, sees them `ok` with their values and their scores
relative to the reference solver's on the same instances, submits; `tcsexam run`
then judges the candidate folder on the task's evaluation instances. The workspace holds the
development set and no evaluation instance or reference value; feedback calls are bounded.

The online protocol: the session's candidate is judged once on the evaluation instances inside the
run and published as the model's online records (what `tcsexam attempts ingest-online` takes); a
rerun neither asks the model nor judges again; an infrastructure failure of the judge is never
published as the model's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_support import tool_outputs  # noqa: E402
from test_tracks import Scripted, _settings  # noqa: E402

from tcsexam.agents import track_online  # noqa: E402
from tcsexam.agents.accounting import read_generation  # noqa: E402
from tcsexam.agents.track_online import OnlineJudge, judge_online  # noqa: E402
from tcsexam.agents.track_solver import DEV_SEED, dev_instances, relative_score  # noqa: E402
from tcsexam.agents.tracks import solve  # noqa: E402
from tcsexam.attempts.online import records_source  # noqa: E402
from tcsexam.cli import main  # noqa: E402
from tcsexam.records.digest import hash_candidate, hash_file  # noqa: E402
from tcsexam.tasks import load_task  # noqa: E402

pytestmark = pytest.mark.slow
ITEM = "maxcut-mqlib"
REPO = Path(__file__).resolve().parents[3]
TINY_TASK = REPO / "config" / "test" / "tasks" / f"{ITEM}.yaml"  # two evaluation instances
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
    settings = _settings(
        root, "solver", (ITEM,), max_checks=2, task_files={ITEM: str(TINY_TASK)}, online_dir=root / "online"
    )
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


def test_the_session_candidate_is_judged_online_once(solver_run, tmp_path):
    settings, summary = solver_run
    assert summary["online"]["judged"] == {"judged": 1}, summary
    published = settings.online_dir / "scripted" / ITEM / "1"
    assert sorted(p.name for p in published.iterdir()) == ["provenance.json", "records.json"]
    records = json.loads((published / "records.json").read_text())
    assert [(r["instance"], r["status"]) for r in records] == [("G11", "ok"), ("G14", "ok")]
    provenance = json.loads((published / "provenance.json").read_text())
    assert provenance["candidate_sha256"] == hash_candidate(settings.solvers_dir / "scripted" / ITEM / "1")
    assert provenance["session"]["stop_reason"] == "submitted" and provenance["task_sha256"] == hash_file(TINY_TASK)
    # the workflow's online path takes them as they are, marked online (never the offline harness's)
    out = tmp_path / "tree" / "records.json"
    args = ["attempts", "ingest-online", "--input", str(published / "records.json"), "--task-file", str(TINY_TASK)]
    assert main([*args, "--model", "scripted", "--attempt", "1", "--output", str(out)]) == 0
    assert records_source(json.loads(out.read_text()), out)["protocol"] == "online"


def test_a_rerun_neither_asks_nor_judges_again(solver_run):
    settings, _ = solver_run
    published = settings.online_dir / "scripted" / ITEM / "1" / "records.json"
    before = published.stat().st_mtime_ns
    agent = Scripted({ITEM: solver_steps()})
    summary = solve(settings, model=agent.model())
    assert agent.calls == {} and summary["complete"] and summary["online"]["judged"] == {"already_judged": 1}
    assert published.stat().st_mtime_ns == before


def test_an_infrastructure_failure_of_the_judge_is_not_published(solver_run, tmp_path, monkeypatch):
    settings, _ = solver_run
    candidate = settings.solvers_dir / "scripted" / ITEM / "1"
    record = read_generation(candidate / "generation.json")
    real = track_online.run_job

    def broken(job, options):  # the harness ran, but the judge's machine failed on one instance
        summary = real(job, options)
        data = json.loads(Path(job.output).read_text())
        data[1]["status"] = "infrastructure_error"
        Path(job.output).write_text(json.dumps(data))
        return summary

    judge = OnlineJudge(online_dir=tmp_path / "online", work_dir=tmp_path / "work", run=settings.checker_run())
    monkeypatch.setattr(track_online, "run_job", broken)
    kw = {"model": "scripted", "item": ITEM, "attempt": "1", "task_file": TINY_TASK, "candidate": candidate}
    note = judge_online(judge, **kw, record=record)
    assert note["status"] == "infrastructure_error" and note["infrastructure_errors"] == ["G14"]
    assert not (tmp_path / "online" / "scripted").exists()  # nothing stands as the model's result
    monkeypatch.setattr(track_online, "run_job", real)
    note = judge_online(judge, **kw, record=record)  # the rerun judges it
    assert note["status"] == "judged"
    records = json.loads((tmp_path / "online" / "scripted" / ITEM / "1" / "records.json").read_text())
    assert [r["status"] for r in records] == ["ok", "ok"]


def test_the_online_judge_runs_the_instances_a_workflow_plans(solver_run, tmp_path):
    settings, _ = solver_run
    candidate = settings.solvers_dir / "scripted" / ITEM / "1"
    judge = OnlineJudge(online_dir=tmp_path / "online", work_dir=tmp_path / "work", run=settings.checker_run())
    record = read_generation(candidate / "generation.json")
    kw = {"model": "scripted", "item": ITEM, "attempt": "1", "task_file": TINY_TASK, "candidate": candidate}
    assert judge_online(judge, **kw, record=record, instances=["G14"])["status"] == "judged"
    published = tmp_path / "online" / "scripted" / ITEM / "1"
    assert [r["instance"] for r in json.loads((published / "records.json").read_text())] == ["G14"]
    assert json.loads((published / "provenance.json").read_text())["instances"] == ["G14"]
    assert judge_online(judge, **kw, record=record, instances=["G14"])["status"] == "already_judged"
    assert judge_online(judge, **kw, record=record)["status"] == "judged"  # other instances: judged again
    assert len(json.loads((published / "records.json").read_text())) == 2
