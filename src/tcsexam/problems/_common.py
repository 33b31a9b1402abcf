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
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from tcsexam.errors import InputError
from tcsexam.problems.base import CheckResult, Claimed
from tcsexam.records import Status

_HAS_TEXT = re.compile(rb"[^0-9\s+\-]")
MAX_INT_DIGITS = 18  #: longer integer tokens are out of range for every problem here
_POW10 = 10 ** np.arange(MAX_INT_DIGITS + 1, dtype=np.int64)


def fast_ints(data: bytes) -> np.ndarray | None:
    """Whitespace-separated integers parsed at the byte level with numpy (no Python loop).

    Returns None when the bytes hold anything else (a sign not at a token start, a letter, a dot,
    a '+', a token longer than MAX_INT_DIGITS digits): callers then take the slow path, which
    names the offending token.
    """
    b = np.frombuffer(data, dtype=np.uint8)
    if b.size == 0:
        return np.zeros(0, dtype=np.int64)
    digit = (b - np.uint8(48)) < 10  # uint8 arithmetic wraps, so one comparison suffices
    is_minus = b == 45
    ws = (b == 32) | (b == 10) | (b == 13) | (b == 9) | (b == 11) | (b == 12)
    if not (digit | is_minus | ws).all():
        return None
    tok = ~ws
    edges = np.diff(tok.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    if starts.size == 0:
        return np.zeros(0, dtype=np.int64)
    if ends.size == digit.sum() and not is_minus.any():  # single-digit tokens (0/1 vectors)
        return (b[starts] - np.uint8(48)).astype(np.int64)
    neg = np.zeros(starts.size, dtype=bool)
    minus = np.flatnonzero(is_minus)
    if minus.size:
        at = np.searchsorted(starts, minus)
        if (at >= starts.size).any() or not np.array_equal(starts[at], minus):
            return None
        neg[at] = True
    ndig = ends - starts - neg
    if ndig.min() < 1 or ndig.max() > MAX_INT_DIGITS:
        return None
    digits = np.flatnonzero(digit)
    token_of = np.repeat(np.arange(starts.size), ndig)
    vals = (b[digits] - 48).astype(np.int64) * _POW10[ends[token_of] - 1 - digits]
    offsets = np.zeros(starts.size, dtype=np.int64)
    np.cumsum(ndig[:-1], out=offsets[1:])
    out = np.add.reduceat(vals, offsets)
    out[neg] = -out[neg]
    return out


class Reject(Exception):
    """Raised inside a checker to answer `invalid` or `certificate_failed` with a message."""

    def __init__(self, status: Status, message: str, claimed: Claimed = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.claimed = claimed

    def result(self) -> CheckResult:
        return CheckResult(self.status, message=self.message, claimed=self.claimed)


def invalid(message: str, claimed: Claimed = None) -> Reject:
    return Reject(Status.INVALID, message, claimed)


def failed(message: str, claimed: Claimed = None) -> Reject:
    return Reject(Status.CERTIFICATE_FAILED, message, claimed)


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
    if len(tokens) > 4096:
        fast = fast_ints(b" ".join(tokens))
        if fast is not None:
            return fast
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
        raise invalid(f"certificate is {len(data)} bytes, more than the {max_bytes} allowed for this instance")
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


def vector_certificate(data: bytes, max_bytes: int, what: str) -> tuple[np.ndarray, float | None]:
    """Integers and claimed value of a vector certificate; Reject on a bad one."""
    if len(data) <= max_bytes:
        fast = fast_ints(data)  # None on any other byte: the slow path reads lines
        if fast is not None and fast.size:
            return fast, None
    tokens, claimed = split_vector_certificate(data, max_bytes)
    return certificate_ints(tokens, claimed, what), claimed


def certificate_ints(tokens: list[bytes], claimed: Claimed, what: str) -> np.ndarray:
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
        raise failed(f"claimed value {fmt(claimed)} differs from the recomputed value {fmt(value)}", claimed)


def fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def meta_number(meta: Mapping[str, Any], *keys: str) -> float | None:
    """The first finite numeric metadata value among `keys` (e.g. best_known, optimum)."""
    for key in keys:
        value = meta.get(key) if meta else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    return None


def competition_lines(data: bytes, max_bytes: int) -> Iterator[tuple[int, bytes, bytes, bytes]]:
    """(line number, line, kind, rest) of each line of SAT or MaxSAT competition output that is not
    blank or a `c` comment. kind is the line's one-letter first word (`s`, `v`, `o`, ...), or b""
    when the line does not start with a one-letter word: the caller reports it as an unknown line."""
    if len(data) > max_bytes:
        raise invalid(f"certificate is {len(data)} bytes, more than the {max_bytes} allowed")
    if not data.strip():
        raise invalid("empty certificate")
    for number, raw in enumerate(data.splitlines(), start=1):
        line = raw.strip()
        if not line or line[:1] == b"c":
            continue
        head, rest = line[:1], line[1:]
        yield number, line, head if rest[:1] in (b"", b" ", b"\t") else b"", rest


def stated_answer(data: bytes, max_bytes: int) -> str | None:
    """The words of the first `s` line of competition output (`SATISFIABLE`, `OPTIMUM FOUND`, ...),
    None when the output has none or cannot be read."""
    try:
        for _, _, head, rest in competition_lines(data, max_bytes):
            if head == b"s":
                return b" ".join(rest.split()).decode("ascii", "replace")
    except Reject:
        return None
    return None


def assignment(lits: np.ndarray, nvars: int, used_vars: int, claimed: Claimed) -> np.ndarray:
    """The truth values (1 true, -1 false, 0 unset; index 0 unused) that the non-zero literals
    `lits` assign, sized by the variables actually used so a huge declared count costs nothing.
    Rejects a literal outside 1..nvars and a variable given both signs."""
    var = np.abs(lits)
    if var.size and int(var.max()) > nvars:
        k = int(np.argmax(var > nvars))
        raise failed(f"literal {int(lits[k])} outside 1..{nvars}", claimed)
    value = np.zeros(max(used_vars, int(var.max()) if var.size else 0) + 1, dtype=np.int8)
    pos = lits > 0
    value[var[pos]] = 1
    clash = value[var[~pos]] == 1
    if clash.any():
        both = int(var[~pos][np.argmax(clash)])
        raise failed(f"variable {both} is assigned both true and false", claimed)
    value[var[~pos]] = -1
    return value
