"""The adoption file of a campaign (config `adoption: FILE`): which attempts are adopted, which are
excluded, which replace which, and why.

A CSV with the columns `model,track,item,attempt,adoption_status,reason,replaces`:

| column | rule |
|---|---|
| model, track, item, attempt | the attempt's identity; the model must be in the config's cohort, the item a task of that track in the suite |
| adoption_status | `selected`, `selected_provisional` or `excluded` |
| reason | required for `excluded`, for `selected_provisional` and for every row with `replaces` |
| replaces | empty, or the id of another attempt of the same model and task (a planned one or one named in this file) that this adopted attempt replaces |

Every attempt named here is run (or ingested) and gets its row like a planned one; the replaced
attempt keeps its row, as `excluded` ("replaced by 2: <reason>"). Attempts the file does not name
keep `selected`. Adopted attempts of a task must not outnumber the planned repetitions (the
config's attempts per task): more is an error naming the rows; fewer leaves the Index incomplete.
Without an adoption file nothing changes.
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.scoring.vocabulary import ADOPTED, ADOPTION_STATUSES, AdoptionStatus
from tcsexam.suites import normalize_track

ADOPTION_COLUMNS = ("model", "track", "item", "attempt", "adoption_status", "reason", "replaces")
#: The attempt table's extra columns when an adoption file is applied (kept and reported by `tcsexam score`).
TABLE_COLUMNS = ("reason", "replaces")
#: an attempt id, as the config's `models[].attempts` and the workflow's wildcards accept it
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


@dataclass(frozen=True)
class AdoptionRow:
    model: str
    track: str
    item: str
    attempt: str
    adoption_status: str
    reason: str
    replaces: str
    line: int  #: the data-row number in the file (1 = the first row after the header)

    @property
    def identity(self) -> tuple[str, str, str, str]:
        return (self.model, self.track, self.item, self.attempt)


@dataclass(frozen=True)
class Decision:
    """What the adoption file decides for one attempt."""

    adoption_status: str
    reason: str
    replaces: str = ""


def _csv_lines(path: Path) -> list[list[str]]:
    """The adoption file's CSV rows, header first (one line naming the file when it cannot be read)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            return list(csv.reader(fh))
    except FileNotFoundError:
        raise InputError(f"{path}: adoption file not found") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{path}: cannot read the adoption file: {exc}") from None


def read_adoption(path: str | Path) -> list[AdoptionRow]:
    """Parse and check the file on its own (columns, vocabulary, reasons, duplicates)."""
    path = Path(path)
    lines = _csv_lines(path)
    if not lines or not lines[0]:
        raise InputError(f"{path}: adoption file is empty (expected the header {','.join(ADOPTION_COLUMNS)})")
    header = [h.strip() for h in lines[0]]
    body = lines[1:]
    missing = [c for c in ADOPTION_COLUMNS if c not in header]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)} (expected {','.join(ADOPTION_COLUMNS)})")
    pos = {c: header.index(c) for c in ADOPTION_COLUMNS}
    rows: list[AdoptionRow] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    for number, cells in enumerate(body, start=1):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) > len(header):
            raise InputError(f"{path}: row {number}: {len(cells)} cells but the header has {len(header)} columns")
        cell = {c: (cells[i].strip() if i < len(cells) else "") for c, i in pos.items()}
        who = f"{path}: row {number} ({cell['model']},{cell['track']},{cell['item']},{cell['attempt']})"
        for name in ("model", "track", "item", "attempt"):
            if not cell[name]:
                raise InputError(f"{who}: {name} is empty")
        for name in ("attempt", "replaces"):
            if cell[name] and not _ID.fullmatch(cell[name]):
                raise InputError(
                    f"{who}: {name} {cell[name]!r} is not an attempt id (letters, digits and _ . + -, "
                    "starting with a letter or digit)"
                )
        track = normalize_track(cell["track"])
        if track is None:
            raise InputError(f"{who}: unknown track {cell['track']!r}")
        status = cell["adoption_status"]
        if status not in ADOPTION_STATUSES:
            raise InputError(f"{who}: adoption_status {status!r} is not one of {', '.join(ADOPTION_STATUSES)}")
        reason, replaces = cell["reason"], cell["replaces"]
        if not reason and (status != "selected" or replaces):
            what = f"replaces attempt {replaces!r}" if replaces else f"is {status}"
            raise InputError(f"{who}: a reason is required (the row {what})")
        if replaces and status not in ADOPTED:
            raise InputError(
                f"{who}: an excluded attempt cannot replace attempt {replaces!r} (replaces needs an adopted row)"
            )
        if replaces == cell["attempt"]:
            raise InputError(f"{who}: an attempt cannot replace itself")
        row = AdoptionRow(cell["model"], track, cell["item"], cell["attempt"], status, reason, replaces, number)
        if row.identity in seen:
            raise InputError(f"{who}: names the same attempt as row {seen[row.identity]}")
        seen[row.identity] = number
        rows.append(row)
    return rows


def check_adoption(rows: list[AdoptionRow], suite, planned: dict[str, list[str]], source: str) -> None:
    """The file against the campaign: known models and items, `replaces` naming a planned
    attempt, no attempt both replaced and adopted, and no more adopted attempts per task than
    planned (`planned`: model -> the config's attempt ids, the same for every task)."""
    named: dict[tuple[str, str], set[str]] = {}
    for r in rows:
        who = f"{source}: row {r.line} ({r.model},{r.track},{r.item},{r.attempt})"
        if r.model not in planned:
            raise InputError(
                f"{who}: model {r.model!r} is not in the config's models ({', '.join(planned)}){_near(r.model, planned)}"
            )
        track = suite.track_of.get(r.item)
        if track is None:
            raise InputError(f"{who}: item {r.item!r} is not a task of suite {suite.id!r}{_near(r.item, suite.items)}")
        if track != r.track:
            raise InputError(f"{who}: item {r.item!r} is a {track} task of suite {suite.id!r}, not {r.track}")
        named.setdefault((r.model, r.item), set()).add(r.attempt)
    for r in rows:
        if not r.replaces:
            continue
        known = (set(planned[r.model]) | named[(r.model, r.item)]) - {r.attempt}
        if r.replaces not in known:
            raise InputError(
                f"{source}: row {r.line} ({r.model},{r.track},{r.item},{r.attempt}): replaces attempt "
                f"{r.replaces!r}, which is no planned attempt of {r.model} {r.item} "
                f"(planned: {', '.join(sorted(known))})"
            )
    decisions = decide(rows)
    for (model, item), attempts in named.items():
        for attempt in sorted(attempts):
            d = decisions[(model, item)][attempt]
            explicit = next(r for r in rows if (r.model, r.item, r.attempt) == (model, item, attempt))
            if d.adoption_status == AdoptionStatus.EXCLUDED and explicit.adoption_status != AdoptionStatus.EXCLUDED:
                raise InputError(
                    f"{source}: row {explicit.line} ({model},{explicit.track},{item},{attempt}): adopted "
                    f"({explicit.adoption_status}) but another row replaces it (a replaced attempt is excluded; "
                    "to replace a replacement, name the first attempt in replaces and exclude the others)"
                )
        statuses = effective(decisions.get((model, item), {}), planned[model])
        adopted = [a for a, d in statuses.items() if d.adoption_status in ADOPTED]
        if len(adopted) > len(planned[model]):
            lines = sorted(r.line for r in rows if (r.model, r.item) == (model, item) and r.attempt in adopted)
            which = f"row {lines[0]}" if len(lines) == 1 else f"rows {', '.join(map(str, lines))}"
            raise InputError(
                f"{source}: {which}: model {model!r} task {item!r} would have "
                f"{len(adopted)} adopted attempts ({', '.join(adopted)}) but {len(planned[model])} are planned "
                "per task (mark the replaced attempt excluded, or name it in replaces)"
            )


def _near(name: str, names) -> str:
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def decide(rows: list[AdoptionRow]) -> dict[tuple[str, str], dict[str, Decision]]:
    """(model, item) -> attempt -> its decision: the file's rows, and `excluded` for every attempt
    a row replaces (reason "replaced by <id>: <reason>", unless the file excludes it itself)."""
    out: dict[tuple[str, str], dict[str, Decision]] = {}
    for r in rows:
        out.setdefault((r.model, r.item), {})[r.attempt] = Decision(r.adoption_status, r.reason, r.replaces)
    for r in rows:
        if r.replaces:
            group = out[(r.model, r.item)]
            own = group.get(r.replaces)
            reason = f"replaced by {r.attempt}: {r.reason}"
            if own is not None and own.adoption_status == AdoptionStatus.EXCLUDED:
                reason = f"{own.reason} (replaced by {r.attempt}: {r.reason})"
            group[r.replaces] = Decision("excluded", reason, own.replaces if own else "")
    return out


def effective(decisions: dict[str, Decision], planned: list[str]) -> dict[str, Decision]:
    """Every attempt of one (model, task): the planned ones (`selected` unless decided) and the
    ones the file adds, in that order."""
    out = {a: decisions.get(a, Decision("selected", "")) for a in planned}
    out.update({a: d for a, d in decisions.items() if a not in out})
    return out


def load_adoption(path: str | Path, suite, planned: dict[str, list[str]]):
    """The checked decisions of an adoption file: (model, item) -> attempt -> Decision."""
    rows = read_adoption(path)
    check_adoption(rows, suite, planned, str(path))
    return decide(rows)


def apply_adoption(rows, decisions: dict[tuple[str, str], dict[str, Decision]]):
    """The attempt rows with the file's adoption status; (rows, {identity: (reason, replaces)})."""
    out, extra = [], {}
    for row in rows:
        d = decisions.get((row.model, row.item), {}).get(row.attempt)
        if d is None:
            out.append(row)
            continue
        out.append(dataclasses.replace(row, adoption_status=d.adoption_status))
        extra[row.identity] = (d.reason, d.replaces)
    return out, extra
