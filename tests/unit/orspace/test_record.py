"""WorkspaceRecord: the typed OR-Space execution record, and the one termination -> status mapping."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from tcsexam.orspace.record import SCHEMA_VERSION, WorkspaceRecord, outcome_verdict
from tcsexam.records import Termination
from tcsexam.records.digest import digest_problem
from tcsexam.records.key import KEY_FILE, ensure_key
from tcsexam.records.store import RecordStore

V1_RECORDS = Path(__file__).parent / "data" / "records-v1"

FIELDS = [
    "schema_version",
    "workspace_id",
    "mode",
    "workspace",
    "limits",
    "sandbox",
    "harness_version",
    "key",
    "entry_point",
    "exit_code",
    "signal",
    "termination",
    "wall_s",
    "cpu_s",
    "peak_mem_mb",
    "stdout_tail",
    "stderr_tail",
    "limiter",
    "status_source",
    "solver",
    "condition",
    "message",
    "status",
    "objective",
    "failure_mode",
]


def sample(**fields) -> WorkspaceRecord:
    base = dict(
        workspace_id="or_space_007_revise",
        mode="revise",
        workspace="/w/or_space_007_revise",
        limits={"wall_s": 3.0, "mem_mb": 4096},
        sandbox="local",
        harness_version="1",
        key="sha256:ab",
        entry_point="revised/src/main.py",
        exit_code=0,
        signal=None,
        termination="exit",
        wall_s=0.25,
        cpu_s=0.2,
        peak_mem_mb=31.5,
        stdout_tail="OBJECTIVE_VALUE: 12.5\n",
        stderr_tail="",
        limiter="light",
        status_source="stdout_status_line",
        message="",
        status="Optimal",
        objective=12.5,
        failure_mode=None,
    )
    base.update(fields)
    return WorkspaceRecord(**base)


def test_round_trip_through_json_keeps_every_field_and_the_digest(tmp_path):
    key = ensure_key(tmp_path)
    record = sample()
    data = json.loads(json.dumps(record.to_dict(key)))
    assert list(data) == [*FIELDS, "digest"]  # the fields of the former dict records, then the digest
    assert digest_problem(data, key) is None
    back = WorkspaceRecord.from_dict(data)
    assert back.digest == data["digest"] and dataclasses.replace(back, digest=None) == record
    assert back.to_dict(key) == data
    assert "digest" not in record.to_dict()  # no key, no digest
    assert record.prediction() == {
        "workspace_id": "or_space_007_revise",
        "status": "Optimal",
        "objective": 12.5,
        "failure_mode": None,
        "solver": None,
        "condition": None,
    }


def test_a_version_1_record_with_its_time_limit_beside_its_limits_still_reads(tmp_path):
    """Version 1 records held the time limit twice (`time_limit_s` beside `limits`); version 2
    dropped it. Such a record passes its digest and reads as the same record, of version 2; a
    differing one is not silently dropped, and a version 2 record may not hold the field."""
    key = ensure_key(tmp_path)
    record = sample()
    earlier = record._written({**record.to_dict(), "schema_version": 1, "time_limit_s": 3.0}, key)
    assert digest_problem(earlier, key) is None
    assert dataclasses.replace(WorkspaceRecord.from_dict(earlier), digest=None) == record
    assert record.schema_version == SCHEMA_VERSION == 2
    # written between b7988e4 (which dropped the field) and version 2: version 1 without the field
    between = record._written({**record.to_dict(), "schema_version": 1}, key)
    assert dataclasses.replace(WorkspaceRecord.from_dict(between), digest=None) == record
    with pytest.raises(TypeError, match="time_limit_s.*5.0"):
        WorkspaceRecord.from_dict({**earlier, "time_limit_s": 5.0})
    with pytest.raises(TypeError, match="unknown field 'time_limit_s'"):
        WorkspaceRecord.from_dict({**earlier, "schema_version": 2})
    with pytest.raises(TypeError, match="schema_version 3"):
        WorkspaceRecord.from_dict({**record.to_dict(), "schema_version": 3})


def test_the_files_version_1_wrote_read_through_the_store(tmp_path):
    """Records written by the harness before version 2 (tests/unit/orspace/data/records-v1, made by
    the record module of b7988e4^ with its key) pass their digests, are reused under their key,
    and read as version 2 records; rewritten, they are version 2 files without `time_limit_s`."""
    tree = tmp_path / "run"
    shutil.copytree(V1_RECORDS, tree / "records")
    (tree / "records" / "record-key").rename(tree / KEY_FILE)
    (tree / KEY_FILE).chmod(0o600)
    store = RecordStore(tree / "records", record_type=WorkspaceRecord)
    found = {path.stem: record for path, record in store.records()}
    assert sorted(found) == ["or_space_007_revise", "or_space_008_build"]
    ok, missing = found["or_space_007_revise"], found["or_space_008_build"]
    assert ok.schema_version == missing.schema_version == SCHEMA_VERSION
    assert ok.limits["wall_s"] == 3.0 and (ok.status, ok.objective, ok.limiter) == ("Optimal", 12.5, "light")
    assert missing.failure_mode == "missing_output" and missing.limiter is None
    assert store.lookup("or_space_007_revise", "sha256:ab").reason == "reused"
    store.write(ok)
    data = json.loads((tree / "records" / "or_space_007_revise.json").read_text())
    assert data["schema_version"] == 2 and "time_limit_s" not in data
    assert dataclasses.replace(WorkspaceRecord.from_dict(data), digest=None) == dataclasses.replace(ok, digest=None)


def test_a_record_of_no_run_has_no_limiter_field(tmp_path):
    key = ensure_key(tmp_path)
    missing = sample(limiter=None, exit_code=None, termination=None, status="Missing", failure_mode="missing_output")
    data = missing.to_dict(key)
    assert "limiter" not in data and digest_problem(data, key) is None
    assert WorkspaceRecord.from_dict(data) == dataclasses.replace(missing, digest=data["digest"])


def test_tries_are_written_only_after_a_retry_and_infrastructure_errors_say_so(tmp_path):
    infra = sample(status=None, objective=None, failure_mode="infrastructure_error", message="sandbox failed: x")
    assert infra.infrastructure_error and not sample().infrastructure_error
    again = infra.retried(3)
    assert again.message == "sandbox failed: x (after 3 tries)" and again.tries == 3
    data = again.to_dict(ensure_key(tmp_path))
    assert data["tries"] == 3 and list(data)[-2:] == ["tries", "digest"]
    assert WorkspaceRecord.from_dict(data).tries == 3
    ok = sample().retried(2)
    assert ok.message == "" and ok.tries == 2


def test_shape_problems_name_what_is_wrong():
    assert WorkspaceRecord.shape_problem(sample().to_dict()) is None
    assert "workspace_id" in WorkspaceRecord.shape_problem({"status": "ok"})
    assert "unknown failure_mode" in WorkspaceRecord.shape_problem({"workspace_id": "x", "failure_mode": "boom"})
    with pytest.raises(TypeError, match="unknown field"):
        WorkspaceRecord.from_dict({**sample().to_dict(), "surprise": 1})


def derived(status=None, objective=None, note=""):
    return {"status": status, "objective": objective, "status_source": "x", "note": note}


@pytest.mark.parametrize(
    ("termination", "exit_code", "signal", "reported", "expected"),
    [
        ("walltime", None, 9, derived("Optimal", 1.0), ("Timeout", "timeout")),
        ("cputime", None, 24, derived(), ("Timeout", "timeout")),
        ("memory", None, 9, derived(), ("Error", "execution_error")),
        ("output", None, 9, derived(), ("Error", "execution_error")),
        ("nproc", None, 9, derived(), ("Error", "execution_error")),
        ("signal", None, 11, derived(), ("Error", "execution_error")),
        ("exit", 3, None, derived("Optimal", 1.0), ("Error", "execution_error")),
        ("exit", 0, None, derived(), ("Missing", "missing_output")),
        ("exit", 0, None, derived("Optimal", 1.0), ("Optimal", None)),
        ("exit", 0, None, derived("Optimal"), ("Optimal", "missing_output")),
        ("exit", 0, None, derived("Infeasible"), ("Infeasible", "infeasible")),
        ("exit", 0, None, derived("Not Optimal", 2.0), ("Not Optimal", "not_optimal")),
    ],
)
def test_outcome_verdict_maps_every_termination(termination, exit_code, signal, reported, expected):
    verdict = outcome_verdict(Termination(termination), exit_code, signal, reported, 3.0)
    assert (verdict["status"], verdict["failure_mode"]) == expected
    if expected[0] in ("Timeout", "Error", "Missing"):
        assert verdict["message"]  # the harness says why
    if expected[0] == "Timeout":
        assert verdict["objective"] is None and "3 s wall" in verdict["message"]
    if termination == "signal":
        assert verdict["message"] == "killed by signal 11"


@pytest.mark.parametrize(
    ("status", "solver", "expected"),
    [
        # the solver stopped on its own limit, the program ended inside the harness's: not optimal
        ("TIME_LIMIT", "gurobi", "not_optimal"),
        ("TIMEOUT", "copt", "not_optimal"),
        ("Time limit reached", "highs", "not_optimal"),
        ("SOLUTION_LIMIT", "gurobi", "not_optimal"),
        # "infeasible or unbounded": Gurobi's presolve says it of infeasible models, COPT and HiGHS of unbounded MIPs
        ("INF_OR_UNBD", "gurobi", "infeasible"),
        ("INF_OR_UNB", "copt", "unbounded"),
        ("Primal infeasible or unbounded", "highs", "unbounded"),
        ("Primal infeasible or unbounded", None, "unbounded"),
        ("INFEASIBLE", "gurobi", "infeasible"),
        ("UNBOUNDED", "copt", "unbounded"),
    ],
)
def test_outcome_verdict_reads_the_solvers_status_words(status, solver, expected):
    verdict = outcome_verdict(Termination.EXIT, 0, None, derived(status, 1.0), 3.0, solver)
    assert (verdict["status"], verdict["failure_mode"]) == (status, expected)
    if "time" in status.lower():
        assert "own limit" in verdict["message"]
