"""Hostile proofs against `tcsexam proof check` (issue 34.4): each escape route is refused, and
with the text scan switched off (monkeypatched away) the semantic checks, the limiter or the
sandbox still keep it from counting. What is asserted is what the proof achieved: its verdict's
status (never complete), the reason naming the route, and nothing written outside its folder.
No timing is asserted (the limits are the hang guards). CI runs these as root and as the
unprivileged user `tester` (.ci/run).
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from tcsexam.proofs import check as proof_check
from tcsexam.proofs.check import check_proof

pytestmark = [
    pytest.mark.hostile,
    pytest.mark.skipif(shutil.which("coqc") is None or shutil.which("coqchk") is None, reason="Coq not installed"),
]

STATEMENT = """Fixpoint sum_odds (n : nat) : nat :=
  match n with O => O | S k => sum_odds k + (2 * k + 1) end.
Definition statement : Prop := forall n : nat, sum_odds n = n * n.
Definition negation : Prop := ~ statement.
"""
HEAD = "From TCSExam Require Import Task.\n"
GOOD = (
    HEAD
    + """Require Import Arith.
Theorem thm : statement.
Proof. intro n. induction n as [|n IH]; simpl; [reflexivity|]. rewrite IH. ring. Qed.
"""
)


@pytest.fixture(scope="module", autouse=True)
def proof_sandbox():
    """The sandbox `auto` picks for proofs here (bwrap, or docker with Coq in its image); none: skip."""
    from tcsexam.errors import InputError
    from tcsexam.proofs.check import choose_proof_sandbox

    try:
        return choose_proof_sandbox("auto")
    except InputError as exc:
        pytest.skip(str(exc))


def _task(root: Path, *, wall_s: float = 20, mem_mb: int = 700, track: str = "theorem") -> Path:
    (root / "t.v").write_text(STATEMENT)
    extra = "negation: negation\nrefutation: refutation\n" if track == "open_conjecture" else ""
    (root / "task.yaml").write_text(
        f"id: t-{track}\ntrack: {track}\nchecker: coq\nstatement_file: t.v\nstatement: statement\ntheorem: thm\n"
        f"{extra}coq: {{version: '8.16', libraries: [Coq], axioms: []}}\n"
        f"limits: {{wall_s: {wall_s}, mem_mb: {mem_mb}, output_mb: 4}}\n"
    )
    return root / "task.yaml"


@pytest.fixture
def task(reachable_tmp):
    return _task(reachable_tmp)


def _check(root: Path, task: Path, proof: str, **kw):
    sub = root / "solvers" / "m" / "item" / uuid.uuid4().hex[:8]
    sub.mkdir(parents=True)
    (sub / "proof.v").write_text(proof)
    return check_proof(task, sub, **kw)


@pytest.fixture
def no_scan(monkeypatch):
    """The text scan switched off: what the semantic checks and the sandbox catch on their own."""
    monkeypatch.setattr(proof_check, "scan", lambda text: [])


def test_good_proof_is_complete(reachable_tmp, task):
    v = _check(reachable_tmp, task, GOOD)
    assert v["status"] == "complete", v["reason"]
    assert v["complete"] is True and v["axioms"] == [] and v["resolution"] == "proof"
    assert v["checker"] == "coq" and v["checker_version"].startswith("8.")
    assert len(v["statement_sha256"]) == 64 and v["sandbox"] in ("bwrap", "docker", "local")


ADMITTED = HEAD + "Theorem thm : statement.\nProof. Admitted.\n"
AXIOM = HEAD + "Axiom cheat : statement.\nTheorem thm : statement.\nProof. exact cheat. Qed.\n"
WRONG = HEAD + "Theorem thm : forall n : nat, n = n.\nProof. reflexivity. Qed.\n"
MISSING = HEAD + "Theorem other : forall n : nat, n = n.\nProof. reflexivity. Qed.\n"
#: the submission's own `statement` (a notation, a definition, a module named like the task's)
SHADOW_DEF = HEAD + "Definition statement := True.\nTheorem thm : statement.\nProof. exact I. Qed.\n"
SHADOW_NOTATION = HEAD + "Notation statement := True.\nTheorem thm : statement.\nProof. exact I. Qed.\n"
SHADOW_MODULE = (
    "Module TCSExam. Module Task. Definition statement := True. End Task. End TCSExam.\n"
    "Theorem thm : TCSExam.Task.statement.\nProof. exact I. Qed.\n"
)
#: global printing options and an admitted goal: the markers and the reset still read it right
PRINTING = HEAD + "Global Set Printing All.\nGlobal Set Printing Width 3.\nTheorem thm : statement.\nProof. Admitted.\n"
COMPILE_ERROR = HEAD + "Theorem thm : statement.\nProof. exact I. Qed.\n"


@pytest.mark.parametrize(
    ("proof", "status", "reason"),
    [
        pytest.param(ADMITTED, "incomplete", "thm is admitted", id="admitted"),
        pytest.param(AXIOM, "incomplete", "cheat", id="axiom"),
        pytest.param(WRONG, "invalid", "not a proof of the task's statement", id="wrong-statement"),
        pytest.param(MISSING, "invalid", "no theorem thm", id="missing-theorem"),
        pytest.param(SHADOW_DEF, "invalid", "not a proof", id="shadowing-definition"),
        pytest.param(SHADOW_NOTATION, "invalid", "not a proof", id="redefined-notation"),
        pytest.param(SHADOW_MODULE, "invalid", "not a proof", id="shadowing-module"),
        pytest.param(PRINTING, "incomplete", "thm is admitted", id="global-printing-options"),
        pytest.param(COMPILE_ERROR, "invalid", "does not compile", id="compile-error"),
        pytest.param(
            GOOD + "From Ltac2 Require Ltac2.\n", "invalid", "outside the allowed", id="library-outside-allowed"
        ),
    ],
)
def test_not_complete(reachable_tmp, task, proof, status, reason):
    v = _check(reachable_tmp, task, proof)
    assert (v["status"], v["complete"]) == (status, False), v["reason"]
    assert reason in v["reason"]
    assert v["original_reward"] == 0.0


UNSAFE_GUARD = HEAD + (
    "Unset Guard Checking.\nFixpoint loop (n : nat) : False := loop n.\nSet Guard Checking.\n"
    "Theorem thm : statement.\nProof. destruct (loop 0). Qed.\n"
)
UNSAFE_BYPASS = HEAD + (
    "#[bypass_check(guard)] Fixpoint loop (n : nat) : False := loop n.\n"
    "Theorem thm : statement.\nProof. destruct (loop 0). Qed.\n"
)
UNSAFE_POSITIVITY = HEAD + (
    "Unset Positivity Checking.\nInductive bad := mk : (bad -> False) -> bad.\nSet Positivity Checking.\n"
    "Definition self (b : bad) : False := match b with mk f => f b end.\n"
    "Theorem thm : statement.\nProof. destruct (self (mk self)). Qed.\n"
)
UNSAFE_UNIVERSES = HEAD + (
    "Require Import Arith.\nUnset Universe Checking.\nDefinition U := Type.\nDefinition u : U := U.\n"
    "Set Universe Checking.\nTheorem thm : statement.\nProof. pose (x := u).\n"
    "  intro n. induction n as [|n IH]; simpl; [reflexivity|]. rewrite IH. ring. Qed.\n"
)
#: the unsafe definition not used by the theorem: coqchk's summary of the whole submission shows it
UNSAFE_UNUSED = GOOD + "Unset Guard Checking.\nFixpoint loop (n : nat) : False := loop n.\n"


@pytest.mark.parametrize(
    ("proof", "what"),
    [
        pytest.param(UNSAFE_GUARD, "guard", id="unset-guard-checking"),
        pytest.param(UNSAFE_BYPASS, "guard", id="bypass-check-attribute"),
        pytest.param(UNSAFE_POSITIVITY, "positivity", id="unset-positivity-checking"),
        pytest.param(UNSAFE_UNIVERSES, "universe", id="unset-universe-checking"),
        pytest.param(UNSAFE_UNUSED, "fixpoint", id="unsafe-definition-not-used"),
    ],
)
@pytest.mark.parametrize("scanned", [True, False], ids=["scan", "semantic"])
def test_kernel_checks_bypassed(reachable_tmp, task, request, proof, what, scanned):
    if not scanned:
        request.getfixturevalue("no_scan")
    v = _check(reachable_tmp, task, proof)
    assert v["status"] == "invalid" and not v["complete"], v["reason"]
    assert ("refused before checking" in v["reason"]) == scanned
    assert what in v["reason"].lower() or "kernel" in v["reason"]


@pytest.mark.parametrize(
    ("line", "word"),
    [
        ('Declare ML Module "ltac_plugin".', "Declare ML Module"),
        ('Add LoadPath "/tmp" as Evil.', "Add LoadPath"),
        ('Cd "/tmp".', "Cd"),
        ("Drop.", "Drop"),
        ('Redirect "/tmp/tcsexam-hostile-x" Print nat.', "Redirect"),
        ('Require Extraction. Extraction "/tmp/tcsexam-hostile-x.ml" nat.', "Extraction"),
        ('Load "/etc/passwd".', "Load"),
        ("Unset Universe Checking.", "Universe Checking"),
        ("Goal True. native_compute. exact I. Qed.", "native_compute"),
    ],
)
def test_forbidden_commands_refused_before_running(reachable_tmp, task, line, word):
    v = _check(reachable_tmp, task, GOOD + line + "\n")
    assert v["status"] == "invalid" and "refused before checking" in v["reason"] and word in v["reason"]
    assert v["steps"] == []  # nothing ran


def test_commented_forbidden_commands_are_not_refused(reachable_tmp, task):
    proof = GOOD + (
        '(* Unset Guard Checking. (* nested *) Load "x". "a string in a comment: *) Cd" still comment *)\n'
        'Require Import String.\nDefinition s := "Redirect (* not a comment ""Drop"""%string.\n'
    )
    v = _check(reachable_tmp, task, proof)
    assert v["status"] == "complete", v["reason"]


def test_infinite_vm_compute_times_out(reachable_tmp):
    task = _task(reachable_tmp, wall_s=3)
    proof = GOOD + "Require Import NArith.\nEval vm_compute in (N.iter 1000000000000000%N negb true).\n"
    v = _check(reachable_tmp, task, proof)
    assert v["status"] == "timeout" and not v["complete"], v["reason"]
    assert "compile" in v["reason"]


def test_unbounded_allocation_is_a_memout(reachable_tmp):
    task = _task(reachable_tmp, mem_mb=700, wall_s=60)  # the light limiter caps address space: coqc needs ~500 MB
    proof = GOOD + "Require Import List.\nEval vm_compute in (length (repeat 0 200000000)).\n"
    v = _check(reachable_tmp, task, proof)
    assert v["status"] == "memout" and not v["complete"], v["reason"]
    assert "compile" in v["reason"]


def test_writes_outside_its_folder_are_contained(reachable_tmp, task, no_scan):
    """With the scan off, Redirect and Extraction into a host folder reach nothing there."""
    target = reachable_tmp / "outside"
    target.mkdir()
    target.chmod(0o777)
    proof = GOOD + f'Redirect "{target}/redirected" Print nat.\nRequire Extraction.\nExtraction "{target}/x.ml" nat.\n'
    v = _check(reachable_tmp, task, proof)
    assert list(target.iterdir()) == []
    assert not v["complete"] or v["sandbox"] != "local"


def test_reading_the_reference_is_refused_and_hidden(reachable_tmp, task, monkeypatch):
    """A proof that Loads a file it must not see (another candidate's proof, a reference): refused
    by the scan; with the scan off, the folder is hidden by the sandbox (as the workflow hides the
    project folder) and the Load fails."""
    secret = reachable_tmp / "reference"
    secret.mkdir()
    (secret / "Ref.v").write_text(GOOD[len(HEAD) :])
    proof = HEAD + f'Load "{secret}/Ref.v".\n'
    v = _check(reachable_tmp, task, proof, hidden_paths=(str(secret),))
    assert v["status"] == "invalid" and "Load" in v["reason"]
    monkeypatch.setattr(proof_check, "scan", lambda text: [])
    v = _check(reachable_tmp, task, proof, hidden_paths=(str(secret),))
    if v["sandbox"] == "local":
        pytest.skip("the local sandbox hides nothing")
    assert v["status"] == "invalid" and not v["complete"], v["reason"]


def test_open_conjecture_refutation_resolves(reachable_tmp):
    task = _task(reachable_tmp, track="open_conjecture")
    v = _check(reachable_tmp, task, GOOD)
    assert (v["status"], v["resolution"]) == ("complete", "proof"), v["reason"]
    refute = HEAD + "Theorem refutation : negation.\nProof. Admitted.\n"
    v = _check(reachable_tmp, task, refute)
    assert (v["status"], v["resolution"]) == ("incomplete", "refutation"), v["reason"]


def test_endless_output_is_cut_at_the_output_limit(reachable_tmp, task):
    line = "x" * 200
    proof = GOOD + f'Goal True. do 60000 (idtac "{line}"). exact I. Qed.\n'  # ~12 MB of messages, the cap is 4 MB
    v = _check(reachable_tmp, task, proof)
    assert v["status"] == "crash" and "output limit" in v["reason"] and not v["complete"], v["reason"]


@pytest.mark.parametrize("how", ["symlink", "fifo", "huge"])
def test_a_proof_that_is_not_a_regular_file_is_invalid(reachable_tmp, task, how):
    """proof.v as a link to a host file, a FIFO (the harness must not block) or over the size cap:
    the submission's invalid verdict, never an error of the run and never the linked file's text."""
    import os

    sub = reachable_tmp / "solvers" / "m" / "item" / how
    sub.mkdir(parents=True)
    secret = reachable_tmp / "secret.v"
    secret.write_text(GOOD)
    if how == "symlink":
        (sub / "proof.v").symlink_to(secret)
    elif how == "fifo":
        os.mkfifo(sub / "proof.v")
    else:
        (sub / "proof.v").write_text("(* x *)\n" * (1 << 20))
    v = check_proof(task, sub)
    assert v["status"] == "invalid" and not v["complete"] and v["steps"] == [], v["reason"]


def test_the_cli_checks_into_a_folder_that_does_not_exist_yet(reachable_tmp, task):
    """The verdict's folder is hidden from the checker; bwrap cannot hide a folder that is not
    there (its mount point in the read-only root), so the command makes it first: a new folder
    outside /tmp and outside the working folder once gave every proof an infrastructure_error."""
    import os
    import tempfile

    from tcsexam.cli import main

    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable here")
    sub = reachable_tmp / "submission"
    sub.mkdir()
    (sub / "proof.v").write_text(GOOD)
    parent = Path(tempfile.mkdtemp(prefix="tcsexam-test-", dir="/var/tmp"))
    try:
        out = parent / "new" / "folder" / "verdict.json"
        assert main(["proof", "check", "--task", str(task), "--submission", str(sub), "--output", str(out)]) == 0
        verdict = json.loads(out.read_text())
        assert verdict["status"] == "complete", verdict["reason"]
    finally:
        shutil.rmtree(parent, ignore_errors=True)
