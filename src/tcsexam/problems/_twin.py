"""What the problem modules' twins share (`tcsexam twins make`, docs/twins.md).

A twin is an instance rewritten by a transformation that keeps its value exactly (a relabelling of
vertices, cities or variables, polarity flips, exact metric symmetries). Each Solver problem module
has `twin(instance, rng, name) -> Twin` (the new file's text and the map back) and
`translate(mapping, certificate) -> bytes` (a certificate on the twin as one on the original).

Helpers here: a random permutation with its inverse, number formatting that round-trips floats
exactly, and the vectorised writer of clause lines (CNF, WCNF).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcsexam.fileio import JsonObject


@dataclass(frozen=True)
class Twin:
    text: str  #: the twin instance file
    mapping: JsonObject  #: JSON-serialisable; the problem's `translate` reads it


def perm_list(perm: np.ndarray) -> list[int]:
    return [int(x) for x in perm.tolist()]


def inverse(perm: np.ndarray) -> np.ndarray:
    inv = np.empty_like(perm)
    inv[perm] = np.arange(perm.size, dtype=perm.dtype)
    return inv


def number_format(values: np.ndarray) -> str:
    """`%d` for integer values, `%r` (Python's shortest round-trip repr) for any other float."""
    return "%d" if values.dtype.kind in "iu" else "%r"


def numbers(values: np.ndarray) -> list[int | float]:
    """Python ints or floats for %-formatting (numpy scalars would repr as `np.float64(...)`)."""
    out: list[int | float] = values.tolist()
    return out


def clause_text(heads: np.ndarray | None, clause_of: np.ndarray, lits: np.ndarray, count: int) -> str:
    """Clause lines `[head] lit ... 0`, one per clause, clause k's literals being lits[clause_of == k]
    in the order given. `heads` is one string per clause (a weight, `h`) or None. One %-format
    call over the whole text: the format is the concatenation of one `%d ... 0` piece per clause
    (shared per clause length), so no Python loop touches a literal."""
    if count == 0:
        return ""
    lengths = np.bincount(clause_of, minlength=count).tolist() if clause_of.size else [0] * count
    order = np.argsort(clause_of, kind="stable")
    values = lits[order].tolist()
    lead = "%s " if heads is not None else ""
    pieces = {k: lead + "%d " * k + "0\n" for k in set(lengths)}
    fmt = "".join([pieces[k] for k in lengths])
    if heads is None:
        return fmt % tuple(values)
    args: list = []
    at = 0
    for head, k in zip(heads.tolist(), lengths):
        args.append(head)
        args.extend(values[at : at + k])
        at += k
    return fmt % tuple(args)


def within_clause_shuffle(rng: np.random.Generator, new_clause: np.ndarray) -> np.ndarray:
    """An order of the literals: grouped by their clause's new position, shuffled inside a clause."""
    return np.lexsort((rng.random(new_clause.size), new_clause))


def signed_relabel(var: np.ndarray, positive: np.ndarray, perm: np.ndarray, flip: np.ndarray) -> np.ndarray:
    """Literals on 1-based variables `var` (sign from `positive`) rewritten: variable v becomes
    perm[v - 1] + 1 and its polarity is inverted where flip[v - 1]."""
    sign = np.where(positive, 1, -1) * np.where(flip[var - 1], -1, 1)
    out: np.ndarray = sign * (perm[var - 1].astype(np.int64) + 1)
    return out


def literals_back(lits: np.ndarray, mapping: JsonObject) -> np.ndarray:
    """Twin literals (signed, 1-based) as literals of the original (the inverse of `signed_relabel`)."""
    perm = np.asarray(mapping["perm"], dtype=np.int64)
    flip = np.asarray(mapping["flip"], dtype=bool)
    inv = inverse(perm)
    var = np.abs(lits)
    ok = (var >= 1) & (var <= perm.size)
    if not ok.all():
        raise ValueError("literal outside the twin's variables")
    orig = inv[var - 1]
    sign = np.sign(lits) * np.where(flip[orig], -1, 1)
    out: np.ndarray = sign * (orig + 1)
    return out
