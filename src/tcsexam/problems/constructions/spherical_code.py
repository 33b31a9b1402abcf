"""Spherical codes (`spherical_code`, maximize the smallest angle between `points` points on
the unit sphere in R^dim).

Certificate: `points` lines of `dim` real numbers (each point is normalised by the checker).
Value: the smallest angle in degrees between two points, computed in float64 as
degrees(arccos(max over pairs of the clipped cosine)). `invalid`: a token that is not a finite
number. `certificate_failed`: another number of points or entries, or a zero vector.
"""

from __future__ import annotations

import numpy as np

from tcsexam.problems._common import failed
from tcsexam.problems.constructions._base import SLACK_BYTES, ConstructionProblem, Params, float_rows


class SphericalCode(ConstructionProblem):
    name = "spherical_code"
    direction = "maximize"
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
    """The smallest angle (degrees) between two of the unit vectors `unit` (float64)."""
    n = len(unit)
    best = -1.0
    for start in range(0, n - 1, 512):
        gram = unit[start : start + 512] @ unit.T
        upper = np.arange(start, start + len(gram))[:, None] < np.arange(n)[None, :]
        best = max(best, float(gram[upper].max()))
    return float(np.degrees(np.arccos(np.clip(best, -1.0, 1.0))))
