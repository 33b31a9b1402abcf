"""stage: participant workspaces without evaluator-only files."""

from __future__ import annotations

import json

import pytest

from tcsexam.errors import InputError
from tcsexam.orspace.stage import stage


def test_stage_from_the_release(release, tmp_path):
    ids = ["or_space_001_build", "or_space_001_revise", "or_space_001_explain"]
    manifest = stage(release, tmp_path / "staged", workspace_ids=ids)
    assert sorted(manifest["workspaces"]) == sorted(ids)
    out = tmp_path / "staged"
    assert (out / "or_space_001_build" / "src").is_dir()
    assert (out / "or_space_001_revise" / "revised" / "src").is_dir()
    assert (out / "or_space_001_explain" / "original" / "solver_records").is_dir()
    meta = json.loads((out / "or_space_001_explain" / "metadata.json").read_text())
    assert meta["explain_task"]["question"]
    staged = {p.name for p in out.rglob("*")}
    assert not staged & {"reference_objectives.csv", "rubrics.jsonl", "rubric_schema.json"}
    assert (out / "manifest.json").exists()
    with pytest.raises(InputError, match="not empty"):
        stage(release, out, workspace_ids=ids)


def test_stage_drops_evaluator_only_files_and_keys(tmp_path):
    ws = tmp_path / "rel" / "Workspace_OR" / "explain_workspaces" / "instance_7"
    (ws / "evaluation").mkdir(parents=True)
    (ws / "evaluation" / "x.csv").write_text("secret")
    (ws / "rubrics.jsonl").write_text("{}")
    (ws / "notes.md").write_text("keep")
    (ws / "metadata.json").write_text(
        json.dumps({"question": "q", "expected_short_answer": "secret", "nested": {"checklist": [1], "keep": 2}})
    )
    manifest = stage(tmp_path / "rel", tmp_path / "out", split=None)
    out = tmp_path / "out" / "or_space_007_explain"
    assert json.loads((out / "metadata.json").read_text()) == {"question": "q", "nested": {"keep": 2}}
    assert (out / "notes.md").exists() and not (out / "rubrics.jsonl").exists() and not (out / "evaluation").exists()
    assert sorted(manifest["workspaces"]["or_space_007_explain"]["excluded"]) == ["evaluation/x.csv", "rubrics.jsonl"]


def test_stage_split(release, tmp_path):
    manifest = stage(release, tmp_path / "s", modes=("build",), split="public_test")
    assert len(manifest["workspaces"]) == 90
