"""Item 82's model: a number of shops of each store type within its minimum and maximum and the
mall's space; the mall's income is the rent percentage of the stores' annual profit. `scheme`:
"each_store" (with k shops of a type, every one of them earns the table's `Profit_k_Stores`) or
"kth_store" (the k-th shop of a type earns `Profit_k_Stores`). Solved by exhaustive search over the
shop counts."""

import itertools
from pathlib import Path

from tcsexam.orspace.refmodel import number, optimum, parameters, table


def build(workspace: Path, scheme: str) -> dict:
    v = parameters(workspace)
    rows = table(workspace, "table_1")
    space, share = number(v, "mall_total_space"), number(v, "rent_percentage") / 100
    options = []
    for r in rows:
        profits = [float(r[f"Profit_{k}_Store" + ("s" if k > 1 else "")]) for k in range(1, int(r["Max"]) + 1)]
        per_count = {}
        for k in range(int(r["Min"]), int(r["Max"]) + 1):
            total = k * profits[k - 1] if k and scheme == "each_store" else sum(profits[:k])
            per_count[k] = (k * float(r["Area_per_Shop_m2"]), total)
        options.append(per_count)
    best = None
    for counts in itertools.product(*(sorted(o) for o in options)):
        area = sum(options[i][k][0] for i, k in enumerate(counts))
        if area <= space:
            value = share * sum(options[i][k][1] for i, k in enumerate(counts))
            best = value if best is None else max(best, value)
    if best is None:
        return {"status": "Infeasible", "objective": None, "solver": "enumeration"}
    return optimum(best, "enumeration")
