"""The seeded bootstrap (scoring/bootstrap.py): the same numbers as a plain-Python implementation
drawing from the same generator, coverage on simulated data, paired deltas, and index.json's
intervals beside unchanged spec fields."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from tcsexam.scoring.bootstrap import (
    DEFAULT_SEED,
    TaskScores,
    add_confidence_intervals,
    interval,
    reference_interval,
    reference_task_replicates,
    task_replicates,
)
from tcsexam.scoring.index import score_files
from tcsexam.suites import load_suite


def _solver_task(rng, models=("a", "b"), attempts=(1, 3), n=7, item="maxcut-mqlib"):
    names = tuple(f"i{k}" for k in range(n))
    t = TaskScores(item, "solver", names)
    for m, k in zip(models, attempts):
        t.attempts[m] = {str(a): rng.random(n) for a in range(1, k + 1)}
    return t


def test_instance_and_attempt_resampling_matches_plain_python():
    rng = np.random.default_rng(1)
    task = _solver_task(rng)
    fast = task_replicates([task], seed=7, resamples=300)[0]
    slow = reference_task_replicates([task], seed=7, resamples=300)[0]
    assert set(fast) == set(slow) == {"a", "b"}
    for m in fast:
        np.testing.assert_allclose(fast[m], slow[m], rtol=0, atol=1e-12)
        lo, hi = interval(fast[m])
        rlo, rhi = reference_interval(slow[m])
        assert lo == pytest.approx(rlo, abs=1e-12) and hi == pytest.approx(rhi, abs=1e-12)


def test_attempt_only_task_matches_plain_python_and_paired_runs():
    base = TaskScores("theorem-x", "theorem", None, {"a": {"1": np.array([1.0]), "2": np.array([0.0])}})
    cand = TaskScores("theorem-x", "theorem", None, {"a": {"1": np.array([1.0]), "2": np.array([1.0])}})
    fast = task_replicates([base, cand], seed=3, resamples=500)
    slow = reference_task_replicates([base, cand], seed=3, resamples=500)
    for r in range(2):
        np.testing.assert_allclose(fast[r]["a"], slow[r]["a"], atol=1e-15)
    # paired: the same attempt draws in both runs, so the delta is 0 exactly when attempt 2 is not drawn
    delta = fast[1]["a"] - fast[0]["a"]
    assert set(np.round(delta, 12)) <= {0.0, 0.5, 1.0}


def test_same_seed_same_numbers_other_seed_other_numbers():
    rng = np.random.default_rng(2)
    task = _solver_task(rng)
    a = task_replicates([task], seed=DEFAULT_SEED, resamples=200)[0]["a"]
    b = task_replicates([task], seed=DEFAULT_SEED, resamples=200)[0]["a"]
    c = task_replicates([task], seed=DEFAULT_SEED + 1, resamples=200)[0]["a"]
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_identical_runs_give_zero_deltas_exactly():
    rng = np.random.default_rng(3)
    task = _solver_task(rng)
    copy = TaskScores(task.item, task.track, task.instances, {m: dict(v) for m, v in task.attempts.items()})
    rb, rc = task_replicates([task, copy], resamples=1000)
    for m in rb:
        assert np.all(rc[m] - rb[m] == 0.0)


def test_interval_covers_the_true_mean_about_95_percent_of_the_time():
    """Simulated Solver tasks: per-instance scores iid Beta(2, 5) (mean 2/7); 400 data sets of 60
    instances, 1,000 resamples each. The percentile interval's coverage must be near 0.95."""
    rng = np.random.default_rng(12345)
    true_mean = 2 / 7
    hits = 0
    trials = 400
    for k in range(trials):
        scores = rng.beta(2, 5, size=60)
        t = TaskScores("maxcut-mqlib", "solver", tuple(f"i{j}" for j in range(60)), {"m": {"1": scores}})
        lo, hi = interval(task_replicates([t], seed=k, resamples=1000)[0]["m"])
        hits += lo <= true_mean <= hi
    coverage = hits / trials
    assert 0.90 <= coverage <= 0.98, coverage


def test_paired_delta_interval_detects_a_shift_and_not_noise():
    rng = np.random.default_rng(5)
    n = 80
    names = tuple(f"i{j}" for j in range(n))
    base_scores = rng.random(n)
    noisy = np.clip(base_scores + rng.normal(0, 0.01, n), 0, 1)
    shifted = np.clip(base_scores - 0.1, 0, 1)
    base = TaskScores("t", "solver", names, {"m": {"1": base_scores}})
    rb, rn, rs = task_replicates(
        [
            base,
            TaskScores("t", "solver", names, {"m": {"1": noisy}}),
            TaskScores("t", "solver", names, {"m": {"1": shifted}}),
        ],
        resamples=2000,
    )
    lo, hi = interval(rn["m"] - rb["m"])
    assert lo <= 0 <= hi
    lo, hi = interval(rs["m"] - rb["m"])
    assert hi < 0


# --------------------------------------------------------------------------------------------
# index.json


def _write_table(path, rows):
    cols = "model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol".split(",")
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        w.writerows(rows)


def _lite_table(tmp_path, with_relative: bool):
    suite = load_suite("lite")
    rng = np.random.default_rng(9)
    rows = []
    for model in ("m1", "m2"):
        for track, items in suite.tracks.items():
            for item in items:
                for attempt in ("1", "2"):
                    if track == "solver":
                        inst = rng.random(6)
                        score = float(inst.mean())
                        if with_relative:
                            rel = {
                                "task": item,
                                "reference_id": "ref",
                                "relative_score": score,
                                "instances": [{"instance": f"x{k}", "score": float(v)} for k, v in enumerate(inst)],
                            }
                            d = tmp_path / "solver" / model / item / attempt
                            d.mkdir(parents=True)
                            (d / "relative.json").write_text(json.dumps(rel))
                        rows.append(
                            [
                                model,
                                track,
                                item,
                                attempt,
                                repr(score),
                                "selected",
                                "valid",
                                "fixed_reference_relative",
                                "offline",
                            ]
                        )
                    elif track in ("theorem", "open_conjecture"):
                        rows.append(
                            [
                                model,
                                track,
                                item,
                                attempt,
                                str(int(rng.random() < 0.5)),
                                "selected",
                                "valid",
                                "original_task_score",
                                "",
                            ]
                        )
                    else:
                        rows.append(
                            [
                                model,
                                track,
                                item,
                                attempt,
                                repr(float(rng.random() * 1.5)),
                                "selected",
                                "valid",
                                "original_task_score",
                                "",
                            ]
                        )
    _write_table(tmp_path / "attempts.csv", rows)
    cohort = {
        "suite": "lite",
        "solver_protocol": "offline",
        "solver_reference_id": "ref",
        "models": {"m1": {"attempts_per_task": 2}, "m2": {"attempts_per_task": 2}},
    }
    (tmp_path / "cohort.json").write_text(json.dumps(cohort))
    return suite


@pytest.mark.parametrize("with_relative", [True, False])
def test_index_ci95_beside_unchanged_spec_fields(tmp_path, with_relative):
    suite = _lite_table(tmp_path, with_relative)
    solver_dir = tmp_path / "solver" if with_relative else None
    plain = score_files(suite, tmp_path / "attempts.csv", tmp_path / "cohort.json")
    result = score_files(suite, tmp_path / "attempts.csv", tmp_path / "cohort.json")
    add_confidence_intervals(result, suite, tmp_path / "attempts.csv", solver_dir, resamples=2000)
    for name, model in result["models"].items():
        extra = {k: v for k, v in model.items() if k not in ("index_ci95", "track_ci95")}
        assert extra == plain["models"][name]  # every spec field exactly as before
        lo, hi = model["index_ci95"]
        assert lo <= model["index"] <= hi and hi > lo
        for track, ci in model["track_ci95"].items():
            assert ci[0] <= model["track_means"][track] + 1e-12 and model["track_means"][track] <= ci[1] + 1e-12
    assert {k: v for k, v in result.items() if k != "bootstrap"} | {"models": None} == plain | {"models": None}
    assert result["bootstrap"]["resamples"] == 2000 and result["bootstrap"]["seed"] == DEFAULT_SEED
    assert bool(result["bootstrap"]["instance_resolution"]) == with_relative


def test_incomplete_model_gets_null_index_interval(tmp_path):
    suite = _lite_table(tmp_path, False)
    rows = list(csv.reader(open(tmp_path / "attempts.csv")))
    rows = [r for r in rows if not (r[0] == "m2" and r[2] == "maxcut-mqlib" and r[3] == "2")]
    _write_table(tmp_path / "attempts.csv", rows[1:])
    result = score_files(suite, tmp_path / "attempts.csv", tmp_path / "cohort.json")
    add_confidence_intervals(result, suite, tmp_path / "attempts.csv", None, resamples=500)
    m2 = result["models"]["m2"]
    assert m2["index"] is None and m2["index_ci95"] is None
    assert m2["track_ci95"]["solver"] is None and m2["track_ci95"]["theorem"] is not None
    assert result["models"]["m1"]["index_ci95"] is not None
    assert not math.isnan(result["models"]["m1"]["index_ci95"][0])


def test_a_models_interval_does_not_depend_on_the_other_models():
    rng = np.random.default_rng(4)
    alone = _solver_task(rng, models=("a",), attempts=(2,))
    crowd = TaskScores(alone.item, alone.track, alone.instances, dict(alone.attempts))
    crowd.attempts["b"] = {str(k): rng.random(7) for k in range(5)}  # more attempts than a
    a1 = task_replicates([alone], resamples=500)[0]["a"]
    a2 = task_replicates([crowd], resamples=500)[0]["a"]
    np.testing.assert_allclose(a1, a2, rtol=0, atol=1e-15)
