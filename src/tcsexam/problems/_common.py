"""Helpers shared by the problem modules: fast token parsing and the certificate grammar.

Vector certificates (MaxCut, TSP, colouring) share one grammar (docs/problems.md):

    certificate := line*
    a blank line                      ignored
    a line whose first character is `c` or `#`   a comment, ignored
    `value <number>`                  the solver's claimed objective (at most one such line)
    any other line                    whitespace-separated integers, read in order

A certificate is first bounded in size (an instance-dependent cap, so a 50 MB file of digits is
answered at once), then split into tokens with `bytes.split` and converted in one C-level pass.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from tcsexam.errors import InputError
from tcsexam.problems.base import CheckResult
from tcsexam.records import Status

_HAS_TEXT = re.compile(rb"[^0-9\s+\-]")
MAX_INT_DIGITS = 18  #: longer integer tokens are out of range for every problem here


class Reject(Exception):
    """Raised inside a checker to answer `invalid` or `certificate_failed` with a message."""

    def __init__(self, status: str, message: str, claimed: Any = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.claimed = claimed

    def result(self) -> CheckResult:
        return CheckResult(self.status, message=self.message, claimed=self.claimed)


def invalid(message: str, claimed: Any = None) -> Reject:
    return Reject(Status.INVALID.value, message, claimed)


def failed(message: str, claimed: Any = None) -> Reject:
    return Reject(Status.CERTIFICATE_FAILED.value, message, claimed)


def read_instance_bytes(path: Path, what: str) -> bytes:
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: {what} instance not found") from None
    except IsADirectoryError:
        raise InputError(f"{path}: {what} instance is a directory, not a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what} instance: {exc.strerror or exc}") from None
    if not data.strip():
        raise InputError(f"{path}: {what} instance is empty")
    return data


def line_of_token(data: bytes, index: int) -> int:
    """1-based line number of the `index`-th whitespace-separated token (slow path, errors only)."""
    seen = 0
    for number, line in enumerate(data.splitlines(), start=1):
        count = len(line.split())
        if seen + count > index:
            return number
        seen += count
    return number if data else 1


def ints_or_none(tokens: list[bytes]) -> np.ndarray | None:
    """Tokens as int64, or None when one is not an integer in range (caller reports where)."""
    if not tokens:
        return np.zeros(0, dtype=np.int64)
    if max(map(len, tokens)) > MAX_INT_DIGITS:
        return None
    try:
        return np.array(list(map(int, tokens)), dtype=np.int64)
    except (ValueError, OverflowError):
        return None


def floats_or_none(tokens: list[bytes]) -> np.ndarray | None:
    """Tokens as finite float64, or None when one is not a finite number."""
    if not tokens:
        return np.zeros(0, dtype=np.float64)
    if max(map(len, tokens)) > 64:
        return None
    try:
        arr = np.array(list(map(float, tokens)), dtype=np.float64)
    except (ValueError, OverflowError):
        return None
    if not np.all(np.isfinite(arr)):
        return None
    return arr


def first_bad_int(tokens: list[bytes]) -> int:
    """Index of the first token that is not an integer of at most MAX_INT_DIGITS characters."""
    for i, tok in enumerate(tokens):
        if len(tok) > MAX_INT_DIGITS:
            return i
        try:
            int(tok)
        except ValueError:
            return i
    return -1


def first_bad_float(tokens: list[bytes]) -> int:
    for i, tok in enumerate(tokens):
        try:
            if len(tok) > 64 or not math.isfinite(float(tok)):
                return i
        except ValueError:
            return i
    return -1


def show(token: bytes, limit: int = 24) -> str:
    """A token shown safely in a one-line message."""
    text = token[:limit].decode("ascii", "replace")
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return repr(text + ("..." if len(token) > limit else ""))


def parse_number(token: bytes) -> float | None:
    if len(token) > 64:
        return None
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def split_vector_certificate(data: bytes, max_bytes: int) -> tuple[list[bytes], float | None]:
    """Tokens and claimed value of a vector certificate (grammar in the module docstring)."""
    if len(data) > max_bytes:
        raise invalid(
            f"certificate is {len(data)} bytes, more than the {max_bytes} allowed for this instance"
        )
    if not data.strip():
        raise invalid("empty certificate")
    if _HAS_TEXT.search(data) is None:
        return data.split(), None
    claimed: float | None = None
    kept: list[bytes] = []
    for number, line in enumerate(data.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped[:1] in (b"c", b"#"):
            continue
        parts = stripped.split()
        if parts[0] == b"value":
            if claimed is not None:
                raise invalid(f"line {number}: a second 'value' line")
            if len(parts) != 2 or (value := parse_number(parts[1])) is None:
                raise invalid(f"line {number}: 'value' must be followed by one finite number")
            claimed = value
            continue
        kept.append(stripped)
    tokens = b" ".join(kept).split()
    if not tokens:
        raise invalid("certificate has no entries", claimed)
    return tokens, claimed


def certificate_ints(tokens: list[bytes], claimed: float | None, what: str) -> np.ndarray:
    """Tokens as int64 or `invalid` naming the first bad token (its index is 1-based)."""
    arr = ints_or_none(tokens)
    if arr is None:
        i = first_bad_int(tokens)
        tok = tokens[i]
        stripped = tok.lstrip(b"+-")
        if stripped.isdigit() and len(tok) > MAX_INT_DIGITS:
            raise failed(f"{what} {i + 1} is out of range: {show(tok)}", claimed)
        raise invalid(f"{what} {i + 1} is not an integer: {show(tok)}", claimed)
    return arr


def values_match(claimed: float, value: float) -> bool:
    return abs(claimed - value) <= 1e-6 * max(1.0, abs(value))


def claim_check(claimed: float | None, value: float) -> None:
    if claimed is not None and not values_match(claimed, value):
        raise failed(
            f"claimed value {fmt(claimed)} differs from the recomputed value {fmt(value)}", claimed
        )


def fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def meta_number(meta: Mapping[str, Any], *keys: str) -> float | None:
    """The first finite numeric metadata value among `keys` (e.g. best_known, optimum)."""
    for key in keys:
        value = meta.get(key) if meta else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    return None
