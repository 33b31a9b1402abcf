"""Item 11's pre-emptive goal programme, shared by its readings. Unit profit = selling price minus
the hours of each process times its hourly cost. Goals in order: weekly profit at least the
minimum, Type A at least its minimum, then the idle hours of the processes weighted by their
hourly costs as small as possible; no overtime (hours within each process's capacity). The goals
are met here (the first two as constraints: a plan meeting both exists), so the plan minimises the
weighted idle time subject to them. `report` says which number of that plan is the answer."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table

PROCESSES = ("Manufacturing", "Assembly", "Inspection")


def build(workspace: Path, integer: bool, report: str) -> dict:
    values = parameters(workspace)
    rows = {r["Type"]: r for r in table(workspace, "table_1")}
    capacity = {p: float(rows["Max_weekly_capacity"][f"{p}_hours_per_unit"]) for p in PROCESSES}
    rate = {p: float(rows["Process_cost_Yuan_per_hour"][f"{p}_hours_per_unit"]) for p in PROCESSES}
    products = ("Type_A", "Type_B")
    hours = {(t, p): float(rows[t][f"{p}_hours_per_unit"]) for t in products for p in PROCESSES}
    price = {t: float(rows[t]["Selling_Price_Yuan_per_unit"]) for t in products}
    unit_profit = {t: price[t] - sum(hours[t, p] * rate[p] for p in PROCESSES) for t in products}
    cat = "Integer" if integer else "Continuous"
    x = {t: pulp.LpVariable(t, lowBound=0, cat=cat) for t in products}
    profit = pulp.lpSum(unit_profit[t] * x[t] for t in products)
    idle = pulp.lpSum(rate[p] * (capacity[p] - pulp.lpSum(hours[t, p] * x[t] for t in products)) for p in PROCESSES)
    prob = pulp.LpProblem("item11", pulp.LpMinimize)
    prob += idle
    for p in PROCESSES:
        prob += pulp.lpSum(hours[t, p] * x[t] for t in products) <= capacity[p]
    prob += profit >= number(values, "min_weekly_profit")
    prob += x["Type_A"] >= number(values, "min_type_a_production")
    result = solve(prob)
    if result["status"] == "Optimal" and report == "profit":
        result["objective"] = pulp.value(profit)
    return result
