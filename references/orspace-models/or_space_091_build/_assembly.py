"""Item 91's model, shared by its readings: A and B within the machine's weekly minutes, at least
2 B for every 5 A, maximise profit."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve


def build(workspace: Path, integer: bool) -> dict:
    values = parameters(workspace)
    cat = "Integer" if integer else "Continuous"
    a, b = pulp.LpVariable("A", lowBound=0, cat=cat), pulp.LpVariable("B", lowBound=0, cat=cat)
    per_a, per_b = (float(t) for t in values["production_ratio_A_to_B"].split(":"))
    prob = pulp.LpProblem("item91", pulp.LpMaximize)
    prob += number(values, "profit_product_A") * a + number(values, "profit_product_B") * b
    minutes = 60 * number(values, "machine_working_time")
    prob += number(values, "assembly_time_A") * a + number(values, "assembly_time_B") * b <= minutes
    prob += per_a * b >= per_b * a
    return solve(prob)
