"""Item 71 (probe): the table's headers read literally as a linear assignment: putting factory i at
location j costs `Transportation_volume_to_Location_j` times `Transportation_cost_to_Location_j`
of row Factory_i. This drops what the docs and general_parameters state (volumes between
factories, unit costs between locations: a quadratic assignment), so it is a probe, not evidence.
It was written after the two quadratic readings disagreed with the reference, to show where that
value can come from."""

import itertools
from pathlib import Path

from tcsexam.orspace.refmodel import main, number, optimum, parameters, table

READING = "linear assignment: factory i at location j costs volume_to_location_j x cost_to_location_j of row i"
EVIDENCE = False


def build(workspace: Path) -> dict:
    n = int(number(parameters(workspace), "n"))
    rows = table(workspace, "table_1")
    cost = [
        [
            float(r[f"Transportation_volume_to_Location_{j + 1}"])
            * float(r[f"Transportation_cost_to_Location_{j + 1}"])
            for j in range(n)
        ]
        for r in rows
    ]
    best = min(sum(cost[i][p[i]] for i in range(n)) for p in itertools.permutations(range(n)))
    return optimum(best, "enumeration")


if __name__ == "__main__":
    main(build)
