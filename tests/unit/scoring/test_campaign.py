"""Campaigns through `tcsexam score`: the Index of a small hidden-style campaign (online Solver
records, a replacement after an infrastructure failure, a provisional adoption) checked against a
value computed by hand from the spec; protocols that cannot be mixed up; the adoption lists."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from tcsexam import HARNESS_VERSION
from tcsexam.attempts.adoption import load_adoption
from tcsexam.attempts.online import ingest_online
from tcsexam.attempts.rows import AttemptRow, solver_row, write_rows, write_table
from tcsexam.cli import main
from tcsexam.records import InstanceRecord
from tcsexam.suites import load_suite
from tcsexam.tasks import load_task

ROOT = Path(__file__).resolve().parents[3]
SUITE = """id: mini
tracks:
  theorem: [th1, th2]
  solver: [maxcut-mqlib, sat-satlib]
  construction: [c1]
  open_conjecture: [o1]
"""
REFERENCE = {
    "schema_version": 1,
    "reference_id": "mini-ref-v1",
    "scale_floors": {"relative": 0.02, "absolute": 1e-9},
    "tasks": {
        "maxcut-mqlib": {
            "kind": "objective",
            "direction": "maximize",
            "instances": {"G11": [10, 12, 14], "G14": [100, 100, 100]},
        },
        "sat-satlib": {
            "kind": "solve",
            "direction": "maximize",
            "instances": {"uf50-01": [1, 1, 0], "uuf50-01": [0, 0, 0]},
        },
    },
}
ADOPTION = (
    "model,track,item,attempt,adoption_status,reason,replaces\n"
    "alpha,solver,maxcut-mqlib,3,selected,attempt 1 hit a node failure (infrastructure_error on G14),1\n"
    "alpha,solver,sat-satlib,2,selected_provisional,judge re-run pending,\n"
)
# the judged records of each Solver attempt (model alpha, two adopted repetitions per task)
ONLINE = {
    ("maxcut-mqlib", "1"): [
        {"instance": "G11", "status": "ok", "A": 14},
        {"instance": "G14", "status": "infrastructure_error"},
    ],
    ("maxcut-mqlib", "2"): [
        {"instance": "G11", "status": "ok", "A": 14},
        {"instance": "G14", "status": "ok", "A": 100},
    ],
    ("maxcut-mqlib", "3"): [
        {"instance": "G11", "status": "ok", "A": 11},
        {"instance": "G14", "status": "certificate_failed"},
    ],
    ("sat-satlib", "1"): [
        {"instance": "uf50-01", "status": "ok", "solved": True},
        {"instance": "uuf50-01", "status": "ok", "solved": False},
    ],
    ("sat-satlib", "2"): [
        {"instance": "uf50-01", "status": "timeout"},
        {"instance": "uuf50-01", "status": "ok", "solved": False},
    ],
}
OTHER = {("th1", "1"): 1.0, ("th1", "2"): 0.0, ("th2", "1"): 1.0, ("th2", "2"): 1.0, ("c1", "1"): 1.5, ("c1", "2"): 0.5}
OTHER.update({("o1", "1"): 0.0, ("o1", "2"): 0.0})


def phi(z: float) -> float:
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def expected_index() -> float:
    """The spec by hand: scale = max(sample sd, 2% |mu|, 1e-9), Phi(z), failures 0; attempt means,
    task means, track means; 30P + 30S + 30C + 10O."""

    def inst(values, a):
        mu = sum(values) / len(values)
        scale = max(statistics.stdev(values), 0.02 * abs(mu), 1e-9)
        return phi((a - mu) / scale)

    g11, g14 = [10, 12, 14], [100, 100, 100]
    maxcut_2 = (inst(g11, 14) + inst(g14, 100)) / 2  # z = 1 and z = 0
    maxcut_3 = (inst(g11, 11) + 0.0) / 2  # z = -0.5; certificate_failed scores 0
    maxcut = (maxcut_2 + maxcut_3) / 2  # attempt 1 is excluded (replaced by 3)
    uf, uuf = [1, 1, 0], [0, 0, 0]
    sat_1 = (inst(uf, 1) + inst(uuf, 0)) / 2  # solved = 1; unsolved on an all-0 reference: z = 0
    sat_2 = (0.0 + inst(uuf, 0)) / 2  # timeout scores 0
    sat = (sat_1 + sat_2) / 2
    p = ((1 + 0) / 2 + (1 + 1) / 2) / 2
    s = (maxcut + sat) / 2
    c = (1.5 + 0.5) / 2
    o = 0.0
    return 30 * p + 30 * s + 30 * c + 10 * o


@pytest.fixture
def campaign(tmp_path):
    """The campaign's inputs, as the workflow makes them, up to attempts.csv and cohort.json."""
    (tmp_path / "mini.yaml").write_text(SUITE)
    (tmp_path / "ref.json").write_text(json.dumps(REFERENCE))
    suite = load_suite(tmp_path / "mini.yaml")
    out = tmp_path / "run"
    rows = []
    for (task, attempt), records in ONLINE.items():
        src = tmp_path / "online" / "alpha" / task / attempt / "records.json"
        src.parent.mkdir(parents=True)
        src.write_text(json.dumps(records))
        base = out / "solver" / "alpha" / task / attempt
        ingest_online(src, load_task(ROOT / f"config/test/tasks/{task}.yaml"), "alpha", attempt, base / "records.json")
        row, _ = solver_row(
            model="alpha",
            task=task,
            attempt=attempt,
            protocol="online",
            records=base / "records.json",
            reference=tmp_path / "ref.json",
            relative_output=base / "relative.json",
        )
        rows.append(row)
    for (item, attempt), score in OTHER.items():
        track = suite.track_of[item]
        rows.append(AttemptRow("alpha", track, item, attempt, score, "selected", "valid", "original_task_score", ""))
    write_rows(tmp_path / "rows.json", rows)
    (tmp_path / "adoption.csv").write_text(ADOPTION)
    decisions = load_adoption(tmp_path / "adoption.csv", suite, {"alpha": ["1", "2"]})
    write_table([tmp_path / "rows.json"], out / "attempts.csv", decisions)
    cohort = {"suite": "mini", "solver_protocol": "online", "solver_reference_id": "mini-ref-v1"}
    (out / "cohort.json").write_text(json.dumps({**cohort, "models": {"alpha": {"attempts_per_task": 2}}}))
    return tmp_path


def _score(ws: Path, capsys, cohort="cohort.json", attempts="attempts.csv"):
    out = ws / "build" / "index.json"
    run = ws / "run"
    rc = main(
        [
            "score",
            "--suite",
            str(ws / "mini.yaml"),
            "--attempts",
            str(run / attempts),
            "--cohort",
            str(run / cohort),
            "--output",
            str(out),
            "--solver-scores",
            str(run / "solver"),
            "--bootstrap-resamples",
            "0",
        ]
    )
    err = capsys.readouterr().err
    return rc, (json.loads(out.read_text()) if rc == 0 else None), err


def test_hidden_style_campaign_gives_the_hand_computed_index(campaign, capsys):
    rc, index, err = _score(campaign, capsys)
    assert rc == 0, err
    alpha = index["models"]["alpha"]
    assert alpha["index"] == pytest.approx(expected_index(), rel=1e-12)
    assert alpha["status"] == index["status"] == "provisional"  # sat-satlib attempt 2 is provisional
    assert alpha["attempts"] == {"adopted": 8 + 4, "provisional": 1, "excluded": 1}
    assert alpha["replacements"] == ["3 replaces 1: attempt 1 hit a node failure (infrastructure_error on G14)"]
    assert alpha["excluded"] == [
        {
            "track": "solver",
            "item": "maxcut-mqlib",
            "attempt": "1",
            "reason": "replaced by 3: attempt 1 hit a node failure (infrastructure_error on G14)",
            "replaced_by": "3",
        }
    ]
    assert alpha["provisional"] == [
        {"track": "solver", "item": "sat-satlib", "attempt": "2", "reason": "judge re-run pending"}
    ]
    assert alpha["issues"] == []


def test_fewer_adopted_than_planned_is_incomplete_naming_the_repetition(campaign, capsys):
    run = campaign / "run"
    lines = (run / "attempts.csv").read_text().splitlines()
    # the replacement's row is gone: attempt 1 stays excluded, one repetition of maxcut-mqlib is missing
    (run / "short.csv").write_text("\n".join(line for line in lines if ",maxcut-mqlib,3," not in line) + "\n")
    rc, index, err = _score(campaign, capsys, attempts="short.csv")
    # the adoption columns name attempt 3 nowhere now: a valid table, an incomplete Index
    assert rc == 0, err
    alpha = index["models"]["alpha"]
    assert alpha["status"] == "incomplete" and alpha["index"] is None
    assert [(i["item"], i["reason"]) for i in alpha["issues"]] == [("maxcut-mqlib", "missing")]


def test_an_adopted_online_attempt_with_an_infrastructure_error_is_an_issue_naming_the_instance(campaign, capsys):
    run = campaign / "run"
    text = (run / "attempts.csv").read_text()
    # adopt attempt 1 (the infrastructure_error) instead of its replacement
    text = text.replace(",1,,excluded,judge_failed,", ",1,,selected,judge_failed,", 1)
    text = "\n".join(line for line in text.splitlines() if ",maxcut-mqlib,3," not in line) + "\n"
    (run / "adopt1.csv").write_text(
        text.replace(",replaced by 3: attempt 1 hit a node failure (infrastructure_error on G14),", ",,")
    )
    rc, index, err = _score(campaign, capsys, attempts="adopt1.csv")
    assert rc == 0, err
    (issue,) = index["models"]["alpha"]["issues"]
    assert (issue["model"], issue["item"], issue["attempt"], issue["instance"]) == ("alpha", "maxcut-mqlib", "1", "G14")
    assert "infrastructure_error" in issue["detail"] and index["models"]["alpha"]["index"] is None


def _one_line(rc, err, *needles):
    assert rc == 1 and err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


def test_ingested_records_cannot_be_scored_as_offline(campaign, capsys):
    run = campaign / "run"
    cohort = json.loads((run / "cohort.json").read_text())
    (run / "offline.json").write_text(json.dumps({**cohort, "solver_protocol": "offline"}))
    (run / "offline.csv").write_text((run / "attempts.csv").read_text().replace(",online,", ",offline,"))
    rc, _, err = _score(campaign, capsys, cohort="offline.json", attempts="offline.csv")
    _one_line(
        rc,
        err,
        "row 2 (alpha,solver,maxcut-mqlib,2)",
        "records of an online input (protocol online)",
        "never scored as offline",
    )


def test_harness_records_cannot_be_scored_as_online(campaign, capsys):
    """A harness run's records relabelled online: its relative.json says where they came from."""
    base = campaign / "run" / "solver" / "alpha" / "maxcut-mqlib" / "2"
    recs = [
        InstanceRecord(
            "G11", "ok", A=14.0, key="sha256:k1", harness_version=HARNESS_VERSION, task="maxcut-mqlib", attempt="2"
        ),
        InstanceRecord(
            "G14", "ok", A=100.0, key="sha256:k2", harness_version=HARNESS_VERSION, task="maxcut-mqlib", attempt="2"
        ),
    ]
    from tcsexam.records.key import ensure_key

    key = ensure_key(base)
    (base / "records.json").write_text(json.dumps([r.to_dict(key) for r in recs]))
    row, _ = solver_row(
        model="alpha",
        task="maxcut-mqlib",
        attempt="2",
        protocol="online",
        records=base / "records.json",
        reference=campaign / "ref.json",
        relative_output=base / "relative.json",
    )
    assert row.score_status == "valid"  # the same outcomes, so the same score in the table
    rc, _, err = _score(campaign, capsys)
    _one_line(
        rc,
        err,
        "row 2 (alpha,solver,maxcut-mqlib,2)",
        "records of a harness run (protocol offline)",
        "never scored as online",
    )


def test_a_relative_json_without_its_source_is_refused(campaign, capsys):
    path = campaign / "run" / "solver" / "alpha" / "sat-satlib" / "1" / "relative.json"
    data = json.loads(path.read_text())
    del data["records_source"], data["digest"]
    path.write_text(json.dumps(data))
    rc, _, err = _score(campaign, capsys)
    _one_line(rc, err, "(alpha,solver,sat-satlib,1)", "does not say where its records came from")


@pytest.mark.parametrize(
    "edit, needle",
    [
        (
            lambda t: t.replace("judge re-run pending", ""),
            "row 5 (alpha,solver,sat-satlib,2): the row is selected_provisional but gives no reason",
        ),
        (
            lambda t: t.replace(",replaced by 3: attempt 1 hit a node failure (infrastructure_error on G14),", ",,"),
            "the row is excluded but gives no reason",
        ),
        (
            lambda t: t.replace("(infrastructure_error on G14),1", "(infrastructure_error on G14),9"),
            "replaces attempt '9', which has no row",
        ),
        (lambda t: t.replace(",excluded,judge_failed,", ",selected,judge_failed,", 1), "but 2 are planned"),
    ],
)
def test_adoption_columns_are_checked_by_score(campaign, capsys, edit, needle):
    run = campaign / "run"
    (run / "edited.csv").write_text(edit((run / "attempts.csv").read_text()))
    rc, _, err = _score(campaign, capsys, attempts="edited.csv")
    _one_line(rc, err, needle)
