"""The agents' TCSExam tracks in the workflow's plan (`tcsexam.workflow.agent_tracks`): which
generations a config asks for and the flags of each, the online folder both protocols share, the
plan made afresh once a generation has written its submissions, and one line on a bad config."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tcsexam.errors import InputError
from tcsexam.workflow import Plan

ENDPOINT = {"provider": "openai-compatible", "model": "m7", "base_url": "http://gpu-node:8000/v1"}


def _config(tmp_path, agents=None, **kw):
    (tmp_path / "verdicts").mkdir(exist_ok=True)  # the tracks the agents leave out: verdicts or missing rows
    cfg = {
        "suite": "lite",
        "protocol": "offline",
        "results_dir": "res",
        "solvers_dir": str(tmp_path / "solvers"),
        "verdicts_dir": str(tmp_path / "verdicts"),
        "allow_missing": True,
        "models": [{"name": "m7", "attempts": ["1", "2"]}, {"name": "other", "attempts": ["1"]}],
        "run": {"instances": {}, "task_files": {"maxcut-mqlib": "config/test/tasks/maxcut-mqlib.yaml"}},
        "agents": agents
        if agents is not None
        else {"tcsexam": {"tracks": ["solver", "theorem"]}, "models": {"m7": dict(ENDPOINT)}},
    }
    cfg.update(kw)
    return cfg


def test_one_generation_per_model_track_and_attempt(tmp_path, project_root):
    run = {
        "instances": {"maxcut-mqlib": ["G11"]},
        "task_files": {"maxcut-mqlib": "config/test/tasks/maxcut-mqlib.yaml"},
    }
    plan = Plan(_config(tmp_path, models=[{"name": "m7", "attempts": ["1", "2"]}], run=run), project_root)
    plan.check()  # no submission and no solvers folder yet: the agents write them in this run
    assert plan.agent_jobs() == [
        {"model": "m7", "track": t, "attempt": a} for t in ("theorem", "solver") for a in ("1", "2")
    ]
    assert plan.agent_summaries()[0] == "res/agents/lite/m7/theorem/1/generation.json"
    args = plan.agents_solve_args(SimpleNamespace(model="m7", track="solver", attempt="2"))
    assert "--track solver --suite lite" in args and "--attempt 2" in args and "--model m7 --model-name m7" in args
    assert "--base-url http://gpu-node:8000/v1" in args and "--online-records-dir res/agents/lite/online" in args
    assert "--task-file maxcut-mqlib=config/test/tasks/maxcut-mqlib.yaml" in args and "--judge-seed 1" in args
    assert "--judge-instances maxcut-mqlib=G11" in args  # the online judge runs what the offline one runs
    theorem = plan.agents_solve_args(SimpleNamespace(model="m7", track="theorem", attempt="1"))
    assert "--online-records-dir" not in theorem and "--dev-instances" not in theorem
    assert plan.agents_endpoint_resources().keys() == {"agents_conn_gpu_node_8000"}


def test_the_plan_is_made_afresh_once_a_generation_has_finished(tmp_path, project_root):
    res = tmp_path / "res"
    plan = Plan(_config(tmp_path, results_dir=str(res)), project_root)
    asked = []
    plan.agents_waiter = lambda: asked.append(True)  # Snakemake's checkpoint: raises until it is done
    rows = plan.row_files(SimpleNamespace())
    assert asked and f"{res}/lite/offline/missing/solver/m7/maxcut-mqlib/1/row.json" in rows
    folder = tmp_path / "solvers" / "m7" / "maxcut-mqlib" / "1"
    folder.mkdir(parents=True)
    (folder / "solver.yaml").write_text("command: [x]\n")
    assert f"{res}/lite/offline/missing/solver/m7/maxcut-mqlib/1/row.json" in plan.row_files(SimpleNamespace())
    summary = res / "agents" / "lite" / "m7" / "solver" / "1" / "generation.json"
    summary.parent.mkdir(parents=True)
    summary.write_text(json.dumps({"complete": True}))  # the generation has finished: plan afresh
    rows = plan.row_files(SimpleNamespace())
    assert f"{res}/lite/offline/solver/m7/maxcut-mqlib/1/row.json" in rows
    assert plan.row_files() == rows  # called by the plan itself (no wildcards): nothing asked


def test_the_online_protocol_reads_the_agents_judgments(tmp_path, project_root):
    plan = Plan(_config(tmp_path, protocol="online", models=[{"name": "m7"}]), project_root)
    assert plan.online_dir == "res/agents/lite/online" == plan.agent_online_dir
    plan.check()
    bad = _config(tmp_path, protocol="online", online_records_dir="judged", models=[{"name": "m7"}])
    bad["agents"]["tcsexam"]["online_records_dir"] = "elsewhere"
    with pytest.raises(InputError, match="online_records_dir: elsewhere is not the online_records_dir"):
        Plan(bad, project_root).check()


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        (
            {"tcsexam": {"trakcs": ["solver"]}, "models": {"m7": ENDPOINT}},
            "config agents.tcsexam: unknown key 'trakcs'",
        ),
        ({"tcsexam": {"tracks": ["proofs"]}, "models": {"m7": ENDPOINT}}, "config agents.tcsexam.tracks.0: 'proofs'"),
        ({"tcsexam": {}, "models": {"nobody": ENDPOINT}}, "none of the config's models"),
        ({"tcsexam": {}, "models": {"m7": {"provider": "openai-compatible", "model": "x"}}}, "needs base_url"),
    ],
)
def test_a_bad_agents_config_is_one_line(tmp_path, project_root, agents, message):
    with pytest.raises(InputError, match=message.replace(".", r"\.")):
        Plan(_config(tmp_path, agents=agents), project_root).check()
