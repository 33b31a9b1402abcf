"""Item 4: whole numbers of cows, sheep and chickens; profit = selling price minus feed cost per
animal; manure within the daily cleaning capacity, chickens and the total within their maxima,
cows and sheep at least their minima; maximise profit."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "whole animals; profit = price - feed cost; manure, chicken and total limits; cow and sheep minima"
ANIMALS = ("cow", "sheep", "chicken")


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    x = {a: pulp.LpVariable(a, lowBound=0, cat="Integer") for a in ANIMALS}
    prob = pulp.LpProblem("item4", pulp.LpMaximize)
    prob += pulp.lpSum((number(v, f"{a}_selling_price") - number(v, f"{a}_feed_cost")) * x[a] for a in ANIMALS)
    prob += pulp.lpSum(number(v, f"{a}_manure_production") * x[a] for a in ANIMALS) <= number(v, "max_manure_capacity")
    prob += x["chicken"] <= number(v, "max_chickens")
    prob += x["cow"] >= number(v, "min_cows")
    prob += x["sheep"] >= number(v, "min_sheep")
    prob += pulp.lpSum(x.values()) <= number(v, "max_total_animals")
    return solve(prob)


if __name__ == "__main__":
    main(build)
