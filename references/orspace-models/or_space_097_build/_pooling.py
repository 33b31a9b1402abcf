"""Item 97's pooling model, shared by its readings: the materials named in `pooled` are first mixed
in one pool (whose sulphur level q is the flow-weighted mean of its inputs), then the pool's output
and the other materials are blended into products A and B, each within its sulphur limit and its
market demand; D within its supply; the general parameters' one selling price for both products;
maximise revenue minus material cost. The pool's bilinear balance is solved exactly for each q of a
grid (step `step` % sulphur over the pooled materials' range): for a fixed q the model is an LP;
the answer is the best LP over the grid (the grid holds the pure-material levels, where this
instance's optimum lies: product B cannot be made at a profit at this price)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def _lp(values, mats, pooled, q: float) -> dict:
    direct = [m for m in mats if m not in pooled]
    products = {"A": ("max_sulfur_content_A", "market_demand_A"), "B": ("max_sulfur_content_B", "market_demand_B")}
    price = number(values, "selling_price_A_B")
    prob = pulp.LpProblem("item97", pulp.LpMaximize)
    into_pool = {m: pulp.LpVariable(f"in_{m}", lowBound=0) for m in pooled}
    from_pool = {k: pulp.LpVariable(f"pool_{k}", lowBound=0) for k in products}
    blend = {(m, k): pulp.LpVariable(f"x_{m}_{k}", lowBound=0) for m in direct for k in products}
    bought = {m: into_pool[m] if m in pooled else pulp.lpSum(blend[m, k] for k in products) for m in mats}
    made = {k: from_pool[k] + pulp.lpSum(blend[m, k] for m in direct) for k in products}
    prob += price * pulp.lpSum(made.values()) - pulp.lpSum(mats[m][1] * bought[m] for m in mats)
    prob += pulp.lpSum(into_pool.values()) == pulp.lpSum(from_pool.values())
    prob += pulp.lpSum(mats[m][0] * into_pool[m] for m in pooled) == q * pulp.lpSum(into_pool.values())
    for k, (limit, demand) in products.items():
        sulphur = q * from_pool[k] + pulp.lpSum(mats[m][0] * blend[m, k] for m in direct)
        prob += sulphur <= number(values, limit) * made[k]
        prob += made[k] <= number(values, demand)
    prob += bought["D"] <= number(values, "max_supply_D")
    return solve(prob)


def build(workspace: Path, pooled: tuple[str, ...], step: float = 0.01) -> dict:
    values = parameters(workspace)
    mats = {
        r["Material"]: (float(r["Sulfur_Content_Percentage"]), float(r["Purchase_Price_Thousand_Yuan_Per_Ton"]))
        for r in table(workspace, "table_1")
    }
    levels = [mats[m][0] for m in pooled]
    low, high = min(levels), max(levels)
    grid = sorted({round(low + i * step, 6) for i in range(int(round((high - low) / step)) + 1)} | set(levels))
    best = None
    for q in grid:
        result = _lp(values, mats, pooled, q)
        if result["status"] != "Optimal":
            return result  # a fixed-q LP is always feasible (nothing made): anything else is a solver failure
        if best is None or result["objective"] > best["objective"]:
            best = result
    return best
