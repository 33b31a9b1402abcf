"""Item 5's model, shared by its readings: choose exactly one protein source and at least two
vegetables, spend at most the budget, eat exactly the required total grams, maximise fibre.
A blank fibre cell (the protein sources) counts as 0 g fibre. `minimum_g` is the least portion of
a chosen food (0: a food can be "chosen" with 0 g)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import cell, number, parameters, solve, table


def build(workspace: Path, minimum_g: float) -> dict:
    values = parameters(workspace)
    foods = table(workspace, "table_1")
    budget, intake = number(values, "budget"), number(values, "food_intake")
    prob = pulp.LpProblem("item5", pulp.LpMaximize)
    grams = {f["Food"]: pulp.LpVariable(f"g_{f['Food']}", lowBound=0) for f in foods}
    chosen = {f["Food"]: pulp.LpVariable(f"y_{f['Food']}", cat="Binary") for f in foods}
    prob += pulp.lpSum((cell(f, "Fiber_Content_per_100g") or 0.0) / 100 * grams[f["Food"]] for f in foods)
    prob += pulp.lpSum(cell(f, "Price_per_100g") / 100 * grams[f["Food"]] for f in foods) <= budget
    prob += pulp.lpSum(grams.values()) == intake
    for f in foods:
        prob += grams[f["Food"]] <= intake * chosen[f["Food"]]
        prob += grams[f["Food"]] >= minimum_g * chosen[f["Food"]]
    prob += pulp.lpSum(chosen[f["Food"]] for f in foods if f["Type"] == "protein") == 1
    prob += pulp.lpSum(chosen[f["Food"]] for f in foods if f["Type"] == "vegetable") >= 2
    return solve(prob)
