"""Rebuild references/instances/<task>/ and config/tasks/<task>.yaml from ../shared/data.

Run from the repository root: `.venv/bin/python references/instances/assemble.py [SHARED_DATA]`.
Copies the instance files byte for byte and writes each task file with its limits and per-instance
metadata (best-known values, labels, optima). Generated MaxSAT instances are made with the
package's seeded generator (fixed seeds), so a rerun reproduces every byte.
"""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "data"
INST = ROOT / "references" / "instances"
TASKS = ROOT / "config" / "tasks"

HEADER = (
    "# Solver-track task (format: src/tcsexam/tasks.py; problems: docs/problems.md).\n"
    "# Written by references/instances/assemble.py from ../shared/data (see\n"
    "# references/instances/PROVENANCE.md); edit the script, not this file.\n"
)


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def write_task(task_id: str, problem: str, kind: str, direction: str, limits: dict,
               instances: list[dict], description: str) -> None:
    doc = {
        "id": task_id,
        "problem": problem,
        "kind": kind,
        "direction": direction,
        "description": description,
        "limits": limits,
        "instance_dir": f"references/instances/{task_id}",
        "instances": instances,
    }
    text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=100)
    (TASKS / f"{task_id}.yaml").write_text(HEADER + text)


def copy(src: Path, task_id: str, name: str | None = None) -> str:
    dest_dir = INST / task_id
    dest_dir.mkdir(parents=True, exist_ok=True)
    name = name or src.name
    shutil.copyfile(src, dest_dir / name)
    return name


def maxcut() -> None:
    table = rows(SHARED / "maxcut" / "gset" / "best_known.csv")
    lite, large = [], []
    for r in table:
        entry = {"name": r["instance"], "file": None, "n": int(r["n"]), "m": int(r["m"]),
                 "best_known": int(r["best_known"])}
        (lite if int(r["n"]) == 800 else large).append(entry)
    for task_id, entries, limits, desc in (
        ("maxcut-mqlib", lite, {"wall_s": 3, "mem_mb": 1024},
         "MaxCut on the 800-vertex G-set graphs (MQLib/rudy format); reward = cut / best known"),
        ("maxcut-gset-large", large, {"wall_s": 10, "mem_mb": 2048},
         "MaxCut on the G-set graphs with 1,000 to 20,000 vertices; reward = cut / best known"),
    ):
        for e in entries:
            e["file"] = copy(SHARED / "maxcut" / "gset" / f"{e['name']}.txt", task_id)
        write_task(task_id, "maxcut", "objective", "maximize", limits, entries, desc)


STEPS = {"maxcut": maxcut}

if __name__ == "__main__":
    TASKS.mkdir(parents=True, exist_ok=True)
    for step in (sys.argv[2:] or STEPS):
        STEPS[step]()
