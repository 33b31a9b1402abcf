"""`tcsexam score --twins`: the paired difference original - twin per model and task, the
memorisation_suspected issue, the scan findings in index.json, and an Index left unchanged."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from tcsexam.scoring.twins import THRESHOLD, twin_differences

TASK = "maxcut-mqlib"
NAMES = [f"G{k}" for k in range(1, 11)]


def _relative(path, scores: dict[str, float]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    inst = [{"instance": n, "score": s} for n, s in scores.items()]
    path.write_text(json.dumps({"relative_score": float(np.mean(list(scores.values()))), "instances": inst}))


def _layout(tmp_path, memo_twin: float, honest_noise: float, copies=(3,)):
    """originals/<model>/<task>/1/relative.json, twins/s<seed>/{tasks,solver}: a memoriser scoring
    0.9 on the originals and memo_twin on twins, an honest model with +-honest_noise noise."""
    rng = np.random.default_rng(0)
    orig, twins = tmp_path / "solver", tmp_path / "twins"
    memo = {n: 0.9 for n in NAMES}
    honest = {n: float(x) for n, x in zip(NAMES, rng.uniform(0.3, 0.7, len(NAMES)))}
    _relative(orig / "memo" / TASK / "1" / "relative.json", memo)
    _relative(orig / "honest" / TASK / "1" / "relative.json", honest)
    for s in copies:
        twin_of = {n: f"twin-{s}-{n}" for n in NAMES}
        mp = twins / f"s{s}" / "tasks" / TASK / "map.json"
        mp.parent.mkdir(parents=True)
        mp.write_text(json.dumps({"instances": {t: {"original": n, "map": {}} for n, t in twin_of.items()}}))
        sol = twins / f"s{s}" / "solver"
        _relative(sol / "memo" / TASK / "1" / "relative.json", {twin_of[n]: memo_twin for n in NAMES})
        noisy = {twin_of[n]: v + float(rng.uniform(-honest_noise, honest_noise)) for n, v in honest.items()}
        _relative(sol / "honest" / TASK / "1" / "relative.json", noisy)
    return orig, twins


def test_memoriser_flagged_honest_model_not(tmp_path):
    orig, twins = _layout(tmp_path, memo_twin=0.05, honest_noise=0.1, copies=(3, 4))
    out = twin_differences(orig, twins, ["memo", "honest"], [TASK, "sat-satlib"], seed=1, resamples=2000)
    assert out["seeds"] == [3, 4] and out["threshold"] == THRESHOLD
    memo, honest = out["models"]["memo"][TASK], out["models"]["honest"][TASK]
    assert memo["difference"] == np.float64(0.9 - 0.05) and memo["flagged"] and memo["copies"] == 2
    assert memo["ci95"][0] > 0
    assert not honest["flagged"] and honest["ci95"][0] <= 0 <= honest["ci95"][1]
    assert "sat-satlib" not in out["models"]["memo"]  # no twin runs of it: not reported


def test_a_small_difference_with_a_narrow_interval_is_not_flagged(tmp_path):
    orig, twins = _layout(tmp_path, memo_twin=0.9 - THRESHOLD / 2, honest_noise=0.0)
    memo = twin_differences(orig, twins, ["memo"], [TASK], seed=1, resamples=500)["models"]["memo"][TASK]
    assert memo["ci95"][0] > 0 and not memo["flagged"]  # significant, but below the threshold


def test_score_cli_adds_twins_scan_and_issue_and_keeps_the_index(tmp_path, h, lite):
    orig, twins = _layout(tmp_path, memo_twin=0.05, honest_noise=0.05)
    scan = orig / "memo" / TASK / "1" / "scan.json"
    scan.write_text(
        json.dumps({"findings": [{"kind": "content_hash", "file": "answers.py", "line": 3, "detail": "x"}]})
    )
    rows = h.example_rows(lite, "memo") + h.example_rows(lite, "honest")
    attempts = h.write_csv(tmp_path / "attempts.csv", rows)
    models = {"memo": {"attempts_per_task": 1}, "honest": {"attempts_per_task": 1}}
    cohort = h.write_json(tmp_path / "cohort.json", h.cohort_dict(models))
    base = [
        sys.executable,
        "-m",
        "tcsexam",
        "score",
        "--suite",
        "lite",
        "--attempts",
        str(attempts),
        "--cohort",
        str(cohort),
        "--bootstrap-resamples",
        "500",
    ]
    subprocess.run([*base, "--output", str(tmp_path / "plain.json")], check=True, capture_output=True)
    proc = subprocess.run(
        [*base, "--output", str(tmp_path / "index.json"), "--originals", str(orig), "--twins", str(twins)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    plain, index = (json.loads((tmp_path / f).read_text()) for f in ("plain.json", "index.json"))
    for m in models:
        assert index["models"][m]["index"] == plain["models"][m]["index"] == 55.5
        assert index["models"][m]["status"] == plain["models"][m]["status"]
    issues = {i["reason"]: i for i in index["models"]["memo"]["issues"]}
    assert issues["memorisation_suspected"]["tasks"] == [TASK]
    assert issues["hardcoded_answers_suspected"]["tasks"] == [TASK]
    assert index["models"]["memo"]["candidate_scan"]["findings"][0]["line"] == 3
    assert not index["models"]["honest"]["issues"]
    assert index["twins"]["models"]["honest"][TASK]["flagged"] is False


def test_twins_without_originals_is_a_usage_error(tmp_path, h, lite):
    attempts = h.write_csv(tmp_path / "attempts.csv", h.example_rows(lite))
    cohort = h.write_json(tmp_path / "cohort.json", h.cohort_dict())
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tcsexam",
            "score",
            "--suite",
            "lite",
            "--attempts",
            str(attempts),
            "--cohort",
            str(cohort),
            "--output",
            str(tmp_path / "i.json"),
            "--twins",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "--originals" in proc.stderr and not (tmp_path / "i.json").exists()
