"""Item 89's model, shared by its readings: kg of A and B within the week's production hours, B at
least three times A, maximise profit. `storage`: "shared" (A takes four times B's space and the
space holds 4 kg of A: 4A + B <= 16) or "a_only" (only A <= 4 kg)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve


def build(workspace: Path, storage: str, integer: bool) -> dict:
    values = parameters(workspace)
    cat = "Integer" if integer else "Continuous"
    a, b = pulp.LpVariable("A", lowBound=0, cat=cat), pulp.LpVariable("B", lowBound=0, cat=cat)
    prob = pulp.LpProblem("item89", pulp.LpMaximize)
    prob += number(values, "profit_per_kg_product_A") * a + number(values, "profit_per_kg_product_B") * b
    prob += number(values, "hours_per_kg_product_A") * a + number(values, "hours_per_kg_product_B") * b <= number(
        values, "max_production_hours_per_week"
    )
    prob += b >= number(values, "min_output_ratio_product_B_to_A") * a
    ratio, cap = number(values, "storage_space_ratio_product_A_to_B"), number(values, "max_storage_product_A")
    if storage == "shared":
        prob += ratio * a + b <= ratio * cap
    else:
        prob += a <= cap
    return solve(prob)
