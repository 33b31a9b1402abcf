"""Cap sets in F_3^n (`cap_set`, maximize the number of vectors).

Certificate: one vector per line, `dim` symbols from {0, 1, 2}, separated by whitespace (a line
may also be written as one token of `dim` digits, `01201201`). Value: the number of vectors.
`certificate_failed`: a line of another length, a symbol outside {0, 1, 2}, a repeated vector, or
three distinct vectors x, y, z with x + y + z = 0 (mod 3) in every coordinate (a line of AG(n, 3)).

The check is exact and vectorised: vectors are encoded as base-3 integers; for every pair x, y
the third point of their line, z = -(x + y) mod 3, is looked up in a table of the 3^n codes (for
distinct x, y that z differs from both), one block of pairs at a time.
"""

from __future__ import annotations

import re

import numpy as np

from tcsexam.problems._common import failed
from tcsexam.problems.base import Direction
from tcsexam.problems.constructions._base import SLACK_BYTES, ConstructionProblem, Params, in_range, int_rows

PAIRS_PER_BLOCK = 1 << 21


class CapSet(ConstructionProblem):
    direction = Direction.MAXIMIZE
    certificate_format = "one vector of F_3^dim per line: dim symbols 0/1/2"
    parameter_ranges = {"dim": (1, 10)}

    def max_bytes(self, params: Params) -> int:
        points: int = 3 ** params["dim"]  # (a non-negative exponent: an int)
        return SLACK_BYTES + points * (2 * params["dim"] + 2)

    def verify(self, params: Params, data: bytes) -> float:
        dim = params["dim"]
        vecs, lines = int_rows(compact_to_spaced(data, dim), dim, "vector")
        in_range(vecs, 0, 2, "symbol")
        codes = vecs @ (3 ** np.arange(dim, dtype=np.int64))
        order = np.argsort(codes, kind="stable")
        dup = np.flatnonzero(np.diff(codes[order]) == 0)
        if dup.size:
            a, b = sorted((int(order[dup[0]]), int(order[dup[0] + 1])))
            raise failed(f"lines {lines[a]} and {lines[b]} hold the same vector")
        hit = find_line(vecs, codes)
        if hit is not None:
            i, j, k = sorted(hit)
            raise failed(f"lines {lines[i]}, {lines[j]} and {lines[k]} sum to 0 mod 3 (a line of AG({dim},3))")
        return float(len(vecs))


def compact_to_spaced(data: bytes, dim: int) -> bytes:
    """Lines written as one token of `dim` digits (`01201201`) spelled out as `dim` numbers."""
    if dim < 2 or not re.search(rb"(?m)^[ \t]*[0-9]{%d}[ \t]*\r?$" % dim, data):
        return data
    return re.sub(rb"(?m)^([ \t]*)([0-9]{%d})([ \t]*\r?)$" % dim, lambda m: b" ".join(bytes([c]) for c in m[2]), data)


def find_line(vecs: np.ndarray, codes: np.ndarray) -> tuple[int, int, int] | None:
    """Indices (i, j, k) of three distinct vectors summing to 0 mod 3, or None."""
    n, dim = vecs.shape
    index = np.full(3**dim, -1, dtype=np.int64)
    index[codes] = np.arange(n)
    powers = 3 ** np.arange(dim, dtype=np.int64)
    v8 = vecs.astype(np.int8)
    rows = max(1, PAIRS_PER_BLOCK // max(1, n))
    for start in range(0, n, rows):
        block = v8[start : start + rows]
        third = (-(block[:, None, :] + v8[None, :, :])) % 3  # (rows, n, dim)
        k = index[third.astype(np.int64) @ powers]
        i = np.arange(start, start + len(block))[:, None]
        j = np.arange(n)[None, :]
        bad = (k >= 0) & (i < j)  # for x != y the third point differs from both
        if bad.any():
            a, b = np.argwhere(bad)[0]
            return int(start + a), int(b), int(k[a, b])
    return None
