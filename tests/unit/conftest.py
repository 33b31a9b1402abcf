"""Fixtures for the unit tests of scoring and reproducing: small references, records, suites, cohorts
and attempt tables."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tcsexam.suites import load_suite

COLUMNS = "model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol".split(",")


def reference_dict(tasks=None, unscored=None, ref_id="test-ref-v1", floors=None):
    """A reference file as a dict; `tasks` maps task -> (kind, direction, {instance: values})."""
    tasks = tasks or {"t": ("objective", "maximize", {"example-1": [10, 12, 14], "example-2": [5, 6, 7]})}
    return {
        "schema_version": 1,
        "reference_id": ref_id,
        "suite": "lite",
        "scale_floors": floors or {"relative": 0.02, "absolute": 1e-9},
        "tasks": {
            name: {"kind": kind, "direction": direction, "instances": instances}
            for name, (kind, direction, instances) in tasks.items()
        },
        "unscored_reference_instances": unscored or {},
    }


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data))
    return path


def write_csv(path: Path, rows, header=COLUMNS) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def example_rows(suite, model="my-model", attempts=1, protocol="offline"):
    """A complete table whose track means are the spec's P=0.4, S=0.25, C=1.2, O=0 (-> 55.5)."""
    rows = []
    for track, items in suite.tracks.items():
        for j, item in enumerate(items):
            score = {"theorem": [1, 1, 0, 0, 0][j % 5], "solver": 0.25, "construction": 1.2, "open_conjecture": 0}[
                track
            ]
            for a in range(1, attempts + 1):
                rows.append(
                    [
                        model,
                        track,
                        item,
                        str(a),
                        repr(score),
                        "selected",
                        "valid",
                        "fixed_reference_relative" if track == "solver" else "original_task_score",
                        protocol if track == "solver" else "",
                    ]
                )
    return rows


def cohort_dict(models=None, suite="lite", protocol="offline", ref_id="paper-k3-fixed-260925"):
    return {
        "suite": suite,
        "solver_protocol": protocol,
        "solver_reference_id": ref_id,
        "models": models or {"my-model": {"attempts_per_task": 1}},
    }


@pytest.fixture(scope="session")
def lite(project_root):
    return load_suite(project_root / "config" / "suites" / "lite.yaml")


@pytest.fixture(scope="session")
def full(project_root):
    return load_suite(project_root / "config" / "suites" / "full.yaml")


@pytest.fixture(scope="session")
def h():
    """The helper functions above (test modules cannot import conftest under importlib mode)."""
    from types import SimpleNamespace

    return SimpleNamespace(
        reference_dict=reference_dict,
        write_json=write_json,
        write_csv=write_csv,
        example_rows=example_rows,
        cohort_dict=cohort_dict,
        COLUMNS=COLUMNS,
    )
