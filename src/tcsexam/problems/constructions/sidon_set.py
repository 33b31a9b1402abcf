"""Sidon sets in [low, high] (`sidon_set`, maximize the size).

Certificate: distinct integers in [low, high] (any layout). Value: how many. `certificate_failed`:
an integer out of range or repeated, or two different pairs a <= b, c <= d with a + b = c + d
(for distinct integers the same as two pairs with the same difference).
"""

from __future__ import annotations

import numpy as np

from tcsexam.errors import InputError
from tcsexam.problems._common import failed
from tcsexam.problems.base import Direction
from tcsexam.problems.constructions._base import SLACK_BYTES, ConstructionProblem, Params, distinct, in_range, int_list


class SidonSet(ConstructionProblem):
    direction = Direction.MAXIMIZE
    certificate_format = "distinct integers in [low, high]"
    parameter_ranges = {"low": (-(10**9), 10**9), "high": (-(10**9), 10**9)}

    def check_parameters(self, values, where):
        if values["low"] > values["high"]:
            raise InputError(f"{where}: parameters.low must not exceed parameters.high")
        if values["high"] - values["low"] > 10**6:
            raise InputError(f"{where}: parameters.high - parameters.low must be at most 1000000")

    def random_parameters(self, rng, size):
        low = int(rng.integers(0, 100))
        return {"low": low, "high": low + int(rng.integers(1, 50 * size))}

    def max_bytes(self, params: Params) -> int:
        return SLACK_BYTES + 24 * min(params["high"] - params["low"] + 1, 100_000)

    def verify(self, params: Params, data: bytes) -> float:
        xs = int_list(data, "integer")
        in_range(xs, params["low"], params["high"], "integer")
        distinct(xs, "integer")
        xs = np.sort(xs)
        pair = repeated_sum(xs, params["low"], params["high"])
        if pair is not None:
            a, b, c, d = pair
            raise failed(f"{a} + {b} = {c} + {d} = {a + b}")
        return float(xs.size)


def repeated_sum(xs: np.ndarray, low: int, high: int) -> tuple[int, int, int, int] | None:
    """Two different pairs a <= b, c <= d of the sorted distinct `xs` with a + b = c + d, or None.

    Sums are marked in a table of the 2 (high - low) + 1 possible sums, a block of rows at a time,
    so a set too large to be Sidon stops at its first repeat (at most about that many pairs)."""
    n = xs.size
    first = np.full(2 * (high - low) + 1, -1, dtype=np.int64)  # sum - 2 low -> a pair id i * n + j
    rows = max(1, (1 << 20) // max(1, n))
    for start in range(0, n, rows):
        i, j = np.nonzero(np.triu(np.ones((min(rows, n - start), n), dtype=bool), start))
        i = i + start
        s = xs[i] + xs[j] - 2 * low
        ids = i * n + j
        order = np.argsort(s, kind="stable")
        same = np.flatnonzero(np.diff(s[order]) == 0)
        earlier = first[s] >= 0
        if same.size or earlier.any():
            if earlier.any():
                k = int(np.argmax(earlier))
                p, q = int(first[s[k]]), int(ids[k])
            else:
                p, q = int(ids[order[same[0]]]), int(ids[order[same[0] + 1]])
            e0, e1, e2, e3 = (int(xs[x]) for x in (p // n, p % n, q // n, q % n))
            return (e0, e1, e2, e3)
        first[s] = ids
    return None
