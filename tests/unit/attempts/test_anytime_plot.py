"""The report's anytime profiles: curves from the solver results equal solver-score --at, and the
crossing of two models is found."""

from __future__ import annotations

import json

import matplotlib
import pytest

from tcsexam.attempts.anytime_plot import anytime_profiles, profile_figure
from tcsexam.scoring.anytime_score import score_at
from tcsexam.scoring.reference import reference_from_dict
from tcsexam.scoring.solver_score import solver_score

REF = reference_from_dict(
    {
        "schema_version": 1,
        "reference_id": "r",
        "scale_floors": {"relative": 0.02, "absolute": 1e-9},
        "tasks": {
            "t": {"kind": "objective", "direction": "maximize", "instances": {"a": [10, 12, 14], "b": [10, 12, 14]}}
        },
    }
)
EARLY = [{"instance": n, "status": "ok", "A": 12, "wall_s": 5.0, "trace": [[0.5, "ok", 12]]} for n in "ab"]
LATE = [{"instance": n, "status": "ok", "A": 14, "wall_s": 5.0, "trace": [[3.0, "ok", 14]]} for n in "ab"]


def _write(root, model, records):
    d = root / model / "t" / "1"
    d.mkdir(parents=True)
    (d / "records.json").write_text(json.dumps(records))
    (d / "relative.json").write_text(json.dumps(solver_score("t", records, REF)))


def test_profiles_match_score_at_and_find_the_crossing(tmp_path):
    _write(tmp_path, "early", EARLY)
    _write(tmp_path, "late", LATE)
    prof = anytime_profiles(tmp_path)["t"]
    for model, records in (("early", EARLY), ("late", LATE)):
        for at, score in prof["curves"][model]:
            assert score == pytest.approx(score_at("t", records, REF, at)["relative_score"], abs=1e-12)
    assert [(c["leader_before"], c["leader_after"], c["at_s"]) for c in prof["crossings"]] == [("early", "late", 3.0)]
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = profile_figure(plt, tmp_path, "x")
    assert len(fig.axes) == 1
    plt.close(fig)


def test_no_traces_no_profiles(tmp_path):
    _write(tmp_path, "plain", [{k: v for k, v in r.items() if k != "trace"} for r in EARLY])
    assert anytime_profiles(tmp_path) == {}
