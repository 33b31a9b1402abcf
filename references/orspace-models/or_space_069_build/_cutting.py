"""Item 69's cutting-stock model, shared by its readings: every way (pattern) of cutting one raw bar
into 3 m and 4 m pieces; enough bars cut to get the batch's pieces. `measure`: what is minimised
and reported: "waste_with_surplus" (metres of raw bar not in a demanded piece: bars x length minus
the demanded metres), "trim_only" (offcuts of the patterns only, surplus pieces not waste) or
"bars" (the number of raw bars)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve


def build(workspace: Path, measure: str) -> dict:
    values = parameters(workspace)
    length = number(values, "raw_bar_length")
    demand = {3: number(values, "batch_3m_quantity"), 4: number(values, "batch_4m_quantity")}
    patterns = [
        (a, b) for a in range(int(length // 3) + 1) for b in range(int(length // 4) + 1) if 0 < 3 * a + 4 * b <= length
    ]
    prob = pulp.LpProblem("item69", pulp.LpMinimize)
    x = {p: pulp.LpVariable(f"x_{p[0]}_{p[1]}", lowBound=0, cat="Integer") for p in patterns}
    bars = pulp.lpSum(x.values())
    if measure == "bars":
        prob += bars
    elif measure == "trim_only":
        prob += pulp.lpSum((length - 3 * a - 4 * b) * x[a, b] for a, b in patterns)
    else:
        prob += length * bars - sum(size * count for size, count in demand.items())
    prob += pulp.lpSum(a * x[a, b] for a, b in patterns) >= demand[3]
    prob += pulp.lpSum(b * x[a, b] for a, b in patterns) >= demand[4]
    return solve(prob)
