"""Item 100: a simple path (no repeated node) from A to E through C along links of positive
bandwidth (table_1, row node -> column node); the path's bandwidth is its smallest link; maximise
it. Solved by exhaustive search over the simple paths."""

import itertools
from pathlib import Path

from tcsexam.orspace.refmodel import main, optimum, table

READING = "simple A -> E path through C on directed links (row -> column); bandwidth = the smallest link"


def build(workspace: Path) -> dict:
    rows = table(workspace, "table_1")
    nodes = [r["Node"] for r in rows]
    band = {(r["Node"], n): float(r[n]) for r in rows for n in nodes}
    inner = [n for n in nodes if n not in ("A", "E")]
    best = 0.0
    for k in range(len(inner) + 1):
        for middle in itertools.permutations(inner, k):
            if "C" not in middle:
                continue
            path = ("A", *middle, "E")
            links = [band[a, b] for a, b in itertools.pairwise(path)]
            if all(w > 0 for w in links):
                best = max(best, min(links))
    return optimum(best, "enumeration")


if __name__ == "__main__":
    main(build)
