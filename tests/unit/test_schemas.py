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
