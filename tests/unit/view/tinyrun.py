"""A tiny fabricated run directory for the explorer's tests, written through the project's own code:
instance records by `InstanceRecord.to_dict` under the tree's record key, relative.json by the real
`solver_score`, index.json by the real scorer (`score_files` + `add_confidence_intervals`).

Two models (alpha, beta), one attempt, the Lite suite's twenty items, three instances per Solver
task; every record status but infrastructure_error appears. `make_run(..., flip=...)` turns chosen
records into timeouts (a second run for the comparison tests).
"""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

from tcsexam.attempts.online import records_source
from tcsexam.records import InstanceRecord
from tcsexam.records.key import ensure_key
from tcsexam.scoring.bootstrap import add_confidence_intervals
from tcsexam.scoring.index import score_files
from tcsexam.scoring.reference import reference_from_dict
from tcsexam.scoring.solver_score import solver_score
from tcsexam.suites import load_suite

MODELS = ("alpha", "beta")
REFERENCE_ID = "tiny-ref-v1"
COLUMNS = "model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol,note".split(",")
#: (model, task, instance) -> (status, A, message, stderr); the rest are ok with a model-dependent value
SPECIAL = {
    ("beta", "sat-satlib", "sat-satlib-2"): ("timeout", None, "walltime limit (2 s)", ""),
    ("beta", "tsp-tsplib", "tsp-tsplib-1"): (
        "certificate_failed",
        None,
        "tour visits city 3 twice",
        "",
    ),
    ("beta", "coloring-dimacs", "coloring-dimacs-3"): (
        "crash",
        None,
        "exit code 1; stderr: Traceback ... ZeroDivisionError",
        'Traceback (most recent call last):\n  File "solve.py", line 9\nZeroDivisionError: division by zero',
    ),
    ("beta", "maxsat-wcnf", "maxsat-wcnf-1"): ("invalid", None, "no certificate written", ""),
    ("beta", "maxcut-mqlib", "maxcut-mqlib-3"): ("memout", None, "memory limit (1024 MB)", ""),
}
DIRECTION = {"tsp-tsplib": "minimize", "coloring-dimacs": "minimize"}


ROOT = Path(__file__).resolve().parents[3]
#: the changed record of the second tiny run (a status change the comparison must show)
FLIPPED = ("alpha", "maxcut-mqlib", "maxcut-mqlib-2")


def build_site(run: Path, out: Path, *extra: str) -> Path:
    proc = subprocess.run(
        [sys.executable, "-m", "tcsexam", "view", str(run), *extra, "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert proc.returncode == 0, proc.stderr
    return out


def instances(task: str) -> list[str]:
    return [f"{task}-{i}" for i in (1, 2, 3)]


def _reference(suite) -> dict:
    tasks = {}
    for t in suite.tracks["solver"]:
        tasks[t] = {
            "kind": "objective",
            "direction": DIRECTION.get(t, "maximize"),
            "instances": {
                name: [100.0 + 10 * i, 104.0 + 10 * i, 108.0 + 10 * i] for i, name in enumerate(instances(t))
            },
        }
    return {
        "schema_version": 1,
        "reference_id": REFERENCE_ID,
        "suite": "lite",
        "scale_floors": {"relative": 0.02, "absolute": 1e-9},
        "tasks": tasks,
        "unscored_reference_instances": {},
    }


def make_run(
    folder: Path, flip: set[tuple[str, str, str]] = frozenset(), drop: set[tuple[str, str]] = frozenset()
) -> Path:
    """The run directory `folder` (results/<suite>/<protocol> shaped); `flip`: (model, task, instance)
    records made timeouts; `drop`: (model, item) attempt rows left out (the model is incomplete)."""
    suite = load_suite("lite")
    folder.mkdir(parents=True)
    key = ensure_key(folder)
    ref_data = _reference(suite)
    reference = reference_from_dict(ref_data)
    (folder / "reference.json").write_text(json.dumps(ref_data))
    rows = []
    for m, model in enumerate(MODELS):
        for t in suite.tracks["solver"]:
            adir = folder / "solver" / model / t / "1"
            (adir / "records").mkdir(parents=True)
            records = []
            sign = 1 if DIRECTION.get(t, "maximize") == "maximize" else -1
            for i, name in enumerate(instances(t)):
                mu = 104.0 + 10 * i
                status, value, message, stderr = "ok", mu + sign * (6.0 if m == 0 else -3.0 + i), f"value {i}", ""
                if (model, t, name) in SPECIAL:
                    status, value, message, stderr = SPECIAL[(model, t, name)]
                if (model, t, name) in flip:
                    status, value, message, stderr = "timeout", None, "walltime limit (flipped)", ""
                extra = {"stderr_tail": stderr} if stderr else {}
                trace = None
                if status == "ok" and t == "maxcut-mqlib":
                    trace = [[0.1, "ok", value - 5], [0.4, "ok", value - 1], [0.9, "ok", value]]
                rec = InstanceRecord(
                    instance=name,
                    status=status,
                    A=value,
                    claimed=value,
                    message=message,
                    wall_s=0.5 + i,
                    cpu_s=0.4 + i,
                    peak_mem_mb=20.0 + i,
                    exit_code=1 if status == "crash" else 0,
                    termination={"timeout": "walltime", "memout": "memory"}.get(status, "exit"),
                    sandbox="bwrap",
                    limiter="light",
                    task=t,
                    attempt="1",
                    candidate_hash=f"{m:064d}",
                    harness_version="0.1.0",
                    key=f"sha256:{m}{i}{len(t):062d}",
                    extra=extra,
                    trace=trace,
                )
                if status in ("ok", "certificate_failed"):  # what `tcsexam run` keeps beside the records
                    (adir / "certificates").mkdir(exist_ok=True)
                    (adir / "certificates" / f"{name}.txt").write_text(f"certificate of {model} on {name}\n")
                data = rec.to_dict(key)
                (adir / "records" / f"{name}.json").write_text(json.dumps(data))
                records.append(data)
            (adir / "records.json").write_text(json.dumps(records))
            (adir / "run.log").write_text(f"run of {model} on {t}\n")
            rel = solver_score(t, records, reference, str(adir / "records.json"))
            rel["records_source"] = records_source(records, adir / "records.json")
            (adir / "relative.json").write_text(json.dumps(rel))
            rows.append(
                [
                    model,
                    "solver",
                    t,
                    "1",
                    repr(rel["relative_score"]),
                    "selected",
                    "valid",
                    "fixed_reference_relative",
                    "offline",
                    f"reference {REFERENCE_ID}",
                ]
            )
        for track in ("theorem", "construction", "open_conjecture"):
            for j, item in enumerate(suite.tracks[track]):
                if track == "construction":
                    score = round(0.2 * j + 0.1 * (1 - m), 3)
                    cdir = folder / "construction" / model / item / "1"
                    cdir.mkdir(parents=True)
                    checker = {
                        "task": item,
                        "model": model,
                        "attempt": "1",
                        "checker": f"tiny {item} checker",
                        "status": "ok" if j else "certificate_failed",
                        "value": 10.0 * j,
                        "reward": score,
                        "message": "" if j else "not a valid object",
                        "score": score,
                        "score_status": "valid",
                    }
                    (cdir / "checker.json").write_text(json.dumps(checker))
                    note = f"tiny checker: {checker['status']}"
                else:
                    score = float((j + m) % 2 == 0)
                    vdir = folder / "verdicts" / model / item
                    vdir.mkdir(parents=True)
                    verdict = {
                        "model": model,
                        "track": track,
                        "item": item,
                        "attempt": "1",
                        "original_reward": 0.5 if not score else 1.0,
                        "complete": bool(score),
                        "checker": "coqc 8.16.1 (tiny fixture)",
                        "status": "judged",
                        "message": f"proof of {item} " + ("accepted" if score else "incomplete"),
                    }
                    (vdir / "1.json").write_text(json.dumps(verdict))
                    note = verdict["message"]
                rows.append(
                    [model, track, item, "1", repr(score), "selected", "valid", "original_task_score", "", note]
                )
    with open(folder / "attempts.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        w.writerows(r for r in rows if (r[0], r[2]) not in drop)
    cohort = {
        "suite": "lite",
        "solver_protocol": "offline",
        "solver_reference_id": REFERENCE_ID,
        "models": {m: {"attempts_per_task": 1} for m in MODELS},
    }
    (folder / "cohort.json").write_text(json.dumps(cohort))
    index = score_files(suite, folder / "attempts.csv", folder / "cohort.json", folder / "solver")
    add_confidence_intervals(index, suite, folder / "attempts.csv", folder / "solver", resamples=200)
    (folder / "index.json").write_text(json.dumps(index))
    manifest = {
        "schema_version": 1,
        "run": {"suite": "lite", "solver_protocol": "offline", "solver_reference_id": REFERENCE_ID},
        "tcsexam": {"version": "test"},
        "execution": {"limiters": ["light"], "sandboxes": ["bwrap"], "image_ids": []},
        "reference": {"id": REFERENCE_ID, "file": str(folder / "reference.json"), "sha256": "0" * 64},
        "tasks": {
            t: {
                "file": f"config/tasks/{t}.yaml",
                "sha256": "1" * 64,
                "limits": {"wall_s": 2},
                "instances": {name: "2" * 64 for name in instances(t)},
            }
            for t in suite.tracks["solver"]
        },
        "candidates": {},
        "sources": {"verdicts_dir": str(folder / "verdicts")},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def record_count() -> int:
    return len(MODELS) * 5 * 3


def is_close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0, abs_tol=0)


def make_orspace(folder: Path) -> Path:
    """An OR-Space results folder (<folder>/<run>/<condition>/objectives.json and explain.json) shaped
    like `tcsexam orspace score-objectives` / `explain-score` outputs: two workspaces each."""
    cond = folder / "tiny-orspace" / "revise-all_filesystem_both"
    cond.mkdir(parents=True)
    objectives = {
        "schema_version": 1,
        "benchmark": "or-space",
        "n": 2,
        "passed": 1,
        "pass_at_1": 0.5,
        "failure_modes": {"none": 1, "wrong_objective": 1},
        "rows": [
            {
                "workspace_id": "ws-build-001",
                "mode": "build",
                "difficulty": "easy",
                "status": "Optimal",
                "objective": 219816.0,
                "reference_objective": 219816.0,
                "relative_tolerance": 1e-6,
                "relative_error": 0.0,
                "passed": True,
                "failure_mode": "none",
                "solver": "highs",
            },
            {
                "workspace_id": "ws-revise-002",
                "mode": "revise",
                "difficulty": "hard",
                "status": "Optimal",
                "objective": 120.0,
                "reference_objective": 100.0,
                "relative_tolerance": 1e-6,
                "relative_error": 0.2,
                "passed": False,
                "failure_mode": "wrong_objective",
                "solver": "cbc",
            },
        ],
    }
    explain = {
        "schema_version": 1,
        "benchmark": "or-space-explain",
        "n": 1,
        "mean_score": 61.5,
        "judge_model": "tiny-judge",
        "rows": [
            {
                "workspace_id": "ws-explain-003",
                "status": "scored",
                "answer_status": "given",
                "score": 61.5,
                "coverage": 0.5,
                "reasoning": 15.0,
                "grounding": 12.0,
                "answer_quality": 17.0,
                "hallucination_penalty": 0.0,
                "unfaithful": False,
                "unsupported_claims": ["the LP is unbounded"],
                "criteria": {"c1": {"verdict": True, "rationale": "names the binding constraint"}},
                "judge_usage": {"input_tokens": 900, "output_tokens": 120, "cost_usd": 0.0042},
            },
        ],
    }
    (cond / "objectives.json").write_text(json.dumps(objectives))
    (cond / "explain.json").write_text(json.dumps(explain))
    return folder
