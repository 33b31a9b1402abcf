"""What `tcsexam score` checks and reports about a campaign beyond the spec's nine columns: where
each Solver score's records came from, and which attempts were excluded or replaced and why.

- Protocol of the records: every relative.json names its `records_source` (`protocol` offline and
  `origin` harness, with the record keys; or `protocol` online and `origin` online_input, with the
  input file's sha256). With `--solver-scores`, an adopted Solver row whose records came from the
  other protocol than the cohort's is refused, naming the row: harness-run records cannot be scored
  as online, ingested records cannot be scored as offline.
- Adoption: an attempt table may carry the extra columns `reason` and `replaces` (the workflow
  writes them when an adoption file is given). Then `reason` is required on excluded and
  selected_provisional rows and on every row with `replaces`; a `replaces` must name an excluded
  row of the same model, track and item, and the replacing row must be adopted. Each model of
  index.json then lists `excluded` (track, item, attempt, reason, and `replaced_by`),
  `replacements` ("2 replaces 1: <reason>") and `provisional` (track, item, attempt, reason); a table without those columns gets the lists only when it has
  excluded rows (their reason: the `note` column, else null), so a table without exclusions gives
  the index.json it always gave.
"""

from __future__ import annotations

import re

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject
from tcsexam.scoring.vocabulary import PROTOCOLS
from tcsexam.suites import TRACKS

_ORIGIN_WORDS = {"harness": "a harness run", "online_input": "an online input"}


def records_source_problem(data: JsonObject, protocol: str) -> str | None:
    """Why a solver-score output cannot stand for a row of a `protocol` cohort (None when it can)."""
    source = data.get("records_source")
    if not isinstance(source, dict) or source.get("protocol") not in PROTOCOLS:
        return "does not say where its records came from (no records_source: rescore it with `tcsexam attempts solver-row`)"
    if source["protocol"] != protocol:
        origin = _ORIGIN_WORDS.get(str(source.get("origin")), str(source.get("origin")))
        return (
            f"was computed from records of {origin} (protocol {source['protocol']}), but the cohort's "
            f"Solver protocol is {protocol}: {source['protocol']} records are never scored as {protocol}"
        )
    return None


def adoption_report(df, t, suite, cohort, where) -> dict[int, dict[str, list]] | None:
    """Per model code: {"excluded": [...], "replacements": [...]}; None when the table has neither
    the adoption columns nor an excluded row. Raises InputError naming the row on a bad reason or
    replacement (see the module docstring)."""
    has_reason, has_replaces = "reason" in df.columns, "replaces" in df.columns
    excluded = t.adoption == 2
    if not (has_reason or has_replaces or excluded.any()):
        return None
    n = len(df)
    empty = np.array([""] * n, dtype=object)
    reason = df["reason"].to_numpy(dtype=object) if has_reason else None
    note = df["note"].to_numpy(dtype=object) if "note" in df.columns else empty
    replaces = df["replaces"].to_numpy(dtype=object) if has_replaces else empty
    attempt = t.col["attempt"]
    if reason is not None:
        needs = excluded | (t.adoption == 1) | (replaces != "")
        bad = np.flatnonzero(needs & (reason == ""))
        if bad.size:
            i = int(bad[0])
            what = f"replaces attempt {replaces[i]!r}" if replaces[i] else f"is {t.col['adoption_status'][i]}"
            raise InputError(f"{where(i)}: the row {what} but gives no reason")
    index = {(int(t.model[i]), int(t.item[i]), str(attempt[i])): i for i in range(n)}
    out: dict[int, dict[str, list]] = {
        m: {"excluded": [], "replacements": [], "provisional": []} for m in range(len(cohort.models))
    }
    replaced_by: dict[int, str] = {}
    for i in np.flatnonzero(replaces != "").tolist():
        if excluded[i]:
            raise InputError(f"{where(i)}: an excluded row cannot replace attempt {replaces[i]!r}")
        j = index.get((int(t.model[i]), int(t.item[i]), str(replaces[i])))
        if j is None:
            raise InputError(f"{where(i)}: replaces attempt {replaces[i]!r}, which has no row for this model and task")
        if not excluded[j]:
            raise InputError(f"{where(i)}: replaces attempt {replaces[i]!r}, but that row ({where(j)}) is not excluded")
        replaced_by[j] = str(attempt[i])
        text = reason[i] if reason is not None else note[i]
        out[int(t.model[i])]["replacements"].append(
            (_order(t, suite, i), f"{attempt[i]} replaces {replaces[i]}: {text}")
        )

    def entry(i: int) -> dict[str, str | None]:
        text = (reason[i] if reason is not None else "") or note[i] or None
        return {"track": TRACKS[t.track[i]], "item": suite.items[t.item[i]], "attempt": str(attempt[i]), "reason": text}

    for i in np.flatnonzero(excluded).tolist():
        found = entry(i)
        if i in replaced_by:
            found["replaced_by"] = replaced_by[i]
        out[int(t.model[i])]["excluded"].append((_order(t, suite, i), found))
    for i in np.flatnonzero(t.adoption == 1).tolist():
        out[int(t.model[i])]["provisional"].append((_order(t, suite, i), entry(i)))
    return {m: {k: [v for _, v in sorted(lists[k], key=lambda e: e[0])] for k in lists} for m, lists in out.items()}


_INSTANCE = re.compile(r"instance (['\"])(.+?)\1")


def issue_detail(note: str) -> dict[str, str]:
    """The row's note as an issue's `detail`, and the instance it names (the scorer's refusal
    names the first missing or infrastructure_error instance) as `instance`; {} for no note."""
    if not note:
        return {}
    out = {"detail": note}
    if (found := _INSTANCE.search(note)) is not None:
        out["instance"] = found.group(2)
    return out


def _order(t, suite, i: int) -> tuple[int, int, str]:
    return (int(t.track[i]), int(t.item[i]), str(t.col["attempt"][i]))
