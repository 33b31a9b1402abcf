"""Item 76's model, shared by its readings: timber bought at the start of a quarter is sold in that
quarter or stored u quarters (cost a + b u per m3) and sold then, all of it by the end of autumn;
sales within each quarter's maximum, stock within the warehouse; maximise profit. Prices and sales
are in 10^4 yuan per 10^4 m3 and 10^4 m3; `scale` is the unit the profit is reported in (1: 10^4
yuan; 10^4: yuan)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, scale: float) -> dict:
    values = parameters(workspace)
    rows = table(workspace, "table_1")
    quarters = range(len(rows))
    buy_price = [float(r["Purchase_Price_10k_yuan_per_10k_m2"]) for r in rows]
    sell_price = [float(r["Sale_Price_10k_yuan_per_10k_m2"]) for r in rows]
    max_sales = [float(r["Estimated_Max_Sales_Volume_10k_m3"]) for r in rows]
    capacity = number(values, "max_storage_capacity") / 1e4  # m3 -> 10^4 m3
    a, b = number(values, "storage_cost_a"), number(values, "storage_cost_b")  # yuan/m3 = 10^4 yuan/10^4 m3
    prob = pulp.LpProblem("item76", pulp.LpMaximize)
    flow = {(t, s): pulp.LpVariable(f"f_{t}_{s}", lowBound=0) for t in quarters for s in quarters if s >= t}
    prob += pulp.lpSum(
        (sell_price[s] - buy_price[t] - ((a + b * (s - t)) if s > t else 0)) * f for (t, s), f in flow.items()
    )
    for s in quarters:
        prob += pulp.lpSum(f for (t, u), f in flow.items() if u == s) <= max_sales[s]
        prob += pulp.lpSum(f for (t, u), f in flow.items() if t <= s < u) <= capacity
    result = solve(prob)
    if result["objective"] is not None:
        result["objective"] *= scale
    return result
