"""Item 35: every batch passes the vats in order (vat 1, 2, 3), one batch at a time per vat, the
same batch order on every vat (a permutation flow shop); minimise the completion time of the last
batch. Solved by exhaustive search over the batch orders (the optimum over all orders is proven)."""

import itertools
from pathlib import Path

from tcsexam.orspace.refmodel import main, optimum, table

READING = "permutation flow shop: vats in order, same batch order on every vat; minimise the makespan"


def makespan(order: tuple[list[float], ...]) -> float:
    done = [0.0] * len(order[0])
    for times in order:
        for k, t in enumerate(times):
            done[k] = max(done[k], done[k - 1] if k else 0.0) + t
    return done[-1]


def build(workspace: Path) -> dict:
    rows = table(workspace, "table_1")
    vats = [c for c in rows[0] if c.startswith("Vat_")]
    jobs = [[float(r[v]) for v in vats] for r in rows]
    return optimum(min(makespan(p) for p in itertools.permutations(jobs)), "enumeration")


if __name__ == "__main__":
    main(build)
