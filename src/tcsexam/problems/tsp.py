"""Symmetric TSP on TSPLIB files, with TSPLIB's exact distance functions.

Edge-weight types: EUC_2D (nint), EUC_3D, MAN_2D, MAX_2D, CEIL_2D, ATT (pseudo-Euclidean), GEO
(TSPLIB FAQ: PI = 3.141592, degrees truncated, minutes scaled by 5/3, RRR = 6378.388) and
EXPLICIT with FULL_MATRIX, UPPER_ROW, LOWER_ROW, UPPER_DIAG_ROW, LOWER_DIAG_ROW (and their
column-wise twins, which are the same for a symmetric matrix).

Certificate: a permutation of the cities 1..n, whitespace separated, optionally with a
`value <length>` line (see `_common`); a TSPLIB tour file (`TOUR_SECTION ... -1`) is accepted too.
Value: the closed tour's length (minimize). Reward: optimal / value when the task gives `optimal`.
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
from tcsexam.problems.solver_base import InstanceFile, VectorProblem

COORD_TYPES = {
    "EUC_2D": 2,
    "EUC_3D": 3,
    "MAN_2D": 2,
    "MAN_3D": 3,
    "MAX_2D": 2,
    "MAX_3D": 3,
    "CEIL_2D": 2,
    "ATT": 2,
    "GEO": 2,
}
MATRIX_FORMATS = {
    "FULL_MATRIX": "full",
    "UPPER_ROW": "upper",
    "LOWER_COL": "upper",
    "LOWER_ROW": "lower",
    "UPPER_COL": "lower",
    "UPPER_DIAG_ROW": "upper_diag",
    "LOWER_DIAG_COL": "upper_diag",
    "LOWER_DIAG_ROW": "lower_diag",
    "UPPER_DIAG_COL": "lower_diag",
}
SECTIONS = {
    "NODE_COORD_SECTION",
    "EDGE_WEIGHT_SECTION",
    "DISPLAY_DATA_SECTION",
    "FIXED_EDGES_SECTION",
    "TOUR_SECTION",
    "DEPOT_SECTION",
    "DEMAND_SECTION",
}
GEO_PI = 3.141592
GEO_RRR = 6378.388
_KEY = re.compile(r"^([A-Z_0-9]+)\s*:?\s*(.*)$")


@dataclass(frozen=True, eq=False)
class TspInstance:
    name: str
    n: int
    weight_type: str  #: EUC_2D, ATT, GEO, EXPLICIT, ...
    coords: np.ndarray | None  #: (n, dims) float64 for coordinate types
    matrix: np.ndarray | None  #: (n, n) int64 for EXPLICIT
    path: Path | None = None

    def coordinates(self) -> np.ndarray:
        """The coordinates (an instance of a coordinate type, one without a matrix, has them)."""
        if self.coords is None:
            raise ValueError(f"{self.name}: an {self.weight_type} instance has no coordinates")
        return self.coords

    def distances(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """TSPLIB distances between the 0-based cities a[k] and b[k] (int64, vectorised)."""
        if self.matrix is not None:
            given: np.ndarray = self.matrix[a, b]
            return given
        coords = self.coordinates()
        return coord_distance(self.weight_type, coords[a], coords[b])

    def tour_length(self, tour: np.ndarray) -> int:
        """Length of the closed tour given as a 0-based permutation."""
        return int(self.distances(tour, np.roll(tour, -1)).sum(dtype=np.int64))

    def full_matrix(self) -> np.ndarray:
        idx = np.arange(self.n)
        a, b = np.meshgrid(idx, idx, indexing="ij")
        return self.distances(a.ravel(), b.ravel()).reshape(self.n, self.n)


def _geo_radians(x: np.ndarray) -> np.ndarray:
    deg = np.trunc(x)
    minutes = x - deg
    radians: np.ndarray = GEO_PI * (deg + 5.0 * minutes / 3.0) / 180.0
    return radians


def coord_distance(kind: str, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    d = p - q
    dist: np.ndarray  # int64
    if kind in ("EUC_2D", "EUC_3D"):
        dist = np.floor(np.sqrt((d * d).sum(axis=1)) + 0.5).astype(np.int64)
    elif kind == "CEIL_2D":
        dist = np.ceil(np.sqrt((d * d).sum(axis=1))).astype(np.int64)
    elif kind in ("MAN_2D", "MAN_3D"):
        dist = np.floor(np.abs(d).sum(axis=1) + 0.5).astype(np.int64)
    elif kind in ("MAX_2D", "MAX_3D"):
        dist = np.floor(np.abs(d).max(axis=1) + 0.5).astype(np.int64)
    elif kind == "ATT":
        r = np.sqrt((d * d).sum(axis=1) / 10.0)
        t = np.floor(r + 0.5)
        dist = np.where(t < r, t + 1, t).astype(np.int64)
    elif kind == "GEO":
        lat1, lon1 = _geo_radians(p[:, 0]), _geo_radians(p[:, 1])
        lat2, lon2 = _geo_radians(q[:, 0]), _geo_radians(q[:, 1])
        q1 = np.cos(lon1 - lon2)
        q2 = np.cos(lat1 - lat2)
        q3 = np.cos(lat1 + lat2)
        inner = np.clip(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3), -1.0, 1.0)
        dist = np.trunc(GEO_RRR * np.arccos(inner) + 1.0).astype(np.int64)
    else:
        raise ValueError(f"unsupported edge weight type {kind}")
    return dist


def _matrix_from(values: np.ndarray, n: int, fmt: str, path, line: int) -> np.ndarray:
    kind = MATRIX_FORMATS[fmt]
    need = {
        "full": n * n,
        "upper": n * (n - 1) // 2,
        "lower": n * (n - 1) // 2,
        "upper_diag": n * (n + 1) // 2,
        "lower_diag": n * (n + 1) // 2,
    }[kind]
    if values.size != need:
        raise InputError(
            f"{path}: line {line}: EDGE_WEIGHT_SECTION ({fmt}) needs {need} numbers for {n} cities, found {values.size}"
        )
    if kind == "full":
        m = values.reshape(n, n)
        if not np.array_equal(m, m.T):
            i, j = np.argwhere(m != m.T)[0]
            raise InputError(f"{path}: FULL_MATRIX is not symmetric at ({i + 1}, {j + 1})")
        return m
    m = np.zeros((n, n), dtype=np.int64)
    if kind == "upper":
        rows, cols = np.triu_indices(n, 1)
    elif kind == "lower":
        rows, cols = np.tril_indices(n, -1)
    elif kind == "upper_diag":
        rows, cols = np.triu_indices(n, 0)
    else:
        rows, cols = np.tril_indices(n, 0)
    m[rows, cols] = values
    m[cols, rows] = values
    return m


def parse_tsplib_bytes(data: bytes, path: Path | str = "<tsp>") -> TspInstance:
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    lines = text.splitlines()
    spec: dict[str, str] = {}
    sections: dict[str, tuple[int, list[str]]] = {}
    i = 0
    while i < len(lines):
        raw = lines[i].strip()
        i += 1
        if not raw:
            continue
        key = raw.split(":")[0].strip().split()[0] if raw[0].isalpha() else ""
        if not key:
            raise InputError(f"{path}: line {i}: expected a 'KEY : value' line, found {raw[:40]!r}")
        if key == "EOF":
            break
        if key in SECTIONS:
            start = i
            body: list[str] = []
            while i < len(lines):
                nxt = lines[i].strip()
                if nxt and nxt[0].isalpha():
                    break
                body.append(nxt)
                i += 1
            sections[key] = (start, " ".join(body).split())
            continue
        match = _KEY.match(raw)
        if not match:
            raise InputError(f"{path}: line {i}: cannot read {raw[:40]!r}")
        spec[match.group(1)] = match.group(2).strip()
    name = spec.get("NAME", Path(str(path)).stem)
    ptype = spec.get("TYPE", "TSP").split()[0] if spec.get("TYPE") else "TSP"
    if ptype != "TSP":
        raise InputError(f"{path}: TYPE {ptype} is not supported; only symmetric TSP")
    try:
        n = int(spec["DIMENSION"])
    except (KeyError, ValueError):
        raise InputError(f"{path}: missing or non-integer DIMENSION") from None
    if n < 1:
        raise InputError(f"{path}: DIMENSION must be at least 1")
    wtype = spec.get("EDGE_WEIGHT_TYPE", "").split()[0] if spec.get("EDGE_WEIGHT_TYPE") else ""
    if wtype == "EXPLICIT":
        fmt_words = spec.get("EDGE_WEIGHT_FORMAT", "").split()
        fmt = fmt_words[0] if fmt_words else ""
        if fmt not in MATRIX_FORMATS:
            raise InputError(f"{path}: EDGE_WEIGHT_FORMAT {fmt or '(missing)'} is not supported")
        if "EDGE_WEIGHT_SECTION" not in spec and "EDGE_WEIGHT_SECTION" not in sections:
            raise InputError(f"{path}: EXPLICIT instance without EDGE_WEIGHT_SECTION")
        line, tokens = sections["EDGE_WEIGHT_SECTION"]
        values = c.floats_or_none([t.encode() for t in tokens])
        if values is None:
            raise InputError(f"{path}: line {line}: EDGE_WEIGHT_SECTION holds a non-number")
        if not np.all(values == np.round(values)):
            raise InputError(f"{path}: line {line}: EDGE_WEIGHT_SECTION weights must be integers")
        matrix = _matrix_from(values.astype(np.int64), n, fmt, path, line)
        if (matrix < 0).any():
            raise InputError(f"{path}: negative edge weight in EDGE_WEIGHT_SECTION")
        return TspInstance(name, n, "EXPLICIT", None, matrix, Path(str(path)))
    if wtype not in COORD_TYPES:
        raise InputError(f"{path}: EDGE_WEIGHT_TYPE {wtype or '(missing)'} is not supported")
    if "NODE_COORD_SECTION" not in sections:
        raise InputError(f"{path}: {wtype} instance without NODE_COORD_SECTION")
    line, tokens = sections["NODE_COORD_SECTION"]
    dims = COORD_TYPES[wtype]
    if len(tokens) != n * (dims + 1):
        raise InputError(
            f"{path}: line {line}: NODE_COORD_SECTION needs {n} lines of "
            f"'id {' '.join('xyz'[:dims])}', found {len(tokens)} numbers"
        )
    values = c.floats_or_none([t.encode() for t in tokens])
    if values is None:
        raise InputError(f"{path}: line {line}: NODE_COORD_SECTION holds a non-number")
    table = values.reshape(n, dims + 1)
    ids = table[:, 0]
    if not np.array_equal(np.sort(ids), np.arange(1, n + 1)):
        raise InputError(f"{path}: line {line}: node ids must be 1..{n}, each once")
    coords = np.empty((n, dims), dtype=np.float64)
    coords[ids.astype(np.int64) - 1] = table[:, 1:]
    return TspInstance(name, n, wtype, coords, None, Path(str(path)))


def _tour(data: bytes, max_bytes: int) -> tuple[np.ndarray, float | None]:
    """A plain permutation, or a TSPLIB tour file's TOUR_SECTION, as int64 cities."""
    if b"TOUR_SECTION" not in data[:65536]:
        return c.vector_certificate(data, max_bytes, "entry")
    if len(data) > max_bytes:
        raise c.invalid(f"certificate is {len(data)} bytes, more than the {max_bytes} allowed")
    body = data.split(b"TOUR_SECTION", 1)[1]
    tokens = body.split()
    if b"-1" not in tokens:
        raise c.invalid("TOUR_SECTION without its terminating -1")
    tokens = tokens[: tokens.index(b"-1")]
    if not tokens:
        raise c.invalid("empty TOUR_SECTION")
    return c.certificate_ints(tokens, None, "entry"), None


#: the coordinate types whose distance depends only on the coordinate differences through
#: |dx|, |dy| (and |dz|): mirror images and integer translations keep them exactly
_DIFFERENCE_TYPES = ("EUC_2D", "EUC_3D", "CEIL_2D", "ATT", "MAN_2D", "MAN_3D", "MAX_2D", "MAX_3D")
#: integer coordinates are translated only while every value stays exact in float64 arithmetic
_EXACT_LIMIT = 2.0**50


def _coordinate_symmetry(inst: TspInstance, rng: np.random.Generator) -> tuple[np.ndarray, dict]:
    """The coordinates under a random exact symmetry of the instance's distance function, and what
    was applied. Every distance is computed from p - q: negating a coordinate axis negates the
    difference exactly (IEEE rounding is symmetric) and the formulas use squares or absolute
    values; swapping x and y swaps the two terms of a sum of two, which float addition keeps
    (commutative); a translation by an integer keeps p - q exactly when every coordinate is an
    integer well inside float64's exact range. GEO (latitude, longitude in DDD.MM) uses
    cos(lon1 - lon2), cos(lat1 - lat2), cos(lat1 + lat2): negating all latitudes or all longitudes
    negates their arguments, the degree/minute split is odd (trunc(-x) = -trunc(x)) and cos is
    even, so both mirrors are exact; swapping latitude and longitude or shifting a longitude is
    not (the cos(lat1 + lat2) term, the minutes' rounding) and is never applied."""
    xy = inst.coordinates().copy()
    dims: int = xy.shape[1]
    applied: dict = {"swap_xy": False, "negate": [False] * dims, "shift": [0] * dims}
    negate = rng.random(dims) < 0.5
    if inst.weight_type == "GEO":
        xy[:, negate] = -xy[:, negate]
        applied["negate"] = [bool(x) for x in negate]
        return xy, applied
    if inst.weight_type not in _DIFFERENCE_TYPES:
        return xy, applied
    if rng.random() < 0.5:  # x and y only: a 3-D sum ((a + b) + c) keeps its value when a, b swap
        xy[:, [0, 1]] = xy[:, [1, 0]]
        applied["swap_xy"] = True
    xy[:, negate] = -xy[:, negate]
    applied["negate"] = [bool(x) for x in negate]
    integral = bool(np.all(xy == np.round(xy))) and float(np.abs(xy).max(initial=0.0)) < _EXACT_LIMIT / 4
    if integral and xy.size:
        low = xy.min(axis=0)
        span = np.maximum(xy.max(axis=0) - low, 1.0)
        # a new origin: the smallest coordinate lands at a random offset below the axis' span
        shift = -low + np.floor(rng.random(dims) * np.minimum(span, 1e6))
        xy = xy + shift
        applied["shift"] = [int(x) for x in shift]
    return xy, applied


def _coordinate_lines(xy: np.ndarray) -> str:
    ids = np.arange(1, xy.shape[0] + 1)
    integral = bool(np.all(xy == np.round(xy))) and float(np.abs(xy).max(initial=0.0)) < 2.0**53
    values = xy.astype(np.int64) if integral else xy
    flat = np.empty((xy.shape[0], xy.shape[1] + 1), dtype=object)
    flat[:, 0] = ids.tolist()
    flat[:, 1:] = values.tolist()
    fmt = "%d" + (" " + tw.number_format(values)) * xy.shape[1] + "\n"
    text: str = (fmt * xy.shape[0]) % tuple(flat.ravel().tolist())
    return text


def twin(inst: TspInstance, rng: np.random.Generator, name: str = "twin") -> tw.Twin:
    """The instance with its cities relabelled (city i becomes perm[i]) and, for coordinate types,
    an exact symmetry of the metric (`_coordinate_symmetry`); EXPLICIT matrices are permuted and
    written as UPPER_DIAG_ROW. Every distance between the same two cities is the same integer, bit
    for bit, so every tour keeps its length. The header holds only NAME (the neutral `name`), TYPE,
    DIMENSION and the weight type; no comment, no display data. Map: {"perm": perm, ...}."""
    perm = rng.permutation(inst.n)
    inv = tw.inverse(perm)
    lines = [f"NAME : {name}", "TYPE : TSP", f"DIMENSION : {inst.n}"]
    mapping: dict = {"perm": tw.perm_list(perm)}
    if inst.matrix is not None:
        m = inst.matrix[np.ix_(inv, inv)]  # twin city k is original city inv[k]
        rows, cols = np.triu_indices(inst.n, 0)
        vals = m[rows, cols]
        per_line = np.bincount(rows, minlength=inst.n)
        text = " ".join(map(str, vals.tolist())).split(" ")
        out, at = [], 0
        for k in per_line.tolist():
            out.append(" ".join(text[at : at + k]))
            at += k
        lines += ["EDGE_WEIGHT_TYPE : EXPLICIT", "EDGE_WEIGHT_FORMAT : UPPER_DIAG_ROW", "EDGE_WEIGHT_SECTION"]
        return tw.Twin("\n".join(lines + out + ["EOF"]) + "\n", mapping)
    xy, applied = _coordinate_symmetry(inst, rng)
    mapping["symmetry"] = applied
    lines += [f"EDGE_WEIGHT_TYPE : {inst.weight_type}", "NODE_COORD_SECTION"]
    return tw.Twin("\n".join(lines) + "\n" + _coordinate_lines(xy[inv]) + "EOF\n", mapping)


def translate(mapping: dict, certificate: bytes) -> bytes:
    """A tour of the twin as a tour of the original: twin city k is original city inv[k]."""
    perm = np.asarray(mapping["perm"], dtype=np.int64)
    try:
        tour, claimed = _tour(certificate, len(certificate) + 1)
    except c.Reject:
        return certificate
    if tour.size != perm.size or (tour < 1).any() or (tour > perm.size).any():
        return certificate
    orig = tw.inverse(perm)[tour - 1] + 1
    head = f"value {claimed!r}\n" if claimed is not None else ""
    return (head + " ".join(map(str, orig.tolist())) + "\n").encode()


class Tsp(VectorProblem[TspInstance]):
    direction = Direction.MINIMIZE
    instance_file = InstanceFile("TSPLIB", ".tsp", parse_tsplib_bytes)
    certificate_format = "a permutation of the cities 1..n; optional 'value <length>' line"
    best_known = ("optimal", "best_known")

    def read_vector(self, instance: TspInstance, certificate: bytes) -> tuple[np.ndarray, float | None]:
        return _tour(certificate, self.max_certificate_bytes(instance))

    def vector_value(self, instance: TspInstance, tour: np.ndarray, claimed: float | None) -> float:
        if tour.size != instance.n:
            raise c.failed(f"tour has {tour.size} entries, the instance has {instance.n} cities", claimed)
        out = (tour < 1) | (tour > instance.n)
        if out.any():
            k = int(np.argmax(out))
            raise c.failed(f"entry {k + 1} is city {int(tour[k])}, outside 1..{instance.n}", claimed)
        counts = np.bincount(tour - 1, minlength=instance.n)
        if (counts != 1).any():
            city = int(np.argmax(counts > 1)) + 1
            missing = int(np.argmax(counts == 0)) + 1
            raise c.failed(f"not a permutation: city {city} repeated, city {missing} missing", claimed)
        return float(instance.tour_length(tour - 1))

    def describe(self, value: float) -> str:
        return f"tour length {c.fmt(value)}"

    def make_twin(self, instance: TspInstance, rng: np.random.Generator, name: str = "twin") -> tw.Twin:
        return twin(instance, rng, name)

    def translate_certificate(self, mapping: dict, certificate: bytes) -> bytes:
        return translate(mapping, certificate)

    def generate(self, rng: np.random.Generator, size: int) -> str:
        """`size` cities with integer coordinates uniform in [0, 10000), EUC_2D."""
        n = max(3, int(size))
        xy = rng.integers(0, 10000, size=(n, 2))
        lines = [
            f"NAME : rand{n}",
            "TYPE : TSP",
            f"COMMENT : {n} random cities (tcsexam generate)",
            f"DIMENSION : {n}",
            "EDGE_WEIGHT_TYPE : EUC_2D",
            "NODE_COORD_SECTION",
        ]
        lines += [f"{i + 1} {int(x)} {int(y)}" for i, (x, y) in enumerate(xy)]
        lines.append("EOF")
        return "\n".join(lines) + "\n"
