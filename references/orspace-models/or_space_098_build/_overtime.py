"""Item 98's model, shared by its readings: A and B within steel and aluminium, labour beyond the
available hours paid at the overtime rate (or not allowed), maximise profit minus overtime pay."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, overtime: bool, integer: bool) -> dict:
    values = parameters(workspace)
    rows = {r["Product"]: r for r in table(workspace, "table_1")}
    cat = "Integer" if integer else "Continuous"
    x = {p: pulp.LpVariable(f"x_{p}", lowBound=0, cat=cat) for p in rows}
    extra = pulp.LpVariable("overtime", lowBound=0, upBound=None if overtime else 0)
    prob = pulp.LpProblem("item98", pulp.LpMaximize)
    prob += pulp.lpSum(float(r["Profit_yuan"]) * x[p] for p, r in rows.items()) - number(values, "overtime_pay") * extra
    prob += pulp.lpSum(float(r["Steel_Required_kg"]) * x[p] for p, r in rows.items()) <= number(
        values, "available_steel"
    )
    prob += pulp.lpSum(float(r["Aluminum_Required_kg"]) * x[p] for p, r in rows.items()) <= number(
        values, "available_aluminum"
    )
    prob += (
        pulp.lpSum(float(r["Labor_Required_hours"]) * x[p] for p, r in rows.items())
        <= number(values, "available_labor") + extra
    )
    return solve(prob)
