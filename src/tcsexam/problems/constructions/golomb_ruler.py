"""Golomb rulers (`golomb_ruler`, minimize the length).

Certificate: `marks` distinct non-negative integers (any layout). Value: max - min.
`certificate_failed`: another number of marks, a negative or repeated mark, or two pairs of marks
with the same difference.
"""

from __future__ import annotations

import numpy as np

from tcsexam.problems._common import failed
from tcsexam.problems.base import Direction
from tcsexam.problems.constructions._base import SLACK_BYTES, ConstructionProblem, Params, distinct, int_list

MAX_MARK = 10**15  #: differences stay exact in int64


class GolombRuler(ConstructionProblem):
    direction = Direction.MINIMIZE
    certificate_format = "the marks: distinct non-negative integers"
    parameter_ranges = {"marks": (2, 2_000)}

    def random_parameters(self, rng, size):
        return {"marks": int(rng.integers(2, max(3, 2 * size)))}

    def max_bytes(self, params: Params) -> int:
        return SLACK_BYTES + 24 * params["marks"]

    def verify(self, params: Params, data: bytes) -> float:
        marks = int_list(data, "mark")
        if marks.size != params["marks"]:
            raise failed(f"{marks.size} marks, expected {params['marks']}")
        bad = (marks < 0) | (marks > MAX_MARK)
        if bad.any():
            raise failed(f"mark {int(marks[np.argmax(bad)])} is outside [0, {MAX_MARK}]")
        distinct(marks, "mark")
        repeated_difference(np.sort(marks), "marks")
        return float(marks.max() - marks.min())


def repeated_difference(sorted_marks: np.ndarray, what: str) -> None:
    """`certificate_failed` naming two pairs of `sorted_marks` (distinct) with the same difference."""
    i, j = np.triu_indices(sorted_marks.size, 1)
    diffs = sorted_marks[j] - sorted_marks[i]
    order = np.argsort(diffs, kind="stable")
    same = np.flatnonzero(np.diff(diffs[order]) == 0)
    if same.size:
        p, q = order[same[0]], order[same[0] + 1]
        a, b, c, d = (int(sorted_marks[x]) for x in (i[p], j[p], i[q], j[q]))
        raise failed(f"{what} {b} - {a} and {d} - {c} have the same difference {b - a}")
