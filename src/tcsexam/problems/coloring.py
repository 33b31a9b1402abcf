"""Graph colouring on DIMACS `.col` files: `c` comments, `p edge <n> <m>`, `m` lines `e <u> <v>`.

The Stanford GraphBase graphs list every edge in both directions; edges are deduplicated after
parsing (the `p` line's m counts `e` lines, as in the files). Self-loops are rejected.

Certificate: one colour per vertex (any non-negative integers), whitespace separated, optionally a
`value <colours>` line (see `_common`). Value: the number of distinct colours (minimize); any edge
whose ends share a colour is `certificate_failed`. Reward: chromatic / value when the task gives
`chromatic`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tcsexam.errors import InputError
from tcsexam.problems import _common as c
from tcsexam.problems import _twin as tw
from tcsexam.problems.base import Direction
from tcsexam.problems.maxcut import translate as _translate_vector
from tcsexam.problems.solver_base import InstanceFile, VectorProblem

_COMMENT = re.compile(rb"(?m)^[ \t]*c(?:[ \t][^\n]*)?\r?$")
_HEADER = re.compile(rb"(?m)^[ \t]*p[ \t]+(?:edge|col|edges)[ \t]+(\S+)[ \t]+(\S+)[^\n]*$")


@dataclass(frozen=True, eq=False)
class ColoringInstance:
    n: int
    m_lines: int  #: edge lines in the file
    u: np.ndarray  #: 0-based endpoints of the distinct undirected edges, u < v
    v: np.ndarray
    path: Path | None = None

    @property
    def m(self) -> int:
        return int(self.u.size)


def parse_col_bytes(data: bytes, path: Path | str = "<col>") -> ColoringInstance:
    text = _COMMENT.sub(b"", data)
    match = _HEADER.search(text)
    if not match:
        raise InputError(f"{path}: no 'p edge <vertices> <edges>' line")
    header_line = text[: match.start()].count(b"\n") + 1
    counts = c.ints_or_none([match.group(1), match.group(2)])
    if counts is None or counts[0] < 1 or counts[1] < 0:
        raise InputError(f"{path}: line {header_line}: 'p edge' needs two non-negative integers")
    n, m = int(counts[0]), int(counts[1])
    if n >= 2**31:
        raise InputError(f"{path}: line {header_line}: {n} vertices is more than supported (2^31)")
    if text[: match.start()].strip():
        raise InputError(f"{path}: lines before the 'p edge' line that are not comments")
    body = text[match.end() :]
    tokens = body.split()
    if len(tokens) % 3 or tokens[0::3].count(b"e") != len(tokens) // 3:
        bad = next((k for k in range(0, len(tokens), 3) if tokens[k] != b"e"), len(tokens) // 3 * 3)
        line = header_line + c.line_of_token(body, bad) - 1
        raise InputError(f"{path}: line {line}: expected 'e <u> <v>'")
    if len(tokens) // 3 != m:
        raise InputError(f"{path}: 'p edge' says {m} edges but the file has {len(tokens) // 3} 'e' lines")
    ends_tokens = tokens[1::3] + tokens[2::3]
    ends = c.ints_or_none(ends_tokens)
    if ends is None:
        i = c.first_bad_int(ends_tokens)
        k = i if i < m else i - m
        line = header_line + c.line_of_token(body, 3 * k) - 1
        raise InputError(f"{path}: line {line}: vertex {c.show(ends_tokens[i])} is not an integer")
    a, b = ends[:m] - 1, ends[m:] - 1
    bad = (a < 0) | (a >= n) | (b < 0) | (b >= n) | (a == b)
    if bad.any():
        k = int(np.argmax(bad))
        line = header_line + c.line_of_token(body, 3 * k) - 1
        what = "self-loop" if a[k] == b[k] else f"vertex outside 1..{n}"
        raise InputError(f"{path}: line {line}: {what}")
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keys = np.unique(lo * n + hi)
    return ColoringInstance(n, m, keys // n, keys % n, Path(str(path)))


def conflicts(inst: ColoringInstance, colours: np.ndarray) -> np.ndarray:
    """Indices of the distinct edges whose two ends share a colour."""
    return np.flatnonzero(colours[inst.u] == colours[inst.v])


def twin(inst: ColoringInstance, rng: np.random.Generator, name: str = "") -> tw.Twin:
    """The graph with its vertices relabelled (vertex i becomes perm[i]), its distinct edges in a
    shuffled order with their ends in random order, no comment. A proper colouring stays proper
    under a relabelling with the same number of colours, so the chromatic number is kept.
    Map: {"perm": perm} (0-based)."""
    perm = rng.permutation(inst.n)
    order = rng.permutation(inst.m)
    a, b = perm[inst.u[order]] + 1, perm[inst.v[order]] + 1
    swap = rng.random(inst.m) < 0.5
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    flat = np.empty(2 * inst.m, dtype=object)
    flat[0::2], flat[1::2] = a.tolist(), b.tolist()
    body = ("e %d %d\n" * inst.m) % tuple(flat.tolist())
    return tw.Twin(f"p edge {inst.n} {inst.m}\n" + body, {"perm": tw.perm_list(perm)})


def translate(mapping: dict, certificate: bytes) -> bytes:
    """A colouring of the twin as one of the original: colour[i] = twin_colour[perm[i]]."""
    return _translate_vector(mapping, certificate)


class Coloring(VectorProblem[ColoringInstance]):
    direction = Direction.MINIMIZE
    instance_file = InstanceFile("DIMACS colouring", ".col", parse_col_bytes)
    certificate_format = "one non-negative colour per vertex in vertex order; optional 'value <k>' line"
    best_known = ("chromatic", "best_known")
    entry = "colour"

    def vector_value(self, instance: ColoringInstance, colours: np.ndarray, claimed: float | None) -> float:
        if colours.size != instance.n:
            raise c.failed(f"certificate has {colours.size} colours, the graph has {instance.n} vertices", claimed)
        neg = colours < 0
        if neg.any():
            k = int(np.argmax(neg))
            raise c.failed(f"vertex {k + 1} has negative colour {int(colours[k])}", claimed)
        clash = conflicts(instance, colours)
        if clash.size:
            e = int(clash[0])
            u, v = int(instance.u[e]) + 1, int(instance.v[e]) + 1
            raise c.failed(
                f"{clash.size} conflicting edge(s), first {u}-{v} both colour {int(colours[u - 1])}", claimed
            )
        return float(np.unique(colours).size)

    def describe(self, value: float) -> str:
        return f"{c.fmt(value)} colours"

    def make_twin(self, instance: ColoringInstance, rng: np.random.Generator, name: str = "") -> tw.Twin:
        return twin(instance, rng, name)

    def translate_certificate(self, mapping: dict, certificate: bytes) -> bytes:
        return translate(mapping, certificate)

    def generate(self, rng: np.random.Generator, size: int) -> str:
        """A G(n, p) random graph with n = size and p = 0.1 (at least one edge)."""
        n = max(2, int(size))
        iu, ju = np.triu_indices(n, 1)
        keep = rng.random(iu.size) < 0.1
        if not keep.any():
            keep[0] = True
        lines = [f"c G({n}, 0.1) random graph (tcsexam generate)", f"p edge {n} {int(keep.sum())}"]
        lines += [f"e {a + 1} {b + 1}" for a, b in zip(iu[keep].tolist(), ju[keep].tolist())]
        return "\n".join(lines) + "\n"
