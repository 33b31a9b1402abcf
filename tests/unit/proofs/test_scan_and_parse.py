"""The pure parts of the proof checker: the text scan (comments stripped as Coq's lexer does),
reading what Coq prints back, and proof task files. No Coq runs here."""

from __future__ import annotations

import pytest

from tcsexam.errors import InputError
from tcsexam.proofs import coq
from tcsexam.proofs.scan import scan, strip_comments


def test_strip_comments_nested_and_strings():
    src = 'a (* x (* y *) "*)" z *) b "s (* t" c\n(* unterminated'
    out = strip_comments(src)
    assert len(out) == len(src) and out.count("\n") == 1
    assert out.split() == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("Unset Guard Checking.", "Guard Checking"),
        ("Unset\n  Positivity   Checking.", "Positivity Checking"),
        ("Local Unset Universe Checking.", "Universe Checking"),
        ("#[bypass_check(guard)] Fixpoint f n := f n.", "bypass_check"),
        ('Declare ML Module "foo".', "Declare ML Module"),
        ('Load "x".', "Load"),
        ('Redirect "f" Print nat.', "Redirect"),
        ("Recursive Extraction nat.", "Extraction"),
        ('Add Rec LoadPath "/" as X.', "Add Rec LoadPath"),
        ('Cd "/tmp".', "Cd"),
        ("Drop.", "Drop"),
        ("Primitive int := #int63_type.", "Primitive"),
        ("Goal True. native_compute. Abort.", "native_compute"),
        ("Set Definitional UIP.", "Definitional UIP"),
    ],
)
def test_scan_finds(text, word):
    found = scan("Theorem t : True. Proof. exact I. Qed.\n" + text)
    assert found and found[0].line == 2 and word in found[0].text


@pytest.mark.parametrize(
    "text",
    [
        '(* Unset Guard Checking. (* Load "x" *) Drop *) Theorem t : True. exact I. Qed.',
        'Definition s := "Redirect ""Load"" Cd".',
        "Definition Loader := 1. Definition load := 2. Definition Cdx := 3.",
        "Theorem t : True. Proof. vm_compute. exact I. Qed.",
    ],
)
def test_scan_passes(text):
    assert scan(text) == []


def test_parse_assumptions():
    closed = coq.parse_assumptions("Closed under the global context\n")
    assert closed.closed and not closed.axioms and not closed.unsafe
    text = (
        "Axioms:\nSubmission.loop is assumed to be guarded.\nclassic : forall P : Prop,\n  P \\/ ~ P\n"
        "Proof.thm : forall n : nat, n = n\nProof.Ind is assumed to be positive.\nu relies on an unsafe hierarchy.\n"
    )
    found = coq.parse_assumptions(text)
    assert [a["name"] for a in found.axioms] == ["classic", "Proof.thm"]
    assert found.axioms[0]["type"] == "forall P : Prop, P \\/ ~ P"
    assert [u["why"] for u in found.unsafe] == [
        "guard checking disabled",
        "positivity checking disabled",
        "universe checking disabled",
    ]
    assert coq.parse_assumptions("Section Variables:\nx : nat\n").other


def test_between_markers_and_locate():
    n = "abc"
    text = (
        "noise\n__tcsexam_abc_loc0 = tt\n     : unit\nConstant Coq.Logic.Classical_Prop.classic\n"
        "__tcsexam_abc_loc1 = tt\n     : unit\nInductive nat\n__tcsexam_abc_locend = tt\n"
    )
    assert coq.parse_locate(text, n, 2) == ["Coq.Logic.Classical_Prop.classic", None]
    assert coq.between("x\n", n, "begin", "end") is None  # markers missing
    twice = "__tcsexam_abc_begin = tt\n__tcsexam_abc_begin = tt\n__tcsexam_abc_end = tt\n"
    assert coq.between(twice, n, "begin", "end") is None  # a forged marker makes it ambiguous


def test_parse_coqchk():
    text = """
CONTEXT SUMMARY
===============

* Theory: Set is predicative

* Axioms:
    Coq.Init.Logic.eq
    TCSExamSubmission.Proof.bad

* Constants/Inductives relying on type-in-type: <none>

* Constants/Inductives relying on unsafe (co)fixpoints:
    TCSExamSubmission.Proof.f

* Inductives whose positivity is assumed: <none>
"""
    s = coq.parse_coqchk(text)
    assert s.found and s.predicative
    assert s.axioms == ["Coq.Init.Logic.eq", "TCSExamSubmission.Proof.bad"]
    assert s.unsafe_fix == ["TCSExamSubmission.Proof.f"] and s.type_in_type == [] and s.positivity == []
    assert not coq.parse_coqchk("no summary").found
    assert not coq.parse_coqchk("CONTEXT SUMMARY\n* Theory: Set is impredicative\n").predicative


def test_version_matches():
    assert coq.version_matches("8.16", "8.16.1") and coq.version_matches("", "8.20.0")
    assert not coq.version_matches("8.16", "8.17.0") and not coq.version_matches("8.16.1", "8.16.0")


def _task(tmp_path, **over):
    import yaml

    (tmp_path / "s.v").write_text("Definition statement : Prop := True.\n")
    data = {
        "id": "t",
        "track": "theorem",
        "checker": "coq",
        "statement_file": "s.v",
        "statement": "statement",
        "theorem": "thm",
        "limits": {"wall_s": 5},
    }
    data.update(over)
    data = {k: v for k, v in data.items() if v is not None}
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(data))
    return tmp_path / "t.yaml"


def test_bundled_proof_tasks_load():
    from tcsexam.proofs.task import load_proof_task
    from tcsexam.suites import load_suite

    suite = load_suite("full")
    for item in [*suite.tracks["theorem"], *suite.tracks["open_conjecture"]]:
        t = load_proof_task(item)
        assert t.track in ("theorem", "open_conjecture") and len(t.statement_sha256) == 64
        assert (t.negation is not None) == (t.track == "open_conjecture")


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"statement_file": "../s.v"}, "outside the task's folder"),
        ({"statement_file": "none.v"}, "not found"),
        ({"statement_file": "s.txt"}, "statement_file must be a Coq .v file"),
        ({"theorem": "a b"}, "not a Coq identifier"),
        ({"checker": "lean"}, "checker must be coq"),
        ({"statement": None}, "missing key 'statement'"),
        ({"track": "open_conjecture"}, "names its negation and refutation"),
        ({"negation": "neg", "refutation": "r"}, "a theorem task has no negation"),
        ({"coq": {"axioms": ["classic"]}}, "fully qualified"),
        ({"limits": {"wall_s": -1}}, "wall_s"),
    ],
)
def test_bad_proof_task_files(tmp_path, over, match):
    from tcsexam.proofs.task import load_proof_task

    with pytest.raises(InputError, match=match):
        load_proof_task(_task(tmp_path, **over))


def test_solver_loader_refuses_a_proof_task(tmp_path):
    from tcsexam.tasks import load_task

    with pytest.raises(InputError, match="is a proof task"):
        load_task(_task(tmp_path))
