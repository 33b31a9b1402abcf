"""The attribution judge: rows the evidence leaves unknown are put before a judge model through the
openai client against the scripted OpenAI-compatible server (tests/unit/agents/openai_server.py);
what it names is kept with `attributed_by: judge`, a malformed reply or a provider error leaves the
row unknown with the error named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tcsexam.orspace.attribution import AttributedBy, Attribution, attribute_rows
from tcsexam.orspace.attribution_judge import PROMPT_SHA256, SYSTEM_PROMPT, AttributionJudge
from tcsexam.orspace.judge import JudgeClient, JudgeSettings
from tcsexam.orspace.objectives import score_objectives
from tcsexam.orspace.release import load_release
from tcsexam.orspace.scoring_views import ReferenceEvidence

sys.path.insert(0, str(Path(__file__).parents[1] / "agents"))
from openai_server import ScriptedOpenAI, completion, error  # noqa: E402

ORACLE_HEADER = "workspace_id,task_type,instance_number,instance_id,reference_objective,relative_tolerance\n"
PARAMS = "Parameter_Name,Value,Unit,Context_Description\nhours_available,40,hours,machine hours\n"
TABLE = "Product,Profit,Hours,Max_Demand\nP,3,1,30\nQ,5,2,10\n"
REQUIREMENTS = "# Product mix\nMaximise profit within the machine hours; never sell more than the demand.\n"
REFERENCE = 115.0
#: reads both data files, but prints a number of its own: no solver model to check (unknown)
OPAQUE = (
    "import csv\n"
    "rows = list(csv.DictReader(open('../data/table_1.csv')))\n"
    "params = list(csv.DictReader(open('../data/general_parameters.csv')))\n"
    "print('Status: Optimal')\nprint('OBJECTIVE_VALUE: 100')\n"
)
#: reads nothing: grounding, decided by the evidence (never put before the judge)
UNGROUNDED = "print('Status: Optimal')\nprint('OBJECTIVE_VALUE: 100')\n"
PROGRAMS = {1: OPAQUE, 2: UNGROUNDED, 3: OPAQUE}
READING = "every unit sold earns its profit; demand caps each product"


def make_release(root: Path) -> Path:
    oracle = root / "evaluation" / "build_evaluation"
    oracle.mkdir(parents=True)
    lines = "".join(f"or_space_{n:03d}_build,build,{n},T{n},{REFERENCE},0.01\n" for n in PROGRAMS)
    (oracle / "reference_objectives.csv").write_text(ORACLE_HEADER + lines)
    for n, program in PROGRAMS.items():
        ws = root / "Workspace_OR" / "build_workspaces" / f"instance_{n}"
        for folder in ("data", "src", "docs"):
            (ws / folder).mkdir(parents=True)
        (ws / "data" / "general_parameters.csv").write_text(PARAMS)
        (ws / "data" / "table_1.csv").write_text(TABLE)
        (ws / "docs" / "business_requirement.md").write_text(REQUIREMENTS)
        (ws / "src" / "solve.py").write_text(program)
    return root


def summary_of(root: Path) -> dict:
    release = load_release(root, ("build",))
    preds = {w: {"workspace_id": w, "status": "Optimal", "objective": 100.0} for w in release.oracle}
    return score_objectives(release, preds, ("build",))


def evidence_with_model(tmp_path: Path) -> ReferenceEvidence:
    model = tmp_path / "models" / "or_space_001_build" / "demand_caps.py"
    model.parent.mkdir(parents=True)
    model.write_text(f'"""A reference model."""\n\nREADING = "{READING}"\n')
    return ReferenceEvidence(answers={"or_space_001_build": [(REFERENCE, "reference"), (120.0, str(model))]})


def reply(attribution: str, reason: str = "the program prints 100 instead of solving") -> str:
    return json.dumps({"attribution": attribution, "reason": reason})


def judge_of(server: ScriptedOpenAI, attempts: int = 2, cache: Path | None = None) -> AttributionJudge:
    settings = JudgeSettings(
        base_url=server.base_url, model="attr-judge", api_key="k", timeout_s=10, max_attempts=attempts, backoff_s=0.0
    )
    settings.cache_dir = cache
    return AttributionJudge(JudgeClient(settings, sleep=lambda s: None))


@pytest.fixture
def release(tmp_path) -> Path:
    return make_release(tmp_path / "release")


def test_the_judge_decides_only_what_the_evidence_leaves_unknown(release, tmp_path):
    summary = summary_of(release)
    with ScriptedOpenAI([completion(reply("modelling")), completion(reply("unknown", "cannot tell"))]) as server:
        attribute_rows(summary, release, None, evidence_with_model(tmp_path), judge=judge_of(server))
        requests = list(server.requests)
    rows = {r["workspace_id"]: r for r in summary["rows"]}
    assert len(requests) == 2  # 001 and 003; 002 is grounding by the evidence
    assert rows["or_space_002_build"]["attribution"] == Attribution.GROUNDING
    assert rows["or_space_002_build"]["attributed_by"] == AttributedBy.EVIDENCE
    assert "attribution_judge" not in rows["or_space_002_build"]
    first = rows["or_space_001_build"]
    assert (first["attribution"], first["attributed_by"]) == (Attribution.MODELLING, AttributedBy.JUDGE)
    entry = first["attribution_judge"]
    assert entry["model"] == "attr-judge" and entry["prompt_sha256"] == PROMPT_SHA256
    assert entry["reason"] == "the program prints 100 instead of solving"
    assert json.loads(entry["raw"]) == {"attribution": "modelling", "reason": entry["reason"]}
    assert first["attribution_evidence"]["grounding"]["unread"] == []  # the evidence stays on the record
    third = rows["or_space_003_build"]
    assert (third["attribution"], third["attributed_by"]) == (Attribution.UNKNOWN, AttributedBy.JUDGE)
    assert summary["attributions"]["modelling"] == 1 and summary["attributions"]["unknown"] == 1
    assert summary["attributed_by"] == {"evidence": 1, "judge": 2}
    assert summary["attribution_judge"]["asked"] == ["or_space_001_build", "or_space_003_build"]
    assert summary["attribution_judge"]["errors"] == []
    # what the judge read: requirements, program, data, the evidence and the reference model's reading
    body = requests[0]["body"]
    assert body["messages"][0]["content"] == SYSTEM_PROMPT and body["model"] == "attr-judge"
    sent = json.loads(body["messages"][1]["content"])
    assert sent["requirements"] == {"docs/business_requirement.md": REQUIREMENTS}
    assert sent["program"] == {"src/solve.py": OPAQUE}
    assert set(sent["data"]) == {"data/general_parameters.csv", "data/table_1.csv"}
    assert sent["evidence"]["grounding"]["read"] == ["data/general_parameters.csv", "data/table_1.csv"]
    assert sent["task"]["objective"] == 100.0 and sent["task"]["reference_objective"] == REFERENCE
    models = sent["reference_models"]
    assert models["release_reference"] == REFERENCE
    assert [(m["reading"], m["objective"]) for m in models["models"]] == [(READING, 120.0)]
    # the third item has no reference model: only the release's value
    assert json.loads(requests[1]["body"]["messages"][1]["content"])["reference_models"]["models"] == []


def test_a_malformed_reply_leaves_the_row_unknown_with_the_error_and_the_reply(release):
    summary = summary_of(release)
    bad = reply("hallucination")  # not a member of the vocabulary
    script = [completion(bad), completion("not json at all"), completion(reply("grounding"))]
    with ScriptedOpenAI(script) as server:
        attribute_rows(summary, release, None, judge=judge_of(server, attempts=2))
        assert server.count == 3
    rows = {r["workspace_id"]: r for r in summary["rows"]}
    first = rows["or_space_001_build"]  # two malformed replies: every attempt spent
    assert (first["attribution"], first["attributed_by"]) == (Attribution.UNKNOWN, AttributedBy.EVIDENCE)
    assert "malformed judgment: content is not JSON" in first["attribution_judge"]["error"]
    assert first["attribution_judge"]["raw"] == "not json at all"
    third = rows["or_space_003_build"]  # grounding on the first try, then nothing more asked
    assert (third["attribution"], third["attributed_by"]) == (Attribution.GROUNDING, AttributedBy.JUDGE)
    assert summary["attribution_judge"]["errors"] == ["or_space_001_build"]


def test_a_provider_error_is_never_the_models(release):
    summary = summary_of(release)
    with ScriptedOpenAI([error(500), error(503), error(401, "bad key")]) as server:
        attribute_rows(summary, release, None, judge=judge_of(server, attempts=2))
    rows = {r["workspace_id"]: r for r in summary["rows"]}
    for wid, words in (("or_space_001_build", "HTTP 503"), ("or_space_003_build", "HTTP 401")):
        row = rows[wid]
        assert (row["attribution"], row["attributed_by"]) == (Attribution.UNKNOWN, AttributedBy.EVIDENCE)
        assert words in row["attribution_judge"]["error"], row["attribution_judge"]
        assert "attribution" not in row["attribution_judge"]
    assert summary["attribution_judge"]["errors"] == ["or_space_001_build", "or_space_003_build"]
    assert summary["attribution_judge"]["decided"] == {
        "grounding": 0,
        "modelling": 0,
        "invented_constraint": 0,
        "unknown": 0,
    }


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tcsexam", "orspace", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )


def test_score_objectives_attribution_judge_cli(release, tmp_path):
    preds = tmp_path / "run" / "predictions.jsonl"
    preds.parent.mkdir()
    preds.write_text(
        "".join(
            json.dumps({"workspace_id": f"or_space_{n:03d}_build", "status": "Optimal", "objective": 100.0}) + "\n"
            for n in PROGRAMS
        )
    )
    out = tmp_path / "objectives.json"
    base = ["score-objectives", "--release", str(release), "--predictions", str(preds), "--modes", "build"]
    base += ["--workspaces", str(release), "--attribute", "--attribution-judge", "--output", str(out)]
    cache = ["--judge-cache", str(tmp_path / "cache"), "--judge-attempts", "1"]
    no_env = {"TCSEXAM_JUDGE_BASE_URL": "", "OPENAI_BASE_URL": "", "TCSEXAM_JUDGE_MODEL": "", "OPENAI_MODEL": ""}
    proc = cli(*base, env=no_env)
    assert proc.returncode == 2 and "no judge endpoint" in proc.stderr and not out.exists()
    with ScriptedOpenAI([completion(reply("modelling")), error(401, "bad key")]) as server:
        env = {"TCSEXAM_JUDGE_BASE_URL": server.base_url, "TCSEXAM_JUDGE_MODEL": "attr-judge"}
        proc = cli(*base, *cache, env=env)
        assert proc.returncode == 1, proc.stderr
        assert "1 attribution judge error(s), first or_space_003_build: judge endpoint" in proc.stderr
        doc = json.loads(out.read_text())
        assert doc["attribution_judge"]["model"] == "attr-judge"
        assert doc["attribution_judge"]["prompt_sha256"] == PROMPT_SHA256
        assert doc["attribution_judge"]["errors"] == ["or_space_003_build"]
    # the rerun asks only the failed item: the first reply comes from the cache
    with ScriptedOpenAI([completion(reply("invented_constraint", "adds a cap"))]) as server:
        env = {"TCSEXAM_JUDGE_BASE_URL": server.base_url, "TCSEXAM_JUDGE_MODEL": "attr-judge"}
        proc = cli(*base, *cache, env=env)
        assert proc.returncode == 0, proc.stderr
        assert server.count == 1
    rows = {r["workspace_id"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["or_space_001_build"]["attribution"] == "modelling"
    assert rows["or_space_003_build"]["attribution"] == "invented_constraint"
    assert "attribution judge attr-judge: asked 2, decided modelling 1, invented_constraint 1" in proc.stdout
