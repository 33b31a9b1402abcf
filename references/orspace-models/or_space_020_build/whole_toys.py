"""Item 20: whole numbers of robots, model cars, building blocks and dolls within plastic and
electronic components; robots exclude dolls; model cars require building blocks; dolls at most
model cars; maximise profit (binaries link a toy's count to whether it is made)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import main, number, parameters, solve

READING = "whole toys; robots exclude dolls, model cars need building blocks, dolls <= model cars"
TOYS = ("robot", "model_car", "building_blocks", "doll")


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    big = number(v, "plastic_available")
    x = {t: pulp.LpVariable(t, lowBound=0, cat="Integer") for t in TOYS}
    made = {t: pulp.LpVariable(f"made_{t}", cat="Binary") for t in TOYS}
    prob = pulp.LpProblem("item20", pulp.LpMaximize)
    prob += pulp.lpSum(number(v, f"profit_per_{t}") * x[t] for t in TOYS)
    prob += pulp.lpSum(number(v, f"plastic_per_{t}") * x[t] for t in TOYS) <= number(v, "plastic_available")
    prob += pulp.lpSum(number(v, f"electronics_per_{t}") * x[t] for t in TOYS) <= number(
        v, "electronic_components_available"
    )
    for t in TOYS:
        prob += x[t] <= big * made[t]
        prob += x[t] >= made[t]
    prob += made["robot"] + made["doll"] <= 1
    prob += made["model_car"] <= made["building_blocks"]
    prob += x["doll"] <= x["model_car"]
    return solve(prob)


if __name__ == "__main__":
    main(build)
