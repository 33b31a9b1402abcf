"""Item 60: a closed tour from location 1 through every location, symmetric distances; minimise its
length (exhaustive search over the orders of the other locations).

`table_1` is an upper triangle whose rows 3 to 6 carry extra leading commas: the `-` of row i does
not sit under column i, so reading cells by header would put distances under the wrong columns
(row 3 has more cells than the header). This reading takes, for each row i, the cells after its
`-` as the distances to locations i+1, i+2, ... in order: each row has exactly as many of them as
locations after it."""

import itertools
from pathlib import Path

from tcsexam.orspace.refmodel import main, number, optimum, parameters

READING = "symmetric TSP from location 1; row i's cells after its '-' are the distances to i+1, i+2, ..."


def distances(workspace: Path, n: int) -> dict[tuple[int, int], float]:
    lines = (Path(workspace) / "data" / "table_1.csv").read_text(encoding="utf-8-sig").splitlines()
    dist: dict[tuple[int, int], float] = {}
    for line in lines[1:]:
        cells = [c.strip() for c in line.split(",")]
        if not cells[0]:
            continue
        i = int(cells[0])
        after = [float(c) for c in cells[cells.index("-") + 1 :] if c]
        if len(after) != n - i:
            raise ValueError(f"table_1 row {i}: {len(after)} distances after '-', expected {n - i}")
        for k, d in enumerate(after, start=i + 1):
            dist[i, k] = dist[k, i] = d
    return dist


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    n = int(number(v, "num_customers"))
    start = int(number(v, "start_location"))
    dist = distances(workspace, n)
    others = [k for k in range(1, n + 1) if k != start]
    best = min(
        sum(dist[a, b] for a, b in itertools.pairwise((start, *order, start)))
        for order in itertools.permutations(others)
    )
    return optimum(best, "enumeration")


if __name__ == "__main__":
    main(build)
