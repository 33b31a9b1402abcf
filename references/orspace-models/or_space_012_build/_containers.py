"""Item 12's model: six container types; a type's demand may be met by its own production or by
any type of equal or larger volume; every type produced pays the fixed setup cost; minimise
variable plus setup cost. `integer`: whole containers."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, integer: bool) -> dict:
    v = parameters(workspace)
    rows = {r["Container_Type_Code"]: r for r in table(workspace, "table_1")}
    volume = {t: float(r["Volume_cm3"]) for t, r in rows.items()}
    pairs = [(i, j) for i in rows for j in rows if volume[j] >= volume[i]]  # demand i met by type j
    cat = "Integer" if integer else "Continuous"
    use = {p: pulp.LpVariable(f"u_{p[0]}_{p[1]}", lowBound=0, cat=cat) for p in pairs}
    setup = {t: pulp.LpVariable(f"s_{t}", cat="Binary") for t in rows}
    total = sum(float(r["Market_Demand_units"]) for r in rows.values())
    made = {j: pulp.lpSum(use[i, k] for i, k in pairs if k == j) for j in rows}
    prob = pulp.LpProblem("item12", pulp.LpMinimize)
    cost = pulp.lpSum(float(r["Unit_Variable_Production_Cost_Yuan_per_unit"]) * made[t] for t, r in rows.items())
    prob += cost + number(v, "fixed_setup_cost") * pulp.lpSum(setup.values())
    for i, r in rows.items():
        prob += pulp.lpSum(use[i, j] for k, j in pairs if k == i) >= float(r["Market_Demand_units"])
    for j in rows:
        prob += made[j] <= total * setup[j]
    return solve(prob)
