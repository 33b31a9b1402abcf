"""Our own, judge-free faithfulness check: every number an Explain answer cites is looked up in the
workspace's evidence (documents, data tables, formulations, logs, solver records, the question).

A cited number (as `normalize.cited_numbers` finds them: not part of an identifier, thousands
separators dropped) is

- `matched` when some evidence number equals it within relative 1e-6, or rounds to it at the
  number of decimals cited (`571.43` cites 571.428571...; `12000` cites 11999.6);
- `derived` when it is the difference of two evidence numbers of one sign that are each at least
  as large (e.g. an objective increase), with the witnesses listed;
- `unmatched` otherwise: a possible hallucination, listed beside the judge's verdict.

Integers of magnitude at most 10 written without decimals (weeks, counts, ordinals) are skipped as
`trivial`. The look-up is vectorised over the sorted evidence numbers (numpy searchsorted).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tcsexam.fileio import JsonObject
from tcsexam.orspace.normalize import _NUMBER, normalize_text

TEXT_SUFFIXES = {".csv", ".md", ".txt", ".tex", ".json", ".log", ".py", ".lp", ".mps", ".yaml", ".yml"}
MAX_FILE_BYTES = 8 * 1024 * 1024
REL_TOL = 1e-6
TRIVIAL_ABS = 10


@dataclass
class Cited:
    token: str
    value: float
    decimals: int


def cited_tokens(text: str) -> list[Cited]:
    """Numbers cited in `text` (after normalisation), with the decimals each was written with."""
    normalized = normalize_text(text)
    out = []
    for match in _NUMBER.finditer(normalized):
        end = match.end()
        if end < len(normalized) and normalized[end] == "_":
            continue
        token = match.group(0).rstrip(".")
        try:
            value = float(token)
        except ValueError:
            continue
        if not np.isfinite(value):
            continue
        mantissa = token.lower().split("e")[0]
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        if "e" in token.lower():
            decimals = 6  # scientific notation: compare at relative precision only
        out.append(Cited(token, value, decimals))
    return out


def evidence_numbers(workspace: str | Path, extra_texts: tuple[str, ...] = ()) -> np.ndarray:
    """Sorted unique numbers found in every text file of the workspace (and `extra_texts`)."""
    workspace = Path(workspace)
    values: list[float] = []
    texts = list(extra_texts)
    for path in sorted(workspace.rglob("*")):
        if not path.is_file() or path.suffix.lower() not in TEXT_SUFFIXES:
            continue
        if path.stat().st_size > MAX_FILE_BYTES:
            continue
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
    for text in texts:
        values.extend(c.value for c in cited_tokens(text))
    if not values:
        return np.zeros(0)
    return np.unique(np.asarray(values, dtype=float))


def _tolerance(cited: Cited) -> float:
    return max(REL_TOL * abs(cited.value), 0.5 * 10.0 ** (-cited.decimals) * (1 + 1e-9))


def _present(sorted_values: np.ndarray, targets: np.ndarray, tol: float | np.ndarray) -> np.ndarray:
    """Elementwise: is there a value within `tol` of each target (sorted_values sorted)."""
    if sorted_values.size == 0:
        return np.zeros(targets.shape, dtype=bool)
    lo = np.searchsorted(sorted_values, targets - tol, side="left")
    hi = np.searchsorted(sorted_values, targets + tol, side="right")
    return hi > lo


def check_numbers(answer: str, evidence: np.ndarray) -> JsonObject:
    """Classify every number cited in `answer` against the sorted evidence numbers."""
    matched, derived, unmatched, trivial = [], [], [], 0
    for cited in cited_tokens(answer):
        if cited.decimals == 0 and abs(cited.value) <= TRIVIAL_ABS:
            trivial += 1
            continue
        tol = _tolerance(cited)
        if _present(evidence, np.array([cited.value, -cited.value]), tol).any():
            matched.append(cited.token)
            continue
        how = _derivation(cited, evidence, tol)
        if how:
            derived.append({"number": cited.token, "as": how})
        else:
            unmatched.append(cited.token)
    return {
        "cited": len(matched) + len(derived) + len(unmatched),
        "trivial_skipped": trivial,
        "matched": matched,
        "derived": derived,
        "unmatched": unmatched,
    }


def _derivation(cited: Cited, evidence: np.ndarray, tol: float) -> str | None:
    """`a - b` for two evidence numbers of one sign, each at least |c| in magnitude (a change between
    two larger quantities, e.g. an objective increase). Small operands are not accepted: with them
    almost any number is some difference (17.5 = 20 - 2.5), which would hide invented numbers."""
    c = abs(cited.value)
    if evidence.size == 0 or c == 0:
        return None
    for negative in (False, True):
        values = np.sort(-evidence[evidence <= -c]) if negative else evidence[evidence >= c]
        if values.size < 2:
            continue
        hit = _present(values, values - c, tol)
        if hit.any():
            a = values[int(np.argmax(hit))]
            if negative:  # -(a - c) - (-a) = c
                return f"{_fmt(-(a - c))} - {_fmt(-a)}"
            return f"{_fmt(a)} - {_fmt(a - c)}"
    return None


def _fmt(value: float) -> str:
    return re.sub(r"\.0$", "", f"{value:.10g}")
