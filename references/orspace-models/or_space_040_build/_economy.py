"""Item 40's input-output model, shared by its readings: production x of steel, engines,
electronics and plastic; making one unit of a commodity uses units of the others
(`<made>_<used>_requirement`), other imported goods (`<made>_import_cost`) and labour
(`<made>_labor_requirement`); labour, engine and plastic production within their limits; what is
not used in production is exported at its world price (net output >= 0). `gdp`: "net" (the
world-price value of net output minus imported inputs) or "gross" (the world-price value of gross
output minus imported inputs)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve

GOODS = {"steel": "steel", "engine": "engine", "electronics": "electronics", "plastic": "plastic"}
PRICE = {
    "steel": "steel_price",
    "engine": "engine_price",
    "electronics": "electronics_price",
    "plastic": "plastic_price",
}


def build(workspace: Path, gdp: str) -> dict:
    v = parameters(workspace)
    x = {g: pulp.LpVariable(f"x_{g}", lowBound=0) for g in GOODS}
    use = {
        (made, used): number(v, f"{made}_{used}_requirement")
        for made in GOODS
        for used in GOODS
        if f"{made}_{used}_requirement" in v
    }
    net = {g: x[g] - pulp.lpSum(r * x[made] for (made, used), r in use.items() if used == g) for g in GOODS}
    imports = pulp.lpSum(number(v, f"{g}_import_cost") * x[g] for g in GOODS)
    value = net if gdp == "net" else x
    prob = pulp.LpProblem("item40", pulp.LpMaximize)
    prob += pulp.lpSum(number(v, PRICE[g]) * value[g] for g in GOODS) - imports
    for g in GOODS:
        prob += net[g] >= 0
    prob += pulp.lpSum(number(v, f"{g}_labor_requirement") * x[g] for g in GOODS) <= number(v, "labor_force")
    prob += x["engine"] <= number(v, "engine_production_limit")
    prob += x["plastic"] <= number(v, "plastic_production_limit")
    return solve(prob)
