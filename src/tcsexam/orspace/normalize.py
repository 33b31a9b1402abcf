"""The exact-match normaliser for OR-Space Explain rubrics (the release's rules).

Both the answer and each target entity go through `normalize_text`:

1. Unicode NFKC;
2. typographic quotes folded to ASCII (' and "), every dash/minus variant to `-`;
3. backticks dropped;
4. white space collapsed to one space, stripped;
5. thousands separators dropped (`10,000` -> `10000`, only between digit groups of three);
6. casefold.

An entity is found in an answer when:

- it is a number (the whole normalised entity parses as a float): some number cited in the answer
  equals it within relative tolerance 1e-6 (`|a - e| <= 1e-6 * max(|a|, |e|)`, exact for 0); numbers
  that are part of an identifier (`bII_7`, `x2`) are not cited numbers;
- otherwise: it occurs in the answer on identifier boundaries. An entity that starts (ends) with an
  identifier character (letter, digit, `_`) may not be preceded (followed) by one, so `Food II` does
  not contain `I` and `mut_excl_I_20` does not contain `mut_excl_I_2`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache

import numpy as np

REL_TOL = 1e-6

_QUOTES = {
    "\u2018": "'",
    "\u2019": "'",
    "\u201a": "'",
    "\u201b": "'",
    "\u2032": "'",
    "\u00b4": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "\u201f": '"',
    "\u2033": '"',
    "\u00ab": '"',
    "\u00bb": '"',
}
_DASHES = {c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"}
_TRANSLATE = str.maketrans({**_QUOTES, **_DASHES, "`": None})
_SPACE = re.compile(r"\s+")
# a grouped number: 1-3 digits, then ,ddd groups; not inside a comma list ({900,1300,600,650})
_THOUSANDS = re.compile(r"(?<![\d,])\d{1,3}(?:,\d{3})+(?![\d]|,\d)")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?(?![\d])")
_IDENT = re.compile(r"\w")


def normalize_text(text: str) -> str:
    """The release's normal form (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).translate(_TRANSLATE)
    text = _SPACE.sub(" ", text).strip()
    text = _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text)
    return text.casefold()


def parse_number(text: str) -> float | None:
    """The float a normalised entity denotes, or None when it is not a plain number."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def cited_numbers(normalized: str) -> np.ndarray:
    """Every number in a normalised text that is not part of an identifier."""
    values = []
    for match in _NUMBER.finditer(normalized):
        token = match.group(0)
        end = match.end()
        # a number glued to an identifier (`x2`, `2x_a`): letters right after are units (`12kg`),
        # but an underscore continues an identifier
        if end < len(normalized) and normalized[end] == "_":
            continue
        try:
            value = float(token.rstrip("."))
        except ValueError:
            continue
        if math.isfinite(value):
            values.append(value)
    return np.asarray(values, dtype=float)


def numbers_close(cited: np.ndarray, value: float, rel_tol: float = REL_TOL) -> np.ndarray:
    """Elementwise: cited numbers equal to `value` within the relative tolerance."""
    scale = np.maximum(np.abs(cited), abs(value))
    close: np.ndarray = np.abs(cited - value) <= rel_tol * scale
    return close


@lru_cache(maxsize=4096)
def _entity_pattern(entity_norm: str) -> re.Pattern:
    left = r"(?<!\w)" if _IDENT.match(entity_norm[0]) else ""
    right = r"(?!\w)" if _IDENT.match(entity_norm[-1]) else ""
    return re.compile(left + re.escape(entity_norm) + right)


class NormalizedAnswer:
    """An answer normalised once, ready for many entity look-ups."""

    def __init__(self, answer: str):
        self.text = normalize_text(answer)
        self.numbers = cited_numbers(self.text)

    def contains(self, entity: str) -> bool:
        entity_norm = normalize_text(entity)
        if not entity_norm:
            return False
        number = parse_number(entity_norm)
        if number is not None:
            return bool(numbers_close(self.numbers, number).any()) if self.numbers.size else False
        return _entity_pattern(entity_norm).search(self.text) is not None


def contains_entity(answer: str, entity: str) -> bool:
    """True when `entity` is found in `answer` under the release's exact-match rules."""
    return NormalizedAnswer(answer).contains(entity)
