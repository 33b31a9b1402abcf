"""Item 99: a whole number of spares (0 to the table's largest) for each component; their cost
within the budget and their weight within the limit; system reliability = the product of the
components' reliabilities at their spare counts; maximise it (exhaustive search)."""

import itertools
from pathlib import Path

from tcsexam.orspace.refmodel import main, number, optimum, parameters, table

READING = "whole spares per component within budget and weight, maximise the product of reliabilities"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = table(workspace, "table_1")
    comps = sorted(int(k.split("_")[1]) for k in rows[0] if k.startswith("Component_") and k.endswith("_Reliability"))
    rel = {(c, int(r["Number_of_Spares"])): float(r[f"Component_{c}_Reliability"]) for r in rows for c in comps}
    counts = sorted({int(r["Number_of_Spares"]) for r in rows})
    best = 0.0
    for plan in itertools.product(counts, repeat=len(comps)):
        cost = sum(number(v, f"unit_price_component_{c}") * k for c, k in zip(comps, plan, strict=True))
        weight = sum(number(v, f"unit_weight_component_{c}") * k for c, k in zip(comps, plan, strict=True))
        if cost <= number(v, "total_budget") and weight <= number(v, "weight_limit"):
            value = 1.0
            for c, k in zip(comps, plan, strict=True):
                value *= rel[c, k]
            best = max(best, value)
    return optimum(best, "enumeration")


if __name__ == "__main__":
    main(build)
