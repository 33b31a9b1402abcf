"""Item 43: whole numbers of trucks from warehouses A and B; each day's loads cover the minimum of
raw materials A, B and C; minimise the freight cost."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "whole trucks from each warehouse, daily minima of the three materials, minimise freight"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    trucks = {w: pulp.LpVariable(f"trucks_{w}", lowBound=0, cat="Integer") for w in "AB"}
    prob = pulp.LpProblem("item43", pulp.LpMinimize)
    prob += pulp.lpSum(number(v, f"warehouse_{w}_truck_cost") * trucks[w] for w in "AB")
    for m in "ABC":
        prob += pulp.lpSum(number(v, f"warehouse_{w}_truck_capacity_{m}") * trucks[w] for w in "AB") >= number(
            v, f"min_raw_material_{m}"
        )
    return solve(prob)


if __name__ == "__main__":
    main(build)
