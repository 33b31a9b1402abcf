"""Small hand-checked instances and certificates for the shared conformance suite.

Each case: a problem, an instance text, metadata, a good certificate with its exact value, and bad
certificates each with the status the checker must answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OK, INVALID, FAILED = "ok", "invalid", "certificate_failed"


@dataclass
class Case:
    problem: str
    instance: str
    meta: dict
    good: bytes
    value: float
    reward: float | None
    bad: list[tuple[str, bytes, str]] = field(default_factory=list)  # (label, cert, status)
    suffix: str = ".txt"


# a 4-cycle 1-2-3-4 with weights 1, 2, 3, -1 and a chord 1-3 weight 5
MAXCUT = Case(
    "maxcut",
    "4 5\n1 2 1\n2 3 2\n3 4 3\n4 1 -1\n1 3 5\n",
    {"best_known": 10},
    b"value 9\n0 1 1 0\n",  # cut edges: 1-2 (1), 3-4 (3), 1-3 (5)
    9.0,
    0.9,
    [
        ("wrong length", b"0 1 1\n", FAILED),
        ("too long", b"0 1 1 0 1\n", FAILED),
        ("out of range side", b"0 1 2 0\n", FAILED),
        ("negative side", b"0 -1 1 0\n", FAILED),
        ("wrong claim", b"value 8\n0 1 1 0\n", FAILED),
        ("non-integer", b"0 1 x 0\n", INVALID),
        ("float side", b"0 1 1.0 0\n", INVALID),
        ("bad value line", b"value nine\n0 1 1 0\n", INVALID),
        ("two value lines", b"value 9\nvalue 9\n0 1 1 0\n", INVALID),
        ("only a claim", b"value 9\n", INVALID),
    ],
)

CNF = "c tiny\np cnf 3 4\n1 2 0\n-1 3 0\n-2 -3 0\n1 -3\n 0\n%\n0\n"
SAT = Case(
    "sat",
    CNF,
    {"label": "SAT"},
    b"c model\ns SATISFIABLE\nv 1 -2 3 0\n",
    1.0,
    1.0,
    [
        ("falsified clause", b"s SATISFIABLE\nv -1 2 3 0\n", FAILED),
        ("contradictory", b"s SATISFIABLE\nv 1 -1 3 0\n", FAILED),
        ("literal out of range", b"s SATISFIABLE\nv 1 -2 3 4 0\n", FAILED),
        ("partial model that falsifies", b"s SATISFIABLE\nv 1 0\n", FAILED),
        ("wrong UNSAT on a SAT label", b"s UNSATISFIABLE\n", FAILED),
        ("no s line", b"v 1 -2 3 0\n", INVALID),
        ("no v lines", b"s SATISFIABLE\n", INVALID),
        ("missing final 0", b"s SATISFIABLE\nv 1 -2 3\n", INVALID),
        ("zero inside", b"s SATISFIABLE\nv 1 0 -2 3 0\n", INVALID),
        ("unknown answer", b"s MAYBE\n", INVALID),
        ("two s lines", b"s SATISFIABLE\ns SATISFIABLE\nv 1 -2 3 0\n", INVALID),
        ("garbage literal", b"s SATISFIABLE\nv 1 -2 three 0\n", INVALID),
        ("unknown line", b"x SATISFIABLE\n", INVALID),
    ],
    ".cnf",
)

TSP = Case(
    "tsp",
    "NAME : sq4\nTYPE : TSP\nDIMENSION : 4\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n"
    "1 0 0\n2 3 0\n3 3 4\n4 0 4\nEOF\n",
    {"optimal": 14},
    b"value 14\n1 2 3 4\n",
    14.0,
    1.0,
    [
        ("repeated city", b"1 2 2 4\n", FAILED),
        ("city out of range", b"1 2 3 5\n", FAILED),
        ("city zero", b"0 1 2 3\n", FAILED),
        ("too short", b"1 2 3\n", FAILED),
        ("wrong claim", b"value 10\n1 2 3 4\n", FAILED),
        ("letters", b"1 two 3 4\n", INVALID),
        ("tour section without -1", b"TOUR_SECTION\n1 2 3 4\n", INVALID),
    ],
    ".tsp",
)

COLORING = Case(
    "coloring",
    "c triangle plus pendant, edges listed twice\np edge 4 8\ne 1 2\ne 2 1\ne 2 3\ne 3 2\ne 1 3\ne 3 1\ne 3 4\ne 4 3\n",
    {"chromatic": 3},
    b"value 3\n7 0 3 7\n",
    3.0,
    1.0,
    [
        ("conflict", b"1 1 2 3\n", FAILED),
        ("negative colour", b"1 2 -3 1\n", FAILED),
        ("too few", b"1 2 3\n", FAILED),
        ("wrong claim", b"value 2\n7 0 3 7\n", FAILED),
        ("huge colour", b"1 2 3 " + b"9" * 40 + b"\n", FAILED),
        ("letters", b"red green blue red\n", INVALID),
    ],
    ".col",
)

WCNF_NEW = "c new form\nh 1 2 0\nh -1 -2 0\n3 1 0\n5 2 0\n1 -3 0\n2 3 0\n"
MAXSAT = Case(
    "maxsat",
    WCNF_NEW,
    {"optimum": 4},
    b"s OPTIMUM FOUND\no 4\nv 011\n",  # x2, x3 true: falsifies soft (1) w3 and (-3) w1
    4.0,
    1.0,
    [
        ("hard clause falsified", b"v 110\n", FAILED),
        ("hard clause unassigned", b"v 3\n", FAILED),
        ("wrong length string", b"v 01\n", FAILED),
        ("wrong o claim", b"o 5\nv 011\n", FAILED),
        ("false optimum claim", b"s OPTIMUM FOUND\nv 100\n", FAILED),
        ("contradictory literals", b"v 1 -1 2 0\n", FAILED),
        ("literal out of range", b"v -1 2 9\n", FAILED),
        ("UNSAT claim", b"s UNSATISFIABLE\n", FAILED),
        ("no v line", b"s SATISFIABLE\no 3\n", INVALID),
        ("unknown without v", b"s UNKNOWN\n", INVALID),
        ("bad o line", b"o three\nv 010\n", INVALID),
        ("unknown line", b"x 010\n", INVALID),
    ],
    ".wcnf",
)

CASES = [MAXCUT, SAT, TSP, COLORING, MAXSAT]

# the construction kinds (tcsexam.problems.constructions) pass the same suite
from construction_cases import CONSTRUCTION_CASES  # noqa: E402

CASES += CONSTRUCTION_CASES
