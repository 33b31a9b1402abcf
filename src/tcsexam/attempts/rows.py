"""Attempt rows: one row of the spec's attempts.csv per (model, track, item, attempt).

The workflow writes one small JSON file per planned attempt (`row.json`) and `tcsexam attempts
table` concatenates them into attempts.csv. Every planned attempt yields a row, whatever happened
to it: a failed or missing result becomes a row with `score_status` `judge_failed`,
`not_finished` or `missing` and the reason in `note`, so the Index comes out `incomplete` with the
issue listed instead of the pipeline stopping.

Conversions (spec, "The four track scores"):

- solver: the fixed-reference `relative_score` of `tcsexam solver-score`
  (`score_type` fixed_reference_relative, `solver_protocol` online|offline); the scorer's refusal
  (an `infrastructure_error`, a missing eligible instance, ...) -> `judge_failed`; no records ->
  `not_finished`.
- theorem, open_conjecture: 1 when the checker accepted a complete proof / resolution, else 0
  (partial credit -> 0).
- construction: the checker's original reward unchanged (must be finite and >= 0).
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from tcsexam.attempts.adoption import TABLE_COLUMNS, apply_adoption
from tcsexam.attempts.online import records_source
from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, atomic_write_json, atomic_write_text, is_finite_number, read_json
from tcsexam.records.integrity import require_sound, seal
from tcsexam.scoring.reference import load_reference
from tcsexam.scoring.solver_score import solver_score
from tcsexam.scoring.vocabulary import ADOPTION_STATUSES, COLUMNS, PROTOCOLS, SCORE_STATUSES, ScoreStatus
from tcsexam.suites import BINARY_TRACKS, TRACKS, Track

#: Extra column kept by the scorer and ignored by the aggregate: why a row is not valid, provenance.
NOTE_COLUMN = "note"
ROW_SCHEMA_VERSION = 1


@dataclass
class AttemptRow:
    model: str
    track: str
    item: str
    attempt: str
    score: float | None
    adoption_status: str
    score_status: str
    score_type: str
    solver_protocol: str
    note: str = ""

    def __post_init__(self) -> None:
        where = f"attempt row ({self.model},{self.track},{self.item},{self.attempt})"
        for name in ("model", "item", "attempt"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"{where}: {name} must be a non-empty string")
            if any(c in value for c in ',\n\r"'):
                raise InputError(f"{where}: {name} {value!r} must not contain commas, quotes or newlines")
        if self.track not in TRACKS:
            raise InputError(f"{where}: unknown track {self.track!r} (tracks: {', '.join(TRACKS)})")
        if self.adoption_status not in ADOPTION_STATUSES:
            raise InputError(f"{where}: unknown adoption_status {self.adoption_status!r}")
        if self.score_status not in SCORE_STATUSES:
            raise InputError(f"{where}: unknown score_status {self.score_status!r}")
        expected_type = "fixed_reference_relative" if self.track == Track.SOLVER else "original_task_score"
        if self.score_type != expected_type:
            raise InputError(f"{where}: score_type must be {expected_type!r} for track {self.track!r}")
        if self.track == Track.SOLVER and self.solver_protocol not in PROTOCOLS:
            raise InputError(f"{where}: a solver row needs solver_protocol online or offline")
        if self.track != Track.SOLVER and self.solver_protocol not in ("", *PROTOCOLS):
            raise InputError(f"{where}: unknown solver_protocol {self.solver_protocol!r}")
        if self.score_status == ScoreStatus.VALID:
            if not is_finite_number(self.score):
                raise InputError(f"{where}: a valid row needs a finite score, not {self.score!r}")
            self.score = float(self.score)
            if self.track in BINARY_TRACKS and self.score not in (0.0, 1.0):
                raise InputError(f"{where}: {self.track} scores are 0 or 1, not {self.score!r}")
            if self.track == Track.CONSTRUCTION and self.score < 0:
                raise InputError(f"{where}: a construction reward must be >= 0, not {self.score!r}")
            if self.track == Track.SOLVER and not 0.0 <= self.score <= 1.0:
                raise InputError(f"{where}: a relative score must be in [0, 1], not {self.score!r}")
        elif self.score is not None:
            raise InputError(f"{where}: a {self.score_status} row has no score")
        self.note = " ".join(str(self.note).split())

    @property
    def identity(self) -> tuple[str, str, str, str]:
        return (self.model, self.track, self.item, self.attempt)

    def to_dict(self, inputs: Mapping[str, str | os.PathLike[str]] | None = None, *, at: str | Path) -> JsonObject:
        """The row as written to the file `at`: its fields, the sha256 of the files it was computed
        from (`inputs`) and a digest of its own content (under the key of the tree `at` is in)."""
        return seal({"schema_version": ROW_SCHEMA_VERSION, **asdict(self)}, inputs, at=at)

    @classmethod
    def from_dict(cls, data: Json, source: str, *, at: str | Path) -> AttemptRow:
        """A row read from the file `at` (`source` names it in messages)."""
        if not isinstance(data, dict):
            raise InputError(f"{source}: an attempt row must be a JSON object")

        require_sound(data, f"{source}: attempt row", at=at)
        missing = [c for c in COLUMNS if c not in data]
        if missing:
            raise InputError(f"{source}: attempt row lacks {', '.join(missing)}")
        try:
            return cls(**{k: data[k] for k in (*COLUMNS, NOTE_COLUMN) if k in data})
        except InputError as exc:
            raise InputError(f"{source}: {exc}") from None


# ---------------------------------------------------------------------------------------------
# constructors


def failed_row(
    model: str,
    track: str,
    item: str,
    attempt: str,
    score_status: str,
    note: str,
    protocol: str = "",
    adoption_status: str = "selected",
) -> AttemptRow:
    """A planned attempt without a valid score: judge_failed, not_finished or missing."""
    if score_status == ScoreStatus.VALID:
        raise ValueError("failed_row needs a failure status")
    return AttemptRow(
        model,
        track,
        item,
        str(attempt),
        None,
        adoption_status,
        score_status,
        "fixed_reference_relative" if track == Track.SOLVER else "original_task_score",
        protocol if track == Track.SOLVER else "",
        note,
    )


def solver_row(
    *,
    model: str,
    task: str,
    attempt: str,
    protocol: str,
    records: str | Path,
    reference: str | Path,
    relative_output: str | Path,
    adoption_status: str = "selected",
) -> tuple[AttemptRow, JsonObject | None]:
    """Score one Solver attempt's final records and turn the outcome into its attempt row.

    A bad reference is a configuration error and raises `InputError`. Missing records ->
    `not_finished`; records the scorer refuses (infrastructure_error, missing eligible instance,
    malformed file, ...) -> `judge_failed` with the scorer's message. `relative_output` is always
    written (it is a declared output of the workflow's rule): the scorer's output on success, else
    a refusal (`relative_score` null, `score_status`, `refused`: why) that replaces any older one.
    """
    ref = load_reference(reference)  # a broken reference is the operator's error: exit 1
    relative_output = Path(relative_output)
    records = Path(records)

    source: JsonObject | None = None

    def fail(status: str, note: str) -> tuple[AttemptRow, None]:
        refusal: JsonObject = {
            "task": task,
            "reference_id": ref.reference_id,
            "relative_score": None,
            "score_status": status,
            "refused": note,
        }
        if source is not None:
            refusal["records_source"] = source
        atomic_write_json(relative_output, seal(refusal, {"records": records}, at=relative_output))
        return failed_row(model, "solver", task, attempt, status, note, protocol, adoption_status), None

    if not records.exists():
        return fail("not_finished", f"{records}: no final records (the run did not finish)")
    try:
        data = read_json(records, "records file")
        check_records_belong(data, task, str(attempt), str(records))
        source = records_source(data, records)
        result = solver_score(task, data, ref, str(records), require_digest=True)
    except InputError as exc:
        return fail("judge_failed", f"solver-score refused: {exc}")
    if source is None:
        return fail(
            "judge_failed",
            f"{records}: the records carry neither the harness's marks nor an online input's, or mix both: "
            "their protocol cannot be told, so they are not scored",
        )
    result["records_source"] = source
    atomic_write_json(relative_output, seal(result, {"records": records}, at=relative_output))
    reward = result.get("checker_reward")
    note = f"reference {result['reference_id']}; {result['n_ok']}/{result['n_eligible']} ok"
    if reward is not None:
        note += f"; checker_reward {reward:.6g}"
    row = AttemptRow(
        model,
        "solver",
        task,
        str(attempt),
        float(result["relative_score"]),
        adoption_status,
        "valid",
        "fixed_reference_relative",
        protocol,
        note,
    )
    return row, result


def check_records_belong(data: Json, task: str, attempt: str, source: str) -> None:
    """Records that name their task or attempt (every record `tcsexam run` writes) must name these:
    a records file copied from another attempt is refused."""
    if not isinstance(data, list):
        return
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            continue
        for field_name, want in (("task", task), ("attempt", attempt)):
            have = rec.get(field_name)
            if have is not None and str(have) != want:
                raise InputError(
                    f"{source}: record {i + 1} ({rec.get('instance')!r}) belongs to {field_name} {have!r}, not {want!r}"
                )


# ---------------------------------------------------------------------------------------------
# row files and the table


def write_row(path: str | Path, row: AttemptRow, inputs: Mapping[str, str | os.PathLike[str]] | None = None) -> None:
    atomic_write_json(path, row.to_dict(inputs, at=path))


def read_row(path: str | Path) -> AttemptRow:
    return AttemptRow.from_dict(read_json(path, "attempt row file"), str(path), at=path)


def read_rows(path: str | Path) -> list[AttemptRow]:
    """A row file holds one row (a JSON object) or several (a JSON list of row objects)."""
    data = read_json(path, "attempt row file")
    if isinstance(data, list):
        return [AttemptRow.from_dict(item, f"{path}: row {i + 1}", at=path) for i, item in enumerate(data)]
    return [AttemptRow.from_dict(data, str(path), at=path)]


def write_rows(path: str | Path, rows: list[AttemptRow]) -> None:
    atomic_write_json(path, [row.to_dict(at=path) for row in rows])


def _cell(value: Json) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("non-finite score")
        return repr(value)  # the full value: `tcsexam score --solver-scores` compares exactly
    return str(value)


def table_text(
    rows: Iterable[AttemptRow], adoption: dict[tuple[str, str, str, str], tuple[str, str]] | None = None
) -> str:
    """attempts.csv text: the nine columns of the spec plus `note`, one line per row; with
    `adoption` (identity -> (reason, replaces), from an adoption file) also `reason` and `replaces`.

    Rows keep their given order; a duplicate identity is refused (naming both sources)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow((*COLUMNS, NOTE_COLUMN, *(TABLE_COLUMNS if adoption is not None else ())))
    seen: dict[tuple[str, str, str, str], int] = {}
    for number, row in enumerate(rows, start=1):
        if row.identity in seen:
            raise InputError(
                f"attempt rows {seen[row.identity]} and {number}: duplicate identity {','.join(row.identity)}"
            )
        seen[row.identity] = number
        cells = [_cell(getattr(row, c)) for c in (*COLUMNS, NOTE_COLUMN)]
        if adoption is not None:
            cells += list(adoption.get(row.identity, ("", "")))
        writer.writerow(cells)
    return buf.getvalue()


def read_table_rows(paths: Iterable[str | Path]) -> list[AttemptRow]:
    """The rows of the row files, in order; a duplicate identity is refused naming both files."""
    rows: list[AttemptRow] = []
    seen: dict[tuple[str, str, str, str], str] = {}
    for path in paths:
        for row in read_rows(path):
            if row.identity in seen:
                raise InputError(
                    f"{path}: duplicate attempt identity {','.join(row.identity)} (also in {seen[row.identity]})"
                )
            seen[row.identity] = str(path)
            rows.append(row)
    return rows


def table_of(paths: Iterable[str | Path], adoption=None) -> tuple[list[AttemptRow], str]:
    """The rows of the row files with an adoption file's decisions applied (`adoption`:
    `tcsexam.attempts.adoption.load_adoption`'s result) and the attempts.csv text."""
    rows = read_table_rows(paths)
    if adoption is None:
        return rows, table_text(rows)

    rows, extra = apply_adoption(rows, adoption)
    return rows, table_text(rows, extra)


def write_table(paths: Iterable[str | Path], output: str | Path, adoption=None) -> list[AttemptRow]:
    rows, text = table_of(paths, adoption)
    atomic_write_text(output, text)
    return rows
