"""Item 33: every item of `table_1` goes to one of the two sons; the Jack Russell dogs go to the same
son; minimise the absolute difference between the values of the two parts."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, solve, table

READING = "each item to one son, the Jack Russell dogs together, minimise |value difference|"


def build(workspace: Path) -> dict:
    rows = table(workspace, "table_1")
    first = [pulp.LpVariable(f"first_{i}", cat="Binary") for i in range(len(rows))]
    value = [float(r["Value"]) for r in rows]
    total = sum(value)
    gap = pulp.LpVariable("gap", lowBound=0)
    share = pulp.lpSum(value[i] * first[i] for i in range(len(rows)))
    prob = pulp.LpProblem("item33", pulp.LpMinimize)
    prob += gap
    prob += gap >= 2 * share - total
    prob += gap >= total - 2 * share
    dogs = [i for i, r in enumerate(rows) if "jack russell" in r["Item"].lower()]
    for i in dogs[1:]:
        prob += first[i] == first[dogs[0]]
    return solve(prob)


if __name__ == "__main__":
    main(build)
