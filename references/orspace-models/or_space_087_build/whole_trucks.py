"""Item 87: whole numbers of Type A and Type B trucks; their refrigerated and non-refrigerated
capacities cover the two cargo requirements; minimise the rental cost per kilometre."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "whole trucks covering both cargo volumes, minimise the rental cost per km"
KINDS = ("refrigerated", "non_refrigerated")


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    n = {t: pulp.LpVariable(f"type_{t}", lowBound=0, cat="Integer") for t in "ab"}
    prob = pulp.LpProblem("item87", pulp.LpMinimize)
    prob += pulp.lpSum(number(v, f"rental_cost_type_{t}") * n[t] for t in n)
    for k in KINDS:
        prob += pulp.lpSum(number(v, f"{k}_capacity_type_{t}") * n[t] for t in n) >= number(v, f"{k}_cargo_requirement")
    return solve(prob)


if __name__ == "__main__":
    main(build)
