"""Covering designs C(v, k, t) (`covering_design`, minimize the number of blocks).

Certificate: one block per line, k distinct integers in 1..v. Value: the number of blocks.
`certificate_failed`: a line of another length, a point outside 1..v, a point repeated within a
block, or a t-subset of {1..v} contained in no block (the message names the first one). Repeated
blocks are allowed (they only cost).

The check is exact and vectorised: blocks and t-subsets are bitmasks of v bits; a t-subset T is
covered iff some block B has B & T == T, computed for every (t-subset, block) pair in blocks.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from tcsexam.errors import InputError
from tcsexam.problems._common import failed
from tcsexam.problems.base import Direction
from tcsexam.problems.constructions._base import SLACK_BYTES, ConstructionProblem, Params, in_range, int_rows

MAX_SUBSETS = 2_000_000  #: C(v, t) this checker enumerates


class CoveringDesign(ConstructionProblem):
    direction = Direction.MINIMIZE
    certificate_format = "one block per line: k distinct points in 1..v"
    parameter_ranges = {"v": (1, 62), "k": (1, 62), "t": (1, 62)}

    def check_parameters(self, values, where):
        if not values["t"] <= values["k"] <= values["v"]:
            raise InputError(f"{where}: parameters need t <= k <= v")
        if math.comb(values["v"], values["t"]) > MAX_SUBSETS:
            raise InputError(f"{where}: C(v, t) = {math.comb(values['v'], values['t'])} is more than {MAX_SUBSETS}")

    def random_parameters(self, rng, size):
        v = int(rng.integers(2, min(20, 2 + size)))
        k = int(rng.integers(1, v + 1))
        return {"v": v, "k": k, "t": int(rng.integers(1, min(k, 4) + 1))}

    def max_bytes(self, params: Params) -> int:
        return SLACK_BYTES + min(math.comb(params["v"], params["t"]), 100_000) * 3 * (params["k"] + 1)

    def verify(self, params: Params, data: bytes) -> float:
        v, k, t = params["v"], params["k"], params["t"]
        blocks, lines = int_rows(data, k, "block")
        in_range(blocks, 1, v, "point")
        srt = np.sort(blocks, axis=1)
        rep = np.flatnonzero((np.diff(srt, axis=1) == 0).any(axis=1))
        if rep.size:
            raise failed(f"line {lines[int(rep[0])]}: a point occurs twice in the block")
        masks = (np.int64(1) << (blocks - 1)).sum(axis=1)
        masks = np.unique(masks)
        subsets = np.array(
            [sum(1 << (p - 1) for p in c) for c in itertools.combinations(range(1, v + 1), t)], dtype=np.int64
        )
        covered = np.zeros(subsets.size, dtype=bool)
        step = max(1, (1 << 22) // max(1, masks.size))
        for start in range(0, subsets.size, step):
            s = subsets[start : start + step]
            covered[start : start + step] = ((s[:, None] & masks[None, :]) == s[:, None]).any(axis=1)
        if not covered.all():
            first = int(subsets[int(np.argmin(covered))])
            points = [p + 1 for p in range(v) if first >> p & 1]
            raise failed(
                f"the {t}-subset {{{', '.join(map(str, points))}}} lies in no block ({int((~covered).sum())} uncovered)"
            )
        return float(len(blocks))
