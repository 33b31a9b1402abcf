"""Item 58's model, shared by its readings: acres of four fruits on the farm, at most two kinds
grown, apples at least twice pears and at least three times lemons, maximise profit.
`ratio_always`: oranges = 2 x lemons always holds; otherwise only when lemons are grown."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve

FRUITS = ("apples", "pears", "oranges", "lemons")


def build(workspace: Path, ratio_always: bool) -> dict:
    values = parameters(workspace)
    area = number(values, "total_farm_area")
    prob = pulp.LpProblem("item58", pulp.LpMaximize)
    x = {f: pulp.LpVariable(f"x_{f}", lowBound=0) for f in FRUITS}
    y = {f: pulp.LpVariable(f"y_{f}", cat="Binary") for f in FRUITS}
    prob += pulp.lpSum(number(values, f"profit_per_acre_{f}") * x[f] for f in FRUITS)
    prob += pulp.lpSum(x.values()) <= area
    for f in FRUITS:
        prob += x[f] <= area * y[f]
    prob += pulp.lpSum(y.values()) <= number(values, "max_fruit_types")
    prob += x["apples"] >= number(values, "min_apples_to_pears_ratio") * x["pears"]
    prob += x["apples"] >= number(values, "min_apples_to_lemons_ratio") * x["lemons"]
    ratio = number(values, "oranges_to_lemons_ratio")
    if ratio_always:
        prob += x["oranges"] == ratio * x["lemons"]
    else:  # when lemons are grown (y = 1): oranges = ratio x lemons
        big = ratio * area
        prob += x["oranges"] - ratio * x["lemons"] <= big * (1 - y["lemons"])
        prob += x["oranges"] - ratio * x["lemons"] >= -big * (1 - y["lemons"])
    return solve(prob)
