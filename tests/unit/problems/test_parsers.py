"""Instance parsers: real-data quirks, one-line InputErrors naming file and line, distance
functions, both WCNF forms."""

from __future__ import annotations

import numpy as np
import pytest

from tcsexam.errors import InputError
from tcsexam.problems import get_problem
from tcsexam.problems.tsp import coord_distance


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


@pytest.mark.parametrize(
    "text,match",
    [
        ("3 2\n1 2 1\n2 4 1\n", r"line 3: endpoint outside 1\.\.3"),
        ("3 2\n1 2 1\n2 2 1\n", "line 3: self-loop on vertex 2"),
        ("3 2\n1 2 1\n2 x 1\n", "line 3: endpoint 'x' is not an integer"),
        ("3 2\n1 2 1\n2 3 nan\n", "line 3: weight 'nan' is not a finite number"),
        ("3 3\n1 2 1\n2 3 1\n", "header says 3 edges but the file holds 2 edge lines"),
        ("800 19176 J\n1 2 1\n", "line 1: header must be"),
    ],
)
def test_maxcut_bad_instances(tmp_path, text, match):
    path = write(tmp_path, "g.txt", text)
    with pytest.raises(InputError, match=match) as info:
        get_problem("maxcut").parse_instance(path)
    assert str(info.value).startswith(str(path))


def test_maxcut_float_weights_and_crlf(tmp_path):
    p = get_problem("maxcut")
    inst = p.parse_instance(write(tmp_path, "g.txt", "3 2\r\n1 2 0.5\r\n2 3 -1.25\r\n"))
    assert inst.w.dtype == np.float64
    assert p.check_certificate(inst, b"0 1 0", {}).value == pytest.approx(-0.75)


def test_sat_satlib_trailer_and_spacing(tmp_path):
    inst = get_problem("sat").parse_instance(write(tmp_path, "a.cnf", "c x\np cnf 3  2 \n 1 -2 0\n2 3 0\n%\n0\n\n"))
    assert (inst.nvars, inst.nclauses) == (3, 2)


@pytest.mark.parametrize(
    "text,match",
    [
        ("1 2 0\n", "no 'p cnf' header"),
        ("p cnf 2 1\np cnf 2 1\n1 0\n", "2 'p' lines"),
        ("p cnf 2 2\n1 2 0\n", "header says 2 clauses but the file holds 1"),
        ("p cnf 2 1\n1 3 0\n", r"line 2: literal 3 outside 1\.\.2"),
        ("c a\np cnf 2 2\n1 2 0\n1 a 0\n", "line 4: 'a' is not an integer literal"),
        ("p cnf two 1\n1 0\n", "line 1: header counts"),
    ],
)
def test_sat_bad_instances(tmp_path, text, match):
    with pytest.raises(InputError, match=match):
        get_problem("sat").parse_instance(write(tmp_path, "b.cnf", text))


def test_sat_unlabelled_unsat_claim_is_not_solved(tmp_path):
    p = get_problem("sat")
    inst = p.parse_instance(write(tmp_path, "u.cnf", "p cnf 1 2\n1 0\n-1 0\n"))
    r = p.check_certificate(inst, b"s UNSATISFIABLE\n", {})
    assert r.status == "ok" and r.solved is False and "DRAT" in r.message
    r = p.check_certificate(inst, b"s UNSATISFIABLE\n", {"label": "UNSAT"})
    assert r.status == "ok" and r.solved is True and r.value == 1.0
    r = p.check_certificate(inst, b"s UNKNOWN\n", {"label": "UNSAT"})
    assert r.status == "ok" and r.solved is False and r.value == 0.0


def test_sat_empty_clause_is_never_satisfied(tmp_path):
    p = get_problem("sat")
    inst = p.parse_instance(write(tmp_path, "e.cnf", "p cnf 2 2\n1 2 0\n0\n"))
    r = p.check_certificate(inst, b"s SATISFIABLE\nv 1 2 0\n", {})
    assert r.status == "certificate_failed" and "clause 2" in r.message


@pytest.mark.parametrize(
    "kind,p,q,expected",
    [
        ("EUC_2D", (0, 0), (3, 4), 5),
        ("EUC_2D", (0, 0), (1, 1), 1),  # 1.414 -> 1
        ("CEIL_2D", (0, 0), (1, 1), 2),
        ("ATT", (0, 0), (10, 0), 4),  # sqrt(10) = 3.16 -> nint 3 < r -> 4
        ("ATT", (0, 0), (0, 0), 0),
        ("MAN_2D", (0, 0), (3, 4), 7),
        ("MAX_2D", (0, 0), (3, 4), 4),
    ],
)
def test_distance_functions(kind, p, q, expected):
    got = coord_distance(kind, np.array([p], float), np.array([q], float))
    assert got.tolist() == [expected]


def test_tsp_explicit_formats_agree(tmp_path):
    """The same 4-city matrix in every EXPLICIT format gives the same tour length."""
    m = np.array([[0, 1, 2, 3], [1, 0, 4, 5], [2, 4, 0, 6], [3, 5, 6, 0]])
    iu, il = np.triu_indices(4, 1), np.tril_indices(4, -1)
    bodies = {
        "FULL_MATRIX": m.ravel(),
        "UPPER_ROW": m[iu],
        "LOWER_ROW": m[il],
        "UPPER_DIAG_ROW": m[np.triu_indices(4)],
        "LOWER_DIAG_ROW": m[np.tril_indices(4)],
    }
    p = get_problem("tsp")
    for fmt, body in bodies.items():
        text = (
            f"NAME: t\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
            f"EDGE_WEIGHT_FORMAT: {fmt}\nEDGE_WEIGHT_SECTION\n{' '.join(map(str, body))}\nEOF\n"
        )
        inst = p.parse_instance(write(tmp_path, f"{fmt}.tsp", text))
        assert np.array_equal(inst.full_matrix(), m), fmt
        assert p.check_certificate(inst, b"1 2 3 4", {}).value == 1 + 4 + 6 + 3


@pytest.mark.parametrize(
    "text,match",
    [
        ("NAME: x\nTYPE: ATSP\nDIMENSION: 2\n", "TYPE ATSP is not supported"),
        ("NAME: x\nTYPE: TSP\nEDGE_WEIGHT_TYPE: EUC_2D\n", "DIMENSION"),
        ("NAME: x\nDIMENSION: 2\nEDGE_WEIGHT_TYPE: XRAY1\n", "XRAY1 is not supported"),
        (
            "DIMENSION: 2\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\nEOF\n",
            "line 3: NODE_COORD_SECTION needs 2 lines",
        ),
        ("DIMENSION: 2\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n1 1 1\nEOF\n", "node ids must be"),
        (
            "DIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: UPPER_ROW\nEDGE_WEIGHT_SECTION\n1 2\nEOF\n",
            "needs 3 numbers",
        ),
    ],
)
def test_tsp_bad_instances(tmp_path, text, match):
    with pytest.raises(InputError, match=match):
        get_problem("tsp").parse_instance(write(tmp_path, "x.tsp", text))


def test_tsp_accepts_tsplib_tour_files(tmp_path):
    p = get_problem("tsp")
    inst = p.parse_instance(
        write(
            tmp_path, "s.tsp", "DIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 3 0\n3 3 4\nEOF\n"
        )
    )
    tour = b"NAME : s.tour\nTYPE : TOUR\nDIMENSION : 3\nTOUR_SECTION\n1\n3\n2\n-1\nEOF\n"
    assert p.check_certificate(inst, tour, {}).value == 12


@pytest.mark.parametrize(
    "text,match",
    [
        ("p edge 3 2\ne 1 2\ne 2 4\n", r"line 3: vertex outside 1\.\.3"),
        ("p edge 3 2\ne 1 2\ne 2 2\n", "line 3: self-loop"),
        ("p edge 3 3\ne 1 2\ne 2 3\n", "says 3 edges but the file has 2"),
        ("p edge 3 2\ne 1 2\nx 2 3\n", "line 3: expected 'e <u> <v>'"),
        ("e 1 2\n", "no 'p edge"),
    ],
)
def test_coloring_bad_instances(tmp_path, text, match):
    with pytest.raises(InputError, match=match):
        get_problem("coloring").parse_instance(write(tmp_path, "x.col", text))


OLD = "c old form\np wcnf 3 6 100\n100 1 2 0\n100 -1 -2 0\n3 1 0\n5 2 0\n1 -3 0\n2 3 0\n"
NEW = "c new form\nh 1 2 0\nh -1 -2 0\n3 1 0\n5 2 0\n1 -3 0\n2 3 0\n"


def test_wcnf_old_and_new_forms_are_the_same_instance(tmp_path):
    p = get_problem("maxsat")
    old = p.parse_instance(write(tmp_path, "o.wcnf", OLD))
    new = p.parse_instance(write(tmp_path, "n.wcnf", NEW))
    assert (old.form, new.form) == ("old", "new")
    for inst in (old, new):
        assert (inst.nvars, inst.hard.count, inst.soft.count, inst.total_soft_weight) == (3, 2, 4, 11)
        for cert, cost in ((b"v 011", 4), (b"v 100", 7), (b"v -1 2 3 0", 4)):
            assert p.check_certificate(inst, cert, {}).value == cost


def test_wcnf_without_top_is_all_soft_and_unweighted_cnf(tmp_path):
    p = get_problem("maxsat")
    inst = p.parse_instance(write(tmp_path, "a.wcnf", "p wcnf 2 2\n4 1 0\n9 -1 0\n"))
    assert (inst.hard.count, inst.soft.count) == (0, 2)
    inst = p.parse_instance(write(tmp_path, "b.cnf", "p cnf 2 2\n1 0\n-1 2 0\n"))
    assert inst.weights.tolist() == [1, 1]


@pytest.mark.parametrize(
    "text,match",
    [
        ("p wcnf 2 2 10\n10 1 0\n", "header says 2 clauses but the file holds 1"),
        ("p wcnf 2 1 10\n10 3 0\n3 1 0\n", "variable 3 exceeds the header's 2"),
        ("h 1 2\n1 1 0\n", "line 1: a clause must end with 0"),
        ("h 1 2 0\nx 1 0\n", "line 2: clause weight 'x'"),
        ("h 1 2 0\n0 1 0\n", "line 2: clause weight must be positive"),
        ("h 1 2 0\n", "no soft clauses"),
    ],
)
def test_wcnf_bad_instances(tmp_path, text, match):
    with pytest.raises(InputError, match=match):
        get_problem("maxsat").parse_instance(write(tmp_path, "x.wcnf", text))


@pytest.mark.parametrize(
    "cert,status,solved,claimed",
    [
        (b"SAT\n1 -2 3 0\n", "ok", True, "SAT"),  # minisat IN OUT writes this
        (b"SAT\n1 2 -3 0\n", "certificate_failed", None, "SAT"),  # falsifies -1 3: the model is checked
        (b"UNSAT\n", "ok", False, "UNSAT"),  # unlabelled: not solved without a proof
        (b"INDET\n", "ok", False, "UNKNOWN"),
        (b"SAT\n", "invalid", None, "SAT"),
        (b"SAT\n1 -2 3\n", "invalid", None, "SAT"),
        (b"UNSAT\n1 0\n", "invalid", None, "UNSAT"),
    ],
)
def test_sat_reads_minisat_result_files(tmp_path, cert, status, solved, claimed):
    """MiniSat's (and glucose's) result file: SAT + the model's literals ending in 0, UNSAT, INDET."""
    sat = get_problem("sat")
    inst = sat.parse_instance(write(tmp_path, "f.cnf", "p cnf 3 3\n1 2 0\n-1 3 0\n-2 -1 0\n"))
    result = sat.check_certificate(inst, cert, {})
    assert (result.status, result.claimed) == (status, claimed), result
    if status == "ok":
        assert result.solved is solved


def test_stated_answers_of_sat_and_maxsat_output():
    sat, maxsat = get_problem("sat"), get_problem("maxsat")
    assert sat.answer_exit_codes == {10: "SATISFIABLE", 20: "UNSATISFIABLE"}
    assert sat.stated_answer(b"c hello\ns SATISFIABLE\nv 1 0\n") == "SATISFIABLE"
    assert sat.stated_answer(b"s  UNSATISFIABLE \n") == "UNSATISFIABLE"
    assert sat.stated_answer(b"UNSAT\n") == "UNSATISFIABLE"
    assert sat.stated_answer(b"SAT\n1 0\n") == "SATISFIABLE"
    assert sat.stated_answer(b"c nothing said\n") is None
    assert maxsat.answer_exit_codes == {10: "SATISFIABLE", 20: "UNSATISFIABLE", 30: "OPTIMUM FOUND", 40: "UNKNOWN"}
    assert maxsat.stated_answer(b"o 3\ns OPTIMUM FOUND\nv 0101\n") == "OPTIMUM FOUND"
    assert get_problem("maxcut").answer_exit_codes == {} and get_problem("maxcut").stated_answer(b"s X\n") is None
