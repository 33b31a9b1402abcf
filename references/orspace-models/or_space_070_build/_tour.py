"""Item 70's TSP: a tour through every city of table_1's distance matrix (MTZ subtour
elimination), minimise its length. `transpose`: read the matrix column -> row."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import solve, table


def build(workspace: Path, transpose: bool) -> dict:
    rows = table(workspace, "table_1")
    cities = [r["City"] for r in rows]
    dist = {(r["City"], c): float(r[c]) for r in rows for c in cities}
    if transpose:
        dist = {(i, j): dist[j, i] for i, j in dist}
    arcs = [(i, j) for i in cities for j in cities if i != j]
    prob = pulp.LpProblem("item70", pulp.LpMinimize)
    x = {a: pulp.LpVariable(f"x_{a[0]}_{a[1]}", cat="Binary") for a in arcs}
    order = {c: pulp.LpVariable(f"u_{c}", lowBound=1, upBound=len(cities) - 1) for c in cities[1:]}
    prob += pulp.lpSum(dist[a] * x[a] for a in arcs)
    for c in cities:
        prob += pulp.lpSum(x[c, j] for j in cities if j != c) == 1
        prob += pulp.lpSum(x[i, c] for i in cities if i != c) == 1
    for i, j in arcs:
        if i in order and j in order:
            prob += order[i] - order[j] + len(cities) * x[i, j] <= len(cities) - 1
    return solve(prob)
