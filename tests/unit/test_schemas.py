"""The JSON Schemas of user-written files: valid schemas, in step with the Python vocabularies,
and violations reported as one line naming the file, the field and what is wrong."""

from __future__ import annotations

import jsonschema
import pytest

from tcsexam.errors import InputError
from tcsexam.schemas import SCHEMA_DIR, check, load_schema
from tcsexam.scoring.vocabulary import ADOPTION_STATUSES

SCHEMAS = sorted(p.name.removesuffix(".schema.yaml") for p in SCHEMA_DIR.glob("*.schema.yaml"))


@pytest.mark.parametrize("name", SCHEMAS)
def test_every_schema_is_a_valid_draft_2020_12_schema(name):
    jsonschema.Draft202012Validator.check_schema(load_schema(name))


def test_task_vocabularies_match_the_code():
    from tcsexam.problems.generate import FORMATS
    from tcsexam.tasks import DIRECTIONS, KINDS

    props = load_schema("task")["properties"]
    assert tuple(props["kind"]["enum"]) == KINDS and tuple(props["direction"]["enum"]) == DIRECTIONS
    assert tuple(props["instances"]["items"]["properties"]["generate"]["properties"]["format"]["enum"]) == FORMATS


def test_cohort_and_reference_vocabularies_match_the_code():
    from tcsexam.scoring.vocabulary import PROTOCOLS
    from tcsexam.tasks import DIRECTIONS, KINDS

    assert set(load_schema("cohort")["properties"]["solver_protocol"]["enum"]) == set(PROTOCOLS)
    task = load_schema("reference")["properties"]["tasks"]["additionalProperties"]["properties"]
    assert tuple(task["kind"]["enum"]) == KINDS and tuple(task["direction"]["enum"]) == DIRECTIONS


def test_verdict_vocabularies_match_the_code():
    from tcsexam.attempts.verdicts import PROOF_STATUSES, VERDICT_STATUSES
    from tcsexam.proofs.check import PROOF_STATUSES as CHECKER_STATUSES

    props = load_schema("verdict")["properties"]
    assert tuple(props["status"]["enum"]) == (*VERDICT_STATUSES, *PROOF_STATUSES)
    assert tuple(PROOF_STATUSES) == CHECKER_STATUSES
    assert set(props["adoption_status"]["enum"]) == set(ADOPTION_STATUSES)


@pytest.mark.parametrize(
    "data, line",
    [
        ([1], "f.yaml: (top level): solver.yaml must be a mapping with a 'command' list"),
        ({}, "f.yaml: (top level): missing key 'command'"),
        ({"command": ["a"], "x": 1}, "f.yaml: (top level): unknown key(s) x; known: build, certificate, command, env,"),
        ({"command": ["a"], "threads": 0}, "f.yaml: threads: 'threads' must be an integer >= 1, not 0"),
        ({"command": ["a", ""]}, "f.yaml: command/1: 'command' must be a non-empty list"),
        ({"command": ["a"], "exit_codes_ok": [0, 256]}, "f.yaml: exit_codes_ok/1: 'exit_codes_ok' must be"),
    ],
)
def test_one_line_naming_file_field_and_problem(data, line):
    with pytest.raises(InputError) as exc:
        check(data, "solver", "f.yaml")
    assert str(exc.value).startswith(line) and "\n" not in str(exc.value)


def test_a_nested_field_without_its_own_message_gets_the_keyword_message():
    with pytest.raises(InputError, match=r"s.yaml: tracks/solver/0: a task id must be a non-empty string, not 3"):
        check({"id": "x", "tracks": {"solver": [3]}}, "suite", "s.yaml")


@pytest.fixture
def passed(tmp_path, monkeypatch):
    """A private PassedChecks, and a validator that counts its uses."""
    import tcsexam.schemas as schemas

    store = schemas.PassedChecks(tmp_path / "passed")
    monkeypatch.setattr(schemas, "PASSED", store)
    calls = []
    real = schemas._validator

    def counting(name):
        calls.append(name)
        return real(name)

    monkeypatch.setattr(schemas, "_validator", counting)
    return store, calls


def test_data_that_passed_is_not_checked_again_and_a_violation_always_is(passed):
    store, calls = passed
    good = {"command": ["python3", "solve.py"], "threads": 2}
    check(good, "solver", "a.yaml")
    check(dict(reversed(list(good.items()))), "solver", "b.yaml")  # the same data, keys in another order
    assert calls == ["solver"]
    check({**good, "threads": 3}, "solver", "d.yaml")  # other data: checked
    assert calls == ["solver", "solver"]
    bad = {"command": ["a"], "threads": 0}
    for _ in range(2):
        with pytest.raises(InputError, match="threads"):
            check(bad, "solver", "e.yaml")
    assert calls == ["solver"] * 4


def test_a_pass_is_trusted_only_in_a_folder_nobody_else_can_write(passed):
    store, calls = passed
    good = {"command": ["x"]}
    check(good, "solver", "a.yaml")
    key = store.key("solver", good)
    assert key is not None and store.passed(key)
    folder = store.root / key[:2]
    folder.chmod(0o777)  # another user could have planted the pass
    try:
        assert not store.passed(key)
        check(good, "solver", "a.yaml")
        assert calls == ["solver", "solver"]
    finally:
        folder.chmod(0o755)


def test_data_without_a_canonical_json_form_or_an_unwritable_cache_is_checked_every_time(passed, tmp_path):
    import datetime

    import tcsexam.schemas as schemas

    store, calls = passed
    assert store.key("solver", {"command": ["x"], "when": datetime.date(2026, 1, 1)}) is None
    blocked = tmp_path / "file"
    blocked.write_text("")
    schemas.PASSED = schemas.PassedChecks(blocked / "passed")  # cannot be a folder: nothing is kept
    for _ in range(2):
        check({"command": ["y"]}, "solver", "a.yaml")
    assert calls == ["solver", "solver"]
