"""orspace leaderboard: Pass@1 per run, the interface and legacy-code effects (paired), and the
Explain vs Build/Revise correlation across runs, on constructed results folders."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tcsexam.errors import InputError
from tcsexam.orspace.leaderboard import leaderboard, load_results
from tcsexam.view.orspace import collect_orspace

FS, FLAT, MODEL = "revise-all_filesystem_both", "revise-all_flat_both", "revise-model_filesystem_both"


def _objectives(build: list[int], revise: list[int], attributions=None, judged=None) -> dict:
    rows = [
        {"workspace_id": f"or_space_{i:03d}_build", "mode": "build", "passed": bool(p)} for i, p in enumerate(build)
    ]
    rows += [
        {"workspace_id": f"or_space_{i:03d}_revise", "mode": "revise", "passed": bool(p)} for i, p in enumerate(revise)
    ]
    doc = {"rows": rows, "modes": ["build", "revise"]}
    if attributions:
        doc["attributions"] = attributions
    if judged:
        doc["attribution_judge"] = {"decided": judged}
    return doc


def _explain(scores: list[float]) -> dict:
    rows = [{"workspace_id": f"or_space_{i:03d}_explain", "score": s} for i, s in enumerate(scores)]
    return {"rows": rows, "n": len(rows), "mean_score": sum(scores) / len(scores), "penalty_cap": 12}


def _write(root, run, cond, name, doc):
    folder = root / run / cond
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(doc))


@pytest.fixture
def results(tmp_path):
    root = tmp_path / "orspace"
    # run a: filesystem 3/4 build, flat 1/4 on the same workspaces; legacy code 3/4 revise vs 1/4 without
    attributed = _objectives([1, 1, 1, 0], [1, 1, 1, 0], {"grounding": 1, "modelling": 1}, {"modelling": 1})
    _write(root, "a", FS, "objectives", attributed)
    _write(root, "a", FLAT, "objectives", _objectives([1, 0, 0, 0], [1, 1, 0, 0]))
    _write(root, "a", MODEL, "objectives", _objectives([1, 1, 1, 0], [1, 0, 0, 0]))
    _write(root, "a", FS, "explain", _explain([80, 60]))
    _write(root, "b", FS, "objectives", _objectives([1, 0, 0, 0], [0, 0, 0, 0]))
    _write(root, "b", FS, "explain", _explain([30, 30]))
    _write(root, "c", FS, "objectives", _objectives([1, 1, 0, 0], [1, 0, 0, 0]))
    _write(root, "c", FS, "explain", _explain([50, 50]))
    return root


def test_rates_effects_and_correlation(results):
    doc = leaderboard(load_results(results), resamples=500)
    runs = {r["run"]: r for r in doc["runs"]}
    assert [r["condition"] for r in doc["runs"]] == [FS, FS, FS]
    a = runs["a"]
    assert (a["modes"]["build"]["passed"], a["modes"]["build"]["n"]) == (3, 4)
    assert a["modes"]["build"]["ci95"][0] <= 0.75 <= a["modes"]["build"]["ci95"][1]
    assert a["explain"]["mean_score"] == 70 and a["attributions"] == {"grounding": 1, "modelling": 1}
    assert a["attributions_by_judge"] == {"modelling": 1} and runs["b"]["attributions_by_judge"] is None
    interface = {e["mode"]: e for e in a["interface_effect"]}
    assert (interface["build"]["a"], interface["build"]["b"]) == (FS, FLAT)
    assert interface["build"]["difference"] == pytest.approx(0.5) and interface["revise"][
        "difference"
    ] == pytest.approx(0.25)
    (legacy,) = a["legacy_code_effect"]
    assert (legacy["kind"], legacy["a"], legacy["b"], legacy["n"]) == ("legacy_code", FS, MODEL, 4)
    assert legacy["difference"] == pytest.approx(0.5) and legacy["ci95"][0] <= 0.5 <= legacy["ci95"][1]
    assert runs["b"]["interface_effect"] == [] and runs["b"]["legacy_code_effect"] == []
    corr = doc["explain_vs_build_revise"]
    # explain 70, 30, 50 against pooled pass rates 6/8, 1/8, 3/8: a perfectly ordered, near-linear relation
    assert corr["n_runs"] == 3 and corr["r"] == pytest.approx(0.9934, abs=1e-3)
    assert corr["ci95"] is not None and corr["ci95"][1] <= 1.0


def test_fewer_than_three_runs_have_no_correlation(results):
    data = load_results(results)
    del data["c"]
    corr = leaderboard(data, resamples=100)["explain_vs_build_revise"]
    assert corr["r"] is None and "at least 3 runs" in corr["note"]


def test_bad_input(results, tmp_path):
    with pytest.raises(InputError, match="results folder not found"):
        load_results(tmp_path / "none")
    with pytest.raises(InputError, match="run b has no objectives under condition revise-all_flat_both"):
        leaderboard(load_results(results), condition=FLAT, resamples=100)
    _write(results, "d", FS, "objectives", {"n": 1})
    with pytest.raises(InputError, match="not an OR-Space summary"):
        load_results(results)


def test_cli_writes_json_and_html(results, tmp_path):
    out, html = tmp_path / "lb.json", tmp_path / "lb.html"
    cmd = [sys.executable, "-m", "tcsexam", "orspace", "leaderboard", "--results", str(results)]
    proc = subprocess.run(
        cmd + ["--output", str(out), "--html", str(html), "--resamples", "200"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert f"a {FS}: build 3/4, revise 3/4; explain 70.00" in proc.stdout
    assert len(json.loads(out.read_text())["runs"]) == 3 and "Pearson r" in html.read_text()
    assert "grounding 1, modelling 1 (by the judge: modelling 1)" in html.read_text()


def test_the_explorer_shows_the_leaderboard_first(results, tmp_path):
    doc = leaderboard(load_results(results), resamples=100)
    (results / "leaderboard.json").write_text(json.dumps(doc))
    docs = collect_orspace(results, tmp_path)
    board = docs[0]
    assert board["kind"] == "leaderboard" and [r["workspace_id"] for r in board["rows"]] == ["a", "b", "c"]
    first = board["rows"][0]
    assert first["build_pass_at_1"] == 0.75 and first["interface_build"] == pytest.approx(0.5)
    assert first["legacy_code"] == pytest.approx(0.5) and first["attributions"] == "grounding 1, modelling 1"
    assert board["summary"]["explain_vs_build_revise_r"] == pytest.approx(doc["explain_vs_build_revise"]["r"])
    assert {d["kind"] for d in docs[1:]} == {"objectives", "explain"}
