"""Measured seconds per Solver instance and proof item, from earlier runs' results trees: what
`tcsexam plan` estimates a campaign with and what the workflow's batches are sized by
(config `batch.timings`; docs/workflow.md, "Planning a campaign")."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path

from tcsexam.errors import InputError


class TimingSource(StrEnum):
    """Where a job's expected work came from."""

    MEASURED = "measured"  # records of an earlier run (every instance measured)
    PARTLY_MEASURED = "partly_measured"  # some instances measured, the others at the task's measured mean
    LIMIT = "limit"  # the task's wall limit per instance (an upper bound)


class Timings:
    """Measured seconds per (task, instance) and per proof item, medians over every run found."""

    def __init__(self, folders: Iterable[str | Path] = ()):
        samples: dict[tuple[str, str], list[float]] = defaultdict(list)
        self.folders = [Path(f) for f in folders]
        for folder in self.folders:
            if not folder.is_dir():
                raise InputError(f"--timings {folder}: not a folder (a results tree of an earlier run)")
            for path in sorted(folder.rglob("records.json")):
                for rec in _json_list(path):
                    if isinstance(rec, dict) and isinstance(rec.get("wall_s"), (int, float)):
                        samples[(str(rec.get("task")), str(rec.get("instance")))].append(float(rec["wall_s"]))
            for path in sorted(folder.rglob("verdict.json")):
                data = _json_dict(path)
                if data and isinstance(data.get("wall_s"), (int, float)) and data.get("item"):
                    samples[(str(data["item"]), "")].append(float(data["wall_s"]))
        self.instance = {key: statistics.median(v) for key, v in samples.items()}
        by_task: dict[str, list[float]] = defaultdict(list)
        for (task, _), value in self.instance.items():
            by_task[task].append(value)
        self.task_mean = {task: statistics.fmean(v) for task, v in by_task.items()}

    def work(self, task: str, instances: list[str], limit_s: float) -> tuple[float, TimingSource]:
        """Expected seconds of `instances` of `task`, and where they came from."""
        measured = [self.instance[(task, i)] for i in instances if (task, i) in self.instance]
        if len(measured) == len(instances) and instances:
            return sum(measured), TimingSource.MEASURED
        if task in self.task_mean:
            rest = len(instances) - len(measured)
            return sum(measured) + rest * self.task_mean[task], TimingSource.PARTLY_MEASURED
        return len(instances) * limit_s, TimingSource.LIMIT


def _json_list(path: Path) -> list:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return data if isinstance(data, list) else []


def _json_dict(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
