"""Item 45's model, shared by its readings: products A, B, C within technical preparation, labour
and material hours; the profit per unit depends on the sales volume through the tiers of
table_1 (`lo_hi` ranges, `Above_lo`). `scheme`: "incremental" (a tier's profit for the units in
that tier only) or "all_units" (the tier the whole volume falls in sets the profit of every unit;
a volume on a boundary belongs to the lower tier)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def tiers(workspace: Path) -> dict[str, list[tuple[float, float | None, float]]]:
    out: dict[str, list[tuple[float, float | None, float]]] = {}
    for row in table(workspace, "table_1"):
        product = row["Product"].removeprefix("Product_")
        span = row["Sales_Volume_Range"]
        if span.startswith("Above_"):
            lo, hi = float(span.removeprefix("Above_")), None
        else:
            lo_text, hi_text = span.split("_")
            lo, hi = float(lo_text), float(hi_text)
        out.setdefault(product, []).append((lo, hi, float(row["Profit"])))
    return out


def build(workspace: Path, scheme: str, integer: bool) -> dict:
    values = parameters(workspace)
    by_product = tiers(workspace)
    cat = "Integer" if integer else "Continuous"
    prob = pulp.LpProblem("item45", pulp.LpMaximize)
    x = {p: pulp.LpVariable(f"x_{p}", lowBound=0, cat=cat) for p in by_product}
    big = number(values, "available_labor_time")
    profit = []
    for p, rows in by_product.items():
        if scheme == "incremental":
            parts = []
            for k, (lo, hi, unit) in enumerate(rows):
                part = pulp.LpVariable(f"u_{p}_{k}", lowBound=0, upBound=None if hi is None else hi - lo)
                parts.append(part)
                profit.append(unit * part)
            prob += x[p] == pulp.lpSum(parts)  # profits fall with volume: the LP fills tiers in order
        else:
            picks, amounts = [], []
            for k, (lo, hi, unit) in enumerate(rows):
                pick = pulp.LpVariable(f"z_{p}_{k}", cat="Binary")
                amount = pulp.LpVariable(f"v_{p}_{k}", lowBound=0, cat=cat)
                low = lo + (1 if integer and k else 1e-6 if k else 0)  # the boundary belongs below
                prob += amount >= low * pick
                prob += amount <= (big if hi is None else hi) * pick
                picks.append(pick)
                amounts.append(amount)
                profit.append(unit * amount)
            prob += pulp.lpSum(picks) == 1
            prob += x[p] == pulp.lpSum(amounts)
    prob += pulp.lpSum(profit)
    for resource, limit in (
        ("technical_prep_time", "available_technical_prep_time"),
        ("labor_time", "available_labor_time"),
        ("materials", "available_materials"),
    ):
        prob += pulp.lpSum(number(values, f"{resource}_{p}") * x[p] for p in by_product) <= number(values, limit)
    return solve(prob)
