"""Item 66's model: toys of three types within labour and inspection hours and each type's market
demand; maximise profit. `integer`: whole toys."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table

DEMAND = {"High-End": "max_demand_high_end", "Mid-Range": "max_demand_mid_range", "Low-End": "max_demand_low_end"}


def build(workspace: Path, integer: bool) -> dict:
    v = parameters(workspace)
    rows = {r["Toy_Type"]: r for r in table(workspace, "table_1")}
    cat = "Integer" if integer else "Continuous"
    x = {t: pulp.LpVariable(t.replace("-", "_"), lowBound=0, upBound=number(v, DEMAND[t]), cat=cat) for t in rows}
    prob = pulp.LpProblem("item66", pulp.LpMaximize)
    prob += pulp.lpSum(float(r["Profit_Per_Unit"]) * x[t] for t, r in rows.items())
    prob += pulp.lpSum(float(r["Manufacturing_Labor_Hours"]) * x[t] for t, r in rows.items()) <= number(
        v, "available_labor_hours"
    )
    prob += pulp.lpSum(float(r["Inspection_Hours"]) * x[t] for t, r in rows.items()) <= number(
        v, "available_inspection_hours"
    )
    return solve(prob)
