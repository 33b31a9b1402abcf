"""Hand-checked construction cases for the shared conformance suite (tests/unit/problems/cases.py):
for each kind a small parameter file, a valid object with its value and reward, and invalid
objects of every kind the checker must refuse, each with its status."""

from __future__ import annotations

from cases import FAILED, INVALID, Case

CAP_SET = Case(
    "cap_set",
    "parameters: {dim: 2}\n",
    {"baseline": 2, "reference": 4},
    b"# the 4-cap {0,1}^2\n0 0\n0 1\n1 0\n1 1\n",
    4.0,
    1.0,
    [
        ("a line of AG(2,3)", b"0 0\n0 1\n0 2\n", FAILED),
        ("repeated vector", b"0 0\n1 1\n0 0\n", FAILED),
        ("symbol 3", b"0 0\n0 3\n", FAILED),
        ("negative symbol", b"0 0\n-1 1\n", FAILED),
        ("short vector", b"0 0\n1\n", FAILED),
        ("long vector", b"0 0\n1 1 1\n", FAILED),
        ("not a number", b"0 0\n1 x\n", INVALID),
        ("float symbol", b"0 0\n1.0 1\n", INVALID),
        ("only comments", b"# nothing\n#\n", INVALID),
    ],
    ".yaml",
)

GOLOMB = Case(
    "golomb_ruler",
    "parameters: {marks: 4}\n",
    {"baseline": 10, "reference": 6},
    b"0 1 4\n6\n",
    6.0,
    1.0,
    [
        ("repeated difference", b"0 1 2 6\n", FAILED),
        ("repeated mark", b"0 1 1 6\n", FAILED),
        ("negative mark", b"-1 1 4 6\n", FAILED),
        ("too few marks", b"0 1 4\n", FAILED),
        ("too many marks", b"0 1 4 6 13\n", FAILED),
        ("not a number", b"0 1 four 6\n", INVALID),
        ("huge token", b"0 1 4 " + b"9" * 50 + b"\n", FAILED),  # an integer, out of range (as 30 digits)
        ("digit separator", b"0 1 4 1_0\n", INVALID),  # int() would read 10
    ],
    ".yaml",
)

# the 5-cycle and its complement: no monochromatic triangle, so R(3,3) > 5
RAMSEY = Case(
    "ramsey_coloring",
    "parameters: {clique: 3}\n",
    {"baseline": 3, "reference": 5},
    b"5\n01001\n10100\n01010\n00101\n10010\n",
    5.0,
    1.0,
    [
        ("monochromatic triangle", b"3\n011\n101\n110\n", FAILED),
        ("triangle of colour 0", b"3\n000\n000\n000\n", FAILED),
        ("asymmetric", b"3\n010\n001\n000\n", FAILED),
        ("non-zero diagonal", b"2\n11\n10\n", FAILED),
        ("colour 2", b"2\n02\n20\n", FAILED),
        ("short row", b"3\n01\n101\n010\n", FAILED),
        ("missing row", b"3\n010\n101\n", FAILED),
        ("n is zero", b"0\n", FAILED),
        ("n not a number", b"five\n01\n10\n", INVALID),
        ("letter in a row", b"2\n0x\n10\n", INVALID),
    ],
    ".yaml",
)

SIDON = Case(
    "sidon_set",
    "parameters: {low: 1, high: 10}\n",
    {"baseline": 2, "reference": 4},
    b"1 2 5 10\n",
    4.0,
    1.0,
    [
        ("a + b = c + d", b"1 2 3 4\n", FAILED),
        ("a + a = c + d", b"1 3 5\n", FAILED),
        ("repeated", b"1 2 2\n", FAILED),
        ("below the range", b"0 2 5\n", FAILED),
        ("above the range", b"1 2 11\n", FAILED),
        ("not a number", b"1 2 ?\n", INVALID),
    ],
    ".yaml",
)

# the 7 lines of the Fano plane cover every pair of {1..7}
COVERING = Case(
    "covering_design",
    "parameters: {v: 7, k: 3, t: 2}\n",
    {"baseline": 10, "reference": 7},
    b"1 2 3\n1 4 5\n1 6 7\n2 4 6\n2 5 7\n3 4 7\n3 5 6\n",
    7.0,
    1.0,
    [
        ("uncovered pair", b"1 2 3\n1 4 5\n1 6 7\n2 4 6\n2 5 7\n3 4 7\n", FAILED),
        ("point 8", b"1 2 8\n", FAILED),
        ("point 0", b"0 1 2\n", FAILED),
        ("repeated point", b"1 1 2\n", FAILED),
        ("short block", b"1 2\n", FAILED),
        ("not a number", b"1 2 c\n", INVALID),
    ],
    ".yaml",
)

# the 12 minimal vectors of D3 (norm^2 2, distances^2 >= 2): the kissing number of R^3
KISSING = Case(
    "kissing_config",
    "parameters: {dim: 3}\n",
    {"baseline": 6, "reference": 12},
    b"1 1 0\n1 -1 0\n-1 1 0\n-1 -1 0\n1 0 1\n1 0 -1\n-1 0 1\n-1 0 -1\n0 1 1\n0 1 -1\n0 -1 1\n0 -1 -1\n",
    12.0,
    1.0,
    [
        ("too close", b"2 0 0\n-2 0 0\n1 1 0\n", FAILED),
        ("repeated point", b"1 0 0\n1 0 0\n", FAILED),
        ("zero point", b"0 0 0\n1 0 0\n", FAILED),
        ("short point", b"1 0 0\n1 0\n", FAILED),
        ("not an integer", b"1 0 0\n0.5 1 0\n", INVALID),
    ],
    ".yaml",
)

DIFFERENCE_COVER = Case(
    "difference_cover",
    "parameters: {modulus: 7}\n",
    {"baseline": 4, "reference": 3},
    b"1 2 4\n",  # the perfect difference set mod 7
    3.0,
    1.0,
    [
        ("residue 3 missing", b"0 1 2\n", FAILED),
        ("repeated residue", b"1 2 4 4\n", FAILED),
        ("out of range", b"1 2 7\n", FAILED),
        ("negative", b"-1 2 4\n", FAILED),
        ("not a number", b"1 2 four\n", INVALID),
    ],
    ".yaml",
)

SPHERICAL = Case(
    "spherical_code",
    "parameters: {dim: 2, points: 4}\n",
    {"baseline": 45, "reference": 90},
    b"1 0\n0 2.5\n-3 0\n0 -1e-3\n",  # normalised: the square, 90 degrees
    90.0,
    1.0,
    [
        ("zero vector", b"1 0\n0 1\n0 0\n-1 -1\n", FAILED),
        ("too few points", b"1 0\n0 1\n-1 0\n", FAILED),
        ("too many points", b"1 0\n0 1\n-1 0\n0 -1\n1 1\n", FAILED),
        ("short point", b"1 0\n0 1\n-1\n0 -1\n", FAILED),
        ("nan", b"1 0\n0 1\nnan 0\n0 -1\n", INVALID),
        ("inf", b"1 0\n0 1\n-inf 0\n0 -1\n", INVALID),
        ("not a number", b"1 0\n0 1\n-1 zero\n0 -1\n", INVALID),
    ],
    ".yaml",
)

CONSTRUCTION_CASES = [CAP_SET, GOLOMB, RAMSEY, SIDON, COVERING, KISSING, DIFFERENCE_COVER, SPHERICAL]
