"""rules/agents.smk and tcsexam.workflow.agents: the `agents:` config made into generation jobs and
OR-Space runs, under real Snakemake (dry runs: the generation itself is tested in tests/unit/agents)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from tcsexam.agents.options import add_budget_arguments, add_model_arguments
from tcsexam.workflow.agents import AgentRuns

ROOT = Path(__file__).resolve().parents[3]

sys.path.insert(0, str(Path(__file__).resolve().parent))
from snakemake_support import snakemake  # noqa: E402


@pytest.fixture
def flow(tmp_path) -> Path:
    (tmp_path / "Snakefile").write_text(
        f'include: "{ROOT / "rules" / "agents.smk"}"\ninclude: "{ROOT / "rules" / "orspace.smk"}"\n'
    )
    (tmp_path / "workflow").symlink_to(ROOT / "workflow")
    for name in ("references", "solvers"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def config(**agents) -> dict:
    base = {
        "release": "references/orspace",
        "stage_from": "solvers/orspace-demo",
        "models": {
            "gpt": {"provider": "openai", "model": "gpt-4o", "api_key_env": "OPENAI_API_KEY", "prices": "p.yaml"},
            "qwen": {
                "provider": "openai-compatible",
                "model": "Qwen/Qwen2.5-Coder-7B-Instruct",
                "base_url": "http://gpu-node:8000/v1",
                "max_samples": 8,
                "max_cost": 2.5,
                "temperature": 0,
                "limits": {"messages": 40},
            },
        },
    }
    base.update(agents)
    return {"agents": base, "orspace": {"output_dir": "results/o", "runs": {}}}


def dry_run(flow: Path, cfg: dict, *targets: str) -> subprocess.CompletedProcess:
    (flow / "c.yaml").write_text(yaml.safe_dump(cfg))
    return snakemake(flow, "--configfile", "c.yaml", "-n", "-p", "--cores", "2", *(targets or ("agents_all",)))


def shell_commands(output: str, program: str) -> list[str]:
    return [line.split("Shell command: ", 1)[1] for line in output.splitlines() if f"Shell command: {program}" in line]


def test_the_dry_run_generates_then_judges_then_reports(flow):
    cfg = config(
        conditions=[{"interface": "filesystem"}, {"interface": "flat", "view": "revise-code"}],
        attempts=2,
        limits={"messages": 60, "time_s": 900},
        judge={"time_limit_s": 60, "explain": {"judge": False}},
    )
    proc = dry_run(flow, cfg)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    out = proc.stdout
    # 2 models x 2 attempts x 2 conditions
    generate = shell_commands(out, "tcsexam agents generate")
    assert len(generate) == 8
    for job in ("orspace_stage", "orspace_execute", "orspace_score_objectives", "orspace_explain_score"):
        assert f"{job}" in out
    qwen = next(c for c in generate if "qwen.a2/revise-code_flat_both" in c)
    args = shlex.split(qwen.split(" > ", 1)[0])
    assert args[args.index("--model") + 1] == "Qwen/Qwen2.5-Coder-7B-Instruct"
    assert args[args.index("--base-url") + 1] == "http://gpu-node:8000/v1"
    assert args[args.index("--max-samples") + 1] == "8" and args[args.index("--max-cost") + 1] == "2.5"
    assert args[args.index("--message-limit") + 1] == "40" and args[args.index("--time-limit") + 1] == "900"
    assert args[args.index("--temperature") + 1] == "0"
    assert args[args.index("--staged") + 1] == "results/o/qwen.a2/revise-code_flat_both/staged"
    assert args[args.index("--output") + 1] == "results/o/qwen.a2/revise-code_flat_both/generation"
    gpt = shlex.split(next(c for c in generate if "gpt.a1/revise-all_filesystem_both" in c).split(" > ", 1)[0])
    assert gpt[gpt.index("--model") + 1] == "openai/gpt-4o" and gpt[gpt.index("--api-key-env") + 1] == "OPENAI_API_KEY"
    # every flag the rule passes is one `tcsexam agents generate` defines (the real parser reads it)
    parser = __import__("argparse").ArgumentParser()
    add_model_arguments(parser)
    add_budget_arguments(parser)
    for flag in ("--staged", "--output", "--modes", "--message-limit", "--time-limit", "--program-time-limit"):
        parser.add_argument(flag, nargs="*")
    parser.add_argument("--sandbox", nargs="*")
    parser.add_argument("--call-time-limit", nargs="*")
    parser.add_argument("--call-mem-mb", nargs="*")
    parser.parse_args(args[3:])
    # the judges run on what the generation left
    execute = next(c for c in shell_commands(out, "tcsexam orspace execute") if "gpt.a1/revise-all_filesystem" in c)
    assert "--workspaces results/o/gpt.a1/revise-all_filesystem_both/generation/workspaces" in execute
    explain = next(c for c in shell_commands(out, "tcsexam orspace explain-score") if "gpt.a1/revise-all_f" in c)
    assert "--answers results/o/gpt.a1/revise-all_filesystem_both/generation/answers.jsonl" in explain
    assert "results/o/gpt.a1/effects.html" in out and "results/o/qwen.a2/effects.html" in out


def test_the_judges_wait_for_the_generation(flow):
    proc = dry_run(flow, config(modes=["build"]), "results/o/gpt.a1/revise-all_filesystem_both/objectives.json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = [line.split()[1].rstrip(":") for line in proc.stdout.splitlines() if line.startswith("rule ")]
    assert set(jobs) == {"orspace_stage", "agents_generate", "orspace_execute", "orspace_score_objectives"}


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"models": {"m": {"model": "openai/gpt-4o", "api_key": "sk-123"}}}, "api_key"),
        ({"models": {"bad.name": {"model": "openai/gpt-4o"}}}, "bad.name"),
        ({"models": {"m": {"model": "x", "base_url": "gpu:8000"}}}, "gpu:8000"),
        ({"models": {"m": {"model": "x", "api_key_env": "sk-live-1"}}}, "sk-live-1"),
        ({"modes": ["chat"]}, "chat"),
    ],
)
def test_a_bad_agents_config_stops_the_workflow(flow, change, why):
    proc = dry_run(flow, config(**change))
    assert proc.returncode != 0 and why in proc.stdout + proc.stderr


def test_the_plan_without_snakemake():
    runs = AgentRuns(
        {
            "release": "rel",
            "modes": ["build", "explain"],
            "attempts": 2,
            "conditions": [{"interface": "flat"}],
            "models": {"m": {"model": "mockllm/model", "max_samples": 2}},
            "judge": {"licences": {"gurobi": "/lic/gurobi.lic"}},
        },
        "out",
    )
    assert list(runs.run_names()) == ["m.a1", "m.a2"]
    spec = runs.orspace_runs()["m.a2"]
    assert spec["modes"] == ["build"] and spec["release"] == "rel"
    assert spec["conditions"] == [
        {
            "interface": "flat",
            "workspaces": "out/m.a2/revise-all_flat_both/generation/workspaces",
            "generation": "out/m.a2/revise-all_flat_both/generation/generation.json",
            "answers": "out/m.a2/revise-all_flat_both/generation/answers.jsonl",
        }
    ]
    with pytest.raises(ValueError, match="also in orspace.runs"):
        runs.merged_orspace({"runs": {"m.a1": {"release": "rel"}}})
    with pytest.raises(ValueError, match="give build or revise"):
        AgentRuns({"release": "r", "modes": ["explain"], "models": {"m": {"model": "a/b"}}})
    with pytest.raises(ValueError, match="given twice"):
        AgentRuns({"release": "r", "conditions": [{}, {"view": "revise-all"}], "models": {"m": {"model": "a/b"}}})
    wild = SimpleNamespace(run="m.a1", cond="revise-all_flat_both")
    assert AgentRuns.endpoint({"model": "x", "base_url": "http://gpu-node-12:8000/v1"}) == "gpu_node_12_8000"
    assert AgentRuns.endpoint({"model": "openai/gpt-4o"}) == "openai"
    resources = runs.endpoint_resources()
    assert list(resources) == ["agents_conn_mockllm"] and resources["agents_conn_mockllm"](wild) == 4
    assert "--modes build explain" in runs.generate_args(wild)
    assert "--licence gurobi=/lic/gurobi.lic" in runs.generate_args(wild)
    assert runs.orspace_runs()["m.a1"]["licences"] == {"gurobi": "/lic/gurobi.lic"}
    assert runs.generate_runtime(wild, 1) >= 15


@pytest.mark.slow
def test_the_workflow_generates_through_an_endpoint_then_judges_and_reports(flow, monkeypatch):
    """A real run of rules/agents.smk (half a minute and more: staging, one generation per condition
    through a real scripted OpenAI-compatible server, 8 programs executed in the sandbox, scoring,
    the report): what the scripted model writes is what the judges score, and the key set in the
    environment is in no file of the results."""
    sys.path.insert(0, str(ROOT / "tests" / "unit" / "agents"))
    from openai_server import ScriptedOpenAI, completion

    oracle = ROOT / "references" / "orspace" / "evaluation" / "build_evaluation" / "reference_objectives.csv"
    refs = dict(line.split(",")[0::4] for line in oracle.read_text().splitlines()[1:])

    def reply(body: dict):
        prompt = body["messages"][-1]["content"]
        prompt = prompt if isinstance(prompt, str) else "".join(p.get("text", "") for p in prompt)
        wid = prompt.split("\n", 1)[0].removeprefix("# OR-Space workspace ").strip()
        if wid.endswith("_explain"):
            return completion("<<<ANSWER>>>\nThe oven capacity binds.\n<<<END ANSWER>>>")
        value = float(refs[wid]) * (2 if wid == "or_space_102_build" else 1)
        program = f'print("Status: Optimal")\nprint("OBJECTIVE_VALUE: {value}")\n'
        return completion(f"<<<FILE src/main.py>>>\n{program}<<<END src/main.py>>>", prompt_tokens=900)

    secret = "sk-workflow-test-77aa01"
    monkeypatch.setenv("TCSEXAM_TEST_WORKFLOW_KEY", secret)
    with ScriptedOpenAI(route=reply) as server:
        cfg = config(
            modes=["build", "explain"],
            conditions=[{"interface": "flat"}],
            judge={"time_limit_s": 20, "sandbox": "auto"},
            models={
                "scripted": {
                    "provider": "openai-compatible",
                    "model": "scripted-coder",
                    "base_url": server.base_url,
                    "api_key_env": "TCSEXAM_TEST_WORKFLOW_KEY",
                    "max_samples": 2,
                }
            },
        )
        (flow / "c.yaml").write_text(yaml.safe_dump(cfg))
        proc = snakemake(flow, "--configfile", "c.yaml", "--cores", "2", "agents_all")
        assert proc.returncode == 0, proc.stderr[-4000:]
        asked = server.count
    run = flow / "results" / "o" / "scripted.a1" / "revise-all_flat_both"
    generation = json.loads((run / "generation" / "generation.json").read_text())
    assert generation["complete"] and asked == generation["samples"] == 9
    rows = {r["workspace_id"]: r for r in json.loads((run / "objectives.json").read_text())["rows"]}
    assert not rows["or_space_102_build"]["passed"] and rows["or_space_102_build"]["failure_mode"] == "wrong_objective"
    assert rows["or_space_101_build"]["passed"]
    explain = json.loads((run / "explain.json").read_text())["rows"][0]
    assert explain["answer_status"] == "given"
    assert (flow / "results" / "o" / "scripted.a1" / "effects.html").is_file()
    from inspect_ai.log import read_eval_log

    for path in (flow / "results").rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
            if path.suffix == ".eval":  # compressed: read it back
                assert secret not in read_eval_log(str(path)).model_dump_json(), path


@pytest.mark.slow
def test_a_provider_failure_leaves_the_judges_waiting_and_the_rerun_asks_only_for_it(flow):
    """Two real runs of rules/agents.smk (half a minute each): the endpoint fails one sample
    (HTTP 500 after the retries), so the generation is incomplete, the job fails and nothing is
    judged; the rerun asks the model for that sample only and the judges run."""
    sys.path.insert(0, str(ROOT / "tests" / "unit" / "agents"))
    from openai_server import ScriptedOpenAI, completion, error

    broken = {"or_space_101_explain"}
    asked: list[str] = []

    def reply(body: dict):
        prompt = body["messages"][-1]["content"]
        prompt = prompt if isinstance(prompt, str) else "".join(p.get("text", "") for p in prompt)
        wid = prompt.split("\n", 1)[0].removeprefix("# OR-Space workspace ").strip()
        asked.append(wid)
        if wid in broken:
            return error(500)
        if wid.endswith("_explain"):
            return completion("<<<ANSWER>>>\nThe oven capacity binds.\n<<<END ANSWER>>>")
        return completion('<<<FILE src/main.py>>>\nprint("Status: Optimal")\n<<<END src/main.py>>>')

    with ScriptedOpenAI(route=reply) as server:
        model = {"provider": "openai-compatible", "model": "m", "base_url": server.base_url, "max_retries": 0}
        cfg = config(modes=["build", "explain"], conditions=[{"interface": "flat"}], models={"scripted": model})
        (flow / "c.yaml").write_text(yaml.safe_dump(cfg))
        first = snakemake(flow, "--configfile", "c.yaml", "--cores", "2", "agents_all")
        run = flow / "results" / "o" / "scripted.a1" / "revise-all_flat_both"
        assert first.returncode != 0 and "or_space_101_explain: model_error" in first.stdout + first.stderr
        assert not (run / "generation" / "generation.json").exists()
        assert not (run / "objectives.json").exists() and not (run / "explain.json").exists()
        record = json.loads((run / "generation" / "samples" / "or_space_101_explain" / "generation.json").read_text())
        assert record["stop_reason"] == "model_error" and record["infrastructure"] and not record["final"]
        assert set(asked) == {f"or_space_10{i}_build" for i in range(1, 9)} | broken
        broken.clear()
        before = len(asked)
        second = snakemake(flow, "--configfile", "c.yaml", "--cores", "2", "agents_all")
        assert second.returncode == 0, second.stderr[-4000:]
        assert asked[before:] == ["or_space_101_explain"]
    assert json.loads((run / "generation" / "generation.json").read_text())["complete"]
    assert json.loads((run / "explain.json").read_text())["rows"][0]["answer_status"] == "given"
    assert (run / "objectives.json").is_file()
