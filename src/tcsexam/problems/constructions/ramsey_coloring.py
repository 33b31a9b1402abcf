"""Two-colourings of K_n without a monochromatic K_s (`ramsey_coloring`, maximize n): a colouring
on n vertices proves R(s, s) > n.

Certificate: a line `n`, then n lines of n characters 0/1 (spaces between them allowed), row i
giving the colour of edge ij. Value: n. `invalid`: a first line that is not an integer, or a
character other than a digit and a space. `certificate_failed`: n < 1, another number of rows or
columns, a digit other than 0/1, a non-zero diagonal, an asymmetric matrix, or a monochromatic
K_s (the message names its vertices, 1-based).

The check is exact and vectorised with bitsets: every vertex's neighbourhood in a colour is a row
of uint64 words; the (s-2)-cliques are extended one vertex at a time (each clique keeps the
common neighbourhood of its vertices above its largest one), and a K_s exists iff some
(s-2)-clique's candidate set contains an edge. K_42 with s = 5 visits every 5-subset's prefix
once instead of the 850,668 subsets one by one.
"""

from __future__ import annotations

import numpy as np

from tcsexam.problems._common import failed, invalid, show
from tcsexam.problems.base import Direction
from tcsexam.problems.constructions._base import INT_TOKEN, SLACK_BYTES, ConstructionProblem, Params, content_lines

MAX_VERTICES = 2048
CLIQUES_PER_BLOCK = 1 << 18  #: new cliques one extension of a block may make, about


class RamseyColoring(ConstructionProblem):
    direction = Direction.MAXIMIZE
    certificate_format = "n, then the n x n symmetric 0/1 colour matrix with a zero diagonal"
    parameter_ranges = {"clique": (3, 12)}

    def max_bytes(self, params: Params) -> int:
        return SLACK_BYTES + 4 * 512 * 512  # n up to about 512 with spaces, 1024 without

    def verify(self, params: Params, data: bytes) -> float:
        matrix = read_matrix(data)
        n = matrix.shape[0]
        s = params["clique"]
        for colour in (0, 1):
            adj = matrix == colour
            np.fill_diagonal(adj, False)
            clique = find_clique(adj, s)
            if clique is not None:
                where = " ".join(str(v + 1) for v in clique)
                raise failed(f"colour {colour} contains a K{s} on vertices {where}")
        return float(n)


def read_matrix(data: bytes) -> np.ndarray:
    lines = content_lines(data)
    number, head = lines[0]
    if not INT_TOKEN.match(head):
        raise invalid(f"line {number}: the first line must be the number of vertices, not {show(head)}")
    rows = lines[1:]
    body = b"".join(line.replace(b" ", b"").replace(b"\t", b"") for _, line in rows)
    flat = np.frombuffer(body, dtype=np.uint8)
    lengths = np.array([len(line.replace(b" ", b"").replace(b"\t", b"")) for _, line in rows], dtype=np.int64)
    nondigit = (flat < 48) | (flat > 57)
    if nondigit.any():  # text is unparsable (`invalid`) whatever the counts say
        k = int(np.searchsorted(np.cumsum(lengths), int(np.argmax(nondigit)), side="right"))
        raise invalid(f"line {rows[k][0]}: a colour must be 0 or 1, not {show(rows[k][1])}")
    n = int(head) if len(head.lstrip(b"+-").lstrip(b"0")) <= 6 else MAX_VERTICES + 1
    if not 1 <= n <= MAX_VERTICES:
        raise failed(f"line {number}: n = {show(head)} is outside [1, {MAX_VERTICES}]")
    if len(rows) != n:
        raise failed(f"{len(rows)} matrix rows, expected n = {n}")
    bad = np.flatnonzero(lengths != n)
    if bad.size:
        k = int(bad[0])
        raise failed(f"line {rows[k][0]}: {int(lengths[k])} colours, expected n = {n}")
    m = (flat - 48).reshape(n, n)
    if (m > 1).any():
        i, j = np.argwhere(m > 1)[0]
        raise failed(f"line {rows[i][0]}: colour {int(m[i, j])} of edge {i + 1}-{j + 1} is not 0 or 1")
    if np.diagonal(m).any():
        i = int(np.argmax(np.diagonal(m) != 0))
        raise failed(f"line {rows[i][0]}: diagonal entry {i + 1} must be 0")
    if not np.array_equal(m, m.T):
        i, j = np.argwhere(m != m.T)[0]
        raise failed(
            f"the matrix is not symmetric: entry {i + 1},{j + 1} is {m[i, j]}, entry {j + 1},{i + 1} is {m[j, i]}"
        )
    return m


def _bitsets(adj: np.ndarray) -> np.ndarray:
    """(n, words) uint64 rows: bit v of row u set iff u-v is an edge."""
    n = adj.shape[0]
    words = (n + 63) // 64
    padded = np.zeros((n, words * 64), dtype=bool)
    padded[:, :n] = adj
    return np.packbits(padded.reshape(n, words, 64), axis=2, bitorder="little").view(np.uint64).reshape(n, words)


def find_clique(adj: np.ndarray, s: int) -> list[int] | None:
    """The vertices (increasing) of a K_s of the graph `adj` (bool, symmetric, no loops), or None.

    Depth first over blocks of cliques, so memory stays bounded and the search stops at the first
    K_s: the cliques of size 1 (every vertex, its candidates the neighbours above it) are extended
    s - 2 times; an (s-1)-clique with a candidate left is a K_s."""
    n = adj.shape[0]
    if s > n:
        return None
    nbr = _bitsets(adj)
    above = _bitsets(np.triu(np.ones((n, n), dtype=bool), 1))  # bit v of row u set iff v > u
    return _search(np.arange(n, dtype=np.int64)[:, None], nbr & above, s - 2, nbr, above)


def _search(cliques: np.ndarray, cand: np.ndarray, depth: int, nbr: np.ndarray, above: np.ndarray) -> list[int] | None:
    n = nbr.shape[0]
    step = max(1, CLIQUES_PER_BLOCK // n) if depth else cliques.shape[0]
    for start in range(0, cliques.shape[0], step):
        c, q = cliques[start : start + step], cand[start : start + step]
        if depth == 0:
            hit = np.flatnonzero(q.any(axis=1))
            if hit.size:
                k = int(hit[0])
                return [*c[k].tolist(), _lowest_bit(q[k])]
            continue
        nc, nq = _extend(c, q, nbr, above)
        if nc.shape[0]:
            found = _search(nc, nq, depth - 1, nbr, above)
            if found is not None:
                return found
    return None


def _extend(cliques, cand, nbr, above):
    """Every clique of one more vertex: each old clique with each vertex of its candidates."""
    n, words = nbr.shape
    bits = np.unpackbits(cand.view(np.uint8).reshape(cand.shape[0], words * 8), axis=1, bitorder="little")[:, :n]
    which, v = np.nonzero(bits)
    new_cliques = np.concatenate([cliques[which], v[:, None]], axis=1)
    new_cand = cand[which] & nbr[v] & above[v]
    return new_cliques, new_cand


def _lowest_bit(words: np.ndarray) -> int:
    word: int
    for w, word in enumerate(words.tolist()):
        if word:
            return w * 64 + (word & -word).bit_length() - 1
    raise ValueError("no bit set")
