"""Item 93's model, shared by its readings: barrels of milk to A1 (on Type A equipment) and to A2
(on Type B); milk within the daily supply, labour hours within the daily hours, A1's kilograms
within Type A's capacity (Type B is unlimited); maximise the profit of the kilograms made."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve


def build(workspace: Path, whole_barrels: bool) -> dict:
    v = parameters(workspace)
    cat = "Integer" if whole_barrels else "Continuous"
    x = {p: pulp.LpVariable(p, lowBound=0, cat=cat) for p in ("A1", "A2")}
    prob = pulp.LpProblem("item93", pulp.LpMaximize)
    prob += pulp.lpSum(number(v, f"profit_per_kg_{p}") * number(v, f"product_{p}_yield") * x[p] for p in x)
    prob += pulp.lpSum(number(v, "milk_per_barrel") * x[p] for p in x) <= number(v, "daily_milk_supply")
    prob += pulp.lpSum(number(v, f"product_{p}_time") * x[p] for p in x) <= number(v, "daily_labor_hours")
    prob += number(v, "product_A1_yield") * x["A1"] <= number(v, "type_A_capacity")
    return solve(prob)
