"""MaxCut on MQLib/rudy files: `n m`, then `m` lines `i j w` (1-indexed, any finite weight).

Certificate: one side (0 or 1) per vertex, whitespace separated, in vertex order, optionally with a
`value <cut>` line claiming the cut weight (see `_common`). Value: the weight of the edges whose
endpoints lie on different sides (maximize). Reward: value / best_known when the task gives one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tcsexam.errors import InputError
from tcsexam.problems import _common as c
from tcsexam.problems import _twin as tw
from tcsexam.problems.base import Direction
from tcsexam.problems.solver_base import InstanceFile, VectorProblem


@dataclass(frozen=True, eq=False)
class MaxCutInstance:
    n: int
    m: int
    u: np.ndarray  #: 0-based endpoints, int64
    v: np.ndarray
    w: np.ndarray  #: int64 when every weight is an integer, else float64
    path: Path | None = None

    @property
    def integral(self) -> bool:
        return self.w.dtype.kind == "i"


def _fast_parse(data: bytes, path) -> MaxCutInstance | None:
    """The common case (integer weights, well-formed) without a token list; None otherwise."""
    arr = c.fast_ints(data)
    if arr is None or arr.size < 2:
        return None
    n, m = int(arr[0]), int(arr[1])
    if n < 1 or m < 0 or arr.size != 2 + 3 * m or len(data.split(b"\n", 1)[0].split()) != 2:
        return None
    edges = arr[2:].reshape(m, 3)
    u, v = edges[:, 0] - 1, edges[:, 1] - 1
    if m and (min(u.min(), v.min()) < 0 or max(u.max(), v.max()) >= n or (u == v).any()):
        return None
    return MaxCutInstance(n, m, u.astype(np.int32), v.astype(np.int32), edges[:, 2].copy(), Path(path))


def parse_maxcut_bytes(data: bytes, path: Path | str = "<maxcut>") -> MaxCutInstance:
    fast = _fast_parse(data, path)
    if fast is not None:
        return fast
    tokens = data.split()
    if len(tokens) < 2:
        raise InputError(f"{path}: line 1: header must be 'n m'")
    header = c.ints_or_none(tokens[:2])
    if header is None or header[0] < 1 or header[1] < 0:
        raise InputError(f"{path}: line 1: header must be two integers 'n m' with n >= 1")
    n, m = int(header[0]), int(header[1])
    first_line = data.split(b"\n", 1)[0].split()
    if len(first_line) != 2:
        raise InputError(f"{path}: line 1: header must be exactly 'n m', found {len(first_line)} fields")
    body = tokens[2:]
    if len(body) != 3 * m:
        got, rest = divmod(len(body), 3)
        extra = f" and {rest} stray field(s)" if rest else ""
        raise InputError(f"{path}: header says {m} edges but the file holds {got} edge lines{extra}")
    if m == 0:
        empty = np.zeros(0, dtype=np.int64)
        return MaxCutInstance(n, 0, empty, empty, empty, Path(path))
    ends_tokens = body[0::3] + body[1::3]
    ends = c.ints_or_none(ends_tokens)
    if ends is None:
        i = c.first_bad_int(ends_tokens)
        k = i if i < m else i - m
        line = c.line_of_token(data, 2 + 3 * k + (0 if i < m else 1))
        raise InputError(f"{path}: line {line}: endpoint {c.show(ends_tokens[i])} is not an integer")
    u, v = ends[:m] - 1, ends[m:] - 1
    bad = (u < 0) | (u >= n) | (v < 0) | (v >= n)
    if bad.any():
        k = int(np.argmax(bad))
        line = c.line_of_token(data, 2 + 3 * k)
        raise InputError(f"{path}: line {line}: endpoint outside 1..{n}")
    loops = u == v
    if loops.any():
        k = int(np.argmax(loops))
        line = c.line_of_token(data, 2 + 3 * k)
        raise InputError(f"{path}: line {line}: self-loop on vertex {int(u[k]) + 1}")
    wtok = body[2::3]
    w = c.ints_or_none(wtok)
    if w is None:
        w = c.floats_or_none(wtok)
        if w is None:
            k = c.first_bad_float(wtok)
            line = c.line_of_token(data, 2 + 3 * k + 2)
            raise InputError(f"{path}: line {line}: weight {c.show(wtok[k])} is not a finite number")
    return MaxCutInstance(n, m, u.astype(np.int32), v.astype(np.int32), w, Path(path))


def cut_value(inst: MaxCutInstance, side: np.ndarray) -> float:
    """Weight of the edges cut by a 0/1 side vector (vectorised)."""
    s = side.astype(np.uint8)
    crossing = np.take(s, inst.u) ^ np.take(s, inst.v)  # 1 where the edge is cut
    if inst.integral:
        return float(int(np.dot(crossing, inst.w)))  # exact integer arithmetic
    return float(np.dot(crossing.astype(np.float64), inst.w))


def twin(inst: MaxCutInstance, rng: np.random.Generator, name: str = "") -> tw.Twin:
    """The graph with its vertices relabelled (vertex i becomes perm[i]), its edge lines shuffled and
    each edge's two ends in random order; weights kept (integers as integers, floats by their exact
    repr). A cut keeps its weight under any relabelling, so the twin's best cut is the original's.
    Map: {"perm": perm} (0-based)."""
    perm = rng.permutation(inst.n)
    order = rng.permutation(inst.m)
    a, b = perm[inst.u[order]] + 1, perm[inst.v[order]] + 1
    swap = rng.random(inst.m) < 0.5
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    w = inst.w[order]
    flat = np.empty(3 * inst.m, dtype=object)
    flat[0::3], flat[1::3], flat[2::3] = a.tolist(), b.tolist(), tw.numbers(w)
    body = (f"%d %d {tw.number_format(w)}\n" * inst.m) % tuple(flat.tolist())
    return tw.Twin(f"{inst.n} {inst.m}\n" + body, {"perm": tw.perm_list(perm)})


def _vector_text(vector: np.ndarray, claimed: float | None) -> bytes:
    head = f"value {claimed!r}\n" if claimed is not None else ""
    return (head + " ".join(map(str, vector.tolist())) + "\n").encode()


def translate(mapping: dict, certificate: bytes) -> bytes:
    """A side vector on the twin as one on the original: side[i] = twin_side[perm[i]] (the claimed
    value kept). A certificate that cannot be read, or has the wrong length, is returned unchanged
    (the checker then answers it as it would have on the twin)."""
    perm = np.asarray(mapping["perm"], dtype=np.int64)
    try:
        vector, claimed = c.vector_certificate(certificate, len(certificate) + 1, "entry")
    except c.Reject:
        return certificate
    if vector.size != perm.size:
        return certificate
    return _vector_text(vector[perm], claimed)


class MaxCut(VectorProblem[MaxCutInstance]):
    direction = Direction.MAXIMIZE
    instance_file = InstanceFile("MaxCut", ".txt", parse_maxcut_bytes, bytes_per_entry=16)
    certificate_format = "one side (0 or 1) per vertex in vertex order; optional 'value <cut>' line"
    best_known = ("best_known", "optimum")

    def vector_value(self, instance: MaxCutInstance, side: np.ndarray, claimed: float | None) -> float:
        if side.size != instance.n:
            raise c.failed(f"certificate has {side.size} entries, the graph has {instance.n} vertices", claimed)
        bad = (side != 0) & (side != 1)
        if bad.any():
            k = int(np.argmax(bad))
            raise c.failed(f"entry {k + 1} is {int(side[k])}, sides must be 0 or 1", claimed)
        return cut_value(instance, side)

    def describe(self, value: float) -> str:
        return f"cut {c.fmt(value)}"

    def make_twin(self, instance: MaxCutInstance, rng: np.random.Generator, name: str = "") -> tw.Twin:
        return twin(instance, rng, name)

    def translate_certificate(self, mapping: dict, certificate: bytes) -> bytes:
        return translate(mapping, certificate)

    def generate(self, rng: np.random.Generator, size: int) -> str:
        """A random graph on `size` vertices with about 4*size distinct edges, weights +-1."""
        n = max(2, int(size))
        m_target = min(4 * n, n * (n - 1) // 2)
        pairs: set[tuple[int, int]] = set()
        while len(pairs) < m_target:
            need = m_target - len(pairs)
            a = rng.integers(0, n, size=2 * need)
            b = rng.integers(0, n, size=2 * need)
            for x, y in zip(a.tolist(), b.tolist()):
                if x != y:
                    pairs.add((min(x, y), max(x, y)))
                    if len(pairs) == m_target:
                        break
        edges = sorted(pairs)
        weights = rng.choice(np.array([-1, 1]), size=len(edges))
        lines = [f"{n} {len(edges)}"]
        lines += [f"{x + 1} {y + 1} {int(wt)}" for (x, y), wt in zip(edges, weights)]
        return "\n".join(lines) + "\n"
