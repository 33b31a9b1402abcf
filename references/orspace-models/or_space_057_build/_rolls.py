"""Item 57's model: every way (pattern) of cutting a standard roll's width into order widths; a
pattern runs for some length (rolls spliced, so lengths are continuous); each order's length is
met; `waste`: "trim" (the patterns' unused width x length) or "with_surplus" (roll area minus the
ordered area: surplus strips count as waste)."""

import itertools
from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, waste: str) -> dict:
    v = parameters(workspace)
    orders = {
        r["Order_Number"]: (float(r["Width_meters"]), float(r["Length_meters"])) for r in table(workspace, "table_1")
    }
    rolls = [number(v, "standard_width_1"), number(v, "standard_width_2")]
    patterns = []
    for roll in rolls:
        most = {o: int(roll // w + 1e-9) for o, (w, _) in orders.items()}
        for counts in itertools.product(*(range(most[o] + 1) for o in orders)):
            used = sum(c * orders[o][0] for c, o in zip(counts, orders, strict=True))
            if 0 < used <= roll + 1e-9:
                patterns.append((roll, dict(zip(orders, counts, strict=True)), roll - used))
    y = [pulp.LpVariable(f"y_{k}", lowBound=0) for k in range(len(patterns))]
    prob = pulp.LpProblem("item57", pulp.LpMinimize)
    if waste == "trim":
        prob += pulp.lpSum(p[2] * y[k] for k, p in enumerate(patterns))
    else:
        ordered = sum(w * length for w, length in orders.values())
        prob += pulp.lpSum(p[0] * y[k] for k, p in enumerate(patterns)) - ordered
    for o, (_, length) in orders.items():
        prob += pulp.lpSum(p[1][o] * y[k] for k, p in enumerate(patterns)) >= length
    return solve(prob)
