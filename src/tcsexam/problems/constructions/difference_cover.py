"""Difference covers modulo m (`difference_cover`, minimize the size).

Certificate: distinct integers in [0, m - 1] (any layout). Value: how many. `certificate_failed`:
an integer out of range or repeated, or a residue r mod m that is a - b mod m for no a, b in the set.
"""

from __future__ import annotations

import numpy as np

from tcsexam.problems._common import failed
from tcsexam.problems.base import Direction
from tcsexam.problems.constructions._base import SLACK_BYTES, ConstructionProblem, Params, distinct, in_range, int_list


class DifferenceCover(ConstructionProblem):
    direction = Direction.MINIMIZE
    certificate_format = "distinct residues in [0, modulus - 1]"
    parameter_ranges = {"modulus": (1, 1_000_000)}

    def random_parameters(self, rng, size):
        return {"modulus": int(rng.integers(1, 40 * size))}

    def max_bytes(self, params: Params) -> int:
        return SLACK_BYTES + 16 * min(params["modulus"], 100_000)

    def verify(self, params: Params, data: bytes) -> float:
        m = params["modulus"]
        xs = int_list(data, "residue")
        in_range(xs, 0, m - 1, "residue")
        distinct(xs, "residue")
        covered = np.zeros(m, dtype=bool)
        rows = max(1, (1 << 22) // max(1, xs.size))
        for start in range(0, xs.size, rows):
            covered[(xs[start : start + rows, None] - xs[None, :]) % m] = True
        if not covered.all():
            raise failed(
                f"residue {int(np.argmin(covered))} is not a difference a - b mod {m} ({int((~covered).sum())} missing)"
            )
        return float(xs.size)
