"""Every construction checker against an independent plain-Python checker (itertools, integers,
no numpy), on hand-made and hypothesis-generated objects, valid and invalid, plus the literature
objects the task files cite and the reward rule of the construction track."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcsexam.problems import CONSTRUCTIONS, get_problem
from tcsexam.problems.constructions._base import reward
from tcsexam.tasks import load_task

ROOT = Path(__file__).resolve().parents[3]
TASKS = sorted(p.stem for p in (ROOT / "config" / "tasks").glob("construction-*.yaml"))
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def check(problem: str, params: dict, cert: str, meta: dict | None = None, tmp_path: Path | None = None):
    impl = get_problem(problem)
    from tcsexam.problems.constructions._base import Params

    return impl.check_certificate(Params(params, "test"), cert.encode(), meta or {})


# ---- independent plain-Python checkers: (ok, value) -------------------------------------------


def py_cap_set(dim, vecs):
    if any(len(v) != dim or any(x not in (0, 1, 2) for x in v) for v in vecs):
        return False, None
    if len(set(map(tuple, vecs))) != len(vecs):
        return False, None
    for a, b, c in itertools.combinations(vecs, 3):
        if all((x + y + z) % 3 == 0 for x, y, z in zip(a, b, c)):
            return False, None
    return True, len(vecs)


def py_golomb(marks, want):
    if len(marks) != want or len(set(marks)) != len(marks) or min(marks) < 0:
        return False, None
    diffs = [abs(a - b) for a, b in itertools.combinations(marks, 2)]
    if len(set(diffs)) != len(diffs):
        return False, None
    return True, max(marks) - min(marks)


def py_ramsey(s, rows):
    n = len(rows)
    for c in (0, 1):
        for sub in itertools.combinations(range(n), s):
            if all(rows[i][j] == c for i, j in itertools.combinations(sub, 2)):
                return False, None
    return True, n


def py_sidon(low, high, xs):
    if len(set(xs)) != len(xs) or any(not low <= x <= high for x in xs):
        return False, None
    sums = [a + b for a, b in itertools.combinations_with_replacement(sorted(xs), 2)]
    return (True, len(xs)) if len(set(sums)) == len(sums) else (False, None)


def py_covering(v, k, t, blocks):
    if any(len(b) != k or len(set(b)) != k or any(not 1 <= p <= v for p in b) for b in blocks):
        return False, None
    sets = [set(b) for b in blocks]
    for tri in itertools.combinations(range(1, v + 1), t):
        if not any(set(tri) <= b for b in sets):
            return False, None
    return True, len(blocks)


def py_kissing(dim, pts):
    if any(len(p) != dim or not any(p) for p in pts):
        return False, None
    m = max(sum(x * x for x in p) for p in pts)
    for p, q in itertools.combinations(pts, 2):
        if sum((a - b) ** 2 for a, b in zip(p, q)) < m:
            return False, None
    return True, len(pts)


def py_difference_cover(mod, xs):
    if len(set(xs)) != len(xs) or any(not 0 <= x < mod for x in xs):
        return False, None
    cov = {(a - b) % mod for a in xs for b in xs}
    return (True, len(xs)) if len(cov) == mod else (False, None)


def py_spherical(dim, n, pts):
    if len(pts) != n or any(len(p) != dim for p in pts):
        return False, None
    norms = [math.sqrt(sum(x * x for x in p)) for p in pts]
    if any(v == 0 for v in norms):
        return False, None
    best = -1.0
    for i, j in itertools.combinations(range(n), 2):
        c = sum(a * b for a, b in zip(pts[i], pts[j])) / (norms[i] * norms[j])
        best = max(best, c)
    return True, math.degrees(math.acos(max(-1.0, min(1.0, best))))


def lines(rows):
    return "".join(" ".join(map(str, r)) + "\n" for r in rows)


def agree(result, expected, abs_tol=1e-9):
    ok, value = expected
    if ok:
        assert result.status == "ok", result.message
        assert result.value == pytest.approx(value, rel=1e-9, abs=abs_tol)
    else:
        assert result.status == "certificate_failed", result
        assert result.value is None and result.message


# ---- hypothesis: random objects, valid and not --------------------------------------------


@SETTINGS
@given(dim=st.integers(1, 4), data=st.data())
def test_cap_set_agrees(dim, data):
    vecs = data.draw(st.lists(st.lists(st.integers(0, 2), min_size=dim, max_size=dim), min_size=1, max_size=14))
    agree(check("cap_set", {"dim": dim}, lines(vecs)), py_cap_set(dim, vecs))


@SETTINGS
@given(data=st.data())
def test_cap_set_greedy_caps_agree(data):
    """Greedy caps (valid) and a greedy cap plus one more vector (usually invalid)."""
    dim = data.draw(st.integers(2, 4))
    order = data.draw(st.permutations(list(itertools.product(range(3), repeat=dim))))
    cap = []
    for v in order:
        if py_cap_set(dim, [*cap, list(v)])[0]:
            cap.append(list(v))
    agree(check("cap_set", {"dim": dim}, lines(cap)), (True, len(cap)))
    extra = [*cap, list(data.draw(st.sampled_from(order)))]
    agree(check("cap_set", {"dim": dim}, lines(extra)), py_cap_set(dim, extra))


@SETTINGS
@given(marks=st.lists(st.integers(-2, 60), min_size=1, max_size=9))
def test_golomb_agrees(marks):
    agree(check("golomb_ruler", {"marks": len(marks)}, lines([marks])), py_golomb(marks, len(marks)))


@SETTINGS
@given(n=st.integers(1, 11), s=st.integers(3, 4), data=st.data())
def test_ramsey_agrees(n, s, data):
    bits = data.draw(st.lists(st.integers(0, 1), min_size=n * n, max_size=n * n))
    rows = [[0] * n for _ in range(n)]
    for i, j in itertools.combinations(range(n), 2):
        rows[i][j] = rows[j][i] = bits[i * n + j]
    cert = f"{n}\n" + "".join("".join(map(str, r)) + "\n" for r in rows)
    agree(check("ramsey_coloring", {"clique": s}, cert), py_ramsey(s, rows))


@SETTINGS
@given(xs=st.lists(st.integers(0, 45), min_size=1, max_size=9))
def test_sidon_agrees(xs):
    agree(check("sidon_set", {"low": 1, "high": 40}, lines([xs])), py_sidon(1, 40, xs))


@SETTINGS
@given(v=st.integers(3, 8), data=st.data())
def test_covering_agrees(v, data):
    k = data.draw(st.integers(2, v))
    t = data.draw(st.integers(1, min(k, 3)))
    blocks = data.draw(st.lists(st.lists(st.integers(0, v + 1), min_size=k, max_size=k), min_size=1, max_size=12))
    agree(check("covering_design", {"v": v, "k": k, "t": t}, lines(blocks)), py_covering(v, k, t, blocks))


@SETTINGS
@given(v=st.integers(4, 9), data=st.data())
def test_covering_valid_designs_agree(v, data):
    """All k-subsets through point 1 plus random blocks: coverings or not, decided alike."""
    k, t = data.draw(st.integers(3, v)), 2
    blocks = [list(b) for b in itertools.combinations(range(1, v + 1), k)]
    keep = data.draw(st.lists(st.sampled_from(blocks), min_size=1, max_size=len(blocks)))
    agree(check("covering_design", {"v": v, "k": k, "t": t}, lines(keep)), py_covering(v, k, t, keep))


@SETTINGS
@given(dim=st.integers(1, 4), data=st.data())
def test_kissing_agrees(dim, data):
    pts = data.draw(st.lists(st.lists(st.integers(-3, 3), min_size=dim, max_size=dim), min_size=1, max_size=12))
    agree(check("kissing_config", {"dim": dim}, lines(pts)), py_kissing(dim, pts))


@SETTINGS
@given(dim=st.integers(2, 4), scale=st.integers(29, 40), data=st.data())
def test_kissing_big_coordinates_agree(dim, scale, data):
    """Coordinates beyond 2^28 (the float screen with exact Python-integer decisions) and near-ties."""
    base = data.draw(st.lists(st.lists(st.integers(-2, 2), min_size=dim, max_size=dim), min_size=2, max_size=10))
    pts = [[x * 2**scale + data.draw(st.integers(-1, 1)) for x in p] for p in base]
    agree(check("kissing_config", {"dim": dim}, lines(pts)), py_kissing(dim, pts))


@SETTINGS
@given(mod=st.integers(1, 40), data=st.data())
def test_difference_cover_agrees(mod, data):
    xs = data.draw(st.lists(st.integers(-1, mod), min_size=1, max_size=10))
    agree(check("difference_cover", {"modulus": mod}, lines([xs])), py_difference_cover(mod, xs))


@SETTINGS
@given(dim=st.integers(2, 4), n=st.integers(2, 8), data=st.data())
def test_spherical_code_agrees(dim, n, data):
    coords = st.one_of(st.integers(-3, 3).map(float), st.floats(-10, 10, allow_nan=False, width=64))
    pts = data.draw(st.lists(st.lists(coords, min_size=dim, max_size=dim), min_size=n, max_size=n))
    cert = lines([[repr(x) for x in p] for p in pts])
    # arccos in the plain checker loses digits near 0 degrees (about 1e-6 degrees there)
    agree(check("spherical_code", {"dim": dim, "points": n}, cert), py_spherical(dim, n, pts), abs_tol=1e-5)


# ---- the objects the task files cite ------------------------------------------------------


def paley(q: int) -> list[list[int]]:
    squares = {x * x % q for x in range(1, q)}
    return [[int(i != j and (i - j) % q in squares) for j in range(q)] for i in range(q)]


def matrix_text(rows):
    return f"{len(rows)}\n" + "".join("".join(map(str, r)) + "\n" for r in rows)


def test_paley_colourings_of_k37_and_k41():
    """P(37) has clique number 4 (so K_37 has no monochromatic K5); P(41) contains a K5."""
    ok = check("ramsey_coloring", {"clique": 5}, matrix_text(paley(37)), {"baseline": 16, "reference": 42})
    assert ok.status == "ok" and ok.value == 37 and ok.reward == pytest.approx(21 / 26)
    bad = check("ramsey_coloring", {"clique": 5}, matrix_text(paley(41)))
    assert bad.status == "certificate_failed" and "contains a K5 on vertices" in bad.message
    verts = [int(v) - 1 for v in bad.message.split("vertices ")[1].split()]
    colour = int(bad.message.split()[1])
    rows = paley(41)
    assert all(rows[i][j] == colour for i, j in itertools.combinations(verts, 2))


def test_ramsey_k17_paley_against_brute_force():
    rows = paley(17)  # R(4,4) = 18: P(17) has no monochromatic K4
    assert check("ramsey_coloring", {"clique": 4}, matrix_text(rows)).status == "ok"
    assert py_ramsey(4, rows) == (True, 17)


OGR14 = [0, 4, 6, 20, 35, 52, 59, 77, 78, 86, 89, 99, 122, 127]
OGR26 = [
    0,
    1,
    33,
    83,
    104,
    110,
    124,
    163,
    185,
    200,
    203,
    249,
    251,
    258,
    314,
    318,
    343,
    356,
    386,
    430,
    440,
    456,
    464,
    475,
    487,
    492,
]


def run_check(task: str, cert: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "tcsexam", "check", "--task", task, "--certificate", str(cert), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_optimal_golomb_ruler_scores_one(tmp_path):
    cert = tmp_path / "ruler.txt"
    cert.write_text("# OGR-14\n" + " ".join(map(str, OGR14)) + "\n")
    got = run_check("construction-golomb-ruler-14", cert)
    assert (got["status"], got["value"], got["reward"]) == ("ok", 127.0, 1.0)
    assert got["checker"].startswith("tcsexam golomb_ruler checker v")


def test_sidon_maximum_from_ogr26(tmp_path):
    cert = tmp_path / "sidon.txt"
    cert.write_text("\n".join(str(x + 1) for x in OGR26) + "\n")
    got = run_check("construction-sidon-set-500", cert)
    assert (got["status"], got["value"], got["reward"]) == ("ok", 26.0, 1.0)
    cert.write_text(" ".join(str(x + 9) for x in OGR26) + "\n")  # 501 is out of range
    assert run_check("construction-sidon-set-500", cert)["status"] == "certificate_failed"


def test_cap_set_product_construction_and_beyond(tmp_path):
    """{0,1}^8 is the baseline (reward 0); a product of 9-caps of AG(3,3) and a 4-cap of AG(2,3)."""
    cap9 = [v for v in itertools.product(range(3), repeat=3) if (v[0] ** 2 + v[1] ** 2 - v[2]) % 3 == 0]
    assert py_cap_set(3, [list(v) for v in cap9]) == (True, 9)
    cap4 = [(0, 0), (0, 1), (1, 0), (1, 1)]
    prod = [a + b + c for a in cap9 for b in cap9 for c in cap4]
    cert = tmp_path / "cap.txt"
    cert.write_text(lines(prod))
    got = run_check("construction-cap-set-f3-dim8", cert)
    assert (got["status"], got["value"]) == ("ok", 324.0)
    assert got["reward"] == pytest.approx((324 - 256) / (512 - 256))
    cert.write_text(lines(itertools.product(range(2), repeat=8)))
    assert run_check("construction-cap-set-f3-dim8", cert)["reward"] == 0.0


def test_kissing_d11_roots(tmp_path):
    pts = []
    for i, j in itertools.combinations(range(11), 2):
        for a, b in itertools.product((1, -1), repeat=2):
            p = [0] * 11
            p[i], p[j] = a, b
            pts.append(p)
    cert = tmp_path / "d11.txt"
    cert.write_text(lines(pts))
    got = run_check("construction-kissing-config-dim11", cert)
    assert (got["status"], got["value"]) == ("ok", 220.0)
    assert got["reward"] == pytest.approx((220 - 22) / (593 - 22))
    cert.write_text(lines([*pts, [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]]))  # norm 3 > 2: too close
    assert run_check("construction-kissing-config-dim11", cert)["status"] == "certificate_failed"


# ---- the reward rule ------------------------------------------------------------------------


@given(
    v=st.integers(0, 1000),
    b=st.integers(0, 1000),
    r=st.integers(0, 1000),
    direction=st.sampled_from(["maximize", "minimize"]),
)
def test_reward_rule(v, b, r, direction):
    if r == b:
        return
    got = reward(direction, v, b, r)
    exact = Fraction(v - b, r - b) if direction == "maximize" else Fraction(b - v, b - r)
    assert got == pytest.approx(float(max(Fraction(0), exact)))
    assert got >= 0


def test_reward_above_reference_and_below_baseline():
    assert reward("maximize", 600, 22, 593) > 1
    assert reward("minimize", 120, 181, 127) == pytest.approx(61 / 54)
    assert reward("minimize", 200, 181, 127) == 0.0
    assert reward("maximize", 10, 16, 42) == 0.0


# ---- the task files -----------------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_task_files(task):
    t = load_task(ROOT / "config" / "tasks" / f"{task}.yaml")
    assert t.problem in CONSTRUCTIONS and t.kind == "objective"
    assert t.direction == t.problem_impl.direction
    (inst,) = t.instances
    assert inst.path.resolve() == (ROOT / "config" / "tasks" / f"{task}.yaml").resolve()
    params = t.problem_impl.parse_instance(inst.path)
    assert params.values
    b, r = inst.meta["baseline"], inst.meta["reference"]
    assert (r > b) if t.direction == "maximize" else (r < b)
    import yaml

    raw = yaml.safe_load(inst.path.read_text())
    assert raw["track"] == "construction"
    assert raw["sources"]["baseline"] and raw["sources"]["reference"]


def test_every_construction_kind_has_a_task():
    kinds = {load_task(ROOT / "config" / "tasks" / f"{t}.yaml").problem for t in TASKS}
    assert kinds == set(CONSTRUCTIONS)


@pytest.mark.parametrize(
    "data,status",
    [
        (b"", "invalid"),
        (b"# only a comment\n", "invalid"),
        (b"\xff\xfe\x00", "invalid"),
        (b"0 1 3 7 12 20 30 44 65 80 96 122 147 181 x\n", "invalid"),
        (b"0 1 3 7 12 20 30 44 65 80 96 122 147\n", "certificate_failed"),
    ],
)
def test_malformed_golomb_files(tmp_path, data, status):
    cert = tmp_path / "c.txt"
    cert.write_bytes(data)
    got = run_check("construction-golomb-ruler-14", cert)
    assert got["status"] == status and got["reward"] == 0.0 and got["value"] is None


@pytest.mark.parametrize(
    "task,data,status,value",
    [
        # Python's int() and float() take `1_0` and `nan`: not numbers in a certificate
        ("construction-golomb-ruler-14", b"0 1_0 3 7 12 20 30 44 65 80 96 122 147 181\n", "invalid", None),
        ("construction-sidon-set-500", b"1 2 4 8 1_3\n", "invalid", None),
        ("construction-spherical-code-dim4-n30", b"1_0.0 0 0 1\n" * 30, "invalid", None),
        ("construction-spherical-code-dim4-n30", b"nan 0 0 1\n" * 30, "invalid", None),
        ("construction-ramsey-r55-lower-coloring", b"1_0\n" + b"0" * 10 + b"\n", "invalid", None),
        # leading zeros do not make an integer too long
        ("construction-sidon-set-500", b"0" * 60 + b"1 2 4\n", "ok", 3.0),
        # a digit string longer than any range: out of range, not unparsable
        ("construction-sidon-set-500", b"1" * 60 + b" 2 4\n", "certificate_failed", None),
        # a text line in a colour matrix is unparsable, whatever the row count says
        ("construction-ramsey-r55-lower-coloring", b"2\n01\n10\nhello\n", "invalid", None),
        ("construction-ramsey-r55-lower-coloring", b"2\n01\n10\n", "ok", 2.0),
    ],
)
def test_number_tokens_and_matrix_text(tmp_path, task, data, status, value):
    cert = tmp_path / "c.txt"
    cert.write_bytes(data)
    got = run_check(task, cert)
    assert (got["status"], got["value"]) == (status, value), got["message"]
    assert got["reward"] is not None and got["reward"] >= 0.0


def test_bad_parameter_files(tmp_path):
    p = tmp_path / "p.yaml"
    from tcsexam.errors import InputError

    for text, match in [
        ("parameters: {dim: 0}\n", "parameters.dim must be an integer"),
        ("parameters: {dim: 8, q: 3}\n", "unknown parameter 'q'"),
        ("dim: 8\n", "needs a 'parameters:' mapping"),
        ("parameters: [1, 2\n", "not a YAML parameter file"),
    ]:
        p.write_text(text)
        with pytest.raises(InputError, match=match):
            get_problem("cap_set").parse_instance(p)
