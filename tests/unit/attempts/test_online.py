"""The online Solver protocol's input: judged records checked entry by entry, stored with the
harness's digests, scored by solver-score, and marked with where they came from."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from tcsexam import HARNESS_VERSION
from tcsexam.attempts.online import ONLINE_MARK, SIDECAR, check_online_records, ingest_online, records_source
from tcsexam.attempts.rows import solver_row
from tcsexam.cli import main
from tcsexam.errors import InputError
from tcsexam.records.digest import digest_problem
from tcsexam.records.integrity import file_sha256
from tcsexam.records.key import find_key
from tcsexam.tasks import load_task

ROOT = Path(__file__).resolve().parents[3]
TASK_FILE = ROOT / "config/test/tasks/maxcut-mqlib.yaml"  # instances G11, G14 (objective, maximize)
REFERENCE = ROOT / "config/test/reference.json"  # G11 [562, 552, 556], G14 [3042, 3056, 3048]


@pytest.fixture
def task():
    return load_task(TASK_FILE)


def _judged(tmp_path: Path, records, name="records.json") -> Path:
    path = tmp_path / "online" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(records if isinstance(records, str) else json.dumps(records))
    return path


def _ingest_cli(src: Path, out: Path) -> int:
    return main(
        [
            "attempts",
            "ingest-online",
            "--input",
            str(src),
            "--task-file",
            str(TASK_FILE),
            "--model",
            "m",
            "--attempt",
            "1",
            "--output",
            str(out),
        ]
    )


GOOD = [
    {"instance": "G14", "status": "timeout", "judge_note": "hit 10 s"},
    {"instance": "G11", "status": "ok", "A": 556, "reward": 0.98, "key": "judge-run-7"},
]


def test_ingest_keeps_every_field_adds_identity_and_digests(tmp_path, task):
    src = _judged(tmp_path, GOOD)
    prov = src.parent / "provenance.json"
    prov.write_text(json.dumps({"judge": "session judge", "version": "3.1", "date": "2026-11-30"}))
    out = tmp_path / "res" / "records.json"
    side = ingest_online(src, task, "m", "1", out, prov)
    recs = json.loads(out.read_text())
    assert [r["instance"] for r in recs] == ["G11", "G14"]  # the task's order
    for r in recs:
        assert digest_problem(r, find_key(out)) is None  # the harness's digest function
        assert r["task"] == "maxcut-mqlib" and r["attempt"] == "1" and r["key"] is None
        assert r["extra"][ONLINE_MARK] == file_sha256(src)
    assert recs[0]["A"] == 556 and recs[0]["reward"] == 0.98 and recs[0]["extra"]["judge_key"] == "judge-run-7"
    assert recs[1]["extra"]["judge_note"] == "hit 10 s"
    assert side["provenance"]["judge"] == "session judge" and side["input_sha256"] == file_sha256(src)
    assert json.loads((out.parent / SIDECAR).read_text())["provenance_sha256"] == file_sha256(prov)
    source = records_source(recs, out)
    assert source["protocol"] == "online" and source["origin"] == "online_input"
    assert source["input_sha256"] == file_sha256(src) and source["input"] == str(src)


def test_a_judges_fields_that_the_tree_sets_itself_are_kept_not_dropped(tmp_path, task):
    """A judge's own digest, task, attempt, schema_version (the tree sets these) and a termination
    outside the harness's vocabulary are kept as judge_<name>; before, the first four were dropped
    and the last stopped the ingest with a traceback."""
    odd = {
        "digest": "judge-sig",
        "task": "maxcut-G",
        "attempt": 7,
        "schema_version": "v9",
        "termination": "judge-limit",
    }
    src = _judged(tmp_path, [{"instance": "G11", "status": "timeout", **odd}, {"instance": "G14", "status": "crash"}])
    out = tmp_path / "res" / "records.json"
    assert _ingest_cli(src, out) == 0
    first = json.loads(out.read_text())[0]
    assert {k: first["extra"][f"judge_{k}"] for k in odd} == odd
    assert (first["task"], first["attempt"], first["termination"]) == ("maxcut-mqlib", "1", None)
    assert digest_problem(first, find_key(out)) is None
    # fields of the record's type with values it cannot hold (the anytime profiles read wall_s and
    # trace as numbers: a traceback in the plots before) are kept the same way
    bad = {"wall_s": "5s", "trace": "abc", "exit_code": "x", "extra": "note", "message": 12}
    src = _judged(tmp_path, [{"instance": "G11", "status": "timeout", **bad}, {"instance": "G14", "status": "crash"}])
    assert _ingest_cli(src, out) == 0
    first = json.loads(out.read_text())[0]
    assert {k: first["extra"][f"judge_{k}"] for k in bad} == bad
    assert first["wall_s"] is None and "trace" not in first and first["message"] == ""
    # values the record can hold stay the record's own fields
    good = {"termination": "walltime", "wall_s": 4.5, "trace": [[0.5, "ok", 550], [2, "invalid", None]]}
    src = _judged(tmp_path, [{"instance": "G11", "status": "timeout", **good}, {"instance": "G14", "status": "crash"}])
    assert _ingest_cli(src, out) == 0
    first = json.loads(out.read_text())[0]
    assert {k: first[k] for k in good} == good and "judge_trace" not in first["extra"]


def test_ingested_records_are_scored_and_say_they_are_online(tmp_path, task):
    src = _judged(tmp_path, [{"instance": "G11", "status": "ok", "A": 556}, {"instance": "G14", "status": "invalid"}])
    out = tmp_path / "res" / "records.json"
    ingest_online(src, task, "m", "1", out)
    rel = tmp_path / "res" / "relative.json"
    row, result = solver_row(
        model="m",
        task="maxcut-mqlib",
        attempt="1",
        protocol="online",
        records=out,
        reference=REFERENCE,
        relative_output=rel,
    )
    # G11: mu 556.67, s 5.03 < 2% of mu: scale 11.13 -> Phi((556 - mu) / scale); G14 invalid -> 0
    mu = (562 + 552 + 556) / 3
    scale = max(statistics.stdev([562, 552, 556]), 0.02 * mu)
    assert row.score_status == "valid" and row.solver_protocol == "online"
    assert row.score == pytest.approx(0.5 * 0.5 * (1 + math.erf((556 - mu) / scale / math.sqrt(2))), rel=1e-12)
    assert json.loads(rel.read_text())["records_source"]["protocol"] == "online"


@pytest.mark.parametrize(
    "records, needle",
    [
        ('[{"instance": "G11", "status": "ok", "A": 5', "malformed online records file"),
        ({"instance": "G11"}, "must be a JSON list"),
        ([{"instance": "G11", "status": "ok", "A": 1}, 7], "entry 2 is not a JSON object"),
        ([{"status": "timeout"}], "entry 1 has no instance name"),
        (
            [{"instance": "G99", "status": "timeout"}],
            "entry 1 (instance 'G99'): not an instance of task 'maxcut-mqlib'",
        ),
        (
            [{"instance": "G11", "status": "timeout"}, {"instance": "G11", "status": "ok", "A": 3}],
            "entry 2 (instance 'G11'): duplicate record of the instance (also entry 1)",
        ),
        ([{"instance": "G11", "status": "wrong"}], "entry 1 (instance 'G11'): status 'wrong' is not one of"),
        ([{"instance": "G11", "status": "ok"}], "status ok but A=None is not a finite number"),
        ([{"instance": "G11", "status": "ok", "A": 3, "reward": "x"}], "reward='x' is not a finite number"),
    ],
)
def test_malformed_input_is_one_line_naming_file_and_entry(tmp_path, capsys, task, records, needle):
    src = _judged(tmp_path, records)
    out = tmp_path / "res" / "records.json"
    rc = _ingest_cli(src, out)
    err = capsys.readouterr().err
    assert rc == 1 and str(src) in err and needle in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.parent.exists()  # nothing written


@pytest.mark.parametrize(
    "records, instance",
    [
        ([{"instance": "G11", "status": "ok", "A": 556}], "G14"),  # a missing eligible instance
        ([{"instance": "G11", "status": "ok", "A": 556}, {"instance": "G14", "status": "infrastructure_error"}], "G14"),
    ],
)
def test_missing_instance_or_infrastructure_error_is_an_incomplete_row_not_an_error(
    tmp_path, capsys, task, records, instance
):
    src = _judged(tmp_path, records)
    out = tmp_path / "res" / "records.json"
    rc = _ingest_cli(src, out)
    assert rc == 0 and "stays incomplete" in capsys.readouterr().err
    row, _ = solver_row(
        model="m",
        task="maxcut-mqlib",
        attempt="1",
        protocol="online",
        records=out,
        reference=REFERENCE,
        relative_output=tmp_path / "res" / "relative.json",
    )
    assert row.score_status == "judge_failed" and row.score is None
    assert f"instance {instance!r}" in row.note


def test_records_source_tells_harness_online_and_neither(tmp_path, task):
    harness = [{"instance": "G11", "status": "timeout", "key": "sha256:k1", "harness_version": HARNESS_VERSION}]
    src = records_source(harness, tmp_path / "records.json")
    assert src == {"protocol": "offline", "origin": "harness", "record_keys": {"G11": "sha256:k1"}}
    online = [{"instance": "G11", "status": "timeout", "extra": {ONLINE_MARK: "sha256:x"}}]
    assert records_source(online, tmp_path / "r.json")["protocol"] == "online"
    assert records_source([{"instance": "G11", "status": "timeout"}], tmp_path / "r.json") is None  # no mark
    assert records_source([*harness, *online], tmp_path / "r.json") is None  # a mix
    assert records_source([], tmp_path / "r.json") is None


def test_an_empty_judged_file_is_still_online_input(tmp_path, task):
    """An empty judged list has no record to carry the mark: its sidecar says where it came from,
    so relative.json and the manifest name the online input (the scorer still refuses it: every
    eligible instance is missing)."""
    src = _judged(tmp_path, [])
    out = tmp_path / "res" / "records.json"
    ingest_online(src, task, "m", "1", out)
    source = records_source([], out)
    assert source["protocol"] == "online" and source["input_sha256"] == file_sha256(src)
    assert source["input"] == str(src)
    row, _ = solver_row(
        model="m",
        task="maxcut-mqlib",
        attempt="1",
        protocol="online",
        records=out,
        reference=REFERENCE,
        relative_output=tmp_path / "res" / "relative.json",
    )
    assert row.score_status == "judge_failed" and "has no record" in row.note
    assert json.loads((tmp_path / "res" / "relative.json").read_text())["records_source"] == source
    # no sidecar (or one of a non-empty input): no protocol can be told
    assert records_source([], tmp_path / "elsewhere" / "records.json") is None


def test_unmarked_records_are_never_scored(tmp_path):
    from tcsexam.records.digest import record_digest
    from tcsexam.records.key import ensure_key

    recs = [{"instance": "G11", "status": "ok", "A": 556}, {"instance": "G14", "status": "ok", "A": 3048}]
    path = tmp_path / "records.json"
    key = ensure_key(tmp_path)
    path.write_text(json.dumps([{**r, "digest": record_digest(r, key)} for r in recs]))
    row, _ = solver_row(
        model="m",
        task="maxcut-mqlib",
        attempt="1",
        protocol="offline",
        records=path,
        reference=REFERENCE,
        relative_output=tmp_path / "relative.json",
    )
    assert row.score_status == "judge_failed" and "protocol cannot be told" in row.note


def test_check_online_records_accepts_solve_records():
    data = [{"instance": "a", "status": "ok", "solved": True}, {"instance": "b", "status": "crash"}]
    assert check_online_records(data, ["a", "b"], "solve", "f.json") == data
    with pytest.raises(InputError, match="'solved' must be true or false"):
        check_online_records([{"instance": "a", "status": "ok", "solved": "yes"}], ["a"], "solve", "f.json")


def test_heal_trusts_an_ingested_file_only_while_its_judged_input_is_unchanged(tmp_path, task):
    from tcsexam.workflow.heal import check_online_records

    src = _judged(tmp_path, GOOD)
    out = tmp_path / "res" / "records.json"
    ingest_online(src, task, "m", "1", out)
    assert check_online_records(out, "maxcut-mqlib", "1", src) is None
    assert "belongs to task" in check_online_records(out, "sat-satlib", "1", src)
    src.write_text(json.dumps(GOOD[:1]))  # the judge's file changed since it was ingested
    assert "was not ingested from the current" in check_online_records(out, "maxcut-mqlib", "1", src)
    src.write_text(json.dumps(GOOD))
    assert check_online_records(out, "maxcut-mqlib", "1", src) is None
    recs = json.loads(out.read_text())
    recs[1]["status"] = "ok"  # an edit after ingestion
    out.write_text(json.dumps(recs))
    assert "digest" in check_online_records(out, "maxcut-mqlib", "1", src)
