"""The shared conformance suite every problem module passes (parse, good and bad certificates,
garbage, empty, huge), plus hypothesis fuzzing of the certificate parsers."""

from __future__ import annotations

import numpy as np
import pytest
from cases import CASES, FAILED, INVALID, OK
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcsexam.errors import InputError
from tcsexam.problems import PROBLEMS, get_problem
from tcsexam.problems.base import Problem
from tcsexam.problems.generate import FORMATS, generated_name

IDS = [c.problem for c in CASES]
VERDICTS = {OK, INVALID, FAILED}


@pytest.fixture(params=CASES, ids=IDS)
def case(request, tmp_path):
    c = request.param
    path = tmp_path / f"inst{c.suffix}"
    path.write_text(c.instance)
    problem = get_problem(c.problem)
    return c, problem, problem.parse_instance(path)


def test_registry_covers_every_case():
    assert sorted(PROBLEMS) == sorted(IDS)
    for name in PROBLEMS:
        p = get_problem(name)
        assert isinstance(p, Problem) and p.name == name
        assert p.kind in ("objective", "solve") and p.direction in ("maximize", "minimize")
    with pytest.raises(InputError, match="unknown problem 'knapsack'"):
        get_problem("knapsack")


def test_good_certificate(case):
    c, problem, inst = case
    r = problem.check_certificate(inst, c.good, c.meta)
    assert r.status == OK, r.message
    assert r.value == c.value
    assert r.reward == pytest.approx(c.reward)
    if problem.kind == "solve":
        assert r.solved is True


def test_good_certificate_without_meta_has_no_reward(case):
    c, problem, inst = case
    r = problem.check_certificate(inst, c.good, {})
    if problem.kind == "objective":
        assert r.status == OK and r.value == c.value and r.reward is None


BAD = [(c, label, cert, status) for c in CASES for label, cert, status in c.bad]


@pytest.mark.parametrize("c,label,cert,status", BAD, ids=[f"{b[0].problem}:{b[1]}" for b in BAD])
def test_bad_certificates(c, label, cert, status, tmp_path):
    path = tmp_path / f"inst{c.suffix}"
    path.write_text(c.instance)
    problem = get_problem(c.problem)
    r = problem.check_certificate(problem.parse_instance(path), cert, c.meta)
    assert r.status == status, f"{label}: {r}"
    assert r.value is None and r.message and "\n" not in r.message


@pytest.mark.parametrize("data", [b"", b"   \n\t\n", b"\x00\xff\xfe garbage \x80", "çà€".encode(), b"\n" * 1000])
def test_garbage_and_empty(case, data):
    c, problem, inst = case
    r = problem.check_certificate(inst, data, c.meta)
    assert r.status in (INVALID, FAILED), r


@pytest.mark.parametrize("pattern", [b"1", b"1 ", b"v 1 ", b"value 1\n"])
def test_huge_certificate_answers_quickly(case, pattern):
    c, problem, inst = case
    data = pattern * (50_000_000 // len(pattern))
    r = problem.check_certificate(inst, data, c.meta)  # rejected by size before any parsing
    assert r.status == INVALID and "bytes, more than" in r.message


def test_empty_and_missing_instance(case, tmp_path):
    c, problem, _ = case
    empty = tmp_path / f"empty{c.suffix}"
    empty.write_text("")
    with pytest.raises(InputError, match="empty"):
        problem.parse_instance(empty)
    with pytest.raises(InputError, match="not found"):
        problem.parse_instance(tmp_path / "missing")


def test_garbage_instance(case, tmp_path):
    c, problem, _ = case
    bad = tmp_path / f"bad{c.suffix}"
    bad.write_bytes(b"\x00\xffthis is not an instance\n1 2 3\n")
    with pytest.raises(InputError) as info:
        problem.parse_instance(bad)
    assert str(bad) in str(info.value) and "\n" not in str(info.value)


def test_generate_is_seeded_and_parses(case, tmp_path):
    c, problem, _ = case
    a = problem.generate(np.random.default_rng(5), 20)
    b = problem.generate(np.random.default_rng(5), 20)
    assert a == b and a != problem.generate(np.random.default_rng(6), 20)
    path = tmp_path / f"gen{c.suffix}"
    path.write_text(a)
    problem.parse_instance(path)


def test_instance_formats_are_declared_generated_and_named(case, tmp_path):
    """Every plug-in declares the instance formats its generator writes (the default, "new", first);
    each one is generated and parses as that format, and generated file names carry the format
    exactly where the problem has a choice of formats."""
    c, problem, _ = case
    assert isinstance(problem.formats, tuple) and problem.formats[0] == "new"
    assert set(problem.formats) <= set(FORMATS), "the task schema's generate.format enum lacks a format"
    texts = set()
    for form in problem.formats:
        text = problem.generate_as(np.random.default_rng(5), 20, form)
        path = tmp_path / f"gen-{form}{c.suffix}"
        path.write_text(text)
        assert getattr(problem.parse_instance(path), "form", form) == form
        texts.add(text)
        name = generated_name(problem, 20, 5, 1, form)
        assert (f"{problem.name}-{form}-n20" in name) == (len(problem.formats) > 1), name
    assert len(texts) == len(problem.formats)
    assert problem.generate_as(np.random.default_rng(5), 20, "new") == problem.generate(np.random.default_rng(5), 20)


LINE = st.one_of(
    st.binary(max_size=40),
    st.lists(st.integers(-5, 9), max_size=12).map(lambda xs: " ".join(map(str, xs)).encode()),
    st.sampled_from(
        [
            b"s SATISFIABLE",
            b"s UNSATISFIABLE",
            b"s OPTIMUM FOUND",
            b"s UNKNOWN",
            b"value 9",
            b"value -1e309",
            b"o 4",
            b"v 011",
            b"v 1 -2 3 0",
            b"c hi",
            b"TOUR_SECTION",
            b"-1",
            b"v",
            b"s",
            b"o",
            b"value",
        ]
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINE, max_size=8))
def test_fuzz_certificates_never_raise(case, lines):
    c, problem, inst = case
    r = problem.check_certificate(inst, b"\n".join(lines), c.meta)
    assert r.status in VERDICTS
    if r.status == OK:
        assert r.value is not None
    else:
        assert r.value is None and r.message


INSTANCE_LINE = st.one_of(
    st.binary(max_size=30),
    st.lists(st.integers(-3, 99999999999), min_size=1, max_size=5).map(lambda xs: " ".join(map(str, xs)).encode()),
    st.sampled_from(
        [
            b"p cnf 3 2",
            b"p cnf 99999999999 1",
            b"p edge 4 2",
            b"p wcnf 3 2 10",
            b"h 1 -2 0",
            b"e 1 2",
            b"%",
            b"DIMENSION: 3",
            b"EDGE_WEIGHT_TYPE: GEO",
            b"EDGE_WEIGHT_TYPE: EXPLICIT",
            b"EDGE_WEIGHT_FORMAT: FULL_MATRIX",
            b"NODE_COORD_SECTION",
            b"EDGE_WEIGHT_SECTION",
            b"EOF",
            b"TYPE: TSP",
            b"1 0 0",
            b"2 3 4",
            b"3 2",
            b"4 2",
            b"1 2 1",
            b"0",
        ]
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(INSTANCE_LINE, max_size=8))
def test_fuzz_instance_parsers_raise_only_input_error(case, tmp_path, lines):
    c, problem, _ = case
    path = tmp_path / f"fuzz{c.suffix}"
    path.write_bytes(b"\n".join(lines))
    try:
        inst = problem.parse_instance(path)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    r = problem.check_certificate(inst, b"1 0 1\n", {})  # parsed: checking must not raise either
    assert r.status in VERDICTS
