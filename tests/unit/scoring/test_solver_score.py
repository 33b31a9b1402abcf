"""solver-score: the spec's fixed-reference formula, its worked example and every refusal."""

from __future__ import annotations

import json
import math

import pytest
from scipy.stats import norm

from tcsexam.cli import main
from tcsexam.errors import InputError
from tcsexam.scoring.reference import reference_from_dict
from tcsexam.scoring.solver_score import solver_score

SPEC_RECORDS = [
    {"instance": "example-1", "status": "ok", "A": 12},
    {"instance": "example-2", "status": "timeout"},
]


def _ref(h, **kw):
    return reference_from_dict(h.reference_dict(**kw))


def test_spec_worked_example_is_exactly_a_quarter(h):
    ref = _ref(h, tasks={"t": ("objective", "maximize", {"example-1": [10, 12, 14], "example-2": [1, 2, 3]})})
    out = solver_score("t", SPEC_RECORDS, ref)
    first, second = out["instances"]
    assert (first["mu"], first["scale"], first["z"], first["score"]) == (12.0, 2.0, 0.0, 0.5)
    assert second == {
        "instance": "example-2",
        "status": "timeout",
        "value": None,
        "mu": 2.0,
        "scale": 1.0,
        "z": None,
        "score": 0.0,
    }
    assert out["relative_score"] == 0.25  # exact, as the spec says
    assert out["n_eligible"] == 2 and out["unscored_instances"] == [] and out["checker_reward"] is None
    assert {
        "task",
        "reference_id",
        "relative_score",
        "n_eligible",
        "instances",
        "unscored_instances",
        "checker_reward",
    } <= set(out)


def test_cli_worked_example(h, tmp_path, capsys):
    ref = h.write_json(
        tmp_path / "ref.json",
        h.reference_dict(
            tasks={"maxcut-mqlib": ("objective", "maximize", {"example-1": [10, 12, 14], "example-2": [1, 2, 3]})}
        ),
    )
    records = h.write_json(tmp_path / "records.json", SPEC_RECORDS)
    out = tmp_path / "build" / "maxcut-relative.json"
    rc = main(
        [
            "solver-score",
            "--task",
            "maxcut-mqlib",
            "--records",
            str(records),
            "--reference",
            str(ref),
            "--output",
            str(out),
        ]
    )
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["relative_score"] == 0.25 and data["reference_id"] == "test-ref-v1" and data["task"] == "maxcut-mqlib"
    assert "relative_score 0.250000" in capsys.readouterr().out


def test_formula_against_scipy_for_both_directions(h):
    values = {"a": [100, 104, 96, 101], "b": [50.5, 50.5, None, 49.0], "c": [7, 7]}
    for direction, sign in (("maximize", 1), ("minimize", -1)):
        ref = _ref(h, tasks={"t": ("objective", direction, values)})
        recs = [
            {"instance": "a", "status": "ok", "A": 103},
            {"instance": "b", "status": "ok", "A": 50},
            {"instance": "c", "status": "ok", "A": 7.1},
        ]
        out = solver_score("t", recs, ref)
        expected = []
        for rec, (_name, vals) in zip(recs, values.items()):
            usable = [v for v in vals if v is not None]
            mu = sum(usable) / len(usable)
            s = math.sqrt(sum((v - mu) ** 2 for v in usable) / (len(usable) - 1))
            scale = max(s, 0.02 * abs(mu), 1e-9)
            expected.append(norm.cdf(sign * (rec["A"] - mu) / scale))
        got = [inst["score"] for inst in out["instances"]]
        assert got == pytest.approx(expected, rel=1e-12)
        assert out["relative_score"] == pytest.approx(sum(expected) / 3, rel=1e-12)


def test_scale_floors_relative_absolute_and_task_override(h):
    data = h.reference_dict(
        tasks={
            "rel": ("objective", "minimize", {"x": [1000, 1000, 1000]}),
            "abs": ("objective", "minimize", {"x": [0, 0]}),
        }
    )
    data["tasks"]["over"] = {
        "kind": "objective",
        "direction": "minimize",
        "scale_floors": {"relative": 0.5},
        "instances": {"x": [1000, 1000]},
    }
    ref = reference_from_dict(data)
    assert ref.task("rel").scale.tolist() == [20.0]  # 0.02 * |mu|
    assert ref.task("abs").scale.tolist() == [1e-9]  # absolute floor
    assert ref.task("over").scale.tolist() == [500.0] and ref.task("over").absolute_floor == 1e-9
    out = solver_score("rel", [{"instance": "x", "status": "ok", "A": 980}], ref)
    assert out["instances"][0]["z"] == 1.0 and out["relative_score"] == norm.cdf(1.0)


def test_solve_kind_uses_solved_or_a(h):
    ref = _ref(
        h,
        tasks={
            "sat": (
                "solve",
                "maximize",
                {"i1": [True, False, True], "i2": [1, 1, 0], "i3": [False, False], "i4": [0, 1]},
            )
        },
    )
    recs = [
        {"instance": "i1", "status": "ok", "solved": True, "A": 1.0},
        {"instance": "i2", "status": "ok", "A": 0},
        {"instance": "i3", "status": "ok", "solved": False},
        {"instance": "i4", "status": "crash"},
    ]
    out = solver_score("sat", recs, ref)
    mu = 2 / 3
    s = math.sqrt(((1 - mu) ** 2 * 2 + mu**2) / 2)
    assert [i["value"] for i in out["instances"]] == [1.0, 0.0, 0.0, None]
    assert out["instances"][0]["score"] == pytest.approx(norm.cdf((1 - mu) / s), rel=1e-12)
    assert out["instances"][2]["score"] == 0.5  # unsolved = mu: 0.5 (scale is the 1e-9 floor)
    assert out["instances"][3]["score"] == 0.0


def test_failures_score_zero_and_unscored_are_left_out(h):
    inst = {f"i{k}": [10, 11, 12] for k in range(5)}
    ref = _ref(h, tasks={"t": ("objective", "maximize", inst)}, unscored={"t": {"u1": [3]}})
    recs = [
        {"instance": f"i{k}", "status": s, "A": 1e6, "reward": 0.5}
        for k, s in enumerate(["timeout", "memout", "crash", "invalid", "certificate_failed"])
    ]
    recs += [{"instance": "u1", "status": "ok", "A": 99, "reward": 1.0}, {"instance": "zz", "status": "ok", "A": 1}]
    out = solver_score("t", recs, ref)
    assert out["relative_score"] == 0.0 and [i["score"] for i in out["instances"]] == [0.0] * 5
    assert out["unscored_instances"] == ["u1", "zz"]
    assert out["checker_reward"] == pytest.approx((0.5 * 5 + 1.0) / 6) and out["checker_reward_n"] == 6


def test_huge_z_is_clamped_not_infinite(h):
    ref = _ref(h, tasks={"t": ("objective", "maximize", {"x": [0, 0]})})
    out = solver_score("t", [{"instance": "x", "status": "ok", "A": 1e300}], ref)
    assert out["instances"][0]["score"] == 1.0 and math.isfinite(out["instances"][0]["z"])
    json.dumps(out, allow_nan=False)


# --- refusals: one test per rule, through the CLI: exit 1, one line naming the instance, no output


def _refused(h, tmp_path, capsys, records, name, kind="objective", raw=None):
    tasks = {
        "t": (
            kind,
            "maximize",
            {
                "example-1": [10, 12, 14] if kind == "objective" else [1, 0, 1],
                "example-2": [1, 2, 3] if kind == "objective" else [0, 0],
            },
        )
    }
    ref = h.write_json(tmp_path / "ref.json", h.reference_dict(tasks=tasks, unscored={"t": {"u": [None]}}))
    rec_path = tmp_path / "records.json"
    if raw is not None:
        rec_path.write_text(raw)
    else:
        h.write_json(rec_path, records)
    out = tmp_path / "out.json"
    rc = main(
        ["solver-score", "--task", "t", "--records", str(rec_path), "--reference", str(ref), "--output", str(out)]
    )
    err = capsys.readouterr().err
    assert rc == 1
    assert not out.exists()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert name in err, err
    return err


def test_refuses_infrastructure_error(h, tmp_path, capsys):
    err = _refused(
        h,
        tmp_path,
        capsys,
        [SPEC_RECORDS[0], {"instance": "example-2", "status": "infrastructure_error"}],
        "'example-2'",
    )
    assert "infrastructure_error" in err and "repair" in err


def test_refuses_infrastructure_error_even_on_unscored_instance(h, tmp_path, capsys):
    _refused(h, tmp_path, capsys, SPEC_RECORDS + [{"instance": "u", "status": "infrastructure_error"}], "'u'")


def test_refuses_unknown_status(h, tmp_path, capsys):
    err = _refused(
        h, tmp_path, capsys, [SPEC_RECORDS[0], {"instance": "example-2", "status": "TIMEOUT"}], "'example-2'"
    )
    assert "unknown status" in err


def test_refuses_ok_without_finite_value(h, tmp_path, capsys):
    for bad in ({}, {"A": None}, {"A": "12"}, {"A": True}):
        err = _refused(
            h,
            tmp_path,
            capsys,
            [SPEC_RECORDS[1] | {"instance": "example-1"}, {"instance": "example-2", "status": "ok", **bad}],
            "'example-2'",
        )
        assert "finite" in err


def test_refuses_missing_eligible_instance(h, tmp_path, capsys):
    err = _refused(h, tmp_path, capsys, [SPEC_RECORDS[0]], "'example-2'")
    assert "no record" in err


def test_refuses_duplicate_instance(h, tmp_path, capsys):
    err = _refused(h, tmp_path, capsys, SPEC_RECORDS + [SPEC_RECORDS[0]], "'example-1'")
    assert "duplicate" in err


def test_refuses_solve_value_that_is_no_indicator(h, tmp_path, capsys):
    recs = [{"instance": "example-1", "status": "ok", "A": 0.5}, {"instance": "example-2", "status": "timeout"}]
    _refused(h, tmp_path, capsys, recs, "'example-1'", kind="solve")
    recs = [
        {"instance": "example-1", "status": "ok", "A": 0, "solved": True},
        {"instance": "example-2", "status": "timeout"},
    ]
    assert "disagrees" in _refused(h, tmp_path, capsys, recs, "'example-1'", kind="solve")


def test_refuses_bad_reward(h, tmp_path, capsys):
    _refused(h, tmp_path, capsys, [SPEC_RECORDS[0], SPEC_RECORDS[1] | {"reward": "high"}], "'example-2'")


def test_refuses_bad_files(h, tmp_path, capsys):
    _refused(h, tmp_path, capsys, None, "records.json", raw="")
    _refused(h, tmp_path, capsys, None, "records.json", raw="[{")
    _refused(h, tmp_path, capsys, None, "records.json", raw='[{"instance": "example-1", "status": "ok", "A": NaN}]')
    _refused(h, tmp_path, capsys, {"records": []}, "records.json")
    _refused(h, tmp_path, capsys, [SPEC_RECORDS[0], 3], "record 2")
    _refused(h, tmp_path, capsys, [SPEC_RECORDS[0], {"status": "ok", "A": 1}], "record 2")


def test_refuses_task_not_in_reference(h, tmp_path, capsys):
    ref = h.write_json(tmp_path / "ref.json", h.reference_dict())
    rec = h.write_json(tmp_path / "r.json", SPEC_RECORDS)
    out = tmp_path / "o.json"
    assert (
        main(["solver-score", "--task", "nope", "--records", str(rec), "--reference", str(ref), "--output", str(out)])
        == 1
    )
    assert "'nope'" in capsys.readouterr().err and not out.exists()


def test_named_references_resolve_under_references_dir(tmp_path, monkeypatch, h):
    from tcsexam import paths
    from tcsexam.scoring.reference import load_reference, resolve_reference_path

    (tmp_path / "config" / "suites").mkdir(parents=True)
    (tmp_path / "references").mkdir()
    h.write_json(tmp_path / "references" / "lite.json", h.reference_dict(ref_id="bundled"))
    monkeypatch.setenv("TCSEXAM_ROOT", str(tmp_path))
    paths.project_root.cache_clear()
    try:
        assert resolve_reference_path("lite") == tmp_path / "references" / "lite.json"
        assert resolve_reference_path("full") == tmp_path / "references" / "full.json"
        assert load_reference("lite").reference_id == "bundled"
        with pytest.raises(InputError, match="full.json: reference file not found"):
            load_reference("full")
    finally:
        paths.project_root.cache_clear()


def test_accepts_the_runners_instance_records(h):
    """Records written by the runner (InstanceRecord.to_dict, with provenance fields) score as is."""
    from tcsexam.records import InstanceRecord

    ref = _ref(
        h,
        tasks={
            "sat": ("solve", "maximize", {"a": [1, 1, 0], "b": [0, 0, 1]}),
            "cut": ("objective", "maximize", {"a": [10, 12, 14]}),
        },
    )
    recs = [
        InstanceRecord(
            "a", "ok", A=1.0, solved=True, claimed="SAT", reward=1.0, wall_s=0.1, key="k", sandbox="local"
        ).to_dict(),
        InstanceRecord("b", "ok", solved=False, claimed="UNKNOWN", extra={"note": "x"}).to_dict(),
    ]
    out = solver_score("sat", recs, ref)
    assert [i["value"] for i in out["instances"]] == [1.0, 0.0] and out["checker_reward"] == 1.0
    cut = solver_score("cut", [InstanceRecord("a", "ok", A=12.0, claimed=12, reward=0.9).to_dict()], ref)
    assert cut["relative_score"] == 0.5


def test_phi_is_scipy_stats_norm_cdf_bit_for_bit(h):
    import numpy as np

    rng = np.random.default_rng(3)
    values = {f"x{k}": [float(v) for v in rng.normal(100, 5, 3)] for k in range(200)}
    ref = _ref(h, tasks={"t": ("objective", "minimize", values)})
    recs = [{"instance": name, "status": "ok", "A": float(a)} for name, a in zip(values, rng.normal(100, 8, 200))]
    out = solver_score("t", recs, ref)
    z = np.array([i["z"] for i in out["instances"]])
    assert [i["score"] for i in out["instances"]] == norm.cdf(z).tolist()
