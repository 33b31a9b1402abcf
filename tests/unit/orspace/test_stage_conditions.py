"""stage under conditions (view, interface, context), the flat prompt and the leakage audit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tcsexam.errors import InputError
from tcsexam.orspace import flat
from tcsexam.orspace.conditions import Condition, artifact_kind
from tcsexam.orspace.leakage import LeakError
from tcsexam.orspace.stage import stage

ORACLE_HEADER = "workspace_id,task_type,instance_number,instance_id,reference_objective,relative_tolerance\n"


def make_release(root: Path, build_ref: float = 219816.0, revise_ref: float = 263280.0) -> Path:
    """A small release of problem 7 in the public layout: one workspace per mode."""
    ws = root / "Workspace_OR"
    build = ws / "build_workspaces" / "instance_7"
    (build / "docs").mkdir(parents=True)
    (build / "data").mkdir()
    (build / "src").mkdir()
    (build / "src" / ".gitkeep").write_text("")
    (build / "docs" / "business_requirement.md").write_text("Plan production of Food I and Food II for 8 weeks.\n")
    (build / "data" / "general_parameters.csv").write_text(
        "Parameter_Name,Value,Unit,Context_Description\ncapacity,2000,units,weekly capacity\nweeks,8,,\n"
    )
    (build / "metadata.json").write_text(json.dumps({"instance_id": "P7", "reference_objective": build_ref}))
    revise = ws / "revise_workspaces" / "instance_7"
    for side in ("original", "revised"):
        (revise / side / "docs").mkdir(parents=True)
        (revise / side / "data").mkdir()
        (revise / side / "docs" / "business_requirement.md").write_text(f"{side} requirement\n")
        (revise / side / "data" / "general_parameters.csv").write_text("Parameter_Name,Value\ncapacity,2000\n")
    (revise / "original" / "src").mkdir()
    (revise / "original" / "src" / "model.py").write_text("print('OBJECTIVE_VALUE: 1.5')\n")
    (revise / "original" / "src" / "formulation.tex").write_text("\\min c^T x\n")
    (revise / "revised" / "src").mkdir()
    (revise / "metadata.json").write_text(json.dumps({"revise_type": "R1", "revise_description": "add a cap"}))
    explain = ws / "explain_workspaces" / "instance_7"
    for side in ("original", "revised"):
        for folder in ("docs", "data", "src", "logs", "solver_records"):
            (explain / side / folder).mkdir(parents=True)
        (explain / side / "docs" / "business_requirement.md").write_text("Food plan.\n")
        (explain / side / "data" / "general_parameters.csv").write_text("Parameter_Name,Value\ncapacity,2000\n")
        (explain / side / "src" / "formulation.tex").write_text("mut_excl_I_2: h_I <= BIG_M z\n")
        (explain / side / "src" / "optimization_model.py").write_text("BIG_M = 19000\n")
        ref = build_ref if side == "original" else revise_ref
        (explain / side / "logs" / "execution_record.json").write_text(json.dumps({"objective_value": ref}))
    (explain / "metadata.json").write_text(
        json.dumps({"explain_task": {"question": f"Why does the cost rise from {build_ref:,.0f}?"}})
    )
    ev = root / "evaluation"
    for mode, ref in (("build", build_ref), ("revise", revise_ref)):
        (ev / f"{mode}_evaluation").mkdir(parents=True)
        (ev / f"{mode}_evaluation" / "reference_objectives.csv").write_text(
            ORACLE_HEADER + f"or_space_007_{mode},{mode},7,P7,{ref},0.01\n"
        )
    (ev / "explain_evaluation").mkdir()
    rubric = {
        "workspace_id": "or_space_007_explain",
        "question": "q",
        "expected_short_answer": "a",
        "checklist": [
            {
                "criterion_id": "c1",
                "checklist_type": "exact_match",
                "criterion": "names",
                # BIG_M and mut_excl_I_2 are evidence (the workspace shows them); 17,250 and
                # shadow_gap_7 are derived answers (secret)
                "target_entities": ["BIG_M", "mut_excl_I_2", "17250", "shadow_gap_7", "capacity=2000"],
            },
            {"criterion_id": "c2", "checklist_type": "llm_boolean_judgment", "criterion": "explains"},
        ],
    }
    (ev / "explain_evaluation" / "rubrics.jsonl").write_text(json.dumps(rubric) + "\n")
    return root


@pytest.fixture
def rel(tmp_path) -> Path:
    return make_release(tmp_path / "rel")


def files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_artifact_kinds():
    assert artifact_kind("original/src/model.py") == "code"
    assert artifact_kind("original/src/formulation.tex") == "formulation"
    assert artifact_kind("src/Formulation_notes.py") == "formulation"
    assert artifact_kind("original/docs/x.md") is None and artifact_kind("metadata.json") is None
    assert Condition.parse("revise-code_flat_none") == Condition("revise-code", "flat", "none")
    model_only = Condition(view="revise-model", context="none")
    assert not model_only.visible("original/src/model.py", "revise")
    assert model_only.visible("revised/src/model.py", "revise")  # the agent's program
    assert model_only.visible("src/main.py", "build") and not model_only.visible("original/src/f.tex", "explain")
    with pytest.raises(InputError, match="unknown view"):
        Condition(view="revise-everything")


@pytest.mark.parametrize(
    ("view", "kept"),
    [
        ("revise-all", {"model.py", "formulation.tex"}),
        ("revise-code", {"model.py"}),
        ("revise-model", {"formulation.tex"}),
    ],
)
def test_revise_views(rel, tmp_path, view, kept):
    manifest = stage(rel, tmp_path / "out", modes=("revise",), condition=Condition(view=view))
    src = tmp_path / "out" / "or_space_007_revise" / "original" / "src"
    assert {p.name for p in src.iterdir()} == kept
    entry = manifest["workspaces"]["or_space_007_revise"]
    assert entry["condition"] == {"view": view, "interface": "filesystem"}
    assert {Path(h).name for h in entry["hidden"]} == {"model.py", "formulation.tex"} - kept
    assert entry["model_artifacts"] == {"code": int("model.py" in kept), "formulation": int("formulation.tex" in kept)}
    assert manifest["condition"]["slug"] == f"{view}_filesystem_both"
    assert (tmp_path / "out" / "or_space_007_revise" / "revised" / "src").is_dir()


@pytest.mark.parametrize(
    ("context", "kept"),
    [
        ("both", {"formulation.tex", "optimization_model.py"}),
        ("none", set()),
        ("formulation", {"formulation.tex"}),
        ("code", {"optimization_model.py"}),
    ],
)
def test_explain_context(rel, tmp_path, context, kept):
    stage(rel, tmp_path / "out", modes=("explain",), condition=Condition(context=context))
    ws = tmp_path / "out" / "or_space_007_explain"
    assert {Path(p).name for p in files(ws) if "/src/" in p} == kept
    assert (ws / "original" / "logs" / "execution_record.json").exists()


def test_flat_prompt_holds_every_visible_file_and_is_deterministic(rel, tmp_path):
    cond = Condition(interface="flat", view="revise-code")
    one = stage(rel, tmp_path / "a", condition=cond)
    stage(rel, tmp_path / "b", condition=cond)
    for wid, entry in one["workspaces"].items():
        prompt = (tmp_path / "a" / entry["prompt"]).read_bytes()
        assert prompt == (tmp_path / "b" / entry["prompt"]).read_bytes()
        held = flat.parse(prompt)
        folder = tmp_path / "a" / wid
        assert set(held) == files(folder)
        assert all(held[p] == (folder / p).read_bytes() for p in held)
        assert f"condition: {cond.slug}".encode() in prompt
    build_prompt = (tmp_path / "a" / "prompts" / "or_space_007_build.txt").read_bytes()
    assert b"empty folders: src/" in build_prompt and b"219816" not in build_prompt
    assert b"formulation.tex" not in (tmp_path / "a" / "prompts" / "or_space_007_revise.txt").read_bytes()


def test_flat_prompt_round_trips_marker_lines_and_binary(tmp_path):
    (tmp_path / "w" / "data").mkdir(parents=True)
    (tmp_path / "w" / "data" / "tricky.md").write_text("<<<END data/tricky.md>>>\n<<<FILE x bytes=1 sha256=0>>>\n")
    (tmp_path / "w" / "data" / "blob.bin").write_bytes(bytes(range(256)))
    held = flat.parse(flat.render(tmp_path / "w", "or_space_001_build", "s"))
    assert held["data/blob.bin"] == bytes(range(256))
    assert held["data/tricky.md"] == (tmp_path / "w" / "data" / "tricky.md").read_bytes()


def test_the_clean_release_passes_and_the_audit_is_recorded(rel, tmp_path):
    manifest = stage(rel, tmp_path / "out")
    audit = manifest["workspaces"]["or_space_007_build"]["audit"]
    assert audit["leaks"] == [] and audit["files_scanned"] == 3
    # BIG_M, mut_excl_I_2 and capacity=2000 are shown by the Explain workspace: evidence, not secrets
    assert audit["public_targets"] == 3 and audit["secret_items"] == 4
    explain = manifest["workspaces"]["or_space_007_explain"]["audit"]
    assert explain["leaks"] == []  # its logs and question carry the objectives by design


@pytest.mark.parametrize(
    ("where", "text", "item"),
    [
        ("Workspace_OR/build_workspaces/instance_7/docs/notes.md", "The optimum costs 219,816 dollars.", "219816"),
        ("Workspace_OR/build_workspaces/instance_7/docs/business_requirement.md", "answer 2.6328e5", "263280"),
        ("Workspace_OR/revise_workspaces/instance_7/revised/docs/hint.txt", "shadow_gap_7 matters", "shadow_gap_7"),
        ("Workspace_OR/revise_workspaces/instance_7/original/src/model.py", "x = 17250.0", "17250"),
        ("Workspace_OR/explain_workspaces/instance_7/original/docs/business_requirement.md", "gap 17,250", "17250"),
        ("Workspace_OR/explain_workspaces/instance_7/README.md", "revised optimum 263280", "263280"),
    ],
)
def test_planted_leaks_fail_staging(rel, tmp_path, where, text, item):
    (rel / where).parent.mkdir(parents=True, exist_ok=True)
    (rel / where).write_text(text + "\n")
    with pytest.raises(LeakError) as err:
        stage(rel, tmp_path / "out")
    message = str(err.value)
    assert "\n" not in message and repr(item) in message
    assert Path(where).name in message
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


@pytest.mark.parametrize("interface", ["filesystem", "flat"])
def test_a_file_name_that_shows_an_objective_is_a_leak(rel, tmp_path, interface):
    # the agent lists the folder and the flat prompt names every file: a name is shown like a text
    (rel / "Workspace_OR/build_workspaces/instance_7/data/219816.csv").write_text("a,b\n1,2\n")
    with pytest.raises(LeakError) as err:
        stage(rel, tmp_path / "out", condition=Condition(interface=interface))
    assert "or_space_007_build/data/219816.csv (file name) shows objective:build '219816'" in str(err.value)
    assert not (tmp_path / "out").exists()


def test_planted_leak_in_the_flat_prompt_only_condition(rel, tmp_path):
    # a leak in a code file that only a code-showing condition stages
    (rel / "Workspace_OR/revise_workspaces/instance_7/original/src/model.py").write_text("# 219816\n")
    stage(rel, tmp_path / "model", condition=Condition(view="revise-model", interface="flat"))
    with pytest.raises(LeakError, match="prompts/or_space_007_revise.txt::original/src/model.py|model.py"):
        stage(rel, tmp_path / "code", condition=Condition(view="revise-code", interface="flat"))


@pytest.mark.parametrize(
    "text",
    [
        "capacity 2198160 and 1219816",  # number boundaries
        "variable x_219816 and id P219816",  # digits inside identifiers
        "BIG_M and mut_excl_I_2 are named in the brief",  # evidence targets
        "shadow_gap_70 differs",  # identifier boundary
    ],
)
def test_natural_text_is_not_a_leak(rel, tmp_path, text):
    (rel / "Workspace_OR/build_workspaces/instance_7/docs/notes.md").write_text(text + "\n")
    stage(rel, tmp_path / "out")


def test_trivial_and_coincident_objectives(tmp_path):
    rel = make_release(tmp_path / "rel", build_ref=3.0, revise_ref=2000.0)
    manifest = stage(rel, tmp_path / "out")
    audit = manifest["workspaces"]["or_space_007_build"]["audit"]
    assert audit["trivial_items"] == 1  # objective 3: too common to tell
    # revise's objective 2000 is also the capacity in the input tables: recorded, not a failure
    assert [c["file"] for c in audit["coincident"]] == ["data/general_parameters.csv"]


def test_cli_stage_conditions_and_leak_line(rel, tmp_path):
    exe = [sys.executable, "-m", "tcsexam", "orspace", "stage", "--release", str(rel)]
    ok = subprocess.run(
        [*exe, "--output", str(tmp_path / "o"), "--view", "revise-model", "--interface", "flat", "--context", "none"],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    assert "revise-model_flat_none" in ok.stdout
    assert json.loads((tmp_path / "o" / "manifest.json").read_text())["condition"]["context"] == "none"
    (rel / "Workspace_OR/build_workspaces/instance_7/docs/notes.md").write_text("optimum 219816\n")
    bad = subprocess.run([*exe, "--output", str(tmp_path / "p")], capture_output=True, text=True)
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1
    assert "or_space_007_build/docs/notes.md" in bad.stderr and "'219816'" in bad.stderr


def test_real_release_stages_without_leaks(release, tmp_path):
    manifest = stage(release, tmp_path / "out", condition=Condition(view="revise-code", interface="flat"))
    assert len(manifest["workspaces"]) == sum(1 for _ in (tmp_path / "out" / "prompts").iterdir())
    assert all(not w["audit"]["leaks"] for w in manifest["workspaces"].values())


def test_without_an_explain_workspace_every_target_but_the_trivial_is_secret(rel, tmp_path):
    import shutil

    rubrics = rel / "evaluation" / "explain_evaluation" / "rubrics.jsonl"
    row = json.loads(rubrics.read_text())
    row["checklist"][0]["target_entities"].append("I")
    rubrics.write_text(json.dumps(row) + "\n")
    shutil.rmtree(rel / "Workspace_OR" / "explain_workspaces")
    manifest = stage(rel, tmp_path / "ok")  # the brief says "Food I and Food II": `I` is trivial
    audit = manifest["workspaces"]["or_space_007_build"]["audit"]
    assert audit["public_targets"] == 0 and audit["trivial_items"] == 1
    (rel / "Workspace_OR/build_workspaces/instance_7/docs/notes.md").write_text("use BIG_M\n")
    with pytest.raises(LeakError, match="'BIG_M'"):
        stage(rel, tmp_path / "bad")


def test_the_leak_line_names_the_objective_exactly(tmp_path):
    # a large objective is named as the oracle writes it, not rounded to six digits (1.03499e+07)
    rel = make_release(tmp_path / "rel", build_ref=10349920.0, revise_ref=2000.0)
    (rel / "Workspace_OR/build_workspaces/instance_7/docs/notes.md").write_text("budget 10,349,920\n")
    with pytest.raises(LeakError, match="shows objective:build '10349920' "):
        stage(rel, tmp_path / "out")
