"""tcsexam score: attempt table + cohort -> Index; the spec's example and every rejection rule."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tcsexam.cli import main

#: where a solver-score output's records came from (every relative.json says it): a harness run
OFFLINE_SOURCE = {"protocol": "offline", "origin": "harness", "record_keys": {}}


def _run(h, tmp_path, rows, cohort=None, suite="lite", extra=(), header=None):
    attempts = h.write_csv(tmp_path / "attempts.csv", rows, header=header or h.COLUMNS)
    cohort_path = h.write_json(tmp_path / "cohort.json", cohort or h.cohort_dict())
    out = tmp_path / "build" / "index.json"
    rc = main(
        [
            "score",
            "--suite",
            suite,
            "--attempts",
            str(attempts),
            "--cohort",
            str(cohort_path),
            "--output",
            str(out),
            *extra,
        ]
    )
    return rc, out


def _ok(h, tmp_path, rows, **kw):
    rc, out = _run(h, tmp_path, rows, **kw)
    assert rc == 0
    return json.loads(out.read_text())


def test_spec_example_is_55_5(h, tmp_path, lite):
    data = _ok(h, tmp_path, h.example_rows(lite))
    model = data["models"]["my-model"]
    assert model["index"] == 55.5  # exactly, as the spec says
    assert model["track_means"] == {"theorem": 0.4, "solver": 0.25, "construction": 1.2, "open_conjecture": 0.0}
    assert model["status"] == "complete" and model["issues"] == [] and data["status"] == "complete"
    assert data["metric_id"] == "tcsexam-index-original-30303010-v0.1"
    assert (data["suite"], data["solver_protocol"], data["solver_reference_id"]) == (
        "lite",
        "offline",
        "paper-k3-fixed-260925",
    )
    assert model["coverage"]["solver"] == {
        "tasks_complete": 5,
        "tasks_planned": 5,
        "attempts_valid": 5,
        "attempts_planned": 5,
    }


def test_missing_task_makes_model_incomplete_with_null_index(h, tmp_path, lite):
    rows = [r for r in h.example_rows(lite) if r[2] != "sat-satlib"]
    data = _ok(h, tmp_path, rows)
    model = data["models"]["my-model"]
    assert data["status"] == "incomplete" and model["status"] == "incomplete" and model["index"] is None
    assert model["coverage"]["solver"]["tasks_complete"] == 4 and model["track_means"]["solver"] is None
    assert model["track_means"]["theorem"] == 0.4  # complete tracks are still reported
    assert model["issues"] == [
        {
            "model": "my-model",
            "track": "solver",
            "item": "sat-satlib",
            "attempt": None,
            "reason": "missing",
            "message": "planned repetition 1 of 1 has no adopted attempt row",
        }
    ]


@pytest.mark.parametrize("state", ["judge_failed", "not_finished", "missing"])
def test_failed_adopted_attempt_is_an_issue(h, tmp_path, lite, state):
    rows = h.example_rows(lite)
    rows[7][4], rows[7][6] = "", state
    model = _ok(h, tmp_path, rows)["models"]["my-model"]
    assert model["status"] == "incomplete" and model["index"] is None
    assert [(i["item"], i["attempt"], i["reason"]) for i in model["issues"]] == [(rows[7][2], "1", state)]


def test_excluded_rows_are_retained_not_aggregated(h, tmp_path, lite):
    rows = h.example_rows(lite)
    rows.append(
        ["my-model", "solver", "maxcut-mqlib", "old", "0.9", "excluded", "valid", "fixed_reference_relative", "online"]
    )
    rows.append(
        ["my-model", "theorem", rows[0][2], "broken", "", "excluded", "judge_failed", "original_task_score", ""]
    )
    model = _ok(h, tmp_path, rows)["models"]["my-model"]
    assert model["index"] == 55.5 and model["status"] == "complete" and model["attempts"]["excluded"] == 2


def test_provisional_attempts_label_a_complete_result(h, tmp_path, lite):
    rows = h.example_rows(lite)
    rows[0][5] = "selected_provisional"
    rows.append(["other", "theorem", rows[0][2], "1", "1", "selected", "valid", "original_task_score", ""])
    cohort = h.cohort_dict(models={"my-model": {"attempts_per_task": 1}, "other": {"attempts_per_task": 1}})
    data = _ok(h, tmp_path, rows, cohort=cohort)
    assert data["models"]["my-model"]["status"] == "provisional" and data["models"]["my-model"]["index"] == 55.5
    assert data["models"]["other"]["status"] == "incomplete" and len(data["models"]["other"]["issues"]) == 19
    assert data["status"] == "incomplete"  # the worst of the models


def test_repetitions_average_first_then_tasks_equally(h, tmp_path, lite):
    rows = h.example_rows(lite)
    theorem0 = rows[0][2]
    rows = [r for r in rows if r[2] != theorem0]
    for a, s in enumerate(["1", "0", "0"], start=1):  # task mean 1/3 from three repetitions
        rows.append(["my-model", "theorem", theorem0, f"rep{a}", s, "selected", "valid", "original_task_score", ""])
    cohort = h.cohort_dict(models={"my-model": {"attempts_per_task": 1, "tasks": {theorem0: 3}}})
    model = _ok(h, tmp_path, rows, cohort=cohort)["models"]["my-model"]
    assert model["task_means"][theorem0] == pytest.approx(1 / 3)
    assert model["track_means"]["theorem"] == pytest.approx((1 / 3 + 1 + 0 + 0 + 0) / 5, rel=1e-15)
    assert model["coverage"]["theorem"]["attempts_planned"] == 7


def test_track_spelling_is_normalised_and_extra_columns_kept(h, tmp_path, lite):
    rows = [r + ["a note"] for r in h.example_rows(lite)]
    for r in rows:
        if r[1] == "open_conjecture":
            r[1] = "Open-Conjecture"
    data = _ok(h, tmp_path, rows, header=h.COLUMNS + ["note"])
    assert data["models"]["my-model"]["index"] == 55.5


def test_solver_scores_dir_matches_rows(h, tmp_path, lite):
    rows = h.example_rows(lite)
    root = tmp_path / "solver"
    for r in rows:
        if r[1] == "solver":
            h.write_json(
                (root / r[0] / r[2] / r[3]).mkdir(parents=True) or root / r[0] / r[2] / r[3] / "relative.json",
                {
                    "task": r[2],
                    "reference_id": "paper-k3-fixed-260925",
                    "relative_score": 0.25,
                    "records_source": OFFLINE_SOURCE,
                },
            )
    data = _ok(h, tmp_path, rows, extra=["--solver-scores", str(root)])
    assert data["models"]["my-model"]["index"] == 55.5


# --- rejections: one test per rule; exit 1, one line naming the row, no output ---------------


def _rejected(h, tmp_path, capsys, rows, needle, **kw):
    rc, out = _run(h, tmp_path, rows, **kw)
    err = capsys.readouterr().err
    assert rc == 1, err
    assert not out.exists() and not out.parent.exists()
    assert err.count("\n") == 1 and "Traceback" not in err
    for part in [needle] if isinstance(needle, str) else needle:
        assert part in err, err
    return err


def _edit(rows, i, **cells):
    index = {
        c: k
        for k, c in enumerate(
            "model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol".split(",")
        )
    }
    for key, value in cells.items():
        rows[i][index[key]] = value
    return rows


def test_rejects_missing_column(h, tmp_path, capsys, lite):
    rows = [r[:-1] for r in h.example_rows(lite)]
    _rejected(h, tmp_path, capsys, rows, "missing column(s) solver_protocol", header=h.COLUMNS[:-1])


def test_rejects_repeated_column(h, tmp_path, capsys, lite):
    rows = [r + [r[4]] for r in h.example_rows(lite)]
    _rejected(h, tmp_path, capsys, rows, "column 'score' appears twice", header=h.COLUMNS + ["score"])


def test_rejects_empty_and_malformed_csv(h, tmp_path, capsys, lite):
    (tmp_path / "attempts.csv").write_text("")
    cohort = h.write_json(tmp_path / "cohort.json", h.cohort_dict())
    out = tmp_path / "o.json"
    assert (
        main(
            [
                "score",
                "--suite",
                "lite",
                "--attempts",
                str(tmp_path / "attempts.csv"),
                "--cohort",
                str(cohort),
                "--output",
                str(out),
            ]
        )
        == 1
    )
    assert "attempt table is empty" in capsys.readouterr().err and not out.exists()
    rows = h.example_rows(lite)
    rows[3] = rows[3] + ["surplus"]
    _rejected(h, tmp_path, capsys, rows, ["attempts.csv: row 4 (my-model,theorem,", "10 cells but the header has 9"])
    # on the first data row too (pandas would shift the columns and report an unknown track)
    rows = h.example_rows(lite)
    rows[0] = rows[0] + ["surplus"]
    _rejected(h, tmp_path, capsys, rows, ["attempts.csv: row 1 (my-model,", "a cell too many"])


def test_rejects_unknown_track(h, tmp_path, capsys, lite):
    _rejected(
        h,
        tmp_path,
        capsys,
        _edit(h.example_rows(lite), 2, track="proofs"),
        ["row 3 (my-model,proofs,", "unknown track 'proofs'"],
    )


def test_rejects_model_not_in_cohort(h, tmp_path, capsys, lite):
    _rejected(
        h,
        tmp_path,
        capsys,
        _edit(h.example_rows(lite), 4, model="stranger"),
        ["row 5 (stranger,", "model 'stranger' is not in the cohort"],
    )


def test_rejects_unknown_task(h, tmp_path, capsys, lite):
    _rejected(
        h,
        tmp_path,
        capsys,
        _edit(h.example_rows(lite), 6, item="sat-bogus"),
        ["row 7 (", "task 'sat-bogus' is not in suite 'lite'"],
    )


def test_rejects_task_in_the_wrong_track(h, tmp_path, capsys, lite):
    _rejected(
        h,
        tmp_path,
        capsys,
        _edit(h.example_rows(lite), 0, item="maxcut-mqlib"),
        ["row 1 (", "is a solver task of suite 'lite', not theorem"],
    )


def test_rejects_full_only_task_in_lite(h, tmp_path, capsys, lite):
    rows = h.example_rows(lite) + [
        [
            "my-model",
            "solver",
            "tsp-tsplib-large",
            "1",
            "0.5",
            "excluded",
            "valid",
            "fixed_reference_relative",
            "offline",
        ]
    ]
    _rejected(h, tmp_path, capsys, rows, ["row 21 (", "'tsp-tsplib-large' is not in suite 'lite'"])


@pytest.mark.parametrize(
    "column, value, needle",
    [
        ("adoption_status", "chosen", "adoption_status 'chosen' is not one of"),
        ("score_status", "ok", "score_status 'ok' is not one of"),
        ("score_type", "raw", "score_type 'raw' is not one of"),
        ("solver_protocol", "hybrid", "solver_protocol 'hybrid' is not online, offline or empty"),
        ("attempt", "", "attempt is empty"),
        ("score", "high", "score 'high' is not a number"),
        ("score", "nan", "score 'nan' is not a number"),
        ("score", "inf", "score 'inf' is not finite"),
        ("score", "", "score_status is valid but the score is empty"),
    ],
)
def test_rejects_bad_cell(h, tmp_path, capsys, lite, column, value, needle):
    _rejected(h, tmp_path, capsys, _edit(h.example_rows(lite), 8, **{column: value}), ["row 9 (", needle])


def test_rejects_solver_row_without_fixed_reference_relative(h, tmp_path, capsys, lite):
    _rejected(
        h,
        tmp_path,
        capsys,
        _edit(h.example_rows(lite), 5, score_type="original_task_score"),
        ["row 6 (my-model,solver,maxcut-mqlib,1)", "needs score_type fixed_reference_relative"],
    )


def test_rejects_fixed_reference_relative_outside_solver(h, tmp_path, capsys, lite):
    _rejected(
        h,
        tmp_path,
        capsys,
        _edit(h.example_rows(lite), 10, score_type="fixed_reference_relative"),
        ["row 11 (", "a construction row needs score_type original_task_score"],
    )


def test_rejects_solver_row_without_protocol(h, tmp_path, capsys, lite):
    _rejected(
        h,
        tmp_path,
        capsys,
        _edit(h.example_rows(lite), 5, solver_protocol=""),
        ["row 6 (", "must declare solver_protocol"],
    )


def test_rejects_adopted_solver_row_of_other_protocol(h, tmp_path, capsys, lite):
    _rejected(
        h,
        tmp_path,
        capsys,
        _edit(h.example_rows(lite), 9, solver_protocol="online"),
        ["row 10 (my-model,solver,maxsat-wcnf,1)", "solver_protocol 'online' but the cohort declares 'offline'"],
    )


@pytest.mark.parametrize(
    "row, score, needle",
    [
        (0, "0.5", "theorem scores must be 0 or 1"),
        (15, "0.2", "open_conjecture scores must be 0 or 1"),
        (10, "-0.1", "construction scores must be non-negative"),
        (5, "1.5", "solver relative scores lie in [0, 1]"),
    ],
)
def test_rejects_score_out_of_range(h, tmp_path, capsys, lite, row, score, needle):
    _rejected(h, tmp_path, capsys, _edit(h.example_rows(lite), row, score=score), [f"row {row + 1} (", needle])


def test_construction_may_exceed_one(h, tmp_path, lite):
    rows = h.example_rows(lite)
    for r in rows:
        if r[1] == "construction":
            r[4] = "3.5"
    assert _ok(h, tmp_path, rows)["models"]["my-model"]["index"] == 12.0 + 7.5 + 105.0


def test_rejects_duplicate_identity(h, tmp_path, capsys, lite):
    rows = h.example_rows(lite)
    rows.append(list(rows[3]))
    rows[-1][5] = "excluded"
    _rejected(h, tmp_path, capsys, rows, ["row 21 (my-model,theorem,", "duplicate attempt identity", "also row 4"])


def test_rejects_more_adopted_attempts_than_planned(h, tmp_path, capsys, lite):
    rows = h.example_rows(lite)
    rows.append(
        ["my-model", "solver", "tsp-tsplib", "2", "0.3", "selected", "valid", "fixed_reference_relative", "offline"]
    )
    _rejected(
        h, tmp_path, capsys, rows, ["row 21 (my-model,solver,tsp-tsplib,2)", "has 2 adopted attempts but 1 are planned"]
    )


@pytest.mark.parametrize(
    "cohort_edit, needle",
    [
        (lambda c: c.pop("models"), "(top level): missing key 'models'"),
        (lambda c: c.update(solver_protocol="hybrid"), "solver_protocol: 'hybrid' is not one of"),
        (lambda c: c["models"]["my-model"].update(attempts_per_task=0), "models/my-model/attempts_per_task"),
        (lambda c: c["models"]["my-model"].update(attempts_per_task="3"), "models/my-model/attempts_per_task"),
        (lambda c: c.update(reference="x"), "unknown key(s) reference"),
        (lambda c: c.update(suite="full"), "suite 'full' does not match the suite being scored ('lite')"),
        (
            lambda c: c["models"]["my-model"].update(tasks={"nope": 2}),
            "models/my-model/tasks: task 'nope' is not in suite",
        ),
    ],
)
def test_rejects_bad_cohort(h, tmp_path, capsys, lite, cohort_edit, needle):
    cohort = h.cohort_dict()
    cohort_edit(cohort)
    _rejected(h, tmp_path, capsys, h.example_rows(lite), ["cohort.json: ", needle], cohort=cohort)


def test_rejects_cohort_with_nan(h, tmp_path, capsys, lite):
    h.write_csv(tmp_path / "attempts.csv", h.example_rows(lite))
    (tmp_path / "cohort.json").write_text('{"suite": NaN}')
    out = tmp_path / "o.json"
    assert (
        main(
            [
                "score",
                "--suite",
                "lite",
                "--attempts",
                str(tmp_path / "attempts.csv"),
                "--cohort",
                str(tmp_path / "cohort.json"),
                "--output",
                str(out),
            ]
        )
        == 1
    )
    assert "cohort.json: malformed cohort file" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize(
    "content, needle",
    [
        (None, "no solver-score output at"),
        (
            {
                "task": "sat-satlib",
                "reference_id": "tcsexam-bundled-k3-v2",
                "relative_score": 0.25,
                "records_source": OFFLINE_SOURCE,
            },
            "was scored against reference 'tcsexam-bundled-k3-v2', but the cohort declares 'paper-k3-fixed-260925'",
        ),
        (
            {
                "task": "tsp-tsplib",
                "reference_id": "paper-k3-fixed-260925",
                "relative_score": 0.25,
                "records_source": OFFLINE_SOURCE,
            },
            "is for task 'tsp-tsplib'",
        ),
        (
            {
                "task": "sat-satlib",
                "reference_id": "paper-k3-fixed-260925",
                "relative_score": 0.2500001,
                "records_source": OFFLINE_SOURCE,
            },
            "differs from relative_score 0.2500001",
        ),
    ],
)
def test_rejects_solver_rows_not_backed_by_solver_score_outputs(h, tmp_path, capsys, lite, content, needle):
    rows = h.example_rows(lite)
    root = tmp_path / "solver"
    for r in rows:
        if r[1] == "solver":
            d = root / r[0] / r[2] / r[3]
            d.mkdir(parents=True)
            body = {
                "task": r[2],
                "reference_id": "paper-k3-fixed-260925",
                "relative_score": 0.25,
                "records_source": OFFLINE_SOURCE,
            }
            if r[2] == "sat-satlib":
                body = content
            if body is not None:
                h.write_json(d / "relative.json", body)
    _rejected(
        h,
        tmp_path,
        capsys,
        rows,
        ["row 7 (my-model,solver,sat-satlib,1)", needle],
        extra=["--solver-scores", str(root)],
    )


# --- the real console script -------------------------------------------------------------------


def _script() -> str:
    exe = Path(sys.executable).with_name("tcsexam")
    return str(exe) if exe.exists() else "tcsexam"


def test_subprocess_exit_codes(h, tmp_path, lite):
    attempts = h.write_csv(tmp_path / "attempts.csv", h.example_rows(lite))
    cohort = h.write_json(tmp_path / "cohort.json", h.cohort_dict())
    out = tmp_path / "index.json"
    base = [
        _script(),
        "score",
        "--suite",
        "lite",
        "--attempts",
        str(attempts),
        "--cohort",
        str(cohort),
        "--output",
        str(out),
    ]
    done = subprocess.run(base, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["models"]["my-model"]["index"] == 55.5
    out.unlink()
    h.write_csv(attempts, _edit(h.example_rows(lite), 1, model="ghost"))
    done = subprocess.run(base, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "row 2 (ghost," in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()
    done = subprocess.run([_script(), "score", "--suite", "lite"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "required" in done.stderr


def test_subprocess_solver_score_refusal(h, tmp_path):
    ref = h.write_json(tmp_path / "ref.json", h.reference_dict())
    rec = h.write_json(
        tmp_path / "r.json",
        [
            {"instance": "example-1", "status": "ok", "A": 12},
            {"instance": "example-2", "status": "infrastructure_error"},
        ],
    )
    out = tmp_path / "o.json"
    done = subprocess.run(
        [
            _script(),
            "solver-score",
            "--task",
            "t",
            "--records",
            str(rec),
            "--reference",
            str(ref),
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "'example-2'" in done.stderr and not out.exists()


def test_header_only_table_leaves_every_model_incomplete(h, tmp_path, lite):
    data = _ok(h, tmp_path, [])
    model = data["models"]["my-model"]
    assert model["status"] == "incomplete" and model["index"] is None and len(model["issues"]) == 20
    assert all(v is None for v in model["track_means"].values())


def test_unwritable_output_and_directory_input_are_one_line_errors(h, tmp_path, capsys, lite):
    attempts = h.write_csv(tmp_path / "attempts.csv", h.example_rows(lite))
    cohort = h.write_json(tmp_path / "cohort.json", h.cohort_dict())
    rc = main(
        ["score", "--suite", "lite", "--attempts", str(attempts), "--cohort", str(cohort), "--output", str(tmp_path)]
    )
    err = capsys.readouterr().err
    assert rc == 1 and "cannot write the output" in err and err.count("\n") == 1
    rc = main(
        [
            "score",
            "--suite",
            "lite",
            "--attempts",
            str(tmp_path),
            "--cohort",
            str(cohort),
            "--output",
            str(tmp_path / "o.json"),
        ]
    )
    err = capsys.readouterr().err
    assert rc == 1 and "cannot read attempt table" in err and not (tmp_path / "o.json").exists()


def test_full_suite(h, tmp_path, full):
    data = _ok(h, tmp_path, h.example_rows(full), cohort=h.cohort_dict(suite="full"), suite="full")
    model = data["models"]["my-model"]
    assert data["suite"] == "full" and model["status"] == "complete"
    assert model["coverage"]["solver"]["tasks_planned"] == 13  # 5 Lite + 2 large library + 6 generated families
    means = model["track_means"]
    assert means["theorem"] == 0.5 and means["solver"] == 0.25  # theorem tasks 1,1,0,0,0,1,1,0
    assert model["index"] == 30 * means["theorem"] + 30 * 0.25 + 30 * means["construction"] + 10 * 0.0
