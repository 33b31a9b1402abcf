"""The explorer's Index against cost: index.json's top-level cost (Pareto front, solved bars) and
every attempt of generation.csv (tokens, cost, stop reason) with links to its generation record and
its transcript (docs/scoring.md, "Cost beside the Index")."""

from __future__ import annotations

import os
from pathlib import Path

from tcsexam.fileio import JsonObject
from tcsexam.scoring.generation import GENERATION_TABLE, read_generation_table


def _link(target: Path, base: Path) -> str:
    """A link from the site folder `base` to `target` (as collect.py's)."""
    return Path(os.path.relpath(target, base)).as_posix()


#: what the explorer shows of each attempt's generation (generation.csv)
COST_FIELDS = (
    "model",
    "track",
    "item",
    "attempt",
    "cost_missing",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "wall_time_s",
    "turns",
    "tool_calls",
    "feedback_calls",
    "stop_reason",
    "sample_uuid",
)


def collect_cost(run_abs: Path, site: Path, index: JsonObject | None) -> JsonObject | None:
    """Index against cost: index.json's top-level cost (Pareto front, solved bars) and every
    attempt of generation.csv with links to its record and transcript (None: neither exists)."""
    path = run_abs / GENERATION_TABLE
    top = (index or {}).get("cost")
    if not path.is_file() and not isinstance(top, dict):
        return None
    attempts = []
    for e in read_generation_table(path) if path.is_file() else []:
        row = {k: getattr(e, k) for k in COST_FIELDS}
        row["cost_missing"] = str(e.cost_missing) if e.cost_missing else None
        links = {}
        if e.record and Path(e.record).is_file():
            links["generation.json"] = _link(Path(e.record), site)
        if e.transcript and Path(e.transcript).is_file():
            links["transcript"] = _link(Path(e.transcript), site)
        row["links"] = links
        row["transcript_path"] = e.transcript or None
        attempts.append(row)
    top = top if isinstance(top, dict) else {}
    return {
        "pareto_front": top.get("pareto_front") or [],
        "solved_at": top.get("solved_at"),
        "scored": bool(top),
        "attempts": attempts,
        "file": _link(path, site) if path.is_file() else None,
    }
