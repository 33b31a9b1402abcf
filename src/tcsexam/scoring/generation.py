"""The attempt table's companion: what each attempt's generation cost (generation.csv).

One line per row of attempts.csv (same identity: model, track, item, attempt), read from the
agent's record beside the submission it wrote, `<solvers_dir>/<model>/<item>/<attempt>/generation.json`
(`tcsexam.agents.accounting.GenerationRecord`, `tcsexam agents solve`): tokens in and out, cost in
USD, wall and working time, turns, tool calls, **feedback calls** (calls of the judge's checker
tools: `check_proof`, `check_construction`, `run_dev`), model calls, how the generation stopped and
the transcript (the Inspect `.eval` log, `run_dir/log_file`, and the sample's uuid in it).

Missing data is said, never read as zero: an attempt without a record has `generation` `none`
and empty cells; a record without a price has an empty `cost_usd`. `cost_missing` says which:
`no_generation` or `unpriced` (`CostMissing`). A record that exists but cannot be read is an error
naming it (bad input), as everywhere.

Costs never enter a score: `tcsexam score --generation` adds a `cost` section beside the Index
(`tcsexam.scoring.cost`) and leaves every other field as it was.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from tcsexam.errors import InputError
from tcsexam.fileio import Json, atomic_write_text, read_csv, read_json

#: the companion's file name beside attempts.csv
GENERATION_TABLE = "generation.csv"
#: its format version (tcsexam.formats: attempt-generation)
GENERATION_TABLE_VERSION = 1
#: the agent's record beside a submission, and the versions of it read here (tcsexam.formats:
#: agent-generation; read as JSON: nothing outside tcsexam.agents imports the agent stage)
GENERATION_FILE = "generation.json"
READS_RECORD_VERSIONS = (1,)


class CostMissing(StrEnum):
    """Why an attempt's cost is not known."""

    NO_GENERATION = "no_generation"  #: no generation.json beside the submission (not an agent's, or not recorded)
    UNPRICED = "unpriced"  #: a record without cost_usd: the run had no prices for the model


class FeedbackTool(StrEnum):
    """The judge's checker tools an agent may call (tcsexam.agents.track_tools): its feedback calls."""

    CHECK_PROOF = "check_proof"
    CHECK_CONSTRUCTION = "check_construction"
    RUN_DEV = "run_dev"


IDENTITY = ("model", "track", "item", "attempt")
Identity = tuple[str, str, str, str]  #: an attempt's (model, track, item, attempt)


def identity_of(cells: list[str], cols: list[int]) -> Identity:
    """The identity of a CSV row whose IDENTITY columns are at `cols`."""
    model, track, item, attempt = (cells[k] for k in cols)
    return (model, track, item, attempt)


#: generation.csv's columns, in order
GENERATION_COLUMNS = (
    *IDENTITY,
    "generation",  #: recorded | none
    "cost_missing",  #: empty, or a CostMissing
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cost_usd",
    "wall_time_s",
    "working_time_s",
    "turns",
    "tool_calls",
    "feedback_calls",
    "model_calls",
    "stop_reason",
    "final",
    "model_name",  #: the model as the record names it (ModelConfig name)
    "transcript",  #: the .eval log: run_dir/log_file (empty when the record does not say where its run was)
    "log_file",
    "sample_uuid",
    "record",  #: the generation.json read (absolute)
    "version",  #: GENERATION_TABLE_VERSION
)
INT_COLUMNS = ("input_tokens", "output_tokens", "total_tokens", "turns", "tool_calls", "feedback_calls", "model_calls")
FLOAT_COLUMNS = ("cost_usd", "wall_time_s", "working_time_s")


@dataclass
class AttemptGeneration:
    """One attempt's generation data (None: not known)."""

    model: str
    track: str
    item: str
    attempt: str
    recorded: bool
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost_usd: float | None = None
    wall_time_s: float | None = None
    working_time_s: float | None = None
    turns: int | None = None
    tool_calls: int | None = None
    feedback_calls: int | None = None
    model_calls: int | None = None
    stop_reason: str = ""
    final: bool | None = None
    model_name: str = ""
    transcript: str = ""
    log_file: str = ""
    sample_uuid: str = ""
    record: str = ""

    @property
    def identity(self) -> Identity:
        return (self.model, self.track, self.item, self.attempt)

    @property
    def cost_missing(self) -> CostMissing | None:
        if not self.recorded:
            return CostMissing.NO_GENERATION
        if self.cost_usd is None:
            return CostMissing.UNPRICED
        return None

    @classmethod
    def from_record(cls, identity: tuple[str, str, str, str], data: Json, path: Path) -> AttemptGeneration:
        """From a generation.json's content (`tcsexam.agents.accounting.GenerationRecord.to_json`)."""
        where = str(path)
        if not isinstance(data, dict):
            raise InputError(f"{where}: a generation record must be a JSON object")
        if data.get("schema_version") not in READS_RECORD_VERSIONS:
            raise InputError(
                f"{where}: generation record schema_version {data.get('schema_version')!r} "
                f"(this tcsexam reads {', '.join(map(str, READS_RECORD_VERSIONS))})"
            )

        def count(key: str) -> int | None:
            value = data.get(key)
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InputError(f"{where}: {key} must be a non-negative integer, not {value!r}")
            return value

        def amount(key: str) -> float | None:
            value = data.get(key)
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise InputError(f"{where}: {key} must be a non-negative number, not {value!r}")
            return float(value)

        def text(key: str) -> str:
            value = data.get(key)
            if value is not None and not isinstance(value, str):
                raise InputError(f"{where}: {key} must be a string, not {value!r}")
            return value or ""

        by_name = data.get("tool_calls_by_name") or {}
        if not isinstance(by_name, dict) or any(
            isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in by_name.values()
        ):
            raise InputError(f"{where}: tool_calls_by_name must map tool names to call counts")
        final = data.get("final")
        if not isinstance(final, bool):
            raise InputError(f"{where}: final must be true or false, not {final!r}")
        log_file, run_dir = text("log_file"), text("run_dir")
        transcript = ""
        if log_file:
            if Path(log_file).is_absolute():
                transcript = log_file
            elif run_dir:
                transcript = str(Path(run_dir) / log_file)
        model = data.get("model")
        if not isinstance(model, dict):
            model = {}
        return cls(
            *identity,
            recorded=True,
            input_tokens=count("input_tokens"),
            output_tokens=count("output_tokens"),
            total_tokens=count("total_tokens"),
            cost_usd=amount("cost_usd"),
            wall_time_s=amount("wall_time_s"),
            working_time_s=amount("working_time_s"),
            turns=count("turns"),
            tool_calls=count("tool_calls"),
            feedback_calls=sum(int(by_name.get(t.value, 0)) for t in FeedbackTool),
            model_calls=count("model_calls"),
            stop_reason=text("stop_reason"),
            final=final,
            model_name=str(model.get("name") or ""),
            transcript=transcript,
            log_file=log_file,
            sample_uuid=text("sample_uuid"),
            record=where,
        )

    def cells(self) -> list[str]:
        values = {
            "generation": "recorded" if self.recorded else "none",
            "cost_missing": self.cost_missing or "",
            "final": "" if self.final is None else str(self.final).lower(),
            "version": str(GENERATION_TABLE_VERSION),
        }
        return [values[c] if c in values else _cell(getattr(self, c)) for c in GENERATION_COLUMNS]


def _cell(value: Json) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    return str(value)


def attempt_generation(solvers_dir: str | Path, identity: tuple[str, str, str, str]) -> AttemptGeneration:
    """The generation data of one attempt: its record beside the submission, else `none`."""
    model, _track, item, attempt = identity
    if any(p in (".", "..") or "/" in p or "\\" in p for p in (model, item, attempt)):
        raise InputError(f"attempt {','.join(identity)}: a name that is not a single path segment")
    path = Path(solvers_dir) / model / item / attempt / GENERATION_FILE
    if not path.is_file():
        return AttemptGeneration(*identity, recorded=False)
    return AttemptGeneration.from_record(identity, read_json(path, "generation record"), path.resolve())


def attempt_identities(attempts_csv: str | Path) -> list[Identity]:
    """(model, track, item, attempt) of every row of an attempt table, in order."""
    header, body = read_csv(attempts_csv, "attempt table")
    header = header or []  # an empty file: every column missing
    missing = [c for c in IDENTITY if c not in header]
    if missing:
        raise InputError(f"{attempts_csv}: attempt table lacks column(s) {', '.join(missing)}")
    cols = [header.index(c) for c in IDENTITY]
    out = []
    for number, cells in enumerate(body, start=1):
        if len(cells) <= max(cols):
            raise InputError(f"{attempts_csv}: row {number}: {len(cells)} cells, fewer than the header's")
        out.append(identity_of(cells, cols))
    return out


def collect_generation(attempts_csv: str | Path, solvers_dir: str | Path) -> list[AttemptGeneration]:
    """One entry per row of `attempts_csv`, read from `solvers_dir`."""
    return [attempt_generation(solvers_dir, identity) for identity in attempt_identities(attempts_csv)]


def table_text(entries: Iterable[AttemptGeneration]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(GENERATION_COLUMNS)
    for entry in entries:
        writer.writerow(entry.cells())
    return buf.getvalue()


def write_generation_table(attempts_csv: str | Path, solvers_dir: str | Path, output: str | Path) -> list:
    entries = collect_generation(attempts_csv, solvers_dir)
    atomic_write_text(output, table_text(entries))
    return entries


def _parse(value: str, kind: type, where: str, column: str) -> Any:
    if value == "":
        return None
    try:
        parsed = kind(value)
    except ValueError:
        raise InputError(f"{where}: {column} {value!r} is not a number") from None
    if isinstance(parsed, float) and not math.isfinite(parsed):
        raise InputError(f"{where}: {column} {value!r} is not finite")
    if parsed < 0:
        raise InputError(f"{where}: {column} {value!r} is negative")
    return parsed


def read_generation_table(path: str | Path) -> list[AttemptGeneration]:
    """generation.csv back as entries (every column checked; an unknown version is refused)."""
    header, body = read_csv(path, "generation table")
    header = header or []  # an empty file: every column missing
    missing = [c for c in GENERATION_COLUMNS if c not in header]
    if missing:
        raise InputError(f"{path}: generation table lacks column(s) {', '.join(missing)}")
    col = {c: header.index(c) for c in GENERATION_COLUMNS}
    out: list[AttemptGeneration] = []
    for number, cells in enumerate(body, start=1):
        if len(cells) != len(header):
            raise InputError(f"{path}: row {number}: {len(cells)} cells but the header has {len(header)} columns")
        row = {c: cells[k] for c, k in col.items()}
        where = f"{path}: row {number} ({','.join(row[c] for c in IDENTITY)})"
        if row["version"] != str(GENERATION_TABLE_VERSION):
            raise InputError(f"{where}: version {row['version']!r}, expected {GENERATION_TABLE_VERSION}")
        if row["generation"] not in ("recorded", "none"):
            raise InputError(f"{where}: generation must be recorded or none, not {row['generation']!r}")
        if row["final"] not in ("", "true", "false"):
            raise InputError(f"{where}: final must be true, false or empty, not {row['final']!r}")
        values: dict[str, Any] = {c: _parse(row[c], int, where, c) for c in INT_COLUMNS}
        values.update({c: _parse(row[c], float, where, c) for c in FLOAT_COLUMNS})
        entry = AttemptGeneration(
            model=row["model"],
            track=row["track"],
            item=row["item"],
            attempt=row["attempt"],
            recorded=row["generation"] == "recorded",
            **values,
            stop_reason=row["stop_reason"],
            final=None if row["final"] == "" else row["final"] == "true",
            model_name=row["model_name"],
            transcript=row["transcript"],
            log_file=row["log_file"],
            sample_uuid=row["sample_uuid"],
            record=row["record"],
        )
        said = row["cost_missing"]
        if said != (entry.cost_missing or ""):
            raise InputError(f"{where}: cost_missing {said!r} contradicts the row (expected {entry.cost_missing!r})")
        if not entry.recorded and any(values[c] is not None for c in (*INT_COLUMNS, *FLOAT_COLUMNS)):
            raise InputError(f"{where}: an attempt without a generation record has no token, cost or time cells")
        out.append(entry)
    return out
