"""Property tests (hypothesis): order invariance, monotonicity in A, equal task weight."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcsexam.scoring.index import COLUMNS, cohort_from_dict, compute_index
from tcsexam.scoring.reference import reference_from_dict
from tcsexam.scoring.solver_score import solver_score

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
STATUSES = ["ok", "ok", "ok", "timeout", "memout", "crash", "invalid", "certificate_failed"]


@st.composite
def reference_and_records(draw):
    n = draw(st.integers(1, 12))
    direction = draw(st.sampled_from(["maximize", "minimize"]))
    instances = {f"i{k}": draw(st.lists(finite, min_size=2, max_size=4)) for k in range(n)}
    records = [
        {
            "instance": name,
            "status": (s := draw(st.sampled_from(STATUSES))),
            **({"A": draw(finite)} if s == "ok" else {}),
        }
        for name in instances
    ]
    records += [{"instance": f"extra{k}", "status": "ok", "A": 1.0} for k in range(draw(st.integers(0, 3)))]
    data = {
        "schema_version": 1,
        "reference_id": "r",
        "scale_floors": {"relative": 0.02, "absolute": 1e-9},
        "tasks": {"t": {"kind": "objective", "direction": direction, "instances": instances}},
    }
    return reference_from_dict(data), records, draw(st.randoms(use_true_random=False))


@SETTINGS
@given(reference_and_records())
def test_solver_score_ignores_record_order(case):
    ref, records, rnd = case
    first = solver_score("t", records, ref)
    shuffled = list(records)
    rnd.shuffle(shuffled)
    second = solver_score("t", shuffled, ref)
    assert second["relative_score"] == first["relative_score"]
    assert second["instances"] == first["instances"]
    assert sorted(second["unscored_instances"]) == sorted(first["unscored_instances"])
    assert 0.0 <= first["relative_score"] <= 1.0


@SETTINGS
@given(st.lists(finite, min_size=2, max_size=5), finite, finite, st.sampled_from(["maximize", "minimize"]))
def test_instance_score_is_monotone_in_a(values, a1, a2, direction):
    lo, hi = sorted((a1, a2))
    ref = reference_from_dict(
        {
            "schema_version": 1,
            "reference_id": "r",
            "scale_floors": {"relative": 0.02, "absolute": 1e-9},
            "tasks": {"t": {"kind": "objective", "direction": direction, "instances": {"x": values}}},
        }
    )
    s_lo = solver_score("t", [{"instance": "x", "status": "ok", "A": lo}], ref)["relative_score"]
    s_hi = solver_score("t", [{"instance": "x", "status": "ok", "A": hi}], ref)["relative_score"]
    if direction == "maximize":
        assert s_lo <= s_hi
    else:
        assert s_lo >= s_hi
    mu = sum(values) / len(values)
    at_mu = solver_score("t", [{"instance": "x", "status": "ok", "A": mu}], ref)["instances"][0]
    if at_mu["mu"] == mu:  # a valid value equal to mu receives 0.5
        assert at_mu["score"] == 0.5


def _table(lite, reps, scores_for, provisional=()):
    rows = []
    for track, items in lite.tracks.items():
        for item in items:
            for a in range(reps.get(item, 1)):
                s = scores_for(track, item, a)
                adoption = "selected_provisional" if (item, a) in provisional else "selected"
                rows.append(
                    [
                        "m",
                        track,
                        item,
                        f"a{a}",
                        repr(s),
                        adoption,
                        "valid",
                        "fixed_reference_relative" if track == "solver" else "original_task_score",
                        "offline" if track == "solver" else "",
                    ]
                )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _cohort(lite, reps):
    return cohort_from_dict(
        {
            "suite": "lite",
            "solver_protocol": "offline",
            "solver_reference_id": "r",
            "models": {"m": {"attempts_per_task": 1, "tasks": dict(reps)}},
        },
        lite,
    )


@st.composite
def tables(draw, lite):
    reps = {item: draw(st.integers(1, 4)) for item in lite.items}
    unit = st.floats(0, 1, allow_nan=False)
    values = {}
    for track, items in lite.tracks.items():
        for item in items:
            for a in range(reps[item]):
                if track in ("theorem", "open_conjecture"):
                    values[item, a] = draw(st.sampled_from([0.0, 1.0]))
                elif track == "construction":
                    values[item, a] = draw(st.floats(0, 5, allow_nan=False))
                else:
                    values[item, a] = draw(unit)
    return reps, values, draw(st.randoms(use_true_random=False))


@pytest.fixture(scope="module")
def lite_suite(lite):
    return lite


@SETTINGS
@given(data=st.data())
def test_index_ignores_row_order(lite_suite, data):
    reps, values, rnd = data.draw(tables(lite_suite))
    df = _table(lite_suite, reps, lambda t, i, a: values[i, a])
    cohort = _cohort(lite_suite, reps)
    first = compute_index(df, lite_suite, cohort)
    order = list(range(len(df)))
    rnd.shuffle(order)
    second = compute_index(df.iloc[order].reset_index(drop=True), lite_suite, cohort)
    assert second == first  # bit-identical, not just close
    assert first["models"]["m"]["status"] == "complete"


@SETTINGS
@given(data=st.data())
def test_each_task_weighs_the_same_whatever_its_repetitions(lite_suite, data):
    reps, values, _ = data.draw(tables(lite_suite))
    model = compute_index(
        _table(lite_suite, reps, lambda t, i, a: values[i, a]), lite_suite, _cohort(lite_suite, reps)
    )["models"]["m"]
    task_mean = {item: sum(values[item, a] for a in range(reps[item])) / reps[item] for item in lite_suite.items}
    for track, items in lite_suite.tracks.items():
        expected = sum(task_mean[i] for i in items) / len(items)
        assert model["track_means"][track] == pytest.approx(expected, rel=1e-12, abs=1e-15)
    weights = {"theorem": 30, "solver": 30, "construction": 30, "open_conjecture": 10}
    expected_index = sum(w * sum(task_mean[i] for i in lite_suite.tracks[t]) / 5 for t, w in weights.items())
    assert model["index"] == pytest.approx(expected_index, rel=1e-12, abs=1e-12)


def test_more_repetitions_do_not_change_a_task_weight(lite):
    """Explicit case: one task repeated three times (1, 1, 1) vs once (1) gives the same Index."""
    once = compute_index(_table(lite, {}, lambda t, i, a: 1.0 if i == lite.items[0] else 0.0), lite, _cohort(lite, {}))
    reps = {lite.items[0]: 3}
    thrice = compute_index(
        _table(lite, reps, lambda t, i, a: 1.0 if i == lite.items[0] else 0.0), lite, _cohort(lite, reps)
    )
    assert once["models"]["m"]["index"] == thrice["models"]["m"]["index"] == 6.0
