"""Spherical codes (`spherical_code`, maximize the smallest angle between `points` points on
the unit sphere in R^dim).

Certificate: `points` lines of `dim` real numbers (each point is normalised by the checker).
Value: the smallest angle in degrees between two points, computed in float64 as
arccos of the largest cosine of two normalised points (2 asin(|u - v| / 2) when that cosine is
above 0.99, which keeps small angles accurate). `invalid`: a token that is not a finite
number. `certificate_failed`: another number of points or entries, or a zero vector.
"""

from __future__ import annotations

import numpy as np

from tcsexam.problems._common import failed
from tcsexam.problems.base import Direction
from tcsexam.problems.constructions._base import SLACK_BYTES, ConstructionProblem, Params, float_rows


class SphericalCode(ConstructionProblem):
    direction = Direction.MAXIMIZE
    certificate_format = "points lines of dim real numbers"
    parameter_ranges = {"dim": (2, 64), "points": (2, 4096)}

    def random_parameters(self, rng, size):
        return {"dim": int(rng.integers(2, 9)), "points": int(rng.integers(2, 4 * size + 3))}

    def max_bytes(self, params: Params) -> int:
        return SLACK_BYTES + params["points"] * params["dim"] * 32

    def verify(self, params: Params, data: bytes) -> float:
        pts = float_rows(data, params["dim"], "point")
        if len(pts) != params["points"]:
            raise failed(f"{len(pts)} points, expected {params['points']}")
        norms = np.sqrt((pts * pts).sum(axis=1))
        zero = np.flatnonzero(norms == 0)
        if zero.size:
            raise failed(f"point {int(zero[0]) + 1} is the zero vector")
        return min_angle_degrees(pts / norms[:, None])


def min_angle_degrees(unit: np.ndarray) -> float:
    """The smallest angle (degrees) between two of the unit vectors `unit` (float64).

    The pairs of largest cosine are found from the Gram matrix, one block of rows at a time; the
    angle is arccos of that cosine, except above cosine 0.99, where the angle of each pair within
    1e-9 of it is taken as 2 asin(|u - v| / 2): arccos of a cosine near 1 loses half the digits."""
    n = len(unit)
    best = -2.0
    pairs: list[tuple[int, int, float]] = []
    for start in range(0, n - 1, 512):
        gram = unit[start : start + 512] @ unit.T
        upper = np.arange(start, start + len(gram))[:, None] < np.arange(n)[None, :]
        gram = np.where(upper, gram, -2.0)
        top = float(gram.max())
        if top >= best - 1e-9:
            near = np.argwhere(gram >= max(best, top) - 1e-9)
            pairs = [p for p in pairs if p[2] >= max(best, top) - 1e-9]
            pairs += [(start + int(a), int(b), float(gram[a, b])) for a, b in near]
            best = max(best, top)
    if best < 0.99:  # arccos is well conditioned here
        return float(np.degrees(np.arccos(np.clip(best, -1.0, 1.0))))
    i = np.array([p[0] for p in pairs])
    j = np.array([p[1] for p in pairs])
    chord = np.sqrt(((unit[i] - unit[j]) ** 2).sum(axis=1))
    return float(np.degrees(2.0 * np.arcsin(np.clip(chord / 2.0, 0.0, 1.0))).min())
