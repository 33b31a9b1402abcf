"""Item 71's quadratic assignment, shared by its readings: each factory to its own location; the
cost of a plan is the sum over factory pairs (i, j) of the volume d_ij times the unit cost c_pq
between their locations; exhaustive search over the n! assignments. `table_1`'s row Factory_i
holds d_ij under Transportation_volume_to_Location_j and c_ij under Transportation_cost_to_Location_j
(the two matrices side by side, as general_parameters describes d_ij and c_pq)."""

import itertools
from pathlib import Path

from tcsexam.orspace.refmodel import number, optimum, parameters, table


def build(workspace: Path, same_factory: bool) -> dict:
    n = int(number(parameters(workspace), "n"))
    rows = table(workspace, "table_1")
    d = [[float(r[f"Transportation_volume_to_Location_{j + 1}"]) for j in range(n)] for r in rows]
    c = [[float(r[f"Transportation_cost_to_Location_{j + 1}"]) for j in range(n)] for r in rows]
    pairs = [(i, j) for i in range(n) for j in range(n) if same_factory or i != j]
    best = min(sum(d[i][j] * c[p[i]][p[j]] for i, j in pairs) for p in itertools.permutations(range(n)))
    return optimum(best, "enumeration")
