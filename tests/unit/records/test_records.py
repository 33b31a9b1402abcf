"""Records typed with their vocabularies (`Status`, `Termination`, OR-Space's `FailureMode`):
coerced at construction, on assignment and on load, written as the same strings, sealed with the
same digests as before the types (golden values computed by the string-typed records)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcsexam.orspace.objectives import FailureMode
from tcsexam.orspace.record import WorkspaceRecord
from tcsexam.records import InstanceRecord, Status, Termination
from tcsexam.records.digest import digest_problem, record_digest
from tcsexam.records.key import RecordKey
from tcsexam.records.store import RecordStore

KEY = RecordKey(Path("/nonexistent/.tcsexam-key"), bytes(range(32)))
#: digests the records below had when their fields were plain strings (the workspace record's: with `time_limit_s`)
INSTANCE_DIGEST = "hmac-sha256:c92f0b8c2ff3:75ad7d83a6c57cfec451edae21bfd38984d0839cd57f3e77f82e8a3462c83962"
WORKSPACE_DIGEST = "hmac-sha256:c92f0b8c2ff3:c350aa653954dad34c59a6612b0a705af26fa6a5688be35f80dc4498eefe9e13"


def _instance(**changes) -> InstanceRecord:
    fields = dict(instance="g1", status="timeout", message="wall limit", wall_s=1.5, termination="walltime")
    return InstanceRecord(**{**fields, **changes}, extra={"tries": 2})


def test_instance_record_fields_are_the_enum_members():
    rec = _instance()
    assert type(rec.status) is Status and rec.status is Status.TIMEOUT
    assert type(rec.termination) is Termination and rec.termination is Termination.WALLTIME
    rec.status, rec.termination = "invalid", "launch"  # assignment coerces too
    assert rec.status is Status.INVALID and rec.termination is Termination.LAUNCH
    rec.termination = None
    assert rec.termination is None
    assert rec.retried(3).status is Status.INVALID
    loaded = InstanceRecord.from_dict(_instance().to_dict(KEY))
    assert loaded.status is Status.TIMEOUT and loaded.termination is Termination.WALLTIME


def test_records_are_written_as_the_same_strings_and_digests():
    for rec in (_instance(), _instance(status=Status.TIMEOUT, termination=Termination.WALLTIME)):
        data = rec.to_dict(KEY)
        assert type(data["status"]) is str and type(data["termination"]) is str
        assert (data["status"], data["termination"]) == ("timeout", "walltime")
        assert data["digest"] == INSTANCE_DIGEST == record_digest(json.loads(json.dumps(data)), KEY)
        assert digest_problem(json.loads(json.dumps(data)), KEY) is None
    w = WorkspaceRecord(
        workspace_id="or_space_1_build", termination="exit", status="Optimal", objective=3.0, failure_mode="timeout"
    )
    assert w.failure_mode is FailureMode.TIMEOUT and w.termination is Termination.EXIT
    data = w.to_dict(KEY)
    assert type(data["failure_mode"]) is str and type(data["termination"]) is str
    # the same record as version 1 wrote it, with `time_limit_s` (None here) beside `limits`, has
    # the digest it had then
    assert data["schema_version"] == 2
    assert record_digest({**data, "schema_version": 1, "time_limit_s": None}, KEY) == WORKSPACE_DIGEST
    back = WorkspaceRecord.from_dict(json.loads(json.dumps(data)))
    assert back.failure_mode is FailureMode.TIMEOUT and back.to_dict(KEY) == data


@pytest.mark.parametrize(
    "make",
    [
        lambda: _instance(status="fine"),
        lambda: _instance(termination="vanished"),
        lambda: WorkspaceRecord(workspace_id="w", failure_mode="broken"),
    ],
)
def test_a_value_outside_the_vocabulary_is_a_type_error_naming_the_field(make):
    with pytest.raises(TypeError, match=r"(status|termination|failure_mode) '\w+' is not one of"):
        make()


def test_the_store_sets_aside_a_record_with_an_unknown_termination(tmp_path):
    store = RecordStore(tmp_path / "records")
    store.prepare()
    path = store.write(_instance())
    data = json.loads(path.read_text())
    data["termination"] = "vanished"
    data["digest"] = record_digest(data, store.key)  # sealed by the harness, but not a record
    path.write_text(json.dumps(data))
    found = store.check("g1")
    assert found.reason == "unreadable" and "termination 'vanished' is not one of" in found.detail


def test_typed_records_survive_pickling_and_replace():
    """Ray hands records between processes by pickle; the pools' retries use dataclasses.replace."""
    import dataclasses
    import pickle

    rec = pickle.loads(pickle.dumps(_instance()))
    assert rec == _instance() and rec.status is Status.TIMEOUT and rec.termination is Termination.WALLTIME
    again = dataclasses.replace(rec, status="crash")
    assert again.status is Status.CRASH and again.to_dict(KEY)["status"] == "crash"
    w = pickle.loads(pickle.dumps(WorkspaceRecord(workspace_id="w", failure_mode="infrastructure_error")))
    assert w.failure_mode is FailureMode.INFRASTRUCTURE_ERROR and w.infrastructure_error
    with pytest.raises(TypeError):
        InstanceRecord(instance="g1")  # status has no default
