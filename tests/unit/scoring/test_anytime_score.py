"""solver-score --at and solver-profile: scores at any limit from anytime traces, checked against
an independent computation of the same rule (plain Python, math.erf)."""

from __future__ import annotations

import json
import math
import statistics

import pytest

from tcsexam.cli import main
from tcsexam.errors import InputError
from tcsexam.scoring.anytime_score import crossings, profile, score_at
from tcsexam.scoring.reference import reference_from_dict
from tcsexam.scoring.solver_score import solver_score

REF_VALUES = {"a": [10, 12, 14], "b": [4, 5, 6], "c": [1, 2, 3]}

#: three instances: improving, garbage midway then better, never improving and killed
RECORDS = [
    {
        "instance": "a",
        "status": "ok",
        "A": 14,
        "wall_s": 3.0,
        "trace": [[0.1, "ok", 8], [1.0, "ok", 12], [2.5, "ok", 14]],
    },
    {
        "instance": "b",
        "status": "ok",
        "A": 6,
        "wall_s": 4.0,
        "trace": [[0.5, "ok", 4], [1.5, "invalid", None], [3.9, "ok", 6]],
    },
    {
        "instance": "c",
        "status": "timeout",
        "termination": "walltime",
        "wall_s": 5.01,
        "trace": [[0.2, "ok", 2]],
        "extra": {"limits": {"wall_s": 5.0, "cpu_s": 5.0}},
    },
]


def _phi(z):
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def independent(records, at, direction="maximize"):
    """The `--at` rule written out again: a run that ended by `at` counts its final outcome, one
    still running its best ok trace value stamped by `at` (none: 0)."""
    scores = []
    for rec in records:
        vals = REF_VALUES[rec["instance"]]
        mu, s = statistics.mean(vals), statistics.stdev(vals)
        scale = max(s, 0.02 * abs(mu), 1e-9)
        limit = (rec.get("extra") or {}).get("limits", {}).get("wall_s", rec["wall_s"] - 0.1)
        if rec["wall_s"] <= at or (rec["status"] == "timeout" and at >= limit):
            value = rec.get("A") if rec["status"] == "ok" else None
        else:
            ok = [v for t, st, v in rec["trace"] if t <= at and st == "ok"]
            value = (max(ok) if direction == "maximize" else min(ok)) if ok else None
        if value is None:
            scores.append(0.0)
        else:
            scores.append(_phi((value - mu) / scale if direction == "maximize" else (mu - value) / scale))
    return sum(scores) / len(scores)


@pytest.fixture()
def ref(h):
    return reference_from_dict(h.reference_dict(tasks={"t": ("objective", "maximize", REF_VALUES)}))


@pytest.mark.parametrize("at", [0.0, 0.05, 0.1, 0.3, 1.0, 1.49, 1.5, 2.0, 3.0, 3.95, 4.0, 4.99, 5.0, 5.01, 100.0])
def test_score_at_equals_independent_computation(ref, at):
    assert score_at("t", RECORDS, ref, at)["relative_score"] == pytest.approx(independent(RECORDS, at), abs=1e-12)


def test_at_or_past_every_run_end_is_the_plain_score(ref):
    plain = solver_score("t", RECORDS, ref)
    assert score_at("t", RECORDS, ref, 5.01)["relative_score"] == plain["relative_score"]


@pytest.mark.parametrize("wall", [5.0003, 5.001, 5.003])
@pytest.mark.parametrize("recorded_limit", [True, False])
def test_a_run_killed_at_the_limit_is_not_ok_at_the_limit(ref, wall, recorded_limit):
    """Issue 46: a run killed at the task's 5 s limit ends at 5.0003-5.003 s; its trace holds a
    verified certificate stamped before 5 s. At S = 5 (the limit) it did not finish inside S, so it
    is the timeout it was, as in the plain score; just below the limit the certificate counts."""
    killed = {
        "instance": "c",
        "status": "timeout",
        "termination": "walltime",
        "wall_s": wall,
        "trace": [[0.2, "ok", 3]],
    }
    if recorded_limit:
        killed["extra"] = {"limits": {"wall_s": 5.0, "cpu_s": 5.0}}
    records = [*RECORDS[:2], killed]
    at_limit = score_at("t", records, ref, 5.0)
    assert at_limit["instances"][2]["status"] == "timeout"
    assert at_limit["n_ok"] == 2
    assert at_limit["relative_score"] == solver_score("t", records, ref)["relative_score"]
    before = score_at("t", records, ref, 4.5)
    assert before["instances"][2]["status"] == "ok" and before["instances"][2]["value"] == 3


def test_a_cpu_killed_run_is_not_ok_at_its_limit(ref):
    """Killed on CPU time (termination cputime) at its 5 s limit: not ok at 5 s either."""
    killed = {"instance": "c", "status": "timeout", "termination": "cputime", "wall_s": 5.002, "cpu_s": 5.0001}
    killed["trace"] = [[1.0, "ok", 3]]
    killed["extra"] = {"limits": {"wall_s": 5.0, "cpu_s": 5.0}}
    assert score_at("t", [*RECORDS[:2], killed], ref, 5.0)["instances"][2]["status"] == "timeout"


def test_the_profile_drops_at_the_limit_of_a_killed_run(ref):
    """The profile has a point at a timed-out run's limit (5 s), where its certificate stops counting,
    not only at its end (5.0003 s); at the limit the curve equals the plain score."""
    killed = {"instance": "c", "status": "timeout", "termination": "walltime", "wall_s": 5.0003}
    killed.update(trace=[[0.2, "ok", 3]], extra={"limits": {"wall_s": 5.0, "cpu_s": 5.0}})
    records = [*RECORDS[:2], killed]
    out = profile("t", {"run": records}, ref)
    assert 5.0 in out["limits_s"] and 5.0003 in out["limits_s"]
    curve = dict(map(tuple, out["curves"]["run"]))
    assert curve[5.0] == pytest.approx(solver_score("t", records, ref)["relative_score"])
    assert curve[4.0] > curve[5.0]


def test_before_any_certificate_everything_is_timeout(ref):
    out = score_at("t", RECORDS, ref, 0.05)
    assert [i["status"] for i in out["instances"]] == ["timeout"] * 3 and out["relative_score"] == 0


def test_records_without_trace_time_out_before_their_end(ref):
    plain = [{k: v for k, v in r.items() if k != "trace"} for r in RECORDS]
    assert score_at("t", plain, ref, 2.9)["relative_score"] == 0.0


def test_minimising_picks_the_smallest(h):
    ref = reference_from_dict(h.reference_dict(tasks={"t": ("objective", "minimize", REF_VALUES)}))
    recs = [dict(r, trace=[[t, s, v] for t, s, v in r["trace"]]) for r in RECORDS]
    for at in (0.3, 1.2, 2.7, 4.5):
        assert score_at("t", recs, ref, at)["relative_score"] == pytest.approx(independent(recs, at, "minimize"))


def test_refuses_bad_at_and_bad_trace(ref):
    with pytest.raises(InputError, match="--at"):
        score_at("t", RECORDS, ref, float("nan"))
    bad = [dict(RECORDS[0], trace=[[0.1, "ok"]])] + RECORDS[1:]
    with pytest.raises(InputError, match="trace row"):
        score_at("t", bad, ref, 1.0)


@pytest.mark.parametrize(
    "trace, says",
    [
        ([[0.1, "ok", "abc"], [0.2, "ok", 9]], "value must be a finite number or null, not 'abc'"),
        ([[0.1, "ok", float("inf")]], "value must be a finite number"),
        ([[True, "ok", 9]], "stamp must be a finite number"),
        ([[-1, "ok", 9]], "stamp must be a finite number of seconds >= 0"),
        ([[0.1, "bogus", 9]], "status must be one of"),
        ("not a list", "trace must be a list"),
    ],
)
def test_a_damaged_trace_is_one_clear_error(ref, trace, says):
    """A hand-edited or damaged records file: one InputError naming the instance and the row, never
    a traceback from comparing what is not a number (it was a TypeError)."""
    bad = [dict(RECORDS[0], trace=trace)] + RECORDS[1:]
    with pytest.raises(InputError, match=f"instance 'a': .*{says}") as err:
        score_at("t", bad, ref, 1.0)
    assert "records" in str(err.value)
    with pytest.raises(InputError, match=says):
        profile("t", {"m": bad}, ref)


def test_profile_curves_and_crossing(ref):
    fast = [dict(r, trace=[[0.1, "ok", v] for _, _, v in r["trace"][-1:]]) for r in RECORDS]
    for r in fast:
        r["A"] = None if r["status"] != "ok" else 8 if r["instance"] == "a" else r["A"]
        r["trace"] = [[0.1, "ok", 12 if r["instance"] == "a" else 5 if r["instance"] == "b" else 2]]
    out = profile("t", {"slow": RECORDS, "fast": fast}, ref)
    for name, recs in (("slow", RECORDS), ("fast", fast)):
        for at, score in out["curves"][name]:
            assert score == pytest.approx(independent(recs, at), abs=1e-12)
    grid = out["limits_s"]
    assert grid == sorted(grid) and 0.0 in grid and 5.01 in grid
    assert crossings(out["curves"]) == out["crossings"]
    # fast leads early; slow's final values are better: the curves cross once, slow ahead after
    assert [c["leader_after"] for c in out["crossings"]] == ["slow"]


def test_cli_at_and_profile_and_plot(h, tmp_path, capsys):
    refp = h.write_json(tmp_path / "ref.json", h.reference_dict(tasks={"t": ("objective", "maximize", REF_VALUES)}))
    recs = h.write_json(tmp_path / "records.json", RECORDS)
    out, prof = tmp_path / "at.json", tmp_path / "prof.json"
    argv = ["solver-score", "--task", "t", "--records", str(recs), "--reference", str(refp), "--output", str(out)]
    assert main([*argv, "--at", "1.2", "--profile", str(prof)]) == 0
    data = json.loads(out.read_text())
    assert data["at_s"] == 1.2 and data["relative_score"] == pytest.approx(independent(RECORDS, 1.2))
    assert (
        json.loads(prof.read_text())["curves"][str(recs)][-1][1]
        == solver_score(
            "t", RECORDS, reference_from_dict(h.reference_dict(tasks={"t": ("objective", "maximize", REF_VALUES)}))
        )["relative_score"]
    )
    png = tmp_path / "p.png"
    rc = main(
        [
            "solver-profile",
            "--task",
            "t",
            "--run",
            f"m1={recs}",
            "--run",
            f"m2={recs}",
            "--reference",
            str(refp),
            "--output",
            str(tmp_path / "pp.json"),
            "--plot",
            str(png),
        ]
    )
    assert rc == 0 and png.read_bytes()[:4] == b"\x89PNG"


def test_crossings_ignore_differences_below_the_tie():
    curves = {"a": [[0, 0.0], [1, 1e-20], [2, 0.5], [3, 0.5]], "b": [[0, 1e-19], [1, 0.0], [2, 0.2], [3, 0.7]]}
    assert crossings(curves) == [{"models": ["a", "b"], "at_s": 3, "leader_before": "a", "leader_after": "b"}]


def test_solver_profile_reads_sealed_records_from_any_folder(h, tmp_path, monkeypatch):
    """`--run NAME=PATH`: the run's records are checked with the key found from PATH (the one
    `tcsexam run` keeps beside them), not from NAME or the working folder."""
    from tcsexam.records import InstanceRecord
    from tcsexam.records.key import ensure_key

    refp = h.write_json(tmp_path / "ref.json", h.reference_dict(tasks={"t": ("objective", "maximize", REF_VALUES)}))
    job = tmp_path / "solver" / "m" / "t" / "1"
    job.mkdir(parents=True)
    key = ensure_key(job)
    recs = h.write_json(job / "records.json", [InstanceRecord.from_dict(r).to_dict(key) for r in RECORDS])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    out = tmp_path / "pp.json"
    rc = main(
        ["solver-profile", "--task", "t", "--run", f"model-a={recs}", "--reference", str(refp), "--output", str(out)]
    )
    assert rc == 0
    curve = json.loads(out.read_text())["curves"]["model-a"]
    assert [s for _, s in curve] == pytest.approx([independent(RECORDS, at) for at, _ in curve], abs=1e-12)
