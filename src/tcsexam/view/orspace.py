"""The explorer's OR-Space part: the leaderboard across runs (<dir>/leaderboard.json); per run and
stage condition the judged rows (<dir>/<run>/<condition>/objectives.json and explain.json) and,
for the rows an agent generated (tcsexam agents generate, docs/agents.md), how the generation
stopped and links to its record and transcript."""

from __future__ import annotations

import os
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, read_json
from tcsexam.orspace.release import OBJECTIVE_MODES


def _link(target: Path, base: Path) -> str:
    """A link from the site folder `base` to `target` (as collect.py's)."""
    return Path(os.path.relpath(target, base)).as_posix()


def collect_orspace(folder: Path | None, site: Path) -> list[JsonObject]:
    """OR-Space results: <folder>/<run>/<condition>/{objectives.json, explain.json}."""
    if folder is None or not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*/*/objectives.json")) + sorted(folder.glob("*/*/explain.json")):
        data = read_json(path, "OR-Space result")
        if not isinstance(data, dict):
            raise InputError(f"{path}: an OR-Space result must be a JSON object")
        kind = "objectives" if path.name == "objectives.json" else "explain"
        rows = [_with_generation(r, path.parent, site) for r in data.get("rows", []) if isinstance(r, dict)]
        summary = {k: v for k, v in data.items() if k != "rows" and not isinstance(v, (dict, list))}
        out.append(
            {
                "run": path.parent.parent.name,
                "condition": path.parent.name,
                "kind": kind,
                "summary": summary,
                "failure_modes": data.get("failure_modes"),
                "rows": rows,
                "file": _link(path, site),
            }
        )
    board = folder / "leaderboard.json"
    if board.is_file():
        out.insert(0, _leaderboard(board, site))
    return out


def _leaderboard(path: Path, site: Path) -> JsonObject:
    """The OR-Space leaderboard (tcsexam orspace leaderboard) as one explorer table: a row per run
    (its `workspace_id` is the run, so the table's click shows the run's details)."""
    data = read_json(path, "OR-Space leaderboard")
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise InputError(f"{path}: an OR-Space leaderboard must be a JSON object with runs")
    rows = []
    for run in data["runs"]:
        modes = run.get("modes") or {}
        effects = {f"interface_{e['mode']}": e.get("difference") for e in run.get("interface_effect") or []}
        effects.update({e["kind"]: e.get("difference") for e in run.get("legacy_code_effect") or []})
        rows.append(
            {
                "workspace_id": run["run"],
                "condition": run.get("condition"),
                **{f"{m}_pass_at_1": (modes.get(m) or {}).get("pass_at_1") for m in OBJECTIVE_MODES},
                "explain_mean": (run.get("explain") or {}).get("mean_score"),
                **effects,
                "attributions": ", ".join(f"{k} {v}" for k, v in (run.get("attributions") or {}).items() if v),
                "details": run,
            }
        )
    corr = data.get("explain_vs_build_revise") or {}
    return {
        "run": "all runs",
        "condition": "headline condition per run",
        "kind": "leaderboard",
        "summary": {"explain_vs_build_revise_r": corr.get("r"), "runs_with_both": corr.get("n_runs")},
        "failure_modes": None,
        "rows": rows,
        "file": _link(path, site),
    }


#: what the explorer shows of an agent's generation record (tcsexam agents generate, docs/agents.md)
GENERATION_FIELDS = (
    "stop_reason",
    "final",
    "turns",
    "tool_calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "wall_time_s",
    "working_time_s",
    "sample_uuid",
)


def _with_generation(row: JsonObject, cond_dir: Path, site: Path) -> JsonObject:
    """A judged row with the generation that produced it, when an agent did (the workflow's
    <run>/<condition>/generation/samples/<workspace_id>/generation.json): how it stopped, what it
    cost, and links to the record and to its transcript (the `.eval` log, `inspect view`)."""
    wid = row.get("workspace_id")
    gen_dir = cond_dir / "generation"
    path = gen_dir / "samples" / str(wid) / "generation.json" if isinstance(wid, str) else None
    if path is None or not path.is_file():
        return row
    record = read_json(path, "generation record")
    if not isinstance(record, dict):
        raise InputError(f"{path}: a generation record must be a JSON object")
    links = {"generation.json": _link(path, site)}
    log_file = record.get("log_file")
    if isinstance(log_file, str) and log_file:
        log = Path(log_file) if Path(log_file).is_absolute() else gen_dir / log_file
        if log.is_file():
            links["transcript"] = _link(log, site)
            links["logs"] = _link(log.parent, site)
    generation = {k: record.get(k) for k in GENERATION_FIELDS}
    generation["model"] = (record.get("model") or {}).get("name") if isinstance(record.get("model"), dict) else None
    return {**row, "generation": generation, "generation_links": links}
