"""Item 3's model, shared by its readings: January to June; the workforce changes by hiring and
firing (at their costs); in-house production takes the labour hours per unit from the workers'
regular hours (paid for every worker at the regular wage) plus overtime (at most the limit per
worker, at the overtime wage), and costs its raw material; tables can also be bought from the
supplier; demand not met is backordered (cost per unit per month) and delivered later, stock held
at a month's end costs the holding cost; June ends with at least the terminal inventory and no
backorders, so every unit demanded is sold at the sales price; maximise revenue minus all costs."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, whole_workers: bool) -> dict:
    v = parameters(workspace)
    demand = [float(r["Demand_Forecast"]) for r in table(workspace, "table_1")]
    months = range(len(demand))
    cat = "Integer" if whole_workers else "Continuous"

    def series(name: str, kind: str = "Continuous") -> list:
        return [pulp.LpVariable(f"{name}_{t}", lowBound=0, cat=kind) for t in months]

    workers, hired, fired = series("workers", cat), series("hired", cat), series("fired", cat)
    made, overtime, bought, held, owed = (series(n) for n in ("made", "overtime", "bought", "held", "owed"))
    prob = pulp.LpProblem("item3", pulp.LpMaximize)
    prob += number(v, "sales_price") * sum(demand) - pulp.lpSum(
        number(v, "raw_material_cost") * made[t]
        + number(v, "outsourcing_cost") * bought[t]
        + number(v, "inventory_holding_cost") * held[t]
        + number(v, "backorder_cost") * owed[t]
        + number(v, "regular_wage") * number(v, "regular_labor_hours") * workers[t]
        + number(v, "overtime_wage") * overtime[t]
        + number(v, "hiring_cost") * hired[t]
        + number(v, "firing_cost") * fired[t]
        for t in months
    )
    for t in months:
        prob += workers[t] == (workers[t - 1] if t else number(v, "initial_workforce")) + hired[t] - fired[t]
        prob += number(v, "labor_requirement") * made[t] <= number(v, "regular_labor_hours") * workers[t] + overtime[t]
        prob += overtime[t] <= number(v, "overtime_hours_limit") * workers[t]
        before = held[t - 1] - owed[t - 1] if t else number(v, "initial_inventory")
        prob += held[t] - owed[t] == before + made[t] + bought[t] - demand[t]
    prob += held[-1] >= number(v, "terminal_inventory")
    prob += owed[-1] <= number(v, "terminal_backorders")
    return solve(prob)
