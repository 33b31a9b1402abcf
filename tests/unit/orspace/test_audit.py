"""audit-references (reference models re-solved, agreement with the reference and the alternatives)
and the three pass-rate views of score-objectives, on a constructed release and on the real one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tcsexam.errors import InputError
from tcsexam.orspace.audit import (
    AuditVerdict,
    audit_references,
    discover_models,
    load_disputes,
    model_header,
    run_model,
)
from tcsexam.orspace.effects import condition_effects, render_html
from tcsexam.orspace.objectives import score_objectives
from tcsexam.orspace.release import load_release, parse_workspace_id
from tcsexam.orspace.scoring_views import ReferenceEvidence, add_pass_rate_views

ORACLE_HEADER = "workspace_id,task_type,instance_number,instance_id,reference_objective,relative_tolerance\n"
DISPUTES_HEADER = (
    "workspace_id,instance_number,orspace_reference,alternative_reference,alternative_source,fix_type,"
    "relative_difference,same_text_as,decided_here,decided_status,alignment_check\n"
)
#: a tiny LP whose answer depends on a reading: max x subject to x <= cap (cap from the data), x whole or not
LP_MODEL = """
import pulp
from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "{reading}"


def build(workspace):
    cap = number(parameters(workspace), "cap")
    x = pulp.LpVariable("x", lowBound=0, cat="{cat}")
    prob = pulp.LpProblem("t", pulp.LpMaximize)
    prob += 10 * x
    prob += x <= cap
    return solve(prob)


if __name__ == "__main__":
    main(build)
"""


def _workspace(root: Path, n: int, cap: float) -> None:
    data = root / "Workspace_OR" / "build_workspaces" / f"instance_{n}" / "data"
    data.mkdir(parents=True)
    (data / "general_parameters.csv").write_text(
        f"Parameter_Name,Value,Unit,Context_Description\ncap,{cap},units,the cap\n"
    )


@pytest.fixture
def constructed(tmp_path):
    """A release of three Build items (901: cap 2.5, reference 25 = continuous; 902: cap 3, both
    readings 30; 903: no model), models for 901 and 902, and a disputes file naming 901 and 903."""
    root = tmp_path / "release"
    oracle = root / "evaluation" / "build_evaluation"
    oracle.mkdir(parents=True)
    (oracle / "reference_objectives.csv").write_text(
        ORACLE_HEADER
        + "or_space_901_build,build,901,X_901,25,0.01\n"
        + "or_space_902_build,build,902,X_902,30,0.01\n"
        + "or_space_903_build,build,903,X_903,7,0.01\n"
    )
    for n, cap in ((901, 2.5), (902, 3), (903, 1)):
        _workspace(root, n, cap)
    models = tmp_path / "models"
    for wid in ("or_space_901_build", "or_space_902_build"):
        (models / wid).mkdir(parents=True)
        (models / wid / "continuous.py").write_text(LP_MODEL.format(reading="continuous x", cat="Continuous"))
        (models / wid / "whole.py").write_text(LP_MODEL.format(reading="whole x", cat="Integer"))
    (models / "or_space_902_build" / "_shared.py").write_text("X = 1\n")  # shared code, not a reading
    disputes = tmp_path / "disputes.csv"
    disputes.write_text(
        DISPUTES_HEADER
        + 'or_space_901_build,901,25,20,"other cleaning",x,0.2,,20,optimal-reading-dependent,"checked"\n'
        + "or_space_903_build,903,7,,other cleaning,removed,,,,not-decided,checked\n"
    )
    return {"release": root, "models": models, "disputes": disputes}


def test_audit_finds_each_verdict_and_agreement(constructed):
    release = load_release(constructed["release"], ("build",))
    doc = audit_references(release, constructed["models"], load_disputes(constructed["disputes"]))
    items = {i["workspace_id"]: i for i in doc["items"]}
    assert [i["verdict"] for i in doc["items"]] == ["reading_dependent", "reproduced", "no_model"]
    assert doc["verdicts"] == {v.value: int(v in ("reading_dependent", "reproduced", "no_model")) for v in AuditVerdict}
    first = {Path(m["file"]).name: m for m in items["or_space_901_build"]["models"]}
    assert first["continuous.py"]["objective"] == pytest.approx(25)
    assert first["continuous.py"]["agrees_reference"] is True and first["continuous.py"]["agrees_alternative"] is False
    assert first["whole.py"]["objective"] == pytest.approx(20) and first["whole.py"]["solver"] == "highs"
    assert first["whole.py"]["agrees_reference"] is False and first["whole.py"]["agrees_alternative"] is True
    assert first["whole.py"]["agrees_decided_here"] is True and first["whole.py"]["reading"] == "whole x"
    assert items["or_space_901_build"]["evidenced_answers"] == pytest.approx([20, 25])
    assert items["or_space_901_build"]["alternative"] == {"value": 20.0, "source": "other cleaning"}
    assert [Path(m["file"]).name for m in items["or_space_902_build"]["models"]] == ["continuous.py", "whole.py"]
    assert items["or_space_902_build"]["disputed"] is False and items["or_space_902_build"]["decided_here"] is None
    assert items["or_space_903_build"]["models"] == [] and items["or_space_903_build"]["evidenced_answers"] == [7]


def test_a_failing_model_is_a_record_and_a_probe_is_no_evidence(constructed):
    folder = constructed["models"] / "or_space_902_build"
    (folder / "crash.py").write_text('READING = "crashes"\nraise SystemExit("model broke")\n')
    probe = LP_MODEL.format(reading="probe", cat="Integer")
    probe = probe.replace('READING = "probe"', 'READING = "probe"\nEVIDENCE = False').replace("10 * x", "99 * x")
    (folder / "probe.py").write_text(probe)
    release = load_release(constructed["release"], ("build",))
    doc = audit_references(release, constructed["models"], {}, ids=["or_space_902_build"], jobs=2)
    (item,) = doc["items"]
    models = {Path(m["file"]).name: m for m in item["models"]}
    assert models["crash.py"]["status"] == "Error" and "model broke" in models["crash.py"]["message"]
    assert models["probe.py"]["evidence"] is False and models["probe.py"]["objective"] == pytest.approx(297)
    assert item["verdict"] == "reproduced"  # the failure and the probe do not count
    assert item["evidenced_answers"] == pytest.approx([30])


def test_a_hanging_model_times_out(tmp_path):
    (tmp_path / "hang.py").write_text('import time\nREADING = "hangs"\ntime.sleep(600)\n')
    out = run_model(tmp_path / "hang.py", tmp_path, time_limit_s=1)
    assert out["status"] == "Timeout" and out["objective"] is None


def test_pass_rates_three_ways(constructed, tmp_path):
    release = load_release(constructed["release"], ("build",))
    audit = audit_references(release, constructed["models"], load_disputes(constructed["disputes"]))
    audit_path = tmp_path / "audit.json"
    audit_path.write_text(json.dumps(audit))
    preds = {
        "or_space_901_build": {"status": "Optimal", "objective": 20.0},  # the whole-number reading
        "or_space_902_build": {"status": "Optimal", "objective": 30.0},
        "or_space_903_build": {"status": "Optimal", "objective": 8.0},  # no evidence for 8
    }
    preds = {w: {"workspace_id": w, **p} for w, p in preds.items()}
    summary = score_objectives(release, preds, ("build",))
    evidence = ReferenceEvidence.load(constructed["disputes"], audit_path, release)
    add_pass_rate_views(summary, evidence)
    views = summary["pass_rates"]
    assert (views["as_released"]["passed"], views["as_released"]["n"]) == (1, 3)
    assert (views["disputed_left_out"]["passed"], views["disputed_left_out"]["n"]) == (1, 1)
    assert views["disputed_left_out"]["left_out"] == ["or_space_901_build", "or_space_903_build"]
    assert (views["any_evidenced"]["passed"], views["any_evidenced"]["rescued"]) == (2, ["or_space_901_build"])
    assert summary["pass_at_1_any_evidenced"] == pytest.approx(2 / 3)
    rows = {r["workspace_id"]: r for r in summary["rows"]}
    assert rows["or_space_901_build"]["evidenced_match"].endswith("whole.py")
    assert rows["or_space_903_build"]["passed_any_evidenced"] is False
    assert set(summary["inputs"]) >= {"disputes", "audit"} and len(summary["inputs"]["audit"]["sha256"]) == 64
    effects = condition_effects("m", {"revise-all_filesystem_both": summary}, resamples=200)
    build = effects["conditions"]["revise-all_filesystem_both"]["modes"]["build"]
    assert (build["disputed_left_out"]["n"], build["any_evidenced"]["passed"]) == (1, 2)
    assert "any evidenced answer" in render_html(effects)
    plain = add_pass_rate_views(score_objectives(release, preds, ("build",)), None)
    assert plain["pass_rates"]["disputed_left_out"] is None and plain["pass_at_1_any_evidenced"] is None
    assert plain["rows"][0]["disputed"] is None


def test_bad_inputs_name_file_and_line(constructed, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(DISPUTES_HEADER + "or_space_901_build,901,25,20,x,x,0.2,,20,maybe,checked\n")
    with pytest.raises(InputError, match="line 2: or_space_901_build: decided_status 'maybe'"):
        load_disputes(bad)
    bad.write_text(DISPUTES_HEADER + "or_space_901_revise,901,25,20,x,x,0.2,,20,optimal,checked\n")
    with pytest.raises(InputError, match="line 2: 'or_space_901_revise' is not a Build workspace id"):
        load_disputes(bad)
    (constructed["models"] / "or_space_902_build" / "no_reading.py").write_text("X = 1\n")
    with pytest.raises(InputError, match="no_reading.py: reference model has no module-level READING"):
        model_header(constructed["models"] / "or_space_902_build" / "no_reading.py")
    (constructed["models"] / "notes").mkdir()
    with pytest.raises(InputError, match="must be named by a Build workspace id"):
        discover_models(constructed["models"])
    (constructed["models"] / "notes").rmdir()
    other = tmp_path / "other.csv"
    other.write_text(DISPUTES_HEADER + "or_space_901_build,901,26,20,x,x,0.2,,20,optimal,checked\n")
    release = load_release(constructed["release"], ("build",))
    with pytest.raises(InputError, match="orspace_reference 26.0 is not the oracle's 25.0"):
        audit_references(release, constructed["models"], load_disputes(other))


def test_cli_writes_the_audit_with_input_versions(constructed, tmp_path):
    out = tmp_path / "audit.json"
    cmd = [sys.executable, "-m", "tcsexam", "orspace", "audit-references", "--release", str(constructed["release"])]
    cmd += ["--models", str(constructed["models"]), "--disputes", str(constructed["disputes"]), "--output", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "audited 3 Build items with 4 reference models" in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["inputs"]["disputes"]["path"] == str(constructed["disputes"])
    assert len(doc["inputs"]["oracle"]["sha256"]) == 64


@pytest.mark.parametrize(
    ("wid", "verdict", "reference_reading"),
    [
        ("or_space_023_build", "reading_dependent", "fixed_costs_always.py"),
        ("or_space_040_build", "not_reproduced", None),
        ("or_space_091_build", "reproduced", "whole_units.py"),
    ],
)
def test_project_models_on_the_real_release(release, project_root, wid, verdict, reference_reading):
    rel = load_release(release, ("build",))
    doc = audit_references(rel, project_root / "references" / "orspace-models", {}, ids=[wid])
    (item,) = doc["items"]
    assert item["verdict"] == verdict
    agreeing = [Path(m["file"]).name for m in item["models"] if m["agrees_reference"]]
    assert (reference_reading in agreeing) if reference_reading else not agreeing


def test_every_disputed_item_but_one_has_a_model(release, project_root):
    disputes = load_disputes(release / "disputes" / "build_reference_disputes.csv")
    models = discover_models(project_root / "references" / "orspace-models")
    assert set(disputes) - set(models) == {"or_space_002_build"}  # no objective to model (docs/orspace.md)


MODELS_DIR = Path(__file__).resolve().parents[3] / "references" / "orspace-models"
#: the verdict of every public Build item whose project models do not all reproduce its reference,
#: as `audit-references --all` measured it (docs/orspace.md "audit-references"); every other
#: item with a models folder is `reproduced`
MEASURED = {
    **dict.fromkeys(
        (5, 6, 11, 15, 22, 23, 29, 45, 56, 57, 58, 69, 73, 76, 82, 88, 89, 94, 98), AuditVerdict.READING_DEPENDENT
    ),
    **dict.fromkeys((40, 71), AuditVerdict.NOT_REPRODUCED),
    **dict.fromkeys((65, 74), AuditVerdict.NO_MODEL),  # probes only: the text states no objective
}


@pytest.fixture(scope="module")
def build_release(release):
    return load_release(release, ("build",))


@pytest.mark.slow
@pytest.mark.parametrize("wid", sorted(discover_models(MODELS_DIR)))
def test_every_project_model_runs_and_gives_its_measured_verdict(build_release, wid):
    """Each model file of the project names its reading, runs on its workspace without an error or a
    timeout, and the item's verdict is the one docs/orspace.md reports."""
    if wid not in build_release.oracle:
        pytest.skip(f"{wid} is not a Build item of the public release (a demo item)")
    (item,) = audit_references(build_release, MODELS_DIR, {}, ids=[wid], time_limit_s=120)["items"]
    for model in item["models"]:
        assert model["reading"], model["file"]
        assert model["status"] not in ("Error", "Timeout"), (model["file"], model["message"])
    assert item["verdict"] == MEASURED.get(parse_workspace_id(wid)[0], AuditVerdict.REPRODUCED)
