"""Item 94's model, shared by its readings: tonnes of crude A and crude B blended into gasoline I and
II, each gasoline with at least its minimum proportion of A; crude A used within its inventory plus
the purchase, crude B within its inventory; the purchase at most the maximum, priced by the three
tiers; maximise gasoline revenue minus the purchase cost (the inventories are already owned).

The tiers read two ways: `incremental` (the first 500 t at tier 1, the next 500 t at tier 2, the
rest at tier 3) or all-units (the whole purchase at the price of the tier its size falls in)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve

BREAKS = (500.0, 1000.0)


def build(workspace: Path, incremental: bool) -> dict:
    v = parameters(workspace)
    price = [number(v, f"market_price_crude_A_tier_{k}") for k in (1, 2, 3)]
    most = number(v, "max_purchase_crude_A")
    bounds = [0.0, *BREAKS, most]
    x = {(c, g): pulp.LpVariable(f"x_{c}_{g}", lowBound=0) for c in "AB" for g in ("I", "II")}
    part = [pulp.LpVariable(f"tier_{k}", lowBound=0) for k in range(3)]
    flag = [pulp.LpVariable(f"flag_{k}", cat="Binary") for k in range(3)]
    prob = pulp.LpProblem("item94", pulp.LpMaximize)
    prob += pulp.lpSum(
        number(v, f"selling_price_type_{g}") * (x["A", g] + x["B", g]) for g in ("I", "II")
    ) - pulp.lpSum(p * q for p, q in zip(price, part, strict=True))
    for g in ("I", "II"):
        share = number(v, f"min_proportion_crude_A_type_{g}") / 100
        prob += x["A", g] >= share * (x["A", g] + x["B", g])
    prob += x["A", "I"] + x["A", "II"] <= number(v, "inventory_crude_A") + pulp.lpSum(part)
    prob += x["B", "I"] + x["B", "II"] <= number(v, "inventory_crude_B")
    for k in range(3):
        width = bounds[k + 1] - bounds[k]
        if incremental:  # flag[k]: tier k is filled, so tier k+1 may start
            prob += part[k] <= width * (flag[k - 1] if k else 1)
            prob += part[k] >= width * flag[k]
        else:  # flag[k]: the whole purchase is in tier k
            prob += part[k] <= bounds[k + 1] * flag[k]
            prob += part[k] >= bounds[k] * flag[k]
    if not incremental:
        prob += pulp.lpSum(flag) <= 1
    return solve(prob)
