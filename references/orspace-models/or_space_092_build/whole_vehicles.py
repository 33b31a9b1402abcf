"""Item 92: whole buses and minibuses, each within the fleet, one driver each, seats for every
student; minimise the rental cost."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "whole vehicles within the fleet and the drivers, seats for all students; min rental"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    kinds = ("bus", "minibus")
    x = {k: pulp.LpVariable(k, lowBound=0, upBound=number(v, f"num_{k}es"), cat="Integer") for k in kinds}
    prob = pulp.LpProblem("item92", pulp.LpMinimize)
    prob += pulp.lpSum(number(v, f"{k}_rental_cost") * x[k] for k in kinds)
    prob += pulp.lpSum(number(v, f"{k}_capacity") * x[k] for k in kinds) >= number(v, "num_students")
    prob += pulp.lpSum(x.values()) <= number(v, "num_drivers")
    return solve(prob)


if __name__ == "__main__":
    main(build)
