"""A run's results as one per-instance table (`tcsexam export --format csv|parquet`), for people who
analyse results in dataframes.

One row per judged instance of a Solver attempt (its record and its fixed-reference score) and one
row per attempt of the other tracks (the item is the instance), every row of attempts.csv
represented (an attempt without records: one row with an empty instance), with the attempt's row
and its generation (generation.csv) repeated on each of its rows. Read from the results tree as
the pipeline wrote it; nothing is recomputed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, read_csv, read_json
from tcsexam.layout import ResultsLayout
from tcsexam.scoring.generation import GENERATION_TABLE, AttemptGeneration, read_generation_table
from tcsexam.suites import Track

#: the table's columns, in order
INSTANCE_COLUMNS = (
    "suite",
    "solver_protocol",
    "model",
    "track",
    "item",
    "attempt",
    "instance",
    "adoption_status",
    "score_status",
    "attempt_score",  #: the attempt's score in attempts.csv (what the Index averages)
    "instance_status",  #: the record's status (Solver)
    "instance_value",  #: the record's A (objective) or solved indicator (Solver)
    "instance_score",  #: the instance's fixed-reference score Phi(z) (Solver; empty: not eligible)
    "reference_mu",
    "reference_scale",
    "eligible",
    "wall_s",
    "cpu_s",
    "peak_mem_mb",
    "task_mean",  #: the item's task mean in index.json
    "generation",  #: recorded | none (generation.csv; empty: the run has no generation.csv)
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "cost_missing",
    "generation_wall_s",
    "feedback_calls",
    "stop_reason",
    "transcript",
    "note",
)


@dataclass
class RunResults:
    """What an export reads from one results tree."""

    path: Path
    index: JsonObject
    rows: list[dict[str, str]]  #: attempts.csv, by column
    generation: dict[tuple[str, str, str, str], AttemptGeneration] | None

    @property
    def suite(self) -> str:
        return str(self.index.get("suite"))

    @property
    def protocol(self) -> str:
        return str(self.index.get("solver_protocol"))

    def models(self) -> list[str]:
        return list(self.index["models"])


def load_run(path: str | Path) -> RunResults:
    """index.json, attempts.csv and (when there) generation.csv of the run folder `path`."""
    layout = ResultsLayout(Path(path))
    if not layout.index.is_file():
        raise InputError(f"{path}: no index.json: not a scored run (results/<suite>/<protocol>)")
    index = read_json(layout.index, "index file")
    if not isinstance(index, dict) or not isinstance(index.get("models"), dict):
        raise InputError(f"{layout.index}: not an index.json (no 'models' object)")
    header, body = read_csv(layout.attempts_csv, "attempt table")
    if not header:
        raise InputError(f"{layout.attempts_csv}: the attempt table is empty")
    rows = []
    for number, cells in enumerate(body, start=1):
        if len(cells) > len(header):
            raise InputError(f"{layout.attempts_csv}: row {number}: more cells than the header has columns")
        rows.append(dict(zip(header, cells + [""] * (len(header) - len(cells)))))
    generation = None
    gen_path = Path(path) / GENERATION_TABLE
    if gen_path.is_file():
        generation = {e.identity: e for e in read_generation_table(gen_path)}
    return RunResults(Path(path), index, rows, generation)


def _num(value: Json) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def _records_by_instance(path: Path) -> dict[str, JsonObject]:
    if not path.is_file():
        return {}
    data = read_json(path, "records file")
    if not isinstance(data, list):
        raise InputError(f"{path}: records must be a JSON list")
    return {str(r.get("instance")): r for r in data if isinstance(r, dict)}


def _solver_instances(layout: ResultsLayout, model: str, item: str, attempt: str) -> list[JsonObject]:
    """Per instance: the record's fields and its score (relative.json), eligible ones first in the
    scorer's order, then records the reference does not score."""
    records = _records_by_instance(layout.records_json(model, item, attempt))
    relative_path = layout.relative_json(model, item, attempt)
    scored: list[JsonObject] = []
    if relative_path.is_file():
        relative = read_json(relative_path, "solver-score output")
        if not isinstance(relative, dict):
            raise InputError(f"{relative_path}: a solver-score output must be a JSON object")
        for entry in relative.get("instances") or []:
            if isinstance(entry, dict) and entry.get("instance") is not None:
                scored.append({**entry, "eligible": True})
    seen = {str(e["instance"]) for e in scored}
    out = []
    for entry in scored:
        rec = records.get(str(entry["instance"]), {})
        out.append({"record": rec, **entry})
    for name, rec in records.items():
        if name not in seen:
            out.append({"record": rec, "instance": name, "status": rec.get("status"), "eligible": False})
    return out


def instance_rows(run: RunResults) -> list[JsonObject]:
    """The per-instance table's rows (dicts keyed by INSTANCE_COLUMNS; None: an empty cell)."""
    layout = ResultsLayout(run.path)
    out: list[JsonObject] = []
    for row in run.rows:
        model, track, item, attempt = (row.get(c, "") for c in ("model", "track", "item", "attempt"))
        ident = (model, track, item, attempt)
        index_model = run.index["models"].get(model) or {}
        base: JsonObject = {c: None for c in INSTANCE_COLUMNS}
        base.update(
            suite=run.suite,
            solver_protocol=run.protocol,
            model=model,
            track=track,
            item=item,
            attempt=attempt,
            adoption_status=row.get("adoption_status"),
            score_status=row.get("score_status"),
            attempt_score=float(row["score"]) if row.get("score") else None,
            task_mean=(index_model.get("task_means") or {}).get(item),
            note=row.get("note") or None,
        )
        gen = run.generation.get(ident) if run.generation is not None else None
        if run.generation is not None:
            if gen is None:
                raise InputError(f"{run.path / GENERATION_TABLE}: no line for attempt {','.join(ident)}: rebuild it")
            base.update(
                generation="recorded" if gen.recorded else "none",
                input_tokens=gen.input_tokens,
                output_tokens=gen.output_tokens,
                cost_usd=gen.cost_usd,
                cost_missing=str(gen.cost_missing) if gen.cost_missing else None,
                generation_wall_s=gen.wall_time_s,
                feedback_calls=gen.feedback_calls,
                stop_reason=gen.stop_reason or None,
                transcript=gen.transcript or None,
            )
        instances = _solver_instances(layout, model, item, attempt) if track == Track.SOLVER else []
        if not instances:
            out.append({**base, "instance": item if track != Track.SOLVER else None})
            continue
        for inst in instances:
            rec = inst["record"]
            value = inst.get("value")
            if value is None:
                value = rec.get("A") if rec.get("A") is not None else rec.get("solved")
            out.append(
                {
                    **base,
                    "instance": str(inst["instance"]),
                    "instance_status": inst.get("status") or rec.get("status"),
                    "instance_value": _num(value),
                    "instance_score": _num(inst.get("score")),
                    "reference_mu": _num(inst.get("mu")),
                    "reference_scale": _num(inst.get("scale")),
                    "eligible": bool(inst.get("eligible")),
                    "wall_s": _num(rec.get("wall_s")),
                    "cpu_s": _num(rec.get("cpu_s")),
                    "peak_mem_mb": _num(rec.get("peak_mem_mb")),
                }
            )
    return out


def instance_frame(run: RunResults):
    """The table as a pandas DataFrame, typed (numbers as floats, nullable integers for counts)."""
    import pandas as pd

    df = pd.DataFrame(instance_rows(run), columns=list(INSTANCE_COLUMNS))
    for col in ("input_tokens", "output_tokens", "feedback_calls"):
        df[col] = df[col].astype("Int64")
    for col in (
        "attempt_score",
        "instance_value",
        "instance_score",
        "reference_mu",
        "reference_scale",
        "wall_s",
        "cpu_s",
        "peak_mem_mb",
        "task_mean",
        "cost_usd",
        "generation_wall_s",
    ):
        df[col] = df[col].astype("Float64")
    df["eligible"] = df["eligible"].astype("boolean")
    return df
