"""Item 6's model, shared by its readings: quarterly production of I, II and III within the
production hours (I not in quarter 2); a quarter's contract that is not delivered on time is
delivered later at the delay compensation per unit per quarter; units produced but not delivered
are held at the inventory cost per unit per quarter; nothing owed after quarter 4, and the
required stock of each product at its end; minimise compensation plus inventory cost.
`charge_final_stock`: whether the stock held at the end of quarter 4 (the required 150 of each) is
charged a quarter's inventory cost too."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table

PRODUCTS = ("I", "II", "III")


def build(workspace: Path, charge_final_stock: bool) -> dict:
    v = parameters(workspace)
    rows = {r["Product"]: r for r in table(workspace, "table_1")}
    quarters = [int(k) for k in rows["I"] if k.isdigit()]
    make = {(p, q): pulp.LpVariable(f"make_{p}_{q}", lowBound=0) for p in PRODUCTS for q in quarters}
    held = {(p, q): pulp.LpVariable(f"held_{p}_{q}", lowBound=0) for p in PRODUCTS for q in quarters}
    owed = {(p, q): pulp.LpVariable(f"owed_{p}_{q}", lowBound=0) for p in PRODUCTS for q in quarters}
    last = quarters[-1]
    prob = pulp.LpProblem("item6", pulp.LpMinimize)
    prob += pulp.lpSum(
        number(v, f"delay_penalty_product_{p}") * owed[p, q]
        + (number(v, "inventory_cost_per_unit") * held[p, q] if charge_final_stock or q != last else 0)
        for p in PRODUCTS
        for q in quarters
    )
    for q in quarters:
        prob += pulp.lpSum(number(v, f"product_{p}_hours_per_unit") * make[p, q] for p in PRODUCTS) <= number(
            v, "production_hours_per_quarter"
        )
        for p in PRODUCTS:
            before = held[p, q - 1] - owed[p, q - 1] if q != quarters[0] else number(v, "initial_inventory")
            prob += held[p, q] - owed[p, q] == before + make[p, q] - float(rows[p][str(q)])
    prob += make["I", 2] == number(v, "product_I_no_production_q2")
    for p in PRODUCTS:
        prob += owed[p, last] == 0
        prob += held[p, last] >= number(v, "end_inventory_requirement")
    return solve(prob)
