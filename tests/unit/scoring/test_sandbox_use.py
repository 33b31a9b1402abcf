"""index.json says which sandboxes each model's Solver records ran under, and warns about local."""

from __future__ import annotations

import json

from tcsexam.scoring.sandbox_use import add_sandbox_use, sandbox_use


def _records(root, model, task, boxes):
    folder = root / model / task / "1"
    folder.mkdir(parents=True)
    (folder / "records.json").write_text(json.dumps([{"instance": f"i{k}", "sandbox": b} for k, b in enumerate(boxes)]))


def test_sandboxes_per_model_and_a_warning_for_local(tmp_path):
    _records(tmp_path, "a", "sat", ["bwrap", "bwrap"])
    _records(tmp_path, "a", "tsp", ["docker"])
    _records(tmp_path, "b", "sat", ["local", "bwrap"])
    used, warnings = sandbox_use(tmp_path, ["a", "b", "c"])
    assert used == {"a": ["bwrap", "docker"], "b": ["bwrap", "local"], "c": []}
    assert len(warnings) == 1 and warnings[0].startswith("model b: 1 Solver record(s) ran under sandbox local")


def test_add_to_an_index(tmp_path):
    _records(tmp_path, "a", "sat", ["local"])
    result = {"models": {"a": {"index": 1.0}}}
    add_sandbox_use(result, tmp_path)
    assert result["models"]["a"]["solver_sandboxes"] == ["local"] and len(result["warnings"]) == 1
    result = {"models": {"a": {}}}
    add_sandbox_use(result, None)
    assert result == {"models": {"a": {"solver_sandboxes": []}}, "warnings": []}
