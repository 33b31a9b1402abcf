"""Item 34's model, shared by its readings: every unit of every good is loaded into some container;
a used container carries at most the maximum weight, at least the minimum weight and at least the
minimum number of D goods; minimise the number of containers used. Containers are numbered and
used in order (no two plans that differ only by renumbering); there are at most as many containers
as the D goods allow (each needs the minimum of D). The A/C rule reads two ways: `per_unit` (a
container holds at least `min_c_per_a` units of C for every unit of A) or per container (a
container holding any A holds at least `min_c_per_a` units of C)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, per_unit: bool) -> dict:
    v = parameters(workspace)
    rows = {r["Goods_Type"]: r for r in table(workspace, "table_1")}
    qty = {g: float(r["Quantity"]) for g, r in rows.items()}
    weight = {g: float(r["Weight_per_Unit"]) for g, r in rows.items()}
    d_min = number(v, "min_d_goods_per_container")
    n = int(qty["D"] // d_min) if d_min else int(sum(qty.values()))
    ks = range(n)
    load = {(g, k): pulp.LpVariable(f"n_{g}_{k}", lowBound=0, cat="Integer") for g in rows for k in ks}
    used = [pulp.LpVariable(f"used_{k}", cat="Binary") for k in ks]
    prob = pulp.LpProblem("item34", pulp.LpMinimize)
    prob += pulp.lpSum(used)
    for g in rows:
        prob += pulp.lpSum(load[g, k] for k in ks) == qty[g]
    ratio = number(v, "min_c_per_a")
    for k in ks:
        tons = pulp.lpSum(weight[g] * load[g, k] for g in rows)
        prob += tons <= number(v, "max_container_capacity") * used[k]
        prob += tons >= number(v, "min_container_load") * used[k]
        prob += load["D", k] >= d_min * used[k]
        if per_unit:
            prob += load["C", k] >= ratio * load["A", k]
        else:
            has_a = pulp.LpVariable(f"has_a_{k}", cat="Binary")
            prob += load["A", k] <= qty["A"] * has_a
            prob += load["C", k] >= ratio * has_a
        if k:
            prob += used[k] <= used[k - 1]
    return solve(prob)
