"""Item 75's model, shared by its readings: products A and B within the two processes' available
time; every unit of B yields by-product C, which is sold (at most the sales limit, at its profit)
or disposed of (at its cost); maximise the profit of A, B and sold C minus C's disposal cost."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve


def build(workspace: Path, whole: bool) -> dict:
    v = parameters(workspace)
    cat = "Integer" if whole else "Continuous"
    a = pulp.LpVariable("a", lowBound=0, cat=cat)
    b = pulp.LpVariable("b", lowBound=0, cat=cat)
    sold = pulp.LpVariable("c_sold", lowBound=0, upBound=number(v, "max_byproduct_c_sales"))
    dumped = pulp.LpVariable("c_disposed", lowBound=0)
    prob = pulp.LpProblem("item75", pulp.LpMaximize)
    prob += (
        number(v, "profit_per_unit_a") * a
        + number(v, "profit_per_unit_b") * b
        + number(v, "profit_per_unit_c") * sold
        - number(v, "disposal_cost_per_unit_c") * dumped
    )
    for k in (1, 2):
        prob += number(v, f"product_a_process_{k}_time") * a + number(v, f"product_b_process_{k}_time") * b <= number(
            v, f"available_time_process_{k}"
        )
    prob += sold + dumped == number(v, "byproduct_c_per_unit_b") * b
    return solve(prob)
