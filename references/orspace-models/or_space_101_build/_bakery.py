"""The bundled demo's item 101 (the bakery): batches of four products within the oven and labour
hours and each product's weekly demand, maximise profit."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, integer: bool) -> dict:
    values = parameters(workspace)
    rows = table(workspace, "table_1")
    cat = "Integer" if integer else "Continuous"
    x = {r["Product"]: pulp.LpVariable(r["Product"], lowBound=0, upBound=float(r["Max_Demand"]), cat=cat) for r in rows}
    prob = pulp.LpProblem("bakery", pulp.LpMaximize)
    prob += pulp.lpSum(float(r["Profit_per_Batch"]) * x[r["Product"]] for r in rows)
    prob += pulp.lpSum(float(r["Oven_Hours_per_Batch"]) * x[r["Product"]] for r in rows) <= number(
        values, "oven_hours_available"
    )
    prob += pulp.lpSum(float(r["Labour_Hours_per_Batch"]) * x[r["Product"]] for r in rows) <= number(
        values, "labour_hours_available"
    )
    return solve(prob)
