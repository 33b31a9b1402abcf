"""rules/orspace.smk under real Snakemake: config validation, a small run, the dry run."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
from snakemake_support import snakemake  # noqa: E402


@pytest.fixture
def flow(project_root, tmp_path):
    (tmp_path / "Snakefile").write_text(f'include: "{project_root / "rules" / "orspace.smk"}"\n')
    (tmp_path / "workflow").symlink_to(project_root / "workflow")
    ws = tmp_path / "subs" / "Workspace_OR" / "build_workspaces"
    for n in (101, 105):
        shutil.copytree(
            project_root / "solvers" / "orspace-demo" / "Workspace_OR" / "build_workspaces" / f"instance_{n}",
            ws / f"instance_{n}",
        )
    rel = tmp_path / "rel" / "evaluation" / "build_evaluation"
    rel.mkdir(parents=True)
    rows = (
        (project_root / "references" / "orspace" / "evaluation" / "build_evaluation" / "reference_objectives.csv")
        .read_text()
        .splitlines()
    )
    rel.joinpath("reference_objectives.csv").write_text(
        "\n".join([rows[0]] + [r for r in rows if "_101_" in r or "_105_" in r]) + "\n"
    )
    return tmp_path


def test_small_run(flow):
    (flow / "c.yaml").write_text(
        "orspace:\n  runs:\n    t:\n      workspaces: subs\n      release: rel\n"
        "      modes: [build]\n      time_limit_s: 20\n"
    )
    proc = snakemake(flow, "--configfile", "c.yaml", "--cores", "1", "orspace_all")
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = flow / "results" / "orspace" / "t"
    summary = json.loads((run / "revise-all_filesystem_both" / "objectives.json").read_text())
    assert summary["passed"] == 1 and summary["failure_modes"]["execution_error"] == 1
    assert summary["condition"] == "revise-all_filesystem_both"
    manifest = json.loads((run / "revise-all_filesystem_both" / "staged" / "manifest.json").read_text())
    assert manifest["condition"]["slug"] == "revise-all_filesystem_both"
    effects = json.loads((run / "effects.json").read_text())
    assert effects["conditions"]["revise-all_filesystem_both"]["modes"]["build"]["passed"] == 1


def test_bad_config_is_refused(flow):
    (flow / "c.yaml").write_text(
        "orspace:\n  runs:\n    t:\n      workspaces: subs\n      release: rel\n      time_limit_s: -1\n"
    )
    proc = snakemake(flow, "--configfile", "c.yaml", "-n", "orspace_all")
    assert proc.returncode != 0 and "time_limit_s" in proc.stderr + proc.stdout


def test_without_orspace_config_nothing_runs(flow):
    proc = snakemake(flow, "-n", "orspace_all")
    assert proc.returncode == 0
    assert "orspace_execute" not in proc.stdout + proc.stderr  # only the empty target itself


def test_two_conditions_are_staged_executed_scored_compared_and_reported(flow):
    (flow / "c.yaml").write_text(
        "orspace:\n  bootstrap: {seed: 3, resamples: 200}\n  runs:\n    t:\n      workspaces: subs\n      release: rel\n"
        "      modes: [build]\n      time_limit_s: 20\n      conditions:\n"
        "        - {view: revise-all, interface: filesystem, context: both}\n"
        "        - {view: revise-code, interface: flat, context: none, workspaces: subs}\n"
    )
    proc = snakemake(flow, "--configfile", "c.yaml", "--cores", "1", "orspace_all")
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = flow / "results" / "orspace" / "t"
    flat = run / "revise-code_flat_none"
    assert (flat / "staged" / "prompts" / "or_space_101_build.txt").exists()
    preds = [json.loads(line) for line in (flat / "predictions.jsonl").read_text().splitlines()]
    assert {p["condition"] for p in preds} == {"revise-code_flat_none"}
    effects = json.loads((run / "effects.json").read_text())
    assert sorted(effects["conditions"]) == ["revise-all_filesystem_both", "revise-code_flat_none"]
    (pair,) = effects["paired_differences"]
    assert pair["n"] == 2 and pair["difference"] == 0.0 and effects["bootstrap"]["seed"] == 3
    report = snakemake(flow, "--configfile", "c.yaml", "--report", str(flow / "report.html"), "orspace_all")
    assert report.returncode == 0, report.stderr[-2000:]
    assert "OR-Space" in (flow / "report.html").read_text(errors="replace")


def test_a_leaking_release_fails_its_stage_rule(flow):
    doc = flow / "subs" / "Workspace_OR" / "build_workspaces" / "instance_101" / "docs" / "hint.md"
    ref = next(
        line.split(",")[4]
        for line in (flow / "rel" / "evaluation" / "build_evaluation" / "reference_objectives.csv")
        .read_text()
        .splitlines()
        if "_101_" in line
    )
    doc.write_text(f"The best plan earns {ref}.\n")
    (flow / "c.yaml").write_text(
        "orspace:\n  runs:\n    t:\n      workspaces: subs\n      release: rel\n      modes: [build]\n"
    )
    proc = snakemake(flow, "--configfile", "c.yaml", "--cores", "1", "orspace_all")
    assert proc.returncode != 0
    log = (flow / "results" / "orspace" / "t" / "revise-all_filesystem_both" / "stage.log").read_text()
    assert "leakage audit" in log and "hint.md" in log
    assert not (flow / "results" / "orspace" / "t" / "revise-all_filesystem_both" / "predictions.jsonl").exists()


def test_references_attribution_and_leaderboard_in_the_workflow(flow, project_root):
    """With `references`, the run's Build references are audited once and every condition's
    objectives carry the three pass-rate views; failures are attributed; the leaderboard compares."""
    (flow / "c.yaml").write_text(
        "orspace:\n  bootstrap: {seed: 3, resamples: 200}\n  runs:\n    t:\n      workspaces: subs\n      release: rel\n"
        f"      modes: [build]\n      time_limit_s: 20\n      references: {{models: {project_root}/references/orspace-models}}\n"
    )
    proc = snakemake(flow, "--configfile", "c.yaml", "--cores", "1", "orspace_all")
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = flow / "results" / "orspace"
    audit = json.loads((out / "t" / "reference-audit.json").read_text())
    assert [(i["workspace_id"], i["verdict"]) for i in audit["items"]] == [("or_space_101_build", "reproduced")]
    summary = json.loads((out / "t" / "revise-all_filesystem_both" / "objectives.json").read_text())
    assert summary["pass_rates"]["any_evidenced"]["passed"] == 1 and summary["inputs"]["audit"]["sha256"]
    assert summary["attributions"]["execution"] == 1
    board = json.loads((out / "leaderboard.json").read_text())
    assert [r["run"] for r in board["runs"]] == ["t"] and board["runs"][0]["modes"]["build"]["passed"] == 1


def test_judge_run_keys_reach_the_commands(project_root):
    """`attribution_judge` and `explain.second_judge_model` pass the schema and become the
    commands' options; each without what it needs is refused."""
    import jsonschema
    import yaml

    from tcsexam.workflow.orspace import OrspaceRuns

    schema = yaml.safe_load((project_root / "workflow" / "schemas" / "orspace.schema.yaml").read_text())
    explain = {"answers": "a.jsonl", "judge": True, "judge_cache": "c dir", "judge_prices": "p.yaml"}
    explain |= {"second_judge_model": "judge-b", "second_judge_base_url": "http://h/v1"}
    config = {"runs": {"m": {"release": "rel", "attribution_judge": True, "explain": explain}}}
    jsonschema.validate(config, schema)
    runs = OrspaceRuns(config)
    run = dict(runs.runs["m"], modes=["build"])
    runs.runs["m"] = run
    w = SimpleNamespace(run="m", cond="revise-all_filesystem_both")
    score = runs.score_args(w).split()
    assert score[:2] == ["--attribute", "--attribution-judge"] and "'c dir'" in runs.score_args(w)
    assert "--judge-prices p.yaml" in runs.score_args(w)
    args = runs.explain_args(w)
    assert "--second-judge-model judge-b --second-judge-base-url http://h/v1" in args
    plain = OrspaceRuns({"runs": {"m": {"release": "rel"}}})
    assert "--attribution-judge" not in plain.score_args(w) and "--attribute" in plain.score_args(w)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"runs": {"m": {"release": "rel", "attribution_judge": "yes"}}}, schema)
    with pytest.raises(ValueError, match="attribution_judge needs attribute"):
        OrspaceRuns({"runs": {"m": {"release": "rel", "attribute": False, "attribution_judge": True}}})
    with pytest.raises(ValueError, match="second_judge_model needs judge: true"):
        OrspaceRuns({"runs": {"m": {"release": "rel", "explain": {"answers": "a", "second_judge_model": "b"}}}})
