"""Kissing configurations in Z^d (`kissing_config`, maximize the number of points).

Certificate: one point per line, d integers, none all zero. Value: the number of points.
`certificate_failed`: a line of another length, an all-zero point, or two points x != y (two
different lines) with |x - y|^2 < max over points z of |z|^2; repeated points are such a pair.
When min |x - y| >= max |z| > 0 the points seen from the origin are at least 60 degrees apart, so
their directions form a kissing configuration of unit spheres.

Arithmetic is exact: with every |coordinate| <= 2^28 all squares and dot products fit int64 and
the Gram-matrix test runs in integers; larger coordinates (up to 18 digits) are screened in
float64 and every pair within a relative 1e-9 of the bound is decided with Python integers.
"""

from __future__ import annotations

import numpy as np

from tcsexam.problems._common import failed
from tcsexam.problems.base import Direction
from tcsexam.problems.constructions._base import SLACK_BYTES, ConstructionProblem, Params, int_rows

EXACT_INT64 = 1 << 28
MAX_POINTS = 4096  #: every known upper bound on the kissing number in dimension <= 16 is below this
ROWS_PER_BLOCK = 512


class KissingConfig(ConstructionProblem):
    direction = Direction.MAXIMIZE
    certificate_format = "one point per line: dim integers, not all zero"
    parameter_ranges = {"dim": (1, 16)}

    def max_bytes(self, params: Params) -> int:
        return SLACK_BYTES + MAX_POINTS * 20 * params["dim"]

    def verify(self, params: Params, data: bytes) -> float:
        pts, lines = int_rows(data, params["dim"], "point")
        if len(pts) > MAX_POINTS:
            raise failed(f"{len(pts)} points, more than the {MAX_POINTS} this checker accepts")
        zero = np.flatnonzero(~pts.any(axis=1))
        if zero.size:
            raise failed(f"line {lines[int(zero[0])]}: the point is all zero")
        pair = close_pair(pts)
        if pair is not None:
            i, j, d2, m = pair
            raise failed(f"lines {lines[i]} and {lines[j]}: |x - y|^2 = {d2} is less than the largest |z|^2 = {m}")
        return float(len(pts))


def close_pair(pts: np.ndarray) -> tuple[int, int, int, int] | None:
    """(i, j, |x_i - x_j|^2, max |z|^2) for the first pair i < j closer than the largest norm."""
    if np.abs(pts).max() <= EXACT_INT64:
        return _close_pair_int64(pts)
    return _close_pair_big(pts)


def _close_pair_int64(pts: np.ndarray) -> tuple[int, int, int, int] | None:
    norms = (pts * pts).sum(axis=1)
    m = int(norms.max())
    n = len(pts)
    for start in range(0, n, ROWS_PER_BLOCK):
        block = pts[start : start + ROWS_PER_BLOCK]
        d2 = norms[start : start + len(block), None] + norms[None, :] - 2 * (block @ pts.T)
        i = np.arange(start, start + len(block))[:, None]
        bad = (d2 < m) & (i < np.arange(n)[None, :])
        if bad.any():
            a, b = np.argwhere(bad)[0]
            return int(start + a), int(b), int(d2[a, b]), m
    return None


def _close_pair_big(pts: np.ndarray) -> tuple[int, int, int, int] | None:
    exact = [list(map(int, row)) for row in pts.tolist()]
    norms_exact = [sum(x * x for x in row) for row in exact]
    m = max(norms_exact)
    f = pts.astype(np.float64)
    norms = (f * f).sum(axis=1)
    n = len(pts)
    for start in range(0, n, ROWS_PER_BLOCK):
        block = f[start : start + ROWS_PER_BLOCK]
        d2 = norms[start : start + len(block), None] + norms[None, :] - 2 * (block @ f.T)
        i = np.arange(start, start + len(block))[:, None]
        scale = norms[start : start + len(block), None] + norms[None, :] + float(m)
        near = (d2 < float(m) + 1e-9 * scale) & (i < np.arange(n)[None, :])
        for a, b in np.argwhere(near):
            x, y = exact[start + a], exact[b]
            e = sum((p - q) * (p - q) for p, q in zip(x, y))
            if e < m:
                return int(start + a), int(b), e, m
    return None
