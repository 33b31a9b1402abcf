"""Item 10: the fewest stores such that every residential area has a store within the distance
limit (table_1: each area and the areas within that radius of it): a set cover."""

import csv
from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, solve

READING = "minimum number of stores so that every area is within the distance limit of one (set cover)"


def build(workspace: Path) -> dict:
    with (workspace / "data" / "table_1.csv").open(newline="", encoding="utf-8-sig") as handle:
        rows = [[c.strip() for c in row if c.strip()] for row in csv.reader(handle)][1:]
    near = {row[0]: set(row[1:]) for row in rows if row}
    y = {a: pulp.LpVariable(f"y_{a}", cat="Binary") for a in near}
    prob = pulp.LpProblem("item10", pulp.LpMinimize)
    prob += pulp.lpSum(y.values())
    for area in near:
        prob += pulp.lpSum(y[s] for s in near if area in near[s]) >= 1
    return solve(prob)


if __name__ == "__main__":
    main(build)
